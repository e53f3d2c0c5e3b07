#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Where the default mode stalls a launching thread (issue 25): back-to-back
# empty kernels (bench/gpu/empty.cu, a million after 700 ms of them) once
# with nothing, then RUNS times under xputop's default mode with the library
# (XPUTOP_INJECT_STATS=1); each run's stalls (blocks of 64 launches that
# took over 1 ms) lined up with the library's trail on one clock: b/s an
# attach's start and end (the agent's cuptiSubscribe and the rest), f/F/x
# a detach's start, its flush's end and its end (cuptiFinalize, on the
# launching thread), T/t/W a slice, A/a kernel activity.  On a machine with
# an NVIDIA GPU and nvcc, as root:
#
#   sh bench/gpu/stalls.sh BUILD OUT [RUNS]
#
# BUILD holds xputop and libxputop_inject.so (make STATIC=1 OUTPUT=BUILD).
# Prints, per run, the stalls with the trail's marks within 3 ms of them
# (ms from the stall's start), then what each detach's flush and
# cuptiFinalize took.  The workload runs on CPUS (default 2-5), xputop on
# XP_CPUS (default 8-15).
set -u
B=$(realpath "$1") O=$2 RUNS=${3:-3}
CPUS=${CPUS:-2-5} XP_CPUS=${XP_CPUS:-8-15}
HERE=$(dirname "$(realpath "$0")")
SOCK=/run/xputop/gpu.sock
mkdir -p "$O"
O=$(realpath "$O")
nvcc -O2 -o "$O/empty" "$HERE/empty.cu" || exit 1
taskset -c "$CPUS" env -u CUDA_INJECTION64_PATH "$O/empty" 1000000 700 > "$O/none.out"
rm -f "$SOCK"
taskset -c "$XP_CPUS" "$B/xputop" -b -d 1 --window 10 > /dev/null 2> "$O/xputop.err" &
XP=$!
i=0
until [ -S "$SOCK" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
for r in $(seq 1 "$RUNS"); do
	taskset -c "$CPUS" env CUDA_INJECTION64_PATH="$B/libxputop_inject.so" XPUTOP_INJECT_STATS=1 \
		"$O/empty" 1000000 700 > "$O/run$r.out" 2> "$O/run$r.err"
done
kill -INT $XP
wait $XP
echo "== none: $(python3 -c 'import json, sys; o = json.load(open(sys.argv[1])); print(o["us_per_launch"], "us a launch,", o["stalls"], "stalls,", o["stall_ms"], "ms")' "$O/none.out")"
for r in $(seq 1 "$RUNS"); do
	echo "== run $r"
	python3 - "$O/run$r.out" "$O/run$r.err" <<'P'
import json
import sys

out = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")][-1]
err = [json.loads(x) for x in open(sys.argv[2]) if x.startswith("{")]
trail = [x for x in err if "xputop_inject_trail" in x][-1]
stats = [x for x in err if "xputop_inject" in x][-1]["xputop_inject"]
marks = [(trail["from_s"] + t, what) for t, what, _ in trail["xputop_inject_trail"]]
print(f"{out['us_per_launch']} us a launch, {out['stalls']} stalls, {out['stall_ms']} ms; {stats['attaches']} "
      f"attaches ({stats['attach_ms_avg']} ms on average), {stats['detaches']} detaches "
      f"({stats['detach_ms_avg']} ms)")
t0 = marks[0][0] if marks else 0
for at, ms in out["stall_at"]:
    near = " ".join(f"{w}{(t - at) * 1e3:+.1f}" for t, w in marks if at - 0.003 <= t <= at + ms / 1e3 + 0.003)
    print(f"  stall at {at - t0:8.3f} s, {ms:6.2f} ms: {near}")
flush = [(b[0] - a[0]) * 1e3 for a, b in zip(marks, marks[1:]) if a[1] == "f" and b[1] == "F"]
fin = [(b[0] - a[0]) * 1e3 for a, b in zip(marks, marks[1:]) if a[1] == "F" and b[1] == "x"]
print("  detaches: flush ms", " ".join(f"{x:.2f}" for x in flush), "| cuptiFinalize ms",
      " ".join(f"{x:.2f}" for x in fin))
P
done
