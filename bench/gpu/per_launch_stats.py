"""Summarizes bench/gpu/per_launch.sh: per mode, the median and quartiles of
wall time and of the process's CPU time per launch (or step), its system
part, and the median (and quartiles) of each round's difference and ratio to
`none` and to `dormant` taken in the same round.

Usage: python3 per_launch_stats.py OUT WORKLOAD MODE...
"""
import re
import statistics
import sys


def quartiles(v):
    if not v:
        return (float("nan"),) * 3
    if len(v) == 1:
        return (v[0],) * 3
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


def load(out, w, mode):
    rows = {}
    try:
        with open(f"{out}/{w}.{re.sub('[=:,]', '_', mode)}.vals") as f:
            for line in f:
                r, wall, cpu, sys_ = line.split()
                rows[int(r)] = (float(wall), float(cpu), float(sys_))
    except FileNotFoundError:
        pass
    return rows


def paired(a, b, i, fn):
    return [fn(b[r][i], a[r][i]) for r in b if r in a]


def main():
    out, w, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
    unit = "us/launch" if w == "empty" else "ms/step"
    data = {m: load(out, w, m) for m in modes}
    print(f"== {w}: {unit}, median [q1 q3] over rounds; diff and ratio: each round against the baseline "
          "of the same round, median [q1 q3]")
    print(f"{'mode':<28} {'n':>3} {'wall':>24} {'cpu':>24} {'sys':>8}   "
          f"{'wall - none':>26} {'wall / none':>24} {'cpu - none':>26} {'wall - dormant':>26}")
    for m in modes:
        d = data[m]
        if not d:
            print(f"{m:<28}   0")
            continue
        col = []
        for i in (0, 1):
            q1, med, q3 = quartiles([v[i] for v in d.values()])
            col.append(f"{med:8.4f} [{q1:.4f} {q3:.4f}]")
        sys_med = statistics.median(v[2] for v in d.values())
        rel = []
        for base, i, fn in (("none", 0, lambda x, y: x - y), ("none", 0, lambda x, y: x / y),
                            ("none", 1, lambda x, y: x - y), ("dormant", 0, lambda x, y: x - y)):
            v = paired(data.get(base, {}), d, i, fn) if base in data else []
            q1, med, q3 = quartiles(v)
            rel.append(f"{med:+8.4f} [{q1:+.4f} {q3:+.4f}]" if fn(2, 1) == 1 else
                       f"x{med:7.4f} [{q1:.4f} {q3:.4f}]")
        print(f"{m:<28} {len(d):>3} {col[0]:>24} {col[1]:>24} {sys_med:8.4f}   {rel[0]:>26} {rel[1]:>24} "
              f"{rel[2]:>26} {rel[3]:>26}")


if __name__ == "__main__":
    main()
