"""``python -m graphloom.bench loader|link|train|to_pyg|parity``: figures against references measured
in the same run, alternating, several rounds, medians.

``loader``: the Python DataLoader's seeds/s against

- the same C++ loader consumed in C++ (no Python objects per batch): what the Python layer
  costs;
- ``graphloom bench loader`` (the C++ program), when ``--cli`` names it;
- graphloom.pyg's NeighborLoader (PyG ``Data`` batches) and PyG's own NeighborLoader on the
  same graph, when PyG has a sampler (pyg-lib or torch-sparse).

``link``: graphloom.pyg's LinkNeighborLoader against PyG's, on the same ``Data`` and edges,
binary negatives, with features: edges/s.

Sample only (``--no-features``) or sample + gather of the features and labels.

``to_pyg``: an epoch consumed as blocks against the same epoch converted to PyG ``Data``, with
the layout built by the loader's workers and in the consuming thread.

``train``: a PyG GraphSAGE (SAGEConv) training step fed by graphloom's loader (``to_pyg()``)
against the same model fed by PyG's NeighborLoader; ``--trim`` computes each layer only for
the hops the seeds' outputs still need (PyG's ``trim_to_layer``, with bipartite inputs);
``--layout csr`` feeds both a CSR ``adj_t`` instead of ``edge_index``.

``temporal``: graphloom.pyg's NeighborLoader with edge times against PyG's (bench_temporal.py).

``parity``: test accuracy of one PyG recipe trained on graphloom.pyg's NeighborLoader and on
PyG's, several seeds (bench_parity.py).
"""

import argparse
import re
import statistics
import subprocess
import time

import torch

import graphloom
from graphloom import bench_parity, bench_temporal


def python_epoch(loader):
    seeds = 0
    for batch in loader:
        seeds += batch.batch_size
        batch.input_features.get("feat")
    return seeds


def cpp_epoch(loader, epoch):
    return loader._impl.consume_epoch(epoch)


def cli_seeds_per_second(args):
    command = [args.cli, "bench", "loader", "--data", args.data, "--fanouts", args.fanouts,
               "--batch-size", str(args.batch_size), "--batches", str(args.batches)]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"seeds/s (\d+)", output).group(1))


def pyg_data(dataset, with_features):
    """The dataset as a PyG Data: its edges, and "feat" and the labels as x and y."""
    from torch_geometric.data import Data

    data = Data(edge_index=dataset.graph.edge_index(), num_nodes=dataset.num_nodes())
    if with_features:
        data.x = dataset.node_features["feat"]
        data.y = dataset.labels
    return data


def pyg_has_sampler():
    try:
        import torch_geometric.typing as pyg_typing
    except ImportError:
        return False
    return pyg_typing.WITH_PYG_LIB or pyg_typing.WITH_TORCH_SPARSE


def pyg_loader(dataset, items, fanouts, batch_size, with_features, transform=None):
    if not pyg_has_sampler():
        return None
    from torch_geometric.loader import NeighborLoader

    return NeighborLoader(pyg_data(dataset, with_features), num_neighbors=fanouts[::-1],
                          input_nodes=items, batch_size=batch_size, shuffle=True,
                          transform=transform)


def print_round(round_index, results):
    """One line per round: each run's latest figure."""
    print(f"  round {round_index + 1}: " +
          "  ".join(f"{name} {values[-1]:,.0f}" for name, values in results.items()))


def seeds_per_second(run):
    start = time.perf_counter()
    seeds = run()
    return seeds / (time.perf_counter() - start)


def run_inputs(args):
    """(dataset, fanouts, items, sampler) of a benchmark's arguments: the dataset loaded as
    `graphloom bench loader` loads it, the training nodes of the batches measured."""
    torch.set_num_threads(args.threads)
    dataset = graphloom.load_dataset(args.data, tables_in_memory=True)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    items = dataset.splits.get("train", torch.arange(dataset.num_nodes()))
    items = items[: args.batches * args.batch_size]
    return dataset, fanouts, items, graphloom.NeighborSampler(dataset.graph, fanouts=fanouts)


