#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The GPU view's check and benchmark, on a machine with an NVIDIA GPU, CUDA
# and PyTorch (run as root; not part of CI).  Needs xputop, its injection
# library and the two test programs built beforehand:
#
#   make STATIC=1 OUTPUT=carry/build && nvcc ... (see bench/gpu/README.md)
#   sudo bench/gpu/run.sh [check|bench|all] BUILD_DIR PROGS_DIR OUT_DIR
#
# check: known.cu and the PyTorch loop under `xputop -- CMD`, checked by
#        check.py against CUDA-event timings and the expected call paths.
# bench: the launch-bound PyTorch loop and back-to-back empty kernels, alone
#        and under xputop (CUPTI alone, full, and launch-only uprobes),
#        alternated ROUNDS times; medians and ratios.
set -u
what=${1:-all}
BUILD=$(realpath "${2:-build}")
PROGS=$(realpath "${3:-carry}")
OUTD=$(realpath "${4:-/tmp/xputop-gpu-bench}")
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-4}
HERE=$(dirname "$(realpath "$0")")
X=$BUILD/xputop
mkdir -p "$OUTD"
cd "$OUTD" || exit 1
export PYTHONUNBUFFERED=1
status=0

echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
uname -r
python3 -c 'import torch; print("torch", torch.__version__)'

check() {
	echo "== check: known kernels, CUDA events, call paths"
	"$X" -b -j -d 0.5 --window 600 -- "$PROGS/known" 300 "$OUTD/known.expect" > known.json 2> known.err
	tail -3 known.err
	python3 "$HERE/check.py" known known.json known.expect || status=1
	echo "== check: PyTorch loop (python3 -X perf)"
	"$X" -b -j -d 0.5 --window 600 -- python3 -X perf "$HERE/torch_loop.py" --seconds 3 > torch.json 2> torch.err
	tail -3 torch.err
	python3 "$HERE/check.py" torch torch.json || status=1
}

# ms per iteration of the PyTorch loop (size $2) in one configuration.
torch_run() {
	T="$HERE/torch_loop.py --size $2"
	case $1 in
	none) python3 $T --seconds $SECS --warmup-s 2 ;;
	cupti) "$X" -b -n 1000 -d 0.25 --gpu-no-stacks -- python3 $T --seconds $SECS --warmup-s 2 2>&1 >/dev/null ;;
	xputop) "$X" -b -n 1000 -d 0.25 -- python3 $T --seconds $SECS --warmup-s 2 2>&1 >/dev/null ;;
	uprobe)
		"$X" -b -d 0.25 > /dev/null 2>&1 &
		xp=$!
		sleep 1
		python3 $T --seconds $SECS --warmup-s 2
		kill $xp; wait $xp ;;
	esac | sed -n 's/.*"ms_per_iter": \([0-9.]*\).*/\1/p' | tail -1
}

empty_run() {
	case $1 in
	none) "$PROGS/empty" 100000 ;;
	cupti) "$X" -b -n 1000 -d 0.25 --gpu-no-stacks -- "$PROGS/empty" 100000 2>&1 >/dev/null ;;
	xputop) "$X" -b -n 1000 -d 0.25 -- "$PROGS/empty" 100000 2>&1 >/dev/null ;;
	esac | sed -n 's/.*"us_per_launch": \([0-9.]*\).*/\1/p' | tail -1
}

pair_ratio() { paste "$1" "$2" | awk '$1 > 0 { print $2 / $1 }' | median; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench() {
	for n in 1024 128; do
		echo "== bench: PyTorch loop (${n}x$n matmul + relu + sum), ms/iter, $ROUNDS rounds alternated"
		for r in $(seq 1 "$ROUNDS"); do
			for c in none cupti xputop uprobe; do
				v=$(torch_run $c $n)
				echo "round $r $c $v"
				echo "$v" >> "torch$n.$c"
			done
		done
	done
	echo "== bench: back-to-back empty kernels, us/launch, $ROUNDS rounds alternated"
	for r in $(seq 1 "$ROUNDS"); do
		for c in none cupti xputop; do
			v=$(empty_run $c)
			echo "round $r $c $v"
			echo "$v" >> "empty.$c"
		done
	done
	echo "== summary: medians, and the median of each round's ratio to 'none'"
	for n in 1024 128; do
		for c in none cupti xputop uprobe; do
			printf 'torch%-4s %-7s %8.4f ms/iter  x%.3f\n' "$n" "$c" "$(median < "torch$n.$c")" \
				"$(pair_ratio "torch$n.none" "torch$n.$c")"
		done
	done
	for c in none cupti xputop; do
		printf 'empty %-7s %8.3f us/launch  x%.3f\n' "$c" "$(median < "empty.$c")" "$(pair_ratio empty.none "empty.$c")"
	done
}

case $what in
check) check ;;
bench) bench ;;
*) check; bench ;;
esac
exit $status
