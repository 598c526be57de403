"""DGL's side of ``scripts/bench-all.sh``: the same dataset files, the same batches, DGL's own
API. Run with DGL importable (``PYTHONPATH`` naming an installation), one process per round:

``python -m graphloom.bench_dgl sample --data DIR --fanouts 10,10,10 15,10,5`` prints, per
fanouts, DGL's ``NeighborSampler.sample_blocks`` seeds/s over the shuffled training nodes in
batches of 1024 ("sample"), and the same with the input rows of ``feat`` and the seeds'
labels gathered, as DGL's DataLoader does with ``num_workers=0`` ("loader").

``python -m graphloom.bench_dgl partition --data DIR --parts 4 --out DIR`` runs
``dgl.distributed.partition_graph`` with METIS, balancing the training nodes, and prints its
time and the edge cut METIS reports.

The graph is built from the dataset's ``edges.npy`` (or its CSC arrays) with the CSC format
created up front, as graphloom's loader has its CSC ready.
"""

import argparse
import json
import os
import time

import numpy as np
import torch


def load(data):
    import dgl

    with open(os.path.join(data, "metadata.json")) as file:
        meta = json.load(file)
    spec = meta["graph"]
    if "edges" in spec:
        edges = np.load(os.path.join(data, spec["edges"]), mmap_mode="r")
        src, dst = torch.from_numpy(np.ascontiguousarray(edges[:, 0])), \
            torch.from_numpy(np.ascontiguousarray(edges[:, 1]))
        graph = dgl.graph((src, dst), num_nodes=meta["num_nodes"])
    else:
        indptr = torch.from_numpy(np.load(os.path.join(data, spec["indptr"]))).long()
        indices = torch.from_numpy(np.load(os.path.join(data, spec["indices"]))).long()
        graph = dgl.graph(("csc", (indptr, indices, torch.tensor([], dtype=torch.int64))),
                          num_nodes=meta["num_nodes"])
    graph = graph.formats(["csc"])
    graph.create_formats_()
    feat = torch.from_numpy(np.load(os.path.join(data, meta["node_features"]["feat"])))
    labels = torch.from_numpy(np.load(os.path.join(data, meta["labels"])))
    train = torch.from_numpy(np.load(os.path.join(data, meta["splits"]["train"]))).long()
    return graph, feat, labels, train


def sample(args):
    import dgl

    torch.set_num_threads(args.threads)
    graph, feat, labels, train = load(args.data)
    generator = torch.Generator().manual_seed(0)
    for fanouts in args.fanouts:
        sampler = dgl.dataloading.NeighborSampler([int(f) for f in fanouts.split(",")])
        for mode in ("sample", "loader"):
            order = train[torch.randperm(train.numel(), generator=generator)]
            batches = order.split(args.batch_size)[: args.batches]
            start = time.perf_counter()
            seeds = 0
            for batch in batches:
                input_nodes, output_nodes, _ = sampler.sample_blocks(graph, batch)
                if mode == "loader":
                    feat.index_select(0, input_nodes)
                    labels.index_select(0, output_nodes)
                seeds += batch.numel()
            print(f"dgl {mode} {fanouts}: {seeds / (time.perf_counter() - start):.0f} seeds/s",
                  flush=True)


def partition(args):
    import dgl

    graph, _, _, train = load(args.data)
    graph = graph.formats(["coo", "csr", "csc"])  # partition_graph needs COO
    mask = torch.zeros(graph.num_nodes(), dtype=torch.bool)
    mask[train] = True
    graph.ndata["train_mask"] = mask
    start = time.perf_counter()
    dgl.distributed.partition_graph(graph, "bench", args.parts, args.out, part_method="metis",
                                    balance_ntypes=mask.int(), balance_edges=False)
    print(f"dgl partition: {time.perf_counter() - start:.1f} s", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m graphloom.bench_dgl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sampling = commands.add_parser("sample", help="NeighborSampler seeds/s, with and without "
                                   "gathering features")
    sampling.add_argument("--data", required=True, help="graphloom dataset directory")
    sampling.add_argument("--fanouts", nargs="+", default=["10,10,10"],
                          help="one or more fanout lists, input layer first")
    sampling.add_argument("--batch-size", type=int, default=1024)
    sampling.add_argument("--batches", type=int, default=98, help="batches per measurement")
    sampling.add_argument("--threads", type=int, default=2)
    parts = commands.add_parser("partition", help="dgl.distributed.partition_graph with METIS")
    parts.add_argument("--data", required=True, help="graphloom dataset directory")
    parts.add_argument("--parts", type=int, default=4)
    parts.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args(argv)
    {"sample": sample, "partition": partition}[args.command](args)


if __name__ == "__main__":
    main()
