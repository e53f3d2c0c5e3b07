# SPDX-License-Identifier: GPL-2.0-only
"""Which kernels xputop and torch.profiler count differently: the profiler's
per-name counts (a workload's --profile --names FILE) against the kernel table
of xputop's last snapshot (`xputop -b -j --gpu-exact`, all processes).

  python3 bench/gpu/names_diff.py NAMES_FILE XPUTOP_JSON [TOP]

Prints the totals, then the TOP names (default 20) whose counts differ most.
xputop's table names a kernel as CUPTI does (demangled where it could); a
name the profiler shortened or mangled differently shows as two rows.
"""
import sys

from snapjson import last_gpu


def main():
    names, xjson = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    prof = {}
    for line in open(names, errors="replace"):
        n, _, name = line.rstrip("\n").partition("\t")
        prof[name] = prof.get(name, 0) + int(n)
    xp = {}
    for k in last_gpu(xjson).get("kernels") or []:
        xp[k["name"]] = xp.get(k["name"], 0) + k.get("calls", 0)
    print(f"profiler {sum(prof.values())} kernels, {len(prof)} names; xputop {sum(xp.values())}, {len(xp)} names")
    rows = sorted(set(prof) | set(xp), key=lambda n: -abs(prof.get(n, 0) - xp.get(n, 0)))
    for n in rows[:top]:
        print(f"{prof.get(n, 0):8d} {xp.get(n, 0):8d}  {n[:150]}")


if __name__ == "__main__":
    main()
