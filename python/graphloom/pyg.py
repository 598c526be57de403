"""PyG's remote-backend interface over graphloom's data: ``FeatureStore`` and ``GraphStore``
subclasses, so that ``torch_geometric.loader.NeighborLoader(data=(feature_store,
graph_store), ...)`` runs on a graphloom dataset or a partitioned graph (a
:class:`graphloom.distributed.DistGraph`: feature rows pulled from their owners, the topology
gathered from the servers once). Needs torch_geometric (imported here, not by ``import
graphloom``)."""

import os
from collections.abc import Mapping
from typing import Any, Optional

import numpy as np
import torch
from torch_geometric.data import EdgeAttr, FeatureStore as _PygFeatureStore
from torch_geometric.data import GraphStore as _PygGraphStore
from torch_geometric.data import TensorAttr
from torch_geometric.data.graph_store import EdgeLayout

from . import _check
from .data import Dataset
from .errors import OptionError

__all__ = ["FeatureStore", "GraphStore", "NeighborLoader", "from_dataset"]


def _dataset(source):
    if not isinstance(source, Dataset):
        raise OptionError(f"expected a graphloom Dataset, got {type(source).__name__}", "source")
    return source


class _PulledRows:
    """A DistGraph tensor read like a table: ``index_select`` pulls rows from their owners."""

    def __init__(self, graph, name):
        self.graph, self.name = graph, name
        shape, self.dtype = graph._impl.row_shape(name)
        self.shape = torch.Size(shape)

    def index_select(self, dim, index):
        return self.graph._impl.pull(self.name, index)


class FeatureStore(_PygFeatureStore):
    """The node features and labels of a graphloom :class:`~graphloom.Dataset` or
    :class:`~graphloom.distributed.DistGraph` as PyG's ``FeatureStore`` (homogeneous: group
    name None). ``x`` is the ``feat`` feature, ``y`` the labels; every other feature keeps its
    name. A dataset's rows are read from its tensors (memory-mapped, decoded when stored
    encoded); a DistGraph's are pulled from their owners (ask for rows by index: the whole
    table is on no trainer). Tensors put by PyG are kept in memory."""

    def __init__(self, source):
        super().__init__()
        from .distributed import DistGraph

        self._tables = {}
        self.source = source
        if isinstance(source, DistGraph):
            self.dataset = None
            for name in list(source._impl.feature_names) + ["label"]:
                if source._impl.has(name):
                    key = {"feat": "x", "label": "y"}.get(name, name)
                    self._tables[key] = (_PulledRows(source, name), None)
            return
        dataset = _dataset(source)
        self.dataset = dataset
        for name, table in dataset.node_features.items():
            self._tables["x" if name == "feat" else name] = (
                table, dataset.node_feature_scales.get(name))
        if dataset.labels is not None:
            self._tables["y"] = (dataset.labels, None)

    def _table(self, attr):
        if attr.group_name is not None or attr.attr_name not in self._tables:
            raise KeyError(f"graphloom FeatureStore has no tensor {attr.attr_name!r} of group "
                           f"{attr.group_name!r}; it has {sorted(self._tables)} (group None)")
        return self._tables[attr.attr_name]

    def _put_tensor(self, tensor, attr):
        if attr.group_name is not None:
            return False
        if attr.index is not None and not (isinstance(attr.index, slice)
                                           and attr.index == slice(None)):
            return False  # graphloom's tables are whole: no partial writes
        self._tables[attr.attr_name] = (tensor, None)
        return True

    def get_tensor(self, *args, **kwargs):
        """PyG's ``get_tensor``, with what PyG's own TensorAttr checks trip on taken care of:
        a NumPy index is read as a tensor, and a call that names only ``attr_name`` (and
        ``index``) reads group None, the only group here."""
        def as_index(value):
            return torch.from_numpy(value) if isinstance(value, np.ndarray) else value
        args = tuple(as_index(value) for value in args)
        if "index" in kwargs:
            kwargs["index"] = as_index(kwargs["index"])
        if not args and "group_name" not in kwargs and "attr_name" in kwargs:
            kwargs["group_name"] = None
        return super().get_tensor(*args, **kwargs)

    def _get_tensor(self, attr):
        table, scale = self._table(attr)
        index = attr.index
        if index is None or (isinstance(index, slice) and index == slice(None)):
            if isinstance(table, _PulledRows):
                raise KeyError(f"{attr.attr_name!r} of a DistGraph is read by index only (its "
                               f"rows live on the servers)")
            rows, row_scale = table, scale
        else:
            if isinstance(index, slice):  # PyG's IndexType: a slice of the rows
                index = torch.arange(*index.indices(table.shape[0]))
            index = _check.node_ids(f"index of {attr.attr_name!r}", index, table.shape[0])
            rows = table.index_select(0, index)
            row_scale = None if scale is None else scale.index_select(0, index)
        if row_scale is not None or rows.dtype in (torch.float16, torch.bfloat16):
            rows = rows.to(torch.float32)
            if row_scale is not None:
                rows = rows * row_scale.unsqueeze(1)
        return rows

    def _remove_tensor(self, attr):
        return self._tables.pop(attr.attr_name, None) is not None

    def _get_tensor_size(self, attr):
        return tuple(self._table(attr)[0].shape)

    def get_all_tensor_attrs(self):
        return [TensorAttr(group_name=None, attr_name=name) for name in self._tables]


