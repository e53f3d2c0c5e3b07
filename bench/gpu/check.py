#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks xputop's JSON (NDJSON, the last snapshot) from bench/gpu/run.sh.

  check.py known XPUTOP_JSON EXPECTED   the CUDA test program: every kernel,
        totals within 2% of CUDA-event timings, 100% joined to a stack, the
        expected call path in each stack
  check.py torch XPUTOP_JSON            the PyTorch loop: kernels, 100% joined,
        the Python functions and the launch API in the stacks
Prints what it found; exits 1 if anything is off.
"""
import json
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def last_snapshot(path):
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    if not lines:
        sys.exit(f"{path}: no snapshots")
    return json.loads(lines[-1])


def in_order(frames, want):
    at = 0
    for f in frames:
        if at < len(want) and want[at](f):
            at += 1
    return at == len(want)


def exact(name):
    return lambda f: f == name


def prefix(*names):
    return lambda f: any(f.startswith(n) for n in names)


def contains(name):
    return lambda f: name in f


LAUNCH = prefix("cudaLaunch", "__cudaLaunch", "cuLaunch")


def show(g):
    print(f"gpu_ns={g['gpu_ns']} stack_pct={g['stack_pct']}")
    for d in g["devices"]:
        print(f"device {d['device']}: kernel time (traced) {d['kernel_time_pct']:.1f}% kernels {d['kernels']}")
    for p in g["processes"]:
        print(f"process {p['pid']} {p['comm']} {p['mode']} {p['state']} sites={p['sites']} dropped={p['dropped']}")
    for k in g["kernels"][:12]:
        print(f"  {k['calls']:8d} calls {k['total_ns']/1e6:10.3f} ms  {k['name'][:90]}")
        for st in k["stacks"][:2]:
            print("      " + ";".join(st["frames"])[-300:])


def check_known(path, expected_path):
    g = last_snapshot(path)["gpu"]
    show(g)
    with open(expected_path) as f:
        expected = [json.loads(line) for line in f if line.strip()]
    paths = {
        "spin_kernel_a": [exact("main"), prefix("model_forward"), prefix("run_layer_a"), LAUNCH],
        "spin_kernel_b": [exact("main"), prefix("model_forward"), prefix("run_layer_b"), LAUNCH],
        "graph_node_kernel": [exact("main"), prefix("replay_graph"), prefix("cudaGraphLaunch")],
    }
    for e in expected:
        rows = [k for k in g["kernels"] if k["name"].startswith(e["kernel"])]
        if not rows:
            fail(f"{e['kernel']}: not in xputop's table")
            continue
        calls = sum(k["calls"] for k in rows)
        total_ms = sum(k["total_ns"] for k in rows) / 1e6
        diff = (total_ms - e["event_ms"]) / e["event_ms"] * 100
        print(f"{e['kernel']}: xputop {calls} calls {total_ms:.3f} ms, CUDA events {e['calls']} calls "
              f"{e['event_ms']:.3f} ms, difference {diff:+.3f}%")
        if calls != e["calls"]:
            fail(f"{e['kernel']}: {calls} calls, expected {e['calls']}")
        if abs(diff) > 2:
            fail(f"{e['kernel']}: total differs from CUDA events by {diff:+.2f}%")
        for k in rows:
            for st in k["stacks"]:
                if not in_order(st["frames"], paths[e["kernel"]]):
                    fail(f"{e['kernel']}: unexpected stack {st['frames']}")
    if g["stack_pct"] is None or g["stack_pct"] < 100 - 1e-9:
        fail(f"only {g['stack_pct']}% of GPU time joined to a stack")


def check_torch(path):
    g = last_snapshot(path)["gpu"]
    show(g)
    if not g["kernels"]:
        fail("no kernels")
    if g["stack_pct"] is None or g["stack_pct"] < 100 - 1e-9:
        fail(f"only {g['stack_pct']}% of GPU time joined to a stack")
    want = [contains("train_step"), contains("model_forward"), LAUNCH]
    for k in g["kernels"]:
        if k["share_pct"] < 1:
            continue
        if not any(in_order(st["frames"], want) for st in k["stacks"]):
            fail(f"{k['kernel']}: no stack through train_step -> model_forward -> launch: "
                 f"{[st['frames'] for st in k['stacks'][:1]]}")


if __name__ == "__main__":
    if sys.argv[1] == "known":
        check_known(sys.argv[2], sys.argv[3])
    else:
        check_torch(sys.argv[2])
    print("PASS" if not failures else f"{len(failures)} FAILURES")
    sys.exit(1 if failures else 0)
