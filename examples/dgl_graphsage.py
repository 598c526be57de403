"""DGL's GraphSAGE node-classification example (dgl's examples/pytorch/graphsage/
node_classification.py, mini-batch mode) with its imports changed: `import graphloom.dgl as
dgl` and `import graphloom.dgl.nn as dglnn`. The model, the loop and the names are DGL's; the
sampling and feature gathering are graphloom's C++ threads.

    python examples/dgl_graphsage.py --data DATASET_DIR [--epochs 10] [--aggregator mean]

Prints the loss and validation accuracy per epoch and the final test accuracy.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import graphloom
import graphloom.dgl as dgl  # was: import dgl
import graphloom.dgl.nn as dglnn  # was: import dgl.nn as dglnn
from graphloom.dgl.dataloading import DataLoader, NeighborSampler  # was: dgl.dataloading


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size, aggregator):
        super().__init__()
        self.layers = nn.ModuleList()
        self.layers.append(dglnn.SAGEConv(in_size, hid_size, aggregator))
        self.layers.append(dglnn.SAGEConv(hid_size, hid_size, aggregator))
        self.layers.append(dglnn.SAGEConv(hid_size, out_size, aggregator))
        self.dropout = nn.Dropout(0.5)

    def forward(self, blocks, x):
        h = x
        for l, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if l != len(self.layers) - 1:
                h = F.relu(h)
                h = self.dropout(h)
        return h


def evaluate(model, dataloader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for input_nodes, output_nodes, blocks in dataloader:
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            y_hat = model(blocks, x)
            correct += int((y_hat.argmax(1) == y).sum())
            total += len(y)
    return correct / max(total, 1)


def train(args, device, g, train_idx, val_idx, model):
    sampler = NeighborSampler([10, 10, 10], prefetch_node_feats=["feat"],
                              prefetch_labels=["label"])
    use_uva = device.type == "cuda"
    train_dataloader = DataLoader(g, train_idx, sampler, device=device, batch_size=args.batch_size,
                                  shuffle=True, drop_last=False, num_workers=0, use_uva=use_uva)
    val_dataloader = DataLoader(g, val_idx, sampler, device=device, batch_size=args.batch_size,
                                shuffle=True, drop_last=False, num_workers=0, use_uva=use_uva)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0
        for it, (input_nodes, output_nodes, blocks) in enumerate(train_dataloader):
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            y_hat = model(blocks, x)
            loss = F.cross_entropy(y_hat, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
        acc = evaluate(model, val_dataloader)
        print(f"epoch {epoch:05d} loss {total_loss / (it + 1):.4f} valid accuracy {acc:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="graphloom dataset directory")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--aggregator", default="mean", choices=("mean", "gcn", "pool", "lstm"))
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)

    g = graphloom.load_dataset(args.data)  # was: dataset = AsNodePredDataset(...); g = dataset[0]
    train_idx, val_idx = g.splits["train"], g.splits["valid"]
    in_size, out_size = g.ndata["feat"].shape[1], g.num_classes
    model = SAGE(in_size, 256, out_size, args.aggregator).to(device)
    train(args, device, g, train_idx, val_idx, model)

    test_dataloader = DataLoader(g, g.splits["test"], dgl.dataloading.NeighborSampler(
        [10, 10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"]),
        device=device, batch_size=args.batch_size)
    print(f"test accuracy {evaluate(model, test_dataloader):.4f}")


if __name__ == "__main__":
    main()
