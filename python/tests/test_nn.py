"""graphloom.nn's SAGEConv (every aggregator), GraphConv (every norm) and GATConv against DGL's
formulas computed node by node (nodes without in-edges included), their DGL-shaped inputs and
parameters, and a GraphSAGE of each aggregator learning the planted graph."""

import pytest
import torch

import graphloom
from graphloom.nn import GATConv, GraphConv, GraphSAGE, SAGEConv

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


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
def test_graph_conv_is_dgls_formula(block, norm):
    torch.manual_seed(1)
    conv = GraphConv(5, 3, norm=norm, allow_zero_in_degree=True)
    with torch.no_grad():
        conv.bias.normal_()
    h = torch.randn(block.num_src, 5)
    out_degree = torch.bincount(block.indices, minlength=block.num_src).clamp(min=1).float()
    rows = []
    for d in range(block.num_dst):
        sources = block.indices[block.indptr[d]: block.indptr[d + 1]]
        in_degree = max(len(sources), 1)
        total = torch.zeros(5)
        for u in sources.tolist():
            scale = {"both": (out_degree[u] * in_degree) ** -0.5, "right": 1 / in_degree,
                     "left": 1 / out_degree[u], "none": 1.0}[norm]
            total = total + scale * h[u]
        rows.append(total @ conv.weight + conv.bias)
    torch.testing.assert_close(conv(block, h), torch.stack(rows))


def test_gat_conv_is_dgls_formula(block):
    torch.manual_seed(2)
    conv = GATConv(5, 3, num_heads=2, allow_zero_in_degree=True, residual=True)
    with torch.no_grad():
        conv.bias.normal_()
    h = torch.randn(block.num_src, 5)
    z = conv.fc(h).view(-1, 2, 3)
    rows = []
    for d in range(block.num_dst):
        sources = block.indices[block.indptr[d]: block.indptr[d + 1]]
        out = torch.zeros(2, 3)
        if len(sources):
            scores = torch.nn.functional.leaky_relu(
                (z[sources] * conv.attn_l).sum(-1) + (z[d] * conv.attn_r).sum(-1), 0.2)
            weights = torch.softmax(scores, dim=0)  # over the in-edges, per head
            out = (weights.unsqueeze(-1) * z[sources]).sum(0)
        rows.append(out + conv.res_fc(h[d]).view(2, 3) + conv.bias.view(2, 3))
    torch.testing.assert_close(conv(block, h), torch.stack(rows))
    names = sorted(name for name, _ in conv.named_parameters())
    assert names == ["attn_l", "attn_r", "bias", "fc.weight", "res_fc.weight"]


@pytest.mark.parametrize("layer", [lambda: GraphConv(4, 2), lambda: GATConv(4, 2, 1)])
def test_destinations_without_in_edges_are_refused_as_dgl_does(block, layer):
    with pytest.raises(graphloom.Error, match="allow_zero_in_degree"):
        layer()(block, torch.randn(block.num_src, 4))  # node 5 has no in-edges


def test_one_dropout_mask_for_sources_and_destinations(block):
    # A single tensor: the destinations' rows are the sources' first rows after dropout too.
    torch.manual_seed(3)
    conv = SAGEConv(4, 4, feat_drop=0.5)
    h = torch.randn(block.num_src, 4)
    torch.manual_seed(4)
    one = conv(block, h)
    torch.manual_seed(4)
    dropped = conv.feat_drop(h)
    conv.feat_drop = torch.nn.Identity()
    torch.testing.assert_close(one, conv(block, dropped))