def _gathered_csc(graph, chunk=65536):
    """The whole CSC of a DistGraph, ``(row, colptr)``: every node's in-neighbors asked of its
    owner (a one-layer sample taking all neighbors, a chunk of nodes per call)."""
    from .sampling import NeighborSampler

    sampler = NeighborSampler(graph, [-1])
    num_nodes = graph.num_nodes()
    sources, counts = [], []
    for begin in range(0, num_nodes, chunk):
        block = sampler.sample(torch.arange(begin, min(num_nodes, begin + chunk))).blocks[-1]
        sources.append(block.src_ids[block.indices])
        counts.append(block.indptr.diff())
    colptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    torch.cumsum(torch.cat(counts), 0, out=colptr[1:])
    return torch.cat(sources).to(torch.int64), colptr


class GraphStore(_PygGraphStore):
    """The graph of a graphloom :class:`~graphloom.Dataset` or
    :class:`~graphloom.distributed.DistGraph` as PyG's ``GraphStore``: one homogeneous edge
    type (None), stored in CSC (``row`` = sources, ``colptr``), which is the layout PyG's
    samplers read. A dataset's CSC is used as it is. PyG's samplers read the whole topology, so
    over a DistGraph the store gathers it once, at construction, from the servers (every
    node's in-neighbors from its owner): about 16 bytes per edge in this process, features
    excepted. graphloom's own DataLoader over a DistGraph samples without that copy."""

    def __init__(self, source):
        super().__init__()
        from .distributed import DistGraph

        if isinstance(source, DistGraph):
            self.dataset = None
            num_nodes = source.num_nodes()
            self._csc = _gathered_csc(source)
        else:
            self.dataset = _dataset(source)
            graph = self.dataset.graph
            num_nodes = graph.num_nodes()
            self._csc = (graph.indices.to(torch.int64), graph.indptr)
        self._size = (num_nodes, num_nodes)
        self._extra = {}

    def _put_edge_index(self, edge_index, edge_attr):
        self._extra[(edge_attr.edge_type, edge_attr.layout)] = edge_index
        return True

    def _get_edge_index(self, edge_attr):
        if edge_attr.edge_type is None and edge_attr.layout == EdgeLayout.CSC:
            return self._csc
        return self._extra.get((edge_attr.edge_type, edge_attr.layout))

    def _remove_edge_index(self, edge_attr):
        return self._extra.pop((edge_attr.edge_type, edge_attr.layout), None) is not None

    def get_all_edge_attrs(self):
        attrs = [EdgeAttr(None, EdgeLayout.CSC, size=self._size)]
        attrs += [EdgeAttr(edge_type, layout) for edge_type, layout in self._extra]
        return attrs


def from_dataset(source):
    """``(FeatureStore(source), GraphStore(source))``, the ``data`` argument of PyG's loaders;
    ``source`` a Dataset or a DistGraph."""
    return FeatureStore(source), GraphStore(source)



# --- PyG's NeighborLoader, run by graphloom's sampler -----------------------------------------

# torch DataLoader arguments PyG's loaders pass on; graphloom's workers are C++ threads, so
# these change nothing here.
_IGNORED_LOADER_ARGS = frozenset((
    "pin_memory", "persistent_workers", "prefetch_factor", "timeout", "worker_init_fn",
    "multiprocessing_context", "generator", "is_sorted", "filter_per_worker"))


