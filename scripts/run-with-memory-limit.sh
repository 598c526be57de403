#!/bin/bash
# Runs a command with its memory capped (resident pages and page cache together), e.g. to show
# that training from memory-mapped features larger than the limit works (out-of-core):
#   sudo scripts/run-with-memory-limit.sh 1G ./build/graphloom train --data big ...
# Uses `systemd-run --scope -p MemoryMax=` where systemd runs, otherwise a cgroup (v2 or v1)
# of its own, removed afterwards; prints the cgroup's peak usage when the kernel records it.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 LIMIT COMMAND [ARGS...]   (LIMIT like 512M or 2G)" >&2
  exit 2
fi
limit=$1
shift
if systemd-run --scope -q -p MemoryMax="$limit" true 2>/dev/null; then
  exec systemd-run --scope -q -p MemoryMax="$limit" "$@"
fi
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root to create a cgroup" >&2; exit 2; }
name="graphloom-limit-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  parent=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  group="$parent/$name"
  mkdir "$group"
  echo "$limit" >"$group/memory.max"
  peak_file="$group/memory.peak"
else
  parent=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
  group="$parent/$name"
  mkdir "$group"
  echo "$limit" >"$group/memory.limit_in_bytes"
  peak_file="$group/memory.max_usage_in_bytes"
fi
cleanup() {
  echo $$ >"$parent/cgroup.procs" 2>/dev/null || true
  rmdir "$group" 2>/dev/null || true
}
trap cleanup EXIT
echo $$ >"$group/cgroup.procs"
status=0
"$@" || status=$?
if [ -r "$peak_file" ]; then
  echo "memory limit $limit: peak usage $(($(cat "$peak_file") / 1048576)) MiB (resident + page cache)" >&2
fi
exit $status
