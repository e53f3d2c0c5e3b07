#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What --gpu-nodes (backward kernels under the forward call that made their
# autograd node, issue 26) costs a training step: bench/gpu/train_gpt2.py
# under `xputop -b -j --gpu-exact`, without and with --gpu-nodes, ROUNDS
# rounds alternated, each run its own process; prints each run's wall and
# CPU ms a step (the workload's own getrusage, all threads).  On a machine
# with an NVIDIA GPU, PyTorch and transformers, as root:
#
#   ROUNDS=4 sh bench/gpu/nodes_cost.sh BUILD OUT_DIR   # BUILD: make STATIC=1 OUTPUT=BUILD
set -u
X=$(realpath "$1")/xputop
O=$(realpath "$2")
mkdir -p "$O"
cd "$(dirname "$(realpath "$0")")" || exit 1
rm -f "$O"/cost-*.jsonl
r=0
while [ $r -lt "${ROUNDS:-4}" ]; do
	r=$((r + 1))
	for m in exact nodes; do
		a=
		[ $m = nodes ] && a=--gpu-nodes
		# shellcheck disable=SC2086
		PYTHONPERFSUPPORT=1 "$X" -b -j -d 2 --gpu-exact $a -- python3 -X perf train_gpt2.py --steps 40 \
			--warmup 5 --out "$O/cost-$m.jsonl" > /dev/null 2> "$O/cost-$m-$r.err" || echo "$m $r failed"
	done
done
for m in exact nodes; do
	python3 -c "
import json, statistics, sys
r = [json.loads(l) for l in open(sys.argv[1])]
w = [x['wall_ms_per_step'] for x in r]
print(sys.argv[2] + ':', ' '.join(f\"{x['wall_ms_per_step']:.2f}/{x['cpu_ms_per_step']:.2f}\" for x in r),
      f'ms a step wall/cpu; median wall {statistics.median(w):.2f}')" "$O/cost-$m.jsonl" "$m"
done
