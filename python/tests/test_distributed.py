"""graphloom.distributed under `graphloom launch`: 2 loopback machines (servers + 1 Python
trainer each) run examples/dist_graphsage.py, DGL's distributed GraphSAGE, on a 2-part
partition of the planted graph; and DistTensor / node_split checked from a trainer."""

import os
import textwrap

import pytest

import graphloom

from conftest import GRAPHLOOM_CLI, free_port, REPO

pytestmark = pytest.mark.skipif(not GRAPHLOOM_CLI.exists(),
                                reason=f"SKIPPED: {GRAPHLOOM_CLI} is not built")


@pytest.fixture(scope="module")
def cluster(planted_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    graphloom.partition(planted_dir, root / "parts", num_parts=2, method="metis")
    token = root / "token"
    token.write_text("python-test-token-0123456789abcdef\n")
    os.chmod(token, 0o600)
    (root / "ip.txt").write_text(f"127.0.0.1 {free_port()}\n127.0.0.1 {free_port()}\n")
    return root


def launch(cluster, *trainer, timeout=600, launch_flags=()):
    import subprocess
    import sys

    environment = dict(os.environ)
    package_root = str(os.path.dirname(os.path.dirname(graphloom.__file__)))
    environment["PYTHONPATH"] = package_root + os.pathsep + environment.get("PYTHONPATH", "")
    command = [str(GRAPHLOOM_CLI), "launch", "--ip-config", str(cluster / "ip.txt"),
               "--part-config", str(cluster / "parts"), "--num-trainers", "1", "--token-file",
               str(cluster / "token"), *map(str, launch_flags), "--", sys.executable,
               *map(str, trainer)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=environment)


def test_dgl_distributed_graphsage_example(cluster):
    result = launch(cluster, REPO / "examples" / "dist_graphsage.py", "--epochs", "15",
                    "--fanouts", "5,5", "--lr", "0.01")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "part 0 of 2" in result.stdout and "part 1 of 2" in result.stdout
    accuracy = float(result.stdout.rsplit("test accuracy", 1)[1].split()[0])
    assert accuracy > 0.7, result.stdout  # 3 classes: chance is 0.33


def test_dist_tensor_and_node_split(cluster, tmp_path):
    script = tmp_path / "check.py"
    script.write_text(textwrap.dedent("""
        import torch, torch.distributed as dist
        import graphloom, graphloom.distributed as gd
        gd.initialize()
        g = gd.DistGraph()
        pb = g.get_partition_book()
        n = g.num_nodes()
        assert n == 600 and pb.num_partitions() == 2
        owners = pb.nid2partid(torch.arange(n))
        assert owners.tolist() == sorted(owners.tolist())   # contiguous ranges
        feat = g.ndata["feat"]
        assert feat.shape == (600, 16) and feat.dtype == torch.float32
        assert feat[torch.tensor([0, 599])].shape == (2, 16)
        # Every trainer's share, gathered: disjoint and complete.
        mine = gd.node_split(g.ndata["train_mask"], pb)
        shares = [None, None]
        dist.all_gather_object(shares, mine.tolist())
        train = g.ndata["train_mask"].nonzero().flatten().tolist()
        assert sorted(shares[0] + shares[1]) == train
        assert not set(shares[0]) & set(shares[1])
        pairs = torch.stack([torch.arange(n), torch.arange(n).flip(0)], 1)
        my_pairs = gd.edge_split(pairs, pb)
        pair_shares = [None, None]
        dist.all_gather_object(pair_shares, my_pairs.tolist())
        assert sorted(map(tuple, pair_shares[0] + pair_shares[1])) == sorted(map(tuple, pairs.tolist()))
        # A cache of remote rows in front of the DistGraph: the same rows, and hits once the
        # second epoch asks again for rows the first brought in.
        for policy in ("sieve", "s3-fifo"):
            cached = gd.DistGraph(cache_policy=policy, cache_size="4M")
            cache_loader = graphloom.DataLoader(cached, torch.arange(n), graphloom.NeighborSampler(
                cached, [5]), batch_size=200, seed=1)
            for epoch in range(2):
                for batch in cache_loader:
                    assert torch.equal(batch.input_features["feat"], feat[batch.input_nodes])
            stats = cached.cache_stats()
            assert stats["hits"] > 0 and stats["misses"] > 0, (policy, stats)
        for bad, field in ((dict(cache_policy="arc", cache_size=10), "cache_policy"),
                           (dict(cache_policy="sieve"), "cache_size")):
            try:
                gd.DistGraph(**bad)
                raise AssertionError(f"{bad} was accepted")
            except graphloom.OptionError as error:
                assert error.field == field, (bad, error.field)
        # Link-prediction batches over the DistGraph: this trainer's pairs with negatives.
        from graphloom.negative_sampler import Uniform
        pair_loader = graphloom.DataLoader(g, my_pairs[:64], graphloom.NeighborSampler(g, [3]),
                                           batch_size=32, negative_sampler=Uniform(2))
        for batch in pair_loader:
            p = batch.pairs
            assert torch.equal(batch.seeds[p.src_index], p.src) and p.k == 2
            assert torch.equal(batch.input_features["feat"], feat[batch.input_nodes])
        # A DistTensor written by one trainer is read by the other.
        t = gd.DistTensor((n, 3), torch.float32, "python-test-tensor")
        if dist.get_rank() == 0:
            t[torch.arange(n)] = torch.arange(3 * n, dtype=torch.float32).reshape(n, 3)
        dist.barrier()
        assert torch.equal(t[torch.tensor([5, 400])], torch.tensor([[15., 16., 17.],
                                                                     [1200., 1201., 1202.]]))
        # init_func (DGL's): each trainer writes its share of the rows, then all wait.
        calls = []
        def by_row(shape, dtype):
            calls.append(shape)
            return torch.full(shape, float(dist.get_rank() + 1), dtype=dtype)
        t2 = gd.DistTensor((n, 2), torch.float32, "python-test-initialized", init_func=by_row)
        assert calls == [(300, 2)], calls
        assert t2[torch.tensor([0, 299])].eq(1).all() and t2[torch.tensor([300, 599])].eq(2).all()
        emb0 = gd.DistEmbedding(n, 4, "python-test-zero-embedding",
                                init_func=lambda shape, dtype: torch.zeros(shape, dtype=dtype))
        assert emb0(torch.tensor([0, 599])).abs().sum() == 0
        wrong_shape = None
        try:
            gd.DistTensor((n, 2), torch.float32, "python-test-bad-init",
                          init_func=lambda shape, dtype: torch.zeros(3))
        except graphloom.OptionError as error:
            wrong_shape = str(error)
        assert wrong_shape and "init_func" in wrong_shape and "(300, 2)" in wrong_shape, wrong_shape
        with_bad_id = None
        try:
            feat[torch.tensor([600])]
        except IndexError as error:
            with_bad_id = str(error)
        assert with_bad_id and "600" in with_bad_id, with_bad_id
        # DistEmbedding: pulled rows carry gradients; the owners apply SparseAdam's step.
        emb = gd.DistEmbedding(n, 4, "python-test-embedding")
        optimizer = gd.SparseAdam([emb], lr=0.1)
        ids = torch.tensor([3, 3, 500])
        before = emb(torch.tensor([3, 500])).detach()
        assert torch.all(before.abs() <= 1)   # uniform in [-1, 1)
        dist.barrier()
        if dist.get_rank() == 0:
            emb(ids).sum().backward()           # gradient +1 on every entry of both rows
            optimizer.step()
        dist.barrier()
        after = emb(torch.tensor([3, 500])).detach()
        # Adam's first step moves every entry by lr against the gradient's sign.
        assert torch.allclose(after, before - 0.1, atol=1e-4), (before, after)
        try:
            from graphloom.pyg import FeatureStore
            store = FeatureStore(g)
            assert torch.equal(store.get_tensor(None, "x", index=torch.tensor([1, 2])),
                               feat[torch.tensor([1, 2])])
            assert store.get_tensor_size(None, "x") == (600, 16)
        except ImportError:
            pass   # torch_geometric absent: the store is not checked
        print(f"rank {dist.get_rank()} ok")
    """))
    result = launch(cluster, script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rank 0 ok" in result.stdout and "rank 1 ok" in result.stdout


def test_python_trainers_reach_tls_servers(cluster, tmp_path):
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out",
                    str(cert)], check=True, capture_output=True)
    script = tmp_path / "tls.py"
    script.write_text(textwrap.dedent(f"""
        import os, torch, torch.distributed as dist
        import graphloom.distributed as gd
        assert os.environ["GRAPHLOOM_TLS_CA"] == {str(cert)!r}
        gd.initialize()
        g = gd.DistGraph()
        rows = g.ndata["feat"][torch.tensor([0, 599])]   # one row from each part's server
        assert rows.shape == (2, 16)
        print(f"rank {{dist.get_rank()}} tls ok")
    """))
    result = launch(cluster, script, launch_flags=("--tls-cert", cert, "--tls-key", key,
                                                   "--tls-ca", cert))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rank 0 tls ok" in result.stdout and "rank 1 tls ok" in result.stdout
    assert "(TLS)" in result.stdout + result.stderr  # the servers started with TLS


def test_initialize_checks_that_its_files_exist(tmp_path):
    import graphloom.distributed as gd

    with pytest.raises(graphloom.MissingFileError, match="ip_config: '.*missing.txt' does not"):
        gd.initialize(ip_config=tmp_path / "missing.txt", init_process_group=False)
    ip_config = tmp_path / "ip.txt"
    ip_config.write_text("127.0.0.1 30000\n")
    with pytest.raises(FileNotFoundError, match="part_config: '.*no-parts' does not exist"):
        gd.initialize(ip_config=ip_config, part_config=tmp_path / "no-parts",
                      init_process_group=False)
    with pytest.raises(graphloom.MissingFileError, match="token_file"):
        gd.initialize(ip_config=ip_config, token_file=tmp_path / "no-token",
                      init_process_group=False)
    with pytest.raises(graphloom.MissingFileError, match="tls_ca: '.*no-ca.pem' does not"):
        gd.initialize(ip_config=ip_config, tls_ca=tmp_path / "no-ca.pem",
                      init_process_group=False)
