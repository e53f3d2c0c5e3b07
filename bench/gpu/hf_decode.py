# SPDX-License-Identifier: GPL-2.0-only
"""Batch-1 greedy decoding with a Hugging Face `transformers` causal LM: a
Qwen3-style config (8 layers, hidden 1024, bf16) with random weights built
from the config, nothing downloaded.  One step = one generate() call of
--tokens new tokens.  Launch-bound: hundreds of small kernels per token.

  python3 -X perf hf_decode.py [--steps N] [--tokens T] [--profile]
"""
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

import workload


def build():
    cfg = Qwen3Config(vocab_size=32000, hidden_size=1024, intermediate_size=3072,
                      num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                      head_dim=64, max_position_embeddings=4096, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


def decode_tokens(model, ids, tokens):
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)


def main():
    p = workload.parser(__doc__)
    p.add_argument("--tokens", type=int, default=64)
    args = p.parse_args()

    def setup():
        g = torch.Generator(device="cuda").manual_seed(1)
        return build(), torch.randint(0, 32000, (1, 32), device="cuda", generator=g)

    def step(state):
        decode_tokens(state[0], state[1], args.tokens)

    workload.run("hf_decode", args, setup, step,
                 lambda state, secs: {"tokens_per_s": args.steps * args.tokens / secs})


if __name__ == "__main__":
    main()
