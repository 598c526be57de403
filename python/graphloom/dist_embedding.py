"""DGL's distributed embeddings: ``DistEmbedding``, whose rows live on the graph servers that
own the nodes, and the ``SparseAdam`` / ``SparseAdagrad`` steps those servers apply. Reached as
``graphloom.distributed.DistEmbedding`` (DGL's ``dgl.distributed.DistEmbedding``) and
``graphloom.distributed.SparseAdam`` (``dgl.distributed.optim.SparseAdam``).
"""

import torch

from . import _C
from . import distributed as _distributed
from .errors import OptionError

__all__ = ["DistEmbedding", "SparseAdam", "SparseAdagrad"]


class DistEmbedding:
    """Learnable node embeddings whose rows live on the servers owning the nodes (DGL's
    ``DistEmbedding``): ``emb(ids)`` pulls the rows of a batch (recording them for the
    gradient), and a :class:`SparseAdam` or :class:`SparseAdagrad` step has the owners apply
    the summed gradient of each row. No trainer holds the whole table, and it is not part of
    the model's parameters (DDP does not allreduce it).

    Args:
        num_embeddings: must be the graph's number of nodes.
        embedding_dim: the width of a row.
        name: the servers' tensor name; every trainer must use the same one.
        init_func: as in DGL, ``init_func(shape, dtype)`` returns initial rows of a ``shape``
            (e.g. ``lambda shape, dtype: torch.zeros(shape, dtype=dtype)``): each trainer
            calls it for its share of the rows and writes them, and all wait for each other, so
            every trainer must construct the embedding. Default: uniform rows (below).
        init_scale: without init_func, rows start uniform in ``[-init_scale, init_scale)``,
            keyed by ``seed`` and node id, so every trainer sees the same values.
        seed: the uniform initialization's random seed.
        graph: the DistGraph (default: the last one created).
    """

    def __init__(self, num_embeddings, embedding_dim, name, init_func=None, init_scale=1.0,
                 seed=0, graph=None):
        self._graph = graph or _distributed._default_graph
        if self._graph is None:
            raise OptionError("DistEmbedding needs a DistGraph (create one first)", "graph")
        if num_embeddings != self._graph.num_nodes():
            raise OptionError(f"num_embeddings must be the graph's number of nodes "
                              f"({self._graph.num_nodes()}), got {num_embeddings}",
                              "num_embeddings")
        if not isinstance(embedding_dim, int) or embedding_dim < 1:
            raise OptionError(f"embedding_dim must be a positive integer, got {embedding_dim!r}",
                              "embedding_dim")
        self.name, self.num_embeddings, self.embedding_dim = name, num_embeddings, embedding_dim
        self._init = (float(init_scale), int(seed))
        self._handles = {}  # per optimizer: the servers keep one state per kind
        self._trace = []  # (ids, rows) pulled with autograd on since the last step
        if init_func is not None:
            self._handle()  # creates the rows (and the default optimizer's state)
            _distributed._write_initial_rows(self._graph, name, num_embeddings,
                                             (embedding_dim,), torch.float32, init_func)

    def _handle(self, optimizer=None):
        key = None if optimizer is None else (optimizer.kind, optimizer.lr, optimizer.eps,
                                              optimizer.beta1, optimizer.beta2)
        if key not in self._handles:
            options = optimizer or _C.SparseOptimizerOptions()
            self._handles[key] = _C.DistEmbedding(self._graph._impl, self.name,
                                                  self.embedding_dim, options, *self._init)
        return self._handles[key]

    def __call__(self, ids):
        ids = torch.as_tensor(ids, dtype=torch.int64)
        handle = next(iter(self._handles.values())) if self._handles else self._handle()
        rows = handle.pull(ids)
        if torch.is_grad_enabled():
            rows.requires_grad_(True)
            self._trace.append((ids, rows))
        return rows

    def __repr__(self):
        return (f"DistEmbedding(name={self.name!r}, num_embeddings={self.num_embeddings}, "
                f"embedding_dim={self.embedding_dim})")


class _SparseOptimizer:
    kind = None

    def __init__(self, params, lr, eps=1e-8, betas=(0.9, 0.999)):
        self.embeddings = list(params)
        if not all(isinstance(e, DistEmbedding) for e in self.embeddings):
            raise OptionError(f"{type(self).__name__} takes DistEmbeddings", "params")
        self.options = _C.SparseOptimizerOptions()
        self.options.kind = self.kind
        self.options.lr, self.options.eps = float(lr), float(eps)
        self.options.beta1, self.options.beta2 = float(betas[0]), float(betas[1])
        for embedding in self.embeddings:
            embedding._handle(self.options)  # creates this optimizer's state on the servers

    def step(self):
        """Sends each embedding's gradients (rows repeated in a batch summed) to their owners,
        which apply one optimizer step per row."""
        for embedding in self.embeddings:
            handle = embedding._handle(self.options)
            for ids, rows in embedding._trace:
                if rows.grad is not None:
                    handle.step(ids, rows.grad)
            embedding._trace.clear()

    def zero_grad(self):
        for embedding in self.embeddings:
            embedding._trace.clear()


class SparseAdam(_SparseOptimizer):
    """Adam on the rows a batch touched, applied by the rows' owners (DGL's
    ``dgl.distributed.optim.SparseAdam``)."""

    kind = "adam"


class SparseAdagrad(_SparseOptimizer):
    """Adagrad on the rows a batch touched, applied by the rows' owners (DGL's
    ``dgl.distributed.optim.SparseAdagrad``)."""

    kind = "adagrad"

    def __init__(self, params, lr, eps=1e-10):
        super().__init__(params, lr, eps=eps)
