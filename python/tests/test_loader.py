"""NeighborSampler and DataLoader from Python: the blocks' structure and fanout law, what the
loader gathers, epochs, the rank split, stopping early, and bad arguments."""

import gc
import os
import textwrap

import numpy as np
import pytest
import torch

import graphloom

from conftest import run_python


def edge_set(graph):
    return set(zip(*graph.edge_index().tolist()))


def test_blocks_follow_the_fanout_law(planted):
    graph = planted.graph
    sampler = graphloom.NeighborSampler(graph, fanouts=[4, 3])
    seeds = torch.arange(0, 600, 7)
    batch = sampler.sample(seeds)
    assert torch.equal(batch.seeds, seeds)
    assert len(batch.blocks) == 2
    edges = edge_set(graph)
    degrees = graph.in_degrees()
    for block, fanout in zip(batch.blocks, [4, 3]):
        dst = block.dst_ids
        per_dst = block.indptr.diff()
        assert torch.equal(per_dst, torch.minimum(degrees[dst], torch.tensor(fanout)))
        src = block.src_ids[block.indices]
        dst_of_edge = dst[block.dst_positions()]
        assert all((s, d) in edges for s, d in zip(src.tolist(), dst_of_edge.tolist()))
    # A layer's destinations are the next layer's sources, in order.
    last = batch.blocks[-1]
    assert torch.equal(last.dst_ids, seeds)
    assert torch.equal(batch.blocks[0].dst_ids, last.src_ids)
    assert torch.equal(batch.input_nodes, batch.blocks[0].src_ids)


def test_sampling_is_reproducible(planted):
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[3, 3])
    seeds = torch.arange(100)
    a, b = sampler.sample(seeds, epoch=1, batch=2), sampler.sample(seeds, epoch=1, batch=2)
    c = sampler.sample(seeds, epoch=2, batch=2)
    assert torch.equal(a.blocks[0].src_ids, b.blocks[0].src_ids)
    assert not torch.equal(a.blocks[0].indices, c.blocks[0].indices)


def test_loader_gathers_features_and_labels_of_every_seed(planted):
    train = planted.splits["train"]
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[5, 5])
    loader = graphloom.DataLoader(planted, train, sampler, batch_size=64)
    assert len(loader) == (train.numel() + 63) // 64
    seen = []
    for batch in loader:
        assert torch.equal(batch.input_features["feat"],
                           planted.node_features["feat"][batch.input_nodes])
        assert torch.equal(batch.labels, planted.labels[batch.seeds])
        seen.append(batch.seeds)
    assert torch.equal(torch.cat(seen), train)  # in order without shuffle


def test_each_iteration_is_a_new_epoch(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=50,
                                  shuffle=True, seed=3)
    first = torch.cat([b.seeds for b in loader])
    second = torch.cat([b.seeds for b in loader])
    assert not torch.equal(first, second)
    assert torch.equal(first.sort().values, second.sort().values)
    again = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=50,
                                 shuffle=True, seed=3)
    assert torch.equal(torch.cat([b.seeds for b in again]), first)


def test_default_seed_follows_torch_manual_seed(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2])

    def epoch(torch_seed):
        torch.manual_seed(torch_seed)
        loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=50,
                                      shuffle=True, features=(), labels=False)
        batches = list(loader)
        return (torch.cat([b.seeds for b in batches]),
                torch.cat([b.blocks[0].src_ids for b in batches]))

    first, again, other = epoch(1), epoch(1), epoch(2)
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    assert not torch.equal(first[0], other[0])  # another shuffle
    with pytest.raises(graphloom.OptionError, match="seed must be a non-negative integer"):
        graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=50, seed=-1)


def test_ranks_take_disjoint_shares(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2])
    items = planted.splits["train"]
    shares = []
    for rank in range(3):
        loader = graphloom.DataLoader(planted, items, sampler, batch_size=16, shuffle=True,
                                      rank=rank, world_size=3, features=(), labels=False)
        shares.append(torch.cat([b.seeds for b in loader]))
    everything = torch.cat(shares)
    assert everything.numel() == items.numel()
    assert torch.equal(everything.sort().values, items.sort().values)


def test_break_then_iterate_again(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[3, 3])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=8,
                                  num_workers=2, prefetch=4)
    for index, _ in enumerate(loader):
        if index == 2:
            break
    assert sum(1 for _ in loader) == len(loader)


def thread_count():
    return len(os.listdir("/proc/self/task"))


