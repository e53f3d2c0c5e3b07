#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What each GPU mode costs a launch (issue 25): one workload per command, a
# process per run, the modes alternated over ROUNDS rounds (the order reversed
# every other round), always with the two baselines in the same run.
#
#   sudo sh bench/gpu/per_launch.sh BUILD PROGS OUT empty|loop128 [MODE...]
#
# BUILD holds xputop and libxputop_inject.so (make STATIC=1 OUTPUT=BUILD);
# PROGS holds `empty` (bench/gpu/empty.cu) and, for cost= modes,
# cupti_cost.so (bench/gpu/cupti_cost.c).  OLD=DIR names a second build, run
# by the modes with a .old suffix (default.old), for before/after in one run.
# Modes (default: none dormant lo default exact cupti):
#   none       no library, no xputop
#   dormant    the library loaded, no xputop running
#   lo         xputop (default mode) watching, the workload without the library:
#              the launch-only probes
#   default    xputop (default, sampled) watching, the library loaded
#   attached   the same with XPUTOP_CUPTI_DETACH=0: CUPTI stays attached
#              between slices (as before issue 25's detaching)
#   noslice    the same with --gpu-sample 1/3600000: connected, never traced
#   sample=S:P default with --gpu-sample S/P (sample=20:1000: the default's
#              share traced in half as many slices, each CUPTI attach and
#              detach stalling the launcher, docs/gpu-cost.md)
#   noown      default with --gpu-own-hz 0: no own-CPU-time sampler on the
#              launching threads (its cost is default - noown)
#   loexact    xputop --gpu-exact watching, the workload without the library:
#              the launch-only probes on every launch (a trap's cost)
#   exact      xputop --gpu-exact
#   cupti      xputop --gpu-exact --gpu-no-stacks (CUPTI alone, as xputop uses it)
#   cost=X     no xputop; bench/gpu/cupti_cost.c's library with XPU_COST=X
# Workloads: empty (LAUNCHES back-to-back empty kernels after WARM_MS of them),
# loop128 (bench/gpu/torch_loop.py --size 128: a launch-bound PyTorch step,
# SECS seconds), hf (bench/gpu/hf_decode.py: batch-1 decode, STEPS generate()
# calls of 64 tokens each, ms a call).  Each run gives wall time and the process's own CPU time
# (getrusage RUSAGE_SELF, all threads, user + system) per launch or step, and
# the system part; for empty also its stalls (ms in blocks of 64 launches
# that took over 1 ms: a tracer attaching or detaching held the thread)
# and the CPU's counters over the launches (all threads: cycles, the
# kernel's part of them, instructions; empty.cu), which a VM's neighbours
# and steal time do not run up, so they resolve what wall time cannot (the
# lent H200 has none).  bench/gpu/per_launch_stats.py prints medians,
# quartiles and each round's difference and ratio to `none` and to
# `dormant`.  The workload runs on CPUS (default 2-5), xputop on XP_CPUS
# (default 8-15).  XP_JSON=1 keeps each xputop's JSON lines
# (OUT/WORKLOAD.xputop.N.json).
set -u
BUILD=$(realpath "$1") PROGS=$(realpath "$2") OUTD=$3 W=$4
shift 4
MODES=${*:-none dormant lo default exact cupti}
ROUNDS=${ROUNDS:-12} LAUNCHES=${LAUNCHES:-200000} WARM_MS=${WARM_MS:-700} SECS=${SECS:-2} STEPS=${STEPS:-6}
CPUS=${CPUS:-2-5} XP_CPUS=${XP_CPUS:-8-15} OLD=${OLD:-}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
SOCK=/run/xputop/gpu.sock
export PYTHONUNBUFFERED=1
XP='' XPCONF='' XPN=0 XP_JSON=${XP_JSON:-}

build_of() { case $1 in *.old) echo "$OLD" ;; *) echo "$BUILD" ;; esac; }

