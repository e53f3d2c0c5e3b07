#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What detaching CUPTI between slices and attaching it again costs each
# workload (issue 25): each under a default-mode xputop with
# XPUTOP_INJECT_STATS=1, so the library prints at exit how long its attaches
# (on its agent thread) and detaches (on a launching thread) took, and how
# many.  On a machine with an NVIDIA GPU and PyTorch, as root:
#
#   sh bench/gpu/attach_cost.sh BUILD OUT_DIR
set -u
BUILD=$(realpath "$1") OUTD=$2
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
nvcc -O2 -o "$OUTD/empty" "$HERE/empty.cu" || exit 1
export XPUTOP_INJECT_STATS=1
cd "$HERE" || exit 1
for w in empty loop128 hf train; do
	case $w in
	empty) set -- "$OUTD/empty" 300000 700 ;;
	loop128) set -- python3 torch_loop.py --size 128 --seconds 4 --warmup-s 1 ;;
	hf) set -- python3 hf_decode.py --steps 5 --warmup 1 --tokens 64 ;;
	train) set -- python3 train_gpt2.py --steps 100 --warmup 5 ;;
	esac
	"$BUILD/xputop" -b -j -d 1 --window 60 -- "$@" > "$OUTD/$w.json" 2> "$OUTD/$w.err"
	echo "$w: exit $?, $(grep -h '"xputop_inject"' "$OUTD/$w.err" | tail -n 1)"
done