def test_garbage_collected_loader_joins_its_threads(planted):
    before = thread_count()
    sampler = graphloom.NeighborSampler(planted, fanouts=[3])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=4,
                                  num_workers=3, prefetch=6)
    iterator = iter(loader)
    next(iterator)
    assert thread_count() >= before + 3
    del iterator, loader
    gc.collect()
    assert thread_count() <= before


def test_ctrl_c_mid_epoch_stops_cleanly():
    script = textwrap.dedent("""
        import os, signal, threading, time, torch, graphloom
        n = 200_000
        graph = graphloom.CSCGraph(torch.arange(0, 40 * n + 1, 40),
                                   torch.randint(n, (40 * n,)))
        sampler = graphloom.NeighborSampler(graph, fanouts=[-1, -1, -1])
        dataset_dir = os.environ["DATA"]
        graphloom.save_dataset(dataset_dir, graph.edge_index(), n)
        dataset = graphloom.load_dataset(dataset_dir)
        loader = graphloom.DataLoader(dataset, torch.arange(n), sampler, batch_size=20_000,
                                      features=(), labels=False)
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.time()
        try:
            for batch in loader:
                pass
            print("finished")
        except KeyboardInterrupt:
            print(f"interrupted after {time.time() - start:.1f} s")
    """)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        result = run_python("-c", script, timeout=300, env={"DATA": os.path.join(tmp, "g")})
    assert result.returncode == 0, result.stderr
    assert "interrupted" in result.stdout, result.stdout


@pytest.mark.parametrize("kwargs, field, message", [
    (dict(batch_size=0), "batch_size", "positive"),
    (dict(num_workers=-1), "num_workers", "num_workers must be >= 1"),
    (dict(num_workers=2, prefetch=1), "prefetch", "at least `num_workers`"),
    (dict(features=("nope",)), "features", "no feature 'nope'"),
])
def test_bad_loader_arguments_name_the_keyword(planted, kwargs, field, message):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2])
    arguments = dict(batch_size=8) | kwargs
    with pytest.raises(ValueError, match=message) as raised:
        graphloom.DataLoader(planted, planted.splits["train"], sampler, **arguments)
    assert raised.value.field == field


def test_items_outside_the_graph_are_an_index_error(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2])
    with pytest.raises(IndexError, match="node id 600 is outside"):
        graphloom.DataLoader(planted, torch.tensor([0, 600]), sampler, batch_size=8)
    with pytest.raises(graphloom.IdError):
        sampler.sample(torch.tensor([-1]))


@pytest.mark.parametrize("fanouts", [[], [0], [2, -2]])
def test_bad_fanouts(planted, fanouts):
    with pytest.raises(graphloom.OptionError, match="fanouts"):
        graphloom.NeighborSampler(planted, fanouts=fanouts)


@pytest.mark.parametrize("fanouts, shown", [("10,10", "'10,10'"), ([2.5, 3.7], "2.5 (float)"),
                                            ([True, 2], "True (bool)"), (10, "10")])
def test_fanouts_are_integers_only(planted, fanouts, shown):
    # A string was split into characters, floats were truncated: both are errors now.
    with pytest.raises(graphloom.OptionError, match="fanouts must be a list of integers") as raised:
        graphloom.NeighborSampler(planted, fanouts=fanouts)
    assert shown in str(raised.value)
    assert raised.value.field == "fanouts"
    # NumPy's integers and 0-d integer tensors are integers.
    sampler = graphloom.NeighborSampler(planted, fanouts=[np.int64(3), torch.tensor(2)])
    assert sampler.fanouts == [3, 2]


def test_a_fanout_with_replacement_past_its_bound_is_an_option_error(planted):
    sampler = graphloom.NeighborSampler(planted, fanouts=[2**62], replace=True)
    with pytest.raises(graphloom.OptionError, match="with replacement must be at most 1048576"):
        sampler.sample(torch.tensor([0, 1]))


def test_weighted_sampling_never_picks_a_zero_weight_edge(planted):
    graph = planted.graph
    weights = torch.zeros(graph.num_edges())
    weights[::2] = 1.0
    sampler = graphloom.NeighborSampler(graph, fanouts=[2], weights=weights)
    block = sampler.sample(torch.arange(600)).blocks[0]
    assert torch.all(weights[block.edge_ids] > 0)


