"""The examples/ scripts, run as a user runs them: on the planted graph everywhere, and on Cora
when ../shared/datasets is present."""

import re

import pytest

from conftest import REPO, run_python

pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")


def final_figure(output, name):
    found = re.findall(rf"{name} ([0-9.]+)", output)
    assert found, output
    return float(found[-1])


def final_accuracy(output, split):
    return final_figure(output, f"{split} accuracy")


def test_pyg_graphsage_on_the_planted_graph(planted_dir):
    result = run_python(REPO / "examples" / "pyg_graphsage.py", "--data", planted_dir,
                        "--epochs", "10")
    assert result.returncode == 0, result.stderr
    assert final_accuracy(result.stdout, "test") > 0.7


def test_pyg_graphsage_on_cora(cora_dir):
    result = run_python(REPO / "examples" / "pyg_graphsage.py", "--data", cora_dir,
                        "--epochs", "50")
    assert result.returncode == 0, result.stderr
    # GraphSAGE reaches ~0.80 on Cora's public split (../shared/datasets/README.md).
    assert final_accuracy(result.stdout, "test") > 0.72


def test_pyg_graphsage_on_pygs_loader_over_graphloom_stores(planted_dir):
    import torch_geometric.typing as pyg_typing

    if not (pyg_typing.WITH_PYG_LIB or pyg_typing.WITH_TORCH_SPARSE):
        pytest.skip("SKIPPED: PyG has no sampler here (neither pyg-lib nor torch-sparse)")
    result = run_python(REPO / "examples" / "pyg_graphsage.py", "--data", planted_dir,
                        "--epochs", "10", "--loader", "pyg")
    assert result.returncode == 0, result.stderr
    assert final_accuracy(result.stdout, "test") > 0.7


def torchrun(*args):
    return run_python("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                      *args)


def test_multiprocess_graphsage_on_the_planted_graph(planted_dir):
    result = torchrun(REPO / "examples" / "multiprocess_graphsage.py", "--data", planted_dir,
                      "--epochs", "15", "--fanouts", "5,5")
    assert result.returncode == 0, result.stderr
    assert "2 trainers" in result.stdout
    assert final_accuracy(result.stdout, "test") > 0.7


def test_multiprocess_graphsage_on_cora(cora_dir):
    result = torchrun(REPO / "examples" / "multiprocess_graphsage.py", "--data", cora_dir,
                      "--epochs", "50", "--fanouts", "10,10", "--lr", "0.01")
    assert result.returncode == 0, result.stderr
    assert final_accuracy(result.stdout, "test") > 0.72


# The ported examples: each ecosystem's own script with its imports changed.

def run_example(name, data, *args):
    result = run_python(REPO / "examples" / name, "--data", data, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_pygs_neighbor_loader_example_on_the_planted_graph(planted_dir):
    output = run_example("pyg_neighbor_loader.py", planted_dir, "--epochs", "10",
                         "--batch-size", "64")
    assert final_accuracy(output, "test") > 0.7


def test_pygs_neighbor_loader_example_on_cora(cora_dir):
    output = run_example("pyg_neighbor_loader.py", cora_dir, "--epochs", "20",
                         "--batch-size", "64")
    assert final_accuracy(output, "test") > 0.72


@pytest.mark.parametrize("aggregator", ["mean", "pool"])
def test_dgls_graphsage_example_on_the_planted_graph(planted_dir, aggregator):
    output = run_example("dgl_graphsage.py", planted_dir, "--epochs", "10", "--batch-size",
                         "32", "--aggregator", aggregator)
    assert final_accuracy(output, "test") > 0.7


def test_dgls_graphsage_example_on_cora(cora_dir):
    output = run_example("dgl_graphsage.py", cora_dir, "--epochs", "20", "--batch-size", "32")
    assert final_accuracy(output, "test") > 0.72


@pytest.mark.parametrize("example", ["pyg_link_prediction.py", "dgl_link_prediction.py"])
def test_link_prediction_examples_on_the_planted_graph(planted_link_dir, example):
    output = run_example(example, planted_link_dir, "--epochs", "10")
    # Same-class pairs are the edges; a random pair is of one class a third of the time.
    assert final_figure(output, "test auc") > 0.7


@pytest.mark.parametrize("example, floor", [("pyg_link_prediction.py", 0.8),
                                            ("dgl_link_prediction.py", 0.88)])
def test_link_prediction_examples_on_ecoli(ecoli_dir, example, floor):
    # Measured 0.852 (PyG's script) and 0.926 (DGL's); SEAL reports CN 0.937 on this graph.
    output = run_example(example, ecoli_dir, "--epochs", "20" if "pyg" in example else "10")
    assert final_figure(output, "test auc") > floor


def test_relational_gnn_example_on_the_typed_planted_graph(typed_planted_dir):
    output = run_example("pyg_hetero.py", typed_planted_dir, "--epochs", "8")
    # Chance is 0.2; a linear model of the items' own features reached 0.50 on this graph, this
    # example 0.79: the users who like an item tell its class.
    assert final_accuracy(output, "test") > 0.7


def test_dgl_rgcn_example_on_the_typed_planted_graph(typed_planted_dir):
    output = run_example("dgl_rgcn.py", typed_planted_dir, "--epochs", "8")
    # Measured 0.94 (HeteroGraphConv of GraphConv per relation plus a self-loop weight); a
    # linear model of the items' own features reached 0.50 on this graph.
    assert final_accuracy(output, "test") > 0.8
