# SPDX-License-Identifier: GPL-2.0-only
"""A sampled run's estimates against an exact run of the same workload
(issue 25): the last snapshot of each (`xputop -b -j --window LONGER_THAN_RUN
-- WORKLOAD`, once in the default mode, once with --gpu-exact), per process
with kernels: launches, kernels and GPU time estimated (with the uncertainty
xputop gave) against the exact counts, and the kernels' shares of GPU time.

  python3 bench/gpu/est_vs_exact.py SAMPLED_JSON EXACT_JSON [TOP]
"""
import sys

from snapjson import last_gpu as last


def busiest(g):
    procs = [p for p in g.get("processes", []) if p.get("kernels", 0) or p.get("launches", 0)]
    return max(procs, key=lambda p: p.get("launches", 0)) if procs else {}


def shares(g):
    rows = {k["kernel"]: k.get("total_ns", 0) for k in g.get("kernels", [])}
    total = sum(rows.values()) or 1
    return {k: 100.0 * v / total for k, v in rows.items()}, total


s, e = last(sys.argv[1]), last(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 10
ps, pe = busiest(s), busiest(e)
t = s.get("tracing", {})
print(f"sampled: scaled by {ps.get('scaled_by')}, own CPU samples {ps.get('own_samples_traced')} traced of "
      f"{ps.get('own_samples')} ({ps.get('own_traced_pct')}%; CUDA's {ps.get('cuda_samples_traced')} of "
      f"{ps.get('cuda_samples')}) at {ps.get('own_hz')} Hz on {ps.get('own_threads')} threads")
print(f"sampled: estimated {t.get('estimated')}, traced {t.get('traced_pct', 0):.2f}% of the time; "
      f"exact: estimated {e.get('tracing', {}).get('estimated')}")


def line(name, est, err, exact):
    if est is None or not exact:
        print(f"  {name}: estimate {est} (+-{err}%), exact {exact}")
        return
    print(f"  {name}: estimate {est:,.0f} +-{err if err is not None else '?'}% against {exact:,.0f} exact "
          f"({100 * (est / exact - 1):+.1f}%)")


line("launches", ps.get("launches_est"), ps.get("launches_est_err_pct"), pe.get("launches"))
line("kernels", ps.get("kernels_est"), ps.get("kernels_est_err_pct"), pe.get("kernels"))
ss, st = shares(s)
es, et = shares(e)
line("GPU time (ns)", ps.get("gpu_ns_est"), ps.get("gpu_ns_est_err_pct"), et)
print(f"  (sampled kernel table's total {st:,.0f} ns)")
worst = 0.0
covered = 0
stated = {k["kernel"]: k.get("share_err_pct") for k in s.get("kernels", [])}
print(f"  top {top} kernels by exact share: sampled share - exact share, points; the share's stated "
      f"uncertainty (one standard error), points")
for k in sorted(es, key=es.get, reverse=True)[:top]:
    d = ss.get(k, 0.0) - es[k]
    worst = max(worst, abs(d))
    err = stated.get(k)
    pts = ss.get(k, 0.0) * err / 100 if err is not None else None
    ok = pts is not None and abs(d) <= 2 * pts
    covered += ok
    print(f"    {es[k]:6.2f}%  {d:+6.2f}  +-{pts if pts is None else f'{pts:.2f}'}{' ' if ok else ' outside 2x '}"
          f" {k[:70]}")
print(f"  largest share difference among them: {worst:.2f} points; {covered} of {min(top, len(es))} within "
      f"twice the stated")