def test_labor_reaches_fewer_nodes_and_keeps_the_fanout_on_average(planted):
    graph = planted.graph
    seeds = torch.arange(0, 600, 2)
    labor = graphloom.LayerNeighborSampler(graph, fanouts=[3, 3]).sample(seeds, epoch=0, batch=0)
    uniform = graphloom.NeighborSampler(graph, fanouts=[3, 3]).sample(seeds, epoch=0, batch=0)
    assert labor.input_nodes.numel() < uniform.input_nodes.numel()
    edges = edge_set(graph)
    degrees = graph.in_degrees()
    last = labor.blocks[-1]
    src = last.src_ids[last.indices]
    dst = last.dst_ids[last.dst_positions()]
    assert all((s, d) in edges for s, d in zip(src.tolist(), dst.tolist()))
    per_dst = last.indptr.diff()
    small = degrees[seeds] <= 3
    assert torch.equal(per_dst[small], degrees[seeds][small])  # small nodes keep everything
    assert abs(per_dst[~small].double().mean().item() - 3.0) < 0.5
    again = graphloom.LayerNeighborSampler(graph, fanouts=[3, 3]).sample(seeds, epoch=0, batch=0)
    assert torch.equal(again.blocks[0].src_ids, labor.blocks[0].src_ids)


def test_labor_trains_through_the_loader(planted):
    sampler = graphloom.LayerNeighborSampler(planted.graph, fanouts=[4, 4], layer_dependency=True,
                                             batch_dependency=4)
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=64)
    for batch in loader:
        assert torch.equal(batch.input_features["feat"],
                           planted.node_features["feat"][batch.input_nodes])
    assert "layer_dependency=True" in repr(sampler)


def skewed_graph(num_nodes=600):
    """In-degrees of 2..39, sources skewed toward low ids: seeds share some neighbors much
    more than others (on a graph of equal degrees LABOR-* keeps LABOR-0's probabilities)."""
    generator = torch.Generator().manual_seed(1)
    degrees = torch.randint(2, 40, (num_nodes,), generator=generator)
    sources = (torch.rand(int(degrees.sum()), generator=generator) ** 2 * num_nodes).long()
    return graphloom.CSCGraph(torch.cat([torch.zeros(1, dtype=torch.long), degrees.cumsum(0)]),
                           sources)


def test_labor_star_blocks_carry_importance_weights_that_sage_means_apply():
    graph = skewed_graph()
    seeds = torch.arange(0, 600, 2)
    star = graphloom.LayerNeighborSampler(graph, fanouts=[3, 3], importance_sampling=-1)
    batch = star.sample(seeds, epoch=0, batch=0)
    labor0 = graphloom.LayerNeighborSampler(graph, fanouts=[3, 3]).sample(seeds, epoch=0, batch=0)
    assert labor0.blocks[0].edge_weights is None
    assert batch.input_nodes.numel() <= labor0.input_nodes.numel()
    block = batch.blocks[-1]
    weights = block.edata["edge_weights"]
    assert float(weights.std()) > 0.01
    assert weights is block.edge_weights and weights.shape == (block.num_edges,)
    # Each destination's weights sum to its number of kept edges.
    sums = torch.zeros(block.num_dst).index_add_(0, block.dst_positions(), weights)
    assert torch.allclose(sums, block.indptr.diff().float(), atol=1e-4)
    # SAGEConv's mean weighs each message by them (DGL's edge_weight), by default.
    conv = graphloom.nn.SAGEConv(4, 2)
    x = torch.randn(block.num_src, 4)
    weighted = conv(block, x)
    assert torch.allclose(weighted, conv(block, x, edge_weight=weights))
    assert not torch.allclose(weighted, conv(block, x, edge_weight=torch.ones_like(weights)))
    with pytest.raises(graphloom.Error, match="edge_weight"):
        graphloom.nn.SAGEConv(4, 2, "pool")(block, x, edge_weight=weights)
    assert "importance_sampling=-1" in repr(star)
    moved = block.to("cpu")
    assert moved.edata["edge_weights"] is moved.edge_weights


def test_excluding_seed_edges_rescales_labor_star_weights():
    from graphloom.pairs import exclude_pairs
    seeds = torch.arange(0, 600, 2)
    batch = graphloom.LayerNeighborSampler(skewed_graph(), fanouts=[5],
                                           importance_sampling=2).sample(seeds, epoch=0, batch=0)
    block = batch.blocks[0]
    src = block.src_ids[block.indices][::3]  # every third sampled edge, as seed pairs
    dst = block.dst_ids[block.dst_positions()][::3]
    kept = exclude_pairs([block], src, dst, reverse=False)[0]
    assert kept.num_edges < block.num_edges
    sums = torch.zeros(kept.num_dst).index_add_(0, kept.dst_positions(), kept.edge_weights)
    assert torch.allclose(sums, kept.indptr.diff().float(), atol=1e-4)
    assert kept.edata["edge_weights"] is kept.edge_weights


