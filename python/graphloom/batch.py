"""What the loaders yield: Block (one layer of message passing, DGL's block) and MiniBatch,
with their conversions to PyG's ``Data`` / ``HeteroData`` and to DGL's blocks."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import torch

from . import _check
from .errors import OptionError
from .pairs import PairBatch

__all__ = ["Block", "MiniBatch"]


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
        src_times: temporal batches: int64 ``[num_src]``, the time each source was sampled at
            (its seed's; a node reached at two times is two sources), else None.
        edge_weights: LABOR-* batches (``importance_sampling``): float32 ``[num_edges]``
            importance weights, scaled to sum to each destination's edge count (per edge type),
            so that a mean weighted by them is the paper's estimator; else None.
        edata: DGL's per-edge data: ``"_ID"`` the edge ids and ``"edge_weights"`` (DGL's
            LaborSampler name) the importance weights, where the batch has them.
        srcdata, dstdata: DGL's per-node data of the block's sources and destinations, as
            dicts: ``"_ID"`` (``dgl.NID``) holds the global ids; a loader's batch adds the
            input features to the first block's ``srcdata`` and the labels to the last
            block's ``dstdata`` (``blocks[0].srcdata["feat"]``, ``blocks[-1].dstdata["label"]``).
    """

    __slots__ = ("src_ids", "num_dst", "indptr", "indices", "edge_ids", "edge_types", "src_times",
                 "edge_weights", "srcdata", "dstdata", "edata")
    _TENSORS = ("src_ids", "indptr", "indices", "edge_ids", "edge_types", "src_times",
                "edge_weights")

    def __init__(self, impl):
        self.src_ids = impl.src_ids
        self.num_dst = impl.num_dst
        self.indptr = impl.indptr
        self.indices = impl.indices
        self.edge_ids = _check.optional_tensor(impl.edge_ids)
        self.edge_types = _check.optional_tensor(impl.edge_types)
        self.src_times = _check.optional_tensor(impl.src_times)
        self.edge_weights = _check.optional_tensor(impl.edge_weights)
        self.srcdata = {"_ID": self.src_ids}
        self.dstdata = {"_ID": self.dst_ids}
        self.edata = self._edge_data()

    def _edge_data(self):
        """DGL's ``edata`` of the edge attributes this block has (the same tensors)."""
        return {name: value for name, value in (("_ID", self.edge_ids),
                                                ("edge_weights", self.edge_weights))
                if value is not None}

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
        for name in self._TENSORS:
            setattr(moved, name, move(getattr(self, name)))
        moved.srcdata = {name: move(value) for name, value in self.srcdata.items()}
        moved.dstdata = {name: move(value) for name, value in self.dstdata.items()}
        moved.edata = moved._edge_data()
        return moved

    def edge_index(self):
        """``[2, num_edges]`` local (source position, destination position) pairs, PyG's
        ``edge_index`` of a bipartite layer."""
        return torch.stack([self.indices, self.dst_positions()])

    def __repr__(self):
        return f"Block(num_src={self.num_src}, num_dst={self.num_dst}, num_edges={self.num_edges})"


