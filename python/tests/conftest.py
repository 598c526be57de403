"""Shared fixtures: small datasets written with graphloom.save_dataset, the repository's
paths, and the real datasets of ../shared/datasets (tests that need them skip, saying so,
when the folder is absent)."""

import os
import pathlib
import subprocess

import pytest
import torch

import graphloom

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
GRAPHLOOM_CLI = REPO / "build" / "graphloom"


def planted_graph(num_nodes=600, num_classes=3, degree=8, feature_dim=16, seed=0):
    """A planted-partition graph: most edges join nodes of one class, features are a noisy
    one-hot of the class, so a GNN learns it well above chance."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(num_classes, (num_nodes,), generator=generator)
    dst = torch.arange(num_nodes).repeat_interleave(degree)
    same = torch.rand(dst.numel(), generator=generator) < 0.8
    by_class = [torch.nonzero(labels == c).flatten() for c in range(num_classes)]
    src = torch.randint(num_nodes, (dst.numel(),), generator=generator)
    for c in range(num_classes):
        pick = same & (labels[dst] == c)
        choice = torch.randint(by_class[c].numel(), (int(pick.sum()),), generator=generator)
        src[pick] = by_class[c][choice]
    features = torch.nn.functional.one_hot(labels, feature_dim).float()
    features += 0.8 * torch.randn(num_nodes, feature_dim, generator=generator)
    order = torch.randperm(num_nodes, generator=generator)
    splits = {"train": order[: num_nodes // 2], "valid": order[num_nodes // 2: 3 * num_nodes // 4],
              "test": order[3 * num_nodes // 4:]}
    return dict(edge_index=torch.stack([src, dst]), num_nodes=num_nodes,
                node_features=features, labels=labels, splits=splits, num_classes=num_classes)


@pytest.fixture(scope="session")
def planted_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "planted"
    graphloom.save_dataset(path, **planted_graph())
    return path


@pytest.fixture(scope="session")
def planted(planted_dir):
    return graphloom.load_dataset(planted_dir)


@pytest.fixture(scope="session")
def cora_dir(tmp_path_factory):
    """Cora from ../shared/datasets, converted once per session."""
    source = SHARED_DATASETS / "cora"
    if not source.is_dir():
        pytest.skip(f"SKIPPED: {source} is absent (../shared/datasets)")
    out = tmp_path_factory.mktemp("shared") / "cora"
    graphloom.convert(source, out, source_format="shared")
    return out


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers a test starts)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_python(*args, timeout=600, env=None):
    """Runs `python args...` with this interpreter and the package this test imports."""
    environment = dict(os.environ)
    package_root = str(pathlib.Path(graphloom.__file__).parent.parent)  # not resolved: the build tree links its sources
    environment["PYTHONPATH"] = package_root + os.pathsep + environment.get("PYTHONPATH", "")
    environment.update(env or {})
    import sys

    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=environment)


def planted_link_graph(seed=0):
    """The planted graph's edges as undirected pairs split for link prediction, as `graphloom
    convert` writes ../shared/datasets/lp_*: the graph holds both directions of the training
    pairs; edge_splits hold "train", "test" (10% held out) and "test_neg" (as many non-edges)."""
    parts = planted_graph(seed=seed)
    generator = torch.Generator().manual_seed(seed)
    src, dst = parts["edge_index"]
    pairs = torch.stack([torch.minimum(src, dst), torch.maximum(src, dst)], 1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]].unique(dim=0)
    pairs = pairs[torch.randperm(len(pairs), generator=generator)]
    test, train = pairs[: len(pairs) // 10], pairs[len(pairs) // 10:]
    n = parts["num_nodes"]
    known = set(map(tuple, pairs.tolist()))
    negatives = []
    while len(negatives) < len(test):
        u, v = sorted(torch.randint(n, (2,), generator=generator).tolist())
        if u != v and (u, v) not in known:
            negatives.append((u, v))
            known.add((u, v))
    return dict(edge_index=torch.cat([train, train.flip(1)]).t(), num_nodes=n,
                node_features=parts["node_features"], directed=False,
                edge_splits={"train": train, "test": test, "test_neg": torch.tensor(negatives)})


@pytest.fixture(scope="session")
def planted_link_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "planted_link"
    graphloom.save_dataset(path, **planted_link_graph())
    return path


@pytest.fixture(scope="session")
def ecoli_dir(tmp_path_factory):
    """lp_ecoli (SEAL's link-prediction graph) from ../shared/datasets, converted once."""
    source = SHARED_DATASETS / "lp_ecoli"
    if not source.is_dir():
        pytest.skip(f"SKIPPED: {source} is absent (../shared/datasets)")
    out = tmp_path_factory.mktemp("shared") / "lp_ecoli"
    graphloom.convert(source, out, source_format="shared")
    return out


@pytest.fixture(scope="session")
def typed_planted_dir(tmp_path_factory):
    """A small typed-planted graph (items, users; likes / liked_by / related), made by the CLI."""
    out = tmp_path_factory.mktemp("typed") / "planted"
    subprocess.run([str(GRAPHLOOM_CLI), "generate", "typed-planted", "--out", str(out),
                    "--num-items", "600", "--num-users", "200", "--likes-per-user", "15",
                    "--related-per-item", "4", "--train-fraction", "0.5"], check=True,
                   capture_output=True)
    return out
