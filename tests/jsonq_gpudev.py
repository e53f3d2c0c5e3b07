#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks one property of the "gpu_devices" object of xputop's NDJSON on
stdin, for the shell tests of the NVML device view (tests/cli/nvml.sh).

Usage: jsonq_gpudev.py CHECK [ARGS...]; exit status 0 when the property holds,
1 (with the reason on stderr) when it does not.  PATH is a dotted path under
"gpu_devices" of the last snapshot, list items by number: devices.0.power_w.
"""
import json
import sys

from jsonq import snapshots


def at(snap, path):
    v = snap["gpu_devices"]
    for k in path.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    return v


def value(snaps, path, op, *words):
    """The value at PATH compares to WANT (the rest of the arguments, joined
    by spaces): eq, has (a substring), null, approx (within 10%), len (of a
    list)."""
    want = " ".join(words)
    try:
        v = at(snaps[-1], path)
    except (KeyError, IndexError, ValueError) as e:
        sys.exit(f"gpu_devices.{path} is not there ({e!r}); gpu_devices is "
                 f"{json.dumps(snaps[-1]['gpu_devices'])}")
    ok = {
        "eq": lambda: v is not None and (str(v) == want or (not isinstance(v, str) and float(v) == float(want))),
        "has": lambda: isinstance(v, str) and want in v,
        "null": lambda: v is None,
        "approx": lambda: v is not None and abs(v - float(want)) <= 0.1 * float(want),
        "len": lambda: len(v) == int(want),
    }[op]()
    if not ok:
        sys.exit(f"gpu_devices.{path} is {v!r}, expected {op} {want}")


def every_snapshot_has_state(snaps, state):
    """Every snapshot's device view is in STATE (none was late for NVML)."""
    bad = [s["gpu_devices"]["state"] for s in snaps if s["gpu_devices"]["state"] != state]
    if bad:
        sys.exit(f"states {bad}, expected {state} in every snapshot")


def on_time(snaps, start_ns, max_gap_s):
    """The first snapshot came within MAX_GAP_S of START_NS (CLOCK_MONOTONIC)
    and each next one within MAX_GAP_S of the one before."""
    t = [int(start_ns)] + [s["mono_ns"] for s in snaps]
    gaps = [(b - a) / 1e9 for a, b in zip(t, t[1:])]
    if max(gaps) > float(max_gap_s):
        sys.exit(f"snapshot gaps {[round(g, 2) for g in gaps]} s, one over {max_gap_s} s")


def same_devices(snaps, path):
    """The last snapshot's devices equal those of the NDJSON file at PATH
    (a replay shows what was recorded)."""
    with open(path) as f:
        other = [json.loads(line) for line in f if line.strip()]
    a, b = snaps[-1]["gpu_devices"]["devices"], other[-1]["gpu_devices"]["devices"]
    if a != b:
        sys.exit(f"devices differ:\n  {json.dumps(a)}\n  {json.dumps(b)}")
    if not a:
        sys.exit("no devices to compare")


CHECKS = {f.__name__: f for f in (value, every_snapshot_has_state, on_time, same_devices)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: jsonq_gpudev.py {{{','.join(CHECKS)}}} [ARGS...]")
    CHECKS[sys.argv[1]](snapshots(), *sys.argv[2:])
