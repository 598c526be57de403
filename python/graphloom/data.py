"""Datasets and graphs: load and save graphloom's dataset directory, convert other layouts into
it, and partition it, with the same library calls as the CLI's commands."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import torch

from . import _C, _check
from .errors import OptionError

__all__ = ["CSCGraph", "Dataset", "load_dataset", "save_dataset", "convert", "partition"]

PathLike = Union[str, "os.PathLike[str]"]
TensorLike = Union[torch.Tensor, Sequence, Any]  # a tensor, a NumPy array or a sequence


class CSCGraph:
    """A graph in compressed sparse column form: the in-edges of node ``v`` are positions
    ``indptr[v]`` to ``indptr[v + 1] - 1``, and ``indices`` holds their source nodes (DGL's
    and GraphBolt's CSC; PyG's ``edge_index[0]`` sorted by ``edge_index[1]``).

    Args:
        indptr: integer tensor ``[num_nodes + 1]``, non-decreasing, starting at 0.
        indices: integer tensor ``[num_edges]`` of source node ids in ``[0, num_nodes)``.
        edge_ids: optional integer tensor ``[num_edges]``: the id of each edge in the original
            edge list (default: its CSC position).
        weights: optional float tensor ``[num_edges]``: edge weights, for weighted sampling.

    The tensors are shared, not copied, except when their dtype is converted (indptr and
    edge_ids to int64; indices keep int32 or int64).
    """

    def __init__(self, indptr: TensorLike, indices: TensorLike,
                 edge_ids: Optional[TensorLike] = None, weights: Optional[TensorLike] = None):
        indptr = _check.integer_tensor("indptr", indptr, dim=1)
        indices = _check.as_tensor("indices", indices)
        if indices.dtype not in (torch.int32, torch.int64):
            indices = _check.integer_tensor("indices", indices, dim=1)
        if edge_ids is not None:
            edge_ids = _check.integer_tensor("edge_ids", edge_ids, dim=1)
        if weights is not None:
            weights = _check.float_tensor("weights", weights, length=indices.numel())
        self._impl = _C.CscGraph(indptr, indices.contiguous(), edge_ids, weights)
        self._dataset = None

    @classmethod
    def _wrap(cls, impl, dataset=None):
        graph = cls.__new__(cls)
        graph._impl = impl
        graph._dataset = dataset  # the typed graph's schema, for per-edge-type fanouts
        return graph

    @property
    def indptr(self):
        """int64 ``[num_nodes + 1]``."""
        return self._impl.indptr

    @property
    def indices(self):
        """int32 (fewer than 2^31 nodes) or int64 ``[num_edges]``: source of each in-edge."""
        return self._impl.indices

    @property
    def edge_ids(self):
        """int64 ``[num_edges]`` original edge ids, or None (the id is the CSC position)."""
        return _check.optional_tensor(self._impl.edge_ids)

    @property
    def weights(self):
        """float ``[num_edges]`` edge weights in CSC order, or None."""
        return _check.optional_tensor(self._impl.weights)

    @property
    def edge_time(self):
        """int64 ``[num_edges]`` time of each edge in CSC order (the dataset's
        ``edge_timestamp``), or None."""
        return _check.optional_tensor(self._impl.edge_time)

    def num_nodes(self):
        """The number of nodes (a method, as DGL's graphs and :class:`DistGraph` spell it)."""
        return self._impl.num_nodes

    number_of_nodes = num_nodes

    def num_edges(self):
        """The number of edges."""
        return self._impl.num_edges

    number_of_edges = num_edges

    def in_degrees(self):
        """int64 ``[num_nodes]``."""
        return self._impl.in_degrees()

    def out_degrees(self):
        """int64 ``[num_nodes]``."""
        return self._impl.out_degrees()

    def edge_index(self):
        """The edges as PyG's ``edge_index``: int64 ``[2, num_edges]``, sources first, in CSC
        order."""
        return torch.stack([self.indices.to(torch.int64), self._impl.destinations()])

    def __repr__(self):
        return f"CSCGraph(num_nodes={self.num_nodes()}, num_edges={self.num_edges()})"


class Dataset:
    """A graphloom dataset directory, loaded by :func:`load_dataset`.

    Attributes:
        graph: the :class:`CSCGraph`.
        node_features: dict of name -> tensor ``[num_nodes, ...]`` as stored (memory-mapped,
            not copied). Features stored encoded (``convert --feature-dtype int8``) have a row
            scale in ``node_feature_scales``; the DataLoader decodes them per batch.
        labels: int64 ``[num_nodes]`` (-1 = unlabeled), or None.
        num_classes: number of label classes (0 without labels).
        splits: dict ``train`` / ``valid`` / ``test`` (and others) -> int64 node ids.
        edge_splits: link prediction: dict split -> int64 ``[M, 2]`` node pairs.
        node_types, edge_types: the type names of a typed graph (empty lists otherwise).
        node_timestamp: int64 ``[num_nodes]`` time of each node, or None (edge times are
            ``graph.edge_time``); what temporal sampling reads.

    Loaded with ``feature_storage="disk"``, loaders read ``feat`` from its file on each batch
    (through the cache asked for); :meth:`feature_counters` says how much they read.
    """

    def __init__(self, impl, disk_rows=None):
        self._impl = impl
        # What loaders gather from: the tables as loaded, or "feat" read from disk.
        self._rows = impl if disk_rows is None else disk_rows
        self._disk_rows = disk_rows
        self.graph = CSCGraph._wrap(impl.graph, impl)
        self.node_features = dict(impl.node_features)
        self.node_feature_scales = dict(impl.node_feature_scales)
        self.labels = _check.optional_tensor(impl.labels)
        self.node_timestamp = _check.optional_tensor(impl.node_timestamp)
        self.num_classes = impl.num_classes
        self.splits = dict(impl.splits)
        self.edge_splits = dict(impl.edge_splits)
        self.node_types = list(impl.node_types)
        self.edge_types = list(impl.edge_types)
        self._ndata = None

    @property
    def name(self):
        return self._impl.name

    def num_nodes(self):
        """The number of nodes (a method, as DGL's graphs and :class:`DistGraph` spell it)."""
        return self._impl.num_nodes

    number_of_nodes = num_nodes

    def num_edges(self):
        """The number of edges."""
        return self.graph.num_edges()

    # The graph-source interface that DataLoader, the samplers and graphloom.pyg read, shared
    # with DistGraph: no caller switches on the source's type.
    _items_split = False  # a trainer takes its share of the items by rank in the loader

    def feature_names(self):
        """The names of the node features (``feat`` ...)."""
        return list(self.node_features)

    def has_labels(self):
        return self.labels is not None

    def label_rows(self, ids):
        """The labels of ``ids``."""
        return self.labels[ids]

    def feature_counters(self):
        """With ``feature_storage="disk"``, what loaders read since the last call: a dict with
        ``disk_bytes`` and, with a cache, ``cache_hits`` and ``cache_misses`` (rows); an empty
        dict for tables in memory or mapped."""
        return {} if self._disk_rows is None else dict(self._disk_rows.take_counters())

    def schema(self):
        """The types of a typed dataset (:class:`graphloom.hetero.Schema`), else None."""
        from .hetero import Schema

        return Schema.of(self)

    @property
    def ndata(self):
        """DGL's ``g.ndata``: the node features (as stored), ``"label"``, and ``train_mask`` /
        ``val_mask`` / ``test_mask`` for the train / valid / test splits, so DGL code that reads
        ``g.ndata["feat"][input_nodes]`` runs. Built once, on first use."""
        if self._ndata is None:
            ndata = dict(self.node_features)
            if self.labels is not None:
                ndata["label"] = self.labels
            for split, mask_name in (("train", "train_mask"), ("valid", "val_mask"),
                                     ("test", "test_mask")):
                if split in self.splits:
                    mask = torch.zeros(self.num_nodes(), dtype=torch.bool)
                    mask[self.splits[split]] = True
                    ndata[mask_name] = mask
            self._ndata = ndata
        return self._ndata

    number_of_edges = num_edges

    def __repr__(self):
        features = {name: list(t.shape) for name, t in self.node_features.items()}
        return (f"Dataset(name={self.name!r}, num_nodes={self.num_nodes()}, "
                f"num_edges={self.num_edges()}, node_features={features}, "
                f"num_classes={self.num_classes}, splits={sorted(self.splits)})")


def load_dataset(path: PathLike, memory_map: bool = True, strict: bool = False,
                 tables_in_memory: bool = False, feature_storage: Optional[str] = None,
                 cache_policy: Optional[str] = None, cache_size: Any = 0) -> Dataset:
    """Loads a graphloom dataset directory (``metadata.json`` plus ``.npy`` arrays).

    Args:
        path: the directory (what ``graphloom convert`` or :func:`save_dataset` wrote).
        memory_map: map the arrays instead of reading them (no copy; pages load on use).
        strict: treat unknown keys of metadata.json as errors.
        tables_in_memory: read the arrays sampling and gathering read at random (indptr,
            indices, the feature tables) into memory on huge pages when they fit in half the
            memory available, even with memory_map: random reads on a file's 4 KB pages miss
            the TLB (``graphloom bench gather``). Best for one process per machine; several
            trainers on one machine share the page cache better when mapped.
        feature_storage: where loaders read ``feat`` from (the CLI's ``--feature-storage``):
            None (as ``memory_map`` and ``tables_in_memory`` say), ``"memory"`` (read into
            memory), ``"mmap"`` (mapped) or ``"disk"``: read from its ``.npy`` file on each
            batch (io_uring, O_DIRECT: a table larger than memory does not fill the page
            cache), for float32 features as stored. GraphBolt's ``DiskBasedFeature``.
        cache_policy: with ``"disk"``: a cache of hot ``feat`` rows in front of the reads:
            ``"sieve"``, ``"s3-fifo"``, ``"lru"``, ``"clock"`` or ``"degree"`` (the rows the
            graph refers to most); None: no cache. GraphBolt's ``CPUCachedFeature``.
        cache_size: the cache's bytes: an integer or a size such as ``"256M"``.

    Raises:
        MissingFileError: the directory or a file it names does not exist.
        Error: a malformed file, named with what was expected.
    """
    storage = _check.choice("feature_storage", feature_storage, (None, "memory", "mmap", "disk"))
    cache_bytes = _check.byte_size("cache_size", cache_size)
    if cache_policy is not None and storage != "disk":
        raise OptionError("cache_policy caches the rows feature_storage='disk' reads",
                          "cache_policy")
    if cache_policy is not None and cache_bytes == 0:
        raise OptionError(f"cache_policy={cache_policy!r} needs a cache_size", "cache_size")
    if storage is not None:
        memory_map, tables_in_memory = storage != "memory", storage == "memory"
    impl = _C.load_dataset(_check.path("path", path), bool(memory_map), bool(strict),
                           bool(tables_in_memory))
    if storage != "disk":
        return Dataset(impl)
    return Dataset(impl, _C.DiskDatasetRows(impl, cache_policy or "none", cache_bytes))


def _node_tensor_dict(name, value, num_nodes, default_key):
    if value is None:
        return {}
    if isinstance(value, torch.Tensor):
        value = {default_key: value}
    if not isinstance(value, dict):
        raise OptionError(f"{name} must be a tensor or a dict of name -> tensor", name)
    out = {}
    for key, tensor in value.items():
        tensor = _check.as_tensor(f"{name}[{key!r}]", tensor)
        if tensor.dim() < 1 or tensor.shape[0] != num_nodes:
            raise OptionError(f"{name}[{key!r}] must have one row per node ({num_nodes}), got "
                              f"shape {list(tensor.shape)}", name)
        out[key] = tensor.contiguous()
    return out


def save_dataset(path: PathLike, edge_index: TensorLike, num_nodes: int,
                 node_features: Union[TensorLike, Mapping[str, TensorLike], None] = None,
                 labels: Optional[TensorLike] = None,
                 splits: Optional[Mapping[str, TensorLike]] = None,
                 num_classes: Optional[int] = None,
                 edge_splits: Optional[Mapping[str, TensorLike]] = None,
                 edge_weights: Optional[TensorLike] = None, name: Optional[str] = None,
                 directed: bool = True, overwrite: bool = False,
                 node_timestamp: Optional[TensorLike] = None,
                 edge_timestamp: Optional[TensorLike] = None) -> None:
    """Writes a graphloom dataset directory from torch tensors (PyG's layout).

    Args:
        path: the directory to write; it appears only when complete.
        edge_index: integer ``[2, num_edges]``, source row first (as PyG's ``edge_index``).
        num_nodes: the number of nodes (ids in ``[0, num_nodes)``).
        node_features: a tensor ``[num_nodes, dim]`` (stored as ``feat``) or a dict of name ->
            tensor.
        labels: integer ``[num_nodes]``, -1 for unlabeled nodes.
        splits: dict ``train`` / ``valid`` / ``test`` -> node ids or boolean masks.
        num_classes: default ``labels.max() + 1``.
        edge_splits: link prediction: dict split -> integer ``[M, 2]`` node pairs.
        edge_weights: optional float ``[num_edges]``, in edge_index order.
        name: the dataset's name (default: the directory's name).
        directed: False when edge_index lists both directions of every edge.
        overwrite: replace an existing directory.
        node_timestamp: optional integer ``[num_nodes]``: each node's time, for temporal
            sampling (``NeighborSampler(node_time=True)``).
        edge_timestamp: optional integer ``[num_edges]``, in edge_index order: each edge's time.
    """
    path = _check.output_path("path", path, overwrite)
    num_nodes = _check.positive("num_nodes", num_nodes)
    edges = _check.integer_tensor("edge_index", edge_index, dim=2)
    if edges.shape[0] != 2:
        raise OptionError(f"edge_index must have shape [2, num_edges], got {list(edges.shape)}",
                          "edge_index")
    _check.node_ids("edge_index", edges.flatten(), num_nodes)
    parts = _C.DatasetParts()
    parts.name = name or os.path.basename(os.path.normpath(path))
    parts.directed = bool(directed)
    parts.edge_index = edges
    parts.num_nodes = num_nodes
    if edge_weights is not None:
        parts.edge_weights = _check.float_tensor("edge_weights", edge_weights, edges.shape[1])
    parts.node_features = _node_tensor_dict("node_features", node_features, num_nodes, "feat")
    if node_timestamp is not None:
        parts.node_timestamp = _check.times("node_timestamp", node_timestamp, num_nodes)
    if edge_timestamp is not None:
        parts.edge_timestamp = _check.times("edge_timestamp", edge_timestamp, edges.shape[1])
    if labels is not None:
        labels = _check.integer_tensor("labels", labels, dim=1)
        if labels.numel() != num_nodes:
            raise OptionError(f"labels must have one entry per node ({num_nodes}), got "
                              f"{labels.numel()}", "labels")
        parts.labels = labels
        parts.num_classes = int(num_classes if num_classes is not None else labels.max() + 1)
    parts.splits = {key: _check.node_ids(f"splits[{key!r}]", ids, num_nodes)
                    for key, ids in (splits or {}).items()}
    pairs = {}
    for key, value in (edge_splits or {}).items():
        tensor = _check.integer_tensor(f"edge_splits[{key!r}]", value, dim=2)
        _check.node_ids(f"edge_splits[{key!r}]", tensor.flatten(), num_nodes)
        pairs[key] = tensor
    parts.edge_splits = pairs
    _C.save_dataset(parts, path, bool(overwrite))


def convert(source: PathLike, out: PathLike, source_format: str = "graphloom", *,
            split: int = 0, split_scheme: str = "", delimiter: Optional[str] = None,
            header: bool = False, weighted: bool = False, num_nodes: int = -1,
            bidirected: bool = False, self_loops: str = "keep", feature_dtype: str = "keep",
            link_split: Optional[Sequence[float]] = None, seed: int = 0,
            rating_split: str = "temporal", overwrite: bool = False) -> None:
    """Imports another layout as a dataset directory (``graphloom convert``).

    Args:
        source: the folder or file to read.
        out: the dataset directory to write.
        source_format: ``shared`` (a folder of ../shared/datasets), ``ogb`` (an OGB
            node-property dataset or its raw/ folder), ``edgelist`` (a CSV/TSV file) or
            ``graphloom`` (a dataset directory, e.g. to re-encode its features).
        split: shared: use ``splits/{train,valid,test}_K.idx``.
        split_scheme: ogb: the folder under split/ (default: the only one).
        delimiter: edgelist: one character, ``tab`` or ``space`` (any run of spaces and
            tabs); default: detected from the first data line.
        header: edgelist: the first data line is a header.
        weighted: edgelist: read a third column as the edge weight.
        num_nodes: edgelist: number of nodes (default: largest id + 1).
        bidirected: add the reverse of every edge, merging duplicates.
        self_loops: ``keep``, ``remove`` or ``add`` (one per node).
        feature_dtype: store features as ``keep``, ``float32``, ``float16``, ``bfloat16`` or
            ``int8`` (per-row scale).
        link_split: ``(valid, test)`` fractions of edges held out for link prediction.
        seed: random seed of link_split and of the MovieLens negatives.
        rating_split: shared movielens_small: ``temporal`` or ``random``.
        overwrite: replace ``out`` if it exists.
    """
    job = _C.ImportJob()
    job.source_format = source_format
    job.source = _check.path("source", source)
    job.split = split
    job.split_scheme = split_scheme
    job.delimiter = delimiter or ""
    job.header = header
    job.weighted = weighted
    job.num_nodes = num_nodes
    job.bidirected = bidirected
    job.self_loops = self_loops
    job.link_split = list(link_split or [])
    job.seed = seed
    job.rating_split = rating_split
    _check.choice("feature_dtype", feature_dtype,
                  ("keep", "float32", "float16", "bfloat16", "int8"))
    _C.convert(job, _check.output_path("out", out, overwrite), feature_dtype, bool(overwrite))


def partition(data: PathLike, out: PathLike, num_parts: int = 2, method: str = "metis", *,
              metis_scheme: str = "auto", stream_algorithm: str = "fennel",
              balance_train: bool = False, balance_edges: bool = False, seed: int = 0,
              halo: int = 0, out_edges: bool = False, feature_dtype: str = "keep",
              overwrite: bool = False, verbose: bool = True) -> dict:
    """Partitions a dataset directory into parts that own contiguous node id ranges
    (``graphloom partition``; DGL's ``partition_graph``). Returns partition.json as a dict.

    Args:
        data: the dataset directory.
        out: the partition directory to write.
        num_parts: number of parts.
        method: ``metis`` (min edge cut), ``stream`` (one pass, memory O(nodes)) or ``random``.
        metis_scheme: ``auto``, ``recursive`` or ``kway``.
        stream_algorithm: ``fennel`` or ``ldg``.
        balance_train: metis, stream: spread train nodes evenly too.
        balance_edges: metis, stream: balance in-edges (what a part stores and samples) too.
        seed: random seed.
        halo: 1 records the 1-hop in-neighbors owned by other parts.
        out_edges: also store each part's out-edges.
        feature_dtype: as in :func:`convert`.
        overwrite: replace ``out`` if it exists.
        verbose: print the parts' table (node ranges, nodes, edges and train nodes per part,
            edge cut, imbalance) as ``graphloom partition`` does.
    """
    job = _C.PartitionJob()
    job.data = _check.path("data", data)
    job.out = _check.output_path("out", out, overwrite)
    job.parts = _check.positive("num_parts", num_parts)
    job.method = method  # each name is checked where it becomes a kind (OptionError)
    job.metis_scheme = metis_scheme
    job.stream_algorithm = stream_algorithm
    job.balance_train = balance_train
    job.balance_edges = balance_edges
    job.seed = seed
    job.halo = _check.choice("halo", halo, (0, 1))
    job.out_edges = out_edges
    job.force = overwrite
    job.command_line = f"graphloom.partition({job.data!r}, {job.out!r}, num_parts={num_parts})"
    _check.choice("feature_dtype", feature_dtype,
                  ("keep", "float32", "float16", "bfloat16", "int8"))
    table = _C.partition(job, feature_dtype)
    if verbose:
        print(table, end="")
    with open(os.path.join(job.out, "partition.json")) as file:
        return json.load(file)
