"""Typed graphs in DGL's shape: graphloom.dgl's DataLoader with typed indices yields dicts of
node ids and heterogeneous blocks, checked against the same batch's homogeneous blocks
(DGL's invariants: destinations first within each type, one layer's destinations the next
layer's sources); per-edge-type fanouts; HeteroGraphConv against its definition; the R-GCN
example is run by test_examples.py."""

import pytest
import torch

import graphloom
import graphloom.dgl.nn as dglnn
from graphloom.dgl import HeteroBlock
from graphloom.dgl.dataloading import DataLoader, NeighborSampler


@pytest.fixture(scope="module")
def typed(typed_planted_dir):
    return graphloom.load_dataset(typed_planted_dir)


def typed_batch(typed, fanouts=(4, 4), seeds=64):
    sampler = NeighborSampler(list(fanouts), prefetch_node_feats=["feat"],
                              prefetch_labels=["label"])
    loader = DataLoader(typed, {"item": torch.arange(seeds)}, sampler, batch_size=seeds)
    return next(iter(loader))


def global_ids(schema, ntype, local):
    return schema.global_ids(schema.node_types.index(ntype), local)


def test_typed_indices_give_dicts_and_heterogeneous_blocks(typed):
    schema = typed.schema()
    input_nodes, output_nodes, blocks = typed_batch(typed)
    assert all(isinstance(block, HeteroBlock) for block in blocks)
    assert torch.equal(output_nodes["item"], torch.arange(64))
    assert output_nodes["user"].numel() == 0
    assert set(input_nodes) == {"item", "user"}
    for ntype in schema.node_types:
        ids = global_ids(schema, ntype, input_nodes[ntype])
        assert torch.equal(blocks[0].srcdata["feat"][ntype], typed.node_features["feat"][ids])
    assert torch.equal(blocks[-1].dstdata["label"]["item"],
                       typed.labels[global_ids(schema, "item", torch.arange(64))])
    for block, after in zip(blocks, blocks[1:] + [None]):
        for ntype in schema.node_types:
            dst = block.dstdata["_ID"][ntype]
            assert dst.numel() == block.num_dst_nodes(ntype)
            assert torch.equal(block.srcdata["_ID"][ntype][: dst.numel()], dst)  # dst first
            if after is not None:  # this layer's destinations are the next one's sources
                assert torch.equal(dst, after.srcdata["_ID"][ntype])


def test_relation_graphs_hold_the_blocks_typed_edges(typed):
    schema = typed.schema()
    _, _, blocks = typed_batch(typed)
    for block in blocks:
        flat = block.block
        sources = flat.src_ids[flat.indices]
        targets = flat.src_ids[flat.dst_positions()]
        total = 0
        for r, triple in enumerate(schema.edge_types):
            src, dst = block.edges(etype=triple)
            got = set(zip(global_ids(schema, triple[0], block.srcdata["_ID"][triple[0]][src])
                          .tolist(),
                          global_ids(schema, triple[2], block.dstdata["_ID"][triple[2]][dst])
                          .tolist()))
            keep = flat.edge_types == r
            assert got == set(zip(sources[keep].tolist(), targets[keep].tolist()))
            assert block.num_edges(triple) == int(keep.sum())
            total += block.num_edges(triple)
        assert total == block.num_edges()
    assert blocks[0]["likes"].num_edges == blocks[0].num_edges(("user", "likes", "item"))


def test_fanouts_per_edge_type(typed):
    _, _, blocks = typed_batch(typed, fanouts=({"likes": 2, "liked_by": 1},
                                               {"likes": 3, "related": 0}))
    for block, caps in zip(blocks, ({"likes": 2, "liked_by": 1, "related": 0},
                                    {"likes": 3, "liked_by": 0, "related": 0})):
        for relation, cap in caps.items():
            degrees = block[relation].indptr.diff()
            assert int(degrees.max()) <= cap if degrees.numel() else True, relation
        assert block["likes"].num_edges > 0
    with pytest.raises(graphloom.OptionError, match="rates"):
        typed_batch(typed, fanouts=({"rates": 2}, 2))


def test_hetero_graph_conv_sums_each_relations_conv(typed):
    torch.manual_seed(0)
    _, _, blocks = typed_batch(typed)
    block = blocks[0]
    relations = ("likes", "liked_by", "related")
    convs = {r: dglnn.GraphConv(8, 5, norm="right", allow_zero_in_degree=True)
             for r in relations}
    inputs = {t: torch.randn(block.num_src_nodes(t), 8) for t in block.srctypes}
    out = dglnn.HeteroGraphConv(convs, aggregate="sum")(block, inputs)
    for ntype in block.dsttypes:
        expected = [convs[triple[1]](block[triple], (inputs[triple[0]],
                                                     inputs[ntype][: block.num_dst_nodes(ntype)]))
                    for triple in block.canonical_etypes
                    if triple[2] == ntype and block.num_edges(triple) > 0]
        if expected:
            assert torch.allclose(out[ntype], torch.stack(expected).sum(0))
            assert out[ntype].shape[0] == block.num_dst_nodes(ntype)
        else:
            assert ntype not in out
    mean = dglnn.HeteroGraphConv(convs, aggregate="mean")(block, inputs)
    assert torch.allclose(mean["item"] * 2, out["item"])  # two relations end at items


def test_typed_indices_errors(typed, planted):
    sampler = NeighborSampler([2])
    with pytest.raises(graphloom.OptionError, match="no node type 'film'"):
        DataLoader(typed, {"film": torch.arange(3)}, sampler)
    with pytest.raises(graphloom.OptionError, match="needs a typed graph"):
        DataLoader(planted, {"item": torch.arange(3)}, sampler)
    with pytest.raises(graphloom.IdError):
        DataLoader(typed, {"user": torch.tensor([10**6])}, sampler)