xp_conf() {	# the xputop a mode needs: none, or BUILD|options
	case ${1%.old} in
	none|dormant|cost=*) echo none ;;
	lo|default|attached) echo "$(build_of "$1")|" ;;
	noslice) echo "$(build_of "$1")|--gpu-sample 1/3600000" ;;
	noown) echo "$(build_of "$1")|--gpu-own-hz 0" ;;
	sample=*) m=${1%.old}; echo "$(build_of "$1")|--gpu-sample $(echo "${m#sample=}" | tr : /)" ;;
	exact|loexact) echo "$(build_of "$1")|--gpu-exact" ;;
	cupti) echo "$(build_of "$1")|--gpu-exact --gpu-no-stacks" ;;
	esac
}

xp_stop() {
	[ -n "$XP" ] || return 0
	kill -INT "$XP"
	wait "$XP"
	XP=
}

xp_use() {	# xp_use CONF: the xputop running is the one CONF says
	[ "$1" = "$XPCONF" ] && return 0
	xp_stop
	XPCONF=$1
	[ "$1" = none ] && return 0
	b=${1%%|*} opts=${1#*|}
	rm -f "$SOCK"
	out=/dev/null
	if [ -n "$XP_JSON" ]; then	# each xputop's JSON lines kept: its status says what its probes did
		XPN=$((XPN + 1))
		out="$OUTD/$W.xputop.$XPN.json" opts="$opts -j"
	fi
	# shellcheck disable=SC2086
	taskset -c "$XP_CPUS" "$b/xputop" -b -d 1 --window 10 $opts > "$out" 2>> "$OUTD/$W.xputop.err" &
	XP=$!
	i=0
	until [ -S "$SOCK" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 1
}

run() {	# run MODE -> "wall cpu sys cycles kcycles instructions stall_ms" per launch (us) or step (ms)
	m=${1%.old}
	b=$(build_of "$1")
	case $m in
	none|lo|loexact) set -- env -u CUDA_INJECTION64_PATH ;;
	dormant) set -- env CUDA_INJECTION64_PATH="$b/libxputop_inject.so" XPUTOP_SOCKET="$OUTD/nobody.sock" ;;
	cost=*) set -- env CUDA_INJECTION64_PATH="$PROGS/cupti_cost.so" XPU_COST="${m#cost=}" ;;
	attached) set -- env CUDA_INJECTION64_PATH="$b/libxputop_inject.so" XPUTOP_CUPTI_DETACH=0 ;;
	*) set -- env CUDA_INJECTION64_PATH="$b/libxputop_inject.so" ;;
	esac
	case $W in
	empty) taskset -c "$CPUS" "$@" "$PROGS/empty" "$LAUNCHES" "$WARM_MS" ;;
	loop*) (cd "$HERE" && taskset -c "$CPUS" "$@" python3 torch_loop.py --size "${W#loop}" --seconds "$SECS" \
		--warmup-s 1) ;;
	hf) (cd "$HERE" && taskset -c "$CPUS" "$@" python3 hf_decode.py --steps "$STEPS" --warmup 1 --tokens 64) ;;
	esac 2>> "$OUTD/$W.$(echo "$m" | tr "=:," "___").log" | python3 "$HERE/per_launch_stats.py" --parse
}

echo "== $W on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(uname -r), $ROUNDS rounds"
rev=
for m in $MODES; do rev="$m $rev"; done
for r in $(seq 1 "$ROUNDS"); do
	order=$MODES
	[ $((r % 2)) -eq 0 ] && order=$rev
	for m in $order; do
		xp_use "$(xp_conf "$m")"
		v=$(run "$m")
		echo "$W round $r $m $v"
		[ -n "$v" ] && echo "$r $v" >> "$OUTD/$W.$(echo "$m" | tr "=:," "___").vals"
	done
done
xp_stop
# shellcheck disable=SC2086
python3 "$HERE/per_launch_stats.py" "$OUTD" "$W" $MODES
