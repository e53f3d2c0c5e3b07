# SPDX-License-Identifier: GPL-2.0-only
# The GPU device view (NVML) through a stand-in libnvidia-ml built by the
# tests (tests/fake/fake_nvml.c), loaded as xputop loads the real one: no
# driver, no device, several devices, unsupported fields, NVML errors,
# processes in another pid namespace, MIG, an old driver's library, a slow
# driver, recording and replay.  Needs root (live mode).
. tests/lib.sh
need_root
Q="python3 tests/jsonq_gpudev.py"
FAKE=$(realpath "$OUT/tests/libfake_nvml.so")
FAKE_V1=$(realpath "$OUT/tests/libfake_nvml_v1.so")
export FAKE_NVML="$T_TMP/scenario"
GIB=1073741824

# run_lib LIB NAME [XPUTOP ARGS...]: JSON snapshots of the library LIB
# (XPUTOP_NVML) into $T_TMP/NAME.json; run NAME ... does it with the stand-in.
run_lib() {
	lib=$1
	n=$2
	shift 2
	XPUTOP_NVML=$lib "$XPUTOP" -b -j -n 3 -d 0.4 "$@" > "$T_TMP/$n.json" 2> "$T_TMP/$n.err" ||
		fail "xputop failed: $(cat "$T_TMP/$n.err")"
}
run() { run_lib "$FAKE" "$@"; }

# checks FILE CHECK...: each CHECK ("PATH OP VALUE") holds in FILE's last snapshot.
checks() {
	f=$1
	shift
	for c in "$@"; do
		# shellcheck disable=SC2086
		$Q value $c < "$f" || fail "$c"
	done
}

t without_a_driver_the_device_view_is_off_and_says_why_quietly
# This machine has no NVIDIA driver: no XPUTOP_NVML, the real search.
"$XPUTOP" -b -j -n 2 -d 0.3 > "$T_TMP/none.json" 2> "$T_TMP/none.err" || fail "xputop failed"
checks "$T_TMP/none.json" "state eq off" "status has libnvidia-ml.so.1 is not installed" "devices len 0"
grep -qi "nvml\|nvidia" "$T_TMP/none.err" && fail "a message on stderr: $(cat "$T_TMP/none.err")"

t xputop_nvml_off_turns_the_device_view_off
XPUTOP_NVML=off "$XPUTOP" -b -j -n 1 -d 0.3 > "$T_TMP/off.json" 2>> "$T_TMP/xputop.err" || xp_failed $?
checks "$T_TMP/off.json" "state eq off" "status has XPUTOP_NVML=off"

t a_driver_that_cannot_start_is_a_failure_with_nvmls_reason
echo "init 9" > "$FAKE_NVML"
run init -n 2
checks "$T_TMP/init.json" "state eq failed" "status has nvmlInit failed: Driver Not Loaded"

t a_library_that_is_not_nvml_is_refused_by_name
run_lib "$(realpath "$OUT/tests/libxputop_inject_fake.so")" notnvml -n 2
checks "$T_TMP/notnvml.json" "state eq failed" "status has has no nvmlInit_v2"

t sigint_stops_a_background_xputop_while_nvml_polls
# A shell's background job ignores SIGINT.  NVML's poller thread (and the
# driver's own) must not be where a process-directed SIGINT lands: xputop
# blocked it only in its main thread once, and ran on for minutes after
# `kill -INT` on the H100 benchmark.
printf 'device\nname NVIDIA H100\n' > "$FAKE_NVML"
sh -c '"$0" -b -j -d 0.3 > "$1" 2> "$2" & echo $! > "$3"; wait' "$XPUTOP" "$T_TMP/bg.json" "$T_TMP/bg.err" \
	"$T_TMP/bg.pid" &
SH=$!
# Its first snapshot out, and the poller at work (a sanitizer build beside
# other suites had printed none after 2 s).
wait_json "$T_TMP/bg.json"
sleep 1
BG=$(cat "$T_TMP/bg.pid")
grep -q SigIgn "/proc/$BG/status" && [ $(( 0x$(sed -n 's/^SigIgn:\t*//p' "/proc/$BG/status") & 2 )) -ne 0 ] ||
	fail "the background job does not ignore SIGINT: the case is not tested"
kill -INT "$BG"
i=0
while kill -0 "$BG" 2> /dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$BG" 2> /dev/null; then
	kill -KILL "$BG"
	fail "xputop still runs 3 s after SIGINT"
fi
wait "$SH"
$Q value devices len 1 < "$T_TMP/bg.json" > /dev/null 2>&1 || tail -1 "$T_TMP/bg.json" | grep -q '"devices"' ||
	fail "no last snapshot: $(cat "$T_TMP/bg.err")"

