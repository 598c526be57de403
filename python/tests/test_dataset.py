"""Datasets from Python: save_dataset -> load_dataset round trips, CSCGraph, and the
exceptions bad input raises."""

import pytest
import torch

import graphloom

from conftest import planted_graph


def test_round_trip_keeps_every_array(tmp_path):
    parts = planted_graph(num_nodes=50, degree=3)
    graphloom.save_dataset(tmp_path / "d", **parts)
    dataset = graphloom.load_dataset(tmp_path / "d")
    assert dataset.num_nodes() == 50 and dataset.num_edges() == 150
    assert dataset.num_classes == 3
    assert torch.equal(dataset.labels, parts["labels"])
    assert torch.equal(dataset.node_features["feat"], parts["node_features"])
    for name in ("train", "valid", "test"):
        assert torch.equal(dataset.splits[name].sort().values, parts["splits"][name].sort().values)
    # The CSC graph holds the same multiset of edges as edge_index.
    src, dst = parts["edge_index"]
    loaded = dataset.graph.edge_index()
    assert sorted(zip(src.tolist(), dst.tolist())) == sorted(zip(*loaded.tolist()))
    assert torch.equal(dataset.graph.in_degrees(), torch.bincount(dst, minlength=50))


def test_features_are_memory_mapped_not_copied(planted_dir):
    first = graphloom.load_dataset(planted_dir)
    second = graphloom.load_dataset(planted_dir)
    # Two maps of one file see the same bytes; a write through a map would show in the other
    # only if both were mappings of the file (a copy would not).
    feat = first.node_features["feat"]
    assert feat.shape == (600, 16) and feat.dtype == torch.float32
    assert torch.equal(feat, second.node_features["feat"])
    in_memory = graphloom.load_dataset(planted_dir, memory_map=False)
    assert torch.equal(in_memory.node_features["feat"], feat)


def test_boolean_masks_become_ids(tmp_path):
    mask = torch.zeros(4, dtype=torch.bool)
    mask[[1, 3]] = True
    graphloom.save_dataset(tmp_path / "d", torch.tensor([[0, 1], [1, 2]]), 4,
                           splits={"train": mask})
    assert graphloom.load_dataset(tmp_path / "d").splits["train"].tolist() == [1, 3]


def test_csc_graph_from_tensors():
    graph = graphloom.CSCGraph(torch.tensor([0, 2, 3, 3]), torch.tensor([1, 2, 0]))
    assert graph.num_nodes() == 3 and graph.num_edges() == 3
    assert graph.edge_index().tolist() == [[1, 2, 0], [0, 0, 1]]
    assert graph.edge_ids is None and graph.weights is None
    assert graph.out_degrees().tolist() == [1, 1, 1]


def test_missing_directory_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist") as raised:
        graphloom.load_dataset(tmp_path / "nowhere")
    assert isinstance(raised.value, graphloom.MissingFileError)
    assert isinstance(raised.value, graphloom.Error)


def test_malformed_metadata_is_a_graphloom_error(tmp_path):
    (tmp_path / "metadata.json").write_text("{ not json")
    with pytest.raises(graphloom.Error, match="metadata.json"):
        graphloom.load_dataset(tmp_path)


@pytest.mark.parametrize("edge_index, message", [
    (torch.tensor([0, 1]), "2 dimension"),
    (torch.tensor([[0, 1, 2]]), r"\[2, num_edges\]"),
    (torch.tensor([[0.5], [1.0]]), "integers"),
])
def test_bad_edge_index_is_a_value_error(tmp_path, edge_index, message):
    with pytest.raises(ValueError, match=message) as raised:
        graphloom.save_dataset(tmp_path / "d", edge_index, 3)
    assert raised.value.field == "edge_index"
    assert not (tmp_path / "d").exists()


def test_edge_outside_the_nodes_is_an_index_error(tmp_path):
    with pytest.raises(IndexError, match="node id 7 is outside"):
        graphloom.save_dataset(tmp_path / "d", torch.tensor([[0, 7], [1, 2]]), 3)
    assert not (tmp_path / "d").exists()


def test_existing_directory_needs_overwrite(tmp_path):
    edges = torch.tensor([[0], [1]])
    graphloom.save_dataset(tmp_path / "d", edges, 2)
    with pytest.raises(graphloom.OptionError, match=r"exists \(pass overwrite=True") as raised:
        graphloom.save_dataset(tmp_path / "d", edges, 2)
    assert raised.value.field == "overwrite" and "--force" not in str(raised.value)
    graphloom.save_dataset(tmp_path / "d", torch.tensor([[1], [0]]), 2, overwrite=True)
    assert graphloom.load_dataset(tmp_path / "d").graph.indices.tolist() == [1]


def test_wrong_length_labels_name_the_argument(tmp_path):
    with pytest.raises(graphloom.OptionError, match="labels must have one entry per node"):
        graphloom.save_dataset(tmp_path / "d", torch.tensor([[0], [1]]), 2, labels=[0, 1, 1])


def test_num_nodes_is_one_method_everywhere(planted):
    # DGL's spelling, and DistGraph's: a method on the dataset and on its graph alike.
    assert planted.num_nodes() == planted.graph.num_nodes() == planted.number_of_nodes() == 600
    assert planted.num_edges() == planted.graph.num_edges() == planted.graph.indices.numel()


def test_ndata_holds_features_labels_and_split_masks(planted):
    ndata = planted.ndata
    assert ndata["feat"] is planted.node_features["feat"]
    assert torch.equal(ndata["label"], planted.labels)
    for split, mask in (("train", "train_mask"), ("valid", "val_mask"), ("test", "test_mask")):
        assert torch.equal(torch.nonzero(ndata[mask]).flatten(),
                           planted.splits[split].sort().values)
