"""What the loaders yield: Block (one layer of message passing, DGL's block), PairBatch (the
link-prediction pairs of a batch) and MiniBatch, with their conversions to PyG's ``Data`` and
to DGL's blocks."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import torch

from . import _check
from .errors import OptionError

__all__ = ["Block", "MiniBatch", "PairBatch"]


class Block:
    """One layer of message passing (DGL's block, a message-flow graph).

    The destination nodes are the first ``num_dst`` entries of ``src_ids``, so a layer's output
    rows line up with the next layer's inputs.

    Attributes:
        src_ids: int64 ``[num_src]`` global node ids, destination nodes first.
        num_dst: number of destination nodes.
        indptr: int64 ``[num_dst + 1]``: CSC over the destination nodes.
        indices: int64 ``[num_edges]``: each edge's source, as a position in ``src_ids``.
        edge_ids: int64 ``[num_edges]`` global edge ids.
        edge_types: int64 ``[num_edges]`` on typed graphs, else None.
        srcdata, dstdata: DGL's per-node data of the block's sources and destinations, as
            dicts: ``"_ID"`` (``dgl.NID``) holds the global ids; a loader's batch adds the
            input features to the first block's ``srcdata`` and the labels to the last
            block's ``dstdata`` (``blocks[0].srcdata["feat"]``, ``blocks[-1].dstdata["label"]``).
    """

    __slots__ = ("src_ids", "num_dst", "indptr", "indices", "edge_ids", "edge_types", "srcdata",
                 "dstdata")

    def __init__(self, impl):
        self.src_ids = impl.src_ids
        self.num_dst = impl.num_dst
        self.indptr = impl.indptr
        self.indices = impl.indices
        self.edge_ids = _check.optional_tensor(impl.edge_ids)
        self.edge_types = _check.optional_tensor(impl.edge_types)
        self.srcdata = {"_ID": self.src_ids}
        self.dstdata = {"_ID": self.dst_ids}

    def num_src_nodes(self):
        """DGL's name: the number of source nodes."""
        return self.num_src

    def num_dst_nodes(self):
        """DGL's name: the number of destination nodes."""
        return self.num_dst

    def edges(self):
        """DGL's ``block.edges()``: (source, destination) local ids of every edge, the source
        a position in ``src_ids``, the destination one in ``dst_ids``."""
        return self.indices, self.dst_positions()

    @property
    def num_src(self):
        return self.src_ids.numel()

    @property
    def num_edges(self):
        return self.indices.numel()

    @property
    def dst_ids(self):
        return self.src_ids[: self.num_dst]

    def dst_positions(self):
        """int64 ``[num_edges]``: each edge's destination, as a position in ``src_ids``."""
        return torch.repeat_interleave(torch.arange(self.num_dst, device=self.indptr.device),
                                       self.indptr.diff())

    def to(self, device, non_blocking=False):
        """This block with every tensor on ``device`` (DGL's ``block.to(device)``); a new
        Block, unless everything already lives there."""
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)
        moved = object.__new__(Block)
        moved.num_dst = self.num_dst
        for name in ("src_ids", "indptr", "indices", "edge_ids", "edge_types"):
            setattr(moved, name, move(getattr(self, name)))
        moved.srcdata = {name: move(value) for name, value in self.srcdata.items()}
        moved.dstdata = {name: move(value) for name, value in self.dstdata.items()}
        return moved

    def edge_index(self):
        """``[2, num_edges]`` local (source position, destination position) pairs, PyG's
        ``edge_index`` of a bipartite layer."""
        return torch.stack([self.indices, self.dst_positions()])

    def __repr__(self):
        return f"Block(num_src={self.num_src}, num_dst={self.num_dst}, num_edges={self.num_edges})"


