"""A relational GNN on a typed graph in PyG's heterogeneous style: graphloom.pyg.NeighborLoader
yields `HeteroData` batches (PyG's node and edge type names, `num_neighbors` per edge type),
and the model is PyG's `HeteroConv` with one `SAGEConv` per relation, summed at each node type
(R-GCN's scheme: a weight per relation).

    python examples/pyg_hetero.py --data TYPED_DATASET_DIR [--epochs 8] [--target item]

Made for `graphloom generate typed-planted` (items whose classes the users who like them tell);
any typed dataset with labels on the target node type works. Prints the loss per epoch and the
test accuracy of the target type's nodes.
"""

import argparse

import torch
import torch.nn.functional as F
from torch_geometric.nn import HeteroConv, SAGEConv

import graphloom
from graphloom.pyg import NeighborLoader


class RelationalGNN(torch.nn.Module):
    def __init__(self, edge_types, hidden, classes, target, layers=2):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            HeteroConv({t: SAGEConv((-1, -1), hidden) for t in edge_types}, aggr="sum")
            for _ in range(layers))
        self.out = torch.nn.Linear(hidden, classes)
        self.target = target

    def forward(self, data):
        x = data.x_dict
        for conv in self.convs:
            x = {node_type: h.relu() for node_type, h in conv(x, data.edge_index_dict).items()}
        return self.out(x[self.target])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="typed graphloom dataset directory")
    parser.add_argument("--target", default="item", help="the node type to classify")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--fanout", type=int, default=10, help="per edge type and hop")
    args = parser.parse_args()
    torch.manual_seed(0)

    dataset = graphloom.load_dataset(args.data)
    edge_types = [tuple(name.split(":")) for name in dataset.edge_types]
    offset = int(dataset.graph._impl.node_type_offset[dataset.node_types.index(args.target)])

    def loader(split, shuffle):
        return NeighborLoader(dataset, num_neighbors={t: [args.fanout] * 2 for t in edge_types},
                              input_nodes=(args.target, dataset.splits[split] - offset),
                              batch_size=args.batch_size, shuffle=shuffle)

    model = RelationalGNN(edge_types, 32, dataset.num_classes, args.target)
    model(next(iter(loader("train", False))))  # PyG's lazy layers learn their input widths
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, args.epochs + 1):
        model.train()
        losses = []
        for data in loader("train", True):
            size = data[args.target].batch_size
            loss = F.cross_entropy(model(data)[:size], data[args.target].y[:size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch:02d} loss {sum(losses) / len(losses):.4f}")
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for data in loader("test", False):
            size = data[args.target].batch_size
            correct += int((model(data)[:size].argmax(1) == data[args.target].y[:size]).sum())
            total += size
    print(f"test accuracy {correct / max(total, 1):.4f}")


if __name__ == "__main__":
    main()
