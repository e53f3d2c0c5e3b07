# SPDX-License-Identifier: GPL-2.0-only
"""Reads bench/gpu/share.sh's output: OUT PID (the PyTorch loop's pid)."""
import json
import sys

out, pid = sys.argv[1], int(sys.argv[2])
killed = int(open(f"{out}/killed").read())


def snaps(name):
    rows = []
    for line in open(f"{out}/{name}.json", errors="replace"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        p = [p for p in d["gpu"]["processes"] if p["pid"] == pid]
        rows.append((d["mono_ns"], d["source"], p[0]["kernels"] if p else None, d["dropped"]))
    return rows


ok = True
agent = snaps("agent")
print(f"agent: {len(agent)} snapshots, the loop's kernels at its last: {agent[-1][2] if agent else None}")
clients = {n: snaps(n) for n in ("c1", "c2")}
taker = [n for n, s in clients.items() if any(src == "own probes" and t > killed for t, src, _, _ in s)]
if len(taker) != 1:
    sys.exit(f"FAIL: {len(taker)} clients collect after the kill")
taker = taker[0]
other = "c2" if taker == "c1" else "c1"
for n, s in clients.items():
    before = [r for r in s if r[0] < killed]
    after = [r for r in s if r[0] > killed]
    first_own = next((r for r in after if r[1] == "own probes"), None)
    base = before[-1][2] if before and before[-1][2] is not None else 0
    again = next((r for r in after if r[2] is not None and r[2] > base), None)
    print(f"{n} ({'took over' if n == taker else 'stayed a client'}): before the kill '{before[-1][1] if before else '-'}', "
          f"{before[-1][2] if before else '-'} kernels of the loop; after: sources {sorted(set(r[1] for r in after))}")
    if first_own:
        print(f"  its own snapshots from {(first_own[0] - killed) / 1e6:.0f} ms after the kill")
    if again:
        print(f"  the loop's kernels counted again {(again[0] - killed) / 1e6:.0f} ms after the kill; "
              f"{after[-1][2]} at the end ({(after[-1][2] - again[2]) / ((after[-1][0] - again[0]) / 1e9):.0f}/s after, "
              f"{(before[-1][2] - before[0][2]) / max(1e-9, (before[-1][0] - before[0][0]) / 1e9) if before and before[0][2] is not None else 0:.0f}/s before); "
              f"dropped {after[-1][3]} in all")
    else:
        print("  FAIL: the loop's kernels never came again")
        ok = False
    if n == taker and (not first_own or first_own[0] - killed > 500e6):
        print("  FAIL: not within one refresh (500 ms)")
        ok = False
    if n == other and not any(r[1].startswith("collector pid") for r in after):
        print("  FAIL: it did not attach to the new collector")
        ok = False
for n in clients:
    for line in open(f"{out}/{n}.err", errors="replace"):
        if "took over" in line or "probes started" in line or "loaded the probes" in line:
            print(f"  {n}: {line.strip()}")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