class MiniBatch:
    """A sampled mini-batch.

    Unpacks as DGL's loaders yield: ``input_nodes, output_nodes, blocks = batch`` (so
    ``for input_nodes, output_nodes, blocks in loader`` works); a link-prediction batch as DGL's
    edge-prediction loader yields: ``input_nodes, pair_graph, neg_pair_graph, blocks`` (without
    negatives: ``input_nodes, pair_graph, blocks``).

    Attributes:
        seeds: int64 ``[batch_size]`` the batch's seed nodes (a link-prediction batch: the
            pairs' distinct ends).
        seed_times: int64 ``[batch_size]`` the seeds' times in a temporal batch, else None.
        pairs: the :class:`PairBatch` of a link-prediction batch, else None.
        blocks: list of :class:`Block`, input layer first; ``blocks[-1]`` produces the seeds.
        input_nodes: int64 global ids of the first block's sources.
        input_features: dict name -> rows of ``input_nodes`` (float32 after decoding).
        labels: rows of ``seeds`` of the dataset's labels, or None.
        sample_seconds, fetch_seconds: time the loader spent sampling and gathering.
    """

    def __init__(self, impl, label_rows=None, schema=None):
        self.seeds = impl.seeds
        self.seed_times = _check.optional_tensor(impl.seed_times)
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
        self._schema = schema  # a typed graph's types: to_pyg() makes a HeteroData
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
        moved.seed_times = move(self.seed_times)
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

    def _pyg_tails(self):
        """Per hop k, the block that samples it and where its PyG edges start: the in-edges of
        the nodes first reached at hop k - 1 (each node's in-edges sampled once, as in PyG).
        A block's destinations are in hop order, so those edges are the tail of its CSC."""
        hops, first_new, tails = self.num_sampled_nodes(), 0, []
        for k, block in enumerate(reversed(self.blocks)):
            tails.append((block, first_new, int(block.indptr[first_new])))
            first_new += hops[k]
        return tails

    def _pyg_edge_attribute(self, name):
        """A per-edge attribute of the blocks (``edge_ids``, ``edge_types``) in PyG's edge
        order, or None where a block lacks it."""
        tails = [(getattr(block, name), first_edge) for block, _, first_edge in self._pyg_tails()]
        if not tails or any(part is None for part, _ in tails):
            return None
        return torch.cat([part[first_edge:] for part, first_edge in tails])

    def _pyg_edges(self):
        """(edge_index, edge_ids, num_sampled_nodes, num_sampled_edges) in PyG's layout, from
        the loader's workers when they built it (``pyg_edges=True``), else built here."""
        if self._pyg is not None:
            pyg = self._pyg
            return (pyg.edge_index, _check.optional_tensor(pyg.edge_ids),
                    list(pyg.num_sampled_nodes), list(pyg.num_sampled_edges))
        sources, targets = [], []
        for block, first_new, first_edge in self._pyg_tails():
            sources.append(block.indices[first_edge:])
            targets.append(torch.repeat_interleave(
                torch.arange(first_new, block.num_dst, device=block.indptr.device),
                block.indptr[first_new:].diff()))
        edge_index = torch.stack([torch.cat(sources), torch.cat(targets)]) if sources else (
            torch.empty(2, 0, dtype=torch.int64))
        return (edge_index, self._pyg_edge_attribute("edge_ids"), self.num_sampled_nodes(),
                [part.numel() for part in sources])

    def _labels_of_input_nodes(self):
        """PyG's ``y``: the labels of every input node, or None."""
        if self._all_labels is not None:
            return self._all_labels
        return None if self._label_rows is None else self._label_rows(self.input_nodes)

    def to_pyg(self, layout: Optional[torch.layout] = None) -> Any:
        """The batch as PyG's ``NeighborLoader`` yields it: a ``torch_geometric.data.Data`` with
        ``x`` (the ``feat`` rows, or the only feature), ``edge_index`` (local ids, source to
        target), ``y`` (labels of every node; train on the first ``batch_size``), ``n_id``,
        ``e_id``, ``batch_size``, ``num_sampled_nodes`` and ``num_sampled_edges``. Nodes are
        ordered by hop and so are edges, so ``trim_to_layer`` works. A typed graph's batch is
        a ``HeteroData`` with PyG's node and edge type names (see :mod:`graphloom.hetero`).

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
        if self._schema is not None:
            if layout is not None:
                raise OptionError("to_pyg: a typed graph's batch is a HeteroData of "
                                  "edge_index per edge type (layout=None)", "layout")
            from .hetero import to_hetero_data

            return to_hetero_data(self, self._schema)
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
        labels = self._labels_of_input_nodes()
        if labels is not None:
            data.y = labels
        if edge_ids is not None:
            data.e_id = edge_ids
        if self.seed_times is not None and self.pairs is None:  # PyG's temporal node batches
            data.seed_time = self.seed_times
        if self.pairs is not None:  # LinkNeighborLoader's binary shape
            pairs = self.pairs
            data.edge_label_index = pairs.edge_label_index()
            data.edge_label = torch.cat([torch.ones(pairs.num_pairs),
                                         torch.zeros(pairs.num_pairs * pairs.k)])
            if pairs.input_id is not None:
                data.input_id = pairs.input_id
            if pairs.time is not None:  # temporal pairs
                data.edge_label_time = pairs.edge_label_time()
        return data

    def to_dgl(self):
        """The blocks as DGL blocks (``dgl.create_block``), ``srcdata``/``dstdata`` with
        ``dgl.NID``, ``edata`` with ``dgl.EID`` (and LABOR-*'s ``"edge_weights"``); the first block's ``srcdata`` holds the input
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
            if block.edge_weights is not None:  # LABOR-*'s, as DGL's LaborSampler names them
                graph.edata["edge_weights"] = block.edge_weights
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
