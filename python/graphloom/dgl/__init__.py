"""DGL's names over graphloom, so that a DGL training script runs by changing its imports:

    import graphloom.dgl as dgl                 # was: import dgl
    import graphloom.dgl.nn as dglnn            # was: import dgl.nn as dglnn

    g = graphloom.load_dataset("data/cora")     # the graph: a Dataset or a DistGraph
    sampler = dgl.dataloading.NeighborSampler([10, 10], prefetch_node_feats=["feat"],
                                              prefetch_labels=["label"])
    loader = dgl.dataloading.DataLoader(g, g.splits["train"], sampler, batch_size=1024,
                                        shuffle=True)
    for input_nodes, output_nodes, blocks in loader:
        x, y = blocks[0].srcdata["feat"], blocks[-1].dstdata["label"]

The blocks are :class:`graphloom.Block` objects with DGL's ``srcdata``, ``dstdata``,
``num_src_nodes()``, ``num_dst_nodes()`` and ``edges()``; :mod:`graphloom.dgl.nn`'s layers
take them. ``NID``/``EID`` name the global ids in ``srcdata``/``dstdata``, as ``dgl.NID``.

On a typed graph, ``indices`` as a dict (node type -> ids within the type) gives DGL's
heterogeneous shape: ``input_nodes`` and ``output_nodes`` are dicts per node type and the
blocks are :class:`HeteroBlock` objects (``srcdata["feat"]["user"]``, ``block["likes"]``),
which ``dglnn.HeteroGraphConv`` takes.
"""

from ..batch import Block
from . import dataloading, nn
from .heterograph import HeteroBlock

NID = "_ID"
EID = "_ID"

__all__ = ["Block", "EID", "HeteroBlock", "NID", "dataloading", "nn"]
