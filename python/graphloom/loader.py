"""The mini-batch pipeline from Python: items -> neighbor sampling -> feature and label fetch,
run by graphloom's C++ threads ahead of the consumer (DGL's ``DataLoader``, PyG's
``NeighborLoader``). Batches convert to PyG's ``Data`` and to DGL's blocks."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Optional

import torch

from . import _C, _check
from .data import Dataset
from .errors import OptionError
from .sampling import NeighborSampler

__all__ = ["Block", "MiniBatch", "DataLoader"]


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


class MiniBatch:
    """A sampled mini-batch.

    Unpacks as DGL's loaders yield: ``input_nodes, output_nodes, blocks = batch`` (so
    ``for input_nodes, output_nodes, blocks in loader`` works).

    Attributes:
        seeds: int64 ``[batch_size]`` the batch's seed nodes.
        blocks: list of :class:`Block`, input layer first; ``blocks[-1]`` produces the seeds.
        input_nodes: int64 global ids of the first block's sources.
        input_features: dict name -> rows of ``input_nodes`` (float32 after decoding).
        labels: rows of ``seeds`` of the dataset's labels, or None.
        sample_seconds, fetch_seconds: time the loader spent sampling and gathering.
    """

    def __init__(self, impl, label_rows=None):
        self.seeds = impl.seeds
        self.blocks = [Block(b) for b in impl.blocks]
        self.input_nodes = impl.input_nodes
        self.input_features = dict(impl.features)
        self.labels = _check.optional_tensor(impl.labels)
        self.sample_seconds = impl.sample_seconds
        self.fetch_seconds = impl.fetch_seconds
        self._label_rows = label_rows  # node ids -> labels, for to_pyg()'s y
        if self.blocks:  # DGL's places for the same tensors
            self.blocks[0].srcdata.update(self.input_features)
            if self.labels is not None:
                self.blocks[-1].dstdata["label"] = self.labels

    def __iter__(self):
        return iter((self.input_nodes, self.seeds, self.blocks))

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

    def _pyg_edges(self, hops):
        """Per hop k, the edges into the nodes first reached at hop k - 1, from the block that
        samples hop k; each node's in-edges are then sampled once, as in PyG."""
        sources, targets, ids, counts = [], [], [], []
        first_new = 0
        for k, block in enumerate(reversed(self.blocks), start=1):
            destinations = block.dst_positions()
            keep = destinations >= first_new
            sources.append(block.indices[keep])
            targets.append(destinations[keep])
            if block.edge_ids is not None:
                ids.append(block.edge_ids[keep])
            counts.append(int(keep.sum()))
            first_new += hops[k - 1]
        edge_index = torch.stack([torch.cat(sources), torch.cat(targets)]) if sources else (
            torch.empty(2, 0, dtype=torch.int64))
        edge_ids = torch.cat(ids) if ids and len(ids) == len(sources) else None
        return edge_index, edge_ids, counts

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
        hops = self.num_sampled_nodes()
        edge_index, edge_ids, edge_counts = self._pyg_edges(hops)
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
        if self._label_rows is not None:
            data.y = self._label_rows(self.input_nodes)
        if edge_ids is not None:
            data.e_id = edge_ids
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


def _to_device(batch, device):
    """The batch on a CUDA device, copied from pinned memory so that the copies overlap."""
    pinned = batch.to("cpu")
    for name in ("seeds", "input_nodes", "labels"):
        value = getattr(pinned, name)
        if value is not None:
            setattr(pinned, name, value.pin_memory())
    pinned.input_features = {k: v.pin_memory() for k, v in pinned.input_features.items()}
    return pinned.to(device, non_blocking=True)


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


def _default_seed(seed, world_size):
    """`seed`, or one drawn from torch's default generator (rank 0's, under torch.distributed
    with several ranks: the item split needs one permutation on every rank)."""
    if seed is not None:
        return _check.non_negative("seed", seed)
    drawn = torch.randint(0, 2**62, (1,), dtype=torch.int64)
    if world_size > 1:
        if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
            return 0  # nothing to agree through: a fixed seed keeps the ranks' shares disjoint
        torch.distributed.broadcast(drawn, src=0)
    return int(drawn.item())


