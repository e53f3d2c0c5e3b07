# SPDX-License-Identifier: GPL-2.0-only
"""How much of a run's GPU time reaches the workload's step function
(issue 26): reads the GPU folded export xputop wrote (`xputop -b --export -o
DIR --gpu-exact -- WORKLOAD`; lines `frame;frame;...;kernel GPU_NS`) and
prints the share of GPU time whose stack holds STEP, the share that went
through autograd's backward (a frame holding "Backward" and "apply"), and
of that the share under STEP, with the heaviest stacks that miss STEP.

  python3 bench/gpu/stitch_check.py FOLDED_FILE STEP [TOP]
"""
import sys


def main():
    path, step = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    total = under = back = back_under = 0
    missing = {}
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line or " " not in line:
            continue
        stack, weight = line.rsplit(" ", 1)
        try:
            w = int(weight)
        except ValueError:
            continue
        frames = stack.split(";")
        has_step = any(step in f for f in frames)
        is_back = any("Backward" in f and "apply" in f for f in frames)
        total += w
        under += w if has_step else 0
        back += w if is_back else 0
        back_under += w if is_back and has_step else 0
        if not has_step:
            missing[stack] = missing.get(stack, 0) + w
    if not total:
        sys.exit(f"{path}: no GPU time")
    print(f"GPU time {total / 1e9:.3f} s: {100 * under / total:.2f}% under {step}; "
          f"backward {100 * back / total:.1f}%, of it {100 * back_under / max(back, 1):.2f}% under {step}")
    for stack, w in sorted(missing.items(), key=lambda kv: -kv[1])[:top]:
        frames = stack.split(";")
        print(f"  missing {100 * w / total:.2f}%: {';'.join(frames[:3])} ... {';'.join(frames[-3:])}")


if __name__ == "__main__":
    main()
