"""PyG's ``NeighborLoader`` and ``LinkNeighborLoader`` run by graphloom's sampler and C++
loader: PyG's arguments, PyG's ``Data`` batches, no pyg-lib or torch-sparse."""

import os
from collections.abc import Mapping
from typing import Any, Optional

import numpy as np
import torch

from .. import _check
from ..errors import OptionError
from .stores import FeatureStore

__all__ = ["LinkNeighborLoader", "NeighborLoader"]

# these change nothing here.
_IGNORED_LOADER_ARGS = frozenset((
    "pin_memory", "persistent_workers", "prefetch_factor", "timeout", "worker_init_fn",
    "multiprocessing_context", "generator", "is_sorted", "filter_per_worker"))


class _PygSource:
    """What NeighborLoader reads from its ``data``: the graphloom source its DataLoader
    gathers from, node attributes sliced by ``n_id`` in Python (a PyG ``Data``'s ``y``,
    masks...) and edge attributes sliced by ``e_id`` (through ``edge_order``, the position in
    ``data.edge_index`` of each stored edge)."""

    def __init__(self, data, weight_attr, time_attr=None):
        from torch_geometric.data import Data

        self.node_attrs, self.edge_attrs, self.edge_order = {}, {}, None
        self.node_time = self.edge_time = None  # the sampler's times: True (stored) or None
        if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0],
                                                                             FeatureStore):
            data = data[0].source
        if isinstance(data, Data):
            self._from_pyg_data(data, weight_attr, time_attr)
        elif hasattr(data, "label_rows"):  # a graphloom graph source: Dataset, DistGraph
            self.source = data
            if time_attr is not None:  # the dataset's own times, whatever the name
                graph = getattr(data, "graph", None)
                self.node_time = True if getattr(data, "node_timestamp", None) is not None \
                    else None
                self.edge_time = True if getattr(graph, "edge_time", None) is not None else None
                if self.node_time is None and self.edge_time is None:
                    raise OptionError(f"time_attr={time_attr!r}: the dataset has no "
                                      f"node_timestamp or edge_timestamp", "time_attr")
        else:
            raise OptionError(f"data must be a torch_geometric Data, a graphloom Dataset or "
                              f"DistGraph, or graphloom.pyg's (FeatureStore, GraphStore); got "
                              f"{type(data).__name__}", "data")

    def _from_pyg_data(self, data, weight_attr, time_attr):
        """``data`` as a graphloom dataset in memory: its edges sorted by target (stably, so
        that ``edge_order`` maps a stored edge back to ``data``'s), ``x`` as the ``feat``
        rows that the C++ loader gathers, and ``time_attr`` as its node or edge times."""
        import shutil
        import tempfile

        from ..data import load_dataset, save_dataset

        if data.edge_index is None:
            raise OptionError("data has no edge_index", "data")
        self.edge_order = torch.sort(data.edge_index[1], stable=True).indices
        weights = None
        if weight_attr is not None:
            if weight_attr not in data:
                raise OptionError(f"weight_attr={weight_attr!r}: data has no such edge "
                                  f"attribute", "weight_attr")
            weights = data[weight_attr][self.edge_order].to(torch.float32)
        times = {}
        if time_attr is not None:
            if time_attr not in data:
                raise OptionError(f"time_attr={time_attr!r}: data has no such node or edge "
                                  f"attribute", "time_attr")
            if data.is_node_attr(time_attr):
                times["node_timestamp"], self.node_time = data[time_attr], True
            else:
                times["edge_timestamp"] = data[time_attr][self.edge_order]
                self.edge_time = True
        folder = tempfile.mkdtemp(prefix="graphloom-pyg-")
        try:
            path = os.path.join(folder, "data")
            save_dataset(path, data.edge_index[:, self.edge_order], int(data.num_nodes),
                         node_features=data.x, edge_weights=weights, **times)
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

    def has_labels(self):
        return self.source.has_labels() and "y" not in self.node_attrs

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


