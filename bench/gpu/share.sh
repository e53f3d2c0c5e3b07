#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Several xputops on a real PyTorch process (issue 17), on a machine with an
# NVIDIA GPU:
#
#   sudo sh bench/gpu/share.sh BUILD OUT
#
# A launch-bound PyTorch loop (torch_loop.py --size 128) with the injection
# library; an agent (xputop -b -j -d 0.5) collects, two clients attach
# (-b -j -d 0.5 -v); the agent is killed with SIGKILL mid-run.  share_check.py
# reads the three JSON streams: when the taker's own snapshots start after
# the kill, when the loop's kernels come again (its library reconnects), and
# that the other client attached to the taker and saw them too.
set -u
BUILD=$(realpath "$1") OUTD=$2
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
HERE=$(dirname "$(realpath "$0")")
export XPUTOP_SOCKET=$OUTD/sock/gpu.sock
mkdir -p "$OUTD/sock"
chmod 755 "$OUTD/sock"
X=$BUILD/xputop
mono() { python3 -c "import time; print(time.monotonic_ns())"; }

# SHARE_LOOP replaces the loop (a dry run without a GPU: the stand-in).
(cd "$HERE" && exec env CUDA_INJECTION64_PATH="$BUILD/libxputop_inject.so" ${SHARE_LOOP:-python3 -X perf \
	torch_loop.py --size 128 --seconds 40}) > "$OUTD/loop.out" 2> "$OUTD/loop.err" &
L=$!
sleep 2
"$X" -b -j -d 0.5 > "$OUTD/agent.json" 2> "$OUTD/agent.err" &
A=$!
sleep 4
"$X" -b -j -d 0.5 -v > "$OUTD/c1.json" 2> "$OUTD/c1.err" &
C1=$!
"$X" -b -j -d 0.5 -v > "$OUTD/c2.json" 2> "$OUTD/c2.err" &
C2=$!
sleep 12
mono > "$OUTD/killed"
kill -9 $A
sleep 12
kill -INT $C1 $C2
wait $C1 $C2 $A 2> /dev/null
wait $L
echo "loop: $(cat "$OUTD/loop.out")"
python3 "$HERE/share_check.py" "$OUTD" $L