class PairGraph:
    """DGL's ``pair_graph`` / ``neg_pair_graph`` of an edge-prediction batch: one edge per pair
    between the batch's output nodes (the last block's destinations), in local ids. Score a
    pair by the rows of its ends: ``src, dst = pair_graph.edges(); (h[src] * h[dst]).sum(1)``.
    """

    __slots__ = ("_src", "_dst", "_num_nodes")

    def __init__(self, src, dst, num_nodes):
        self._src, self._dst, self._num_nodes = src, dst, num_nodes

    def edges(self):
        """(source, destination) local ids of every pair."""
        return self._src, self._dst

    def num_nodes(self):
        return self._num_nodes

    def num_edges(self):
        return self._src.numel()

    def __repr__(self):
        return f"PairGraph(num_nodes={self._num_nodes}, num_edges={self.num_edges()})"


class PairBatch:
    """The node pairs of a link-prediction batch (items given as pairs) and their negatives.

    Attributes:
        src, dst: int64 ``[P]`` global ids of the positive pairs.
        negative_src, negative_dst: int64 ``[P * k]``: the negative pairs, ``k`` per positive,
            pair by pair. The sources are the positives' (``src.repeat_interleave(k)``) unless
            the negative sampler draws them too (:class:`~graphloom.negative_sampler.UniformPairs`).
        k: negatives per pair (0 without a negative sampler).
        input_id: int64 ``[P]``: each pair's position in the loader's items (PyG's
            ``input_id``), to look up per-pair data such as labels.
        src_index, dst_index: int64 ``[P]``; negative_src_index, negative_dst_index: int64
            ``[P * k]``: the positions of the ends among the batch's seeds (the last block's
            output rows).
    """

    def __init__(self, impl, num_seeds):
        self.src, self.dst = impl.src, impl.dst
        self.negative_src, self.negative_dst = impl.negative_src, impl.negative_dst
        self.input_id = _check.optional_tensor(impl.input_id)
        num_pairs, num_negatives = self.src.numel(), self.negative_dst.numel()
        self.k = num_negatives // max(num_pairs, 1)
        position = impl.position
        self.src_index = position[:num_pairs]
        self.dst_index = position[num_pairs: 2 * num_pairs]
        self.negative_dst_index = position[2 * num_pairs: 2 * num_pairs + num_negatives]
        drawn_sources = position[2 * num_pairs + num_negatives:]
        self.negative_src_index = (drawn_sources if drawn_sources.numel() else
                                   self.src_index.repeat_interleave(self.k))
        self._num_seeds = num_seeds

    @property
    def num_pairs(self):
        return self.src.numel()

    def pair_graph(self):
        """The positive pairs as DGL's ``pair_graph`` (local ids)."""
        return PairGraph(self.src_index, self.dst_index, self._num_seeds)

    def negative_pair_graph(self):
        """The negative pairs as DGL's ``neg_pair_graph`` (local ids)."""
        return PairGraph(self.negative_src_index, self.negative_dst_index, self._num_seeds)

    def edge_label_index(self):
        """PyG's binary ``edge_label_index``: ``[2, P + P * k]`` local ids, positives first."""
        return torch.stack([torch.cat([self.src_index, self.negative_src_index]),
                            torch.cat([self.dst_index, self.negative_dst_index])])

    def to(self, device, non_blocking=False):
        """These pairs with every tensor on ``device`` (a new PairBatch)."""
        moved = object.__new__(PairBatch)
        moved.__dict__.update({name: value.to(device, non_blocking=non_blocking)
                               if isinstance(value, torch.Tensor) else value
                               for name, value in self.__dict__.items()})
        return moved

    def __repr__(self):
        return f"PairBatch(num_pairs={self.num_pairs}, k={self.k})"


def exclude_pairs(blocks, src, dst, reverse, edge_dir="in"):
    """The blocks without their edges that join a pair ``(src[i], dst[i])`` (``reverse``: or
    ``(dst[i], src[i])``), matched by their end nodes: the seed edges a link predictor must not
    see (DGL's ``exclude="self"`` / ``"reverse_id"``, GraphBolt's ``exclude_seed_edges``)."""
    if not blocks or src.numel() == 0:
        return blocks
    base = int(torch.cat([src, dst, *[b.src_ids for b in blocks]]).max()) + 1
    keys = src * base + dst
    if reverse:
        keys = torch.cat([keys, dst * base + src])
    return [_without_keys(block, keys, base, edge_dir) for block in blocks]