def _input_nodes(input_nodes, source):
    """PyG's ``input_nodes`` as global ids: None (every node), ids, a boolean mask,
    ``(None, ids)``, or on a typed graph ``(node_type, ids or mask within the type)``."""
    node_type = None
    if isinstance(input_nodes, str):
        input_nodes = (input_nodes, None)
    if isinstance(input_nodes, tuple):
        if len(input_nodes) != 2:
            raise OptionError("input_nodes: a pair (node type, ids) was expected", "input_nodes")
        node_type, input_nodes = input_nodes
    if isinstance(input_nodes, np.ndarray):
        input_nodes = torch.from_numpy(input_nodes)
    if node_type is None:
        return torch.arange(source.num_nodes()) if input_nodes is None else input_nodes
    schema = source.schema()
    if schema is None or node_type not in schema.node_types:
        known = schema.node_types if schema else "none: the graph is not typed"
        raise OptionError(f"input_nodes: no node type {node_type!r} (node types: {known})",
                          "input_nodes")
    t = schema.node_types.index(node_type)
    if input_nodes is None:
        return schema.global_ids(t)
    return schema.global_ids(t, _check.node_ids("input_nodes", input_nodes,
                                                 schema.num_nodes_of(t)))


def _typed_fanouts(num_neighbors, source):
    """PyG's ``num_neighbors`` dict (edge type -> list per hop, seeds first) as graphloom's
    fanouts (input layer first) and ``edge_type_fanouts``; an edge type left out samples
    nothing."""
    schema = source.schema()
    if schema is None:
        raise OptionError("num_neighbors as a dict needs a typed graph (a Dataset or DistGraph "
                          "with edge types)", "num_neighbors")
    lists = {}
    for edge_type, values in num_neighbors.items():
        triple = tuple(edge_type) if not isinstance(edge_type, str) else None
        if triple not in schema.edge_types:
            raise OptionError(f"num_neighbors: no edge type {edge_type!r} (edge types: "
                              f"{schema.edge_types})", "num_neighbors")
        lists[triple] = _check.fanouts("num_neighbors", values, allow_zero=True)[::-1]
    depths = {len(values) for values in lists.values()}
    if len(depths) != 1:
        raise OptionError("num_neighbors: every edge type needs as many hops", "num_neighbors")
    depth = depths.pop()
    per_type = {":".join(t): lists.get(t, [0] * depth) for t in schema.edge_types}
    layers = zip(*per_type.values())
    fanouts = [-1 if -1 in layer else max(max(layer), 1) for layer in layers]
    return fanouts, per_type


def _refuse_unsupported(loader, kwargs, disjoint, subgraph_type, directed, neighbor_sampler):
    """What graphloom's PyG loaders do not do, refused by the argument's name."""
    unknown = sorted(set(kwargs) - _IGNORED_LOADER_ARGS)
    if unknown:
        raise TypeError(f"{loader} got an unexpected keyword argument {unknown[0]!r}")
    refusals = (
        ("disjoint", bool(disjoint), False, "disjoint subgraphs per seed are not built"),
        ("subgraph_type", str(subgraph_type), "directional",
         "graphloom samples directional subgraphs only"),
        ("directed", bool(directed), True, "graphloom samples directional subgraphs only"),
        ("neighbor_sampler", neighbor_sampler, None, "graphloom's own sampler does the sampling"),
    )
    for name, value, default, why in refusals:
        if (value is not None) if default is None else (value != default):
            raise OptionError(f"{name}={value!r}: {why}", name)


