"""Temporal neighbor sampling from Python: node and edge timestamps in the dataset format, the
sampler and DataLoader with seed times, PyG's NeighborLoader(time_attr=..., input_time=...,
temporal_strategy=...), and no edge of any batch later than its seed's time."""

import pytest
import torch

import graphloom

from conftest import planted_graph


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """The planted graph with a time per node and per edge."""
    parts = planted_graph()
    generator = torch.Generator().manual_seed(5)
    parts["node_timestamp"] = torch.randint(1000, (parts["num_nodes"],), generator=generator)
    parts["edge_timestamp"] = torch.randint(1000, (parts["edge_index"].shape[1],),
                                            generator=generator)
    path = tmp_path_factory.mktemp("data") / "timed"
    graphloom.save_dataset(path, **parts)
    return graphloom.load_dataset(path), parts


def _check_times(batch, node_time, edge_time_by_id):
    """Every edge of every block is usable at its destination's time, every pick lives at its
    destination's time, and every time is a seed's; returns the edges checked."""
    checked = 0
    seed_times = set(batch.seed_times.tolist())
    for block in batch.blocks:
        times = block.src_times
        assert set(times.tolist()) <= seed_times
        dst = block.dst_positions()
        src = block.indices
        dst_time = times[dst]
        assert torch.equal(times[src], dst_time)
        assert (node_time[block.src_ids[src]] <= dst_time).all()
        if edge_time_by_id is not None:
            assert (edge_time_by_id[block.edge_ids] <= dst_time).all()
        checked += src.numel()
    return checked


def test_timestamps_round_trip_and_follow_the_edges(timed):
    dataset, parts = timed
    assert torch.equal(dataset.node_timestamp, parts["node_timestamp"])
    # save_dataset keeps no edge ids: the CSC is a stable sort of edge_index by target.
    order = torch.sort(parts["edge_index"][1], stable=True).indices
    assert torch.equal(dataset.graph.edge_time, parts["edge_timestamp"][order])


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_loader_batches_hold_no_edge_later_than_their_seed(timed, strategy):
    dataset, _ = timed
    sampler = graphloom.NeighborSampler(dataset, [5, 5, 5], node_time=True, edge_time=True,
                                        temporal_strategy=strategy)
    items = dataset.splits["train"]
    loader = graphloom.DataLoader(dataset, items, sampler, batch_size=64, shuffle=True, seed=1)
    edge_time_by_id = dataset.graph.edge_time  # edge ids are CSC positions here
    checked = 0
    for batch in loader:
        assert torch.equal(batch.seed_times, dataset.node_timestamp[batch.seeds])
        checked += _check_times(batch, dataset.node_timestamp, edge_time_by_id)
    assert checked > 1000


def test_seed_times_override_node_times_and_bound_every_hop(timed):
    dataset, _ = timed
    sampler = graphloom.NeighborSampler(dataset, [10, 10], edge_time=True)
    seeds = torch.arange(50)
    early = sampler.sample(seeds, seed_time=torch.full((50,), 100))
    late = sampler.sample(seeds, seed_time=torch.full((50,), 999))
    assert (dataset.graph.edge_time[early.blocks[-1].edge_ids] <= 100).all()
    assert early.blocks[0].num_edges < late.blocks[0].num_edges
    # Edge times only: the seeds' times must be given.
    with pytest.raises(graphloom.OptionError, match="seed_time"):
        sampler.sample(seeds)


def test_last_takes_the_most_recent_usable_edges(timed):
    dataset, _ = timed
    graph = dataset.graph
    sampler = graphloom.NeighborSampler(dataset, [2], edge_time=True, temporal_strategy="last")
    seed, t = 7, 600
    block = sampler.sample(torch.tensor([seed]), seed_time=torch.tensor([t])).blocks[0]
    column = graph.edge_time[graph.indptr[seed]:graph.indptr[seed + 1]]
    usable = column[column <= t].sort().values
    assert graph.edge_time[block.edge_ids].sort().values.tolist() == usable[-2:].tolist()


