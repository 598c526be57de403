"""NeighborSampler over a DistGraph with weights and per-edge-type fanouts, applied by the graph
servers: one trainer (this process) and `graphloom serve` for each part of a 2-part partition,
every part read over RPC. Also per-edge-type fanouts on a local typed dataset."""

import contextlib
import os
import socket
import subprocess
import time

import pytest
import torch

import graphloom
import graphloom.distributed as gd

from conftest import GRAPHLOOM_CLI, free_port

pytestmark = pytest.mark.skipif(not GRAPHLOOM_CLI.exists(),
                                reason=f"SKIPPED: {GRAPHLOOM_CLI} is not built")

TYPES = ("likes", "liked_by", "related")


@contextlib.contextmanager
def serving(parts_dir, tmp_path):
    """Starts a server per part, waits until each listens, and yields a DistGraph on them."""
    token = tmp_path / "token"
    token.write_text("python-dist-sampling-token-0123456789\n")
    os.chmod(token, 0o600)
    ports = [free_port(), free_port()]
    (tmp_path / "ip.txt").write_text("".join(f"127.0.0.1 {port}\n" for port in ports))
    servers = [subprocess.Popen([str(GRAPHLOOM_CLI), "serve", "--part-config", str(parts_dir),
                                 "--part", str(part), "--address", f"127.0.0.1:{port}",
                                 "--token-file", str(token)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for part, port in enumerate(ports)]
    try:
        for server, port in zip(servers, ports):
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, server.stderr.read().decode()
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert time.monotonic() < deadline, f"server on port {port} did not start"
                time.sleep(0.1)
        gd.initialize(ip_config=tmp_path / "ip.txt", part_config=parts_dir, token_file=token,
                      cluster_id="", init_process_group=False)
        yield gd.DistGraph()
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=30)


def neighbor_lists(batch):
    """Per seed of a one-layer batch, the global ids of its sampled sources."""
    block = batch.blocks[-1]
    sources = block.src_ids[block.indices]
    return [sources[begin:end].tolist()
            for begin, end in zip(block.indptr[:-1].tolist(), block.indptr[1:].tolist())]


def ring_partition(tmp_path, n=200):
    """Node v has in-edges from v+1 .. v+10; only the one from v+1 weighs anything. The
    feature of a node is its id before partitioning (partitioning renumbers the nodes)."""
    dst = torch.arange(n).repeat_interleave(10)
    src = (dst + torch.arange(1, 11).repeat(n)) % n
    weights = (src == (dst + 1) % n).float()
    graphloom.save_dataset(tmp_path / "data", torch.stack([src, dst]), n,
                           node_features=torch.arange(n, dtype=torch.float32).unsqueeze(1),
                           edge_weights=weights)
    graphloom.partition(tmp_path / "data", tmp_path / "parts", num_parts=2, method="random",
                        verbose=False)
    return tmp_path / "parts"


def test_weighted_sampling_on_a_dist_graph(tmp_path):
    n = 200
    with serving(ring_partition(tmp_path, n), tmp_path) as g:
        original = g.ndata["feat"][torch.arange(n)].flatten().long()
        seeds = torch.arange(0, n, 7)
        weighted = graphloom.NeighborSampler(g, [3], weights=True).sample(seeds)
        for seed, sources in zip(seeds.tolist(), neighbor_lists(weighted)):
            assert [original[u].item() for u in sources] == [(original[seed].item() + 1) % n]
        uniform = neighbor_lists(graphloom.NeighborSampler(g, [3]).sample(seeds))
        assert all(len(sources) == 3 for sources in uniform)
        with pytest.raises(graphloom.OptionError, match="weights=True"):
            graphloom.NeighborSampler(g, [3], weights=torch.ones(n * 10))


@pytest.fixture(scope="module")
def typed_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("typed") / "data"
    subprocess.run([str(GRAPHLOOM_CLI), "generate", "typed-planted", "--out", str(out),
                    "--num-items", "300", "--num-users", "100", "--likes-per-user", "8",
                    "--related-per-item", "4"], check=True, capture_output=True)
    return out


def check_edge_type_fanouts(graph, num_nodes):
    """Fanouts per edge type reach the sampler: all zero samples nothing; one type at 2 caps
    every seed at 2 where the plain fanout of 6 gives some seed more."""
    seeds = torch.arange(0, num_nodes, 3)
    plain = neighbor_lists(graphloom.NeighborSampler(graph, [6]).sample(seeds))
    assert max(map(len, plain)) > 2
    nothing = {name: [0] for name in TYPES}
    assert sum(map(len, neighbor_lists(
        graphloom.NeighborSampler(graph, [6], edge_type_fanouts=nothing).sample(seeds)))) == 0
    capped = neighbor_lists(graphloom.NeighborSampler(
        graph, [6], edge_type_fanouts={"likes": [0], "liked_by": [0], "related": [2]}
    ).sample(seeds))
    assert max(map(len, capped)) == 2 and sum(map(len, capped)) > 0
    with pytest.raises(graphloom.Error, match="rates"):
        graphloom.NeighborSampler(graph, [6], edge_type_fanouts={"rates": [1]})


def test_edge_type_fanouts_on_a_typed_dataset(typed_dir):
    dataset = graphloom.load_dataset(typed_dir)
    check_edge_type_fanouts(dataset, dataset.graph.num_nodes())


def test_edge_type_fanouts_on_a_dist_graph(typed_dir, tmp_path):
    graphloom.partition(typed_dir, tmp_path / "parts", num_parts=2, method="metis",
                        verbose=False)
    with serving(tmp_path / "parts", tmp_path) as g:
        check_edge_type_fanouts(g, g.num_nodes())


def test_pyg_graph_store_over_a_dist_graph(tmp_path):
    pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
    from graphloom.pyg import GraphStore

    n = 200
    with serving(ring_partition(tmp_path, n), tmp_path) as g:
        original = g.ndata["feat"][torch.arange(n)].flatten().long()
        row, colptr = GraphStore(g).get_edge_index(edge_type=None, layout="csc")
        assert colptr.numel() == n + 1 and row.numel() == 10 * n
        for node in range(n):
            neighbors = original[row[colptr[node]:colptr[node + 1]]].tolist()
            v = original[node].item()
            assert sorted(neighbors) == sorted((v + k) % n for k in range(1, 11)), node


def pyg_can_sample():
    try:
        import torch_geometric.typing as typing
    except ImportError:
        return False
    return typing.WITH_PYG_LIB or typing.WITH_TORCH_SPARSE


@pytest.mark.skipif(not pyg_can_sample(), reason="SKIPPED: torch_geometric with pyg-lib or "
                    "torch-sparse is not installed")
def test_pyg_neighbor_loader_over_a_dist_graph(tmp_path):
    from torch_geometric.loader import NeighborLoader

    from graphloom.pyg import from_dataset

    n = 200
    with serving(ring_partition(tmp_path, n), tmp_path) as g:
        original = g.ndata["feat"][torch.arange(n)].flatten().long()
        loader = NeighborLoader(from_dataset(g), num_neighbors=[3], batch_size=16,
                                input_nodes=torch.arange(32))
        batches = list(loader)
        assert len(batches) == 2
        for batch in batches:
            assert torch.equal(batch.x.flatten().long(), original[batch.n_id])
            # Each seed's sampled sources are among its 10 in-neighbors of the ring.
            seeds, sources = batch.edge_index[1], batch.edge_index[0]
            gap = (original[batch.n_id[sources]] - original[batch.n_id[seeds]]) % n
            assert gap.min() >= 1 and gap.max() <= 10


def test_a_typed_dist_graph_batch_is_heterodata(typed_dir, tmp_path):
    """HeteroData of a partitioned graph: per-type ids that name the right rows, and every
    typed edge one the graph has (checked against all in-edges of the batch's targets)."""
    pytest.importorskip("torch_geometric", reason="SKIPPED: torch_geometric is not installed")
    from graphloom.pyg import NeighborLoader

    graphloom.partition(typed_dir, tmp_path / "parts", num_parts=2, method="metis",
                        verbose=False)
    with serving(tmp_path / "parts", tmp_path) as g:
        schema = g.schema()
        assert sorted(schema.node_types) == ["item", "user"]
        item = schema.node_types.index("item")
        assert schema.num_nodes_of(item) == 300
        loader = NeighborLoader(g, num_neighbors=[4, 4], input_nodes=("item", torch.arange(50)),
                                batch_size=50)
        data = next(iter(loader))
        assert torch.equal(data["item"].n_id[:50], torch.arange(50))
        assert data["item"].batch_size == 50
        for t, name in enumerate(schema.node_types):
            ids = schema.global_ids(t, data[name].n_id)
            assert bool((schema.types_of(ids) == t).all())
            assert torch.equal(schema.local_ids(ids, t), data[name].n_id)
            assert torch.equal(data[name].x, g.ndata["feat"][ids])
        edges, targets = [], []
        for triple in data.edge_types:
            src_type, dst_type = (schema.node_types.index(triple[0]),
                                  schema.node_types.index(triple[2]))
            src, dst = data[triple].edge_index  # positions in the batch's per-type stores
            src = schema.global_ids(src_type, data[triple[0]].n_id[src])
            dst = schema.global_ids(dst_type, data[triple[2]].n_id[dst])
            r = schema.edge_types.index(triple)
            edges += [(u, v, r) for u, v in zip(src.tolist(), dst.tolist())]
            targets.append(dst)
        assert edges
        targets = torch.cat(targets).unique()
        block = graphloom.NeighborSampler(g, [-1]).sample(targets).blocks[0]
        destination = torch.repeat_interleave(torch.arange(block.num_dst), block.indptr.diff())
        every = set(zip(block.src_ids[block.indices].tolist(),
                        targets[destination].tolist(), block.edge_types.tolist()))
        assert set(edges) <= every


def test_temporal_sampling_on_a_dist_graph(tmp_path):
    """Node v (time v) has in-edges from v+1 .. v+10 (mod n): at its own time, a seed reaches
    only the neighbors that are not later than it. The feature of a node is its original id."""
    n = 200
    dst = torch.arange(n).repeat_interleave(10)
    src = (dst + torch.arange(1, 11).repeat(n)) % n
    graphloom.save_dataset(tmp_path / "data", torch.stack([src, dst]), n,
                           node_features=torch.arange(n, dtype=torch.float32).unsqueeze(1),
                           node_timestamp=torch.arange(n))
    graphloom.partition(tmp_path / "data", tmp_path / "parts", num_parts=2, method="random",
                        verbose=False)
    with serving(tmp_path / "parts", tmp_path) as graph:
        sampler = graphloom.NeighborSampler(graph, [10], node_time=True,
                                            temporal_strategy="last")
        seeds = torch.arange(n)
        loader = graphloom.DataLoader(graph, seeds, sampler, batch_size=n, features=["feat"],
                                      labels=False, seed=0)
        batch = next(iter(loader))
        original = graph.ndata["feat"][batch.seeds].squeeze(1).long()
        assert torch.equal(batch.seed_times, original)  # pulled from the owners
        block = batch.blocks[-1]
        sources = batch.input_features["feat"].squeeze(1).long()
        for position, (begin, end) in enumerate(zip(block.indptr[:-1].tolist(),
                                                   block.indptr[1:].tolist())):
            picked = sorted(sources[block.indices[begin:end]].tolist())
            v = int(original[position])
            assert picked == [u for u in range(n) if (u - v) % n in range(1, 11) and u <= v]
        with pytest.raises(graphloom.OptionError) as error:
            graphloom.NeighborSampler(graph, [10], node_time=torch.arange(n))
        assert error.value.field == "node_time"
