"""Link prediction from Python: graphloom's DataLoader over node pairs (negatives, exclusion
of the seed edges), DGL's edge-prediction shape (graphloom.dgl) and PyG's LinkNeighborLoader
shape (graphloom.pyg), and a link predictor trained through it."""

import pytest
import torch

import graphloom
import graphloom.dgl as dgl
from graphloom.negative_sampler import DegreeWeighted, Uniform


def every_pair(planted):
    return planted.graph.edge_index().t()


def test_each_pair_comes_once_with_its_ends_among_the_seeds(planted):
    pairs = every_pair(planted)[:500]
    loader = graphloom.DataLoader(planted, pairs, graphloom.NeighborSampler(planted, [3, 3]),
                                  batch_size=64, shuffle=True, negative_sampler=Uniform(3),
                                  seed=5)
    seen = []
    for batch in loader:
        p = batch.pairs
        assert torch.equal(torch.stack([p.src, p.dst], 1), pairs[p.input_id])
        assert torch.equal(batch.seeds, torch.cat([p.src, p.dst, p.negative_dst]).unique())
        assert torch.equal(batch.seeds[p.src_index], p.src)
        assert torch.equal(batch.seeds[p.dst_index], p.dst)
        assert torch.equal(batch.seeds[p.negative_dst_index], p.negative_dst)
        assert torch.equal(p.negative_src, p.src.repeat_interleave(3))
        assert torch.equal(batch.seeds[p.negative_src_index], p.negative_src)
        assert p.k == 3 and p.negative_dst.numel() == 3 * p.num_pairs
        assert torch.equal(batch.blocks[-1].dst_ids, batch.seeds)
        assert batch.labels is None  # labels are for node items, unless asked for
        seen.append(p.input_id)
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(500))


def test_pair_batches_repeat_with_the_seed(planted):
    def negatives(seed):
        loader = graphloom.DataLoader(planted, every_pair(planted)[:64],
                                      graphloom.NeighborSampler(planted, [2]), batch_size=64,
                                      negative_sampler=Uniform(2), seed=seed)
        return next(iter(loader)).pairs.negative_dst

    assert torch.equal(negatives(1), negatives(1))
    assert not torch.equal(negatives(1), negatives(2))


def edges_joining(batch, reverse):
    """The block edges that join one of the batch's pairs (or its reverse)."""
    pairs = set(zip(batch.pairs.src.tolist(), batch.pairs.dst.tolist()))
    if reverse:
        pairs |= {(d, s) for s, d in pairs}
    found = 0
    for block in batch.blocks:
        sources = block.src_ids[block.indices].tolist()
        targets = block.src_ids[block.dst_positions()].tolist()
        found += sum((s, t) in pairs for s, t in zip(sources, targets))
    return found


@pytest.mark.parametrize("exclude", [None, "self", "reverse"])
def test_exclude_drops_the_seed_edges_from_every_block(planted, exclude):
    # Taking every neighbor, each pair's own edge is in the first hop unless excluded.
    loader = graphloom.DataLoader(planted, every_pair(planted)[:300],
                                  graphloom.NeighborSampler(planted, [-1, -1]), batch_size=100,
                                  exclude=exclude)
    for batch in loader:
        if exclude is None:
            assert edges_joining(batch, reverse=False) >= batch.pairs.num_pairs
        else:
            assert edges_joining(batch, reverse=exclude == "reverse") == 0
            for block in batch.blocks:  # the CSC stays consistent
                assert int(block.indptr[-1]) == block.indices.numel() == block.edge_ids.numel()


def test_degree_weighted_negatives_avoid_nodes_without_in_edges(tmp_path):
    edges = torch.tensor([[1, 2, 3, 3, 4, 5, 0], [0, 0, 1, 2, 2, 3, 4]])  # node 5: no in-edges
    graphloom.save_dataset(tmp_path / "d", edges, 6)
    dataset = graphloom.load_dataset(tmp_path / "d")

    def drawn(negative_sampler):
        loader = graphloom.DataLoader(dataset, edges.t(), graphloom.NeighborSampler(dataset, [1]),
                                      batch_size=7, negative_sampler=negative_sampler, seed=0,
                                      features=())
        return torch.cat([b.pairs.negative_dst for _ in range(20) for b in loader])

    assert int((drawn(Uniform(10)) == 5).sum()) > 0
    assert int((drawn(DegreeWeighted(10)) == 5).sum()) == 0