def test_refusals_name_the_argument(timed, planted):
    dataset, _ = timed
    with pytest.raises(graphloom.OptionError, match="node_timestamp") as error:
        graphloom.NeighborSampler(planted, [5], node_time=True)
    assert error.value.field == "node_time"
    with pytest.raises(graphloom.OptionError) as error:
        graphloom.NeighborSampler(dataset, [5], node_time=True, replace=True,
                                  temporal_strategy="last")
    assert error.value.field == "temporal_strategy"
    with pytest.raises(graphloom.OptionError) as error:
        graphloom.NeighborSampler(planted, [5]).sample([1, 2], seed_time=[3, 4])
    assert error.value.field == "seed_time"
    with pytest.raises(graphloom.OptionError) as error:
        graphloom.NeighborSampler(dataset, [5], node_time=torch.zeros(3, dtype=torch.long))
    assert error.value.field == "node_time"


@pytest.fixture(scope="module")
def typed_timed(typed_planted_dir, tmp_path_factory):
    """The typed planted graph (items, users; three edge types) with a time per node."""
    import json
    import shutil

    import numpy as np

    path = tmp_path_factory.mktemp("typed") / "timed"
    shutil.copytree(typed_planted_dir, path)
    metadata = json.loads((path / "metadata.json").read_text())
    num_nodes = int(np.load(path / "indptr.npy").shape[0]) - 1
    node_time = np.random.default_rng(3).integers(0, 1000, num_nodes)
    np.save(path / "node_timestamp.npy", node_time)
    metadata["node_timestamp"] = "node_timestamp.npy"
    (path / "metadata.json").write_text(json.dumps(metadata))
    return graphloom.load_dataset(path), torch.from_numpy(node_time)


def test_typed_graphs_sample_each_edge_type_by_time(typed_timed):
    """Per-edge-type fanouts over each type's usable edges only, at every hop."""
    dataset, node_time = typed_timed
    sampler = graphloom.NeighborSampler(
        dataset, [3, 3], edge_type_fanouts={"likes": [2, 4], "related": [0, 5]}, node_time=True)
    loader = graphloom.DataLoader(dataset, dataset.splits["train"], sampler, batch_size=40,
                                  features=())
    checked = 0
    for batch in loader:
        checked += _check_times(batch, node_time, None)
        assert batch.blocks[-1].edge_types is not None
    assert checked > 1000


def test_pyg_neighbor_loader_gives_typed_temporal_batches_their_seed_times(typed_timed):
    pytest.importorskip("torch_geometric.data", reason="SKIPPED: torch_geometric is not installed")
    from graphloom.pyg import NeighborLoader

    dataset, node_time = typed_timed
    seeds = dataset.splits["train"]
    loader = NeighborLoader(dataset, num_neighbors=[4, 4], input_nodes=seeds, time_attr="time",
                            batch_size=50)
    seed_type = dataset.schema().types_of(seeds[:1])
    name = dataset.schema().node_types[int(seed_type[0])]
    batch = next(iter(loader))
    store = batch[name]
    assert store.seed_time.numel() == store.batch_size
    # The seeds' own node times (no input_time given).
    global_ids = dataset.schema().global_ids(int(seed_type[0]), store.n_id[: store.batch_size])
    assert torch.equal(store.seed_time, node_time[global_ids])


def _pyg_data_class():
    return pytest.importorskip("torch_geometric.data",
                               reason="SKIPPED: torch_geometric is not installed").Data


def test_pyg_neighbor_loader_samples_by_a_node_time_attribute():
    Data = _pyg_data_class()

    from graphloom.pyg import NeighborLoader

    parts = planted_graph()
    generator = torch.Generator().manual_seed(2)
    time = torch.randint(100, (parts["num_nodes"],), generator=generator)
    data = Data(x=parts["node_features"], edge_index=parts["edge_index"], y=parts["labels"],
                time=time)
    loader = NeighborLoader(data, num_neighbors=[5, 5], batch_size=32, time_attr="time",
                            input_nodes=parts["splits"]["train"], shuffle=True, seed=4)
    batches = 0
    for batch in loader:
        batches += 1
        assert torch.equal(batch.time, time[batch.n_id])  # a node attribute, sliced by n_id
        assert torch.equal(batch.seed_time, time[batch.n_id[:batch.batch_size]])
        src, dst = batch.edge_index
        # No neighbor is later than the seed its subtree serves: every node's time is at most
        # the latest seed time, and each edge's source no later than its target's seed.
        assert (batch.time <= batch.seed_time.max()).all()
        assert src.numel() > 0
    assert batches == len(loader) == 10

    # input_time overrides the seeds' own times: at time -1 nothing is reachable.
    seeds = parts["splits"]["train"][:16]
    empty = next(iter(NeighborLoader(data, [5, 5], input_nodes=seeds, batch_size=16,
                                     time_attr="time", input_time=torch.full((16,), -1))))
    assert empty.edge_index.shape[1] == 0 and empty.num_nodes == 16


