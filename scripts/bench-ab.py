#!/usr/bin/env python3
"""A/B benchmark of graphloom builds: runs the same `graphloom bench` commands with each build in
turn, ROUNDS times, and prints each figure's median and range per build and the median of the
per-round ratios to the first build (the reference). This host's speed drifts by tens of
percent within minutes, so only alternating runs compare two builds; each round also swaps
which build goes first.

  scripts/bench-ab.py --data DIR [--link-data DIR] [--rounds 3] [--only sample,train] BUILD ...

A BUILD is a command prefix that runs a graphloom binary, e.g. `/tmp/old/build/graphloom` or
`env OMP_WAIT_POLICY=passive build/graphloom`. Peak RSS is the whole process's (GNU time).
With --link-data (a dataset with edge splits, e.g. `convert --link-split`) it also times one
epoch of `train --task link` (no validation, no test), whose summary line gives edges/s.
Standard library only.
"""
import argparse
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

# name -> (bench arguments, {figure: regex whose group 1 is the number})
BENCHES = {
    "sample 10,10,10": ("sample --fanouts 10,10,10", {"seeds/s": r"seeds/s\s+(\d+)"}),
    "loader 10,10,10": ("loader --fanouts 10,10,10", {"seeds/s": r"seeds/s\s+(\d+)"}),
    "train 10,10,10": ("train --fanouts 10,10,10 --batches 20", {"seeds/s": r"\n\s+seeds/s (\d+)"}),
    "train 15,10,5": ("train --fanouts 15,10,5 --batches 20", {"seeds/s": r"\n\s+seeds/s (\d+)"}),
    "data-parallel": ("data-parallel --batches 20", {
        "1 process seeds/s": r"1 process\s+(\d+) seeds/s",
        "2 processes seeds/s": r"2 processes\s+(\d+) seeds/s",
    }),
    "dist": ("dist --batches 20", {
        "sample DistGraph seeds/s": r"sample \(.*\n.*DistGraph\s+(\d+) seeds/s",
        "loader DistGraph seeds/s": r"loader \(.*\n.*DistGraph\s+(\d+) seeds/s",
        "pull 4 clients MB/s": r"4 client\(s\):\s+(\d+) MB/s",
    }),
}
RSS_BENCHES = {"loader 10,10,10", "train 10,10,10", "train 15,10,5"}
# Training commands, run on --link-data rather than as `graphloom bench` on --data.
TRAIN_BENCHES = {
    "train --task link": ("train --task link --fanouts 10,10 --epochs 1 --eval-every 0 --no-test "
                          "--no-progress", {"edges/s": r"best epoch \S+\s+(\d+) edges/s"}),
}


def run(build, bench_args, data, subcommand=("bench",)):
    with tempfile.NamedTemporaryFile("r") as timing:
        command = ["/usr/bin/time", "-o", timing.name, "-f", "%M"] + shlex.split(build)
        command += list(subcommand) + bench_args.split() + ["--data", data]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"bench-ab: {' '.join(command)} failed ({result.returncode}):\n"
                     f"{result.stderr[-2000:]}")
        peak_kb = int(timing.read().strip().splitlines()[-1])
    return result.stdout + result.stderr, peak_kb / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="dataset directory (the reference graph)")
    parser.add_argument("--link-data", default="",
                        help="a dataset with edge splits: also time `train --task link`")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every build (default 3)")
    parser.add_argument("--only", default="", help="comma-separated bench names: " +
                        ", ".join(BENCHES))
    parser.add_argument("builds", nargs="+", help="command prefixes running graphloom")
    args = parser.parse_args()
    known = dict(BENCHES, **(TRAIN_BENCHES if args.link_data else {}))
    names = [n for n in known if not args.only or any(o in n for o in args.only.split(","))]
    if not names:
        sys.exit(f"bench-ab: --only {args.only!r} names none of: {', '.join(known)}")
    # figures[(bench, figure)][build] -> one value per round
    figures = {}
    for round_index in range(args.rounds):
        order = args.builds if round_index % 2 == 0 else args.builds[::-1]
        for name in names:
            bench_args, patterns = known[name]
            for build in order:
                if name in TRAIN_BENCHES:
                    output, peak_gb = run(build, bench_args, args.link_data, subcommand=())
                else:
                    output, peak_gb = run(build, bench_args, args.data)
                for figure, pattern in patterns.items():
                    match = re.search(pattern, output)
                    if not match:
                        sys.exit(f"bench-ab: no '{figure}' in the output of {build} bench "
                                 f"{bench_args}:\n{output[-2000:]}")
                    figures.setdefault((name, figure), {}).setdefault(build, []).append(
                        float(match.group(1)))
                if name in RSS_BENCHES:
                    figures.setdefault((name, "peak RSS GB"), {}).setdefault(build, []).append(
                        peak_gb)
                print(f"round {round_index + 1} {name} {build}: done", file=sys.stderr)
    reference = args.builds[0]
    header = ["bench", "figure"] + [f"`{b}`" for b in args.builds]
    header += [f"ratio to `{reference}`" for _ in args.builds[1:]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for (name, figure), per_build in figures.items():
        cells = [name, figure]
        for build in args.builds:
            values = per_build[build]
            cells.append(f"{statistics.median(values):,.2f} ({min(values):,.2f}-{max(values):,.2f})"
                         if "GB" in figure else
                         f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})")
        for build in args.builds[1:]:
            ratios = [b / a for a, b in zip(per_build[reference], per_build[build])]
            cells.append(f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
