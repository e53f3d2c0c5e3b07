#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Where a launching thread's CPU goes inside the library's slices and
# outside them (issue 25): each WORKLOAD once in the default (sampled) mode
# with the CPU view sampling at 4999 Hz into a recording, read by
# bench/slicecpu.c (per module, in and out), beside the process's own-time
# figures from the last snapshot.  On a machine with an NVIDIA GPU, PyTorch
# and transformers, as root:
#
#   OWN_HZ=5000 sh bench/gpu/slicecpu.sh BUILD OUT_DIR [WORKLOAD...]
#
# BUILD: make STATIC=1 OUTPUT=BUILD (xputop, libxputop_inject.so and
# bench/slicecpu).  WORKLOAD: train, hf, loop128, loop128_cpu2 (the loop
# pinned to one CPU with all its threads).  The recordings are deleted once
# read (hundreds of MB).
set -u
B=$(realpath "$1")
R=$(realpath "$2")
shift 2
WORK=${*:-train hf loop128}
mkdir -p "$R"
cd "$(dirname "$(realpath "$0")")" || exit 1
spec() {
	case $1 in
	train) echo "0-1023 train_gpt2.py --steps 400 --warmup 5" ;;
	hf) echo "0-1023 hf_decode.py --steps 16 --tokens 64 --warmup 1" ;;
	loop128) echo "0-1023 torch_loop.py --steps 150000 --warmup 20 --size 128" ;;
	loop128_cpu2) echo "2 torch_loop.py --steps 100000 --warmup 20 --size 128" ;;
	esac
}
for w in $WORK; do
	# shellcheck disable=SC2046
	set -- $(spec "$w")
	cpus=$1
	shift
	timeout 120 "$B/xputop" -b -j -d 1 --window 900 -F 4999 --gpu-own-hz "${OWN_HZ:-1000}" -w "$R/$w.xpr" -- \
		taskset -c "$cpus" python3 -X perf "$@" --out "$R/$w.w" > "$R/$w.json" 2> "$R/$w.err"
	echo "== $w: $(cat "$R/$w.w")"
	python3 - "$R/$w.json" <<'PY'
import json, sys
last = None
for line in open(sys.argv[1]):
    try:
        last = json.loads(line)
    except ValueError:
        pass
for p in (last or {}).get("gpu", {}).get("processes", []):
    if p.get("launches"):
        print({k: p.get(k) for k in ("pid", "launches", "launches_est", "launches_est_err_pct", "scaled_by",
               "traced_pct", "own_traced_pct", "own_samples", "own_samples_traced", "cuda_samples",
               "cuda_samples_traced", "own_threads")})
PY
	"$B/bench/slicecpu" "$R/$w.xpr"
	rm -f "$R/$w.xpr"
done