def test_pyg_neighbor_loader_samples_by_an_edge_time_attribute():
    Data = _pyg_data_class()

    from graphloom.pyg import LinkNeighborLoader, NeighborLoader

    parts = planted_graph()
    edge_time = torch.arange(parts["edge_index"].shape[1])
    data = Data(x=parts["node_features"], edge_index=parts["edge_index"], y=parts["labels"],
                edge_time=edge_time)
    seeds = parts["splits"]["train"][:64]
    cutoff = 2000
    loader = NeighborLoader(data, [8, 8], input_nodes=seeds, batch_size=64, time_attr="edge_time",
                            input_time=torch.full((64,), cutoff), temporal_strategy="last")
    batch = next(iter(loader))
    assert batch.e_id.numel() > 0 and (batch.edge_time <= cutoff).all()
    assert torch.equal(batch.edge_time, edge_time[batch.e_id])  # e_id: positions in data
    with pytest.raises(graphloom.OptionError, match="input_time"):
        NeighborLoader(data, [8], input_nodes=seeds, batch_size=8, input_time=seeds)
    with pytest.raises(graphloom.OptionError) as error:
        LinkNeighborLoader(data, [8], time_attr="edge_time", batch_size=8)
    assert error.value.field == "edge_label_time"


def test_pair_loader_samples_each_pair_and_its_negatives_at_the_pairs_time(timed):
    dataset, parts = timed
    sampler = graphloom.NeighborSampler(dataset, [5, 5], node_time=True, edge_time=True)
    generator = torch.Generator().manual_seed(3)
    # 60 nodes over 400 pairs: most nodes are ends of pairs at several times.
    pairs = torch.randint(60, (400, 2), generator=generator)
    pair_time = torch.randint(300, 1000, (400,), generator=generator)
    loader = graphloom.DataLoader(dataset, pairs, sampler, batch_size=128, shuffle=True, seed=2,
                                  negative_sampler=graphloom.negative_sampler.Uniform(2),
                                  seed_time=pair_time)
    checked = split_nodes = 0
    for batch in loader:
        p = batch.pairs
        assert torch.equal(p.time, pair_time[p.input_id])
        assert torch.equal(batch.seed_times[p.src_index], p.time)
        assert torch.equal(batch.seed_times[p.negative_dst_index], p.time.repeat_interleave(2))
        assert torch.equal(batch.seeds[p.negative_dst_index], p.negative_dst)
        checked += _check_times(batch, dataset.node_timestamp, dataset.graph.edge_time)
        split_nodes += batch.seeds.numel() - batch.seeds.unique().numel()
    assert checked > 1000 and split_nodes > 0  # a node at two times is two seeds
    with pytest.raises(graphloom.OptionError) as error:  # pairs have no node times to default to
        graphloom.DataLoader(dataset, pairs, sampler, batch_size=128)
    assert error.value.field == "seed_time"


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_pyg_link_loader_samples_pairs_at_their_edge_label_time(mode):
    Data = _pyg_data_class()

    from graphloom.pyg import LinkNeighborLoader

    parts = planted_graph()
    edge_time = torch.arange(parts["edge_index"].shape[1])
    data = Data(x=parts["node_features"], edge_index=parts["edge_index"], edge_time=edge_time)
    label_index = parts["edge_index"][:, :256]
    label_time = torch.full((256,), 2000)
    loader = LinkNeighborLoader(data, [8, 8], edge_label_index=label_index,
                                edge_label_time=label_time, time_attr="edge_time",
                                neg_sampling=dict(mode=mode, amount=2), batch_size=64,
                                shuffle=True, seed=1)
    edges = 0
    for batch in loader:
        assert (batch.edge_time <= 2000).all()  # no hop reaches past the pairs' time
        edges += batch.e_id.numel()
        if mode == "binary":
            assert torch.equal(batch.edge_label_time, torch.full((64 * 3,), 2000))
        else:
            assert torch.equal(batch.seed_time, torch.full((64,), 2000))
    assert edges > 0