@pytest.mark.parametrize("kwargs, field", [
    (dict(items="nodes", negative_sampler=Uniform(1)), "negative_sampler"),
    (dict(items="nodes", exclude="self"), "exclude"),
    (dict(exclude="both"), "exclude"),
    (dict(items=torch.zeros(4, 3, dtype=torch.long)), "items"),
    (dict(negative_sampler="uniform"), "negative_sampler"),
])
def test_bad_pair_arguments_name_the_keyword(planted, kwargs, field):
    arguments = dict(items=every_pair(planted)[:10])
    arguments.update(kwargs)
    if isinstance(arguments["items"], str):
        arguments["items"] = planted.splits["train"]
    with pytest.raises(graphloom.OptionError) as raised:
        graphloom.DataLoader(planted, sampler=graphloom.NeighborSampler(planted, [2]),
                             batch_size=4, **arguments)
    assert raised.value.field == field


def test_a_pair_outside_the_graph_is_an_index_error(planted):
    with pytest.raises(graphloom.IdError, match="600"):
        graphloom.DataLoader(planted, torch.tensor([[0, 600]]),
                             graphloom.NeighborSampler(planted, [2]), batch_size=4)


def test_dgl_edge_prediction_batches(planted):
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([-1], prefetch_node_feats=["feat"]), exclude="self",
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(2))
    edge_index = planted.graph.edge_index()
    eids = torch.arange(0, planted.num_edges(), 7)
    loader = dgl.dataloading.DataLoader(planted, eids, sampler, batch_size=50, shuffle=True)
    positives = set()
    for input_nodes, pair_graph, neg_pair_graph, blocks in loader:
        output_nodes = blocks[-1].dst_ids
        src, dst = pair_graph.edges()
        positives |= set(zip(output_nodes[src].tolist(), output_nodes[dst].tolist()))
        neg_src, _ = neg_pair_graph.edges()
        assert neg_pair_graph.num_edges() == 2 * pair_graph.num_edges()
        assert torch.equal(neg_src, src.repeat_interleave(2))
        assert torch.equal(blocks[0].srcdata["feat"], planted.ndata["feat"][input_nodes])
    assert positives == set(zip(*edge_index[:, eids].tolist()))


def test_dgl_edge_prediction_without_negatives_yields_three(planted):
    sampler = dgl.dataloading.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([2]))
    loader = dgl.dataloading.DataLoader(planted, torch.arange(10), sampler, batch_size=10)
    assert len(next(iter(loader))) == 3


def test_dgl_edge_ids_outside_the_graph_are_an_index_error(planted):
    sampler = dgl.dataloading.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([2]))
    with pytest.raises(graphloom.IdError, match="edge id 4800"):
        dgl.dataloading.DataLoader(planted, torch.tensor([4800]), sampler)


def test_uniform_pairs_draw_both_ends_and_encode_them_among_the_seeds(planted):
    from graphloom.negative_sampler import UniformPairs

    loader = graphloom.DataLoader(planted, every_pair(planted)[:200],
                                  graphloom.NeighborSampler(planted, [2]), batch_size=100,
                                  negative_sampler=UniformPairs(2), features=())
    for batch in loader:
        p = batch.pairs
        assert torch.equal(batch.seeds[p.negative_src_index], p.negative_src)
        assert torch.equal(batch.seeds[p.negative_dst_index], p.negative_dst)
        assert not torch.equal(p.negative_src, p.src.repeat_interleave(2))
        src, dst = p.negative_pair_graph().edges()
        assert torch.equal(batch.seeds[src], p.negative_src)
