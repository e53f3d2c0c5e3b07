#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Sampled estimates against exact (issue 25), for each WORKLOAD: an exact
# run, a sampled run as by default (its figures scaled by the launching
# threads' own CPU time) and a sampled run scaled by time (--gpu-own-hz 0),
# each its own process doing the same steps under its own xputop;
# est_vs_exact.py compares each sampled run's last snapshot with the exact
# one's.  On a machine with an NVIDIA GPU, PyTorch and transformers, as root:
#
#   sh bench/gpu/est.sh BUILD OUT_DIR [WORKLOAD...]    # BUILD: make STATIC=1 OUTPUT=BUILD
#
# WORKLOAD: train (GPT-2-style training, the default), hf (HF batch-1
# decode), loop128 (a launch-bound 128x128 PyTorch loop), compiled
# (torch.compile with CUDA graphs).  XPUTOP_ARGS: more options for every run.
set -u
X=$(realpath "$1")/xputop
O=$(realpath "$2")
shift 2
WORK=${*:-train}
mkdir -p "$O"
cd "$(dirname "$(realpath "$0")")" || exit 1
spec() {
	case $1 in
	train) echo "train_gpt2.py --steps ${STEPS:-500} --warmup 5" ;;
	hf) echo "hf_decode.py --steps 16 --tokens 64 --warmup 1" ;;
	loop128) echo "torch_loop.py --steps 150000 --warmup 20 --size 128" ;;
	compiled) echo "compiled.py --steps 20000 --warmup 5" ;;
	esac
}
for w in $WORK; do
	for m in exact own time; do
		case $m in
		exact) opt=--gpu-exact ;;
		own) opt= ;;
		time) opt="--gpu-own-hz 0" ;;
		esac
		rm -f "$O/$w.$m.w"
		# shellcheck disable=SC2046,SC2086
		"$X" -b -j -d 1 --window 900 $opt ${XPUTOP_ARGS:-} -- python3 -X perf $(spec "$w") \
			--out "$O/$w.$m.w" > "$O/$w.$m.json" 2> "$O/$w.$m.err"
		echo "== $w $m: exit $?, $(cat "$O/$w.$m.w" 2> /dev/null)"
	done
	for m in own time; do
		echo "== $w: sampled ($m) against exact"
		python3 est_vs_exact.py "$O/$w.$m.json" "$O/$w.exact.json" 12
	done
done
