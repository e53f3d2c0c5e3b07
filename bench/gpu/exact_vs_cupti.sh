#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Exact mode against CUPTI alone (issue 25's goal: exact <= CUPTI alone + 10%),
# with the baselines, on empty kernels and the launch-bound PyTorch loop; then
# each round's exact/cupti ratio and (exact - none)/(cupti - none).
#
#   sudo OUT=DIR sh bench/gpu/exact_vs_cupti.sh BUILD
#
# BUILD holds xputop and libxputop_inject.so (make STATIC=1 OUTPUT=BUILD);
# ROUNDS (8) and ROUNDS2 (6) rounds.  Run from the repository's root.
set -u
C=${1:?BUILD}
O=${OUT:-/tmp/out}
P=/tmp/progs
mkdir -p $P $O
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -o $P/empty bench/gpu/empty.cu 2>&1 | tail -2
ROUNDS=${ROUNDS:-8} LAUNCHES=100000 sh bench/gpu/per_launch.sh $C $P $O/pe empty none dormant default exact cupti > $O/pe.log 2>&1
echo "== empty ($(( $(date +%s) - t0 )) s)"
python3 bench/gpu/per_launch_stats.py $O/pe empty none dormant default exact cupti 2>&1 | tail -14
ROUNDS=${ROUNDS2:-6} SECS=2 sh bench/gpu/per_launch.sh $C $P $O/pl loop128 none exact cupti > $O/pl.log 2>&1
echo "== loop128 ($(( $(date +%s) - t0 )) s)"
python3 bench/gpu/per_launch_stats.py $O/pl loop128 none exact cupti 2>&1 | tail -12
cat > /tmp/pair.py <<'PY'
import statistics, sys
out, w = sys.argv[1], sys.argv[2]
def load(m):
    d = {}
    for l in open(f"{out}/{w}.{m}.vals"):
        r, wall, cpu, sy = l.split(); d[int(r)] = (float(wall), float(cpu))
    return d
n, e, c = load("none"), load("exact"), load("cupti")
for i, what in ((0, "wall"), (1, "cpu")):
    rs = sorted(set(n) & set(e) & set(c))
    ratio = [e[r][i] / c[r][i] for r in rs]
    over = [(e[r][i] - n[r][i]) / (c[r][i] - n[r][i]) for r in rs if c[r][i] != n[r][i]]
    q = lambda v: statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else v * 3
    print(f"  {what}: exact/cupti per round median {statistics.median(ratio):.3f} quartiles {q(ratio)[0]:.3f} {q(ratio)[2]:.3f};"
          f" (exact-none)/(cupti-none) median {statistics.median(over):.3f} quartiles {q(over)[0]:.3f} {q(over)[2]:.3f} ({len(rs)} rounds)")
PY
python3 /tmp/pair.py $O/pe empty
python3 /tmp/pair.py $O/pl loop128
grep -h "refused\|error\|fail" $O/pe/*.log $O/pl/*.log 2>/dev/null | sort | uniq -c | head