class _PygSource:
    """What NeighborLoader reads from its ``data``: the graphloom source its DataLoader
    gathers from, node attributes sliced by ``n_id`` in Python (a PyG ``Data``'s ``y``,
    masks...) and edge attributes sliced by ``e_id`` (through ``edge_order``, the position in
    ``data.edge_index`` of each stored edge)."""

    def __init__(self, data, weight_attr):
        from torch_geometric.data import Data

        from .distributed import DistGraph

        self.node_attrs, self.edge_attrs, self.edge_order = {}, {}, None
        if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0],
                                                                             FeatureStore):
            data = data[0].source
        if isinstance(data, Data):
            self._from_pyg_data(data, weight_attr)
        elif isinstance(data, (Dataset, DistGraph)):
            self.source = data
        else:
            raise OptionError(f"data must be a torch_geometric Data, a graphloom Dataset or "
                              f"DistGraph, or graphloom.pyg's (FeatureStore, GraphStore); got "
                              f"{type(data).__name__}", "data")

    def _from_pyg_data(self, data, weight_attr):
        """``data`` as a graphloom dataset in memory: its edges sorted by target (stably, so
        that ``edge_order`` maps a stored edge back to ``data``'s) and ``x`` as the ``feat``
        rows that the C++ loader gathers."""
        import shutil
        import tempfile

        from .data import load_dataset, save_dataset

        if data.edge_index is None:
            raise OptionError("data has no edge_index", "data")
        self.edge_order = torch.sort(data.edge_index[1], stable=True).indices
        weights = None
        if weight_attr is not None:
            if weight_attr not in data:
                raise OptionError(f"weight_attr={weight_attr!r}: data has no such edge "
                                  f"attribute", "weight_attr")
            weights = data[weight_attr][self.edge_order].to(torch.float32)
        folder = tempfile.mkdtemp(prefix="graphloom-pyg-")
        try:
            path = os.path.join(folder, "data")
            save_dataset(path, data.edge_index[:, self.edge_order], int(data.num_nodes),
                         node_features=data.x, edge_weights=weights)
            self.source = load_dataset(path, memory_map=False)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        for key, value in data.items():
            if not isinstance(value, torch.Tensor) or key in ("x", "edge_index"):
                continue
            if data.is_node_attr(key):
                self.node_attrs[key] = value
            elif data.is_edge_attr(key):
                self.edge_attrs[key] = value

    def feature_names(self):
        from .distributed import DistGraph

        if isinstance(self.source, DistGraph):
            return list(self.source._impl.feature_names)
        return list(self.source.node_features)

    def has_labels(self):
        from .distributed import DistGraph

        if isinstance(self.source, DistGraph):
            return self.source._impl.has("label")
        return self.source.labels is not None and "y" not in self.node_attrs

    def complete(self, batch):
        """The PyG ``Data`` of a graphloom batch, with the Python-side attributes."""
        data = batch.to_pyg()
        for key, table in self.node_attrs.items():
            data[key] = table[data.n_id]
        if self.edge_attrs and "e_id" in data:
            original = self.edge_order[data.e_id]
            for key, table in self.edge_attrs.items():
                data[key] = table[original]
            data.e_id = original
        return data


def _input_nodes(input_nodes, num_nodes):
    """PyG's ``input_nodes``: None (every node), ids, a boolean mask, or ``(None, ids)``."""
    if isinstance(input_nodes, tuple):
        if len(input_nodes) != 2 or input_nodes[0] is not None:
            raise OptionError(f"input_nodes=({input_nodes[0]!r}, ...): node types are for typed "
                              f"graphs, which graphloom.pyg.NeighborLoader does not load yet",
                              "input_nodes")
        input_nodes = input_nodes[1]
    if isinstance(input_nodes, str):
        raise OptionError(f"input_nodes={input_nodes!r}: node types are for typed graphs, which "
                          f"graphloom.pyg.NeighborLoader does not load yet", "input_nodes")
    if input_nodes is None:
        return torch.arange(num_nodes)
    if isinstance(input_nodes, np.ndarray):
        input_nodes = torch.from_numpy(input_nodes)
    return input_nodes


def _refuse(name, value, default, why):
    if value != default:
        raise OptionError(f"{name}={value!r}: {why}", name)


