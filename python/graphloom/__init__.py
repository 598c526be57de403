"""graphloom: graph neural network training on graphs too big for one machine, from PyTorch.

The engine is C++ (graphloom._C); this package binds it with the names of the systems its
users come from:

    import graphloom
    dataset = graphloom.load_dataset("data/cora")
    sampler = graphloom.NeighborSampler(dataset.graph, fanouts=[10, 10])
    loader = graphloom.DataLoader(dataset, dataset.splits["train"], sampler, batch_size=1024,
                                  shuffle=True)
    for batch in loader:
        batch.blocks, batch.input_features["feat"], batch.labels  # DGL style
        data = batch.to_pyg()                                      # PyG style

Node pairs as items make link-prediction batches (``negative_sampler=``, ``exclude=``).
``graphloom.dgl`` and ``graphloom.pyg`` carry each ecosystem's own names, so that a script
changes its imports and nothing else: ``graphloom.dgl.dataloading`` (DGL's samplers,
``as_edge_prediction_sampler`` and ``DataLoader``), ``graphloom.pyg.NeighborLoader`` and
``LinkNeighborLoader`` (no pyg-lib needed), and PyG's ``FeatureStore`` / ``GraphStore``.
``graphloom.distributed`` has DGL's ``initialize``, ``DistGraph``, ``node_split`` and
``DistTensor`` for trainers run by ``graphloom launch``; ``graphloom.nn`` DGL's ``SAGEConv``
over blocks in plain PyTorch. Errors are the exceptions of :mod:`graphloom.errors`.
"""

import torch as _torch  # libtorch must be loaded before _C, which links it

try:
    from . import _C
except ImportError as _error:  # pragma: no cover - a build for another torch
    raise ImportError(
        f"graphloom's compiled module does not load with torch {_torch.__version__} "
        f"({_error}). It is built against the torch of the project's .venv: reinstall "
        f"graphloom (bash scripts/build.sh) after changing torch.") from _error

from .data import CSCGraph, Dataset, convert, load_dataset, partition, save_dataset
from .errors import Error, IdError, MissingFileError, OptionError
from .batch import Block, MiniBatch
from .loader import DataLoader
from .pairs import PairBatch
from .sampling import LayerNeighborSampler, NeighborSampler
from . import distributed, negative_sampler, nn  # noqa: E402  (DGL's dgl.distributed, dgl.nn)

__version__ = "0.1.0"

__all__ = [
    "Block", "CSCGraph", "DataLoader", "Dataset", "Error", "IdError", "LayerNeighborSampler",
    "MiniBatch", "PairBatch",
    "MissingFileError", "NeighborSampler", "OptionError", "convert", "load_dataset",
    "partition", "save_dataset",
]
