"""An R-GCN on a typed graph in DGL's heterogeneous style (DGL's examples/pytorch/rgcn-hetero,
mini-batch entity classification) with its imports changed: the DataLoader takes `indices` as
a dict per node type and yields dicts of node ids and heterogeneous blocks; each layer is
`dglnn.HeteroGraphConv` with one `GraphConv` per relation (mean over its neighbors, a weight
per relation) plus a self-loop weight, summed at each node type.

    python examples/dgl_rgcn.py --data TYPED_DATASET_DIR [--epochs 8] [--target item]

Made for `graphloom generate typed-planted` (items whose classes the users who like them
tell); any typed dataset with "feat" rows and labels on the target node type works. Prints the
loss per epoch and the test accuracy of the target type's nodes.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import graphloom
import graphloom.dgl.nn as dglnn  # was: import dgl.nn as dglnn
from graphloom.dgl.dataloading import DataLoader, NeighborSampler  # was: dgl.dataloading


class RelGraphConvLayer(nn.Module):
    """DGL's example layer: per relation a GraphConv (norm "right", its own weight), summed,
    plus the node's own representation through a self-loop weight."""

    def __init__(self, in_feat, out_feat, rel_names, activation=None, dropout=0.0):
        super().__init__()
        self.conv = dglnn.HeteroGraphConv({
            rel: dglnn.GraphConv(in_feat, out_feat, norm="right", allow_zero_in_degree=True)
            for rel in rel_names}, aggregate="sum")
        self.loop_weight = nn.Linear(in_feat, out_feat, bias=False)
        self.activation, self.dropout = activation, nn.Dropout(dropout)

    def forward(self, block, inputs):
        hs = self.conv(block, inputs)
        out = {}
        for ntype, h_src in inputs.items():
            h = self.loop_weight(h_src[: block.num_dst_nodes(ntype)])
            if ntype in hs:
                h = h + hs[ntype]
            if self.activation is not None:
                h = self.activation(h)
            out[ntype] = self.dropout(h)
        return out


class EntityClassify(nn.Module):
    def __init__(self, in_feat, hidden, classes, rel_names, layers=2):
        super().__init__()
        sizes = [in_feat] + [hidden] * (layers - 1)
        self.layers = nn.ModuleList(
            RelGraphConvLayer(a, hidden, rel_names, F.relu, dropout=0.2) for a in sizes)
        self.out = nn.Linear(hidden, classes)

    def forward(self, blocks, inputs, target):
        h = inputs
        for layer, block in zip(self.layers, blocks):
            h = layer(block, h)
        return self.out(h[target])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="typed graphloom dataset directory")
    parser.add_argument("--target", default="item", help="the node type to classify")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--fanout", type=int, default=10, help="per relation and layer")
    args = parser.parse_args()
    torch.manual_seed(0)

    g = graphloom.load_dataset(args.data)
    rel_names = sorted({etype.split(":")[1] for etype in g.edge_types})
    schema = g.schema()
    target = schema.node_types.index(args.target)

    def loader(split, shuffle):
        ids = schema.local_ids(g.splits[split], target)  # the split's ids within the type
        sampler = NeighborSampler([{rel: args.fanout for rel in rel_names}] * 2,
                                  prefetch_node_feats=["feat"], prefetch_labels=["label"])
        return DataLoader(g, {args.target: ids}, sampler, batch_size=args.batch_size,
                          shuffle=shuffle)

    model = EntityClassify(g.node_features["feat"].shape[1], 32, g.num_classes, rel_names)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, args.epochs + 1):
        model.train()
        losses = []
        for input_nodes, output_nodes, blocks in loader("train", True):
            logits = model(blocks, blocks[0].srcdata["feat"], args.target)
            loss = F.cross_entropy(logits, blocks[-1].dstdata["label"][args.target])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch:02d} loss {sum(losses) / len(losses):.4f}")
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for input_nodes, output_nodes, blocks in loader("test", False):
            labels = blocks[-1].dstdata["label"][args.target]
            predicted = model(blocks, blocks[0].srcdata["feat"], args.target).argmax(1)
            correct += int((predicted == labels).sum())
            total += labels.numel()
    print(f"test accuracy {correct / max(total, 1):.4f}")


if __name__ == "__main__":
    main()
