#!/usr/bin/env python3
"""Reads xputop's NDJSON on stdin and checks one property, for the shell tests.

Usage: jsonq.py CHECK [ARGS...]; exit status 0 when the property holds,
1 (with the reason on stderr) when it does not.
"""
import json
import sys


def snapshots():
    out = []
    for n, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            sys.exit(f"line {n} is not JSON: {e}")
    if not out:
        sys.exit("no JSON snapshots on stdin")
    return out


def top_comm(snaps, comm):
    """The last snapshot's first CPU row is COMM."""
    rows = snaps[-1]["cpu"]
    if not rows or rows[0]["comm"] != comm:
        sys.exit(f"top CPU process is {rows[0]['comm'] if rows else None!r}, not {comm!r}")


def stack_has(snaps, pid, *frames):
    """Some stack of PID (in the last snapshot) holds FRAMES in this order, root first."""
    for row in snaps[-1]["cpu"]:
        if row["pid"] != int(pid):
            continue
        for st in row["stacks"]:
            names = st["frames"]
            at = 0
            for f in names:
                if at < len(frames) and f == frames[at]:
                    at += 1
            if at == len(frames):
                return
        sys.exit(f"no stack of pid {pid} holds {frames}: {[s['frames'] for s in row['stacks']]}")
    sys.exit(f"pid {pid} is not in the CPU table")


def has_kernel_frames(snaps):
    """Some stack in the last snapshot has a kernel frame (_[k])."""
    for row in snaps[-1]["cpu"]:
        for st in row["stacks"]:
            if any(f.endswith("_[k]") for f in st["frames"]):
                return
    sys.exit("no kernel frames in any stack")


def only_pids(snaps, *pids):
    """Every CPU row of every snapshot is one of PIDS."""
    want = {int(p) for p in pids}
    for s in snaps:
        for row in s["cpu"]:
            if row["pid"] not in want:
                sys.exit(f"pid {row['pid']} ({row['comm']}) is shown although -p {pids}")


def count(snaps, n):
    """Exactly N snapshots, each with the documented keys."""
    if len(snaps) != int(n):
        sys.exit(f"{len(snaps)} snapshots, expected {n}")
    for s in snaps:
        for key in ("time", "cpu", "gpu", "npu", "alerts", "dropped"):
            if key not in s:
                sys.exit(f"snapshot lacks key {key!r}")


def same_as(snaps, path):
    """The snapshots equal those in PATH, except for the words that say where
    the data came from (source, and the GPU/NPU status lines)."""
    with open(path) as f:
        other = [json.loads(line) for line in f if line.strip()]

    def numbers(s):
        s = dict(s)
        s.pop("source", None)
        for view in ("gpu", "npu"):
            s[view] = {k: v for k, v in s.get(view, {}).items() if k not in ("status", "state")}
        return s

    if len(other) != len(snaps):
        sys.exit(f"{len(snaps)} snapshots here, {len(other)} in {path}")
    for n, (a, b) in enumerate(zip(snaps, other), 1):
        if numbers(a) != numbers(b):
            diff = [k for k in a if numbers(a).get(k) != numbers(b).get(k)]
            sys.exit(f"snapshot {n} differs in {diff}")


CHECKS = {f.__name__: f for f in (top_comm, stack_has, has_kernel_frames, only_pids, count, same_as)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: jsonq.py {{{','.join(CHECKS)}}} [ARGS...]")
    CHECKS[sys.argv[1]](snapshots(), *sys.argv[2:])
