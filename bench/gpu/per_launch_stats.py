# SPDX-License-Identifier: GPL-2.0-only
"""Summarizes bench/gpu/per_launch.sh: per mode, the median and quartiles of
wall time and of the process's CPU time per launch (or step), its system
part, and the median (and quartiles) of each round's difference and ratio to
`none` and to `dormant` taken in the same round.

For empty kernels (bench/gpu/empty.cu) two more tables: the launching
thread's stalls (ms a run in blocks of 64 launches over 1 ms), and, where
the runs gave them, the CPU's counters (cycles, the kernel's part of them,
instructions, a launch).

Usage: python3 per_launch_stats.py OUT WORKLOAD MODE...
       python3 per_launch_stats.py --parse < a run's output
         (prints "wall cpu sys cycles kcycles instructions stall_ms", nan where absent)
"""
import json
import math
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


FIELDS = (("us_per_launch", "wall_ms_per_step"), ("cpu_us_per_launch", "cpu_ms_per_step"),
          ("sys_us_per_launch", "sys_ms_per_step"), ("cycles_per_launch",), ("kcycles_per_launch",),
          ("instructions_per_launch",), ("stall_ms",))
COUNTERS = ("cycles", "kcycles", "instructions")


def parse(lines):
    """A run's last JSON line with a wall time, as the .vals columns."""
    out = None
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        v = [next((d[k] for k in names if k in d), None) for names in FIELDS]
        if v[0] is not None:
            out = ["nan" if x is None else repr(float(x)) for x in v]
    return " ".join(out) if out else ""


def load(out, w, mode):
    rows = {}
    try:
        with open(f"{out}/{w}.{re.sub('[=:,]', '_', mode)}.vals") as f:
            for line in f:
                r, *v = line.split()
                v = [float(x) for x in v] + [math.nan] * (7 - len(v))
                rows[int(r)] = tuple(v[:7])
    except FileNotFoundError:
        pass
    return rows


def spread(v, fmt):
    """v's median and quartiles, "med [q1 q3]", each in format fmt."""
    q1, med, q3 = quartiles(v)
    return f"{med:{fmt}} [{q1:{fmt}} {q3:{fmt}}]"


def paired(a, b, i, fn):
    return [fn(b[r][i], a[r][i]) for r in b if r in a]


def stalls_table(data, modes):
    """The ms of a run's launches in blocks of 64 that took over 1 ms."""
    have = {m: [v[6] for v in d.values() if not math.isnan(v[6])] for m, d in data.items()}
    if not any(have.values()):
        return
    print("== stalls: ms a run in blocks of 64 launches that took over 1 ms, median [q1 q3] (max)")
    for m in modes:
        v = have[m]
        if v:
            print(f"{m:<28} {len(v):>3} {spread(v, '.1f')} ({max(v):.1f})")


def counters_table(data, modes):
    """Cycles, kernel cycles and instructions a launch, where counted."""
    have = {m: {r: v for r, v in d.items() if not math.isnan(v[3])} for m, d in data.items()}
    if not any(have.values()):
        print("(no CPU counters: the machine has no PMU, or the workload does not read them)")
        return
    print("== the CPU's counters a launch, all threads: median [q1 q3]; diff: each round against the "
          "baseline of the same round")
    print(f"{'mode':<28} {'n':>3} " + " ".join(f"{c:>22} {c + ' - none':>26} {c + ' - dormant':>26}"
                                             for c in COUNTERS))
    for m in modes:
        d = have[m]
        if not d:
            print(f"{m:<28}   0")
            continue
        cols = []
        for i in (3, 4, 5):
            cols.append(spread([v[i] for v in d.values()], ".0f"))
            cols += [spread(paired(have.get(base, {}), d, i, lambda x, y: x - y), "+.0f")
                     for base in ("none", "dormant")]
        print(f"{m:<28} {len(d):>3} " + " ".join(f"{c:>22}" if k % 3 == 0 else f"{c:>26}"
                                                 for k, c in enumerate(cols)))


def main():
    if sys.argv[1:] == ["--parse"]:
        print(parse(sys.stdin))
        return
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
        col = [spread([v[i] for v in d.values()], ".4f") for i in (0, 1)]
        sys_med = statistics.median(v[2] for v in d.values())
        rel = []
        for base, i, fn in (("none", 0, lambda x, y: x - y), ("none", 0, lambda x, y: x / y),
                            ("none", 1, lambda x, y: x - y), ("dormant", 0, lambda x, y: x - y)):
            v = paired(data.get(base, {}), d, i, fn) if base in data else []
            rel.append(spread(v, "+.4f") if fn(2, 1) == 1 else "x" + spread(v, ".4f"))
        print(f"{m:<28} {len(d):>3} {col[0]:>24} {col[1]:>24} {sys_med:8.4f}   {rel[0]:>26} {rel[1]:>24} "
              f"{rel[2]:>26} {rel[3]:>26}")
    if w == "empty":
        stalls_table(data, modes)
        counters_table(data, modes)


if __name__ == "__main__":
    main()
