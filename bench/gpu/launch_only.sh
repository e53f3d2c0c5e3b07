#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The launch-only path on a machine with an NVIDIA GPU: what xputop costs a
# CUDA program it watches without the injection library, before (every
# launch took a 127-frame stack into a ring record) and now (launches counted
# in BPF, a stack per new call site), side by side.  Run as root; not CI.
#
#   sudo bench/gpu/launch_only.sh [decode|loop|empty|all] BUILD_DIR OLD_BUILD_DIR PROGS_DIR OUT_DIR
#        (ROUNDS=5 STEPS=10 SECS=4)
#
# BUILD_DIR/xputop is this xputop, OLD_BUILD_DIR/xputop the one before
# (bench/gpu/README.md says how to build both); PROGS_DIR holds `empty`.
# Setups, alternated ROUNDS times in rotating order:
#   none  the workload alone
#   old   the old xputop watching (xputop -b -j -d 1, started first)
#   new   this xputop watching, the same way
# Workloads:
#   decode  hf_decode.py: batch-1 greedy decode with HF transformers
#           (tokens/s; STEPS generate() calls of 64 tokens)
#   loop    torch_loop.py --size 128, launch-bound (ms/iter over SECS s)
#   empty   back-to-back empty kernels (us/launch over 200,000)
# The old xputop finds a process's CUDA libraries only once its CPU sampling
# caught the process: empty kernels are measured after a busy warm-up run
# that it has seen (the probes then stay on the library for the next run);
# decode and loop spend seconds importing and building before they measure.
# Each run's JSON is kept in OUT_DIR: the launches xputop counted for the
# workload's process are printed with each decode run.
set -u
what=${1:-all}
BUILD=$(realpath "${2:-carry/build}")
OLD=$(realpath "${3:-carry/old}")
PROGS=$(realpath "${4:-carry}")
OUTD=$(realpath "${5:-/tmp/xputop-launch-only}")
ROUNDS=${ROUNDS:-5}
STEPS=${STEPS:-10}
SECS=${SECS:-4}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
cd "$OUTD" || exit 1
export PYTHONUNBUFFERED=1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
uname -r
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { paste "$1" "$2" | awk '$1 > 0 { print $2 / $1 }' | median; }

# watch SETUP TAG: starts the xputop of SETUP (none: nothing) writing TAG.json;
# sets $xp.
watch() {
	xp=
	case $1 in
	old) "$OLD/xputop" -b -j -d 1 --window 600 > "$2.json" 2> "$2.err" & xp=$! ;;
	new) "$BUILD/xputop" -b -j -d 1 --window 600 > "$2.json" 2> "$2.err" & xp=$! ;;
	*) return ;;
	esac
	i=0
	while [ ! -s "$2.json" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}

unwatch() {
	[ -n "$xp" ] || return 0
	kill -INT "$xp"
	wait "$xp"
}

# launches TAG PID: what the last snapshot of TAG.json counted for PID.
launches() {
	tail -1 "$1.json" | python3 -c "
import json, sys
s = json.loads(sys.stdin.readline())['gpu']
print([p['launches'] for p in s['processes'] if p['pid'] == $2] or 'not seen', '|', s['status'].split('; ')[-1])"
}

# alternate W FN: ROUNDS rounds of the three setups in rotating order; each
# time FN SETUP TAG runs workload W once (xputop watching, for old and new)
# and prints its figure, then anything to say about the run.
alternate() {
	for r in $(seq 1 "$ROUNDS"); do
		for c in $(echo none old new | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }'); do
			watch $c "$1.$c.$r"
			out=$($2 $c "$1.$c.$r")
			unwatch
			echo "${out%% *}" >> "$1.$c"
			echo "round $r $c $out"
		done
	done
}

decode_run() {
	line=$(python3 "$HERE/hf_decode.py" --steps "$STEPS" | tail -1)
	v=$(echo "$line" | sed -n 's/.*"tokens_per_s": \([0-9.]*\).*/\1/p')
	pid=$(echo "$line" | sed -n 's/.*"pid": \([0-9]*\).*/\1/p')
	[ $1 = none ] && echo "$v" || echo "$v launches counted: $(launches "$2" "$pid")"
}

loop_run() {
	python3 "$HERE/torch_loop.py" --size 128 --seconds "$SECS" --warmup-s 2 |
		sed -n 's/.*"ms_per_iter": \([0-9.]*\).*/\1/p' | tail -1
}

# Under old and new, a warm-up run first, until xputop shows it.
empty_run() {
	if [ -n "$xp" ]; then
		"$PROGS/empty" 100000000 > /dev/null &
		warm=$!
		i=0
		until grep -q "\"pid\":$warm,\"comm\":\"empty\",\"mode\":\"launches only\"" "$2.json" ||
			[ $i -ge 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill $warm
		wait $warm 2> /dev/null
	fi
	"$PROGS/empty" 200000 | sed -n 's/.*"us_per_launch": \([0-9.]*\).*/\1/p'
}

decode() {
	echo "== decode: hf_decode.py --steps $STEPS, tokens/s, $ROUNDS rounds"
	alternate decode decode_run
}

loop() {
	echo "== loop: torch_loop.py --size 128, ms/iter, $ROUNDS rounds"
	alternate loop loop_run
}

empty() {
	echo "== empty: back-to-back empty kernels, us/launch, $ROUNDS rounds"
	alternate empty empty_run
}

summary() {
	echo "== summary: medians, and the median of each round's ratio to 'none'"
	for w in decode loop empty; do
		[ -s "$w.none" ] || continue
		for c in none old new; do
			printf '%-6s %-4s %10.4f  x%.3f\n' $w $c "$(median < "$w.$c")" "$(ratio "$w.none" "$w.$c")"
		done
	done
}

case $what in
decode) decode ;;
loop) loop ;;
empty) empty ;;
*) decode; loop; empty ;;
esac
summary
