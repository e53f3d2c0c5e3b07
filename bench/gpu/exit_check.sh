#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Do programs still exit cleanly under a default-mode xputop now that the
# library detaches and attaches CUPTI twice a second (issue 25)?  RUNS short
# runs of a launch-bound PyTorch loop (bench/gpu/torch_loop.py --size 128,
# 2 s), each under its own xputop; prints each exit status (139: SIGSEGV).
# On a machine with an NVIDIA GPU and PyTorch, as root:
#
#   sh bench/gpu/exit_check.sh BUILD OUT_DIR
set -u
BUILD=$(realpath "$1") OUTD=$2
RUNS=${RUNS:-12}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
cd "$HERE" || exit 1
bad=0
for i in $(seq 1 "$RUNS"); do
	"$BUILD/xputop" -b -j -d 1 -- python3 torch_loop.py --size 128 --seconds 2 --warmup-s 0.5 \
		> /dev/null 2> "$OUTD/exit.$i.err"
	rc=$?
	[ $rc -ne 0 ] && bad=$((bad + 1))
	echo "run $i exit $rc $(grep -h 'signal\|rror' "$OUTD/exit.$i.err" | tail -n 1)"
done
echo "$bad of $RUNS runs failed"