class NeighborLoader:
    """PyG's ``torch_geometric.loader.NeighborLoader``, sampled and gathered by graphloom (no
    pyg-lib or torch-sparse needed): a script changes its import and nothing else.

    Each batch is a ``torch_geometric.data.Data`` as PyG's loader yields it: ``x``,
    ``edge_index`` (local ids), ``y``, ``n_id``, ``e_id``, ``batch_size`` (the first
    ``batch_size`` nodes are the seeds), ``num_sampled_nodes`` and ``num_sampled_edges``, and
    every other node (edge) attribute of a ``Data`` sliced by ``n_id`` (``e_id``).

    Args:
        data: a ``torch_geometric.data.Data`` (its edges and ``x`` are copied once into a
            graphloom dataset in memory), a graphloom :class:`~graphloom.Dataset` or
            :class:`~graphloom.distributed.DistGraph`, or graphloom's ``(FeatureStore,
            GraphStore)`` pair (:func:`from_dataset`).
        num_neighbors: neighbors sampled per node at each hop, **PyG's order**: the first entry
            is the seeds' own hop (graphloom's and DGL's ``fanouts`` list the input layer
            first, the reverse). -1 takes every neighbor.
        input_nodes: the seeds: None (every node), ids, a boolean mask, or ``(None, ids)``.
        replace: sample with replacement.
        weight_attr: sample in proportion to this edge attribute of a ``Data`` (on a graphloom
            source, any name samples by the dataset's own edge weights).
        transform: called on each ``Data`` batch before it is yielded.
        batch_size, shuffle, drop_last: as in ``torch.utils.data.DataLoader``.
        num_workers: batches prepared concurrently by graphloom's C++ threads (0: one thread;
            never processes).
        seed: random seed of the shuffle and the sampler (default: drawn from torch's default
            generator, so ``torch.manual_seed`` makes runs repeat).

    Accepted and without effect: ``pin_memory``, ``persistent_workers``, ``prefetch_factor``,
    ``is_sorted``, ``filter_per_worker`` and the other worker-process options of torch's
    DataLoader. Refused with an :class:`~graphloom.OptionError` naming the argument:
    ``time_attr``/``input_time`` (temporal sampling), ``disjoint=True``, ``subgraph_type``
    other than ``"directional"``, ``directed=False``, typed (dict) ``num_neighbors``, a
    custom ``neighbor_sampler``.
    """

    def __init__(self, data: Any, num_neighbors: Any, input_nodes: Any = None,
                 input_time: Any = None, replace: bool = False,
                 subgraph_type: str = "directional", disjoint: bool = False,
                 temporal_strategy: str = "uniform", time_attr: Optional[str] = None,
                 weight_attr: Optional[str] = None, transform: Any = None,
                 neighbor_sampler: Any = None, directed: bool = True, batch_size: int = 1,
                 shuffle: bool = False, drop_last: bool = False, num_workers: int = 0,
                 seed: Optional[int] = None, **kwargs: Any):
        from .loader import DataLoader
        from .sampling import NeighborSampler

        unknown = sorted(set(kwargs) - _IGNORED_LOADER_ARGS)
        if unknown:
            raise TypeError(f"NeighborLoader got an unexpected keyword argument {unknown[0]!r}")
        temporal = "temporal sampling is not in graphloom yet"
        _refuse("time_attr", time_attr, None, temporal)
        _refuse("input_time", input_time, None, temporal)
        _refuse("disjoint", bool(disjoint), False, "disjoint subgraphs per seed are not built")
        _refuse("subgraph_type", str(subgraph_type), "directional",
                "graphloom samples directional subgraphs only")
        _refuse("directed", bool(directed), True, "graphloom samples directional subgraphs only")
        _refuse("neighbor_sampler", neighbor_sampler, None,
                "graphloom's own sampler does the sampling")
        if isinstance(num_neighbors, Mapping):
            raise OptionError("num_neighbors as a dict is for typed graphs, which "
                              "graphloom.pyg.NeighborLoader does not load yet", "num_neighbors")
        fanouts = _check.fanouts("num_neighbors", num_neighbors)
        self._source = _PygSource(data, weight_attr)
        source = self._source.source
        self.transform = transform
        self.batch_size = batch_size
        with _check.renamed_arguments({"weights": "weight_attr", "items": "input_nodes",
                                       "source": "data"}):
            self.sampler = NeighborSampler(
                source, fanouts[::-1], replace=replace,
                weights=True if weight_attr is not None else None)
            self._loader = DataLoader(
                source, _input_nodes(input_nodes, source.num_nodes()), self.sampler, batch_size,
                shuffle=shuffle, drop_last=drop_last, features=self._source.feature_names(),
                labels=self._source.has_labels(), num_workers=num_workers, seed=seed)

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self):
        for batch in self._loader:
            data = self._source.complete(batch)
            yield data if self.transform is None else self.transform(data)

    def __repr__(self):
        return f"NeighborLoader(num_neighbors={self.sampler.fanouts[::-1]}, batch_size={self.batch_size})"
