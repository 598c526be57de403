"""Distributed training with DGL's names: ``initialize``, ``DistGraph``, ``node_split``,
``DistTensor``, over graphloom's graph servers. A DGL script ports by changing its imports:

    import graphloom.distributed as gd
    gd.initialize()                       # what `graphloom launch` set; also torch.distributed
    g = gd.DistGraph()
    train_nids = gd.node_split(g.ndata["train_mask"], g.get_partition_book())
    sampler = graphloom.NeighborSampler(g, fanouts=[10, 25])
    loader = graphloom.DataLoader(g, train_nids, sampler, batch_size=1024, shuffle=True)

Run it with ``graphloom launch --ip-config ip.txt --part-config PARTS --num-trainers N
--token-file token -- python train.py``: launch starts the servers of every machine and gives
each trainer the cluster in its environment (GRAPHLOOM_IP_CONFIG, GRAPHLOOM_PART_CONFIG,
GRAPHLOOM_MACHINE, ...) and torchrun's RANK / WORLD_SIZE / MASTER_ADDR. This machine's part is
read from the servers' shared memory, the others over RPC, as the C++ trainers do.
"""

import os

import torch

from . import _C, _check
from .errors import OptionError

__all__ = ["initialize", "DistGraph", "DistTensor", "DistEmbedding", "GraphPartitionBook",
           "SparseAdam", "SparseAdagrad", "edge_split", "node_split"]

_config = None
_default_graph = None


def _environment_int(name, default):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as error:
        raise OptionError(f"environment variable {name} must be an integer, got {value!r}",
                          name) from error


def initialize(ip_config=None, part_config=None, num_servers=None, token_file=None,
               cluster_id=None, machine=None, init_process_group=True, tls_ca=None,
               tls_cert=None, tls_key=None):
    """Reads this trainer's cluster (DGL's ``dgl.distributed.initialize``).

    Every argument defaults to what ``graphloom launch`` put in the environment
    (GRAPHLOOM_IP_CONFIG, GRAPHLOOM_PART_CONFIG, GRAPHLOOM_NUM_SERVERS, GRAPHLOOM_TOKEN_FILE,
    GRAPHLOOM_CLUSTER_ID, GRAPHLOOM_MACHINE, GRAPHLOOM_TLS_CA, GRAPHLOOM_TLS_CERT,
    GRAPHLOOM_TLS_KEY): the same description of the cluster the C++ trainer takes as flags.

    Args:
        ip_config: the ip config, one machine per line (``IP PORT``).
        part_config: the partition directory (or its partition.json).
        num_servers: servers per machine.
        token_file: the cluster token (else GRAPHLOOM_TOKEN, else none).
        cluster_id: the servers' cluster id, to map this machine's part from shared memory
            ("": every part over RPC).
        machine: this trainer's machine (its line of the ip config); default: RANK divided by
            the trainers per machine.
        init_process_group: also initialize ``torch.distributed`` (gloo, from torchrun's
            variables) when the job has several trainers and the script has not done it.
        tls_ca: TLS to servers run with ``--tls-cert``: the CA (or self-signed certificate)
            that signed their certificates (PEM).
        tls_cert, tls_key: this trainer's certificate and key, for servers that require client
            certificates (their ``--tls-ca``).
    """
    global _config
    config = _C.ClusterOptions.from_environment()
    given = dict(ip_config=ip_config, part_config=part_config, token_file=token_file,
                 cluster_id=cluster_id, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key)
    for name, value in given.items():
        if value is not None:
            setattr(config, name, str(value))
    if not config.ip_config:
        raise OptionError("initialize: no ip_config (pass it, or run under graphloom launch, "
                          "which sets GRAPHLOOM_IP_CONFIG)", "ip_config")
    for name in ("ip_config", "part_config", "token_file", "tls_ca", "tls_cert", "tls_key"):
        if getattr(config, name):  # an empty part_config: DistGraph(part_config=...) names it
            setattr(config, name, _check.existing_path(name, getattr(config, name)))
    if num_servers is not None:
        config.num_servers = _check.positive("num_servers", num_servers)
    rank = _environment_int("RANK", 0)
    world_size = _environment_int("WORLD_SIZE", 1)
    per_machine = _environment_int("GRAPHLOOM_NUM_TRAINERS",
                                   _environment_int("LOCAL_WORLD_SIZE", 1))
    if machine is not None:
        config.machine = _check.non_negative("machine", machine)
    elif config.machine < 0:
        config.machine = rank // per_machine
    _config = (config, _environment_int("LOCAL_RANK", rank % per_machine), per_machine)
    import torch.distributed as dist

    if init_process_group and world_size > 1 and not dist.is_initialized():
        dist.init_process_group("gloo")


