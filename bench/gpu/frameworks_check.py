#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks one framework workload run under xputop (bench/gpu/frameworks.sh)
against the same workload run under PyTorch's own profiler:

  frameworks_check.py NAME REF.jsonl RUN.jsonl XPUTOP.json EXPORT_DIR FUNC [graphs]

REF.jsonl: the workload's lines from the profiled run (profiled_kernels).
RUN.jsonl: its lines from the run under xputop (pid, step time).
XPUTOP.json: xputop's NDJSON; EXPORT_DIR: its --export files.
FUNC: the workload's own Python function every stack must reach.
"graphs": the workload replays CUDA graphs.

Prints one line of figures and PASS or the failures; exits 1 on failure.
What is checked (issue 12): kernels counted + dropped = kernels launched (the
profiler's count) within 0.1%; >= 99% of GPU time joined to a complete stack,
reaching FUNC and then a launch API (and, for graphs, every graph kernel
joined to its graph launch); no gap between snapshots over twice the refresh
interval; xputop at most 25% of one core.
"""
import glob
import json
import re
import sys

LAUNCH = re.compile(r"^(cudaLaunch|__cudaLaunch|cuLaunch|cudaGraphLaunch|cuGraphLaunch)")
INCOMPLETE = ("[unwinding call site", "[call site not captured]", "[no stack]", "[no user stack]")


def lines(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def folded(export_dir):
    """(frames, weight) of the GPU export: CPU -> GPU stacks in microseconds."""
    files = [f for f in glob.glob(f"{export_dir}/xputop-gpu-2*.folded")]
    if not files:
        return None
    out = []
    with open(files[0]) as f:
        for line in f:
            stack, _, w = line.rstrip("\n").rpartition(" ")
            out.append((stack.split(";"), int(w)))
    return out


def reaches(frames, func):
    """FUNC's Python frame, then a launch API frame, in that order."""
    at = next((i for i, f in enumerate(frames) if f.startswith(f"py::{func}")), None)
    return at is not None and any(LAUNCH.match(f) for f in frames[at + 1:])


def main():
    name, ref, run, xjson, export, func = sys.argv[1:7]
    graphs = len(sys.argv) > 7 and sys.argv[7] == "graphs"
    fails = []
    refs = {r["workload"]: r for r in lines(ref)}
    runs = lines(run)
    snaps = [s for s in lines(xjson) if "mono_ns" in s]
    last = snaps[-1]
    procs = {p["pid"]: p for p in last["gpu"]["processes"]}
    # 1. every kernel accounted for
    for r in runs:
        want = refs.get(r["workload"], {}).get("profiled_kernels")
        p = procs.get(r["pid"])
        if p is None or want is None:
            fails.append(f"{r['workload']}: pid {r['pid']} not in xputop's processes or no reference")
            continue
        got, lost = p["kernels"], p["kernels_dropped"] + p["cupti_dropped"]
        diff = (got + lost - want) / want * 100
        print(f"{r['workload']}: xputop {got} kernels + {lost} dropped, profiler {want}: {diff:+.3f}%  "
              f"step {r['step_s'] * 1e3:.3f} ms")
        if abs(diff) > 0.1:
            fails.append(f"{r['workload']}: kernel count off by {diff:+.3f}%")
    # 2. GPU time joined to complete stacks that reach the workload's function
    st = folded(export)
    if not st:
        fails.append("no GPU export")
    else:
        total = sum(w for _, w in st)
        complete = sum(w for f, w in st if not any(x.startswith(INCOMPLETE) for x in f) and
                       any(LAUNCH.match(x) for x in f))
        through = sum(w for f, w in st if reaches(f, func))
        aten = sum(w for f, w in st if reaches(f, func) and any("at::" in x for x in f))
        print(f"GPU time {total / 1e6:.3f} s: {complete / total * 100:.2f}% with a complete stack, "
              f"{through / total * 100:.2f}% through py::{func} to a launch API, "
              f"{aten / total * 100:.2f}% through ATen too")
        if complete < 0.99 * total:
            fails.append(f"only {complete / total * 100:.2f}% of GPU time has a complete stack")
        if through < 0.99 * total:
            fails.append(f"only {through / total * 100:.2f}% of GPU time reaches py::{func}")
    g = last["gpu"]
    print(f"graph kernels {g['graph_kernels']}, joined to their graph launch {g['graph_kernels_joined']}; "
          f"stack_pct {g['stack_pct']}")
    if graphs and (not g["graph_kernels"] or g["graph_kernels_joined"] != g["graph_kernels"]):
        fails.append("graph kernels not all joined to their graph launch")
    # 3. on time, 4. cheap
    gaps = [(b["mono_ns"] - a["mono_ns"]) / 1e9 for a, b in zip(snaps, snaps[1:])]
    interval = snaps[0]["interval_s"] if snaps else 1
    span = (snaps[-1]["mono_ns"] - snaps[0]["mono_ns"]) / 1e9 if len(snaps) > 1 else 0
    cpu = (snaps[-1]["self_cpu_s"] - snaps[0]["self_cpu_s"]) / span * 100 if span else 0
    print(f"{len(snaps)} snapshots, largest gap {max(gaps) if gaps else 0:.3f} s; "
          f"xputop {cpu:.1f}% of a core; symbolizer {last.get('symbolizer')}")
    if gaps and max(gaps) > 2.0 * max(interval, 1.0):
        fails.append(f"a snapshot came {max(gaps):.2f} s after the one before")
    if cpu > 25:
        fails.append(f"xputop used {cpu:.1f}% of a core")
    for f in fails:
        print(f"FAIL {name}: {f}")
    print(f"{name}: {'PASS' if not fails else 'FAIL'}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
