# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/pprof_check.py FOLDED TOP [DIVISOR]

Compares `go tool pprof -top` output (TOP, every node shown) with a folded
export (FOLDED) of the same data: the totals are equal, and so are the five
heaviest functions by flat weight and their weights (the folded leaves).
pprof's figures are divided by DIVISOR first (1 when -unit already shows
the folded export's unit).  Prints what it compared."""
import collections
import re
import sys


def folded(path):
    flat = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            flat[stack.split(";")[-1].rstrip()] += int(count)
    return flat


def number(s):
    return float(re.sub(r"[a-z]+$", "", s))


def top(path):
    flat, total, on = collections.Counter(), None, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"Total samples = (\S+)", line)
            if m:
                total = number(m.group(1))
            if line.split()[:1] == ["flat"]:
                on = True
                continue
            cols = line.split(None, 5)
            if on and len(cols) == 6:	# (a name with a newline goes on on the next line)
                flat[cols[5].rstrip()] += number(cols[0])
    return flat, total


def main():
    want = folded(sys.argv[1])
    got, total = top(sys.argv[2])
    div = float(sys.argv[3]) if len(sys.argv) > 3 else 1
    got = collections.Counter({k: v / div for k, v in got.items()})
    if total is None or abs(total / div - sum(want.values())) > 0.5:
        sys.exit(f"totals differ: pprof {total} / {div}, folded {sum(want.values())}")
    heavy = [name for name, _ in want.most_common(5)]
    for name in heavy:
        if abs(got[name] - want[name]) > 0.5:
            sys.exit(f"{name}: pprof {got[name]}, folded {want[name]}")
    print(f"total {sum(want.values())}; top: " + ", ".join(f"{n} {want[n]}" for n in heavy))


if __name__ == "__main__":
    main()
