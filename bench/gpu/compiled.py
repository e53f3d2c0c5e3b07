# SPDX-License-Identifier: GPL-2.0-only
"""A model compiled with torch.compile(mode="reduce-overhead"): after its
warm-up PyTorch replays it as CUDA graphs (cudaGraphLaunch), so its kernels
are launched by the graph, not one by one.  One step = one forward pass.

  python3 -X perf compiled.py [--steps N] [--profile]
"""
import os

# Each run compiles afresh (as train_gpt2.py --compile): with inductor's
# caches the profiled run, first, compiles and autotunes and the run under
# xputop loads the result, so the two launch different kernels (H200,
# 2026-11-28: 67,362 profiled against 66,114; 67,340 each with the caches
# off).
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

import torch  # noqa: E402

import workload  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def build(d=1024, blocks=4):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(d) for _ in range(blocks)]).cuda().eval()
    return torch.compile(model, mode="reduce-overhead")


def forward_step(model, x):
    with torch.no_grad():
        return model(x)


def main():
    p = workload.parser(__doc__)
    p.set_defaults(steps=2000, warmup=5)
    args = p.parse_args()

    def setup():
        return build(), torch.randn(8, 1024, device="cuda")

    def step(state):
        forward_step(state[0], state[1])

    workload.run("compiled", args, setup, step)


if __name__ == "__main__":
    main()