def loader_bench(args):
    dataset, fanouts, items, sampler = run_inputs(args)
    with_features = not args.no_features
    loader = graphloom.DataLoader(dataset, items, sampler, batch_size=args.batch_size,
                                  shuffle=True, features=("feat",) if with_features else (),
                                  labels=with_features)
    epoch = iter(range(10**6, 10**9))
    runs = {"python": lambda: seeds_per_second(lambda: python_epoch(loader)),
            "c++ (same loader)": lambda: seeds_per_second(lambda: cpp_epoch(loader, next(epoch)))}
    if args.cli and with_features:  # `graphloom bench loader` always gathers
        runs["graphloom bench loader"] = lambda: cli_seeds_per_second(args)
    pyg = pyg_loader(dataset, items, fanouts, args.batch_size, with_features)
    if pyg is not None:
        from graphloom.pyg import NeighborLoader

        ours = NeighborLoader(pyg_data(dataset, with_features), num_neighbors=fanouts[::-1],
                              input_nodes=items, batch_size=args.batch_size, shuffle=True)
        runs["graphloom.pyg NeighborLoader"] = lambda: seeds_per_second(
            lambda: sum(b.batch_size for b in ours))
        runs["pyg NeighborLoader"] = lambda: seeds_per_second(
            lambda: sum(b.batch_size for b in pyg))
    results = {name: [] for name in runs}
    what = "sample + gather" if with_features else "sample only"
    print(f"loader bench ({what}): {args.data}, fanouts {fanouts}, batch {args.batch_size}, "
          f"{len(loader)} batches per epoch, {args.threads} threads, {args.rounds} rounds")
    python_epoch(loader)  # warm-up: page cache, workspaces
    for round_index in range(args.rounds):
        for name, run in runs.items():
            results[name].append(run())
        print_round(round_index, results)
    # Per-round ratios: the runs of one round are seconds apart, so they share the host's
    # current speed, which drifts by 20% or more over minutes.
    reference = results["c++ (same loader)"]
    for name, values in results.items():
        ratios = [value / ref for value, ref in zip(values, reference)]
        line = (f"{name:>29}: {statistics.median(values):12,.0f} seeds/s (median; range "
                f"{min(values):,.0f}-{max(values):,.0f})  ratio to c++ "
                f"{statistics.median(ratios):.3f}")
        if "pyg NeighborLoader" in results:
            to_pyg = [v / p for v, p in zip(values, results["pyg NeighborLoader"])]
            line += f", to pyg {statistics.median(to_pyg):.2f}"
        print(line + " (medians of per-round ratios)")
    if pyg is None:
        print("  pyg NeighborLoader: not measured (PyG has no sampler here: neither pyg-lib "
              "nor torch-sparse is installed)")


def to_pyg_bench(args):
    """What ``MiniBatch.to_pyg()`` adds to an epoch of graphloom's loader consumed as blocks:
    with the workers building PyG's layout (``pyg_edges=True``, as graphloom.pyg's loaders do)
    and with ``to_pyg()`` building it in the consuming thread."""
    dataset, fanouts, items, sampler = run_inputs(args)

    def loader(pyg_edges):
        return graphloom.DataLoader(dataset, items, sampler, batch_size=args.batch_size,
                                    shuffle=True, pyg_edges=pyg_edges)

    plain, workers = loader(False), loader(True)
    runs = {"blocks": lambda: python_epoch(plain),
            "to_pyg, workers' layout": lambda: sum(b.to_pyg().batch_size for b in workers),
            "to_pyg, built in python": lambda: sum(b.to_pyg().batch_size for b in plain)}
    results = {name: [] for name in runs}
    print(f"to_pyg bench: {args.data}, fanouts {fanouts}, batch {args.batch_size}, "
          f"{len(plain)} batches per epoch, {args.threads} threads, {args.rounds} rounds")
    for run in runs.values():
        run()  # warm-up
    for round_index in range(args.rounds):
        for name, run in runs.items():
            results[name].append(seeds_per_second(run))
        print_round(round_index, results)
    reference = results["blocks"]
    for name, values in results.items():
        extra = [ref / value - 1 for value, ref in zip(values, reference)]
        print(f"{name:>24}: {statistics.median(values):12,.0f} seeds/s (median)  time over "
              f"blocks alone {100 * statistics.median(extra):+.1f}% (median of per-round "
              f"ratios)")


