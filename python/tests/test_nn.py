"""graphloom.nn's SAGEConv against DGL's formulas computed node by node (every aggregator,
nodes without in-edges included), its DGL-shaped inputs and parameters, and a GraphSAGE of each
aggregator learning the planted graph."""

import pytest
import torch

import graphloom
from graphloom.nn import GraphSAGE, SAGEConv

AGGREGATORS = ("mean", "gcn", "pool", "lstm")


@pytest.fixture
def block(tmp_path):
    # Node 5 has no in-edges; node 0 has three (one a repeat), so every reducer sees a
    # longer sequence, a short one and none.
    edges = torch.tensor([[1, 2, 3, 3, 4, 0, 1], [0, 0, 1, 2, 2, 4, 0]])
    graphloom.save_dataset(tmp_path / "d", edges, 6)
    dataset = graphloom.load_dataset(tmp_path / "d")
    return graphloom.NeighborSampler(dataset, fanouts=[-1]).sample(torch.arange(6)).blocks[0]


def reference(conv, block, h):
    """DGL's SAGEConv, one destination node at a time."""
    rows = []
    for d in range(block.num_dst):
        neighbors = h[block.indices[block.indptr[d]: block.indptr[d + 1]]]
        kind = conv.aggregator_type
        if kind == "gcn":
            rows.append(conv.fc_neigh((neighbors.sum(0) + h[d]) / (len(neighbors) + 1)))
            continue
        if len(neighbors) == 0:
            aggregated = torch.zeros(h.shape[1])
        elif kind == "mean":
            aggregated = neighbors.mean(0)
        elif kind == "pool":
            aggregated = torch.relu(conv.fc_pool(neighbors)).max(0).values
        else:
            _, (hidden, _) = conv.lstm(neighbors.unsqueeze(0))
            aggregated = hidden[-1, 0]
        rows.append(conv.fc_self(h[d]) + conv.fc_neigh(aggregated))
    return torch.stack(rows) + conv.bias


@pytest.mark.parametrize("aggregator", AGGREGATORS)
def test_each_aggregator_is_dgls_formula(block, aggregator):
    torch.manual_seed(0)
    conv = SAGEConv(5, 3, aggregator)
    with torch.no_grad():
        conv.bias.normal_()
    h = torch.randn(block.num_src, 5)
    torch.testing.assert_close(conv(block, h), reference(conv, block, h))
    # DGL's (feat_src, feat_dst) input gives the same.
    torch.testing.assert_close(conv(block, (h, h[: block.num_dst])), conv(block, h))


@pytest.mark.parametrize("aggregator", AGGREGATORS)
def test_gradients_reach_every_parameter(block, aggregator):
    conv = SAGEConv(4, 2, aggregator)
    conv(block, torch.randn(block.num_src, 4)).square().sum().backward()
    assert all(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in conv.parameters())


def test_parameters_carry_dgls_names():
    names = {a: sorted(name for name, _ in SAGEConv(4, 2, a).named_parameters())
             for a in AGGREGATORS}
    assert names["mean"] == ["bias", "fc_neigh.weight", "fc_self.weight"]
    assert names["gcn"] == ["bias", "fc_neigh.weight"]
    assert "fc_pool.weight" in names["pool"] and "lstm.weight_hh_l0" in names["lstm"]


def test_activation_norm_and_no_bias(block):
    conv = SAGEConv(4, 2, bias=False, activation=torch.relu, norm=lambda x: 2 * x)
    out = conv(block, torch.randn(block.num_src, 4))
    assert conv.bias is None and bool((out >= 0).all())


def test_an_unknown_aggregator_names_the_argument():
    with pytest.raises(graphloom.OptionError) as raised:
        SAGEConv(4, 2, "max")
    assert raised.value.field == "aggregator_type"


@pytest.mark.parametrize("aggregator", AGGREGATORS)
def test_graphsage_of_each_aggregator_learns_the_planted_graph(planted, aggregator):
    torch.manual_seed(0)
    sampler = graphloom.NeighborSampler(planted, fanouts=[5, 5])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=100,
                                  shuffle=True, seed=1)
    model = GraphSAGE(16, 32, 3, 2, aggregator_type=aggregator)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(8):
        for batch in loader:
            loss = torch.nn.functional.cross_entropy(
                model(batch.blocks, batch.input_features["feat"]), batch.labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    test = graphloom.DataLoader(planted, planted.splits["test"], sampler, batch_size=1000)
    batch = next(iter(test))
    accuracy = (model(batch.blocks, batch.input_features["feat"]).argmax(1) == batch.labels)
    assert float(accuracy.float().mean()) > 0.85  # chance: 0.33