@pytest.mark.parametrize("kwargs, field", [({"importance_sampling": 1.5}, "importance_sampling"),
                                           ({"batch_dependency": 0}, "batch_dependency")])
def test_bad_labor_arguments_name_the_keyword(planted, kwargs, field):
    with pytest.raises(graphloom.OptionError, match=field):
        graphloom.LayerNeighborSampler(planted.graph, fanouts=[3], **kwargs)


def test_batches_move_to_a_device_whole(planted):
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[3, 3])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=50,
                                  device="cpu")
    assert loader.device == torch.device("cpu")
    batch = next(iter(loader))
    moved = batch.to(torch.device("cpu"))
    assert moved is not batch
    for a, b in zip(batch.blocks, moved.blocks):
        assert torch.equal(a.indices, b.indices) and a.num_dst == b.num_dst
        assert torch.equal(a.edge_index(), b.edge_index())
    assert torch.equal(moved.input_features["feat"], batch.input_features["feat"])
    assert torch.equal(moved.labels, batch.labels)
    # meta tensors stand in for a device's: every tensor moves, none is left behind.
    on_meta = batch.to("meta")
    assert on_meta.seeds.device.type == "meta"
    assert all(b.indptr.device.type == "meta" for b in on_meta.blocks)
    assert on_meta.input_features["feat"].device.type == "meta"


@pytest.mark.parametrize("device, message", [
    ("gpu", "must be 'cpu', 'cuda'"),
    ("meta", "'cpu' or 'cuda'"),
])
def test_a_device_the_loader_cannot_deliver_to_is_an_option_error(planted, device, message):
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[2])
    with pytest.raises(ValueError, match=message) as raised:
        graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=8,
                             device=device)
    assert raised.value.field == "device"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="SKIPPED: no CUDA device")
def test_batches_delivered_to_a_cuda_device_are_the_cpu_batches(planted):
    """Rows gathered into pinned pooled buffers and copied without blocking arrive whole, also
    when the pool refills buffers while earlier copies may still be in flight."""
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[3, 3])
    loaders = [graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=16,
                                    seed=3, device=device, num_workers=2)
               for device in ("cpu", "cuda")]
    for on_cpu, on_cuda in zip(*loaders, strict=True):
        assert on_cuda.input_features["feat"].is_cuda
        assert torch.equal(on_cuda.seeds.cpu(), on_cpu.seeds)
        assert torch.equal(on_cuda.input_features["feat"].cpu(), on_cpu.input_features["feat"])
        assert torch.equal(on_cuda.labels.cpu(), on_cpu.labels)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_cuda_without_a_gpu_says_why(planted):
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[2])
    with pytest.raises(ValueError, match="sees no CUDA device") as raised:
        graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=8,
                             device="cuda")
    assert raised.value.field == "device"


def test_dgl_habits_work_on_batches_and_blocks(planted):
    sampler = graphloom.NeighborSampler(planted.graph, fanouts=[3, 2])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=40,
                                  num_workers=0)  # DGL's and PyG's default: one thread here
    for input_nodes, output_nodes, blocks in loader:
        assert torch.equal(input_nodes, blocks[0].src_ids)
        assert torch.equal(output_nodes, blocks[-1].dst_ids)
        first, last = blocks[0], blocks[-1]
        assert first.num_src_nodes() == first.num_src and last.num_dst_nodes() == last.num_dst
        assert torch.equal(first.srcdata["feat"], planted.node_features["feat"][input_nodes])
        assert torch.equal(last.dstdata["label"], planted.labels[output_nodes])
        assert torch.equal(first.srcdata["_ID"], input_nodes)
        src, dst = first.edges()
        assert torch.equal(torch.stack([src, dst]), first.edge_index())
        moved = blocks[0].to("meta")
        assert moved.srcdata["feat"].device.type == "meta"
        break


@pytest.mark.parametrize("value, expected", [(1024, 1024), ("256M", 256 << 20), ("2g", 2 << 30),
                                             ("1.5K", 1536), ("512kb", 512 << 10)])
def test_sizes_read_as_the_cli_reads_them(value, expected):
    from graphloom import _check

    assert _check.byte_size("cache_size", value) == expected


@pytest.mark.parametrize("value", ["lots", -1, "M", 2.5])
def test_bad_sizes_name_the_argument(value):
    from graphloom import _check

    with pytest.raises(graphloom.OptionError, match="cache_size"):
        _check.byte_size("cache_size", value)
