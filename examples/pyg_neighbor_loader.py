"""PyG's NeighborLoader example (torch_geometric's examples/reddit.py) with one import changed:
`from graphloom.pyg import NeighborLoader` in place of `from torch_geometric.loader import
NeighborLoader`. The rest is PyG's own code: a `Data` object, PyG's SAGEConv, PyG's
`num_neighbors` order and its layer-wise inference over a second loader. No pyg-lib or
torch-sparse is needed.

    python examples/pyg_neighbor_loader.py --data DATASET_DIR [--epochs 10]

Reddit cannot be downloaded here, so the `Data` is built from a graphloom dataset directory
(x, edge_index, y and the split masks); prints the loss per epoch and the final accuracies.
"""

import argparse
import copy

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn import SAGEConv

import graphloom
from graphloom.pyg import NeighborLoader  # was: from torch_geometric.loader import NeighborLoader


def load_data(path):
    """The dataset as a PyG Data, as torch_geometric.datasets.Reddit gives it."""
    dataset = graphloom.load_dataset(path)
    ndata = dataset.ndata
    return Data(x=ndata["feat"].float(), edge_index=dataset.graph.edge_index(),
                y=ndata["label"], train_mask=ndata["train_mask"], val_mask=ndata["val_mask"],
                test_mask=ndata["test_mask"]), dataset.num_classes


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=0.5, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x_all, subgraph_loader):
        # Layer by layer over every node, each layer's input the previous layer's output.
        for i, conv in enumerate(self.convs):
            xs = []
            for batch in subgraph_loader:
                x = conv(x_all[batch.n_id], batch.edge_index)
                if i < len(self.convs) - 1:
                    x = x.relu_()
                xs.append(x[: batch.batch_size])
            x_all = torch.cat(xs, dim=0)
        return x_all


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="graphloom dataset directory")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)

    data, num_classes = load_data(args.data)
    kwargs = {"batch_size": args.batch_size, "num_workers": 2, "persistent_workers": True}
    train_loader = NeighborLoader(data, input_nodes=data.train_mask, num_neighbors=[25, 10],
                                  shuffle=True, **kwargs)
    subgraph_loader = NeighborLoader(copy.copy(data), input_nodes=None, num_neighbors=[-1],
                                     shuffle=False, **kwargs)

    model = SAGE(data.num_features, 256, num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(1, args.epochs + 1):
        model.train()
        total_loss = total_examples = 0
        for batch in train_loader:
            optimizer.zero_grad()
            y = batch.y[: batch.batch_size]
            y_hat = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = F.cross_entropy(y_hat, y)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * batch.batch_size
            total_examples += batch.batch_size
        print(f"epoch {epoch:02d} loss {total_loss / total_examples:.4f}")

    model.eval()
    pred = model.inference(data.x, subgraph_loader).argmax(dim=-1)
    for name, mask in (("train", data.train_mask), ("valid", data.val_mask),
                       ("test", data.test_mask)):
        accuracy = int((pred[mask] == data.y[mask]).sum()) / max(int(mask.sum()), 1)
        print(f"{name} accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