def _require_config():
    if _config is None:
        raise OptionError("call graphloom.distributed.initialize() first", "initialize")
    return _config


class GraphPartitionBook:
    """Which machine owns each node (DGL's ``GraphPartitionBook``): part k owns the contiguous
    ids ``[range_ends[k - 1], range_ends[k])``."""

    def __init__(self, graph):
        self._graph = graph
        self.range_ends = list(graph._impl.range_ends)

    @property
    def partid(self):
        """This trainer's part (its machine)."""
        return self._graph._impl.machine

    def num_partitions(self):
        return len(self.range_ends)

    def nid2partid(self, ids):
        return self._graph._impl.owner_of(torch.as_tensor(ids, dtype=torch.int64))

    def metadata(self):
        begins = [0] + self.range_ends[:-1]
        return [{"machine_id": k, "num_nodes": end - begin}
                for k, (begin, end) in enumerate(zip(begins, self.range_ends))]


def _write_initial_rows(graph, name, num_rows, row_shape, dtype, init_func):
    """DGL's ``init_func``: each trainer writes ``init_func(shape, dtype)`` into its 1/world
    share of the rows (by global rank, contiguous), then every trainer waits for the others,
    so that no one reads a row before it is written. Every trainer must make the call."""
    import torch.distributed as dist

    ready = dist.is_available() and dist.is_initialized()
    if not ready and _environment_int("WORLD_SIZE", 1) > 1:
        raise OptionError("init_func needs torch.distributed to be initialized (every trainer "
                          "writes its share of the rows, then they wait for each other); "
                          "call initialize() with init_process_group=True", "init_func")
    rank, world = (dist.get_rank(), dist.get_world_size()) if ready else (0, 1)
    begin, end = rank * num_rows // world, (rank + 1) * num_rows // world
    shape = (end - begin, *row_shape)
    rows = torch.as_tensor(init_func(shape, dtype))
    if tuple(rows.shape) != shape:
        raise OptionError(f"init_func({shape}, {dtype}) must return a tensor of that shape, "
                          f"got {tuple(rows.shape)}", "init_func")
    graph._impl.push(name, torch.arange(begin, end, dtype=torch.int64), rows.to(dtype))
    if ready and world > 1:
        dist.barrier()


