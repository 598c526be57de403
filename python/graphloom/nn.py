"""Layers over graphloom's blocks in plain PyTorch, for models that need neither DGL nor PyG:
DGL's ``SAGEConv`` (mean, gcn, pool and lstm aggregators), ``GraphConv`` and ``GATConv`` with
DGL's arguments and parameter names, ``edge_softmax``, and a GraphSAGE stack, on
:class:`graphloom.Block` objects."""

import torch

from . import _check
from .errors import Error

__all__ = ["GATConv", "GraphConv", "GraphSAGE", "SAGEConv", "edge_softmax"]


def _split_features(block, feat, dropout=None):
    """(source rows, destination rows, whether the destination rows are the sources' first
    rows) of DGL's ``feat`` or ``(feat_src, feat_dst)``, after ``dropout``: one mask for a single
    tensor, whose first ``num_dst`` rows are the destinations', as in DGL."""
    dropout = dropout or (lambda h: h)
    if isinstance(feat, tuple):
        return dropout(feat[0]), dropout(feat[1]), False
    h = dropout(feat)
    return h, h[: block.num_dst], True


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

    ``forward(block, feat, edge_weight=None)``: ``feat`` holds one row per source node of the
    block (destination nodes first), or is ``(feat_src, feat_dst)``; returns one row per
    destination node. ``edge_weight`` (DGL's argument, ``[num_edges]``) multiplies each message
    of the mean and gcn aggregators; by default the block's LABOR-* importance weights
    (``block.edge_weights``) weigh the mean, as the estimator needs.
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

    def forward(self, block, feat, edge_weight=None):
        if edge_weight is not None and self.aggregator_type in ("pool", "lstm"):
            raise Error(f"edge_weight: the {self.aggregator_type} aggregator takes no edge "
                        f"weights (mean and gcn do)")
        h_src, h_dst, _ = _split_features(block, feat, self.feat_drop)
        destinations = block.dst_positions()
        degree = block.indptr.diff().unsqueeze(1).to(h_src.dtype)
        if self.aggregator_type == "gcn":
            summed = self._sum(block, self._messages(block, h_src, edge_weight), destinations)
            out = self.fc_neigh((summed + h_dst) / (degree + 1))
        else:
            if edge_weight is None and self.aggregator_type == "mean":
                edge_weight = getattr(block, "edge_weights", None)
            out = self.fc_self(h_dst) + self.fc_neigh(self._aggregate(
                block, h_src, destinations, degree, edge_weight))
        if self.bias is not None:
            out = out + self.bias
        if self.activation is not None:
            out = self.activation(out)
        return out if self.norm is None else self.norm(out)

    @staticmethod
    def _messages(block, h_src, edge_weight):
        messages = h_src[block.indices]
        if edge_weight is None:
            return messages
        if edge_weight.shape != (block.num_edges,):
            raise Error(f"edge_weight must hold one value per edge ([{block.num_edges}]), got "
                        f"shape {list(edge_weight.shape)}")
        return messages * edge_weight.to(messages.dtype).unsqueeze(1)

    def _aggregate(self, block, h_src, destinations, degree, edge_weight):
        if self.aggregator_type == "mean":
            messages = self._messages(block, h_src, edge_weight)
            return self._sum(block, messages, destinations) / degree.clamp(min=1)
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


def _in_edges_everywhere(block, allowed):
    """DGL's check: a destination without in-edges gets no message, which is usually a bug."""
    if not allowed and block.num_dst and bool((block.indptr.diff() == 0).any()):
        raise Error("the block has destination nodes without in-edges, whose output would be "
                    "invalid: add self-loops to the graph (convert --self-loops add), or pass "
                    "allow_zero_in_degree=True (DGL's advice)")


class GraphConv(torch.nn.Module):
    """GCN's layer (Kipf & Welling, 2017) as DGL's ``dgl.nn.GraphConv``, on a
    :class:`graphloom.Block`: ``h_dst = sum over in-edges of c * h_src W (+ b)`` with
    ``norm="both"`` (``c = 1 / sqrt(out-degree(src) * in-degree(dst))``, degrees counted in the
    block, at least 1), ``"right"`` (``1 / in-degree(dst)``: the mean), ``"left"``
    (``1 / out-degree(src)``) or ``"none"`` (the sum). Parameters: ``weight`` ``[in, out]`` and
    ``bias`` (DGL's names).

    A destination without in-edges raises an :class:`~graphloom.Error` unless
    ``allow_zero_in_degree=True``, as in DGL.
    """

    def __init__(self, in_feats, out_feats, norm="both", weight=True, bias=True,
                 activation=None, allow_zero_in_degree=False):
        super().__init__()
        self.norm = _check.choice("norm", norm, ("both", "right", "left", "none"))
        self.weight = torch.nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        self.bias = torch.nn.Parameter(torch.zeros(out_feats)) if bias else None
        self.activation, self.allow_zero_in_degree = activation, allow_zero_in_degree
        if self.weight is not None:
            torch.nn.init.xavier_uniform_(self.weight)

    def forward(self, block, feat):
        _in_edges_everywhere(block, self.allow_zero_in_degree)
        h_src, _, _ = _split_features(block, feat)
        destinations = block.dst_positions()
        if self.norm in ("both", "left"):
            out_degree = torch.bincount(block.indices, minlength=h_src.shape[0]).clamp(min=1)
            scale = out_degree.to(h_src.dtype).pow(-0.5 if self.norm == "both" else -1.0)
            h_src = h_src * scale.unsqueeze(1)
        if self.weight is not None:
            h_src = h_src @ self.weight
        out = h_src.new_zeros(block.num_dst, h_src.shape[1]).index_add_(
            0, destinations, h_src[block.indices])
        if self.norm in ("both", "right"):
            in_degree = block.indptr.diff().clamp(min=1).to(out.dtype)
            out = out * in_degree.pow(-0.5 if self.norm == "both" else -1.0).unsqueeze(1)
        if self.bias is not None:
            out = out + self.bias
        return out if self.activation is None else self.activation(out)


def edge_softmax(block, scores):
    """Softmax of per-edge ``scores`` ``[num_edges, ...]`` over each destination's in-edges
    (DGL's ``edge_softmax``)."""
    destinations = block.dst_positions()
    index = destinations.view(-1, *([1] * (scores.dim() - 1))).expand_as(scores)
    shape = (block.num_dst,) + tuple(scores.shape[1:])
    top = scores.new_full(shape, float("-inf")).scatter_reduce(0, index, scores, reduce="amax")
    weights = torch.exp(scores - top[destinations])
    total = scores.new_zeros(shape).index_add_(0, destinations, weights)
    return weights / total[destinations]


class GATConv(torch.nn.Module):
    """Graph attention (Velickovic et al., 2018) as DGL's ``dgl.nn.GATConv``, on a
    :class:`graphloom.Block`: per head, ``e = LeakyReLU(a_l . W h_src + a_r . W h_dst)`` on each
    in-edge, softmax over the destination's in-edges, and the attention-weighted sum of
    ``W h_src``. Returns ``[num_dst, num_heads, out_feats]``. Parameters carry DGL's names
    (``fc``, ``attn_l``, ``attn_r``, ``bias``, ``res_fc``).

    Args:
        in_feats, out_feats, num_heads: widths and heads.
        feat_drop, attn_drop: dropout on the inputs and on the attention weights.
        negative_slope: of the LeakyReLU.
        residual: add the destination's input (projected when the widths differ).
        activation: applied to the output.
        allow_zero_in_degree, bias: as :class:`GraphConv`.
    """

    def __init__(self, in_feats, out_feats, num_heads, feat_drop=0.0, attn_drop=0.0,
                 negative_slope=0.2, residual=False, activation=None,
                 allow_zero_in_degree=False, bias=True):
        super().__init__()
        self.num_heads, self.out_feats = num_heads, out_feats
        self.fc = torch.nn.Linear(in_feats, out_feats * num_heads, bias=False)
        self.attn_l = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = torch.nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop, self.attn_drop = torch.nn.Dropout(feat_drop), torch.nn.Dropout(attn_drop)
        self.leaky_relu = torch.nn.LeakyReLU(negative_slope)
        self.res_fc = None
        if residual:
            self.res_fc = (torch.nn.Identity() if in_feats == out_feats * num_heads else
                           torch.nn.Linear(in_feats, out_feats * num_heads, bias=False))
        self.bias = torch.nn.Parameter(torch.zeros(num_heads * out_feats)) if bias else None
        self.activation, self.allow_zero_in_degree = activation, allow_zero_in_degree
        for parameter in (self.fc.weight, self.attn_l, self.attn_r):
            torch.nn.init.xavier_normal_(parameter, gain=torch.nn.init.calculate_gain("relu"))

    def forward(self, block, feat):
        _in_edges_everywhere(block, self.allow_zero_in_degree)
        h_src, h_dst, prefix = _split_features(block, feat, self.feat_drop)
        z_src = self.fc(h_src).view(-1, self.num_heads, self.out_feats)
        z_dst = (z_src[: block.num_dst] if prefix else
                 self.fc(h_dst).view(-1, self.num_heads, self.out_feats))
        left = (z_src * self.attn_l).sum(-1)  # [num_src, heads]
        right = (z_dst * self.attn_r).sum(-1)  # [num_dst, heads]
        destinations = block.dst_positions()
        scores = self.leaky_relu(left[block.indices] + right[destinations])
        attention = self.attn_drop(edge_softmax(block, scores)).unsqueeze(-1)
        out = z_src.new_zeros(block.num_dst, self.num_heads, self.out_feats).index_add_(
            0, destinations, attention * z_src[block.indices])
        if self.res_fc is not None:
            out = out + self.res_fc(h_dst).view(block.num_dst, self.num_heads, self.out_feats)
        if self.bias is not None:
            out = out + self.bias.view(1, self.num_heads, self.out_feats)
        return out if self.activation is None else self.activation(out)


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
