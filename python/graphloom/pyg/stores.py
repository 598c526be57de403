"""PyG's remote-backend interface over graphloom's data: ``FeatureStore`` and ``GraphStore``
subclasses, so that ``torch_geometric.loader.NeighborLoader(data=(feature_store,
graph_store), ...)`` runs on a graphloom dataset or a partitioned graph (a
:class:`graphloom.distributed.DistGraph`: feature rows pulled from their owners, the topology
gathered from the servers once)."""

import numpy as np
import torch
from torch_geometric.data import EdgeAttr, FeatureStore as _PygFeatureStore
from torch_geometric.data import GraphStore as _PygGraphStore
from torch_geometric.data import TensorAttr
from torch_geometric.data.graph_store import EdgeLayout

from .. import _check
from ..data import Dataset
from ..errors import OptionError

__all__ = ["FeatureStore", "GraphStore", "from_dataset"]


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
        from ..distributed import DistGraph

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
    from ..sampling import NeighborSampler

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
        from ..distributed import DistGraph

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
