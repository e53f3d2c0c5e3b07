#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Does the library's detaching of CUPTI between slices (inject/cupti.c,
# issue 25) keep programs whole, and does it detach where it should?  On a
# machine with an NVIDIA GPU, as root:
#
#   sh bench/gpu/detach_check.sh BUILD OUT_DIR
#
# BUILD holds xputop and libxputop_inject.so (make STATIC=1 OUTPUT=BUILD).
# RUNS runs (default 8) of each, alternated, each under a default-mode
# xputop started with -- (so the library is in the program):
#   known   bench/gpu/known.cu, 1,500 steps: a CUDA graph every 5th step (the
#           program xputop's first detaching prototype crashed 4 of 20 times)
#   loop    bench/gpu/torch_loop.py --size 128: eager PyTorch, no graphs
#   empty   bench/gpu/empty.cu: back-to-back empty kernels
# Each run prints its exit status, the last error line of the program, and
# from xputop's last snapshot the process's kernels, launches and
# cupti_attached (true: CUPTI kept attached, as for a program using graphs).
set -u
BUILD=$(realpath "$1") OUTD=$2
RUNS=${RUNS:-8}
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
nvcc -O2 -o "$OUTD/known" "$HERE/known.cu" || exit 1
nvcc -O2 -o "$OUTD/empty" "$HERE/empty.cu" || exit 1

prog() {
	case $1 in
	known) echo "$OUTD/known 1500 $OUTD/known.expect" ;;
	loop) echo "python3 $HERE/torch_loop.py --size 128 --seconds 4 --warmup-s 1" ;;
	empty) echo "$OUTD/empty 300000 700" ;;
	esac
}

for i in $(seq 1 "$RUNS"); do
	for w in known loop empty; do
		rec=
		[ "$i" = 1 ] && rec="-w $OUTD/$w.xpr"	# the first of each: a recording, to read the ids
		# shellcheck disable=SC2046,SC2086
		"$BUILD/xputop" -b -j -d 0.5 --window 60 $rec -- $(prog "$w") > "$OUTD/$w.$i.json" 2> "$OUTD/$w.$i.err"
		rc=$?
		python3 - "$OUTD/$w.$i.json" "$w" "$i" "$rc" "$OUTD/$w.$i.err" <<'EOF'
import json, sys
path, w, i, rc, err = sys.argv[1:]
last = None
for line in open(path):
    line = line.strip()
    if line.startswith("{"):
        try:
            last = json.loads(line)
        except ValueError:
            pass
rows = last["gpu"]["processes"] if last else []
row = max(rows, key=lambda r: r.get("kernels", 0), default={})
errs = [l.strip() for l in open(err, errors="replace") if "error" in l.lower() or "fail" in l.lower()]
print(f"{w} run {i} exit {rc}: kernels {row.get('kernels')} launches {row.get('launches')} "
      f"est {row.get('kernels_est')} cupti_attached {row.get('cupti_attached')} "
      f"{errs[-1] if errs else ''}")
EOF
	done
done
