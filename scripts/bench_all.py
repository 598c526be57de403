#!/usr/bin/env python3
"""The figures of docs/benchmarks.md, regenerated in one run (scripts/bench-all.sh calls it).

Every comparison alternates graphloom and the peer in ROUNDS rounds (the order swapped each
round) and reports medians, their ranges, and the median of the per-round ratios: this host's
speed drifts by tens of percent within minutes. Peers run only where given: --dgl names a
directory holding an importable DGL (e.g. `pip install --target DIR dgl==2.1.0`); PyG's
NeighborLoader runs where the venv's torch_geometric has a sampler (pyg-lib or torch-sparse).
Nothing is fetched or built here. Prints Markdown: one section per job.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

FANOUTS = ("10,10,10", "15,10,5")


def run(command, env=None):
    """stdout+stderr of a command that must succeed."""
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"bench-all: {shlex.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def number(pattern, text):
    match = re.search(pattern, text)
    if match is None:
        sys.exit(f"bench-all: no '{pattern}' in:\n{text}")
    return float(match.group(1))


def peak_rss_gb(time_output):
    """The peak RSS that GNU time -v reports, in GB."""
    return number(r"Maximum resident set size \(kbytes\): (\d+)", time_output) / 1e6


def summary(values):
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def ratio(ours, theirs):
    ratios = [a / b for a, b in zip(ours, theirs)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


class Bench:
    def __init__(self, args):
        self.args = args
        self.cli = args.graphloom
        self.python = args.python
        self.dgl_env = None
        if args.dgl:
            self.dgl_env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [args.dgl, os.environ.get("PYTHONPATH", "")]))

    def graphloom(self, *arguments):
        return run([self.cli, *arguments])

    def sampling(self, data, memory):
        """graphloom bench sample / loader against DGL's sample_blocks, per fanouts; `memory`
        gets each side's peak RSS in GB (graphloom's loader, DGL's whole process)."""
        ours = {(mode, f): [] for mode in ("sample", "loader") for f in FANOUTS}
        theirs = {key: [] for key in ours}
        memory.update({"graphloom": 0.0, "DGL": 0.0})
        for round_index in range(self.args.rounds):
            sides = ["graphloom", "dgl"] if round_index % 2 == 0 else ["dgl", "graphloom"]
            for side in sides:
                if side == "dgl" and self.dgl_env:
                    text = run(["/usr/bin/time", "-v", self.python, "-m", "graphloom.bench_dgl",
                                "sample", "--data", data, "--fanouts", *FANOUTS], env=self.dgl_env)
                    memory["DGL"] = max(memory["DGL"], peak_rss_gb(text))
                    for mode, f in theirs:
                        theirs[(mode, f)].append(
                            number(rf"dgl {mode} {f}: (\d+) seeds/s", text))
                elif side == "graphloom":
                    for mode, f in ours:
                        text = self.graphloom("bench", mode, "--data", data, "--fanouts",
                                              *f.split(","), "--batches", "98")
                        ours[(mode, f)].append(number(r"seeds/s\s+(\d+)", text))
                        if mode == "loader":
                            memory["graphloom"] = max(memory["graphloom"],
                                                      number(r"peak RSS ([0-9.]+) GB", text))
        rows = []
        for (mode, f), values in ours.items():
            peer = theirs[(mode, f)]
            rows.append(f"| {mode} | {f} | {summary(values)} | "
                        f"{summary(peer) if peer else 'not run'} | "
                        f"{ratio(values, peer) if peer else '-'} |")
        return rows

    def training(self, data):
        text = self.graphloom("bench", "train", "--data", data, "--batches", "20")
        split = re.search(r"time split \(s\): (.*)", text).group(1)
        seeds = number(r"seeds/s (\d+)", text)
        rss = number(r"peak RSS ([0-9.]+) GB", text)
        return f"| {seeds:,.0f} | {split} | {rss:.2f} GB |"

    def partitioning(self, data):
        """graphloom partition and DGL's partition_graph, once each, under GNU time."""
        commands = {"graphloom": ([self.cli, "partition", "--data", data, "--parts", "4",
                                   "--method", "metis", "--balance-train", "--out"], None)}
        if self.dgl_env:
            commands["DGL"] = ([self.python, "-m", "graphloom.bench_dgl", "partition", "--data",
                                data, "--parts", "4", "--out"], self.dgl_env)
        figures = {}
        with tempfile.TemporaryDirectory(dir=self.args.scratch) as scratch:
            for name, (command, env) in commands.items():
                start = time.perf_counter()
                text = run(["/usr/bin/time", "-v", *command, os.path.join(scratch, name)], env)
                figures[name] = (time.perf_counter() - start, peak_rss_gb(text))
        ours = figures["graphloom"]
        return [f"| {name} | {seconds:.1f} s | {ours[0] / seconds:.2f}x | {rss:.2f} GB | "
                f"{ours[1] / rss:.2f}x |" for name, (seconds, rss) in figures.items()]

    def distributed(self, data):
        text = self.graphloom("bench", "dist", "--data", data, "--batches", "20")
        return [line for line in text.splitlines() if not line.startswith("[")]  # no log lines

    def python_loader(self, data):
        text = run([self.python, "-m", "graphloom.bench", "loader", "--data", data,
                    "--rounds", str(self.args.rounds), "--cli", self.cli])
        return [line for line in text.splitlines() if "median" in line or "not measured" in line]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--er", required=True, help="the ER reference graph (a dataset dir)")
    parser.add_argument("--rmat", required=True, help="the R-MAT reference graph")
    parser.add_argument("--graphloom", default="build/graphloom")
    parser.add_argument("--python", default=".venv/bin/python")
    parser.add_argument("--dgl", help="a directory holding an importable dgl")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scratch", default=None, help="where partitions are written")
    args = parser.parse_args()
    bench = Bench(args)
    started = time.perf_counter()
    graphs = {"ER 1M": args.er, "R-MAT 1M": args.rmat}

    print("## Sampling and loading\n\nBatch 1024, 98 batches (one epoch), 2 threads.\n")
    print("| graph | job | fanouts | graphloom seeds/s | DGL seeds/s | ratio |")
    print("|---|---|---|---|---|---|")
    memory = {}
    for name, data in graphs.items():
        memory[name] = {}
        for row in bench.sampling(data, memory[name]):
            print(f"| {name} {row}")
    print("\n## Training\n\n`graphloom bench train`: 3-layer GraphSAGE, hidden 256, batch 1024, 20 "
          "batches.\n")
    print("| graph | seeds/s | time split (s) | peak RSS |")
    print("|---|---|---|---|")
    for name, data in graphs.items():
        print(f"| {name} {bench.training(data)}")
    print("\n## Partitioning\n\nMETIS, 4 parts, balanced training nodes, under `/usr/bin/time -v`.\n")
    print("| graph | tool | time | graphloom's time / this | peak RSS | graphloom's / this |")
    print("|---|---|---|---|---|---|")
    for name, data in graphs.items():
        for row in bench.partitioning(data):
            print(f"| {name} {row}")
    print("\n## Memory\n\nPeak RSS of the sampling and loading runs above.\n")
    print("| graph | graphloom `bench loader` | DGL process (graph, features, sampling) |")
    print("|---|---|---|")
    for name, figures in memory.items():
        dgl = f"{figures['DGL']:.2f} GB" if figures["DGL"] else "not run"
        print(f"| {name} | {figures['graphloom']:.2f} GB | {dgl} |")
    print("\n## Distributed\n\n`graphloom bench dist` on ER 1M: 2 parts, each served on loopback.\n")
    print("```")
    print("\n".join(bench.distributed(args.er)))
    print("```")
    print("\n## Python loader\n\n`python -m graphloom.bench loader` on ER 1M.\n")
    print("```")
    print("\n".join(bench.python_loader(args.er)))
    print("```")
    print(f"\nbench-all: {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
