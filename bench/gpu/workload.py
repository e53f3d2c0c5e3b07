# SPDX-License-Identifier: GPL-2.0-only
"""Shared by the framework workloads of bench/gpu (hf_decode.py, compiled.py,
multiproc.py): arguments, timing, and --profile, which runs the same workload
under PyTorch's own profiler (torch.profiler, CUPTI) and counts the kernels it
saw, the reference xputop's counts are checked against (in a separate run:
CUPTI takes one subscriber per process).

Every workload prints one JSON line on stdout (or appends it to --out):
  {"workload": ..., "pid": ..., "steps": N, "step_s": ..., ...,
   "profiled_kernels": K (with --profile: every kernel of the whole run),
   ..., "wall_ms_per_step", "cpu_ms_per_step", "sys_ms_per_step" last: the
   process's own CPU time (getrusage RUSAGE_SELF, every thread, user +
   system) and its system part over the measured steps,
   with --profile --names FILE: each kernel's count and name written to FILE}
"""
import argparse
import json
import os
import resource
import time

import torch


def parser(doc):
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("--steps", type=int, default=10, help="measured steps")
    p.add_argument("--warmup", type=int, default=2, help="steps before the measured ones")
    p.add_argument("--profile", action="store_true",
                   help="run under torch.profiler and count every kernel it saw")
    p.add_argument("--names", help="with --profile: write each kernel name here, after its count and a tab")
    p.add_argument("--out", help="append the JSON line to this file instead of stdout")
    return p


def kernels_of(prof, names_path):
    """Kernel events of a finished profile, from its Chrome trace (cat "kernel"),
    which is what Kineto got from CUPTI."""
    path = f"/tmp/workload-trace-{os.getpid()}.json"
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    kernels = [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]
    if names_path:
        counts = {}
        for e in kernels:
            counts[e["name"]] = counts.get(e["name"], 0) + 1
        with open(names_path, "a") as f:
            for n in sorted(counts, key=lambda n: (-counts[n], n)):
                f.write(f"{counts[n]}\t{n}\n")
    return len(kernels)


def start_cuda():
    """Creates the CUDA context (an allocation, no kernel) and waits a moment,
    so that a profiler or an injection library attached when CUDA starts is
    tracing before the first kernel: every run then counts the same kernels."""
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    time.sleep(1.5)


def emit(out, line):
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")
    else:
        print(line, flush=True)


def run(name, args, setup, step, extra=None):
    """setup() -> state; step(state) is one measured unit (synchronized)."""
    def body():
        start_cuda()
        state = setup()
        for _ in range(args.warmup):
            step(state)
        torch.cuda.synchronize()
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        for _ in range(args.steps):
            step(state)
        torch.cuda.synchronize()
        secs, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
        cpu[0] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        cpu[1] = r1.ru_stime - r0.ru_stime
        return state, secs

    cpu = [0.0, 0.0]
    out = {"workload": name, "pid": os.getpid(), "steps": args.steps, "warmup": args.warmup}
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            state, secs = body()
        out["profiled_kernels"] = kernels_of(prof, args.names)
    else:
        state, secs = body()
    out["step_s"] = secs / args.steps
    if extra:
        out.update(extra(state, secs))
    ms = 1000.0 / args.steps
    out.update({"wall_ms_per_step": secs * ms, "cpu_ms_per_step": cpu[0] * ms, "sys_ms_per_step": cpu[1] * ms})
    emit(args.out, json.dumps(out))
