"""graphloom.pyg.NeighborLoader, PyG's loader run by graphloom: PyG's argument order and
names, batches equal to graphloom's own loader's, a PyG Data's attributes sliced as PyG slices
them, and the arguments it refuses named. Skips, saying so, without torch_geometric."""

import pytest
import torch

import graphloom

pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
from torch_geometric.data import Data  # noqa: E402

from graphloom.pyg import NeighborLoader, from_dataset  # noqa: E402


def test_batches_equal_graphloom_loaders_with_fanouts_reversed(planted):
    # PyG lists hops from the seeds outwards: [5, 3] is graphloom's (and DGL's) [3, 5]; and
    # PyG samples each node once, at the hop that first reaches it.
    items = planted.splits["train"]
    pyg_loader = NeighborLoader(planted, num_neighbors=[5, 3], input_nodes=items, batch_size=64,
                                shuffle=True, seed=7)
    sampler = graphloom.NeighborSampler(planted, fanouts=[3, 5], each_node_once=True)
    ours = graphloom.DataLoader(planted, items, sampler, batch_size=64, shuffle=True, seed=7)
    assert len(pyg_loader) == len(ours) == 5
    for data, batch in zip(pyg_loader, ours):
        expected = batch.to_pyg()
        assert isinstance(data, Data)
        for key in ("n_id", "edge_index", "x", "y", "e_id"):
            assert torch.equal(data[key], expected[key]), key
        assert data.batch_size == expected.batch_size
        assert data.num_sampled_nodes == expected.num_sampled_nodes
        # As in PyG's batches, every node but the seeds is the source of a sampled edge.
        sources = torch.zeros(data.num_nodes, dtype=torch.bool)
        sources[data.edge_index[0]] = True
        assert sources[data.batch_size:].all()


def test_the_store_pair_and_the_dataset_give_the_same_batches(planted):
    def first(data):
        return next(iter(NeighborLoader(data, [4, 4], input_nodes=planted.splits["valid"],
                                        batch_size=32, seed=3)))

    a, b = first(planted), first(from_dataset(planted))
    assert torch.equal(a.n_id, b.n_id) and torch.equal(a.edge_index, b.edge_index)


def _pyg_data():
    generator = torch.Generator().manual_seed(0)
    num_nodes, num_edges = 200, 1200
    edge_index = torch.randint(num_nodes, (2, num_edges), generator=generator)
    return Data(x=torch.randn(num_nodes, 8, generator=generator), edge_index=edge_index,
                y=torch.randint(4, (num_nodes,), generator=generator),
                train_mask=torch.rand(num_nodes, generator=generator) < 0.5,
                edge_attr=torch.arange(num_edges, dtype=torch.float32).unsqueeze(1),
                edge_weight=torch.rand(num_edges, generator=generator) + 0.1)


def test_a_pyg_data_is_sampled_with_every_attribute_sliced_as_pyg_does():
    data = _pyg_data()
    loader = NeighborLoader(data, num_neighbors=[6, 4], input_nodes=data.train_mask,
                            batch_size=32, shuffle=True)
    seen = 0
    for batch in loader:
        seeds = batch.n_id[: batch.batch_size]
        assert bool(data.train_mask[seeds].all())
        assert torch.equal(batch.x, data.x[batch.n_id])
        assert torch.equal(batch.y, data.y[batch.n_id])
        assert torch.equal(batch.train_mask, data.train_mask[batch.n_id])
        # e_id names data's own edges: each sampled edge is that edge, its attributes with it.
        assert torch.equal(batch.n_id[batch.edge_index], data.edge_index[:, batch.e_id])
        assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
        assert torch.equal(batch.edge_weight, data.edge_weight[batch.e_id])
        seen += batch.batch_size
    assert seen == int(data.train_mask.sum())


def test_weight_attr_samples_by_a_data_edge_attribute():
    data = _pyg_data()
    data.edge_weight[data.edge_weight < 0.6] = 0.0  # these edges can never be picked
    loader = NeighborLoader(data, num_neighbors=[3], batch_size=50, weight_attr="edge_weight")
    picked = torch.cat([batch.e_id for batch in loader])
    assert picked.numel() > 0 and bool((data.edge_weight[picked] > 0).all())


@pytest.mark.parametrize("input_nodes", [None, "mask", "pair"])
def test_input_nodes_forms(planted, input_nodes):
    ids = planted.splits["test"]
    argument = {None: None, "mask": planted.ndata["test_mask"], "pair": (None, ids)}[input_nodes]
    loader = NeighborLoader(planted, [2], input_nodes=argument, batch_size=1000)
    batch = next(iter(loader))
    seeds = batch.n_id[: batch.batch_size]
    expected = torch.arange(planted.num_nodes()) if input_nodes is None else ids.sort().values
    assert torch.equal(seeds.sort().values, expected)


def test_transform_runs_on_every_batch(planted):
    loader = NeighborLoader(planted, [2], batch_size=200,
                            transform=lambda data: data.update({"marked": True}) or data)
    assert all(batch.marked for batch in loader)