def link_bench(args):
    """Edges/s of graphloom.pyg's LinkNeighborLoader and PyG's, alternating: the same Data,
    the first ``batches * batch_size`` edges as edge_label_index, binary negatives (one per
    edge), features gathered."""
    if not pyg_has_sampler():
        raise SystemExit("link: PyG's LinkNeighborLoader needs pyg-lib or torch-sparse, neither "
                         "is installed")
    from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader

    from graphloom.pyg import LinkNeighborLoader

    torch.set_num_threads(args.threads)
    dataset = graphloom.load_dataset(args.data, tables_in_memory=True)
    data = pyg_data(dataset, with_features=True)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    generator = torch.Generator().manual_seed(0)
    pick = torch.randperm(data.edge_index.size(1), generator=generator)
    edges = data.edge_index[:, pick[: args.batches * args.batch_size]]
    loaders = {
        kind: loader(data, num_neighbors=fanouts[::-1], edge_label_index=edges,
                     neg_sampling="binary", batch_size=args.batch_size, shuffle=True)
        for kind, loader in (("graphloom.pyg LinkNeighborLoader", LinkNeighborLoader),
                             ("pyg LinkNeighborLoader", PygLinkNeighborLoader))}

    def epoch(loader):
        return sum(int(b.edge_label.numel()) for b in loader)

    print(f"link bench: {args.data}, fanouts {fanouts}, batch {args.batch_size} edges + as many "
          f"negatives, {args.batches} batches, {args.threads} threads, {args.rounds} rounds")
    for loader in loaders.values():
        epoch(loader)  # warm-up
    results = {name: [] for name in loaders}
    for round_index in range(args.rounds):
        for name, loader in loaders.items():
            results[name].append(seeds_per_second(lambda: epoch(loader)))
        print_round(round_index, results)
    reference = results["pyg LinkNeighborLoader"]
    for name, values in results.items():
        ratios = [value / ref for value, ref in zip(values, reference)]
        print(f"{name:>33}: {statistics.median(values):12,.0f} labelled edges/s (median)  "
              f"ratio to pyg {statistics.median(ratios):.2f} (median of per-round ratios)")


def first_rows(adj_t, rows, columns):
    """The first `rows` rows of a CSR adjacency, as a `rows` x `columns` CSR tensor (its
    entries are a prefix: the edges come in target order)."""
    row_pointer = adj_t.crow_indices()[: rows + 1]
    entries = int(row_pointer[-1])
    return torch.sparse_csr_tensor(row_pointer, adj_t.col_indices()[:entries],
                                   adj_t.values()[:entries], size=(rows, columns),
                                   check_invariants=False)


def sage_forward(convs, data, trim):
    """The SAGEConv stack on a PyG batch (``to_pyg()`` or NeighborLoader's), over its
    ``edge_index`` or, where the batch has one, its CSR ``adj_t``. With ``trim``, layer l of L
    reads hops 0..L-l (x, from the layer before) and writes hops 0..L-l-1: the nodes and edges
    come hop by hop, so both are prefixes. The seeds' rows are the same either way."""
    x, adj_t = data.x, data.get("adj_t")
    for layer, conv in enumerate(convs):
        if trim:
            hops = len(convs) - layer
            targets = sum(data.num_sampled_nodes[:hops])
            if adj_t is not None:
                graph = first_rows(adj_t, targets, x.size(0))
            else:
                graph = data.edge_index[:, : sum(data.num_sampled_edges[:hops])]
            x = conv((x, x[:targets]), graph)
        else:
            x = conv(x, adj_t if adj_t is not None else data.edge_index)
        if layer < len(convs) - 1:
            x = x.relu()
    return x


