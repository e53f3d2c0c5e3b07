# SPDX-License-Identifier: GPL-2.0-only
"""Sampled estimates against what bench/gpu/known.cu measured (issue 25):
per kernel, the calls and GPU time xputop estimated in its last snapshot
(with --window longer than the run: since start) against the program's own
counts and CUDA-event times, and the share of time traced.

  python3 bench/gpu/est_check.py XPUTOP_JSON KNOWN_EXPECT
"""
import json
import sys

snaps = []
for line in open(sys.argv[1]):
    try:
        snaps.append(json.loads(line))
    except ValueError:
        pass
g = snaps[-1]["gpu"]
t = g.get("tracing", {})
print(f"tracing: estimated {t.get('estimated')}, traced {t.get('traced_pct')}% of the time, "
      f"dropped {g.get('dropped', t.get('dropped'))}")
rows = {k["kernel"]: k for k in g["kernels"]}
for line in open(sys.argv[2]):
    w = json.loads(line)
    k = rows.get(w["kernel"])
    if not k:
        print(f"  {w['kernel']}: missing")
        continue
    ev_ns = w["event_ms"] * 1e6
    print(f"  {w['kernel']}: calls {k['calls']} est vs {w['calls']} ran ({100 * (k['calls'] / w['calls'] - 1):+.1f}%), "
          f"GPU time {k['total_ns'] / 1e6:.1f} ms est vs {ev_ns / 1e6:.1f} ms by events "
          f"({100 * (k['total_ns'] / ev_ns - 1):+.1f}%)")
