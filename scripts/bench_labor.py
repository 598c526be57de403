#!/usr/bin/env python3
"""The LABOR section of docs/benchmarks.md (scripts/bench-all.sh calls it; runs alone too).

Two tables:
- `graphloom bench sample --sampler labor` on both reference graphs, for LABOR-0,
  layer_dependency, batch_dependency=32, LABOR-1 and LABOR-* (importance sampling, one round
  and until converged): each run alternates LABOR and the neighbor sampler (3 rounds, medians)
  and checks the first hop against the closed form of both samplers.
- `graphloom train` on Cora, CiteSeer and Tolokers (../shared/datasets), neighbor sampling
  against LABOR-0 and LABOR-* with the same fanouts, over 3 seeds: the test score per seed and
  the mean (accuracy; ROC-AUC on Tolokers, whose accuracy stays near its 78% majority rate).
Prints Markdown to stdout.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

from bench_all import run

VARIANTS = {"LABOR-0": [], "layer_dependency": ["--layer-dependency"],
            "batch_dependency=32": ["--batch-dependency", "32"],
            "LABOR-1": ["--importance-sampling", "1"],  # one importance-sampling round
            "LABOR-*": ["--importance-sampling", "-1"]}  # rounds until converged
# The samplers the accuracy table compares, by their train flags.
SAMPLERS = {"neighbor": [], "LABOR-0": ["--sampler", "labor"],
            "LABOR-*": ["--sampler", "labor", "--importance-sampling", "-1"]}
ROWS = ("input nodes per batch", "sampled edges per batch", "seeds/s",
        "first hop: ratio measured", "fetched, SIEVE cache of 10%")
# Per dataset: the training recipe both samplers share (GraphSAGE, fanouts 10,10).
DATASETS = {
    "cora": ["--batch-size", "32", "--epochs", "50", "--normalize-features", "row"],
    "citeseer": ["--batch-size", "32", "--epochs", "50", "--normalize-features", "row"],
    "tolokers": ["--batch-size", "256", "--epochs", "20"],
}
RECIPE = ["--model", "sage", "--fanouts", "10,10", "--hidden", "64", "--lr", "0.01",
          "--weight-decay", "5e-4"]
SEEDS = (1, 2, 3)


def sampling_rows(cli, graphs, variants):
    """One Markdown row per graph, variant and figure, from bench sample's LABOR table."""
    rows = []
    for graph, data in graphs.items():
        for variant in variants:
            flags = VARIANTS[variant]
            text = run([cli, "bench", "sample", "--data", data, "--sampler", "labor", *flags])
            for line in text.splitlines():
                name = next((row for row in ROWS if line.strip().startswith(row)), None)
                if name is None or line.rstrip().endswith("per thread)"):  # the run's own line
                    continue
                if name.startswith("first hop"):  # "ratio measured 0.996x, closed form ..."
                    rows.append(f"| {graph} | {variant} | first hop vs closed form | "
                                f"{line.split(':', 1)[1].strip()} | | |")
                    continue
                labor, neighbor, ratio = line.split()[-3:]
                label = "feature bytes fetched per epoch, SIEVE 10%" if name.startswith(
                    "fetched") else name
                rows.append(f"| {graph} | {variant} | {label} | {labor} | {neighbor} | {ratio} |")
    return rows


def accuracy_rows(cli, datasets_root, scratch):
    """One Markdown row per dataset: test accuracy of each sampler per seed, and the means."""
    rows = []
    for name, recipe in DATASETS.items():
        source = os.path.join(datasets_root, name)
        if not os.path.isdir(source):
            rows.append(f"| {name} | SKIPPED: {source} is absent |")
            continue
        data = os.path.join(scratch, name)
        run([cli, "convert", "--from", "shared", source, data])
        scores = {sampler: [] for sampler in SAMPLERS}
        for seed in SEEDS:
            for sampler, flags in SAMPLERS.items():
                result = os.path.join(scratch, f"{name}-{sampler}-{seed}.json")
                run([cli, "train", "--data", data, *RECIPE, *recipe, *flags,
                     "--seed", str(seed), "--result-json", result])
                with open(result) as file:
                    figures = json.load(file)
                # Two classes (Tolokers): ROC-AUC, its own metric; accuracy is near the
                # majority rate there whatever the model.
                metric = "test_auc" if "test_auc" in figures else "test_acc"
                scores[sampler].append(figures[metric])
        means = {sampler: statistics.mean(values) for sampler, values in scores.items()}
        per_seed = {sampler: " / ".join(f"{v:.3f}" for v in values)
                    for sampler, values in scores.items()}
        cells = [per_seed[sampler] for sampler in SAMPLERS]
        cells += [f"{means[sampler]:.4f}" for sampler in SAMPLERS]
        cells += [f"{100 * (means[sampler] - means['neighbor']):+.2f}"
                  for sampler in SAMPLERS if sampler != "neighbor"]
        rows.append(f"| {name} | {metric.replace('test_', '')} | {' | '.join(cells)} |")
        print(f"bench-labor: {name} done", file=sys.stderr)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--er", help="the ER reference graph (a dataset dir)")
    parser.add_argument("--rmat", help="the R-MAT reference graph")
    parser.add_argument("--graphloom", default="build/graphloom")
    parser.add_argument("--datasets", default="../shared/datasets")
    parser.add_argument("--skip-sampling", action="store_true", help="only the accuracy table")
    parser.add_argument("--skip-accuracy", action="store_true", help="only the sampling table")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
                        help="the sampling table's LABOR variants (default: all)")
    args = parser.parse_args()
    print("## LABOR\n")
    if not args.skip_sampling:
        graphs = {"ER 1M": args.er, "R-MAT 1M": args.rmat}
        if None in graphs.values():
            sys.exit("bench-labor: --er and --rmat are needed (or --skip-sampling)")
        print("`graphloom bench sample --sampler labor`: fanouts 10,10,10, batch 1024, 98 "
              "batches, 2 threads; LABOR and the neighbor sampler alternate, 3 rounds, "
              "medians.\n")
        print("| graph | variant | figure | LABOR | neighbor | ratio |")
        print("|---|---|---|---|---|---|")
        print("\n".join(sampling_rows(args.graphloom, graphs, args.variants)))
    if args.skip_accuracy:
        return
    print(f"\n`graphloom train {' '.join(RECIPE)}` and each dataset's batch size and epochs: "
          f"the test score (accuracy; ROC-AUC on two classes), seeds "
          f"{', '.join(map(str, SEEDS))}.\n")
    others = [sampler for sampler in SAMPLERS if sampler != "neighbor"]
    header = ([f"{sampler} (per seed)" for sampler in SAMPLERS] +
              [f"{sampler} mean" for sampler in SAMPLERS] +
              [f"{sampler} - neighbor (points)" for sampler in others])
    print(f"| dataset | metric | {' | '.join(header)} |")
    print("|" + "---|" * (2 + len(header)))
    with tempfile.TemporaryDirectory() as scratch:
        print("\n".join(accuracy_rows(args.graphloom, args.datasets, scratch)))


if __name__ == "__main__":
    main()
