"""DGL's GraphSAGE link-prediction example (dgl's examples/pytorch/graphsage/link_pred.py)
with its imports changed: `graphloom.dgl.nn` and `graphloom.dgl.dataloading` for DGL's.
Edge batches come from `as_edge_prediction_sampler` with DGL's `exclude="reverse_id"` and
`negative_sampler.Uniform`; the model, its predictor and the layer-wise inference are DGL's.

    python examples/dgl_link_prediction.py --data DATASET_DIR [--epochs 10]

The dataset's graph holds both directions of its training edges, and its edge_splits "test" and
"test_neg" the held-out pairs and non-edges (as `graphloom convert` writes for
../shared/datasets/lp_*). Nodes without features get a learned embedding. Prints the loss per
epoch and the test ROC-AUC.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import graphloom
import graphloom.dgl.nn as dglnn  # was: import dgl.nn as dglnn
from graphloom.dgl.dataloading import (  # was: from dgl.dataloading import ...
    DataLoader, MultiLayerFullNeighborSampler, NeighborSampler, as_edge_prediction_sampler,
    negative_sampler)


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size):
        super().__init__()
        self.layers = nn.ModuleList()
        self.layers.append(dglnn.SAGEConv(in_size, hid_size, "mean"))
        self.layers.append(dglnn.SAGEConv(hid_size, hid_size, "mean"))
        self.hid_size = hid_size
        self.predictor = nn.Sequential(nn.Linear(hid_size, hid_size), nn.ReLU(),
                                       nn.Linear(hid_size, 1))

    def forward(self, pair_graph, neg_pair_graph, blocks, x):
        h = x
        for l, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if l != len(self.layers) - 1:
                h = F.relu(h)
        pos_src, pos_dst = pair_graph.edges()
        neg_src, neg_dst = neg_pair_graph.edges()
        h_pos = self.predictor(h[pos_src] * h[pos_dst])
        h_neg = self.predictor(h[neg_src] * h[neg_dst])
        return h_pos, h_neg

    def inference(self, g, feat, batch_size):
        """Layer-wise inference over every node, one full-neighbor layer at a time."""
        sampler = MultiLayerFullNeighborSampler(1)
        dataloader = DataLoader(g, torch.arange(g.num_nodes()), sampler, batch_size=batch_size,
                                shuffle=False, drop_last=False, num_workers=0)
        for l, layer in enumerate(self.layers):
            y = torch.empty(g.num_nodes(), self.hid_size)
            for input_nodes, output_nodes, blocks in dataloader:
                h = layer(blocks[0], feat[input_nodes])
                if l != len(self.layers) - 1:
                    h = F.relu(h)
                y[output_nodes] = h
            feat = y
        return y


def roc_auc(scores, labels):
    """The probability that a positive outscores a negative."""
    order = torch.argsort(scores)
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, scores.numel() + 1, dtype=scores.dtype)
    positives = labels == 1
    count = int(positives.sum())
    return float((ranks[positives].sum() - count * (count + 1) / 2)
                 / (count * (labels.numel() - count)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="graphloom dataset with link splits")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=64)
    args = parser.parse_args()
    torch.manual_seed(0)

    g = graphloom.load_dataset(args.data)
    embedding = None if "feat" in g.ndata else nn.Embedding(g.num_nodes(), args.hidden)
    model = SAGE(args.hidden if embedding is not None else g.ndata["feat"].shape[1], args.hidden)
    parameters = list(model.parameters()) + ([] if embedding is None else
                                             list(embedding.parameters()))

    seed_edges = torch.arange(g.num_edges())
    sampler = NeighborSampler([10, 10], prefetch_node_feats=[] if embedding else ["feat"])
    sampler = as_edge_prediction_sampler(sampler, exclude="reverse_id",
                                         negative_sampler=negative_sampler.Uniform(1))
    dataloader = DataLoader(g, seed_edges, sampler, batch_size=args.batch_size, shuffle=True,
                            drop_last=False, num_workers=0)
    opt = torch.optim.Adam(parameters, lr=0.005)
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0
        for it, (input_nodes, pair_graph, neg_pair_graph, blocks) in enumerate(dataloader):
            x = embedding(input_nodes) if embedding is not None else blocks[0].srcdata["feat"]
            pos_score, neg_score = model(pair_graph, neg_pair_graph, blocks, x)
            score = torch.cat([pos_score, neg_score])
            pos_label = torch.ones_like(pos_score)
            neg_label = torch.zeros_like(neg_score)
            labels = torch.cat([pos_label, neg_label])
            loss = F.binary_cross_entropy_with_logits(score, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
        print(f"epoch {epoch:05d} loss {total_loss / (it + 1):.4f}")

    model.eval()
    with torch.no_grad():
        feat = embedding.weight if embedding is not None else g.ndata["feat"].float()
        h = model.inference(g, feat, 4096)
        pairs = torch.cat([g.edge_splits["test"], g.edge_splits["test_neg"]])
        labels = torch.cat([torch.ones(len(g.edge_splits["test"])),
                            torch.zeros(len(g.edge_splits["test_neg"]))])
        scores = model.predictor(h[pairs[:, 0]] * h[pairs[:, 1]]).squeeze(1)
    print(f"test auc {roc_auc(scores, labels):.4f}")


if __name__ == "__main__":
    main()
