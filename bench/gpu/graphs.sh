#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck disable=SC2086  # $RUN, $XT and the options are word lists
# A CUDA-graph workload (compiled.py: torch.compile, mode="reduce-overhead")
# under the default mode against none (issue 25): ROUNDS rounds, each a run
# with no xputop then one under xputop, alternated; per run the step's wall
# and CPU time (compiled.py's own figures), and under xputop what its library
# says at exit (XPUTOP_INJECT_STATS=1): whether CUPTI's correlation ids stuck
# and whether kernel activity was kept on after the graphs were made
# (docs/gpu-cost.md, "Ids stuck by CUDA graphs").  Last, the medians and
# their ratio.  As root, on a machine with an NVIDIA GPU and PyTorch:
#
#   sh bench/gpu/graphs.sh BUILD OUT [ROUNDS]      # BUILD: make STATIC=1 OUTPUT=BUILD
#
# XPUTOP_OPTIONS and XPUTOP_ENV (e.g. XPUTOP_GRAPH_ACTIVITY_MS=0) go to the
# runs under xputop.  COST_LIB and COSTS split what CUPTI alone costs the
# same steps: COST_LIB is bench/gpu/cupti_cost.c built (cc -O2 -shared -fPIC
# -I/usr/local/cuda/include bench/gpu/cupti_cost.c -o cupti_cost.so -ldl
# -lpthread), COSTS its XPU_COST settings, each run in every round with no
# xputop (e.g. COSTS='subscribed callbacks activity duty:500:10').  MORE
# adds runs to each round: `dormant` (xputop's library loaded, no xputop)
# and `nolib` (under xputop without its library: the launch probes and CPU
# sampling alone).  PIN=CPU runs the workload on that CPU alone and xputop
# on the others (the runs' spread, unpinned, hides a few percent), with one
# BLAS and OpenMP thread; STEPS sets the steps a run (20,000: 3 s on an
# H200, of which kernel activity kept on after the graphs are made takes
# 2 s; 100,000 for the steady state).
set -u
X=$(realpath "$1")/xputop
L=$(realpath "$1")/libxputop_inject.so
O=$(realpath "$2")
[ -n "${COSTS:-}" ] && COST_LIB=$(realpath "$COST_LIB")
W="" XT=""
if [ -n "${PIN:-}" ]; then
	export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
	W="taskset -c $PIN"
	XT="taskset -c $(python3 -c "import os; print(','.join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != $PIN))")"
fi
ROUNDS=${3:-4}
STEPS=${STEPS:-20000}
# the workload, on its CPU where pinned; --out follows
RUN="$W python3 -X perf compiled.py --steps $STEPS --warmup 5"
mkdir -p "$O"
cd "$(dirname "$(realpath "$0")")" || exit 1
step() {	# RUN.w NAME
	python3 - "$1" "$2" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
print(f"{sys.argv[2]} wall_ms_per_step {d['wall_ms_per_step']:.4f} cpu_ms_per_step {d['cpu_ms_per_step']:.4f}")
PY
}
: > "$O/steps.txt"
for r in $(seq "$ROUNDS"); do
	$RUN --out "$O/none.$r.w" > /dev/null 2>&1
	step "$O/none.$r.w" "none.$r" | tee -a "$O/steps.txt"
	env XPUTOP_INJECT_STATS=1 ${XPUTOP_ENV:-} $XT timeout 300 "$X" -b -j -d 1 --window 900 ${XPUTOP_OPTIONS:-} -- \
		$RUN --out "$O/xputop.$r.w" > "$O/xputop.$r.json" 2> "$O/xputop.$r.err"
	step "$O/xputop.$r.w" "xputop.$r" | tee -a "$O/steps.txt"
	for m in ${MORE:-}; do
		case $m in
		dormant) env CUDA_INJECTION64_PATH="$L" $RUN --out "$O/dormant.$r.w" > /dev/null 2>&1 ;;
		nolib) $XT timeout 300 "$X" -b -j -d 1 --window 900 ${XPUTOP_OPTIONS:-} -- env -u CUDA_INJECTION64_PATH \
				$RUN --out "$O/nolib.$r.w" > "$O/nolib.$r.json" 2> "$O/nolib.$r.err" ;;
		*) echo "graphs.sh: MORE: no run named $m" >&2; exit 2 ;;
		esac
		step "$O/$m.$r.w" "$m.$r" | tee -a "$O/steps.txt"
	done
	for c in ${COSTS:-}; do
		n=cupti_$(echo "$c" | tr -c 'a-z0-9\n' _)
		env CUDA_INJECTION64_PATH="$COST_LIB" XPU_COST="$c" $RUN --out "$O/$n.$r.w" > /dev/null 2> "$O/$n.$r.err"
		step "$O/$n.$r.w" "$n.$r" | tee -a "$O/steps.txt"
	done
	grep -h '"xputop_inject"' "$O/xputop.$r.err" | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)["xputop_inject"]
    print("  library: ids_stuck %s activity_kept %s graph_kernels %s" % (d["ids_stuck"], d["activity_kept"], d["graph_kernels"]))'
done
python3 - "$O/steps.txt" <<'PY'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    f = l.split()
    runs.setdefault(f[0].split(".")[0], []).append(float(f[2]))
none = statistics.median(runs["none"])
for name, v in runs.items():
    if name != "none":
        m = statistics.median(v)
        print(f"median ms a step: none {none:.4f}, {name} {m:.4f} ({100 * (m / none - 1):+.1f}%); "
              f"its runs {min(v):.4f}-{max(v):.4f}")
PY
