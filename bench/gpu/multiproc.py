# SPDX-License-Identifier: GPL-2.0-only
"""Several GPU processes at once: torch.multiprocessing workers (spawned, so
each is a fresh python3 that inherits the environment, CUDA_INJECTION64_PATH
included), each running an NxN matmul + relu + sum loop.  One step = one
iteration in each worker.  Each worker prints its own JSON line.

  python3 -X perf multiproc.py [--workers W] [--steps N] [--profile]
"""
import torch
import torch.multiprocessing as mp

import workload


def worker_step(a, b):
    return torch.relu(a @ b).sum()


def worker(rank, args):
    def setup():
        torch.manual_seed(rank)
        return torch.randn(args.size, args.size, device="cuda"), torch.randn(args.size, args.size, device="cuda")

    def step(state):
        worker_step(state[0], state[1])

    workload.run(f"multiproc[{rank}]", args, setup, step)


def main():
    p = workload.parser(__doc__)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--size", type=int, default=256)
    p.set_defaults(steps=5000, warmup=20)
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r, args)) for r in range(args.workers)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join()


if __name__ == "__main__":
    main()