@pytest.mark.parametrize("kwargs, field", [
    (dict(time_attr="time"), "time_attr"),
    (dict(input_time=torch.zeros(3)), "input_time"),
    (dict(disjoint=True), "disjoint"),
    (dict(subgraph_type="induced"), "subgraph_type"),
    (dict(directed=False), "directed"),
    (dict(num_neighbors={("a", "to", "b"): [2]}), "num_neighbors"),
    (dict(num_neighbors=[0]), "num_neighbors"),
    (dict(input_nodes=("paper", torch.arange(3))), "input_nodes"),
    (dict(data=torch.zeros(3)), "data"),
])
def test_what_it_does_not_do_is_refused_by_name(planted, kwargs, field):
    arguments = dict(data=planted, num_neighbors=[2], batch_size=4)
    arguments.update(kwargs)
    with pytest.raises(graphloom.OptionError) as raised:
        NeighborLoader(**arguments)
    assert raised.value.field == field


def test_torch_loader_arguments_are_accepted_and_unknown_ones_are_not(planted):
    NeighborLoader(planted, [2], batch_size=4, pin_memory=True, persistent_workers=False)
    with pytest.raises(TypeError, match="num_neigbors"):
        NeighborLoader(planted, [2], num_neigbors=[3])


# LinkNeighborLoader

from graphloom.pyg import LinkNeighborLoader  # noqa: E402


def test_link_batches_in_pygs_binary_shape(planted):
    pairs = planted.graph.edge_index()[:, :300]
    loader = LinkNeighborLoader(planted, [4, 4], edge_label_index=pairs, batch_size=64,
                                neg_sampling=dict(mode="binary", amount=2), shuffle=True)
    seen = []
    for data in loader:
        count = data.input_id.numel()
        ends = data.n_id[data.edge_label_index]
        assert torch.equal(ends[:, :count], pairs[:, data.input_id])
        # PyG's binary negatives: both ends drawn, so not the positives' sources repeated.
        assert ends.shape == (2, 3 * count)
        assert not torch.equal(ends[0, count:], ends[0, :count].repeat_interleave(2))
        assert torch.equal(data.edge_label, torch.cat([torch.ones(count), torch.zeros(2 * count)]))
        seen.append(data.input_id)
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(300))


def test_link_labels_shift_as_pygs_and_default_to_every_edge(planted):
    labels = torch.randint(0, 3, (planted.num_edges(),))
    loader = LinkNeighborLoader(planted, [2], edge_label=labels, neg_sampling="binary",
                                batch_size=1000)
    assert len(loader) == -(-planted.num_edges() // 1000)
    data = next(iter(loader))
    count = data.input_id.numel()
    assert torch.equal(data.edge_label[:count], labels[data.input_id] + 1)
    assert bool((data.edge_label[count:] == 0).all())
    unlabeled = next(iter(LinkNeighborLoader(planted, [2], batch_size=10)))
    assert "edge_label" not in unlabeled and unlabeled.edge_label_index.shape == (2, 10)


@pytest.mark.parametrize("amount, shape", [(1, (32,)), (3, (32, 3))])
def test_link_batches_in_pygs_triplet_shape(planted, amount, shape):
    loader = LinkNeighborLoader(planted, [2], batch_size=32,
                                neg_sampling=dict(mode="triplet", amount=amount))
    data = next(iter(loader))
    assert "edge_label_index" not in data and tuple(data.dst_neg_index.shape) == shape
    pairs = planted.graph.edge_index()[:, data.input_id]
    assert torch.equal(data.n_id[data.src_index], pairs[0])
    assert torch.equal(data.n_id[data.dst_pos_index], pairs[1])


def test_link_loader_over_a_pyg_data_with_pygs_negative_sampling_object():
    from torch_geometric.sampler import NegativeSampling

    data = _pyg_data()
    loader = LinkNeighborLoader(data, [3, 3], batch_size=100,
                                neg_sampling=NegativeSampling("binary", 1))
    batch = next(iter(loader))
    count = batch.input_id.numel()
    ends = batch.n_id[batch.edge_label_index[:, :count]]
    assert torch.equal(ends, data.edge_index[:, batch.input_id])
    assert torch.equal(batch.y, data.y[batch.n_id])


@pytest.mark.parametrize("kwargs, field", [
    (dict(neg_sampling=dict(mode="binary", amount=0.5)), "neg_sampling"),
    (dict(neg_sampling="pairs"), "neg_sampling"),
    (dict(neg_sampling="triplet", edge_label=torch.ones(4800)), "edge_label"),
    (dict(edge_label=torch.ones(3)), "edge_label"),
    (dict(edge_label_time=torch.ones(3)), "edge_label_time"),
    (dict(edge_label_index=(("a", "to", "b"), torch.zeros(2, 3))), "edge_label_index"),
    (dict(edge_label_index=torch.zeros(3, 4, dtype=torch.long)), "edge_label_index"),
])
def test_what_the_link_loader_does_not_do_is_refused_by_name(planted, kwargs, field):
    with pytest.raises(graphloom.OptionError) as raised:
        LinkNeighborLoader(planted, [2], batch_size=4, **kwargs)
    assert raised.value.field == field


def test_a_pair_outside_the_graph_names_edge_label_index(planted):
    with pytest.raises(graphloom.IdError, match=r"^edge_label_index: node id 600"):
        LinkNeighborLoader(planted, [2], edge_label_index=torch.tensor([[0], [600]]))
