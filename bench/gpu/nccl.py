# SPDX-License-Identifier: GPL-2.0-only
"""A torch.distributed (NCCL) job, one process per GPU (issue 13): an
all_reduce of 4M floats in a loop, synchronized every 50 steps.

  NCCL_NVLS_ENABLE=0 torchrun --standalone --nproc_per_node 2 nccl.py [--seconds S]

Each rank prints one JSON line: its pid, its GPU and the steps it ran.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist


def allreduce_step(t):
    dist.all_reduce(t)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=8)
    args = p.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    t = torch.ones(1 << 22, device="cuda")
    for _ in range(20):
        allreduce_step(t)
    torch.cuda.synchronize()
    t0, steps = time.time(), 0
    while time.time() - t0 < args.seconds:
        allreduce_step(t)
        steps += 1
        if steps % 50 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    print(json.dumps({"rank": rank, "pid": os.getpid(), "device": torch.cuda.current_device(), "steps": steps}),
          flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
