"""``python -m graphloom.bench parity``: does a PyG script reach the same accuracy on
graphloom's loader as on PyG's own?

One PyG GraphSAGE recipe (two SAGEConv layers, hidden 64, ReLU and dropout 0.5 between them,
Adam lr 0.01 and weight decay 5e-4, raw features, the test on the whole graph) is trained
from the batches of ``graphloom.pyg.NeighborLoader`` and from those of
``torch_geometric.loader.NeighborLoader`` (pyg-lib), over the same ``Data``, with the same
seeds, alternating. Settings: the shared datasets (Cora, CiteSeer, Tolokers by ROC-AUC) and
generated graphs whose degrees exceed the fanouts (a small and a large training set). Beside
the scores: each loader's per-hop sampled nodes and edges, and the nodes of a batch that no
sampled edge touches.
"""

import dataclasses
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

import graphloom


@dataclasses.dataclass
class Setting:
    name: str
    make: object  # (datasets folder) -> (torch_geometric Data, train, test ids, "acc" or "auc")
    seeds: int = 5
    epochs: int = 100
    batch_size: int = 64


def shared_dataset(name, metric="acc"):
    """A folder of ../shared/datasets as a PyG Data, with its split 0."""
    def make(root):
        from torch_geometric.data import Data

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, name)
            graphloom.convert(os.path.join(root, name), path, "shared")
            dataset = graphloom.load_dataset(path, memory_map=False)
        data = Data(x=dataset.node_features["feat"], y=dataset.labels,
                    edge_index=dataset.graph.edge_index(), num_nodes=dataset.num_nodes())
        return data, dataset.splits["train"], dataset.splits["test"], metric
    return make


