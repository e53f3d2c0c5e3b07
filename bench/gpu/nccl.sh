#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 13's multi-GPU check, on a machine with two NVIDIA GPUs (the
# nvidia-h200-x2 kind), as root:
#
#   sh bench/gpu/nccl.sh BUILD_DIR OUT_DIR
#
# Runs bench/gpu/nccl.py under torchrun, one process per GPU, under
# `xputop -b -j -d 1 --gpu-exact --` (the library reaches both workers
# through the environment; PYTHONPERFSUPPORT gives their Python frames), and
# checks the last snapshot: both devices in the NVML view with both
# processes, both processes' kernels, and the NCCL kernels' GPU time joined
# to the collective's Python call site (py::allreduce_step).
# NCCL_NVLS_ENABLE=0: NVLink multicast stays off on the lent machines.
set -u
BUILD=$(realpath "$1")
OUTD=$2
mkdir -p "$OUTD"
OUTD=$(realpath "$OUTD")
HERE=$(dirname "$(realpath "$0")")
cd "$HERE" || exit 1
NCCL_NVLS_ENABLE=0 PYTHONPERFSUPPORT=1 PYTHONUNBUFFERED=1 "$BUILD/xputop" -b -j -d 1 --gpu-exact -- \
	torchrun --standalone --nproc_per_node 2 nccl.py --seconds 8 > "$OUTD/xputop.json" 2> "$OUTD/xputop.err"
echo "xputop exited with $?"
grep -h '"rank"' "$OUTD/xputop.err" "$OUTD/xputop.json" 2> /dev/null > "$OUTD/ranks.jsonl"
python3 - "$OUTD/xputop.json" "$OUTD/ranks.jsonl" <<'PY'
import json, sys
snaps = []
for line in open(sys.argv[1]):
    try:
        s = json.loads(line)
    except ValueError:
        continue
    if "gpu" in s:
        snaps.append(s)
ranks = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
print("ranks:", ranks)
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
check(snaps, f"{len(snaps)} snapshots")
if not snaps:
    sys.exit(1)
# the last snapshot with kernels (the final one may come after the workers left)
last = [s for s in snaps if s["gpu"]["kernels"]][-1] if any(s["gpu"]["kernels"] for s in snaps) else snaps[-1]
devs = last.get("gpu_devices", {}).get("devices", [])
print("devices:", [(d.get("index"), d.get("name"), [p.get("pid") for p in d.get("processes", [])]) for d in devs])
check(len(devs) >= 2, f"{len(devs)} devices in the NVML view")
pids = {r["pid"] for r in ranks}
seen = {p.get("pid") for s in snaps for d in s.get("gpu_devices", {}).get("devices", []) for p in d.get("processes", [])}
check(pids and pids <= seen, f"both workers {sorted(pids)} on the devices' process lists {sorted(seen)}")
ks = last["gpu"]["kernels"]
kp = {k["pid"] for k in ks}
check(pids and pids <= kp, f"both workers have kernels (pids with kernels: {sorted(kp)})")
kdev = {k["device"] for k in ks if k["pid"] in pids}
check(len(kdev) >= 2, f"their kernels ran on devices {sorted(kdev)}")
nccl = [k for k in ks if "nccl" in k["kernel"].lower()]
# over the stacks listed (each row lists its heaviest few)
tot = sum(st.get("gpu_ns", 0) for k in nccl for st in k.get("stacks", []))
joined = sum(st.get("gpu_ns", 0) for k in nccl for st in k.get("stacks", [])
             if any("py::allreduce_step" in f for f in st["frames"]))
for k in nccl[:4]:
    print(f"  {k['kernel'][:70]} pid {k['pid']} dev {k['device']} calls {k['calls']} {k['total_ns']/1e6:.1f} ms")
    if k.get("stacks"):
        print("    " + ";".join(k["stacks"][0]["frames"][-8:])[:300])
check(nccl, f"{len(nccl)} NCCL kernel rows")
check(tot and joined / tot > 0.9, f"{100 * joined / tot if tot else 0:.1f}% of the NCCL rows' listed stacks' GPU time through py::allreduce_step")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
