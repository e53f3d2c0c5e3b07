#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Does detaching CUPTI between slices (cuptiFinalize) make a program fail?
# bench/gpu/known.cu under bench/gpu/cupti_cost.c's library, RUNS runs of
# each XPU_COST mode, alternated; prints each run's exit status, the
# kernels recorded and the detaches done (docs/gpu-cost.md, "Detaching
# again").  On a machine with an NVIDIA GPU:
#
#   sh bench/gpu/detach.sh OUT_DIR [MODE...]
#
# MODES default to the flags measured first; see cupti_cost.c's header.
set -u
OUTD=$1
shift
MODES=${*:-duty:500:10,fin duty:500:10,fin,ff duty:500:10,fin,ff,ts duty:500:10}
RUNS=${RUNS:-5} STEPS=${STEPS:-1500}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
nvcc -O2 -o "$OUTD/known" "$HERE/known.cu" || exit 1
cc -O2 -shared -fPIC -I/usr/local/cuda/include "$HERE/cupti_cost.c" -o "$OUTD/cupti_cost.so" -ldl -lpthread || exit 1
for i in $(seq 1 "$RUNS"); do
	for m in $MODES; do
		CUDA_INJECTION64_PATH=$OUTD/cupti_cost.so XPU_COST=$m "$OUTD/known" "$STEPS" "$OUTD/known.expect" \
			> /dev/null 2> "$OUTD/known.err"
		rc=$?
		printf '%s run %s exit %s: %s %s %s\n' "$m" "$i" "$rc" \
			"$(grep -o '"kernels": [0-9]*' "$OUTD/known.err")" \
			"$(grep -o '"finalized": [0-9]*' "$OUTD/known.err")" \
			"$(grep -v '^{' "$OUTD/known.err" | tail -1)"
	done
done
