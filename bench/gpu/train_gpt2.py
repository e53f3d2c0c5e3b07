# SPDX-License-Identifier: GPL-2.0-only
"""GPT-2-style training with Hugging Face `transformers` (issue 25 and 26):
a small GPT-2 config (6 layers, hidden 512) with random weights, bf16
autocast, AdamW, forward + backward + optimizer step on random tokens.  Half
of a step's GPU time is launched by autograd's engine thread (backward).
--compile trains the torch.compile'd model (inductor's Triton kernels, their
backward from the compiled autograd function); --ddp N trains on N GPUs with
DistributedDataParallel (NCCL), one process per GPU spawned from this one,
each printing its own line (workload "train_gpt2_ddp[RANK]"); --ddp N
--fsdp shards the model with FSDP2 (fully_shard) instead
("train_gpt2_fsdp[RANK]").

  python3 -X perf train_gpt2.py [--steps N] [--batch B] [--seq S] [--profile]
                                [--compile] [--ddp N [--fsdp]]
"""
import os
import sys

# Each run compiles afresh: with inductor's caches, the first run of two
# (the profiled one) autotunes and benchmarks kernels (9,888 cache-clearing
# fills among them, H100) and the second loads the result, so the two runs
# launch different kernels.
if "--compile" in sys.argv:
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

import workload  # noqa: E402


def build(compiled=False, rank=None, fsdp=False):
    cfg = GPT2Config(vocab_size=32000, n_positions=512, n_embd=512, n_layer=6, n_head=8)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(device="cuda").train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if rank is not None and fsdp:
        # FSDP2: each GPT-2 block its own unit, then the whole model; the
        # optimizer over the sharded parameters.
        from torch.distributed.fsdp import fully_shard
        for block in model.transformer.h:
            fully_shard(block)
        fully_shard(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    elif rank is not None:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    if compiled:
        model = torch.compile(model)
    return model, opt


def train_step(model, opt, ids):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def train(args, rank=None):
    name = "train_gpt2" + ("_compiled" if args.compile else "")
    if rank is not None:
        import torch.distributed as dist
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl", rank=rank, world_size=args.ddp)
        name = f"train_gpt2_{'fsdp' if args.fsdp else 'ddp'}[{rank}]"

    def setup():
        g = torch.Generator(device="cuda").manual_seed(1 + (rank or 0))
        model, opt = build(args.compile, rank, args.fsdp)
        return model, opt, torch.randint(0, 32000, (args.batch, args.seq), device="cuda", generator=g)

    def step(state):
        train_step(*state)

    workload.run(name, args, setup, step, lambda state, secs: {"steps_per_s": args.steps / secs})
    if rank is not None:
        torch.distributed.destroy_process_group()


def main():
    p = workload.parser(__doc__)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--ddp", type=int, default=0, help="GPUs, one process each")
    p.add_argument("--fsdp", action="store_true", help="with --ddp N: FSDP (fully_shard) instead of DDP")
    args = p.parse_args()
    if not args.ddp:
        return train(args)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.multiprocessing.spawn(rank_main, args=(args,), nprocs=args.ddp)


def rank_main(rank, args):
    train(args, rank)


if __name__ == "__main__":
    main()
