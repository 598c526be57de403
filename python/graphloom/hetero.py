"""Typed graphs in PyG's shape: a batch of a typed dataset as a ``torch_geometric.data.
HeteroData``, with PyG's node and edge type names and per-type local ids."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["Schema"]


class Schema:
    """The types of a typed graph: its node type names, its edge types as PyG's
    ``(src, relation, dst)`` triples (indexed as the blocks' ``edge_types`` values), and which
    nodes have each type. In a dataset node type ``t`` owns the global ids ``offsets[t] ..
    offsets[t + 1] - 1``; in a partitioned graph, whose relabelled ids give each type one range
    per part, ``node_type_of`` names every node's type. A node's id within its type counts the
    nodes of that type before it."""

    def __init__(self, node_types, edge_types, offsets=None, node_type_of=None):
        self.node_types = list(node_types)
        self.edge_types = [tuple(name.split(":")) for name in edge_types]
        self.offsets = offsets
        self.node_type_of = node_type_of
        if node_type_of is not None:
            self._members = [torch.nonzero(node_type_of == t).flatten()
                             for t in range(len(self.node_types))]

    @classmethod
    def of(cls, dataset) -> "Schema | None":
        if not dataset.edge_types:
            return None
        return cls(dataset.node_types, dataset.edge_types, dataset.graph._impl.node_type_offset)

    @classmethod
    def of_partition(cls, impl) -> "Schema | None":
        """The schema of a partitioned graph (a DistGraph's connection)."""
        if not impl.edge_types:
            return None
        return cls(impl.node_types, impl.edge_types, node_type_of=impl.node_type_of())

    def types_of(self, nodes):
        """The node type of each global id."""
        if self.offsets is None:
            return self.node_type_of.to(nodes.device)[nodes]
        return torch.bucketize(nodes, self.offsets[1:].to(nodes.device), right=True)

    def num_nodes_of(self, t) -> int:
        if self.offsets is None:
            return len(self._members[t])
        return int(self.offsets[t + 1] - self.offsets[t])

    def local_ids(self, nodes, t):
        """The ids within type ``t`` of ``nodes`` (global ids, all of type ``t``)."""
        if self.offsets is None:
            return torch.searchsorted(self._members[t].to(nodes.device), nodes)
        return nodes - int(self.offsets[t])

    def global_ids(self, t, local=None):
        """The global ids of type ``t``'s nodes: all of them, or those with ids ``local``
        within the type."""
        if self.offsets is None:
            return self._members[t] if local is None else self._members[t][local]
        first = int(self.offsets[t])
        if local is None:
            return torch.arange(first, first + self.num_nodes_of(t))
        return local + first


def _per_type_positions(types, num_types):
    """For each node, its position among the nodes of its type (order kept), and each type's
    members."""
    positions = torch.empty_like(types)
    members = []
    for t in range(num_types):
        index = torch.nonzero(types == t).flatten()
        positions[index] = torch.arange(index.numel())
        members.append(index)
    return positions, members


def to_hetero_data(batch, schema: Schema) -> Any:
    """``batch`` (a :class:`graphloom.MiniBatch` of a typed graph) as PyG's ``NeighborLoader``
    yields a ``HeteroData``: per node type ``n_id`` (ids within the type), ``x``, ``y`` and
    ``num_sampled_nodes``; ``batch_size`` (and, sampled by time, ``seed_time``) on the seeds'
    types; per edge type ``edge_index``
    (local ids of its end types), ``e_id`` and ``num_sampled_edges``."""
    from torch_geometric.data import HeteroData

    edge_index, edge_ids, hops, edge_counts = batch._pyg_edges()
    edge_types = batch._pyg_edge_attribute("edge_types")
    nodes = batch.input_nodes
    types = schema.types_of(nodes)
    positions, members = _per_type_positions(types, len(schema.node_types))
    hop_of_node = torch.repeat_interleave(torch.arange(len(hops)),
                                          torch.tensor(hops, dtype=torch.int64))
    data = HeteroData()
    features = batch.input_features
    labels = batch._labels_of_input_nodes()
    seed_types = types[: batch.batch_size]
    for t, name in enumerate(schema.node_types):
        index = members[t]
        store = data[name]
        store.n_id = schema.local_ids(nodes[index], t)
        store.num_sampled_nodes = torch.bincount(hop_of_node[index], minlength=len(hops)).tolist()
        for feature, rows in features.items():
            store["x" if feature == "feat" else feature] = rows[index]
        if labels is not None:
            store.y = labels[index]
        seeds_of_type = int((seed_types == t).sum())
        if seeds_of_type:
            store.batch_size = seeds_of_type
            if batch.seed_times is not None and batch.pairs is None:  # PyG's temporal batches
                store.seed_time = batch.seed_times[seed_types == t]
    hop_of_edge = torch.repeat_interleave(torch.arange(len(edge_counts)),
                                          torch.tensor(edge_counts, dtype=torch.int64))
    for r, triple in enumerate(schema.edge_types):
        keep = edge_types == r
        store = data[triple]
        store.edge_index = positions[edge_index[:, keep]]
        if edge_ids is not None:
            store.e_id = edge_ids[keep]
        store.num_sampled_edges = torch.bincount(hop_of_edge[keep],
                                                 minlength=len(edge_counts)).tolist()
    return data