class DistTensor:
    """A node tensor split over the servers by the partition book (DGL's ``DistTensor``):
    ``t[ids]`` pulls rows, ``t[ids] = rows`` pushes them to their owners.

    ``DistTensor(shape, dtype, name)`` creates one (zeros) on every server, or attaches to the
    one of that name and schema; ``shape[0]`` must be the graph's number of nodes.

    Args:
        shape: ``(num_nodes, *row_shape)``.
        dtype: a torch dtype.
        name: the servers' tensor name; every trainer must use the same one.
        init_func: as in DGL, ``init_func(shape, dtype)`` returns the initial rows of a
            ``shape``: each trainer calls it for its share of the rows and writes them, and all
            wait for each other (every trainer must then construct the tensor). Default: zeros.
        graph: the DistGraph (default: the last one created).
    """

    def __init__(self, shape, dtype, name=None, init_func=None, graph=None, _existing=False):
        self._graph = graph or _default_graph
        if self._graph is None:
            raise OptionError("DistTensor needs a DistGraph (create one first)", "graph")
        shape = tuple(int(s) for s in shape)
        if not shape or shape[0] != self._graph.num_nodes():
            raise OptionError(f"DistTensor shape must start with the number of nodes "
                              f"({self._graph.num_nodes()}), got {shape}", "shape")
        if name is None:
            raise OptionError("DistTensor needs a name (every trainer must use the same one)",
                              "name")
        self.name, self.shape, self.dtype = name, shape, dtype
        if not _existing:
            self._graph._impl.create_tensor(name, dtype, list(shape[1:]))
        if init_func is not None:
            _write_initial_rows(self._graph, name, shape[0], shape[1:], dtype, init_func)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, ids):
        return self._graph._impl.pull(self.name, torch.as_tensor(ids, dtype=torch.int64))

    def __setitem__(self, ids, rows):
        ids = torch.as_tensor(ids, dtype=torch.int64)
        self._graph._impl.push(self.name, ids, torch.as_tensor(rows, dtype=self.dtype))

    def __repr__(self):
        return f"DistTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype})"


_SPLIT_MASKS = {"train_mask": "train", "val_mask": "valid", "valid_mask": "valid",
                "test_mask": "test"}


class _NodeData(dict):
    """``g.ndata``: the servers' node tensors as DistTensors ("feat", "label", ...) and the
    split masks ("train_mask", "val_mask", "test_mask") as local boolean tensors."""

    def __init__(self, graph):
        super().__init__()
        self._graph = graph

    def __missing__(self, name):
        graph = self._graph
        if name in _SPLIT_MASKS:
            mask = torch.zeros(graph.num_nodes(), dtype=torch.bool)
            mask[graph._impl.split(_SPLIT_MASKS[name])] = True
            self[name] = mask
            return mask
        if not graph._impl.has(name):
            raise KeyError(f"DistGraph has no node data {name!r}")
        shape, dtype = graph._impl.row_shape(name)
        tensor = DistTensor(shape, dtype, name, graph=graph, _existing=True)
        self[name] = tensor
        return tensor


