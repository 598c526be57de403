"""graphloom for PyG users: PyG's loaders run by graphloom (``NeighborLoader``,
``LinkNeighborLoader``: change the import, keep the script), and PyG's remote-backend
``FeatureStore`` / ``GraphStore`` over graphloom's data, for PyG's own loaders. Needs
torch_geometric (imported here, not by ``import graphloom``)."""

from .loaders import LinkNeighborLoader, NeighborLoader
from .stores import FeatureStore, GraphStore, from_dataset

__all__ = ["FeatureStore", "GraphStore", "LinkNeighborLoader", "NeighborLoader", "from_dataset"]
