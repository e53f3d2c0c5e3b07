#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The cost of each GPU tracing mode and how close sampled estimates come to
# exact figures (issue 13), on a machine with an NVIDIA GPU and PyTorch:
#
#   sudo sh bench/gpu/modes.sh BUILD OUT WORKLOAD...
#
# BUILD holds xputop and libxputop_inject.so (make STATIC=1 OUTPUT=BUILD).
# WORKLOADS: hf, compiled, loop1024, loop4096 (one long process each,
# bench/gpu/phases.py, with the library loaded: it is dormant while no xputop
# watches), lo-hf (the HF decode without the library: xputop's launch-only
# probes), hf-ab (the HF decode, none and sampled only: many short rounds
# resolve a small difference better), lo-probes (the same with the probes on 10 ms in 500, in 2000, and
# always: what turning them on and off costs), empty (back-to-back empty kernels, a process per run: EMPTY is the
# binary, built from bench/gpu/empty.cu).  Phases alternate ROUNDS times:
#   none     no xputop
#   sampled  xputop -b -j (the default mode)
#   exact    xputop -b -j --gpu-exact
#   cupti    xputop -b -j --gpu-exact --gpu-no-stacks (CUPTI alone)
#   lo       xputop -b -j watching a process without the library
#   lo-2000  the same, its probes on 10 ms in 2000 (--gpu-sample 10/2000)
#   lo-exact the same, its probes always on (--gpu-exact)
# PHASE_S seconds each (2 s to settle after each switch are not counted).
# bench/gpu/modes_check.py prints the medians, the ratios and the estimation
# errors from OUT.
set -u
BUILD=$(realpath "$1") OUTD=$2
shift 2
ROUNDS=${ROUNDS:-3} PHASE_S=${PHASE_S:-12} EMPTY=${EMPTY:-}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
export PYTHONUNBUFFERED=1

xputop_bg() {	# xputop_bg JSON MODE: starts a watching xputop, its pid in XP
	case $2 in
	exact|lo-exact) set -- "$1" --gpu-exact ;;
	cupti) set -- "$1" --gpu-exact --gpu-no-stacks ;;
	lo-2000) set -- "$1" --gpu-sample 10/2000 ;;
	*) set -- "$1" ;;
	esac
	out=$1
	shift
	"$BUILD/xputop" -b -j -d 1 --window 10 "$@" > "$out.all" 2> "$out.err" &
	XP=$!
}

xputop_stop() {	# stops it; keeps the first and the last snapshot (what modes_check.py reads)
	kill -INT "$XP"
	wait "$XP"
	sed -n '1p;$p' "$out.all" > "$out"
	rm -f "$out.all"
}

phased() {	# phased NAME PHASES CMD...: one process, the phases in turn
	name=$1 phases=$2
	shift 2
	pf=$OUTD/$name.phase
	echo settle > "$pf"
	rm -f "$OUTD/$name.steps"
	(cd "$HERE" && "$@" "$pf" "$OUTD/$name.steps") > "$OUTD/$name.out" 2>&1 &
	W=$!
	i=0
	until [ -s "$OUTD/$name.steps" ] || [ $i -ge 300 ]; do sleep 1; i=$((i + 1)); done
	for r in $(seq 1 "$ROUNDS"); do
		for ph in $phases; do
			echo settle > "$pf"
			[ "$ph" = none ] || xputop_bg "$OUTD/$name.$ph.$r.json" "$ph"
			sleep 2
			echo "$ph $r" > "$pf"
			sleep "$PHASE_S"
			echo settle > "$pf"
			[ "$ph" = none ] || xputop_stop
		done
	done
	echo stop > "$pf"
	wait "$W"
}

for w in "$@"; do
	case $w in
	hf) CUDA_INJECTION64_PATH=$BUILD/libxputop_inject.so phased hf "none sampled exact cupti" \
		python3 -X perf phases.py hf ;;
	hf-ab) CUDA_INJECTION64_PATH=$BUILD/libxputop_inject.so phased hf-ab "none sampled" \
		python3 -X perf phases.py hf ;;
	compiled) CUDA_INJECTION64_PATH=$BUILD/libxputop_inject.so phased compiled "none sampled exact" \
		python3 -X perf phases.py compiled ;;
	loop*) CUDA_INJECTION64_PATH=$BUILD/libxputop_inject.so phased "$w" "none sampled exact" \
		python3 -X perf phases.py loop --size "${w#loop}" ;;
	lo-hf) phased lo-hf "none lo" env -u CUDA_INJECTION64_PATH python3 -X perf phases.py hf ;;
	lo-probes) phased lo-probes "none lo lo-2000 lo-exact" env -u CUDA_INJECTION64_PATH \
		python3 -X perf phases.py hf ;;
	empty)
		for r in $(seq 1 "$ROUNDS"); do
			for ph in none sampled exact; do
				[ "$ph" = none ] || { xputop_bg "$OUTD/empty.$ph.$r.json" "$ph"; sleep 2; }
				v=$(CUDA_INJECTION64_PATH=$BUILD/libxputop_inject.so "$EMPTY" 2000000 |
					sed -n 's/.*"us_per_launch": \([0-9.]*\).*/\1/p')
				echo "empty $ph $r $v" >> "$OUTD/empty.runs"
				[ "$ph" = none ] || xputop_stop
			done
		done ;;
	esac
done
python3 "$HERE/modes_check.py" "$OUTD"
