# SPDX-License-Identifier: GPL-2.0-only
"""How much of a run's GPU time reaches the workload's step function
(issue 26): reads the last snapshot of `xputop -b -j --window LONGER_THAN_RUN
--gpu-exact -- python3 -X perf WORKLOAD` and prints, over the kernels' stacks
(each kernel's heaviest ones, as JSON gives them; the share of the kernels'
GPU time they cover is printed first), the share of GPU time whose stack
holds STEP, the share that went through autograd's backward (a frame holding
"Backward" and "apply") and of that the share under STEP, the GPU time by
how each stack was stitched, and the heaviest stacks that miss STEP.

  python3 bench/gpu/stitch_check.py SNAPSHOTS_JSON STEP [TOP]

On the lent H100 (2026-11-28, bench/gpu/train_gpt2.py, 30 steps): with -X
perf 100.00% under train_step, backward 43.0% of the GPU time and 100% of it
under train_step; 51.5% of the time stitched "backward of".  Without -X perf
no Python function is named (0%: the stacks reach the interpreter).
"""
import sys

from snapjson import last_gpu


def main():
    path, step = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    g = last_gpu(path)
    total = sum(k.get("total_ns", 0) for k in g.get("kernels", []))
    covered = under = back = back_under = 0
    kinds, missing = {}, {}
    for k in g.get("kernels", []):
        for s in k.get("stacks", []):
            frames = [f if isinstance(f, str) else str(f.get("name", f)) for f in s.get("frames", [])]
            w = s.get("gpu_ns", 0)
            has_step = any(step in f for f in frames)
            is_back = any("Backward" in f and "apply" in f for f in frames)
            covered += w
            under += w if has_step else 0
            back += w if is_back else 0
            back_under += w if is_back and has_step else 0
            kinds[s.get("stitched")] = kinds.get(s.get("stitched"), 0) + w
            if not has_step:
                key = ";".join(frames[:3]) + " ... " + ";".join(frames[-3:])
                missing[key] = missing.get(key, 0) + w
    if not total:
        sys.exit(f"{path}: no GPU time")
    print(f"GPU time {total / 1e9:.3f} s, the stacks given cover {100 * covered / total:.1f}%: "
          f"{100 * under / total:.2f}% under {step}; backward {100 * back / total:.1f}%, "
          f"of it {100 * back_under / max(back, 1):.2f}% under {step}")
    print("stitched: " + ", ".join(f"{k} {100 * v / max(covered, 1):.1f}%" for k, v in kinds.items()))
    for key, w in sorted(missing.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  missing {100 * w / total:.2f}%: {key[:200]}")


if __name__ == "__main__":
    main()
