# SPDX-License-Identifier: GPL-2.0-only
"""Two workload shapes the sampled estimates must hold on (issue 25), each a
128x128 matmul + relu + sum per step as torch_loop.py:

  idle:   a burst of 30-150 steps every 0.5-2.5 s (a mostly idle process)
  bursty: steps back to back for 1 s in every 10

Usage: python3 -X perf shapes.py idle|bursty [--seconds S] [--seed N] [--out FILE]
Prints (or appends to FILE) {"shape": ..., "steps": N, "launches_per_step": 3,
"seconds": S}: a step launches 3 kernels, so the run launched 3 N.
"""
import argparse
import json
import random
import time

import torch


def model_forward(a, b):
    return torch.relu(a @ b).sum()


def train_step(a, b):
    return model_forward(a, b)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("shape", choices=["idle", "bursty"])
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", help="append the JSON line to this file instead of stdout")
    args = p.parse_args()
    rng = random.Random(args.seed)
    a = torch.randn(128, 128, device="cuda")
    b = torch.randn(128, 128, device="cuda")
    torch.cuda.synchronize()
    time.sleep(1.5)		# the library is tracing before the first kernel
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        if args.shape == "idle":
            for _ in range(rng.randint(30, 150)):
                train_step(a, b)
                n += 1
            torch.cuda.synchronize()
            time.sleep(rng.uniform(0.5, 2.5))
        else:
            t1 = time.perf_counter()
            while time.perf_counter() - t1 < 1.0:
                train_step(a, b)
                n += 1
            torch.cuda.synchronize()
            time.sleep(9.0)
    torch.cuda.synchronize()
    line = json.dumps({"shape": args.shape, "steps": n, "launches_per_step": 3,
                       "seconds": time.perf_counter() - t0})
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    else:
        print(line, flush=True)


if __name__ == "__main__":
    main()
