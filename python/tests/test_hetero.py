"""Typed graphs from Python in PyG's shape: a typed batch's HeteroData (types, per-type ids,
rows, edges) against the same batch's homogeneous edges, and graphloom.pyg.NeighborLoader's
typed arguments (examples/pyg_hetero.py trains on it: test_examples.py)."""

import pytest
import torch

import graphloom

pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
from graphloom.pyg import NeighborLoader  # noqa: E402


@pytest.fixture(scope="module")
def typed(typed_planted_dir):
    return graphloom.load_dataset(typed_planted_dir)


def global_ids(data, node_type, local, offsets, types):
    return data[node_type].n_id[local] + offsets[types.index(node_type)]


def test_a_typed_batch_is_heterodata_with_the_homogeneous_batchs_edges(typed):
    offsets = typed.graph._impl.node_type_offset
    sampler = graphloom.NeighborSampler(typed, [4, 4])
    loader = graphloom.DataLoader(typed, typed.splits["train"][:64], sampler, batch_size=64)
    batch = next(iter(loader))
    data = batch.to_pyg()
    batch._schema = None  # the same batch, homogeneous
    flat = batch.to_pyg()
    assert set(data.node_types) == {"item", "user"}
    assert data["item"].batch_size == 64 and "batch_size" not in data["user"]
    seeds = global_ids(data, "item", torch.arange(64), offsets, typed.node_types)
    assert torch.equal(seeds, batch.seeds)
    for node_type in data.node_types:
        ids = global_ids(data, node_type, torch.arange(data[node_type].num_nodes), offsets,
                         typed.node_types)
        assert torch.equal(data[node_type].x, typed.node_features["feat"][ids])
        assert torch.equal(data[node_type].y, typed.labels[ids])
    edges = []
    for src_type, relation, dst_type in data.edge_types:
        src, dst = data[src_type, relation, dst_type].edge_index
        edges += zip(global_ids(data, src_type, src, offsets, typed.node_types).tolist(),
                     global_ids(data, dst_type, dst, offsets, typed.node_types).tolist())
    expected = flat.n_id[flat.edge_index]
    assert sorted(edges) == sorted(zip(*expected.tolist()))
    assert sum(data.num_sampled_edges_dict[t][0] for t in data.edge_types) == \
        flat.num_sampled_edges[0]


def test_pygs_typed_arguments(typed):
    items = torch.zeros(600, dtype=torch.bool)
    items[:100] = True
    loader = NeighborLoader(typed, num_neighbors={("user", "likes", "item"): [5, 0],
                                                  ("item", "liked_by", "user"): [0, 3]},
                            input_nodes=("item", items), batch_size=100)
    data = next(iter(loader))
    assert torch.equal(data["item"].n_id[:100].sort().values, torch.arange(100))
    assert ("item", "related", "item") in data.edge_types  # present, left empty
    assert data["item", "related", "item"].edge_index.shape[1] == 0
    # Hop 1: only likes into the seeds, at most 5 each; hop 2: liked_by into those users.
    assert data["user", "likes", "item"].num_sampled_edges[1] == 0
    assert data["item", "liked_by", "user"].num_sampled_edges[0] == 0
    likes = data["user", "likes", "item"].edge_index[1]
    assert int(torch.bincount(likes).max()) <= 5


@pytest.mark.parametrize("kwargs", [dict(input_nodes=("paper", None)),
                                    dict(num_neighbors={("user", "rates", "item"): [2]}),
                                    dict(num_neighbors={("user", "likes", "item"): [2],
                                                        ("item", "liked_by", "user"): [2, 2]})])
def test_bad_typed_arguments_are_named(typed, kwargs):
    arguments = dict(num_neighbors=[2], input_nodes=("item", None))
    arguments.update(kwargs)
    with pytest.raises(graphloom.OptionError) as raised:
        NeighborLoader(typed, batch_size=10, **arguments)
    assert raised.value.field in kwargs
