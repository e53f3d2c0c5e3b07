# SPDX-License-Identifier: GPL-2.0-only
"""One long-running workload whose speed is measured phase by phase, while a
controller (bench/gpu/modes.sh) starts and stops xputop beside it: the same
process, the same warm model, so the phases differ only by what watches it.
Process-to-process noise on the H100 (HF decode: 57 to 97 tokens/s between
runs of the same command) would drown a 2% effect; within one process the
steps of a phase agree within about 1%.

  python3 -X perf phases.py WORKLOAD PHASE_FILE LOG [--size N]

WORKLOAD: hf (generate() of 16 tokens, batch 1), compiled (a forward pass of
torch.compile(mode="reduce-overhead")), loop (NxN matmul + relu + sum, 50 per
step).  Before each step it reads PHASE_FILE (one word the controller writes;
"stop" ends the run) and appends "PHASE seconds work" to LOG (PHASE as the file has it: "sampled 2" in
the second round), work being
tokens, passes or iterations.
"""
import argparse
import time

import torch

import compiled
import hf_decode
import torch_loop
import workload


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("kind", choices=("hf", "compiled", "loop"))
    p.add_argument("phase_file")
    p.add_argument("log")
    p.add_argument("--size", type=int, default=1024)
    args = p.parse_args()
    kind, phase_file, log, size = args.kind, args.phase_file, args.log, args.size
    workload.start_cuda()
    if kind == "hf":
        g = torch.Generator(device="cuda").manual_seed(1)
        model, ids = hf_decode.build(), torch.randint(0, 32000, (1, 32), device="cuda", generator=g)
        step, work = (lambda: hf_decode.decode_tokens(model, ids, 16)), 16
    elif kind == "compiled":
        model, x = compiled.build(), torch.randn(8, 1024, device="cuda")
        step, work = (lambda: [compiled.forward_step(model, x) for _ in range(20)]), 20
    else:
        a = torch.randn(size, size, device="cuda")
        b = torch.randn(size, size, device="cuda")
        step, work = (lambda: [torch_loop.train_step(a, b) for _ in range(50)]), 50
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with open(log, "a", buffering=1) as out:
        while True:
            with open(phase_file) as f:
                phase = f.read().strip() or "settle"
            if phase == "stop":
                break
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            out.write(f"{phase} {time.perf_counter() - t0:.6f} {work}\n")


if __name__ == "__main__":
    main()
