"""The mini-batch pipeline from Python: items -> [pairs and negatives] -> neighbor sampling ->
feature and label fetch, run by graphloom's C++ threads ahead of the consumer (DGL's
``DataLoader``, PyG's ``NeighborLoader``, GraphBolt's item sampler over nodes or node pairs)."""

from __future__ import annotations

import collections
from collections.abc import Iterator, Sequence
from typing import Any, Optional

import torch

from . import _C, _check
from .batch import Block, MiniBatch
from .errors import OptionError
from .pairs import exclude_pairs
from .sampling import NeighborSampler

__all__ = ["Block", "MiniBatch", "DataLoader"]


class _DeviceCopies:
    """Batches sent to a CUDA device without blocking (GraphBolt's ``copy_to``). The loader
    gathers their rows into pooled page-locked buffers (``DataLoaderOptions.pin_memory``), so
    the copies need no pinning copy first; each host batch is held until its copies are done,
    and only then do its buffers go back to the pool to be refilled."""

    def __init__(self, device: torch.device):
        self.device = device
        self._in_flight: collections.deque = collections.deque()

    def __call__(self, batch: MiniBatch) -> MiniBatch:
        moved = batch.to(self.device, non_blocking=True)
        done = torch.cuda.Event()
        done.record(torch.cuda.current_stream(self.device))
        self._in_flight.append((done, batch))
        while self._in_flight and self._in_flight[0][0].query():
            self._in_flight.popleft()
        return moved

    def drain(self) -> None:
        """Waits for the copies still in flight, so that the pool may refill their buffers."""
        while self._in_flight:
            self._in_flight.popleft()[0].synchronize()


def _check_source_and_sampler(source, sampler):
    """The source's node count, once the source is a graph source and the sampler samples a
    graph of as many nodes."""
    if not hasattr(source, "label_rows"):
        raise OptionError(f"source must be a graphloom Dataset or DistGraph, got "
                          f"{type(source).__name__}", "source")
    if not isinstance(sampler, NeighborSampler):
        raise OptionError(f"sampler must be a graphloom NeighborSampler, got "
                          f"{type(sampler).__name__}", "sampler")
    num_nodes = source.num_nodes()
    if sampler.num_nodes != num_nodes:
        raise OptionError(f"sampler's graph has {sampler.num_nodes} nodes, the source "
                          f"{num_nodes}", "sampler")
    return num_nodes


def _check_rows(source, features, labels, node_items):
    """Whether to gather labels (default: node items of a labelled source), once the source
    has every feature asked for, and labels when asked for."""
    known = source.feature_names()
    missing = [name for name in features if name not in known]
    if missing:
        raise OptionError(f"features: the source has no feature {missing[0]!r} (it has "
                          f"{sorted(known) or 'none'}; pass features=() for none)", "features")
    if labels is None:
        return source.has_labels() and node_items
    if labels and not source.has_labels():
        raise OptionError("labels=True, but the dataset has no labels (pass labels=False)",
                          "labels")
    return bool(labels)


def _pair_items(items):
    """`items` as int64 [M, 2] node pairs when they are pairs, else None (node items)."""
    if isinstance(items, torch.Tensor) and items.dim() == 2:
        if items.shape[1] != 2:
            raise OptionError(f"items: node pairs must have shape [M, 2], got "
                              f"{list(items.shape)}", "items")
        return _check.integer_tensor("items", items, dim=2).contiguous()
    return None


def _pair_times(sampler, pairs, seed_time):
    """Each pair's time for a temporal sampler (``seed_time``, PyG's ``edge_label_time``);
    None for a sampler without times."""
    if not sampler.temporal:
        if seed_time is not None:
            raise OptionError("seed_time needs a temporal sampler (node_time= or edge_time=)",
                              "seed_time")
        return None
    if seed_time is None:
        raise OptionError("seed_time: temporal link prediction needs each pair's time (PyG's "
                          "edge_label_time)", "seed_time")
    return _check.times("seed_time", seed_time, pairs.shape[0])


