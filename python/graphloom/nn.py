"""Layers over graphloom's blocks in plain PyTorch, for models that need neither DGL nor PyG
(DGL's ``SAGEConv`` with the mean aggregator, on a :class:`graphloom.Block`)."""

import torch

__all__ = ["GraphSAGE", "SAGEConv"]


class SAGEConv(torch.nn.Module):
    """GraphSAGE with the mean aggregator (DGL's ``SAGEConv(aggregator_type="mean")``):
    ``h_dst = W_self h_dst + W_neigh mean(h_src over the in-edges)``.

    ``forward(block, h)``: ``h`` holds one row per source node of the block (destination nodes
    first); returns one row per destination node."""

    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.fc_self = torch.nn.Linear(in_feats, out_feats)
        self.fc_neigh = torch.nn.Linear(in_feats, out_feats, bias=False)

    def forward(self, block, h):
        destinations = block.dst_positions()
        summed = torch.zeros(block.num_dst, h.shape[1], dtype=h.dtype)
        summed.index_add_(0, destinations, h[block.indices])
        degree = block.indptr.diff().clamp(min=1).unsqueeze(1).to(h.dtype)
        return self.fc_self(h[: block.num_dst]) + self.fc_neigh(summed / degree)


class GraphSAGE(torch.nn.Module):
    """A stack of :class:`SAGEConv` layers over a MiniBatch's blocks (the model of DGL's
    GraphSAGE examples): ReLU and dropout between layers.

    ``forward(blocks, x)``: ``x`` holds the rows of the first block's source nodes; returns one
    row per seed."""

    def __init__(self, in_feats, hidden, classes, num_layers, dropout=0.5):
        super().__init__()
        dims = [in_feats] + [hidden] * (num_layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))
        self.dropout = dropout

    def forward(self, blocks, x):
        h = x
        for index, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if index < len(self.layers) - 1:
                h = torch.nn.functional.dropout(h.relu(), self.dropout, self.training)
        return h