class _PygLoader:
    """The part PyG's two loaders share: the source, the sampler (num_neighbors reversed into
    graphloom's order) and graphloom's DataLoader over ``items``; each batch as a ``Data``."""

    def _start(self, data, num_neighbors, items, replace, weight_attr, transform, batch_size,
               shuffle, drop_last, num_workers, seed, time_attr=None, input_time=None,
               temporal_strategy="uniform", **pair_options):
        from ..loader import DataLoader
        from ..sampling import NeighborSampler

        if input_time is not None and time_attr is None:
            raise OptionError(f"{self._time_name} needs time_attr (the node or edge attribute "
                              f"whose times are sampled by)", self._time_name)
        self._source = _PygSource(data, weight_attr, time_attr)
        source = self._source.source
        if isinstance(num_neighbors, Mapping):
            fanouts, per_type = _typed_fanouts(num_neighbors, source)
        else:
            fanouts, per_type = _check.fanouts("num_neighbors", num_neighbors)[::-1], None
        self.transform, self.batch_size = transform, batch_size
        with _check.renamed_arguments({"weights": "weight_attr", "items": self._items_name,
                                       "source": "data", "edge_type_fanouts": "num_neighbors",
                                       "node_time": "time_attr", "edge_time": "time_attr",
                                       "seed_time": self._time_name}):
            self.sampler = NeighborSampler(source, fanouts, replace=replace,
                                           weights=True if weight_attr is not None else None,
                                           edge_type_fanouts=per_type, each_node_once=True,
                                           node_time=self._source.node_time,
                                           edge_time=self._source.edge_time,
                                           temporal_strategy=temporal_strategy)
            time_options = {} if input_time is None else {"seed_time": input_time}
            items = items(source) if callable(items) else items
            self._loader = DataLoader(
                source, items, self.sampler, batch_size, shuffle=shuffle, drop_last=drop_last,
                features=self._source.source.feature_names(),
                labels=self._source.has_labels() and not pair_options, num_workers=num_workers,
                seed=seed, pyg_edges=True, **pair_options, **time_options)

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self):
        for batch in self._loader:
            data = self._finish(batch, self._source.complete(batch))
            yield data if self.transform is None else self.transform(data)

    def _finish(self, batch, data):
        return data

    def __repr__(self):
        return (f"{type(self).__name__}(num_neighbors={self.sampler.fanouts[::-1]}, "
                f"batch_size={self.batch_size})")