def _pair_stage(source, negative_sampler, seed, rank):
    """The C++ loader's pair stage: negatives drawn with this loader's seed, a stream per rank."""
    stage = _C.PairStage()
    if negative_sampler is not None:
        if not hasattr(negative_sampler, "_impl"):
            raise OptionError(f"negative_sampler must be one of graphloom.negative_sampler's, "
                              f"got {type(negative_sampler).__name__}", "negative_sampler")
        stage.negatives = negative_sampler._impl(source)
        stage.negatives_per_pair = negative_sampler.k
    stage.seed, stage.stream = seed, rank
    return stage


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
            ``dataset.splits["train"]``); or, for link prediction, node pairs: int64 ``[M, 2]``
            (source, destination) rows (``dataset.edge_splits["train"]``, or
            ``graph.edge_index().t()`` for every edge). Each batch of pairs then has
            :attr:`MiniBatch.pairs`, and its seeds are the pairs' distinct ends.
        sampler: a :class:`NeighborSampler` over the dataset's graph.
        batch_size: seeds per batch.
        shuffle: a new permutation of the items every epoch.
        drop_last: drop the last, smaller batch.
        features: names of the node features gathered for the input nodes; () for none.
        labels: gather the seeds' labels (the dataset must have labels). Default: when the
            items are nodes and the source has labels.
        negative_sampler: with pair items, draws ``k`` corrupted destinations per pair
            (:mod:`graphloom.negative_sampler`); None: positives only.
        exclude: with pair items, drop from the sampled blocks the edges that join a batch's
            pairs, so that a model cannot read the answer from the graph: ``"self"`` (the
            pairs' own edges, ``(src, dst)``), ``"reverse"`` (and ``(dst, src)``, for graphs
            that store both directions) or None. Matched by end nodes, after sampling
            (GraphBolt's ``exclude_seed_edges``).
        pyg_edges: build PyG's ``edge_index``, ``e_id`` and per-hop counts, and gather the
            labels of every input node (PyG's ``y``), in the worker threads ahead of the
            consumer, so that :meth:`MiniBatch.to_pyg` only wraps tensors (graphloom.pyg's
            loaders turn it on).
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
        seed_time: with a temporal sampler (``node_time=``/``edge_time=``), the time of each
            item (PyG's ``input_time``; for pairs, ``edge_label_time``); default for nodes:
            their node times; pairs need it. Each seed then reaches only what was there at its
            time (:class:`NeighborSampler`); a pair's ends and negatives are seeds at the
            pair's time (``PairBatch.time``), and a node at two times is two seeds.
        device: where the batches are delivered (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a
            ``torch.device``; default: the CPU, where they are prepared). On a CUDA device the
            workers gather rows into page-locked buffers and each batch is copied without
            blocking (GraphBolt's ``copy_to``).

    ``len(loader)`` is the number of batches per epoch; each iteration runs the next epoch.
    Leaving an epoch early (``break``, an exception, Ctrl-C) stops the threads; so does
    garbage collection of the loader.
    """

    def __init__(self, source: Any, items: Any, sampler: NeighborSampler, batch_size: int,
                 shuffle: bool = False, drop_last: bool = False,
                 features: Sequence[str] = ("feat",), labels: Optional[bool] = None,
                 num_workers: int = 1, prefetch: int = 2, seed: Optional[int] = None,
                 rank: Optional[int] = None, world_size: Optional[int] = None,
                 device: Any = None, negative_sampler: Any = None,
                 exclude: Optional[str] = None, pyg_edges: bool = False,
                 seed_time: Any = None):
        pairs = _pair_items(items)
        if pairs is None and (negative_sampler is not None or exclude is not None):
            name = "negative_sampler" if negative_sampler is not None else "exclude"
            raise OptionError(f"{name} is for link prediction: pass node pairs ([M, 2]) as "
                              f"items", name)
        self.exclude = _check.choice("exclude", exclude, (None, "self", "reverse"))
        self.device = _check.device("device", device)
        num_nodes = _check_source_and_sampler(source, sampler)
        features = (features,) if isinstance(features, str) else tuple(features)
        labels = _check_rows(source, features, labels, pairs is None)
        if source._items_split and rank is None and world_size is None:
            rank, world_size = 0, 1  # node_split already gave this trainer its share
        rank, world_size = _default_rank_and_world_size(rank, world_size)
        seed = _default_seed(seed, world_size)
        item_options = _C.ItemSamplerOptions()
        item_options.batch_size = _check.positive("batch_size", batch_size)
        item_options.shuffle, item_options.drop_last = bool(shuffle), bool(drop_last)
        item_options.rank, item_options.world_size, item_options.seed = rank, world_size, seed
        options = _C.DataLoaderOptions()
        options.num_workers = 1 if num_workers == 0 else num_workers
        options.prefetch = prefetch
        options.feature_names = list(features)
        options.label_name = "label" if labels else ""
        options.pyg_layout = bool(pyg_edges)
        options.pin_memory = self.device.type == "cuda"
        self.sampler = sampler
        self._label_rows = source.label_rows if labels else None
        self._schema = source.schema()
        stage = None
        if pairs is None:
            self.items = _check.node_ids("items", items, num_nodes)
            items = self.items
            times = sampler.seed_times(self.items, seed_time)
            if times is not None:  # each seed's time travels with it as a second column
                items = torch.stack([self.items, times], 1)
        else:  # each pair's position travels with it as a third column (PairBatch.input_id)
            _check.node_ids("items", pairs.flatten(), num_nodes)
            self.items = pairs
            stage = _pair_stage(source, negative_sampler, seed, rank)
            items = torch.cat([pairs, torch.arange(pairs.shape[0]).unsqueeze(1)], 1)
            times = _pair_times(sampler, pairs, seed_time)
            if times is not None:  # and each pair's time as a fourth (PairBatch.time)
                items = torch.cat([items, times.unsqueeze(1)], 1)
        self._impl = _C.DataLoader(sampler._handle(seed), source._rows, items, item_options,
                                   options, stage, sampler.temporal)
        self._epoch = 0

    def __len__(self) -> int:
        return self._impl.num_batches

    def __iter__(self) -> Iterator[MiniBatch]:
        epoch = self._epoch
        self._epoch += 1
        self._impl.start_epoch(epoch)
        deliver = _DeviceCopies(self.device) if self.device.type == "cuda" else None
        try:
            while True:
                batch = self._impl.next()
                if batch is None:
                    return
                batch = MiniBatch(batch, self._label_rows, self._schema)
                if self.exclude is not None and batch.pairs is not None:
                    batch._replace_blocks(exclude_pairs(
                        batch.blocks, batch.pairs.src, batch.pairs.dst,
                        self.exclude == "reverse", self.sampler.edge_dir))
                yield batch if deliver is None else deliver(batch)
        finally:
            if deliver is not None:
                deliver.drain()
            self._impl.cancel()
