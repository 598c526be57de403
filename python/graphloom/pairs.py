"""The node pairs of a link-prediction batch: PairBatch (the pairs, their negatives and where
each end sits among the batch's seeds), DGL's pair graphs, and the exclusion of the pairs' own
edges from the sampled blocks."""

from __future__ import annotations

import torch

from . import _check

__all__ = ["PairBatch", "PairGraph", "exclude_pairs"]


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
        time: int64 ``[P]``: each pair's time in a temporal batch (``seed_time=``), else None:
            its ends and negatives were sampled at that time.
        src_index, dst_index: int64 ``[P]``; negative_src_index, negative_dst_index: int64
            ``[P * k]``: the positions of the ends among the batch's seeds (the last block's
            output rows).
    """

    def __init__(self, impl, num_seeds):
        self.src, self.dst = impl.src, impl.dst
        self.negative_src, self.negative_dst = impl.negative_src, impl.negative_dst
        self.input_id = _check.optional_tensor(impl.input_id)
        self.time = _check.optional_tensor(impl.time)
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

    def edge_label_time(self):
        """PyG's binary ``edge_label_time``: ``[P + P * k]``, each negative at its positive's
        time; None without times."""
        if self.time is None:
            return None
        return torch.cat([self.time, self.time.repeat_interleave(self.k)])

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
    # The first block's sources hold every node of the batch (each block's are a prefix).
    base = int(blocks[0].src_ids.max()) + 1
    keys = src * base + dst
    if reverse:
        keys = torch.cat([keys, dst * base + src])
    return [_without_keys(block, keys, base, edge_dir) for block in blocks]



def _rescaled(weights, destinations, edge_types):
    """LABOR-*'s importance weights of the edges left, scaled again to sum to each destination's
    (per edge type) count of them, as the sampler scales them."""
    if weights.numel() == 0:
        return weights
    key = destinations
    if edge_types is not None:
        key = destinations * (int(edge_types.max()) + 1) + edge_types
    _, slot = torch.unique(key, return_inverse=True)
    groups = int(slot.max()) + 1
    count = torch.zeros(groups, dtype=weights.dtype).index_add_(0, slot, torch.ones_like(weights))
    total = torch.zeros(groups, dtype=weights.dtype).index_add_(0, slot, weights)
    return weights * (count / total)[slot]


def _without_keys(block, keys, base, edge_dir):
    destinations = block.dst_positions()
    sources, targets = block.src_ids[block.indices], block.src_ids[destinations]
    if edge_dir == "out":  # the block's sources are the graph edges' destinations
        sources, targets = targets, sources
    keep = ~torch.isin(sources * base + targets, keys)
    if bool(keep.all()):
        return block
    kept = object.__new__(type(block))
    kept.src_ids, kept.num_dst = block.src_ids, block.num_dst
    counts = torch.zeros(block.num_dst, dtype=torch.int64).index_add_(
        0, destinations, keep.to(torch.int64))
    kept.indptr = torch.cat([block.indptr[:1], torch.cumsum(counts, 0)])
    kept.indices = block.indices[keep]
    for name in ("edge_ids", "edge_types", "edge_weights"):
        value = getattr(block, name)
        setattr(kept, name, None if value is None else value[keep])
    if kept.edge_weights is not None:
        kept.edge_weights = _rescaled(kept.edge_weights, destinations[keep], kept.edge_types)
    kept.src_times = block.src_times
    kept.srcdata, kept.dstdata = dict(block.srcdata), dict(block.dstdata)
    kept.edata = kept._edge_data()
    return kept
