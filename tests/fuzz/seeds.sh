#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Makes the real inputs each harness starts from and puts them into its kept
# corpus as tests/fuzz/corpus/NAME/seed-WHAT (replacing older seeds), so that
# every corpus holds real files however it is minimized.  Needs root
# (recordings are made by a live xputop), a build (`make OUTPUT=DIR all
# fuzz`), and node for a JIT's perf map.  Not part of the test suite: run it
# by hand when a format changes, then commit what changed.
#
#     sudo tests/fuzz/seeds.sh [DIR]
set -eu
OUT=${1:-build}
cd "$(dirname "$0")/../.."
FUZZ_DIR=$PWD/tests/fuzz
. "$FUZZ_DIR/common.sh"
F=$OUT/fuzz
S=$(mktemp -d /tmp/xputop-seeds.XXXXXX)
trap 'rm -rf "$S"' EXIT
for n in $(fuzz_names); do mkdir -p "$S/$n"; done

# wire: packets the injection library's own code writes.
"$F/wire_seeds" "$S/wire"

# record: short real recordings of the CPU, GPU and NPU views.
"$OUT/tests/progs/busy" 3 > /dev/null 2>&1 &
busy=$!
"$OUT/xputop" -b -j -n 3 -d 0.2 -p "$busy" -w "$S/record/cpu.xpr" > /dev/null
kill "$busy" 2> /dev/null || true
sockdir=$(mktemp -d /tmp/xputop-seeds-gpu.XXXXXX)
chmod 755 "$sockdir"
XPUTOP_SOCKET=$sockdir/gpu.sock "$OUT/xputop" -b -j -n 4 -d 0.5 --view gpu -w "$S/record/gpu.xpr" > /dev/null &
xp=$!
sleep 0.5
XPUTOP_SOCKET=$sockdir/gpu.sock setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$OUT/tests/progs/gpu_standin" "$(realpath "$OUT/tests/libxputop_inject_fake.so")" 1 > /dev/null
wait "$xp"
rm -rf "$sockdir"
"$OUT/xputop" -b -j -n 6 -d 0.5 --npu-probe-binary "$OUT/tests/progs/npu_driver" -w "$S/record/npu.xpr" > /dev/null &
xp=$!
sleep 1
"$OUT/tests/progs/npu_driver" recovery 2 > /dev/null
wait "$xp"

# nvml: real polls of the stand-in libnvidia-ml (a host process, one in a
# pid namespace of its own, MIG, an error); record: the device view recorded.
NVML_LIB=$(realpath "$OUT/tests/libfake_nvml.so")
sleep 60 > /dev/null 2>&1 &
host=$!
unshare --pid --fork --mount-proc --kill-child sleep 60 > /dev/null 2>&1 &
ns=$!
sleep 0.5
cat > "$S/full.scenario" <<EOF
driver 580.95.05
device
name NVIDIA H100 80GB HBM3
bus 00000000:1B:00.0
util 45 12
memory 85899345920 12884901888
power 312000
limit 700000
temp 63
clocks 1980 2619
pcie 1000 2000
nvlink 18 1000000 2000000
proc compute $host 3221225472
proc graphics $host 1073741824
procutil $host 37 21 0 0
proc compute $(pgrep -P $ns) 2147483648
device
name NVIDIA A100-SXM4-80GB
mig
fail nvmlDeviceGetPowerUsage 15
proc compute $host 1024 3 0
EOF
FAKE_NVML=$S/full.scenario "$F/nvml_seeds" "$NVML_LIB" "$S/nvml/h100-a100"
printf 'device\nname_unterminated\n' > "$S/bare.scenario"
FAKE_NVML=$S/bare.scenario "$F/nvml_seeds" "$NVML_LIB" "$S/nvml/unterminated"
FAKE_NVML=$S/full.scenario XPUTOP_NVML=$NVML_LIB "$OUT/xputop" -b -j -n 4 -d 0.5 -w "$S/record/nvml.xpr" > /dev/null
kill "$host" "$ns" 2> /dev/null || true

