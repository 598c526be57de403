"""graphloom.convert and graphloom.partition: the CLI's commands as calls."""

import pytest
import torch

import graphloom


def test_convert_an_edge_list(tmp_path):
    (tmp_path / "edges.csv").write_text("# src,dst\n0,1\n1,2\n2,0\n2,3\n")
    graphloom.convert(tmp_path / "edges.csv", tmp_path / "out", source_format="edgelist",
                      bidirected=True)
    dataset = graphloom.load_dataset(tmp_path / "out")
    assert dataset.num_nodes() == 4 and dataset.num_edges() == 8


def test_convert_an_edge_list_with_a_named_delimiter(tmp_path):
    (tmp_path / "edges.tsv").write_text("0\t1\n1\t2\n")
    graphloom.convert(tmp_path / "edges.tsv", tmp_path / "out", source_format="edgelist",
                      delimiter="tab")
    assert graphloom.load_dataset(tmp_path / "out").num_edges() == 2
    with pytest.raises(ValueError, match="got 'ab'") as raised:
        graphloom.convert(tmp_path / "edges.tsv", tmp_path / "bad", source_format="edgelist",
                          delimiter="ab")
    assert raised.value.field == "delimiter"
    assert not (tmp_path / "bad").exists()


def test_convert_holds_out_link_splits(planted_dir, tmp_path):
    graphloom.convert(planted_dir, tmp_path / "lp", link_split=(0.1, 0.1), seed=1)
    dataset = graphloom.load_dataset(tmp_path / "lp")
    assert {"train", "valid", "test", "valid_neg", "test_neg"} <= set(dataset.edge_splits)
    assert dataset.edge_splits["valid"].shape[1] == 2


@pytest.mark.parametrize("kwargs, field", [
    (dict(source_format="csv"), "source_format"),
    (dict(self_loops="drop"), "self_loops"),
    (dict(link_split=(0.6, 0.5)), "link_split"),
])
def test_convert_bad_arguments(planted_dir, tmp_path, kwargs, field):
    with pytest.raises(ValueError) as raised:
        graphloom.convert(planted_dir, tmp_path / "x", **kwargs)
    assert raised.value.field == field
    assert not (tmp_path / "x").exists()


def test_convert_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError):
        graphloom.convert(tmp_path / "none", tmp_path / "x")


@pytest.mark.parametrize("method", ["random", "metis", "stream"])
def test_partition(planted_dir, tmp_path, method, capsys):
    info = graphloom.partition(planted_dir, tmp_path / "parts", num_parts=2, method=method)
    assert info["num_parts"] == 2
    assert (tmp_path / "parts" / "partition.json").is_file()
    # The same table as `graphloom partition`: a row per part with its node range.
    table = capsys.readouterr().out
    assert f"2 parts by {method}" in table
    ranges = [line.split()[1:3] for line in table.splitlines() if line.split()[:1] in (["0"], ["1"])]
    assert ranges[0][0] == "[0," and ranges[1][1] == f"{info['num_nodes']})"


def test_partition_quiet(planted_dir, tmp_path, capsys):
    graphloom.partition(planted_dir, tmp_path / "parts", num_parts=2, method="random",
                        verbose=False)
    assert capsys.readouterr().out == ""


def test_partition_bad_method(planted_dir, tmp_path):
    with pytest.raises(graphloom.OptionError, match="method must be one of"):
        graphloom.partition(planted_dir, tmp_path / "parts", method="spectral")


def test_an_existing_output_names_overwrite_not_the_cli_flag(planted_dir, tmp_path):
    (tmp_path / "x").mkdir()
    for call in (lambda: graphloom.convert(planted_dir, tmp_path / "x"),
                 lambda: graphloom.partition(planted_dir, tmp_path / "x", verbose=False)):
        with pytest.raises(graphloom.OptionError, match="pass overwrite=True") as raised:
            call()
        assert raised.value.field == "overwrite" and "--force" not in str(raised.value)
