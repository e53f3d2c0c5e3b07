#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Where CUPTI's cost comes from (issue 13): the same programs with CUPTI set
# up piece by piece by bench/gpu/cupti_cost.c (an injection library for
# measurement only), alternated ROUNDS times; medians and the median of each
# round's ratio to no injection.  On a machine with an NVIDIA GPU and PyTorch:
#
#   cc -O2 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_cost.c -o /tmp/cupti_cost.so -ldl -lpthread
#   nvcc -O2 -arch=sm_90 bench/gpu/empty.cu -o /tmp/empty
#   sh bench/gpu/cost.sh /tmp/cupti_cost.so /tmp/empty OUT_DIR [WORKLOADS]
#
# MODES (default below) are XPU_COST values; WORKLOADS: hf (tokens/s of
# batch-1 greedy decoding), loop1024 and loop4096 (ms per matmul + relu + sum
# step), empty (us per back-to-back empty kernel).  Each run's toggle timings
# and counts are kept in OUT_DIR/<workload>.<mode>.log.
set -u
LIB=$1 EMPTY=$2 OUTD=$3
shift 3
WORK=${*:-hf loop1024 loop4096 empty}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-none subscribed callbacks activity both duty:1000:20 duty:500:20 duty:250:10}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
export PYTHONUNBUFFERED=1

one() {	# one() WORKLOAD MODE -> the figure
	log=$OUTD/$1.$(echo "$2" | tr : _).log
	if [ "$2" = none ]; then set -- "$1" "$2" env -u CUDA_INJECTION64_PATH; else
		set -- "$1" "$2" env CUDA_INJECTION64_PATH="$LIB" XPU_COST="$2"; fi
	w=$1
	shift 2
	case $w in
	hf) (cd "$HERE" && "$@" python3 hf_decode.py --steps 3 --tokens 64 --warmup 1) 2>> "$log" |
		sed -n 's/.*"tokens_per_s": \([0-9.]*\).*/\1/p' ;;
	loop*) (cd "$HERE" && "$@" python3 torch_loop.py --size "${w#loop}" --seconds 3 --warmup-s 1) 2>> "$log" |
		sed -n 's/.*"ms_per_iter": \([0-9.]*\).*/\1/p' ;;
	empty) "$@" "$EMPTY" 100000 2>> "$log" | sed -n 's/.*"us_per_launch": \([0-9.]*\).*/\1/p' ;;
	esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for w in $WORK; do
	for r in $(seq 1 "$ROUNDS"); do
		for m in $MODES; do
			v=$(one "$w" "$m")
			echo "$w round $r $m $v"
			echo "$v" >> "$OUTD/$w.$(echo "$m" | tr : _).vals"
		done
	done
done
echo "== medians; ratio = median over rounds of (mode / none) for times, (none / mode) for tokens/s"
for w in $WORK; do
	for m in $MODES; do
		f=$OUTD/$w.$(echo "$m" | tr : _).vals
		ratio=$(paste "$OUTD/$w.none.vals" "$f" | awk -v w="$w" '$1 > 0 && $2 > 0 { print (w == "hf") ? $1 / $2 : $2 / $1 }' | median)
		printf '%-9s %-14s %10.4f  slowdown x%.4f  %s\n' "$w" "$m" "$(median < "$f")" "$ratio" \
			"$(tail -1 "$OUTD/$w.$(echo "$m" | tr : _).log" 2> /dev/null | grep -o '"toggles.*' | head -c 160)"
	done
done