class NeighborLoader(_PygLoader):
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
        input_nodes: the seeds: None (every node), ids, a boolean mask, or ``(None, ids)``; on
            a typed graph ``(node_type, ids or mask within that type)`` or ``node_type``.
        replace: sample with replacement.
        weight_attr: sample in proportion to this edge attribute of a ``Data`` (on a graphloom
            source, any name samples by the dataset's own edge weights).
        transform: called on each ``Data`` batch before it is yielded.
        batch_size, shuffle, drop_last: as in ``torch.utils.data.DataLoader``.
        num_workers: batches prepared concurrently by graphloom's C++ threads (0: one thread;
            never processes).
        seed: random seed of the shuffle and the sampler (default: drawn from torch's default
            generator, so ``torch.manual_seed`` makes runs repeat).
        time_attr: temporal sampling: the node or edge attribute of a ``Data`` holding times
            (on a graphloom source, any name uses the dataset's ``node_timestamp`` and edge
            times). A seed at time ``t`` then reaches only nodes (edges) of time ``<= t``, at
            every hop, and each batch has ``seed_time``.
        input_time: the seeds' times (default: the seeds' own node times).
        temporal_strategy: ``"uniform"`` or ``"last"`` (the most recent neighbors).

    Unlike PyG, a temporal batch is not split into one disjoint subgraph per seed: nodes are
    shared between seeds of the same time, and a node reached at two times appears twice in
    ``n_id``. No edge is later than the seed it serves, as in PyG.

    Accepted and without effect: ``pin_memory``, ``persistent_workers``, ``prefetch_factor``,
    ``is_sorted``, ``filter_per_worker`` and the other worker-process options of torch's
    DataLoader. Refused with an :class:`~graphloom.OptionError` naming the argument:
    ``disjoint=True``, ``subgraph_type``
    other than ``"directional"``, ``directed=False``, a custom ``neighbor_sampler``.

    A typed graphloom Dataset yields ``HeteroData`` batches with PyG's type names (ids local
    to each node type); ``num_neighbors`` may then be a dict of ``(src, relation, dst)`` ->
    list per hop (an edge type left out samples nothing).
    """

    _items_name = "input_nodes"
    _time_name = "input_time"

    def __init__(self, data: Any, num_neighbors: Any, input_nodes: Any = None,
                 input_time: Any = None, replace: bool = False,
                 subgraph_type: str = "directional", disjoint: bool = False,
                 temporal_strategy: str = "uniform", time_attr: Optional[str] = None,
                 weight_attr: Optional[str] = None, transform: Any = None,
                 neighbor_sampler: Any = None, directed: bool = True, batch_size: int = 1,
                 shuffle: bool = False, drop_last: bool = False, num_workers: int = 0,
                 seed: Optional[int] = None, **kwargs: Any):
        _refuse_unsupported("NeighborLoader", kwargs, disjoint, subgraph_type, directed,
                            neighbor_sampler)
        self._start(data, num_neighbors,
                    lambda source: _input_nodes(input_nodes, source), replace,
                    weight_attr, transform, batch_size, shuffle, drop_last, num_workers, seed,
                    time_attr=time_attr, input_time=input_time,
                    temporal_strategy=temporal_strategy)


def _negative_sampling(neg_sampling, neg_sampling_ratio):
    """(mode, k) of PyG's ``neg_sampling`` (None, "binary", "triplet", a dict or a
    ``NegativeSampling``) or its older ``neg_sampling_ratio``; ``k`` must be whole, since
    graphloom draws ``k`` negatives for every positive."""
    if neg_sampling is None and neg_sampling_ratio:
        neg_sampling = {"mode": "binary", "amount": neg_sampling_ratio}
    if neg_sampling is None:
        return None, 0
    if isinstance(neg_sampling, str):
        neg_sampling = {"mode": neg_sampling}
    if not isinstance(neg_sampling, Mapping):  # torch_geometric.sampler.NegativeSampling
        if getattr(neg_sampling, "src_weight", None) is not None or getattr(
                neg_sampling, "dst_weight", None) is not None:
            raise OptionError("neg_sampling: src_weight/dst_weight are not supported; "
                              "graphloom.negative_sampler.DegreeWeighted draws by degree",
                              "neg_sampling")
        neg_sampling = {"mode": getattr(neg_sampling.mode, "value", neg_sampling.mode),
                        "amount": neg_sampling.amount}
    mode = _check.choice("neg_sampling", neg_sampling.get("mode"), ("binary", "triplet"))
    amount = neg_sampling.get("amount", 1)
    if not (float(amount).is_integer() and amount >= 1):
        raise OptionError(f"neg_sampling: amount={amount!r}: graphloom draws a whole number "
                          f"(>= 1) of negatives per positive", "neg_sampling")
    return mode, int(amount)


def _edge_label_index(edge_label_index, source, data):
    """PyG's ``edge_label_index`` as [M, 2] pairs: given, ``(None, given)``, or every edge of
    ``data``."""
    if isinstance(edge_label_index, tuple):
        if len(edge_label_index) != 2 or edge_label_index[0] is not None:
            raise OptionError("edge_label_index: edge types are for typed graphs, which "
                              "graphloom's PyG loaders do not load yet", "edge_label_index")
        edge_label_index = edge_label_index[1]
    if edge_label_index is None:
        if source._items_split:
            raise OptionError("edge_label_index: give the pairs to train on (a DistGraph's "
                              "edges are not in this process; edge_split gives a share)",
                              "edge_label_index")
        edge_label_index = (data.edge_index if isinstance(getattr(data, "edge_index", None),
                                                          torch.Tensor)
                            else source.graph.edge_index())
    pairs = _check.integer_tensor("edge_label_index", edge_label_index, dim=2)
    if pairs.shape[0] != 2:
        raise OptionError(f"edge_label_index must have shape [2, M], got {list(pairs.shape)}",
                          "edge_label_index")
    return pairs.t().contiguous()


class LinkNeighborLoader(_PygLoader):
    """PyG's ``torch_geometric.loader.LinkNeighborLoader``, sampled by graphloom: batches of
    node pairs (``edge_label_index``) with their negatives and the neighborhoods of their ends.

    Each batch is a ``Data`` with what :class:`NeighborLoader` gives (the seeds are the pairs'
    distinct ends) and, by ``neg_sampling``:

    - None or ``"binary"``: ``edge_label_index`` (``[2, P + P*k]`` local ids, positives
      first) and ``edge_label`` (1 for positives or ``edge_label`` + 1 when that starts at 0,
      as PyG; 0 for negatives), and ``input_id`` (each pair's column in ``edge_label_index``);
    - ``"triplet"``: ``src_index``, ``dst_pos_index`` ``[P]`` and ``dst_neg_index``
      (``[P, k]``, ``[P]`` when ``k`` is 1).

    Args:
        data, num_neighbors, replace, weight_attr, transform, batch_size, shuffle, drop_last,
            num_workers, seed: as :class:`NeighborLoader`.
        edge_label_index: ``[2, M]`` pairs to predict (default: every edge of ``data``), or
            ``(None, pairs)``.
        edge_label: ``[M]`` labels of the pairs (default: 1).
        neg_sampling: None, ``"binary"``, ``"triplet"``, ``dict(mode=..., amount=k)`` or PyG's
            ``NegativeSampling``: ``k`` negatives per positive, uniform over the nodes, as PyG
            draws them (binary: both ends drawn; triplet: the destination). ``k`` must be
            whole.
        neg_sampling_ratio: PyG's older spelling of binary ``amount``.

    The positive edges stay in the sampled neighborhoods, as in PyG (split the edges first,
    e.g. with ``RandomLinkSplit``); graphloom's :class:`~graphloom.DataLoader` can drop them
    (``exclude="self"``). Refused by name as :class:`NeighborLoader` does.

    Temporal link prediction: with ``time_attr`` (as :class:`NeighborLoader`) and
    ``edge_label_time`` (``[M]``, each pair's time, required then), a pair's ends and its
    negatives are sampled at the pair's time, so no hop reaches an edge later than it; batches
    carry ``edge_label_time`` (binary and no negatives: positives then negatives, each negative
    at its positive's time) or ``seed_time`` (triplet: one per pair). Unlike PyG, which needs
    ``disjoint=True`` for this, the subgraphs of one time share nodes; a node at two times is
    two seeds.
    """

    _items_name = "edge_label_index"
    _time_name = "edge_label_time"

    def __init__(self, data: Any, num_neighbors: Any, edge_label_index: Any = None,
                 edge_label: Any = None, edge_label_time: Any = None, replace: bool = False,
                 subgraph_type: str = "directional", disjoint: bool = False,
                 temporal_strategy: str = "uniform", neg_sampling: Any = None,
                 neg_sampling_ratio: Optional[float] = None, time_attr: Optional[str] = None,
                 weight_attr: Optional[str] = None, transform: Any = None,
                 neighbor_sampler: Any = None, directed: bool = True, batch_size: int = 1,
                 shuffle: bool = False, drop_last: bool = False, num_workers: int = 0,
                 seed: Optional[int] = None, **kwargs: Any):
        from ..negative_sampler import Uniform, UniformPairs

        _refuse_unsupported("LinkNeighborLoader", kwargs, disjoint, subgraph_type, directed,
                            neighbor_sampler)
        if time_attr is not None and edge_label_time is None:
            raise OptionError("time_attr: temporal link prediction needs edge_label_time (each "
                              "pair's time)", "edge_label_time")
        self.mode, k = _negative_sampling(neg_sampling, neg_sampling_ratio)
        if self.mode == "triplet" and edge_label is not None:
            raise OptionError("edge_label must be None for 'triplet' negative sampling (use "
                              "src_index, dst_pos_index and dst_neg_index)", "edge_label")
        if edge_label is not None:
            edge_label = _check.as_tensor("edge_label", edge_label)
            if self.mode == "binary" and edge_label.numel() and edge_label.min() == 0:
                edge_label = edge_label + 1  # PyG's: 0 now means "negative"
        self.edge_label = edge_label
        self._start(data, num_neighbors, lambda source: _edge_label_index(edge_label_index,
                                                                          source, data),
                    replace, weight_attr, transform, batch_size, shuffle, drop_last,
                    num_workers, seed, time_attr=time_attr, input_time=edge_label_time,
                    temporal_strategy=temporal_strategy,
                    negative_sampler=(UniformPairs if self.mode == "binary" else Uniform)(k)
                    if k else None)
        if edge_label is not None and edge_label.shape[0] != self._loader.items.shape[0]:
            raise OptionError(f"edge_label has {edge_label.shape[0]} entries for "
                              f"{self._loader.items.shape[0]} pairs", "edge_label")

    def _finish(self, batch, data):
        pairs = batch.pairs
        if self.mode == "triplet":
            data.src_index, data.dst_pos_index = pairs.src_index, pairs.dst_index
            data.dst_neg_index = pairs.negative_dst_index.view(pairs.num_pairs, -1).squeeze(-1)
            del data.edge_label_index, data.edge_label
            if pairs.time is not None:  # PyG's triplet batches: one time per pair
                del data.edge_label_time
                data.seed_time = pairs.time
        elif self.edge_label is not None:
            positives = self.edge_label[pairs.input_id]
            data.edge_label = torch.cat([positives, positives.new_zeros(
                (pairs.num_pairs * pairs.k,) + tuple(positives.shape[1:]))])
        elif self.mode is None:
            del data.edge_label  # PyG leaves it out without labels or negatives
        return data