def planted(num_nodes=7600, classes=8, degree=31, train_per_class=20, homophily=0.6,
            noise=6.0, seed=0):
    """A planted-partition graph whose degrees exceed the fanouts (Amazon Photo's size and
    degree): each edge stays in its source's class with probability `homophily`; features are
    the class centroid plus Gaussian noise. `train_per_class` nodes of each class train (0: half
    of all nodes); a fixed half of the rest test."""
    def make(_):
        from torch_geometric.data import Data
        from torch_geometric.utils import to_undirected

        generator = torch.Generator().manual_seed(seed)
        y = torch.randint(classes, (num_nodes,), generator=generator)
        by_class = [torch.nonzero(y == c).flatten() for c in range(classes)]
        edges = num_nodes * degree // 2
        src = torch.randint(num_nodes, (edges,), generator=generator)
        same = torch.rand(edges, generator=generator) < homophily
        dst = torch.randint(num_nodes, (edges,), generator=generator)
        for c in range(classes):
            pick = same & (y[src] == c)
            choice = torch.randint(len(by_class[c]), (int(pick.sum()),), generator=generator)
            dst[pick] = by_class[c][choice]
        edge_index = to_undirected(torch.stack([src, dst]), num_nodes=num_nodes)
        centroids = torch.randn(classes, 64, generator=generator)
        x = centroids[y] + noise * torch.randn(num_nodes, 64, generator=generator)
        order = torch.randperm(num_nodes, generator=generator)
        if train_per_class > 0:
            train = torch.cat([c[:train_per_class] for c in by_class])
        else:
            train = order[: num_nodes // 2]
        rest = order[~torch.isin(order, train)]
        test = rest[: len(rest) // 2]
        return Data(x=x, y=y, edge_index=edge_index, num_nodes=num_nodes), train, test, "acc"
    return make


SETTINGS = {
    "cora": Setting("cora", shared_dataset("cora")),
    "citeseer": Setting("citeseer", shared_dataset("citeseer")),
    "tolokers": Setting("tolokers", shared_dataset("tolokers", "auc"), seeds=3, epochs=10,
                        batch_size=256),
    "planted-small": Setting("planted-small", planted(), seeds=10),
    "planted-large": Setting("planted-large", planted(train_per_class=0, noise=10.0), seeds=3,
                             epochs=5, batch_size=256),
}


class Sage(torch.nn.Module):
    def __init__(self, width_in, classes, hidden=64):
        super().__init__()
        from torch_geometric.nn import SAGEConv

        self.convs = torch.nn.ModuleList([SAGEConv(width_in, hidden), SAGEConv(hidden, classes)])

    def forward(self, x, edge_index):
        for layer, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if layer < len(self.convs) - 1:
                x = F.dropout(x.relu(), p=0.5, training=self.training)
        return x


def roc_auc(scores, labels):
    """Mann-Whitney U over ranks (ties averaged)."""
    order = torch.argsort(scores)
    ranks = torch.empty_like(scores, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    unique, inverse = torch.unique(scores, return_inverse=True)
    mean_rank = torch.zeros(len(unique), dtype=torch.float64).index_reduce_(
        0, inverse, ranks, "mean", include_self=False)
    ranks = mean_rank[inverse]
    positive = labels == 1
    count = int(positive.sum())
    others = len(labels) - count
    return float((ranks[positive].sum() - count * (count + 1) / 2) / (count * others))


def make_loader(kind, data, train, setting, num_neighbors):
    if kind == "graphloom":
        from graphloom.pyg import NeighborLoader
    else:
        from torch_geometric.loader import NeighborLoader
    return NeighborLoader(data, num_neighbors=num_neighbors, input_nodes=train,
                          batch_size=setting.batch_size, shuffle=True)


def train_and_test(kind, data, train, test, metric, setting, num_neighbors, seed):
    """The recipe trained on `kind`'s batches: the test score on the whole graph."""
    torch.manual_seed(seed)
    classes = int(data.y.max()) + 1
    model = Sage(data.x.size(1), classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    loader = make_loader(kind, data, train, setting, num_neighbors)
    for _ in range(setting.epochs):
        model.train()
        for batch in loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            F.cross_entropy(out, batch.y[: batch.batch_size]).backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        out = model(data.x, data.edge_index)[test]
    if metric == "auc":
        return roc_auc(out.softmax(1)[:, 1], data.y[test])
    return float((out.argmax(1) == data.y[test]).float().mean())


def loader_batches(loader, count):
    """The first `count` batches of `loader`, over as many epochs as that takes."""
    while True:
        for batch in loader:
            yield batch
            count -= 1
            if count == 0:
                return


def batch_shape(kind, data, train, setting, num_neighbors, seed, batches=50):
    """Mean per-hop sampled nodes and edges, and nodes without a sampled edge, per batch
    (over epochs when there are few batches in one: a batch's distinct nodes depend on which
    seeds the shuffle put together)."""
    torch.manual_seed(seed)
    loader = make_loader(kind, data, train, setting, num_neighbors)
    nodes, edges, untouched = [], [], []
    for batch in loader_batches(loader, batches):
        nodes.append(torch.tensor(batch.num_sampled_nodes, dtype=torch.float64))
        edges.append(torch.tensor(batch.num_sampled_edges, dtype=torch.float64))
        touched = torch.zeros(batch.num_nodes, dtype=torch.bool)
        touched[batch.edge_index.flatten()] = True
        touched[: batch.batch_size] = True  # seeds count as reached
        untouched.append(float((~touched).sum()))
    return (torch.stack(nodes).mean(0).tolist(), torch.stack(edges).mean(0).tolist(),
            statistics.mean(untouched))


def run_setting(setting, num_neighbors, seeds, datasets):
    data, train, test, metric = setting.make(datasets)
    scores = {"graphloom": [], "pyg": []}
    start = time.perf_counter()
    for seed in range(seeds):
        for kind in scores:  # alternating: the same seed on both, one after the other
            scores[kind].append(train_and_test(kind, data, train, test, metric, setting,
                                               num_neighbors, seed))
    shapes = {kind: batch_shape(kind, data, train, setting, num_neighbors, 0) for kind in scores}
    return {"setting": setting.name, "metric": metric, "scores": scores, "shapes": shapes,
            "nodes": data.num_nodes, "train": len(train), "seconds": time.perf_counter() - start}


def report(result):
    scores, shapes = result["scores"], result["shapes"]
    ours, theirs = statistics.mean(scores["graphloom"]), statistics.mean(scores["pyg"])
    print(f"{result['setting']} ({result['nodes']} nodes, {result['train']} training, "
          f"{result['metric']}, {len(scores['pyg'])} seeds, {result['seconds']:.0f} s)")
    for kind, values in scores.items():
        print(f"  {kind:>9}: mean {statistics.mean(values):.4f} "
              f"(range {min(values):.4f}-{max(values):.4f}; {', '.join(f'{v:.3f}' for v in values)})")
    print(f"  gap graphloom - pyg: {100 * (ours - theirs):+.2f} points")
    for label, index in (("nodes per hop", 0), ("edges per hop", 1)):
        mine, pyg = shapes["graphloom"][index], shapes["pyg"][index]
        ratios = ", ".join(f"{a:,.0f}/{b:,.0f} ({a / b:.3f})" for a, b in zip(mine, pyg) if b)
        print(f"  {label} graphloom/pyg: {ratios}")
    print(f"  nodes without a sampled edge per batch: graphloom {shapes['graphloom'][2]:.1f}, "
          f"pyg {shapes['pyg'][2]:.1f}")


def parity_bench(args):
    import torch_geometric.typing as pyg_typing

    if not pyg_typing.WITH_PYG_LIB:
        raise SystemExit("parity: PyG's NeighborLoader needs pyg-lib, which is not installed "
                         "(it is not on the package index for this torch: build it from source, "
                         "docs/benchmarks.md \"Parity with PyG's loader\")")
    torch.set_num_threads(args.threads)
    num_neighbors = [int(f) for f in args.num_neighbors.split(",")]
    print(f"parity bench: PyG SAGEConv x2, hidden 64, dropout 0.5, Adam 0.01 / 5e-4, "
          f"num_neighbors {num_neighbors} (PyG's order), {args.threads} threads")
    results = []
    for name in args.settings.split(","):
        if name not in SETTINGS:
            raise SystemExit(f"parity: unknown setting {name!r} (one of {', '.join(SETTINGS)})")
        setting = SETTINGS[name]
        if args.epochs:
            setting = dataclasses.replace(setting, epochs=args.epochs)
        result = run_setting(setting, num_neighbors, args.seeds or setting.seeds, args.datasets)
        report(result)
        results.append(result)
    return results


def default_datasets():
    """../shared/datasets beside the repository this module is in (a source checkout)."""
    here = os.path.dirname(os.path.realpath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "datasets"))


def add_arguments(command):
    command.add_argument("--datasets", default=default_datasets(),
                         help="the shared datasets folder (default: ../shared/datasets of the "
                              "repository)")
    command.add_argument("--settings", default=",".join(SETTINGS),
                         help=f"comma-separated, of: {', '.join(SETTINGS)}")
    command.add_argument("--seeds", type=int, default=0,
                         help="seeds per loader (0: each setting's default)")
    command.add_argument("--epochs", type=int, default=0,
                         help="epochs per run (0: each setting's default)")
    command.add_argument("--num-neighbors", default="10,10", help="PyG's order: seeds' hop first")
    command.add_argument("--threads", type=int, default=2)
    return command
