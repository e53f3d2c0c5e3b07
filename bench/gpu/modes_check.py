# SPDX-License-Identifier: GPL-2.0-only
"""Reads what bench/gpu/modes.sh left in OUT and prints, per workload and
phase, the speed (median over rounds) and the median of each round's ratio
to `none`; xputop's own CPU; and, where a round has both a sampled and an
exact phase, how far the sampled shares (over the last 10 s window) are from
the exact ones: the largest error among kernels above 1% share, and whether
the top 10 come in the same order (kernels whose exact shares are within
0.5 points of each other count as ties).

  python3 bench/gpu/modes_check.py OUT
"""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict


def rates(path):
    """{(phase, round): work per second} from a phases.py log."""
    acc = defaultdict(lambda: [0.0, 0.0])
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 4:
                continue
            acc[(w[0], int(w[1]))][0] += float(w[3])
            acc[(w[0], int(w[1]))][1] += float(w[2])
    return {k: work / secs for k, (work, secs) in acc.items() if secs > 0}


def snaps(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def shares(snap):
    """Kernel (mangled name) -> share, summed over processes."""
    out = defaultdict(float)
    for k in snap["gpu"]["kernels"]:
        out[k["mangled"]] += k["share_pct"]
    return out


def self_cpu(ss):
    if len(ss) < 2:
        return None
    secs = (ss[-1]["mono_ns"] - ss[0]["mono_ns"]) / 1e9
    return 100 * (ss[-1]["self_cpu_s"] - ss[0]["self_cpu_s"]) / secs if secs > 0 else None


def same_order(exact, sampled):
    top = sorted(exact, key=exact.get, reverse=True)[:10]
    mine = sorted(top, key=lambda k: sampled.get(k, 0), reverse=True)
    for a, b in zip(top, mine):
        if a != b and abs(exact[a] - exact[b]) >= 0.5:
            return False
    return True


def estimation(out, name, rounds):
    for r in rounds:
        s, e = f"{out}/{name}.sampled.{r}.json", f"{out}/{name}.exact.{r}.json"
        if not (os.path.exists(s) and os.path.exists(e)):
            continue
        ss, es = snaps(s), snaps(e)
        if not ss or not es:
            continue
        a, b = shares(ss[-1]), shares(es[-1])
        big = [k for k in b if b[k] > 1]
        err = max((abs(a.get(k, 0) - b[k]) for k in big), default=0)
        worst = max(big, key=lambda k: abs(a.get(k, 0) - b[k]), default="-")
        tr = ss[-1]["gpu"].get("tracing", {})
        print(f"  round {r}: {len(big)} kernels above 1%: largest error {err:.2f} points ({worst[:60]}); "
              f"top 10 in the same order: {same_order(b, a)}; traced {tr.get('traced_pct', 0):.2f}% of the time")


ORDER = ("none", "sampled", "exact", "cupti", "lo", "lo-2000", "lo-exact")


def main():
    out = sys.argv[1]
    for log in sorted(glob.glob(f"{out}/*.steps")):
        name = os.path.basename(log)[:-6]
        r = rates(log)
        phases = sorted({p for p, _ in r}, key=lambda p: ORDER.index(p) if p in ORDER else 9)
        rounds = sorted({n for _, n in r})
        unit = {"hf": "tokens/s", "lo-hf": "tokens/s", "lo-probes": "tokens/s", "hf-ab": "tokens/s", "compiled": "passes/s"}.get(name, "iterations/s")
        print(f"{name} ({unit}, {len(rounds)} rounds)")
        for p in phases:
            vals = [r[(p, n)] for n in rounds if (p, n) in r]
            ratios = [r[(p, n)] / r[("none", n)] for n in rounds if (p, n) in r and ("none", n) in r]
            cpu = [c for n in rounds for c in [self_cpu(snaps(f))
                                                 for f in glob.glob(f"{out}/{name}.{p}.{n}.json")] if c is not None]
            slower = f"{100 * (1 - statistics.median(ratios)):+.2f}% slower" if ratios and p != "none" else ""
            if len(ratios) >= 4 and p != "none":
                q = statistics.quantiles([100 * (1 - x) for x in ratios], n=4)
                slower += f" (rounds' quartiles {q[0]:+.1f}% to {q[2]:+.1f}%)"
            print(f"  {p:8s} median {statistics.median(vals):10.2f}  per round {' '.join(f'{v:.2f}' for v in vals)}"
                  f"  {slower}" + (f"  xputop {statistics.median(cpu):.2f}% CPU" if cpu else ""))
        estimation(out, name, rounds)
    runs = f"{out}/empty.runs"
    if os.path.exists(runs):
        by = defaultdict(list)
        with open(runs) as f:
            for line in f:
                w = line.split()
                if len(w) == 4:
                    by[w[1]].append(float(w[3]))
        print("empty kernels (us per launch)")
        for p in ("none", "sampled", "exact"):
            if by[p]:
                print(f"  {p:8s} median {statistics.median(by[p]):.3f}  runs {' '.join(f'{v:.3f}' for v in by[p])}")


if __name__ == "__main__":
    main()
