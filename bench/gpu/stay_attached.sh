#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A process the library keeps CUPTI attached in (CUDA graphs seen, or
# XPUTOP_CUPTI_DETACH=0): are its launches still counted?  The 128x128 loop
# (3 launches a step) under slices of 10 ms every 100 ms, RUNS times;
# prints the launches xputop estimated against the loop's own count.  Before
# the callbacks stayed on between slices, CUPTI's correlation ids stuck and
# the estimate came out near zero (issue 25, docs/gpu-cost.md).
# As root, on a machine with an NVIDIA GPU and PyTorch:
#
#   sh bench/gpu/stay_attached.sh BUILD OUT_DIR     # BUILD: make STATIC=1 OUTPUT=BUILD
set -u
X=$(realpath "$1")/xputop
O=$(realpath "$2")
mkdir -p "$O"
cd "$(dirname "$(realpath "$0")")" || exit 1
for r in $(seq "${RUNS:-2}"); do
	XPUTOP_CUPTI_DETACH=0 "$X" -b -j -d 1 --gpu-sample 10/100 -- \
		python3 -X perf torch_loop.py --size 128 --seconds 8 > "$O/stay.$r.json" 2> "$O/stay.$r.err"
	python3 - "$O/stay.$r.json" "$O/stay.$r.err" <<'PY'
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
loop = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"ms_per_iter"')][-1]
procs = [p for s in snaps for p in ((s.get("gpu") or {}).get("processes") or [])]
est = max((p.get("launches_est") or 0) for p in procs) if procs else 0
ran = 3 * loop["iters"]
print(f"launches estimated {est:.0f}, the loop made at least {ran} ({100 * (est - ran) / ran:+.1f}%)")
PY
done
