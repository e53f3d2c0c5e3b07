#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Sampled estimates against exact on GPT-2-style training (issue 25): one
# exact run and two sampled ones of bench/gpu/train_gpt2.py, each its own
# process under its own xputop; est_vs_exact.py compares the last snapshots.
# On a machine with an NVIDIA GPU, PyTorch and transformers, as root:
#
#   sh bench/gpu/train_est.sh BUILD OUT_DIR      # BUILD: make STATIC=1 OUTPUT=BUILD
set -u
X=$(realpath "$1")/xputop
O=$(realpath "$2")
STEPS=${STEPS:-600}
mkdir -p "$O"
cd "$(dirname "$(realpath "$0")")" || exit 1
for m in sampled exact sampled2; do
	opt=
	[ $m = exact ] && opt=--gpu-exact
	rm -f "$O/train.$m.w"
	rec=
	[ $m = sampled ] && [ -n "${REC:-}" ] && rec="-w $O/train.sampled.xpr"	# REC=1: a recording too
	# shellcheck disable=SC2086
	"$X" -b -j -d 1 --window 900 $opt $rec -- python3 -X perf train_gpt2.py --steps "$STEPS" --warmup 5 \
		--out "$O/train.$m.w" > "$O/train.$m.json" 2> "$O/train.$m.err"
	echo "== $m: exit $?, $(cat "$O/train.$m.w" 2> /dev/null)"
done
for m in sampled sampled2; do
	echo "== $m against exact"
	python3 est_vs_exact.py "$O/train.$m.json" "$O/train.exact.json" 12
done