def _without_keys(block, keys, base, edge_dir):
    sources, targets = block.src_ids[block.indices], block.src_ids[block.dst_positions()]
    if edge_dir == "out":  # the block's sources are the graph edges' destinations
        sources, targets = targets, sources
    keep = ~torch.isin(sources * base + targets, keys)
    if bool(keep.all()):
        return block
    kept = object.__new__(Block)
    kept.src_ids, kept.num_dst = block.src_ids, block.num_dst
    counts = torch.zeros(block.num_dst, dtype=torch.int64).index_add_(
        0, block.dst_positions(), keep.to(torch.int64))
    kept.indptr = torch.cat([block.indptr[:1], torch.cumsum(counts, 0)])
    kept.indices = block.indices[keep]
    kept.edge_ids = None if block.edge_ids is None else block.edge_ids[keep]
    kept.edge_types = None if block.edge_types is None else block.edge_types[keep]
    kept.srcdata, kept.dstdata = dict(block.srcdata), dict(block.dstdata)
    return kept


class MiniBatch:
    """A sampled mini-batch.

    Unpacks as DGL's loaders yield: ``input_nodes, output_nodes, blocks = batch`` (so
    ``for input_nodes, output_nodes, blocks in loader`` works); a link-prediction batch as DGL's
    edge-prediction loader yields: ``input_nodes, pair_graph, neg_pair_graph, blocks`` (without
    negatives: ``input_nodes, pair_graph, blocks``).

    Attributes:
        seeds: int64 ``[batch_size]`` the batch's seed nodes (a link-prediction batch: the
            pairs' distinct ends).
        pairs: the :class:`PairBatch` of a link-prediction batch, else None.
        blocks: list of :class:`Block`, input layer first; ``blocks[-1]`` produces the seeds.
        input_nodes: int64 global ids of the first block's sources.
        input_features: dict name -> rows of ``input_nodes`` (float32 after decoding).
        labels: rows of ``seeds`` of the dataset's labels, or None.
        sample_seconds, fetch_seconds: time the loader spent sampling and gathering.
    """

    def __init__(self, impl, label_rows=None):
        self.seeds = impl.seeds
        self.pairs = PairBatch(impl.pairs, self.seeds.numel()) if impl.pairs.defined else None
        self.blocks = [Block(b) for b in impl.blocks]
        self.input_nodes = impl.input_nodes
        self.input_features = dict(impl.features)
        labels = _check.optional_tensor(impl.labels)
        self._pyg = impl.pyg if impl.pyg.defined else None  # the workers' PyG layout
        # With the PyG layout the workers gathered every input node's labels (PyG's y); the
        # seeds lead the input nodes.
        self._all_labels = labels if self._pyg is not None else None
        self.labels = labels if labels is None else labels[: self.seeds.numel()]
        self.sample_seconds = impl.sample_seconds
        self.fetch_seconds = impl.fetch_seconds
        self._label_rows = label_rows  # node ids -> labels, for to_pyg()'s y
        if self.blocks:  # DGL's places for the same tensors
            self.blocks[0].srcdata.update(self.input_features)
            if self.labels is not None:
                self.blocks[-1].dstdata["label"] = self.labels

    def _replace_blocks(self, blocks):
        """Blocks changed after sampling (edges excluded): the workers' PyG layout is stale."""
        self.blocks, self._pyg = blocks, None

    def __iter__(self):
        if self.pairs is None:
            return iter((self.input_nodes, self.seeds, self.blocks))
        if self.pairs.k == 0:
            return iter((self.input_nodes, self.pairs.pair_graph(), self.blocks))
        return iter((self.input_nodes, self.pairs.pair_graph(), self.pairs.negative_pair_graph(),
                     self.blocks))

    @property
    def batch_size(self):
        return self.seeds.numel()

    def to(self, device, non_blocking=False):
        """This batch with its seeds, blocks, features and labels on ``device`` (a new
        MiniBatch; PyG's ``Data.to``, DGL's ``block.to``)."""
        moved = object.__new__(MiniBatch)
        moved.__dict__.update(self.__dict__)
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)
        moved.seeds = move(self.seeds)
        moved.blocks = [block.to(device, non_blocking) for block in self.blocks]
        moved.input_nodes = move(self.input_nodes)
        moved.input_features = {name: move(rows) for name, rows in self.input_features.items()}
        moved.labels = move(self.labels)
        if self.pairs is not None:
            moved.pairs = self.pairs.to(device, non_blocking)
        moved._pyg = None  # to_pyg() builds it again from the moved blocks
        moved._all_labels = move(self._all_labels)
        if moved.blocks:
            moved.blocks[0].srcdata.update(moved.input_features)
            if moved.labels is not None:
                moved.blocks[-1].dstdata["label"] = moved.labels
        return moved

    def num_sampled_nodes(self):
        """Nodes first reached at each hop, seeds first (PyG's ``num_sampled_nodes``)."""
        hops = [self.blocks[-1].num_dst] if self.blocks else [self.batch_size]
        for block in reversed(self.blocks):
            hops.append(block.num_src - block.num_dst)
        return hops

    def _pyg_edges(self):
        """(edge_index, edge_ids, num_sampled_nodes, num_sampled_edges) in PyG's layout: per hop
        k, the in-edges of the nodes first reached at hop k - 1, from the block that samples
        hop k (each node's in-edges sampled once, as in PyG). A block's destinations are in hop
        order, so those edges are the tail of its CSC. The loader's workers build this when
        asked (``pyg_edges=True``); otherwise it is built here."""
        if self._pyg is not None:
            pyg = self._pyg
            return (pyg.edge_index, _check.optional_tensor(pyg.edge_ids),
                    list(pyg.num_sampled_nodes), list(pyg.num_sampled_edges))
        hops = self.num_sampled_nodes()
        sources, targets, ids, counts = [], [], [], []
        first_new = 0
        for k, block in enumerate(reversed(self.blocks), start=1):
            first_edge = int(block.indptr[first_new])
            sources.append(block.indices[first_edge:])
            targets.append(torch.repeat_interleave(
                torch.arange(first_new, block.num_dst, device=block.indptr.device),
                block.indptr[first_new:].diff()))
            if block.edge_ids is not None:
                ids.append(block.edge_ids[first_edge:])
            counts.append(sources[-1].numel())
            first_new += hops[k - 1]
        edge_index = torch.stack([torch.cat(sources), torch.cat(targets)]) if sources else (
            torch.empty(2, 0, dtype=torch.int64))
        edge_ids = torch.cat(ids) if ids and len(ids) == len(sources) else None
        return edge_index, edge_ids, hops, counts

    def to_pyg(self, layout: Optional[torch.layout] = None) -> Any:
        """The batch as PyG's ``NeighborLoader`` yields it: a ``torch_geometric.data.Data`` with
        ``x`` (the ``feat`` rows, or the only feature), ``edge_index`` (local ids, source to
        target), ``y`` (labels of every node; train on the first ``batch_size``), ``n_id``,
        ``e_id``, ``batch_size``, ``num_sampled_nodes`` and ``num_sampled_edges``. Nodes are
        ordered by hop and so are edges, so ``trim_to_layer`` works.

        DGL's blocks resample a node in every layer it appears in; PyG samples each node's
        neighbors once, at the hop that reaches it first. The edges kept are those, so a PyG
        model sees PyG's semantics (a node the dropped resamples reached stays in ``n_id``,
        without in-edges).

        Args:
            layout: ``None`` for ``edge_index``. ``torch.sparse_csr`` for ``adj_t`` in its place,
                as PyG's ``ToSparseTensor(layout=torch.sparse_csr)`` makes it: the transposed
                adjacency (row = target, column = source, values 1) as a torch CSR tensor of
                ``num_nodes`` x ``num_nodes``. PyG convolutions that fuse message passing
                (``SAGEConv``, ``GCNConv``, ``GINConv``...) then run one sparse-dense product
                per layer instead of a message per edge. The edges are already in target
                order, so this costs no sort (``ToSparseTensor`` sorts).
        """
        try:
            from torch_geometric.data import Data
        except ImportError as error:
            raise ImportError("MiniBatch.to_pyg() needs torch_geometric (pip install "
                              "torch_geometric)") from error
        if layout not in (None, torch.sparse_csr):
            raise OptionError(f"to_pyg: layout must be None (edge_index) or torch.sparse_csr "
                              f"(adj_t), got {layout!r}", "layout")
        edge_index, edge_ids, hops, edge_counts = self._pyg_edges()
        num_nodes = self.input_nodes.numel()
        data = Data(n_id=self.input_nodes, batch_size=self.batch_size, num_sampled_nodes=hops,
                    num_sampled_edges=edge_counts, num_nodes=num_nodes)
        if layout is None:
            data.edge_index = edge_index
        else:
            data.adj_t = _csr_by_target(edge_index, num_nodes)
        features = self.input_features
        if "feat" in features or len(features) == 1:
            data.x = features.get("feat", next(iter(features.values()), None))
        for name, rows in features.items():
            if name != "feat" and len(features) > 1:
                data[name] = rows
        if self._all_labels is not None:
            data.y = self._all_labels
        elif self._label_rows is not None:
            data.y = self._label_rows(self.input_nodes)
        if edge_ids is not None:
            data.e_id = edge_ids
        if self.pairs is not None:  # LinkNeighborLoader's binary shape
            pairs = self.pairs
            data.edge_label_index = pairs.edge_label_index()
            data.edge_label = torch.cat([torch.ones(pairs.num_pairs),
                                         torch.zeros(pairs.num_pairs * pairs.k)])
            if pairs.input_id is not None:
                data.input_id = pairs.input_id
        return data

    def to_dgl(self):
        """The blocks as DGL blocks (``dgl.create_block``), ``srcdata``/``dstdata`` with
        ``dgl.NID``, ``edata`` with ``dgl.EID``; the first block's ``srcdata`` holds the input
        features and the last one's ``dstdata['label']`` the labels."""
        try:
            import dgl
        except ImportError as error:
            raise ImportError("MiniBatch.to_dgl() needs dgl") from error
        blocks = []
        for block in self.blocks:
            graph = dgl.create_block((block.indices, block.dst_positions()),
                                     num_src_nodes=block.num_src, num_dst_nodes=block.num_dst)
            graph.srcdata[dgl.NID] = block.src_ids
            graph.dstdata[dgl.NID] = block.dst_ids
            if block.edge_ids is not None:
                graph.edata[dgl.EID] = block.edge_ids
            blocks.append(graph)
        if blocks:
            blocks[0].srcdata.update(self.input_features)
            if self.labels is not None:
                blocks[-1].dstdata["label"] = self.labels
        return blocks

    def __repr__(self):
        return (f"MiniBatch(batch_size={self.batch_size}, blocks={self.blocks}, "
                f"input_features={ {k: list(v.shape) for k, v in self.input_features.items()} })")


def _csr_by_target(edge_index, num_nodes):
    """The transposed adjacency of `edge_index`, whose targets are in ascending order, as a
    torch CSR tensor: the row pointer is the targets' running count."""
    sources, targets = edge_index
    row_pointer = torch.zeros(num_nodes + 1, dtype=torch.int64)
    torch.cumsum(torch.bincount(targets, minlength=num_nodes), 0, out=row_pointer[1:])
    with warnings.catch_warnings():  # torch's "sparse CSR support is in beta", per batch
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(row_pointer, sources, torch.ones(sources.numel()),
                                       size=(num_nodes, num_nodes), check_invariants=False)
