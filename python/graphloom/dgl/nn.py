"""``dgl.nn``'s layers over graphloom's blocks (:mod:`graphloom.nn`): ``import graphloom.dgl.nn
as dglnn`` in place of ``import dgl.nn as dglnn``."""

from ..nn import GATConv, GraphConv, GraphSAGE, SAGEConv, edge_softmax
from .heterograph import HeteroGraphConv

__all__ = ["GATConv", "GraphConv", "GraphSAGE", "HeteroGraphConv", "SAGEConv", "edge_softmax"]