def train_bench(args):
    """Seeds/s of a PyG GraphSAGE (SAGEConv) training step fed by graphloom's loader
    (MiniBatch.to_pyg) and by PyG's NeighborLoader, alternating."""
    from torch_geometric.nn import SAGEConv

    dataset, fanouts, items, _ = run_inputs(args)
    feat = dataset.node_features["feat"]
    dims = [feat.shape[1]] + [args.hidden] * (len(fanouts) - 1) + [dataset.num_classes]
    convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))
    optimizer = torch.optim.Adam(convs.parameters(), lr=1e-3)

    def step(data):
        x = sage_forward(convs, data, args.trim)
        loss = torch.nn.functional.cross_entropy(x[: data.batch_size], data.y[: data.batch_size])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return data.batch_size

    # PyG's hops (each node sampled once), as graphloom.pyg's loaders sample: the same batches
    # as PyG's, so the two steps compute on graphs of the same size.
    pyg_hops = graphloom.NeighborSampler(dataset.graph, fanouts=fanouts, each_node_once=True)
    ours = graphloom.DataLoader(dataset, items, pyg_hops, batch_size=args.batch_size,
                                shuffle=True, pyg_edges=True)
    layout = torch.sparse_csr if args.layout == "csr" else None
    runs = {"graphloom loader": lambda: sum(step(b.to_pyg(layout=layout)) for b in ours)}
    transform = None
    if layout is not None:
        from torch_geometric.transforms import ToSparseTensor

        transform = ToSparseTensor(layout=torch.sparse_csr)
    theirs = pyg_loader(dataset, items, fanouts, args.batch_size, True, transform)
    if theirs is not None:
        runs["pyg NeighborLoader"] = lambda: sum(step(b) for b in theirs)
    results = {name: [] for name in runs}
    print(f"train bench (PyG SAGEConv, hidden {args.hidden}"
          f"{', trimmed per layer' if args.trim else ''}, {args.layout}): {args.data}, "
          f"fanouts {fanouts}, batch {args.batch_size}, {len(ours)} batches per epoch, "
          f"{args.threads} threads")
    for run in runs.values():
        run()  # warm-up: page cache, allocator, the loaders' first epoch
    for round_index in range(args.rounds):
        for name, run in runs.items():
            results[name].append(seeds_per_second(run))
        print_round(round_index, results)
    reference = results.get("pyg NeighborLoader")
    for name, values in results.items():
        line = f"{name:>20}: {statistics.median(values):10,.0f} seeds/s (median; range " \
               f"{min(values):,.0f}-{max(values):,.0f})"
        if reference:
            ratios = [value / ref for value, ref in zip(values, reference)]
            line += f"  ratio to pyg {statistics.median(ratios):.2f} (median of per-round ratios)"
        print(line)
    if reference is None:
        print("  pyg NeighborLoader: not measured (PyG has no sampler here: neither pyg-lib "
              "nor torch-sparse is installed)")


def add_run_arguments(command, fanouts, batches, rounds):
    """The arguments every benchmark takes: the graph, the batches, the rounds."""
    command.add_argument("--data", required=True, help="graphloom dataset directory")
    command.add_argument("--fanouts", default=fanouts, help="input layer first")
    command.add_argument("--batch-size", type=int, default=1024)
    command.add_argument("--batches", type=int, default=batches,
                         help="batches per epoch measured")
    command.add_argument("--rounds", type=int, default=rounds)
    command.add_argument("--threads", type=int, default=2)
    return command


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m graphloom.bench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    loader = add_run_arguments(commands.add_parser(
        "loader", help="Python DataLoader seeds/s vs the C++ loader"), "10,10,10", 100, 3)
    loader.add_argument("--no-features", action="store_true", help="sample only")
    loader.add_argument("--cli", help="the graphloom program, to run `bench loader` alternately")
    train = add_run_arguments(commands.add_parser(
        "train", help="a PyG SAGEConv step on graphloom's loader vs PyG's"), "10,10,10", 20, 3)
    train.add_argument("--hidden", type=int, default=256)
    train.add_argument("--trim", action="store_true",
                       help="compute only what the seeds' outputs depend on, as PyG's "
                            "trim_to_layer does, and further: layer l reads the first L-l hops' "
                            "nodes and edges and writes only the first L-l-1 hops' nodes (a "
                            "bipartite (x, x[:targets]) input)")
    train.add_argument("--layout", choices=("coo", "csr"), default="coo",
                       help="coo: the batches' edge_index (messages per edge); csr: a CSR adj_t "
                            "(one sparse-dense product per layer), made by to_pyg(layout="
                            "torch.sparse_csr) on graphloom's side and by PyG's "
                            "ToSparseTensor(layout=torch.sparse_csr) on PyG's")
    add_run_arguments(commands.add_parser(
        "to_pyg", help="what to_pyg() adds to an epoch of blocks"), "10,25", 100, 5)
    add_run_arguments(commands.add_parser(
        "link", help="graphloom.pyg's LinkNeighborLoader vs PyG's"), "10,10", 20, 3)
    add_run_arguments(commands.add_parser(
        "temporal", help="graphloom.pyg's temporal NeighborLoader vs PyG's (pyg-lib)"),
        "10,10,10", 30, 3)
    bench_parity.add_arguments(commands.add_parser(
        "parity", help="accuracy of a PyG recipe on graphloom's loader vs PyG's (pyg-lib)"))
    args = parser.parse_args(argv)
    {"loader": loader_bench, "train": train_bench, "to_pyg": to_pyg_bench, "link": link_bench,
     "parity": bench_parity.parity_bench,
     "temporal": bench_temporal.temporal_bench}[args.command](args)


if __name__ == "__main__":
    main()
