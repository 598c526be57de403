"""Typed batches in DGL's shape: a sampled block of a typed graph as DGL's heterogeneous block
(per node type sources and destinations, per edge type relation graphs) and DGL's
``HeteroGraphConv`` over it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

import torch

from ..batch import Block
from ..errors import OptionError

__all__ = ["HeteroBlock", "HeteroGraphConv", "RelationBlock"]

EdgeType = Union[str, Sequence[str]]


class RelationBlock(Block):
    """One edge type of a :class:`HeteroBlock`: a bipartite block from the source type's
    nodes to the destination type's, usable by graphloom.nn's layers with a
    ``(feat_src, feat_dst)`` input. ``src_ids`` and ``dst_ids`` are global ids."""

    __slots__ = ("_dst_ids",)

    @property
    def dst_ids(self):
        return self._dst_ids


def _relation_block(src_ids, dst_ids, indptr, indices, edge_weights):
    block = object.__new__(RelationBlock)
    block.src_ids, block._dst_ids, block.num_dst = src_ids, dst_ids, dst_ids.numel()
    block.indptr, block.indices = indptr, indices
    block.edge_ids = block.edge_types = block.src_times = None
    block.edge_weights = edge_weights
    block.srcdata, block.dstdata = {"_ID": src_ids}, {"_ID": dst_ids}
    block.edata = {} if edge_weights is None else {"edge_weights": edge_weights}
    return block


class HeteroBlock:
    """A block of a typed graph as DGL's heterogeneous block.

    Per node type ``t``: ``num_src_nodes(t)`` sources, of which the first
    ``num_dst_nodes(t)`` are the destinations (DGL's order); ``srcdata[key][t]`` /
    ``dstdata[key][t]`` their rows (``"_ID"``: ids within the type, as ``dgl.NID``). Per edge
    type: ``block[etype]`` (a :class:`RelationBlock`) and ``edges(etype=...)``, with ids
    local to the source and destination types. ``etype`` is a relation name (when no other
    edge type has it) or a ``(src, relation, dst)`` triple, as in DGL.
    """

    def __init__(self, block: Block, schema: Any):
        self.block, self.schema = block, schema
        self.ntypes = self.srctypes = self.dsttypes = list(schema.node_types)
        self.canonical_etypes = list(schema.edge_types)
        self.etypes = [relation for _, relation, _ in self.canonical_etypes]
        types = schema.types_of(block.src_ids)
        # Positions in the block's sources of each type's nodes: destinations lead the sources,
        # so within a type too.
        self._members = [torch.nonzero(types == t).flatten() for t in range(len(self.ntypes))]
        device = block.indptr.device
        self._num_dst = [int((m < block.num_dst).sum()) for m in self._members]
        self._position = torch.empty_like(types)
        for members in self._members:
            self._position[members] = torch.arange(members.numel(), device=device)
        self._relations = {}
        self.srcdata = self._per_type(block.srcdata, destinations=False)
        self.dstdata = self._per_type(block.dstdata, destinations=True)

    def _per_type(self, data, destinations):
        out = {}
        for key, rows in data.items():
            out[key] = {}
            for t, name in enumerate(self.ntypes):
                members = self._members[t][: self._num_dst[t]] if destinations else self._members[t]
                if key == "_ID":
                    out[key][name] = self.schema.local_ids(self.block.src_ids[members], t)
                else:
                    out[key][name] = rows[members]
        return out

    def _ntype(self, ntype):
        if ntype is None:
            if len(self.ntypes) == 1:
                return 0
            raise OptionError(f"ntype: the block has node types {self.ntypes}; name one",
                              "ntype")
        if ntype not in self.ntypes:
            raise OptionError(f"ntype: no node type {ntype!r} (node types: {self.ntypes})",
                              "ntype")
        return self.ntypes.index(ntype)

    def canonical_etype(self, etype: EdgeType):
        """DGL's ``to_canonical_etype``: the ``(src, relation, dst)`` triple of ``etype``."""
        if not isinstance(etype, str):
            triple = tuple(etype)
            if triple in self.canonical_etypes:
                return triple
        else:
            matches = [t for t in self.canonical_etypes if t[1] == etype]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise OptionError(f"etype: {etype!r} names {len(matches)} edge types {matches}; "
                                  f"give the triple", "etype")
        raise OptionError(f"etype: no edge type {etype!r} (edge types: "
                          f"{self.canonical_etypes})", "etype")

    def num_src_nodes(self, ntype: Optional[str] = None) -> int:
        return self._members[self._ntype(ntype)].numel()

    def num_dst_nodes(self, ntype: Optional[str] = None) -> int:
        return self._num_dst[self._ntype(ntype)]

    def num_edges(self, etype: Optional[EdgeType] = None) -> int:
        if etype is None:
            return self.block.num_edges
        return self[etype].num_edges

    def __getitem__(self, etype: EdgeType) -> RelationBlock:
        triple = self.canonical_etype(etype)
        if triple not in self._relations:
            self._relations[triple] = self._relation(triple)
        return self._relations[triple]

    def _relation(self, triple):
        src_type, dst_type = self.ntypes.index(triple[0]), self.ntypes.index(triple[2])
        block = self.block
        keep = block.edge_types == self.canonical_etypes.index(triple)
        # The block's edges come by destination, so the kept ones are already in the order of
        # their destinations' positions within the destination type.
        targets = self._position[block.dst_positions()[keep]]
        num_dst = self._num_dst[dst_type]
        indptr = torch.zeros(num_dst + 1, dtype=torch.int64, device=targets.device)
        indptr[1:] = torch.cumsum(torch.bincount(targets, minlength=num_dst), 0)
        src_members = self._members[src_type]
        return _relation_block(block.src_ids[src_members],
                               block.src_ids[self._members[dst_type][:num_dst]], indptr,
                               self._position[block.indices[keep]],
                               None if block.edge_weights is None else block.edge_weights[keep])

    def edges(self, etype: Optional[EdgeType] = None):
        """DGL's ``block.edges(etype=...)``: (source, destination) ids local to their types."""
        if etype is None:
            if len(self.canonical_etypes) == 1:
                etype = self.canonical_etypes[0]
            else:
                raise OptionError(f"etype: the block has edge types {self.canonical_etypes}; "
                                  f"name one", "etype")
        return self[etype].edges()

    def __repr__(self):
        return (f"HeteroBlock(num_src_nodes={dict(zip(self.ntypes, map(len, self._members)))}, "
                f"num_dst_nodes={dict(zip(self.ntypes, self._num_dst))}, "
                f"num_edges={self.block.num_edges}, edge_types={self.canonical_etypes})")


_AGGREGATES: dict[str, Callable[[list], torch.Tensor]] = {
    "sum": lambda outs: torch.stack(outs).sum(0),
    "mean": lambda outs: torch.stack(outs).mean(0),
    "max": lambda outs: torch.stack(outs).max(0).values,
    "min": lambda outs: torch.stack(outs).min(0).values,
    "stack": lambda outs: torch.stack(outs, 1),
}


class HeteroGraphConv(torch.nn.Module):
    """DGL's ``HeteroGraphConv``: one module per edge type (keyed by relation name, or by the
    ``"src:relation:dst"`` / triple of a relation that several edge types share), applied to
    each relation graph of a :class:`HeteroBlock` with its source and destination types'
    inputs (``inputs``: node type -> the rows of its source nodes, destinations first); each
    destination type's results are aggregated (``sum``, ``mean``, ``max``, ``min``,
    ``stack``). Edge types without a module, without edges, or whose end types have no input
    are skipped, as in DGL."""

    def __init__(self, mods: Mapping[Any, torch.nn.Module], aggregate: str = "sum"):
        super().__init__()
        if aggregate not in _AGGREGATES:
            raise OptionError(f"aggregate={aggregate!r}: one of {sorted(_AGGREGATES)}",
                              "aggregate")
        self.mods = torch.nn.ModuleDict({self._key(name): mod for name, mod in mods.items()})
        self.aggregate = aggregate

    @staticmethod
    def _key(etype):
        return etype if isinstance(etype, str) else ":".join(etype)

    def _module(self, triple):
        for key in (triple[1], ":".join(triple)):
            if key in self.mods:
                return self.mods[key]
        return None

    def forward(self, g: HeteroBlock, inputs: Mapping[str, torch.Tensor],
                mod_args: Optional[Mapping] = None, mod_kwargs: Optional[Mapping] = None):
        outputs = {name: [] for name in g.dsttypes}
        for triple in g.canonical_etypes:
            module = self._module(triple)
            src_type, _, dst_type = triple
            if (module is None or src_type not in inputs or dst_type not in inputs
                    or g.num_edges(triple) == 0):
                continue
            dst_input = inputs[dst_type][: g.num_dst_nodes(dst_type)]
            key = triple[1]
            args = (mod_args or {}).get(key, ())
            kwargs = (mod_kwargs or {}).get(key, {})
            outputs[dst_type].append(module(g[triple], (inputs[src_type], dst_input), *args,
                                            **kwargs))
        return {name: _AGGREGATES[self.aggregate](outs) for name, outs in outputs.items() if outs}
