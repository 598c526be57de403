"""Layers over graphloom's blocks in plain PyTorch, for models that need neither DGL nor PyG:
DGL's ``SAGEConv`` (mean, gcn, pool and lstm aggregators, DGL's parameter names) and a
GraphSAGE stack, on :class:`graphloom.Block` objects."""

import torch

from . import _check

__all__ = ["GraphSAGE", "SAGEConv"]


def _split_features(block, feat):
    """(source rows, destination rows): DGL's ``feat`` or ``(feat_src, feat_dst)``; the
    destination nodes are the first ``num_dst`` sources."""
    if isinstance(feat, tuple):
        return feat
    return feat, feat[: block.num_dst]


class SAGEConv(torch.nn.Module):
    """GraphSAGE (Hamilton et al., 2017) as DGL's ``dgl.nn.SAGEConv``, on a
    :class:`graphloom.Block`:

    - ``mean``: ``W_self h_dst + W_neigh mean(h_src)``;
    - ``gcn``: ``W_neigh (sum(h_src) + h_dst) / (in-degree + 1)``;
    - ``pool``: ``W_self h_dst + W_neigh max(relu(W_pool h_src))``;
    - ``lstm``: ``W_self h_dst + W_neigh LSTM(h_src in edge order)`` (the final hidden state).

    A node without in-edges aggregates zeros. The parameters carry DGL's names (``fc_self``,
    ``fc_neigh``, ``fc_pool``, ``lstm``, ``bias``), so a DGL state dict loads.

    Args:
        in_feats: input width, or ``(source width, destination width)``.
        out_feats: output width.
        aggregator_type: ``"mean"``, ``"gcn"``, ``"pool"`` or ``"lstm"``.
        feat_drop: dropout on the input features.
        bias: add a learned bias.
        norm, activation: callables applied to the output, in that order (None: none).

    ``forward(block, feat)``: ``feat`` holds one row per source node of the block (destination
    nodes first), or is ``(feat_src, feat_dst)``; returns one row per destination node.
    """

    def __init__(self, in_feats, out_feats, aggregator_type="mean", feat_drop=0.0, bias=True,
                 norm=None, activation=None):
        super().__init__()
        self.aggregator_type = _check.choice("aggregator_type", aggregator_type,
                                             ("mean", "gcn", "pool", "lstm"))
        src_feats, dst_feats = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self.feat_drop = torch.nn.Dropout(feat_drop)
        self.norm, self.activation = norm, activation
        if aggregator_type == "pool":
            self.fc_pool = torch.nn.Linear(src_feats, src_feats)
        if aggregator_type == "lstm":
            self.lstm = torch.nn.LSTM(src_feats, src_feats, batch_first=True)
        if aggregator_type != "gcn":
            self.fc_self = torch.nn.Linear(dst_feats, out_feats, bias=False)
        self.fc_neigh = torch.nn.Linear(src_feats, out_feats, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_feats)) if bias else None

    def forward(self, block, feat):
        h_src, h_dst = _split_features(block, feat)
        h_src, h_dst = self.feat_drop(h_src), self.feat_drop(h_dst)
        destinations = block.dst_positions()
        degree = block.indptr.diff().unsqueeze(1).to(h_src.dtype)
        if self.aggregator_type == "gcn":
            summed = self._sum(block, h_src[block.indices], destinations) + h_dst
            out = self.fc_neigh(summed / (degree + 1))
        else:
            out = self.fc_self(h_dst) + self.fc_neigh(self._aggregate(block, h_src, destinations,
                                                                      degree))
        if self.bias is not None:
            out = out + self.bias
        if self.activation is not None:
            out = self.activation(out)
        return out if self.norm is None else self.norm(out)

    def _aggregate(self, block, h_src, destinations, degree):
        if self.aggregator_type == "mean":
            return self._sum(block, h_src[block.indices], destinations) / degree.clamp(min=1)
        if self.aggregator_type == "pool":
            messages = torch.relu(self.fc_pool(h_src))[block.indices]
            index = destinations.unsqueeze(1).expand(-1, messages.shape[1])
            empty = messages.new_zeros(block.num_dst, messages.shape[1])
            return empty.scatter_reduce(0, index, messages, reduce="amax", include_self=False)
        return self._lstm(block, h_src, destinations)

    @staticmethod
    def _sum(block, messages, destinations):
        summed = messages.new_zeros(block.num_dst, messages.shape[1])
        return summed.index_add_(0, destinations, messages)

    def _lstm(self, block, h_src, destinations):
        """The final hidden state of the LSTM over each node's in-neighbors in edge order
        (DGL's reducer), the sequences padded to the longest and packed."""
        lengths = block.indptr.diff()
        out = h_src.new_zeros(block.num_dst, h_src.shape[1])
        has_edges = torch.nonzero(lengths).flatten()
        if has_edges.numel() == 0:
            return out
        row = torch.full((block.num_dst,), -1, dtype=torch.int64, device=lengths.device)
        row[has_edges] = torch.arange(has_edges.numel(), device=lengths.device)
        step = torch.arange(block.num_edges, device=lengths.device) - block.indptr[destinations]
        padded = h_src.new_zeros(has_edges.numel(), int(lengths.max()), h_src.shape[1])
        padded[row[destinations], step] = h_src[block.indices]
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            padded, lengths[has_edges].cpu(), batch_first=True, enforce_sorted=False)
        _, (hidden, _) = self.lstm(packed)
        out[has_edges] = hidden[-1]
        return out


class GraphSAGE(torch.nn.Module):
    """A stack of :class:`SAGEConv` layers over a MiniBatch's blocks (the model of DGL's
    GraphSAGE examples): ReLU and dropout between layers.

    ``forward(blocks, x)``: ``x`` holds the rows of the first block's source nodes; returns one
    row per seed."""

    def __init__(self, in_feats, hidden, classes, num_layers, dropout=0.5,
                 aggregator_type="mean"):
        super().__init__()
        dims = [in_feats] + [hidden] * (num_layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SAGEConv(a, b, aggregator_type)
                                          for a, b in zip(dims, dims[1:]))
        self.dropout = dropout

    def forward(self, blocks, x):
        h = x
        for index, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if index < len(self.layers) - 1:
                h = torch.nn.functional.dropout(h.relu(), self.dropout, self.training)
        return h
