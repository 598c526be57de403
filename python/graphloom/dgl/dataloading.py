"""``dgl.dataloading``'s samplers and loader over graphloom: the samplers hold DGL's arguments
and become graphloom samplers once the loader names the graph; batches are prepared by
graphloom's C++ threads (:class:`graphloom.DataLoader`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import torch

from .. import _check, negative_sampler
from ..errors import IdError, OptionError
from ..loader import DataLoader as _GraphloomLoader
from ..sampling import LayerNeighborSampler as _LayerNeighborSampler
from ..sampling import NeighborSampler as _NeighborSampler
from .heterograph import HeteroBlock

__all__ = ["DataLoader", "DistEdgeDataLoader", "DistNodeDataLoader", "EdgePredictionSampler",
           "LaborSampler", "MultiLayerFullNeighborSampler", "NeighborSampler",
           "as_edge_prediction_sampler", "negative_sampler"]

# torch DataLoader arguments DGL passes on; graphloom's workers are C++ threads, so these
# change nothing here.
_IGNORED_LOADER_ARGS = frozenset((
    "persistent_workers", "pin_memory", "prefetch_factor", "timeout", "worker_init_fn",
    "use_prefetch_thread", "use_alternate_streams", "pin_prefetcher", "gpu_cache"))


# graphloom's argument names -> DGL's, for the errors raised below DGL's names.
_DGL_NAMES = {"features": "prefetch_node_feats", "labels": "prefetch_labels", "weights": "prob",
              "items": "indices", "source": "graph"}


class NeighborSampler:
    """DGL's ``dgl.dataloading.NeighborSampler``: ``fanouts[i]`` neighbors per node in layer
    ``i``, the input layer first (DGL's order); -1 takes every neighbor.

    Args:
        fanouts: one entry per layer, input layer first: a count, or on a typed graph a dict
            edge type (relation name or ``(src, relation, dst)``) -> count, as DGL takes for
            heterogeneous graphs (an edge type left out of a layer's dict samples nothing).
        edge_dir: ``"in"`` (sources of in-edges) or ``"out"``.
        prob: the name of the edge weights to sample by; graphloom datasets hold one set of
            edge weights, which any name selects (an error when the graph has none).
        replace: sample with replacement.
        prefetch_node_feats: node features gathered into ``blocks[0].srcdata`` (default none:
            read ``g.ndata[name][input_nodes]`` yourself, as in DGL).
        prefetch_labels: ``["label"]`` gathers the seeds' labels into
            ``blocks[-1].dstdata["label"]``.
        output_device: where the batches go; the DataLoader's ``device`` wins when given.

    ``mask``, ``prefetch_edge_feats`` and a ``fused`` other than True are refused by name.
    """

    _kind = _NeighborSampler

    def __init__(self, fanouts: Sequence[int], edge_dir: str = "in", prob: Optional[str] = None,
                 mask: Optional[str] = None, replace: bool = False,
                 prefetch_node_feats: Optional[Sequence[str]] = None,
                 prefetch_labels: Optional[Sequence[str]] = None,
                 prefetch_edge_feats: Optional[Sequence[str]] = None,
                 output_device: Any = None, fused: bool = True):
        if mask is not None:
            raise OptionError(f"mask={mask!r}: sampling masks are not in graphloom; drop the "
                              f"masked edges from the dataset instead", "mask")
        if prefetch_edge_feats:
            raise OptionError("prefetch_edge_feats: graphloom gathers node features only; "
                              "blocks carry edge ids (edge_ids) to read edge data by",
                              "prefetch_edge_feats")
        labels = list(prefetch_labels or [])
        if labels not in ([], ["label"]):
            raise OptionError(f"prefetch_labels={prefetch_labels!r}: graphloom's datasets have "
                              f"one label table, 'label'", "prefetch_labels")
        self.fanouts, self._typed_layers = _layer_fanouts(fanouts)
        self.edge_dir = _check.choice("edge_dir", edge_dir, ("in", "out"))
        self.prob, self.replace = prob, bool(replace)
        self.prefetch_node_feats = list(prefetch_node_feats or [])
        self.prefetch_labels = bool(labels)
        self.output_device = output_device

    def _sampler(self, graph):
        """The graphloom sampler of this configuration over `graph`."""
        return _NeighborSampler(graph, self.fanouts, replace=self.replace,
                                weights=True if self.prob is not None else None,
                                edge_dir=self.edge_dir,
                                edge_type_fanouts=None if self._typed_layers is None
                                else _edge_type_fanouts(graph, self._typed_layers))

    def sample(self, g: Any, seed_nodes: Any):
        """DGL's ``sampler.sample(g, seed_nodes)``: ``(input_nodes, output_nodes, blocks)`` of
        one batch, without features."""
        with _check.renamed_arguments({"weights": "prob", "seeds": "seed_nodes"}):
            return tuple(self._sampler(g).sample(seed_nodes))

    def __repr__(self):
        return f"{type(self).__name__}(fanouts={self.fanouts}, edge_dir={self.edge_dir!r})"


def _layer_fanouts(fanouts):
    """(fanouts, per-layer dicts or None) of DGL's per-layer fanouts, whose entries may be
    dicts edge type -> count (the layer's plain fanout is then 1, and every edge type gets its
    own count once the graph is known: _edge_type_fanouts)."""
    layers = list(fanouts) if isinstance(fanouts, Sequence) else fanouts
    if not isinstance(layers, list) or not any(isinstance(f, Mapping) for f in layers):
        return _check.fanouts("fanouts", fanouts), None
    plain = _check.fanouts("fanouts", [1 if isinstance(f, Mapping) else f for f in layers])
    return plain, [dict(f) if isinstance(f, Mapping) else f for f in layers]


def _edge_type_fanouts(graph, layers):
    """graphloom's edge_type_fanouts ("src:relation:dst" -> count per layer) of DGL's per-layer
    fanouts on `graph`: an edge type a layer's dict leaves out samples nothing there."""
    schema = graph.schema() if hasattr(graph, "schema") else None
    if schema is None:
        raise OptionError("fanouts per edge type (dicts) need a typed graph; this one has no "
                          "edge types", "fanouts")
    relations = [triple[1] for triple in schema.edge_types]
    typed = {":".join(triple): [] for triple in schema.edge_types}
    for layer in layers:
        counts = {}
        if isinstance(layer, dict):
            for etype, count in layer.items():
                if isinstance(etype, str) and relations.count(etype) == 1:
                    etype = schema.edge_types[relations.index(etype)]
                if isinstance(etype, str) or tuple(etype) not in schema.edge_types:
                    raise OptionError(f"fanouts: no edge type {etype!r} (edge types: "
                                      f"{schema.edge_types}; a relation that several share "
                                      f"needs its triple)", "fanouts")
                counts[":".join(etype)] = count
        for name in typed:
            typed[name].append(counts.get(name, 0) if isinstance(layer, dict) else layer)
    return typed


class MultiLayerFullNeighborSampler(NeighborSampler):
    """DGL's ``MultiLayerFullNeighborSampler(num_layers)``: every neighbor in every layer."""

    def __init__(self, num_layers: int, **kwargs: Any):
        super().__init__([-1] * _check.positive("num_layers", num_layers), **kwargs)


class LaborSampler(NeighborSampler):
    """DGL's ``LaborSampler``: LABOR-0, or LABOR-* with ``importance_sampling`` (its blocks'
    ``edata["edge_weights"]``); see :class:`graphloom.LayerNeighborSampler`."""

    def __init__(self, fanouts: Sequence[int], edge_dir: str = "in", prob: Optional[str] = None,
                 importance_sampling: int = 0, layer_dependency: bool = False,
                 batch_dependency: int = 1, **kwargs: Any):
        if prob is not None:
            raise OptionError("prob: LABOR samples without edge weights in graphloom", "prob")
        super().__init__(fanouts, edge_dir=edge_dir, **kwargs)
        self.importance_sampling = importance_sampling
        self.layer_dependency, self.batch_dependency = layer_dependency, batch_dependency

    def _sampler(self, graph):
        return _LayerNeighborSampler(graph, self.fanouts, self.layer_dependency,
                                     self.batch_dependency, self.importance_sampling,
                                     edge_dir=self.edge_dir)


class EdgePredictionSampler:
    """What DGL's ``as_edge_prediction_sampler`` returns: a node sampler applied to the ends of
    a batch of edges, with negatives and the exclusion of the batch's own edges. The DataLoader
    then yields ``(input_nodes, pair_graph, neg_pair_graph, blocks)`` (without a negative
    sampler: ``(input_nodes, pair_graph, blocks)``)."""

    def __init__(self, sampler: NeighborSampler, exclude: Optional[str] = None,
                 reverse_eids: Any = None, reverse_etypes: Any = None,
                 negative_sampler: Any = None, prefetch_labels: Any = None):
        if not isinstance(sampler, NeighborSampler):
            raise OptionError(f"sampler must be a sampler of graphloom.dgl.dataloading, got "
                              f"{type(sampler).__name__}", "sampler")
        if exclude == "reverse_types" or reverse_etypes is not None:
            raise OptionError("exclude='reverse_types' is for typed graphs, which "
                              "graphloom.dgl.dataloading does not load yet", "exclude")
        if prefetch_labels:
            raise OptionError("prefetch_labels: graphloom has no edge labels to gather",
                              "prefetch_labels")
        # graphloom matches the excluded edges by their ends, so reverse edges need no ids.
        self.exclude = {None: None, "self": "self", "reverse_id": "reverse"}.get(exclude, exclude)
        _check.choice("exclude", self.exclude, (None, "self", "reverse"))
        self.sampler, self.negative_sampler = sampler, negative_sampler
        self.prefetch_node_feats = sampler.prefetch_node_feats
        self.output_device = sampler.output_device

    def _sampler(self, graph):
        return self.sampler._sampler(graph)

    def _loader_options(self, graph, indices):
        return dict(items=_edge_pairs(graph, indices), negative_sampler=self.negative_sampler,
                    exclude=self.exclude, labels=False)


def as_edge_prediction_sampler(sampler: NeighborSampler, exclude: Optional[str] = None,
                               reverse_eids: Any = None, reverse_etypes: Any = None,
                               negative_sampler: Any = None,
                               prefetch_labels: Any = None) -> EdgePredictionSampler:
    """DGL's ``as_edge_prediction_sampler``: ``sampler`` over the ends of each batch of edges.

    Args:
        sampler: a node sampler of this module.
        exclude: None, ``"self"`` (drop the batch's edges from its blocks) or ``"reverse_id"``
            (and their reverse edges, matched by end nodes, so ``reverse_eids`` is not needed).
        negative_sampler: ``negative_sampler.Uniform(k)`` (or graphloom's ``DegreeWeighted``).
    """
    return EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes,
                                 negative_sampler, prefetch_labels)


def _edge_pairs(graph, indices):
    """DGL's edge ``indices`` as [M, 2] node pairs: edge ids of a Dataset's graph (its
    original ids when it keeps them, else CSC positions), or pairs as they are."""
    from ..data import Dataset

    indices = _check.as_tensor("indices", indices)
    if indices.dim() == 2:
        return indices
    if not isinstance(graph, Dataset):
        raise OptionError("indices: on a DistGraph give node pairs ([M, 2], from edge_split); "
                          "its edge ids are not in this process", "indices")
    edge_index = graph.graph.edge_index()
    if indices.dtype == torch.bool:
        indices = torch.nonzero(indices).flatten()
    ids = _check.integer_tensor("indices", indices, dim=1)
    num_edges = edge_index.shape[1]
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_edges):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise IdError(f"indices: edge id {bad} is outside [0, {num_edges}) (the graph's edges)")
    stored = graph.graph.edge_ids
    if stored is not None:
        position = torch.empty_like(stored)
        position[stored] = torch.arange(stored.numel())
        ids = position[ids]
    return edge_index[:, ids].t().contiguous()


