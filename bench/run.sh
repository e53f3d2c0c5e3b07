#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The CPU-side benchmark suite: xputop against the tools users would
# otherwise run, every figure taken side by side in this run.
#
#   sudo bench/run.sh [BUILD_DIR]      (make bench runs it; about 16 minutes
#                                       on a 2-CPU machine)
#
#   sampling.sh   CPU sampling overhead: xz -9 alone, under perf record,
#                 bpftrace and xputop at 99 Hz
#   cost.sh       xputop's own CPU, idle and under a 200k events/s load,
#                 next to top -d 1 and perf top
#   npu.sh        NPU probes: the stand-in driver traced by xputop and by the
#                 NPU tutorial's bpftrace script; live ingest and drops at the
#                 storm's top rate; the ioctl path
#   replay.sh     ingest from an hour-long recording, and xputop's memory
#   symbolize.sh  a large C++ library's stacks against addr2line -f -C
#   fleet.sh      serving Prometheus metrics and writing pprof every second,
#                 against the same xputop without them
# Each script runs alone too, with knobs of its own (ROUNDS, SECS, ...).
# GPU figures come from the GPU machine: bench/gpu/README.md.
#
# Prints each section's details as it goes, then the table: metric, xputop,
# best peer or goal, ratio, verdict.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build}
[ "$(id -u)" -eq 0 ] || { echo "run as root (BPF, perf)" >&2; exit 1; }
for f in "$OUT/xputop" "$OUT/bench/genrec" "$OUT/bench/replay" "$OUT/bench/symbench" \
	"$OUT/tests/progs/npu_driver" "$OUT/tests/progs/npu_ioctl"; do
	[ -x "$f" ] || { echo "bench: $f is missing: make OUTPUT=$OUT" >&2; exit 1; }
done
BENCH_ROWS=$(mktemp /tmp/xputop-bench-rows.XXXXXX)
export BENCH_ROWS
trap 'rm -f "$BENCH_ROWS"' EXIT

start=$(date +%s)
echo "xputop benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in sampling cost npu replay symbolize fleet; do
	echo
	echo "######## bench/$s.sh"
	sh bench/$s.sh "$OUT"
done

echo
echo "######## summary ($(($(date +%s) - start)) s; load now: $(cut -d' ' -f1-3 /proc/loadavg))"
awk -F'\t' 'BEGIN { printf "%-66s | %-44s | %-40s | %-22s | %s\n", "metric", "xputop", "best peer / goal", "ratio", "verdict" }
	{ printf "%-66s | %-44s | %-40s | %-22s | %s\n", $1, $2, $3, $4, $5 }' "$BENCH_ROWS"
echo "GPU (CUPTI kernel timing, launch stacks): measured on the H100, see bench/RESULTS.md and bench/gpu/README.md"