t no_device_is_said_and_lists_nothing
echo "driver 580.95.05" > "$FAKE_NVML"
run nodev -n 2
checks "$T_TMP/nodev.json" "status has the driver reports no GPU" "devices len 0"

# One run for the rest: five devices, each showing something else, recorded.
sleep 300 > /dev/null 2>&1 &
HOST=$!
unshare --pid --fork --mount-proc --kill-child sleep 300 > /dev/null 2>&1 &
U=$!
NS=""
for i in $(seq 50); do NS=$(pgrep -P $U) && break; sleep 0.1; done
[ -n "$NS" ] || echo "  unshare started nothing" >&2
cat > "$FAKE_NVML" <<EOF
driver 580.95.05
device
name NVIDIA H100 80GB HBM3
bus 00000000:1B:00.0
util 45 12
memory $((80 * GIB)) $((12 * GIB))
power 312000
limit 700000
temp 63
clocks 1980 2619
pcie 1000 2000
nvlink 18 1000000 2000000
proc compute $HOST $((3 * GIB))
proc graphics $HOST $((1 * GIB))
procutil $HOST 37 21 0 0
proc compute 4194000 na
device
name NVIDIA A10
memory $((24 * GIB)) 0
fail nvmlDeviceGetPowerUsage 15
device
name_unterminated
device
name NVIDIA A100-SXM4-80GB
mig
proc compute $HOST 1024 3 0
procutil $HOST 50 50 0 0
device
name NVIDIA L4
proc compute $NS $((2 * GIB))
EOF
run main -n 5 -w "$T_TMP/dev.xpr"
M=$T_TMP/main.json

t several_devices_show_every_field_nvml_gives
checks "$M" "state eq active" "status has 5 GPUs" "devices len 5" "devices.0.index eq 0" \
	"devices.0.name eq NVIDIA H100 80GB HBM3" "devices.0.bus_id eq 00000000:1B:00.0" \
	"devices.0.gpu_util_pct eq 45" "devices.0.mem_util_pct eq 12" \
	"devices.0.mem_used_bytes eq $((12 * GIB))" "devices.0.mem_total_bytes eq $((80 * GIB))" \
	"devices.0.mem_used_pct eq 15" "devices.0.power_w eq 312" "devices.0.power_limit_w eq 700" \
	"devices.0.temp_c eq 63" "devices.0.sm_clock_mhz eq 1980" "devices.0.mem_clock_mhz eq 2619" \
	"devices.0.pcie_rx_bytes_per_s eq 1024000" "devices.0.pcie_tx_bytes_per_s eq 2048000" \
	"devices.0.nvlinks eq 18" "devices.0.mig eq False" "devices.0.stale eq False" \
	"devices.1.index eq 1" "devices.1.name eq NVIDIA A10" "devices.1.mem_used_bytes eq 0" \
	"devices.1.mem_total_bytes eq $((24 * GIB))" "devices.1.nvlinks eq 0"

t unsupported_fields_are_null_never_zero
for f in gpu_util_pct mem_util_pct power_w power_limit_w temp_c sm_clock_mhz mem_clock_mhz \
	pcie_rx_bytes_per_s pcie_tx_bytes_per_s nvlink_rx_bytes_per_s bus_id; do
	checks "$M" "devices.1.$f null"
done

t nvlink_traffic_is_a_rate_from_the_drivers_counters
# The stand-in's counters grow by 1,000,000 and 2,000,000 KiB/s.
checks "$M" "devices.0.nvlink_rx_bytes_per_s approx 1024000000" "devices.0.nvlink_tx_bytes_per_s approx 2048000000"

t nvml_errors_name_the_device_and_the_function
checks "$M" "status has GPU1: nvmlDeviceGetPowerUsage: GPU is lost" "devices.1.power_w null" "devices.0.power_w eq 312"

t a_name_without_its_nul_is_cut_to_nvmls_buffer
checks "$M" "devices.2.name eq $(printf 'X%.0s' $(seq 95))"

t processes_show_name_user_memory_and_sm_share
checks "$M" "devices.0.processes len 2" "devices.0.processes.0.pid eq $HOST" \
	"devices.0.processes.0.comm eq sleep" "devices.0.processes.0.user eq root" \
	"devices.0.processes.0.container_pid eq $HOST" "devices.0.processes.0.type eq compute+graphics" \
	"devices.0.processes.0.gpu_mem_bytes eq $((3 * GIB))" "devices.0.processes.0.sm_pct eq 37" \
	"devices.0.processes.0.mem_pct eq 21"

