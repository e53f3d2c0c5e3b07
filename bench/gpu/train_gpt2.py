# SPDX-License-Identifier: GPL-2.0-only
"""GPT-2-style training with Hugging Face `transformers` (issue 25 and 26):
a small GPT-2 config (6 layers, hidden 512) with random weights, bf16
autocast, AdamW, forward + backward + optimizer step on random tokens.  Half
of a step's GPU time is launched by autograd's engine thread (backward).

  python3 -X perf train_gpt2.py [--steps N] [--batch B] [--seq S] [--profile]
"""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import workload


def build():
    cfg = GPT2Config(vocab_size=32000, n_positions=512, n_embd=512, n_layer=6, n_head=8)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(device="cuda").train()
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def train_step(model, opt, ids):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def main():
    p = workload.parser(__doc__)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    args = p.parse_args()

    def setup():
        g = torch.Generator(device="cuda").manual_seed(1)
        model, opt = build()
        return model, opt, torch.randint(0, 32000, (args.batch, args.seq), device="cuda", generator=g)

    def step(state):
        train_step(*state)

    workload.run("train_gpt2", args, setup, step,
                 lambda state, secs: {"steps_per_s": args.steps / secs})


if __name__ == "__main__":
    main()
