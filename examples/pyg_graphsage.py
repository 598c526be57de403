"""A PyG GraphSAGE (torch_geometric.nn.SAGEConv) trained on graphloom's data, two ways:

  --loader graphloom  graphloom's DataLoader, batches converted with MiniBatch.to_pyg();
  --loader pyg        PyG's own NeighborLoader over graphloom.pyg's FeatureStore/GraphStore
                      (needs pyg-lib or torch-sparse for PyG's sampler).

    python examples/pyg_graphsage.py --data DATASET_DIR [--epochs 20] [--loader graphloom]

Prints the loss per epoch and the final validation and test accuracy.
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv

import graphloom


class GraphSAGE(torch.nn.Module):
    def __init__(self, in_dim, hidden, classes, layers, dropout=0.5):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for layer, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if layer < len(self.convs) - 1:
                x = F.dropout(x.relu(), self.dropout, self.training)
        return x


class PygBatches:
    """Each iteration is an epoch of PyG Data batches from graphloom's DataLoader."""

    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        return (batch.to_pyg() for batch in self.loader)


def make_loader(args, dataset, items, shuffle):
    """PyG Data batches of `items`, from graphloom's loader or from PyG's over the stores."""
    fanouts = [int(f) for f in args.fanouts.split(",")]
    if args.loader == "graphloom":
        sampler = graphloom.NeighborSampler(dataset.graph, fanouts=fanouts)
        return PygBatches(graphloom.DataLoader(dataset, items, sampler,
                                               batch_size=args.batch_size, shuffle=shuffle,
                                               seed=args.seed))
    from torch_geometric.loader import NeighborLoader

    from graphloom.pyg import from_dataset

    # PyG lists hops from the seeds outwards; graphloom (as DGL) lists the input layer first.
    return NeighborLoader(from_dataset(dataset), num_neighbors=fanouts[::-1],
                          input_nodes=items, batch_size=args.batch_size, shuffle=shuffle)


def accuracy(args, model, dataset, split):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for data in make_loader(args, dataset, dataset.splits[split], False):
            out = model(data.x, data.edge_index)[: data.batch_size]
            correct += int((out.argmax(1) == data.y[: data.batch_size]).sum())
            total += data.batch_size
    return correct / max(total, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="graphloom dataset directory")
    parser.add_argument("--loader", choices=("graphloom", "pyg"), default="graphloom")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--fanouts", default="10,10", help="input layer first, as DGL")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    dataset = graphloom.load_dataset(args.data)
    feat = dataset.node_features["feat"]
    model = GraphSAGE(feat.shape[1], args.hidden, dataset.num_classes,
                      len(args.fanouts.split(",")))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    train = make_loader(args, dataset, dataset.splits["train"], True)
    for epoch in range(args.epochs):
        model.train()
        start, losses = time.time(), []
        for data in train:
            out = model(data.x, data.edge_index)[: data.batch_size]
            loss = F.cross_entropy(out, data.y[: data.batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch} loss {sum(losses) / len(losses):.4f} ({time.time() - start:.2f} s)")
    print(f"valid accuracy {accuracy(args, model, dataset, 'valid'):.4f}")
    print(f"test accuracy {accuracy(args, model, dataset, 'test'):.4f}")


if __name__ == "__main__":
    main()