# bpftrace: the NPU tutorial's log, whole and with its header and summary only.
cp tests/fixtures/npu-bpftrace.log "$S/bpftrace/"
head -40 tests/fixtures/npu-bpftrace.log > "$S/bpftrace/head.log"
grep -e '^@' -e '^Lost' tests/fixtures/npu-bpftrace.log > "$S/bpftrace/summary.log" || true

# perfmap: what node's JIT writes (its start: the harness tries 16 KiB).
(cd "$S" && exec node --perf-basic-prof -e 'let s = 0; for (let i = 0; i < 1e6; i++) s += Math.sqrt(i)') &
node=$!
wait "$node"
head -150 "/tmp/perf-$node.map" > "$S/perfmap/node.map"
rm -f "/tmp/perf-$node.map"

# maps: real processes' maps (a C program, a shell, node).
cat /proc/self/maps > "$S/maps/cat.maps"
sh -c 'cat /proc/$$/maps' > "$S/maps/sh.maps"
(cd "$S" && node -e 'process.stdout.write(require("fs").readFileSync("/proc/self/maps"))') > "$S/maps/node.maps"

# elf: a test program with .symtab, stripped to .dynsym, with a debuglink,
# a small C++ shared object, and the vDSO.
P=$OUT/tests/progs/sym_fixture
objcopy --strip-debug "$P" "$S/elf/symtab"
objcopy --strip-all "$P" "$S/elf/stripped"
objcopy --only-keep-debug "$P" "$S/sym_fixture.debug"
objcopy --strip-all --add-gnu-debuglink="$S/sym_fixture.debug" "$P" "$S/elf/debuglink"
printf 'namespace ns { template <class T> struct box { T v; int get(int) const; };\n template <class T> int box<T>::get(int x) const { return x + (int)sizeof(T); }\n template struct box<double>; template struct box<box<char> >; }\n extern "C" int plain(int x) { return x; }\n' > "$S/tiny.cc"
g++ -O1 -shared -fPIC -o "$S/elf/tiny.so" "$S/tiny.cc"
objcopy --strip-debug "$S/elf/tiny.so"
python3 - "$S/elf/vdso" <<'EOF'
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as m:
            m.seek(lo)
            open(sys.argv[1], "wb").write(m.read(hi - lo))
EOF

# kname: the kernel names PyTorch launched on an H100 (demangled), and
# mangled names: C++ kernels as CUPTI gives them, Rust in both manglings.
i=0
while IFS= read -r name; do
	i=$((i + 1))
	printf '%s' "$name" > "$S/kname/pytorch-$i"
done < tests/fixtures/pytorch_kernels.txt
for name in _ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_ \
	_Z13matmul_kernelPfS_S_i _ZN9rust_spin4main17ha56df2d83bc24c7fE \
	_RINvNtCsgv1QoIoodqq_9rust_spin4work9spin_leafNtB2_5MixerEB4_; do
	i=$((i + 1))
	printf '%s' "$name" > "$S/kname/mangled-$i"
done

# replay: what -r reads, recordings and logs.
cp "$S"/record/* "$S"/bpftrace/* "$S/replay/"

for n in $(fuzz_names); do
	mkdir -p "tests/fuzz/corpus/$n"
	rm -f "tests/fuzz/corpus/$n"/seed-*
	for f in "$S/$n"/*; do
		cp "$f" "tests/fuzz/corpus/$n/seed-${f##*/}"
	done
	# Each seed must pass through its harness as it is.
	# shellcheck disable=SC2046
	"$F/fuzz_$n" $(fuzz_opts "$n") -runs=0 -artifact_prefix="$S/" "tests/fuzz/corpus/$n" > "$S/$n.log" 2>&1 ||
		{ echo "seeds.sh: fuzz_$n fails on the corpus:" >&2; grep -E 'ERROR|SUMMARY|broken' "$S/$n.log" >&2; exit 1; }
done