t a_process_gone_from_proc_keeps_its_pid_and_nothing_else
checks "$M" "devices.0.processes.1.pid eq 4194000" "devices.0.processes.1.comm null" \
	"devices.0.processes.1.container_pid null" "devices.0.processes.1.gpu_mem_bytes null" \
	"devices.0.processes.1.sm_pct null"

t a_process_in_another_pid_namespace_shows_its_container_pid
checks "$M" "devices.4.processes.0.pid eq $NS" "devices.4.processes.0.container_pid eq 1" \
	"devices.4.processes.0.comm eq sleep"

t on_mig_the_sm_share_is_not_supported_and_not_an_error
checks "$M" "devices.3.mig eq True" "devices.3.processes.0.sm_pct null" \
	"devices.3.processes.0.mig_gpu_instance eq 3" "devices.3.processes.0.mig_compute_instance eq 0"
grep -q "GPU3" "$M" && fail "MIG's 'not supported' was reported as an error"

t a_recording_replays_the_same_devices_and_processes
"$XPUTOP" -r "$T_TMP/dev.xpr" -b -j > "$T_TMP/replay.json" 2> "$T_TMP/replay.err" || fail "replay: $(cat "$T_TMP/replay.err")"
$Q same_devices "$M" < "$T_TMP/replay.json" || fail "replayed devices"
checks "$T_TMP/replay.json" "status has GPU devices as NVML reported them"

t text_snapshots_list_each_device_and_its_processes
"$XPUTOP" -r "$T_TMP/dev.xpr" -b > "$T_TMP/replay.txt" 2>&1
expect_grep "^  GPU0 NVIDIA H100 80GB HBM3 \[00000000:1B:00.0\]: util 45%, memory util 12%, memory 12.0 GiB of 80.0 GiB, power 312 W of 700 W, temperature 63 C, SM 1980 MHz" "$T_TMP/replay.txt" "GPU0's line"
expect_grep "^  GPU1 NVIDIA A10 \[bus N/A\]: util N/A, memory util N/A, memory 0 B of 24.0 GiB, power N/A" "$T_TMP/replay.txt" "GPU1's line"
expect_grep "^    pid $NS (pid 1 in its container) sleep root compute: GPU memory 2.00 GiB, SM N/A" "$T_TMP/replay.txt" "the process line"
kill $HOST $NS $U 2> /dev/null

t an_old_drivers_unversioned_functions_and_layouts_work
printf 'device\nname Tesla K80\nmemory %s %s\nproc compute 1 %s\nproc graphics 2 %s\n' \
	$((12 * GIB)) $((5 * GIB)) $((4 * GIB)) $((1 * GIB)) > "$FAKE_NVML"
run_lib "$FAKE_V1" v1 -n 2
checks "$T_TMP/v1.json" "devices.0.mem_used_bytes eq $((5 * GIB))" "devices.0.processes len 2" \
	"devices.0.processes.0.pid eq 1" "devices.0.processes.0.gpu_mem_bytes eq $((4 * GIB))" \
	"devices.0.processes.1.pid eq 2" "devices.0.processes.1.type eq graphics"

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

t a_driver_that_takes_seconds_to_start_never_delays_a_snapshot
# The first snapshot comes while nvmlInit still runs (under load, starting
# the BPF sources alone can take seconds: the bound is loose, nvmlInit's 10 s
# is not).
printf 'init_delay 10000\ndevice\nname NVIDIA H100 80GB HBM3\n' > "$FAKE_NVML"
start=$(mono_ns)
run slowinit -n 4 -d 0.3
$Q on_time "$start" 6 < "$T_TMP/slowinit.json" || fail "late snapshots"
$Q every_snapshot_has_state waiting < "$T_TMP/slowinit.json" || fail "state"

t a_poll_that_takes_seconds_never_delays_a_snapshot
# Each poll takes 4 s: snapshots 0.3 s apart go on meanwhile.
printf 'device\nname NVIDIA H100 80GB HBM3\ndelay nvmlDeviceGetName 4000\n' > "$FAKE_NVML"
start=$(mono_ns)
run slowpoll -n 20 -d 0.3
$Q on_time "$start" 8 < "$T_TMP/slowpoll.json" || fail "late first snapshot"
tail -n +2 "$T_TMP/slowpoll.json" | $Q on_time "$(head -1 "$T_TMP/slowpoll.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mono_ns"])')" 2 ||
	fail "a snapshot waited for the poll"
checks "$T_TMP/slowpoll.json" "state eq active" "devices.0.name eq NVIDIA H100 80GB HBM3"

finish
