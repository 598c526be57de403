"""Typed graphs in PyG's shape: a batch of a typed dataset as a ``torch_geometric.data.
HeteroData``, with PyG's node and edge type names and per-type local ids."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["Schema"]


class Schema:
    """The types of a typed dataset: node type ``t`` owns the global ids
    ``offsets[t] .. offsets[t + 1] - 1``; edge types are PyG's ``(src, relation, dst)``
    triples, indexed as the blocks' ``edge_types`` values."""

    def __init__(self, node_types, edge_types, offsets):
        self.node_types = list(node_types)
        self.edge_types = [tuple(name.split(":")) for name in edge_types]
        self.offsets = offsets

    @classmethod
    def of(cls, dataset) -> "Schema | None":
        if not dataset.edge_types:
            return None
        return cls(dataset.node_types, dataset.edge_types, dataset.graph._impl.node_type_offset)

    def types_of(self, nodes):
        """The node type of each global id."""
        return torch.bucketize(nodes, self.offsets[1:], right=True)


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
    ``num_sampled_nodes``; ``batch_size`` on the seeds' types; per edge type ``edge_index``
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
        store.n_id = nodes[index] - schema.offsets[t]
        store.num_sampled_nodes = torch.bincount(hop_of_node[index], minlength=len(hops)).tolist()
        for feature, rows in features.items():
            store["x" if feature == "feat" else feature] = rows[index]
        if labels is not None:
            store.y = labels[index]
        seeds_of_type = int((seed_types == t).sum())
        if seeds_of_type:
            store.batch_size = seeds_of_type
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
