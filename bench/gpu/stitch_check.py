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

With --gpu-nodes (backward kernels under the forward call that made their
node) it also prints the share of the backward's GPU time stitched "forward
site", of that the share whose forward part (the frames before "[backward]")
holds STEP and a Python frame other than STEP's (a model's forward), and the
heaviest forward sites: the last Python frames before "[backward]", with the
forward's own GPU time from the same frames beside the backward's.
"""
import sys

from snapjson import last_gpu


def pyname(frame):
    """py::FUNC:FILE -> FUNC:FILE's base name."""
    func, _, path = frame[4:].partition(":")
    return func + ":" + path.rsplit("/", 1)[-1]


def main():
    path, step = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    g = last_gpu(path)
    total = sum(k.get("total_ns", 0) for k in g.get("kernels", []))
    covered = under = back = back_under = 0
    kinds, missing = {}, {}
    fwd_site = fwd_deep = 0
    sites = {}
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
            py = [f for f in frames if f.startswith("py::")]
            if s.get("stitched") == "forward site" and "[backward]" in frames:
                made = frames[:frames.index("[backward]")]
                mpy = [f for f in made if f.startswith("py::")]
                at = next((i for i, f in enumerate(mpy) if step in f), None)
                fwd_site += w if is_back else 0
                fwd_deep += w if is_back and at is not None and at + 1 < len(mpy) else 0
                sites.setdefault(";".join(pyname(f) for f in mpy[-2:]), [0, 0])[1] += w
            elif not is_back and py:
                sites.setdefault(";".join(pyname(f) for f in py[-2:]), [0, 0])[0] += w
            if not has_step:
                key = ";".join(frames[:3]) + " ... " + ";".join(frames[-3:])
                missing[key] = missing.get(key, 0) + w
    if not total:
        sys.exit(f"{path}: no GPU time")
    print(f"GPU time {total / 1e9:.3f} s, the stacks given cover {100 * covered / total:.1f}%: "
          f"{100 * under / total:.2f}% under {step}; backward {100 * back / total:.1f}%, "
          f"of it {100 * back_under / max(back, 1):.2f}% under {step}")
    print("stitched: " + ", ".join(f"{k} {100 * v / max(covered, 1):.1f}%" for k, v in kinds.items()))
    if fwd_site:
        print(f"backward under its forward site: {100 * fwd_site / max(back, 1):.1f}% of the backward's GPU "
              f"time; of that {100 * fwd_deep / fwd_site:.1f}% under {step} and a model function below it")
        print("heaviest forward sites (last two Python frames): forward ms, backward ms")
        for key, (f, b) in sorted(sites.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f"  {f / 1e6:9.2f} {b / 1e6:9.2f}  {key[:160]}")
    for key, w in sorted(missing.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  missing {100 * w / total:.2f}%: {key[:200]}")


if __name__ == "__main__":
    main()
