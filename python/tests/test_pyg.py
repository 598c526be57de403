"""PyG interop: MiniBatch.to_pyg() against PyG's NeighborLoader semantics on a graph written
out by hand, a PyG model trained on it (with and without trim_to_layer), and graphloom.pyg's
FeatureStore / GraphStore. Skips, saying so, without torch_geometric."""

import warnings

import numpy as np
import pytest
import torch

import graphloom

pyg = pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
import torch_geometric.typing  # noqa: E402

HAS_PYG_SAMPLER = torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE

# Edges src -> dst:  1->0 2->0 3->1 3->2 4->2 5->3 0->4
HAND_EDGES = torch.tensor([[1, 2, 3, 3, 4, 5, 0], [0, 0, 1, 2, 2, 3, 4]])


@pytest.fixture
def hand_dataset(tmp_path):
    features = torch.arange(6, dtype=torch.float32).unsqueeze(1).repeat(1, 2)
    graphloom.save_dataset(tmp_path / "hand", HAND_EDGES, 6, node_features=features,
                           labels=torch.tensor([0, 1, 0, 1, 0, 1]))
    return graphloom.load_dataset(tmp_path / "hand")


def test_to_pyg_matches_neighbor_loader_semantics(hand_dataset):
    # PyG, num_neighbors=[-1, -1] from seed 0: hop 1 reaches 1, 2 (edges 1->0, 2->0); hop 2
    # samples only the new nodes 1 and 2: 3 (3->1, 3->2) and 4 (4->2).
    sampler = graphloom.NeighborSampler(hand_dataset.graph, fanouts=[-1, -1])
    loader = graphloom.DataLoader(hand_dataset, torch.tensor([0]), sampler, batch_size=1)
    data = next(iter(loader)).to_pyg()
    assert data.n_id.tolist() == [0, 1, 2, 3, 4]
    assert data.num_sampled_nodes == [1, 2, 2]
    assert data.num_sampled_edges == [2, 3]
    global_edges = data.n_id[data.edge_index]
    assert global_edges[:, :2].tolist() == [[1, 2], [0, 0]]
    assert sorted(zip(*global_edges[:, 2:].tolist())) == [(3, 1), (3, 2), (4, 2)]
    assert data.batch_size == 1
    assert torch.equal(data.x, hand_dataset.node_features["feat"][data.n_id])
    assert torch.equal(data.y, hand_dataset.labels[data.n_id])
    # e_id names the edges of the dataset's graph.
    graph_edges = hand_dataset.graph.edge_index()
    assert torch.equal(graph_edges[:, data.e_id], global_edges)


def test_to_pyg_csr_layout_is_the_transposed_edge_index(planted):
    from torch_geometric.nn import SAGEConv

    sampler = graphloom.NeighborSampler(planted, fanouts=[4, 3])
    loader = graphloom.DataLoader(planted, planted.splits["train"][:40], sampler, batch_size=20)
    torch.manual_seed(0)
    conv = SAGEConv(16, 8)
    for batch in loader:
        coo = batch.to_pyg()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            csr = batch.to_pyg(layout=torch.sparse_csr)
        assert not [w for w in caught if "beta" in str(w.message)]  # torch's CSR warning
        assert "edge_index" not in csr and csr.adj_t.layout == torch.sparse_csr
        n = coo.num_nodes
        # Row = target, column = source; a pair sampled twice (a multi-edge) counts twice.
        dense = torch.zeros(n, n).index_put_(
            (coo.edge_index[1], coo.edge_index[0]), torch.ones(coo.edge_index.shape[1]),
            accumulate=True)
        torch.testing.assert_close(csr.adj_t.to_dense(), dense)
        # SAGEConv fuses over the CSR (one spmm) and gives what it gives over edge_index.
        torch.testing.assert_close(conv(csr.x, csr.adj_t), conv(coo.x, coo.edge_index))
    with pytest.raises(graphloom.OptionError, match="layout must be None"):
        batch.to_pyg(layout=torch.sparse_csc)


@pytest.mark.skipif(not HAS_PYG_SAMPLER, reason="SKIPPED: PyG has no sampler here (neither "
                    "pyg-lib nor torch-sparse is installed)")
def test_to_pyg_equals_pyg_neighbor_loader(hand_dataset):
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader

    data = Data(x=hand_dataset.node_features["feat"], edge_index=HAND_EDGES, num_nodes=6)
    theirs = next(iter(NeighborLoader(data, num_neighbors=[-1, -1], input_nodes=torch.tensor([0]),
                                      batch_size=1)))
    sampler = graphloom.NeighborSampler(hand_dataset.graph, fanouts=[-1, -1])
    ours = next(iter(graphloom.DataLoader(hand_dataset, torch.tensor([0]), sampler,
                                          batch_size=1))).to_pyg()
    assert ours.n_id.tolist() == theirs.n_id.tolist()
    assert list(ours.num_sampled_nodes) == list(theirs.num_sampled_nodes)
    assert list(ours.num_sampled_edges) == list(theirs.num_sampled_edges)
    as_set = lambda d: sorted(zip(*d.n_id[d.edge_index].tolist()))  # noqa: E731
    assert as_set(ours) == as_set(theirs)


