"""Link prediction in PyG's style with graphloom's LinkNeighborLoader: `from graphloom.pyg
import LinkNeighborLoader` in place of `from torch_geometric.loader import
LinkNeighborLoader`; the model (PyG's SAGEConv encoder, dot-product decoder), the batches
(`edge_label_index`, `edge_label`) and the loop are PyG's.

    python examples/pyg_link_prediction.py --data DATASET_DIR [--epochs 20]

The dataset needs link splits: `edge_splits` "train" (the known undirected pairs) and "test"
with "test_neg" (held-out pairs and non-edges), as `graphloom convert` writes for
../shared/datasets/lp_*. Nodes without features get a learned embedding. Prints the loss per
epoch and the test ROC-AUC.
"""

import argparse

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn import SAGEConv

import graphloom
from graphloom.pyg import LinkNeighborLoader  # was: from torch_geometric.loader import ...


class Encoder(torch.nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels):
        super().__init__()
        # Featureless graphs learn one vector per node, as PyG's link-prediction examples do.
        self.embedding = torch.nn.Embedding(num_nodes, hidden_channels) if not in_channels else None
        self.conv1 = SAGEConv(in_channels or hidden_channels, hidden_channels)
        self.conv2 = SAGEConv(hidden_channels, hidden_channels)

    def forward(self, batch):
        x = self.embedding(batch.n_id) if self.embedding is not None else batch.x
        x = self.conv1(x, batch.edge_index).relu()
        return self.conv2(x, batch.edge_index)


def decode(z, edge_label_index):
    return (z[edge_label_index[0]] * z[edge_label_index[1]]).sum(dim=-1)


def roc_auc(scores, labels):
    """The probability that a positive outscores a negative (ties count half)."""
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
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-neighbors", default="10,10", help="per hop, seeds first (PyG)")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    NEIGHBORS = [int(f) for f in args.num_neighbors.split(",")]

    dataset = graphloom.load_dataset(args.data)
    x = dataset.ndata["feat"].float() if "feat" in dataset.ndata else None
    splits = dataset.edge_splits
    # PyG's RandomLinkSplit(disjoint_train_ratio=0.3): the pairs the model learns to predict
    # are not edges it passes messages over, or it would learn to find them in the graph.
    train = splits["train"][torch.randperm(len(splits["train"]))]
    supervision, message = train[: int(0.3 * len(train))], train[int(0.3 * len(train)):]
    edge_index = torch.cat([message, message.flip(1)]).t()  # both directions
    data = Data(x=x, edge_index=edge_index, num_nodes=dataset.num_nodes())
    train_loader = LinkNeighborLoader(data, num_neighbors=NEIGHBORS,
                                      edge_label_index=supervision.t(),
                                      neg_sampling_ratio=1.0, batch_size=args.batch_size,
                                      shuffle=True)
    data = Data(x=x, edge_index=torch.cat([train, train.flip(1)]).t(),
                num_nodes=dataset.num_nodes())  # every training edge to predict the test pairs
    test_pairs = torch.cat([splits["test"], splits["test_neg"]]).t()
    test_labels = torch.cat([torch.ones(len(splits["test"])), torch.zeros(len(splits["test_neg"]))])
    test_loader = LinkNeighborLoader(data, num_neighbors=NEIGHBORS, edge_label_index=test_pairs,
                                     edge_label=test_labels, batch_size=1024)

    model = Encoder(dataset.num_nodes(), 0 if x is None else x.shape[1], args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, args.epochs + 1):
        model.train()
        total_loss = total_examples = 0
        for batch in train_loader:
            optimizer.zero_grad()
            out = decode(model(batch), batch.edge_label_index)
            loss = F.binary_cross_entropy_with_logits(out, batch.edge_label)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * out.numel()
            total_examples += out.numel()
        print(f"epoch {epoch:02d} loss {total_loss / total_examples:.4f}")

    model.eval()
    scores, labels = [], []
    with torch.no_grad():
        for batch in test_loader:
            scores.append(decode(model(batch), batch.edge_label_index))
            labels.append(batch.edge_label)
    print(f"test auc {roc_auc(torch.cat(scores), torch.cat(labels)):.4f}")


if __name__ == "__main__":
    main()