def _default_rank_and_world_size(rank, world_size):
    if rank is not None and world_size is not None:
        return rank, world_size
    if rank is not None or world_size is not None:
        raise OptionError("rank and world_size go together: give both or neither", "rank")
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class DataLoader:
    """Mini-batches of sampled blocks with their features and labels, prepared by C++ threads
    ahead of the consumer (the GIL is released while they work).

    Args:
        source: the :class:`Dataset` or :class:`graphloom.distributed.DistGraph` whose
            features and labels are gathered.
        items: the seed nodes: int64 ids or a boolean mask over the nodes (e.g.
            ``dataset.splits["train"]``).
        sampler: a :class:`NeighborSampler` over the dataset's graph.
        batch_size: seeds per batch.
        shuffle: a new permutation of the items every epoch.
        drop_last: drop the last, smaller batch.
        features: names of the node features gathered for the input nodes; () for none.
        labels: gather the seeds' labels (the dataset must have labels).
        num_workers: batches prepared concurrently, each by a C++ thread of this process (0,
            DGL's and PyG's "in the main process", means one: graphloom's workers are threads
            that release the GIL, never processes).
        prefetch: most batches prepared ahead of the consumer (at least num_workers).
        seed: random seed of the shuffle and of the sampler. Default: drawn from torch's
            default generator, so ``torch.manual_seed`` makes runs repeat and different seeds
            make them differ (as in DGL and PyG); under torch.distributed, rank 0's draw is
            broadcast, so that every rank splits the same permutation of the items (with
            ``world_size > 1`` and no process group, 0, for the same reason).
        rank, world_size: this trainer's share of the items, as DGL's and GraphBolt's
            distributed item samplers split them (default: torch.distributed's rank and world
            size when it is initialized, else 0 and 1; on a DistGraph 0 and 1, since
            ``node_split`` already gave each trainer its share).
        device: where the batches are delivered (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a
            ``torch.device``; default: the CPU, where they are prepared). On a CUDA device each
            batch is pinned and copied without blocking (GraphBolt's ``copy_to``).

    ``len(loader)`` is the number of batches per epoch; each iteration runs the next epoch.
    Leaving an epoch early (``break``, an exception, Ctrl-C) stops the threads; so does
    garbage collection of the loader.
    """

    def __init__(self, source: Any, items: Any, sampler: NeighborSampler, batch_size: int,
                 shuffle: bool = False, drop_last: bool = False,
                 features: Sequence[str] = ("feat",), labels: bool = True,
                 num_workers: int = 1, prefetch: int = 2, seed: Optional[int] = None,
                 rank: Optional[int] = None, world_size: Optional[int] = None,
                 device: Any = None):
        from .distributed import DistGraph

        self.device = _check.device("device", device)
        if isinstance(source, Dataset):
            num_nodes = source.num_nodes()
            has_feature = source.node_features.__contains__
            has_labels = source.labels is not None
            labels_table = source.labels
            label_rows = (lambda ids: labels_table[ids]) if has_labels else None
        elif isinstance(source, DistGraph):
            num_nodes = source.num_nodes()
            has_feature = source._impl.has
            has_labels = source._impl.has("label")
            label_rows = (lambda ids: source._impl.pull("label", ids)) if has_labels else None
        else:
            raise OptionError(f"source must be a graphloom Dataset or DistGraph, got "
                              f"{type(source).__name__}", "source")
        if not isinstance(sampler, NeighborSampler):
            raise OptionError(f"sampler must be a graphloom NeighborSampler, got "
                              f"{type(sampler).__name__}", "sampler")
        if sampler.num_nodes != num_nodes:
            raise OptionError(f"sampler's graph has {sampler.num_nodes} nodes, the source "
                              f"{num_nodes}", "sampler")
        if isinstance(features, str):
            features = (features,)
        missing = [name for name in features if not has_feature(name)]
        if missing:
            known = sorted(source.node_features) if isinstance(source, Dataset) else "others"
            raise OptionError(f"features: the source has no feature {missing[0]!r} (it has "
                              f"{known or 'none'}; pass features=() for none)", "features")
        if labels and not has_labels:
            raise OptionError("labels=True, but the dataset has no labels (pass labels=False)",
                              "labels")
        if isinstance(source, DistGraph) and rank is None and world_size is None:
            rank, world_size = 0, 1  # node_split already gave this trainer its share
        rank, world_size = _default_rank_and_world_size(rank, world_size)
        seed = _default_seed(seed, world_size)
        item_options = _C.ItemSamplerOptions()
        item_options.batch_size = _check.positive("batch_size", batch_size)
        item_options.shuffle = bool(shuffle)
        item_options.drop_last = bool(drop_last)
        item_options.rank = rank
        item_options.world_size = world_size
        item_options.seed = seed
        options = _C.DataLoaderOptions()
        options.num_workers = 1 if num_workers == 0 else num_workers
        options.prefetch = prefetch
        options.feature_names = list(features)
        options.label_name = "label" if labels else ""
        self.items = _check.node_ids("items", items, num_nodes)
        self.sampler = sampler
        self._label_rows = label_rows if labels else None
        self._impl = _C.DataLoader(sampler._handle(seed), source._impl, self.items, item_options,
                                   options)
        self._epoch = 0

    def __len__(self) -> int:
        return self._impl.num_batches

    def __iter__(self) -> Iterator[MiniBatch]:
        epoch = self._epoch
        self._epoch += 1
        self._impl.start_epoch(epoch)
        try:
            while True:
                batch = self._impl.next()
                if batch is None:
                    return
                batch = MiniBatch(batch, self._label_rows)
                yield batch if self.device.type == "cpu" else _to_device(batch, self.device)
        finally:
            self._impl.cancel()
