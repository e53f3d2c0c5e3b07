#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Sampled estimates of several builds or settings against one exact run of
# the same workload (issue 25): for each WORKLOAD an exact run with the
# first variant's build, then ROUNDS rounds of every variant, alternated,
# each its own process under its own xputop; one line a run (variants_sum.py:
# launches, kernels and GPU time estimated against exact, the uncertainty
# stated, the time and own CPU time traced, what the library's switching
# took).  On a machine with an NVIDIA GPU, PyTorch and transformers, as root:
#
#   VARIANTS='NAME|BUILD|ENV|OPTIONS|PREFIX ...' sh bench/gpu/variants.sh OUT WORKLOAD...
#
# one variant a line: BUILD holds xputop and libxputop_inject.so (make
# STATIC=1 OUTPUT=BUILD), ENV assignments for xputop and the workload (may
# be empty), OPTIONS for xputop, PREFIX a command the workload runs under
# (e.g. taskset -c 5; may be left out).  WORKLOAD as bench/gpu/est.sh's (train,
# hf, loop128, compiled), or idle or bursty (shapes.py, SECONDS_IDLE and
# SECONDS_BURSTY long, 12 and 30 by default); STEPS for train, STEPS_COMPILED
# for compiled (20,000 by default).  A run is judged against the exact run's
# figures times its own steps over the exact run's (shapes.py's runs last a
# time, not a number of steps).
set -u
O=$(realpath "$1")
shift
ROUNDS=${ROUNDS:-1}
mkdir -p "$O"
HERE=$(dirname "$(realpath "$0")")
TOP=$(realpath "$HERE/../..")
spec() {
	case $1 in
	train) echo "train_gpt2.py --steps ${STEPS:-300} --warmup 5" ;;
	hf) echo "hf_decode.py --steps 16 --tokens 64 --warmup 1" ;;
	loop128) echo "torch_loop.py --steps 150000 --warmup 20 --size 128" ;;
	compiled) echo "compiled.py --steps ${STEPS_COMPILED:-20000} --warmup 5" ;;
	idle) echo "shapes.py idle --seconds ${SECONDS_IDLE:-12}" ;;
	bursty) echo "shapes.py bursty --seconds ${SECONDS_BURSTY:-30}" ;;
	esac
}
one() {	# OUTNAME BUILD ENV OPTIONS WORKLOAD PREFIX
	t0=$(date +%s.%N)
	# shellcheck disable=SC2046,SC2086
	(cd "$HERE" && env XPUTOP_INJECT_STATS=1 $3 timeout 150 "$TOP/$2/xputop" -b -j -d 1 --window 900 $4 -- \
		$6 python3 -X perf $(spec "$5") --out "$O/$1.w" > "$O/$1.json" 2> "$O/$1.err")
	echo "$1 exit $? $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s" >> "$O/runs.txt"
}
for w in "$@"; do
	first=$(echo "$VARIANTS" | head -n 1 | cut -d'|' -f2)
	one "$w.exact" "$first" "" --gpu-exact "$w" ""
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		echo "$VARIANTS" | while IFS='|' read -r name build envs opts prefix; do
			[ -n "$name" ] || continue
			one "$w.$name.$r" "$build" "$envs" "$opts" "$w" "$prefix" < /dev/null
			python3 "$HERE/variants_sum.py" "$O/$w.$name.$r" "$O/$w.exact" >> "$O/sum.txt"
		done
	done
done
cat "$O/runs.txt" "$O/sum.txt"
