"""Layers over graphloom's blocks in plain PyTorch, for models that need neither DGL nor PyG
(DGL's ``SAGEConv`` with the mean aggregator, on a :class:`graphloom.Block`)."""

import torch

__all__ = ["SAGEConv"]


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