class DistGraph:
    """The partitioned graph seen from a trainer (DGL's ``DistGraph``).

    Args:
        graph_name: accepted for DGL's signature; the partition names the graph.
        part_config: the partition directory (default: initialize()'s).
        cache_policy: a cache of remote ``feat`` rows that loaders read through, as
            ``train --cache-policy``: ``"none"``, ``"degree"`` (static: the rows this
            machine's part refers to most), or a dynamic cache evicting by ``"sieve"``
            (GraphBolt's default), ``"s3-fifo"``, ``"lru"`` or ``"clock"``. This machine's own
            rows are read in place and bypass it.
        cache_size: the cache's bytes: an integer or a size such as ``"256M"``.

    ``cache_stats(reset=False)`` gives the cache's hits and misses.

    ``ndata[name][ids]`` pulls rows; the graph is also the ``graph`` of
    :class:`graphloom.NeighborSampler` and the ``source`` of :class:`graphloom.DataLoader`.
    """

    def __init__(self, graph_name=None, part_config=None, cache_policy="none", cache_size=0):
        global _default_graph
        config, self.local_rank, self.trainers_per_machine = _require_config()
        if part_config is not None:
            config = _C.ClusterOptions(config)
            config.part_config = _check.existing_path("part_config", part_config)
        if not config.part_config:
            raise OptionError("DistGraph: no part_config (pass it to initialize() or here)",
                              "part_config")
        cache_bytes = _check.byte_size("cache_size", cache_size)
        if cache_policy != "none" and cache_bytes == 0:
            raise OptionError(f"cache_policy={cache_policy!r} needs a cache_size", "cache_size")
        self._impl = _C.DistGraph(config, cache_policy, cache_bytes)
        self.ndata = _NodeData(self)
        _default_graph = self

    @property
    def _rows(self):  # what loaders gather from (the graph-source interface of Dataset)
        return self._impl

    @property
    def graph_name(self):
        return self._impl.graph_name

    @property
    def num_classes(self):
        return self._impl.num_classes

    def num_nodes(self):
        return self._impl.num_nodes

    number_of_nodes = num_nodes

    def num_edges(self):
        return self._impl.num_edges

    number_of_edges = num_edges

    def get_partition_book(self):
        return GraphPartitionBook(self)

    def cache_stats(self, reset=False):
        """``{"hits": ..., "misses": ...}`` of the feature cache (zeros without one)."""
        return self._impl.cache_stats(bool(reset))

    # The graph-source interface of graphloom.Dataset (DataLoader, samplers, graphloom.pyg).
    _items_split = True  # node_split / edge_split already gave each trainer its share

    def feature_names(self):
        """The names of the node features the servers hold."""
        return list(self._impl.feature_names)

    def has_labels(self):
        return self._impl.has("label")

    def label_rows(self, ids):
        """The labels of ``ids``, pulled from their owners."""
        return self._impl.pull("label", ids)

    def schema(self):
        """The types of a typed partitioned graph (:class:`graphloom.hetero.Schema`), else None:
        its batches' ``to_pyg()`` is then a ``HeteroData``, as a typed dataset's."""
        if not hasattr(self, "_schema"):
            from .hetero import Schema

            self._schema = Schema.of_partition(self._impl)
        return self._schema

    def __repr__(self):
        return (f"DistGraph(graph_name={self.graph_name!r}, num_nodes={self.num_nodes()}, "
                f"machine={self._impl.machine})")


def node_split(nodes, partition_book=None, force_even=True):
    """This trainer's share of ``nodes`` (DGL's ``node_split``): a boolean mask over the nodes
    or node ids. Every trainer computes the same assignment, so shares are disjoint and
    complete; with ``force_even`` every trainer gets the same count (within one), surplus
    nodes moving to machines short of theirs; otherwise each machine takes the nodes it owns."""
    config, local_rank, per_machine = _require_config()
    graph = partition_book._graph if partition_book is not None else _default_graph
    if graph is None:
        raise OptionError("node_split needs a DistGraph (create one first)", "partition_book")
    nodes = torch.as_tensor(nodes)
    if nodes.dtype == torch.bool:
        nodes = nodes.nonzero().flatten()
    return graph._impl.node_split(nodes.to(torch.int64), local_rank, per_machine,
                                  bool(force_even))


def edge_split(pairs, partition_book=None, force_even=True):
    """This trainer's share of the node pairs ``pairs`` (int64 ``[M, 2]``, source and
    destination: link-prediction edges), DGL's ``edge_split``: a pair belongs to the machine
    owning its destination (whose blocks start there), shared by that machine's trainers, with
    ``force_even`` as in :func:`node_split`."""
    config, local_rank, per_machine = _require_config()
    graph = partition_book._graph if partition_book is not None else _default_graph
    if graph is None:
        raise OptionError("edge_split needs a DistGraph (create one first)", "partition_book")
    pairs = torch.as_tensor(pairs, dtype=torch.int64)
    if pairs.dim() != 2 or pairs.shape[1] != 2:
        raise OptionError(f"edge_split: pairs must be [M, 2], got {list(pairs.shape)}", "pairs")
    positions = graph._impl.split_positions(pairs[:, 1].contiguous(), local_rank, per_machine,
                                            bool(force_even))
    return pairs[positions]


# Embeddings and their sparse optimizers live in their own module (DGL's
# dgl.distributed.nn and dgl.distributed.optim); imported last, they read this module's names.
from .dist_embedding import DistEmbedding, SparseAdagrad, SparseAdam  # noqa: E402
