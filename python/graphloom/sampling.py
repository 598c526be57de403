"""Neighbor sampling (DGL's ``NeighborSampler``, PyG's ``num_neighbors``) and LABOR (GraphBolt's
``LayerNeighborSampler``), done by graphloom's C++ sampler with the GIL released."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import torch

from . import _C, _check
from .data import CSCGraph, Dataset
from .errors import OptionError

__all__ = ["LayerNeighborSampler", "NeighborSampler"]


def _fanout_overrides(edge_type_fanouts):
    """{"likes": [5, 5]} -> ["likes=5,5"], the C++ sampler's (and the CLI's) form."""
    return [f"{name}={','.join(str(f) for f in _check.fanouts(name, values, allow_zero=True))}"
            for name, values in edge_type_fanouts.items()]


class NeighborSampler:
    """Samples a fixed number of neighbors per node and layer, making one block per layer.

    Args:
        graph: a :class:`CSCGraph`, a :class:`Dataset` (its graph) or a
            :class:`graphloom.distributed.DistGraph` (sampled where each part lives).
        fanouts: neighbors picked per node in each layer, input layer first, as DGL's
            ``NeighborSampler``: ``fanouts[0]`` is the outermost hop. -1 takes all neighbors.
            PyG's ``num_neighbors`` lists the hops from the seeds outwards, i.e. reversed.
        replace: sample with replacement.
        weights: sample in proportion to edge weights: a float tensor ``[num_edges]`` in CSC
            order, or True for the graph's own weights (on a DistGraph: those stored in the
            partition). None samples uniformly.
        edge_dir: ``"in"`` (the sources of each node's in-edges, as DGL and PyG) or ``"out"``.
        edge_type_fanouts: typed graphs: dict edge type (relation or ``src:relation:dst``) ->
            list of fanouts (one per layer) that replaces ``fanouts`` for that type; 0 leaves
            the type out of that layer.
        each_node_once: sample a node's neighbors only at the hop that first reaches it, as
            PyG's NeighborLoader does: ``to_pyg()`` gets the same edges, without the nodes
            that only resampled destinations would add (graphloom.pyg's loaders set it). The
            blocks' destinations reached at an earlier hop then have no in-edges, which
            DGL-style layer-wise models cannot use: keep the default for them.
        node_time: temporal sampling (PyG's ``time_attr`` on nodes, GraphBolt's
            ``node_timestamp_attr_name``): int64 ``[num_nodes]`` times, or True for the
            dataset's ``node_timestamp`` (on a DistGraph, True: the partition's times, with
            the seeds' own pulled from their owners). A seed at time ``t`` then reaches only neighbors of
            time ``<= t``, at every hop (each sampled node carries its seed's time). Seeds take
            their own node time unless ``seed_time`` is given.
        edge_time: the same for edges: int64 ``[num_edges]`` in CSC order, or True for the
            graph's ``edge_time``. With both, an edge is usable once it and its source are.
        temporal_strategy: with node or edge times: ``"uniform"`` picks among the usable edges
            at random, ``"last"`` takes the most recent ones (PyG's names).

    Temporal batches relabel (node, time) pairs: a node reached from seeds of two times is two
    sources, and ``Block.src_times`` holds each source's time. Temporal sampling follows
    in-edges of untyped graphs, without weights or replacement under ``"last"``. On a
    DistGraph, each part's server samples its seeds' pasts (``graphloom partition`` sorts the
    parts' columns by time when the dataset has timestamps).

    Sampling is reproducible: the same seed, epoch and batch index give the same blocks, on
    any number of threads.
    """

    _method = "neighbor"

    def __init__(self, graph: Any, fanouts: Sequence[int], replace: bool = False,
                 weights: Union[torch.Tensor, bool, None] = None, edge_dir: str = "in",
                 edge_type_fanouts: Optional[Mapping[str, Sequence[int]]] = None,
                 each_node_once: bool = False, node_time: Union[torch.Tensor, bool, None] = None,
                 edge_time: Union[torch.Tensor, bool, None] = None,
                 temporal_strategy: str = "uniform"):
        from .distributed import DistGraph

        if isinstance(graph, Dataset):
            graph = graph.graph
        self.fanouts = _check.fanouts("fanouts", fanouts)
        self.replace = bool(replace)
        self.each_node_once = bool(each_node_once)
        self.edge_dir = _check.choice("edge_dir", edge_dir, ("in", "out"))
        self.temporal_strategy = _check.choice("temporal_strategy", temporal_strategy,
                                               ("uniform", "last"))
        self.temporal = node_time is not None or edge_time is not None
        self._node_time = None
        self._handles = {}
        if isinstance(graph, DistGraph):
            self._init_dist(graph, weights, edge_type_fanouts)
            if self.temporal:
                self._init_dist_temporal(graph, node_time, edge_time)
            return
        if not isinstance(graph, CSCGraph):
            raise OptionError(f"graph must be a graphloom CSCGraph, Dataset or DistGraph, got "
                              f"{type(graph).__name__}", "graph")
        self._graph_impl = graph._impl
        if weights is True:
            if graph.weights is None:
                raise OptionError("weights=True, but the graph has no edge weights", "weights")
        elif weights is not None:
            weights = _check.float_tensor("weights", weights, length=graph.num_edges())
            edge_ids = graph.edge_ids
            self._graph_impl = _C.CscGraph(graph.indptr, graph.indices, edge_ids, weights)
        self.weighted = weights is not None
        self._edge_type_fanouts = []
        if edge_type_fanouts:
            if graph._dataset is None or not graph._dataset.edge_types:
                raise OptionError("edge_type_fanouts needs a typed graph (a Dataset with edge "
                                  "types)", "edge_type_fanouts")
            self._edge_type_fanouts = _C.per_edge_type_fanouts(
                graph._dataset, self.fanouts, _fanout_overrides(edge_type_fanouts))
        self.num_nodes = graph.num_nodes()
        if self.temporal:
            self._init_temporal(graph, node_time, edge_time)

    def _init_temporal(self, graph, node_time, edge_time):
        """The graph with each column sorted by the time its edges become usable, so that a
        seed's usable edges are a prefix found by binary search."""
        if self.weighted or self.edge_dir != "in":
            name = "weights" if self.weighted else "edge_dir"
            raise OptionError(f"{name}: temporal sampling follows in-edges, without weights",
                              name)
        if self.replace and self.temporal_strategy == "last":
            raise OptionError("temporal_strategy='last' takes the most recent edges and has no "
                              "with-replacement form", "temporal_strategy")
        if node_time is True:
            node_time = None if graph._dataset is None else _check.optional_tensor(
                graph._dataset.node_timestamp)
            if node_time is None:
                raise OptionError("node_time=True, but the dataset has no node_timestamp",
                                  "node_time")
        elif node_time is not None:
            node_time = _check.times("node_time", node_time, self.num_nodes)
        if edge_time is True:
            edge_time = graph.edge_time
            if edge_time is None:
                raise OptionError("edge_time=True, but the graph has no edge times "
                                  "(edge_timestamp)", "edge_time")
        elif edge_time is not None:
            edge_time = _check.times("edge_time", edge_time, graph.num_edges())
        if node_time is not None:
            self._node_time = lambda ids: node_time[ids]
        self._graph_impl = _C.sorted_by_time(self._graph_impl, node_time, edge_time)

    def _init_dist_temporal(self, graph, node_time, edge_time):
        """A partition written from a dataset with times holds each part's columns sorted by
        them (node and edge times together), so True is the only choice for either; seeds'
        times are pulled from their owners as labels are."""
        for name, value in (("node_time", node_time), ("edge_time", edge_time)):
            if value is not None and value is not True:
                raise OptionError(f"{name}: on a DistGraph, True samples by the times stored in "
                                  f"the partition; a tensor would have to live on the servers "
                                  f"(write it into the dataset before partitioning)", name)
        if self.weighted or self.replace and self.temporal_strategy == "last":
            name = "weights" if self.weighted else "temporal_strategy"
            raise OptionError(f"{name}: temporal sampling takes no weights, nor replacement "
                              f"with 'last'", name)
        if graph._impl.has("node_timestamp"):
            self._node_time = lambda ids: graph._impl.pull("node_timestamp", ids)
        elif node_time is True:
            raise OptionError("node_time=True, but the partition has no node_timestamp",
                              "node_time")

    def seed_times(self, seeds: torch.Tensor, seed_time: Any = None) -> Optional[torch.Tensor]:
        """The times of ``seeds`` for a temporal sampler: ``seed_time`` (PyG's
        ``input_time``), else the seeds' node times; None for a sampler without times."""
        if not self.temporal:
            if seed_time is not None:
                raise OptionError("seed_time needs a temporal sampler (node_time= or "
                                  "edge_time=)", "seed_time")
            return None
        if seed_time is not None:
            return _check.times("seed_time", seed_time, seeds.numel())
        if self._node_time is None:
            raise OptionError("seed_time: a sampler with edge times only needs each seed's time",
                              "seed_time")
        return self._node_time(seeds)

    def _init_dist(self, graph, weights, edge_type_fanouts):
        """On a DistGraph the servers sample their parts: by the weights stored in the
        partition, and with fanouts per edge type from the partition's schema."""
        if weights is not None and weights is not True:
            raise OptionError("on a DistGraph, weights=True samples by the edge weights stored "
                              "in the partition; a weights tensor would have to live on the "
                              "servers (write it into the dataset before partitioning)", "weights")
        self._graph_impl, self.weighted = graph._impl, weights is True
        self.num_nodes = graph.num_nodes()
        self._edge_type_fanouts = []
        if edge_type_fanouts:
            self._edge_type_fanouts = _C.per_edge_type_fanouts(
                graph._impl, self.fanouts, _fanout_overrides(edge_type_fanouts))

    @property
    def num_layers(self):
        return len(self.fanouts)

    def _handle(self, seed):
        """The C++ sampler with this random seed (one per seed, reused)."""
        if seed not in self._handles:
            options = _C.NeighborSamplerOptions()
            options.fanouts = self.fanouts
            options.edge_type_fanouts = self._edge_type_fanouts
            options.replace = self.replace
            options.weighted = self.weighted
            options.each_node_once = self.each_node_once
            options.out_edges = self.edge_dir == "out"
            options.seed = seed
            options.method = self._method
            options.layer_dependency = getattr(self, "layer_dependency", False)
            options.batch_dependency = getattr(self, "batch_dependency", 1)
            options.importance_sampling = getattr(self, "importance_sampling", 0)
            options.temporal_strategy = self.temporal_strategy
            self._handles[seed] = _C.NeighborSampler(self._graph_impl, options)
        return self._handles[seed]

    def sample(self, seeds: Any, epoch: int = 0, batch: int = 0, seed: int = 0,
               seed_time: Any = None):
        """The blocks of one batch of seed nodes, as a :class:`MiniBatch` without features.

        ``(seed, epoch, batch)`` key the random streams, as in the DataLoader. ``seed_time``:
        a temporal sampler's seed times (default: the seeds' node times)."""
        from .batch import MiniBatch

        ids = _check.node_ids("seeds", seeds, self.num_nodes)
        times = self.seed_times(ids, seed_time)
        return MiniBatch(self._handle(seed).sample(ids, epoch, batch, times))

    def __repr__(self):
        temporal = f", temporal_strategy={self.temporal_strategy!r}" if self.temporal else ""
        return (f"NeighborSampler(fanouts={self.fanouts}, replace={self.replace}, "
                f"weighted={self.weighted}, edge_dir={self.edge_dir!r}{temporal})")


class LayerNeighborSampler(NeighborSampler):
    """LABOR, layer-neighbor sampling (GraphBolt's ``LayerNeighborSampler``, DGL's
    ``LaborSampler``; Balin & Catalyurek, NeurIPS 2023).

    Every candidate neighbor draws one random number per layer, shared by all the nodes that
    reach it, and a node with ``d`` neighbors keeps those whose number is below
    ``fanout / d``. Each node still keeps ``fanout`` neighbors on average (the count varies),
    but nodes with common neighbors keep the same ones, so a batch reaches far fewer distinct
    nodes and gathers far fewer feature rows than with :class:`NeighborSampler` at the same
    fanouts. LABOR-0's importance weights are equal among one node's kept neighbors, so the
    models' mean aggregation needs no reweighting. LABOR-* (``importance_sampling``) goes
    further: it raises the probability of neighbors that many nodes share and lowers the
    rest's, and its blocks carry the importance weights (``Block.edge_weights``, DGL's
    ``edata["edge_weights"]``) that :class:`graphloom.nn.SAGEConv`'s mean and the built-in
    models' mean aggregations apply.

    Args:
        graph, fanouts, edge_dir, edge_type_fanouts: as :class:`NeighborSampler`.
        layer_dependency: the same random numbers in every layer, so a node reached in several
            layers is kept by all of them (fewer distinct nodes still).
        batch_dependency: random numbers that drift over this many consecutive batches (1: new
            ones every batch). Consecutive batches then reach overlapping nodes, and a feature
            cache hits more; each batch's sample stays uniform.
        importance_sampling: LABOR-*'s rounds of probability optimization over each layer's
            candidates (GraphBolt's argument): 0 is LABOR-0; a negative value runs rounds until
            the expected number of sampled nodes stops falling (at most 100 rounds). The
            layer's candidates are read once, every neighbor of every node; the rounds then
            run over them in memory.

    LABOR samples without replacement and without edge weights.
    """

    _method = "labor"

    def __init__(self, graph: Any, fanouts: Sequence[int], layer_dependency: bool = False,
                 batch_dependency: int = 1, importance_sampling: int = 0,
                 edge_dir: str = "in",
                 edge_type_fanouts: Optional[Mapping[str, Sequence[int]]] = None):
        super().__init__(graph, fanouts, edge_dir=edge_dir, edge_type_fanouts=edge_type_fanouts)
        self.layer_dependency = bool(layer_dependency)
        self.batch_dependency = _check.positive("batch_dependency", batch_dependency)
        self.importance_sampling = _check.integer("importance_sampling", importance_sampling)

    def __repr__(self):
        return (f"LayerNeighborSampler(fanouts={self.fanouts}, "
                f"layer_dependency={self.layer_dependency}, "
                f"batch_dependency={self.batch_dependency}, "
                f"importance_sampling={self.importance_sampling}, edge_dir={self.edge_dir!r})")
