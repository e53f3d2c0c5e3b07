"""A small PyTorch training-style loop: an NxN matmul + relu + sum per step
(N = 1024 by default, as the GPU view's issue suggests; at N = 128 the GPU
work is tiny and the loop is bound by launching, so CPU-side costs show).

Usage: python3 -X perf torch_loop.py [--size N] [--seconds S] [--warmup-s W]
Prints {"ms_per_iter": X, "iters": N, "cpu_ms_per_iter": C, "sys_ms_per_iter": S}
on stdout: C is the process's CPU time per step (getrusage RUSAGE_SELF, every
thread, user + system), S its system part.
With --steps N it runs exactly N steps after --warmup ones instead, as the
framework workloads do (workload.py: --profile, --out), for counting kernels.
"""
import json
import resource
import time

import torch

import workload


def model_forward(a, b):
    return torch.relu(a @ b).sum()


def train_step(a, b):
    return model_forward(a, b)


def cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_stime


def run(a, b, seconds):
    torch.cuda.synchronize()
    c0, s0 = cpu_s()
    t0 = time.perf_counter()
    n = 0
    while True:
        for _ in range(200):
            train_step(a, b)
        n += 200
        if time.perf_counter() - t0 >= seconds:
            break
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    c1, s1 = cpu_s()
    return wall / n * 1e3, n, (c1 - c0) / n * 1e3, (s1 - s0) / n * 1e3


def counted(args):
    def setup():
        torch.manual_seed(0)
        return (torch.randn(args.size, args.size, device="cuda"),
                torch.randn(args.size, args.size, device="cuda"))

    def step(state):
        train_step(state[0], state[1])

    workload.run(f"torch_loop[{args.size}]", args, setup, step)


def main():
    p = workload.parser(__doc__)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup-s", type=float, default=1.0)
    p.add_argument("--size", type=int, default=1024)
    p.set_defaults(steps=0)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.steps:
        return counted(args)
    a = torch.randn(args.size, args.size, device="cuda")
    b = torch.randn(args.size, args.size, device="cuda")
    run(a, b, args.warmup_s)
    ms, n, cpu, sys_ = run(a, b, args.seconds)
    print(json.dumps({"ms_per_iter": ms, "iters": n, "cpu_ms_per_iter": cpu, "sys_ms_per_iter": sys_}),
          flush=True)


if __name__ == "__main__":
    main()
