"""``python -m graphloom.bench temporal``: graphloom.pyg's temporal NeighborLoader against PyG's
(pyg-lib), edge-level times, on the same ``Data``, alternating rounds, medians.

The graph gets uniform random edge times in [0, 2^20) and every seed a uniform random time in
the same range (the reference graphs carry no timestamps), as ``graphloom bench sample
--temporal`` draws them; both loaders sample only edges no later than their seed's time, with
the uniform strategy, and gather the features and labels of the nodes they reach. PyG samples
each seed's subgraph apart (disjoint), graphloom relabels (node, time) pairs, so the nodes per
batch are printed beside the rates.
"""

import statistics
import time

import torch

import graphloom


def _data(dataset, generator):
    from torch_geometric.data import Data

    edge_index = dataset.graph.edge_index()
    data = Data(edge_index=edge_index, num_nodes=dataset.num_nodes(),
                x=dataset.node_features["feat"], y=dataset.labels)
    data.edge_time = torch.randint(1 << 20, (edge_index.size(1),), generator=generator)
    return data


def _epoch(loader):
    start, seeds, nodes, batches = time.perf_counter(), 0, 0, 0
    for batch in loader:
        seeds += batch.batch_size
        nodes += batch.num_nodes
        batches += 1
    return seeds / (time.perf_counter() - start), nodes / max(batches, 1)


def temporal_bench(args):
    from graphloom import bench

    if not bench.pyg_has_sampler():
        raise SystemExit("temporal: PyG's temporal NeighborLoader needs pyg-lib, which is not "
                         "installed")
    from torch_geometric.loader import NeighborLoader as PygNeighborLoader

    from graphloom.pyg import NeighborLoader

    torch.set_num_threads(args.threads)
    dataset = graphloom.load_dataset(args.data, tables_in_memory=True)
    generator = torch.Generator().manual_seed(0)
    data = _data(dataset, generator)
    seeds = dataset.splits.get("train", torch.arange(dataset.num_nodes()))
    seeds = seeds[: args.batches * args.batch_size]
    seed_time = torch.randint(1 << 20, (seeds.numel(),), generator=generator)
    num_neighbors = [int(f) for f in args.fanouts.split(",")][::-1]
    loaders = {
        name: kind(data, num_neighbors=num_neighbors, input_nodes=seeds, input_time=seed_time,
                   time_attr="edge_time", temporal_strategy="uniform",
                   batch_size=args.batch_size, shuffle=True)
        for name, kind in (("graphloom.pyg NeighborLoader", NeighborLoader),
                           ("pyg NeighborLoader", PygNeighborLoader))}
    print(f"temporal bench: {args.data}, edge times, fanouts {args.fanouts} (input layer first), "
          f"batch {args.batch_size}, {args.batches} batches, {args.threads} threads, "
          f"{args.rounds} rounds")
    for loader in loaders.values():
        _epoch(loader)  # warm-up
    rates = {name: [] for name in loaders}
    nodes = {name: [] for name in loaders}
    for round_index in range(args.rounds):
        order = list(loaders.items())
        for name, loader in order if round_index % 2 == 0 else order[::-1]:
            rate, per_batch = _epoch(loader)
            rates[name].append(rate)
            nodes[name].append(per_batch)
        bench.print_round(round_index, rates)
    reference = rates["pyg NeighborLoader"]
    for name, values in rates.items():
        ratios = [value / ref for value, ref in zip(values, reference)]
        print(f"{name:>29}: {statistics.median(values):10,.0f} seeds/s (median; range "
              f"{min(values):,.0f}-{max(values):,.0f})  ratio to pyg "
              f"{statistics.median(ratios):.2f} (median of per-round ratios); "
              f"{statistics.median(nodes[name]):,.0f} nodes per batch")
