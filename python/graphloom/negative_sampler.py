"""Negative samplers for link prediction (DGL's ``dgl.dataloading.negative_sampler``): ``k``
corrupted destinations per positive pair, drawn by graphloom's C++ loader with random streams
keyed by (seed, epoch, batch), so a run repeats exactly."""

from __future__ import annotations

from typing import Any

from . import _C, _check
from .errors import OptionError

__all__ = ["DegreeWeighted", "Uniform", "UniformPairs"]


class Uniform:
    """Destinations uniform over every node (DGL's ``negative_sampler.Uniform(k)``).

    Args:
        k: negatives per positive pair.
    """

    def __init__(self, k: int = 1):
        self.k = _check.positive("k", k)

    def _impl(self, graph: Any):
        return _C.UniformNegativeSampler(graph.num_nodes())

    def __repr__(self):
        return f"Uniform(k={self.k})"


class UniformPairs:
    """Negative pairs whose both ends are uniform over the nodes (PyG's binary negative
    sampling in ``LinkNeighborLoader``), ``k`` per positive pair. A model trained against
    these meets negatives like a test set's random non-edges; with :class:`Uniform` every
    negative shares a positive's source.

    Args:
        k: negatives per positive pair.
    """

    def __init__(self, k: int = 1):
        self.k = _check.positive("k", k)

    def _impl(self, graph: Any):
        return _C.UniformNegativeSampler(graph.num_nodes(), True)

    def __repr__(self):
        return f"UniformPairs(k={self.k})"


class DegreeWeighted:
    """Destinations drawn with probability proportional to in-degree ** ``power`` (word2vec's
    unigram^0.75; ``graphloom train --negative-sampler degree``): popular nodes are harder
    negatives.

    Args:
        k: negatives per positive pair.
        power: the exponent of the in-degree (0 is uniform over nodes with in-edges).
    """

    def __init__(self, k: int = 1, power: float = 0.75):
        self.k = _check.positive("k", k)
        self.power = float(power)

    def _impl(self, graph: Any):
        from .data import Dataset

        if not isinstance(graph, Dataset):
            raise OptionError("DegreeWeighted needs the whole graph's degrees: use it with a "
                              "Dataset (Uniform works on a DistGraph too)", "negative_sampler")
        return _C.DegreeNegativeSampler(graph.graph.in_degrees(), self.power)

    def __repr__(self):
        return f"DegreeWeighted(k={self.k}, power={self.power})"
