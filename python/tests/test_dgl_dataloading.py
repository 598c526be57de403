"""graphloom.dgl, DGL's names over graphloom (no DGL needed): the samplers and DataLoader of
dgl.dataloading, what their batches hold, the same sampling as graphloom's own loader, and the
arguments it refuses named."""

import pytest
import torch

import graphloom
import graphloom.dgl as dgl


def test_batches_unpack_as_dgls_with_prefetched_features_and_labels(planted):
    g = planted
    sampler = dgl.dataloading.NeighborSampler([4, 4], prefetch_node_feats=["feat"],
                                              prefetch_labels=["label"])
    loader = dgl.dataloading.DataLoader(g, g.ndata["train_mask"], sampler, batch_size=64,
                                        shuffle=True, drop_last=False, num_workers=0)
    seen = []
    for input_nodes, output_nodes, blocks in loader:
        assert torch.equal(blocks[0].srcdata[dgl.NID], input_nodes)
        assert torch.equal(blocks[-1].dstdata[dgl.NID], output_nodes)
        assert torch.equal(blocks[0].srcdata["feat"], g.ndata["feat"][input_nodes])
        assert torch.equal(blocks[-1].dstdata["label"], g.ndata["label"][output_nodes])
        assert blocks[0].num_dst_nodes() == blocks[1].num_src_nodes()
        seen.append(output_nodes)
    assert len(seen) == len(loader)
    assert torch.equal(torch.cat(seen).sort().values, g.splits["train"].sort().values)


def test_without_prefetch_the_blocks_hold_ids_only(planted):
    loader = dgl.dataloading.DataLoader(planted, planted.splits["train"],
                                        dgl.dataloading.NeighborSampler([3]), batch_size=300)
    _, _, blocks = next(iter(loader))
    assert list(blocks[0].srcdata) == [dgl.NID] and list(blocks[0].dstdata) == [dgl.NID]


def test_the_same_torch_seed_samples_what_graphloom_samples(planted):
    torch.manual_seed(11)
    ours = graphloom.DataLoader(planted, planted.splits["train"],
                                graphloom.NeighborSampler(planted, [3, 2]), batch_size=50,
                                shuffle=True, features=())
    expected = [batch.blocks for batch in ours]
    torch.manual_seed(11)
    loader = dgl.dataloading.DataLoader(planted, planted.splits["train"],
                                        dgl.dataloading.NeighborSampler([3, 2]), batch_size=50,
                                        shuffle=True)
    for (_, _, blocks), wanted in zip(loader, expected):
        for block, other in zip(blocks, wanted):
            assert torch.equal(block.src_ids, other.src_ids)
            assert torch.equal(block.indices, other.indices)


def test_full_neighbor_sampler_takes_every_in_edge(planted):
    sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
    input_nodes, output_nodes, blocks = sampler.sample(planted, torch.arange(20))
    degrees = planted.graph.in_degrees()
    for block in blocks:
        assert torch.equal(block.indptr.diff(), degrees[block.dst_ids])


def test_labor_sampler_runs(planted):
    sampler = dgl.dataloading.LaborSampler([5, 5], layer_dependency=True)
    loader = dgl.dataloading.DataLoader(planted, planted.splits["train"], sampler,
                                        batch_size=100)
    assert sum(1 for _ in loader) == 3
    star = dgl.dataloading.LaborSampler([5, 5], importance_sampling=1)
    loader = dgl.dataloading.DataLoader(planted, planted.splits["train"], star, batch_size=100)
    for _, _, blocks in loader:
        assert all(block.edata["edge_weights"].shape == (block.num_edges,) for block in blocks)


def test_use_ddp_needs_a_process_group(planted):
    with pytest.raises(graphloom.OptionError, match="init_process_group") as raised:
        dgl.dataloading.DataLoader(planted, planted.splits["train"],
                                   dgl.dataloading.NeighborSampler([3]), use_ddp=True)
    assert raised.value.field == "use_ddp"


@pytest.mark.parametrize("sampler_kwargs, loader_kwargs, field", [
    (dict(mask="m"), {}, "mask"),
    (dict(prefetch_edge_feats=["w"]), {}, "prefetch_edge_feats"),
    (dict(prefetch_labels=["y"]), {}, "prefetch_labels"),
    (dict(prefetch_node_feats=["nope"]), {}, "prefetch_node_feats"),
    (dict(prob="w"), {}, "prob"),  # the planted graph has no edge weights
    ({}, dict(use_uva=True), "use_uva"),
    ({}, dict(indices={"paper": torch.arange(3)}), "indices"),
])
def test_what_it_does_not_do_is_refused_by_name(planted, sampler_kwargs, loader_kwargs, field):
    arguments = dict(indices=planted.splits["train"])
    arguments.update(loader_kwargs)
    with pytest.raises(graphloom.OptionError) as raised:
        sampler = dgl.dataloading.NeighborSampler([3], **sampler_kwargs)
        dgl.dataloading.DataLoader(planted, graph_sampler=sampler, **arguments)
    assert raised.value.field == field


def test_torch_loader_arguments_are_accepted_and_unknown_ones_are_not(planted):
    sampler = dgl.dataloading.NeighborSampler([3])
    dgl.dataloading.DataLoader(planted, planted.splits["train"], sampler, pin_prefetcher=True,
                               persistent_workers=False, use_prefetch_thread=False)
    with pytest.raises(TypeError, match="batchsize"):
        dgl.dataloading.DataLoader(planted, planted.splits["train"], sampler, batchsize=4)


def test_dgl_nn_names_graphloom_layers():
    import graphloom.dgl.nn as dglnn

    assert dglnn.SAGEConv is graphloom.nn.SAGEConv