class Sage(torch.nn.Module):
    def __init__(self, dim, hidden, classes):
        super().__init__()
        from torch_geometric.nn import SAGEConv

        self.convs = torch.nn.ModuleList([SAGEConv(dim, hidden), SAGEConv(hidden, classes)])

    def forward(self, x, edge_index, trim=None):
        for layer, conv in enumerate(self.convs):
            if trim is not None:
                from torch_geometric.utils import trim_to_layer

                x, edge_index, _ = trim_to_layer(layer, trim[0], trim[1], x, edge_index)
            x = conv(x, edge_index)
            if layer == 0:
                x = x.relu()
        return x


@pytest.mark.parametrize("trim", [False, True])
def test_a_pyg_model_trains_on_to_pyg_batches(planted, trim):
    torch.manual_seed(0)
    sampler = graphloom.NeighborSampler(planted, fanouts=[5, 5])
    train = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=64,
                                 shuffle=True)
    model = Sage(16, 32, planted.num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(10):
        for batch in train:
            data = batch.to_pyg()
            hops = (data.num_sampled_nodes, data.num_sampled_edges) if trim else None
            out = model(data.x, data.edge_index, hops)[: data.batch_size]
            loss = torch.nn.functional.cross_entropy(out, data.y[: data.batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    test = graphloom.DataLoader(planted, planted.splits["test"], sampler, batch_size=1000)
    data = next(iter(test)).to_pyg()
    with torch.no_grad():
        predicted = model(data.x, data.edge_index).argmax(1)[: data.batch_size]
    accuracy = (predicted == data.y[: data.batch_size]).float().mean().item()
    assert accuracy > 0.7, accuracy  # 3 classes: chance is 0.33


def test_feature_and_graph_store(planted):
    from graphloom.pyg import from_dataset

    features, graph = from_dataset(planted)
    ids = torch.tensor([5, 0, 599])
    assert torch.equal(features.get_tensor(None, "x", index=ids),
                       planted.node_features["feat"][ids])
    assert torch.equal(features.get_tensor(None, "y", index=ids), planted.labels[ids])
    # PyG's IndexType: slices and NumPy arrays too, and group_name may be left out.
    table = planted.node_features["feat"]
    assert torch.equal(features.get_tensor(None, "x", index=slice(10, 20)), table[10:20])
    assert torch.equal(features.get_tensor(None, "x", index=slice(None, None, 7)), table[::7])
    assert torch.equal(features.get_tensor(None, "x", index=np.array([3, 1])), table[[3, 1]])
    assert torch.equal(features.get_tensor(attr_name="x", index=ids), table[ids])
    assert features.get_tensor_size(None, "x") == (600, 16)
    assert {attr.attr_name for attr in features.get_all_tensor_attrs()} == {"x", "y"}
    with pytest.raises(KeyError, match="has no tensor 'z'"):
        features.get_tensor(None, "z", None)
    with pytest.raises(graphloom.IdError, match="index of 'x': node id 600 is outside"):
        features.get_tensor(None, "x", index=torch.tensor([0, 600]))
    with pytest.raises(graphloom.IdError, match="node id -1"):
        features.get_tensor(None, "y", index=torch.tensor([-1]))
    (attr,) = graph.get_all_edge_attrs()
    assert attr.size == (600, 600)
    row, colptr = graph.get_edge_index(edge_type=None, layout="csc")
    assert torch.equal(colptr, planted.graph.indptr)
    assert torch.equal(row, planted.graph.indices.to(torch.int64))
    # PyG's own conversion between layouts reads the store.
    row, col, _ = graph.coo()
    assert torch.equal(torch.stack([row, col]), planted.graph.edge_index())


@pytest.mark.skipif(not HAS_PYG_SAMPLER, reason="SKIPPED: PyG has no sampler here (neither "
                    "pyg-lib nor torch-sparse is installed)")
def test_pyg_neighbor_loader_runs_on_graphloom_stores(planted):
    from torch_geometric.loader import NeighborLoader

    from graphloom.pyg import from_dataset

    loader = NeighborLoader(from_dataset(planted), num_neighbors=[5, 5], batch_size=64,
                            input_nodes=planted.splits["train"])
    batch = next(iter(loader))
    assert torch.equal(batch.x, planted.node_features["feat"][batch.n_id])


@pytest.mark.parametrize("fanouts", [[5], [4, 3], [-1, 2, 3]])
def test_the_workers_pyg_layout_equals_the_one_built_in_python(planted, fanouts):
    def batches(pyg_edges):
        sampler = graphloom.NeighborSampler(planted, fanouts=fanouts)
        loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=64,
                                      seed=4, pyg_edges=pyg_edges)
        return list(loader)

    for ours, python in zip(batches(True), batches(False)):
        assert ours._pyg is not None and python._pyg is None
        a, b = ours.to_pyg(), python.to_pyg()
        for key in ("edge_index", "e_id", "n_id", "x", "y"):
            assert torch.equal(a[key], b[key]), key
        assert a.num_sampled_nodes == b.num_sampled_nodes
        assert a.num_sampled_edges == b.num_sampled_edges
