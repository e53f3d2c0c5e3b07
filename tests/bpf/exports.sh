# SPDX-License-Identifier: GPL-2.0-only
# The exports open unchanged in the tools they are written for, showing what
# the files hold: every folded export (CPU view, GPU view, GPU merged with CPU
# samples) in FlameGraph's flamegraph.pl and in speedscope, the GPU view's
# and the NPU view's Chrome traces in speedscope (its own importer,
# tests/speedscope.mjs).  The
# files come from real runs: CPU sampling of a busy program, and the GPU path
# through the stand-in CUPTI.  Needs root.
# test-from: private.sh
. tests/lib.sh
need_root
FLAMEGRAPH=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
SPEEDSCOPE=${SPEEDSCOPE:-$(npm root -g 2> /dev/null)/speedscope}
for need in "$FLAMEGRAPH" "$SPEEDSCOPE/package.json" "$(command -v node)"; do
	[ -f "$need" ] || { echo "FAIL $(basename "$0"): ${need:-node} is missing: run .ci/setup" >&2; exit 1; }
done

# in_flamegraph FILE: flamegraph.pl draws it, silently, with every frame.
in_flamegraph() {
	perl "$FLAMEGRAPH" --minwidth 0 "$1" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed on $1"
	[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned on $1: $(cat "$T_TMP/fg.err")"
	python3 tests/flamegraph.py "$1" "$T_TMP/fg.svg" || fail "flamegraph.pl drew something else"
}

# in_speedscope FILE...: speedscope imports them and shows what they hold.
in_speedscope() {
	node tests/speedscope.mjs "$SPEEDSCOPE" "$@" > "$T_TMP/ss.out" 2>&1 || fail "speedscope: $(cat "$T_TMP/ss.out")"
}

# The CPU view's export of a busy program.
mkdir -p "$T_TMP/cpu" "$T_TMP/gpu"
"$OUT/tests/progs/busy" 60 &
B=$!
"$XPUTOP" -b -n 2 -p $B --export -o "$T_TMP/cpu" > /dev/null 2> "$T_TMP/cpu.err"
kill $B 2> /dev/null
wait $B 2> /dev/null
CPU=$(ls "$T_TMP"/cpu/xputop-cpu-*.folded 2> /dev/null)

# The GPU view's three files, from a stand-in that plays CUPTI.
SOCKDIR=$(mktemp -d /tmp/xputop-exports.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock
"$XPUTOP" -b -j --gpu-exact -n 10 -d 0.5 --window 60 --view gpu --export -o "$T_TMP/gpu" > "$T_TMP/gpu.json" 2> "$T_TMP/gpu.err" &
X=$!
wait_json "$T_TMP/gpu.json"
as_nobody "$(public "$OUT/tests/progs/gpu_standin")" "$(public "$OUT/tests/libxputop_inject_fake.so")" 1.5 \
	> /dev/null 2>&1
xp_ok $X
rm -rf "$SOCKDIR"
GPU=$(ls "$T_TMP"/gpu/xputop-gpu-2*.folded 2> /dev/null)
MERGED=$(ls "$T_TMP"/gpu/xputop-gpu-merged-*.folded 2> /dev/null)
TRACE=$(ls "$T_TMP"/gpu/xputop-gpu-*.trace.json 2> /dev/null)

# The NPU view's files, from the stand-in driver (tests/progs/npu_driver.c)
# under the ivpu_* programs attached as uprobes: inference bursts whose
# JOB_DONE messages carry their job ids.
cp "$OUT/tests/progs/npu_driver" "$T_TMP/npu_driver"
mkdir -p "$T_TMP/npu"
"$XPUTOP" -b -j -d 0.5 -n 10 --view npu --npu-probe-binary "$T_TMP/npu_driver" --export -o "$T_TMP/npu" \
	> "$T_TMP/npu.json" 2> "$T_TMP/npu.err" &
X=$!
wait_json "$T_TMP/npu.json"
"$T_TMP/npu_driver" normal 3 > /dev/null || fail "npu_driver failed"
xp_ok $X
NPU_FOLDED=$(ls "$T_TMP"/npu/xputop-npu-functions-*.folded 2> /dev/null)
NPU_TRACE=$(ls "$T_TMP"/npu/xputop-npu-jobs-*.trace.json 2> /dev/null)

t the_runs_wrote_every_export
[ -n "$CPU" ] || fail "no CPU export: $(cat "$T_TMP/cpu.err")"
[ -n "$GPU" ] && [ -n "$MERGED" ] && [ -n "$TRACE" ] || fail "GPU exports missing: $(ls "$T_TMP/gpu") $(cat "$T_TMP/gpu.err")"
have "$CPU" "the CPU export" && expect_grep ';busy_outer;busy_middle;busy_leaf_spin [0-9]*$' "$CPU"
have "$GPU" "the GPU export" && expect_grep ';cudaLaunchKernel;matmul_kernel(float\*, float\*, float\*, int)_\[g\] [0-9]*$' "$GPU"
have "$TRACE" "the GPU trace" && expect_grep '"name":"matmul_kernel(float\*, float\*, float\*, int)","cat":"kernel"' "$TRACE"

t the_cpu_export_opens_in_flamegraph_pl
have "$CPU" "the CPU export" && in_flamegraph "$CPU"

t the_cpu_export_opens_in_speedscope
have "$CPU" "the CPU export" && in_speedscope "$CPU"

t the_gpu_folded_exports_open_in_flamegraph_pl
have "$GPU" "the GPU export" && in_flamegraph "$GPU"
have "$MERGED" "the merged export" && in_flamegraph "$MERGED"

t the_gpu_folded_exports_open_in_speedscope
have "$GPU" "the GPU export" && have "$MERGED" "the merged export" && in_speedscope "$GPU" "$MERGED"

t the_gpu_trace_opens_in_speedscope_with_every_kernel_and_launch
if have "$TRACE" "the GPU trace"; then
	in_speedscope "$TRACE"
	# Kernels on the stream's track, launches on the launching thread.
	expect_grep "ok  .*trace.json: 2 threads" "$T_TMP/ss.out" "speedscope's import"
fi

t the_npu_jobs_trace_holds_every_job_as_a_slice_of_its_process_with_its_id
if have "$NPU_TRACE" "the NPU jobs trace: $(cat "$T_TMP/npu.err")"; then
	python3 - "$NPU_TRACE" "$T_TMP/npu.json" <<'PY' || fail "the NPU jobs trace"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = json.loads(open(sys.argv[2]).read().splitlines()[-1])["npu"]
pid = {r["pid"] for r in s["calls"] if r["api"] == "jobs"}
jobs = [e for e in ev if e.get("cat") == "npu_job"]
assert len(jobs) == s["jobs"]["done_total"] == s["jobs"]["trace_kept"] > 100, (len(jobs), s["jobs"])
assert all(e["ph"] == "X" and e["args"]["status"] == "done" and e["args"]["command"] == "npu_driver"
           for e in jobs), jobs[:2]
assert {e["pid"] for e in jobs} == pid, ({e["pid"] for e in jobs}, pid)
# the stand-in numbers its jobs from 1: each once, as its JOB_DONE said
assert sorted(e["args"]["job_id"] for e in jobs) == list(range(1, len(jobs) + 1)), "job ids"
assert all(e["name"] == f"job {e['args']['job_id']}" for e in jobs)
# each takes the ~3 ms the stand-in's jobs take
assert all(2900 <= e["dur"] < 100000 for e in jobs), sorted(e["dur"] for e in jobs)[:3]
names = {e["args"]["name"] for e in ev if e["ph"] == "M"}
assert f"npu_driver ({pid.pop()})" in names and "NPU queue 1" in names, names
PY
	in_speedscope "$NPU_TRACE"
	expect_grep "ok  .*trace.json: 1 threads, [0-9]* calls" "$T_TMP/ss.out" "speedscope's import"
fi

t the_npu_export_charges_each_jobs_completion_ipc_to_its_process
if have "$NPU_FOLDED" "the NPU functions export: $(cat "$T_TMP/npu.err")"; then
	expect_grep "^npu_driver-[0-9]*;\[IRQ/IPC: its job's completion\];\[no ioctl\];ivpu_job_done_callback [0-9]*\$" \
		"$NPU_FOLDED" "the folded stacks"
	grep -q "^\[no process\];.*;ivpu_job_done_callback " "$NPU_FOLDED" &&
		fail "completions left with no process: $(grep ivpu_job_done_callback "$NPU_FOLDED")"
	in_flamegraph "$NPU_FOLDED"
fi

t an_export_of_a_view_with_no_data_writes_nothing_and_says_so
# An NPU bpftrace log holds no GPU activity and no CPU samples (a live run
# would see the CUDA programs other tests run on this machine).
for v in gpu cpu; do
	mkdir -p "$T_TMP/empty-$v"
	"$XPUTOP" -r tests/fixtures/npu-bpftrace.log -b --view $v --export -o "$T_TMP/empty-$v" > /dev/null 2> "$T_TMP/empty.err" ||
		fail "$v: exit status $?: $(cat "$T_TMP/empty.err")"
	expect_grep "nothing to export" "$T_TMP/empty.err"
	[ -z "$(ls "$T_TMP/empty-$v")" ] || fail "$v: wrote $(ls "$T_TMP/empty-$v")"
done
# The NPU view's: tests/bpf/npu_probes.sh.

t with_no_gpu_the_gpu_view_says_so
if ! grep -qs 0x10de /sys/bus/pci/devices/*/vendor; then
	"$XPUTOP" -b -j -n 1 -d 0.3 > "$T_TMP/nogpu.json" 2> /dev/null || fail "xputop failed"
	python3 tests/jsonq.py gpu_status_had "no NVIDIA GPU on this machine" < "$T_TMP/nogpu.json" || fail "GPU status"
fi

t with_no_npu_the_npu_view_is_off_and_says_so
if [ ! -e /sys/module/intel_vpu ] && ! ls /dev/accel/accel* > /dev/null 2>&1; then
	"$XPUTOP" -b -j -n 1 -d 0.3 > "$T_TMP/nonpu.json" 2> /dev/null || fail "xputop failed"
	python3 tests/jsonq.py npu_value state eq off < "$T_TMP/nonpu.json" || fail "NPU state"
	python3 tests/jsonq.py npu_value status eq "no NPU on this machine (no intel_vpu, no /dev/accel); no ioctl tracing; Level Zero calls" < "$T_TMP/nonpu.json" ||
		grep -q '"status": *"no NPU on this machine' "$T_TMP/nonpu.json" || fail "NPU status does not lead with it"
fi

finish
