#!/usr/bin/env bash
# The distributed-training figure of docs/benchmarks.md: 2 loopback machines x (1 server +
# 1 trainer) on the reference graph, 20 batches per trainer. With several binaries it runs them
# in turn, PAIRS times, because this host's speed drifts by tens of percent within minutes:
# only alternating runs compare two builds. Prints seeds/s and the whole job's CPU time.
#
#   scripts/bench-two-machines.sh WORKDIR FANOUTS PAIRS BINARY [BINARY ...]
#
# WORKDIR holds the reference graph's parts in erparts/ (make them with
#   /usr/bin/python3 ../shared/bench/make_bench_graph.py er --kind er
#   graphloom partition --data er --parts 2 --method metis --balance-train --balance-edges \
#     --out erparts
# ); the ip config and the cluster token are written there. GRAPHLOOM_SHM_DIR, when set, reaches
# every process (e.g. a tmpfs mounted with huge=within_size: parts on 2 MB pages).
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
workdir=$1 fanouts=$2 pairs=$3
shift 3
cd "$workdir"
[ -f erparts/partition.json ] || { echo "no erparts/partition.json in $workdir" >&2; exit 1; }
printf '127.0.0.1 30050\n127.0.0.1 30060\n' > ip.txt
(umask 077; head -c 32 /dev/urandom | base64 > token)
for _ in $(seq "$pairs"); do
  for binary in "$@"; do
    log=$(mktemp)
    code=0
    /usr/bin/time -o "$log.time" -f "%U+%S CPU-s, %e s wall" "$binary" launch \
      --ip-config ip.txt --part-config erparts --num-servers 1 --num-trainers 1 \
      --token-file token -- "$binary" train --epochs 1 --eval-every 0 --no-test \
      --no-progress --max-batches 20 --fanouts "$fanouts" > "$log" 2>&1 || code=$?
    if [ "$code" -ne 0 ]; then
      echo "$binary: FAILED (exit $code): $(tail -1 "$log")"
    else
      echo "$binary: $(grep -a -o '[0-9]* seeds/s' "$log" | tail -1), $(tail -1 "$log.time")"
    fi
    rm -f "$log" "$log.time"
    sleep 2  # the previous run's ports and segments are released
  done
done