def _ddp_share(use_ddp):
    """(rank, world_size): DGL splits the indices over torch.distributed's ranks only when
    asked (``use_ddp=True``); graphloom's own loader splits whenever a group is up."""
    if not use_ddp:
        return 0, 1
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise OptionError("use_ddp=True needs torch.distributed.init_process_group() first",
                          "use_ddp")
    return dist.get_rank(), dist.get_world_size()


class DataLoader:
    """DGL's ``dgl.dataloading.DataLoader``: yields ``(input_nodes, output_nodes, blocks)``.

    Args:
        graph: a graphloom :class:`~graphloom.Dataset` or
            :class:`~graphloom.distributed.DistGraph`.
        indices: the seed nodes: ids or a boolean mask. With an
            :func:`as_edge_prediction_sampler`, the edges: edge ids (or a mask) of a Dataset's
            graph, or ``[M, 2]`` node pairs (on a DistGraph, from ``edge_split``).
        graph_sampler: a sampler of this module.
        device: where the batches go (``"cpu"``, ``"cuda[:N]"``); default the sampler's
            ``output_device``, else the CPU.
        use_ddp: split ``indices`` over torch.distributed's ranks (one permutation per epoch,
            seeded by ``ddp_seed``).
        ddp_seed: the random seed of the shuffle and the sampler under ``use_ddp``.
        batch_size, shuffle, drop_last: as torch's DataLoader.
        num_workers: batches prepared concurrently by graphloom's C++ threads (0: one thread).
        use_uva: as in DGL, only with a CUDA ``device``: graphloom keeps the graph and features
            in host memory, samples on its CPU threads and copies each batch to the device
            from pinned memory without blocking.

    Iterating runs one epoch; ``len(loader)`` is its number of batches.
    """

    def __init__(self, graph: Any, indices: Any, graph_sampler: NeighborSampler,
                 device: Any = None, use_ddp: bool = False, ddp_seed: int = 0,
                 batch_size: int = 1, drop_last: bool = False, shuffle: bool = False,
                 use_uva: bool = False, num_workers: int = 0, **kwargs: Any):
        unknown = sorted(set(kwargs) - _IGNORED_LOADER_ARGS)
        if unknown:
            raise TypeError(f"DataLoader got an unexpected keyword argument {unknown[0]!r}")
        self._schema = None
        if isinstance(indices, Mapping):
            self._schema, indices = _typed_indices(graph, graph_sampler, indices)
        if not isinstance(graph_sampler, (NeighborSampler, EdgePredictionSampler)):
            raise OptionError(f"graph_sampler must be a sampler of graphloom.dgl.dataloading, "
                              f"got {type(graph_sampler).__name__}", "graph_sampler")
        device = _check.device("device", device if device is not None
                               else graph_sampler.output_device)
        if use_uva and device.type != "cuda":
            raise OptionError("use_uva=True needs a CUDA device (device='cuda')", "use_uva")
        rank, world_size = _ddp_share(use_ddp)
        self.graph_sampler = graph_sampler
        with _check.renamed_arguments(_DGL_NAMES):
            if isinstance(graph_sampler, EdgePredictionSampler):
                stage = graph_sampler._loader_options(graph, indices)
            else:
                stage = dict(items=indices, labels=graph_sampler.prefetch_labels)
            self._loader = _GraphloomLoader(
                graph, sampler=graph_sampler._sampler(graph), batch_size=batch_size,
                shuffle=shuffle, drop_last=drop_last,
                features=graph_sampler.prefetch_node_feats, num_workers=num_workers,
                seed=ddp_seed if use_ddp else None, rank=rank, world_size=world_size,
                device=device, **stage)

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self):
        for batch in self._loader:
            if self._schema is None:
                yield tuple(batch)
                continue
            blocks = [HeteroBlock(block, self._schema) for block in batch.blocks]
            yield blocks[0].srcdata["_ID"], blocks[-1].dstdata["_ID"], blocks


def _typed_indices(graph, graph_sampler, indices):
    """(schema, global ids) of DGL's typed ``indices``: node type -> ids within the type (or a
    boolean mask over them)."""
    schema = graph.schema() if hasattr(graph, "schema") else None
    if schema is None:
        raise OptionError("indices as a dict (node type -> ids) needs a typed graph; this one "
                          "has no node types", "indices")
    if isinstance(graph_sampler, EdgePredictionSampler):
        raise OptionError("indices as a dict of edge types: typed edge prediction is not in "
                          "graphloom.dgl.dataloading yet (give [M, 2] pairs of global ids)",
                          "indices")
    ids = []
    for ntype, local in indices.items():
        if ntype not in schema.node_types:
            raise OptionError(f"indices: no node type {ntype!r} (node types: "
                              f"{schema.node_types})", "indices")
        t = schema.node_types.index(ntype)
        ids.append(schema.global_ids(t, _check.node_ids("indices", local,
                                                         schema.num_nodes_of(t))))
    return schema, torch.cat(ids)


DistNodeDataLoader = DataLoader  # DGL's loaders over a DistGraph: the same class here
DistEdgeDataLoader = DataLoader
