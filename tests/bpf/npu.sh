# The NPU view for real, without an NPU: the ivpu_* BPF programs attached as
# uprobes to the stand-in driver (tests/progs/npu_driver.c) playing each
# scenario, real ioctls carrying IVPU numbers on a node given with --npu-dev,
# and Level Zero calls through Debian's loader.  Needs root.
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
DRV=$OUT/tests/progs/npu_driver
IOC=$OUT/tests/progs/npu_ioctl
L0=$OUT/tests/progs/npu_l0
REFRESH_MS=500
TDR_MS=2000

# scenario NAME SECONDS REFRESHES: plays a stand-in scenario under xputop;
# leaves the snapshots in $T_TMP/NAME.json and the fault's onset in $ONSET.
scenario() {
	"$XPUTOP" -b -j -d 0.5 -n "$3" --npu-probe-binary "$DRV" > "$T_TMP/$1.json" 2> "$T_TMP/$1.json.err" &
	xp=$!
	wait_json "$T_TMP/$1.json"
	"$DRV" "$1" "$2" > "$T_TMP/$1.onset" || fail "npu_driver $1 failed"
	wait $xp || fail "xputop exited with $?: $(cat "$T_TMP/$1.json.err")"
	ONSET=$(awk '/^onset/ { print $2 }' "$T_TMP/$1.onset")
}

# The alerts below are due at the TDR: raised by the first refresh after it
# (within TDR_MS + REFRESH_MS when refreshes come on time).

t the_sources_list_says_what_this_kernel_offers
"$XPUTOP" -b -j -n 1 -d 0.3 > "$T_TMP/src.json" 2> "$T_TMP/src.err" || fail "xputop failed: $(cat "$T_TMP/src.err")"
if ls /dev/accel/accel* > /dev/null 2>&1; then
	$Q npu_source ioctls active "major 261" < "$T_TMP/src.json" || fail "ioctl source"
else
	$Q npu_source ioctls off "no accel device here" < "$T_TMP/src.json" || fail "ioctl source"
fi
$Q npu_source "vpu tracepoints" off "not found" < "$T_TMP/src.json" || fail "vpu tracepoints"
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	$Q npu_source "ivpu probes" off "intel_vpu is not loaded" < "$T_TMP/src.json" || fail "kprobes"
else
	$Q npu_source "ivpu probes" off "no kprobes" < "$T_TMP/src.json" || fail "kprobes"
fi
if [ -e /sys/module/intel_vpu ] || ls /dev/accel/accel* > /dev/null 2>&1; then
	$Q npu_source jobs active "dma_fence" < "$T_TMP/src.json" || fail "the dma_fence fallback is not in use"
else	# without an NPU nothing machine-wide (ioctls, dma_fence) is traced for it
	$Q npu_source jobs off "no NPU on this machine" < "$T_TMP/src.json" || fail "the jobs source line"
fi
$Q npu_source busy off "N/A" < "$T_TMP/src.json" || fail "busy"
if [ ! -e /sys/bus/event_source/devices/kprobe ]; then
	$Q npu_source "driver functions" off "this kernel has no kprobes" < "$T_TMP/src.json" || fail "driver functions"
fi
$Q npu_value busy_pct null - < "$T_TMP/src.json" || fail "busy % is not null without a device"

t the_stand_in_attaches_as_uprobes_and_names_what_it_lacks
scenario normal 8 20
$Q npu_source "ivpu probes" active "uprobes on $DRV" < "$T_TMP/normal.json" || fail "uprobes"
$Q npu_source "ivpu probes" active "ivpu_job_handle_engine_error" < "$T_TMP/normal.json" || fail "missing functions not named"
$Q npu_source jobs active "ivpu_hw_ip_db_set" < "$T_TMP/normal.json" || fail "jobs source"

t every_ivpu_function_of_the_stand_in_is_counted_by_the_multi_kprobe_program
$Q npu_source "driver functions" active "uprobes on 21 ivpu_* functions of $DRV" < "$T_TMP/normal.json" ||
	fail "the functions source"
$Q npu_value functions.total ge 1000 < "$T_TMP/normal.json" || fail "function calls"
python3 - "$T_TMP/normal.json" <<'PY' || fail "the function counts disagree with the driver's own probes"
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]
rows = {r["function"]: r["total"] for r in s["functions"]["rows"]}
# every job is one doorbell and one completion, each seen by both programs
assert rows["ivpu_hw_ip_db_set"] == s["jobs"]["submitted_total"], (rows["ivpu_hw_ip_db_set"], s["jobs"])
assert rows["ivpu_job_done_callback"] == s["jobs"]["done_total"], (rows["ivpu_job_done_callback"], s["jobs"])
cats = {c["category"]: c for c in s["functions"]["categories"]}
assert cats["jobs"]["total"] >= 2 * s["jobs"]["done_total"], cats["jobs"]
PY

t every_call_of_a_driver_started_right_after_the_attach_is_counted
# The stand-in's functions take one uprobe_multi link (the multi-kprobe
# program's shape); a driver started soon after xputop's first refresh once
# ran most of its calls untrapped under per-function perf uprobes
# (bench/RESULTS.md).  Each attach path, at the start and 1 s after it: the
# driver's own count of its probed calls against the function table's.
storm() {	# storm NAME DELAY [ENV]: npu_driver rate 0 for 2 s
	env $3 "$XPUTOP" -b -j -d 0.5 -n 120 --npu-probe-binary "$DRV" > "$T_TMP/$1.json" 2> "$T_TMP/$1.err" &
	xp=$!
	wait_json "$T_TMP/$1.json"
	sleep "$2"
	"$DRV" rate 0 2 > "$T_TMP/$1.drv" || fail "npu_driver rate failed"
	# Two refreshes after the driver's end, however slowly this machine
	# runs today (the counts are read from the map at each refresh).
	n=$(($(wc -l < "$T_TMP/$1.json") + 2)) i=0
	while [ "$(wc -l < "$T_TMP/$1.json")" -lt $n ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -INT $xp
	wait $xp; rc=$?
	[ $rc -eq 130 ] || fail "xputop exited with $rc: $(cat "$T_TMP/$1.err")"
	python3 - "$T_TMP/$1.json" "$T_TMP/$1.drv" "$1" <<-'PY' || fail "$1: calls went uncounted"
	import json, sys
	s = json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]
	calls = int(open(sys.argv[2]).read().split()[1])
	got = s["functions"]["total"]
	src = [x["detail"] for x in s["sources"] if x["name"] == "driver functions"][0]
	print(f"  {sys.argv[3]}: {got} of {calls} calls counted ({src.split('(')[1].split(')')[0]})")
	sys.exit(got != calls)
	PY
}
storm multi_at_once 0
storm multi_after_1s 1
storm perf_after_1s 1 XPUTOP_NO_UPROBE_MULTI=1
grep -q "a link each" "$T_TMP/perf_after_1s.json" || fail "XPUTOP_NO_UPROBE_MULTI did not take the perf-uprobe path"

t the_tutorials_allocation_chains_level_zero_to_ioctl_to_page_mappings
scenario alloc 3 10
PID=$(python3 -c '
import json,sys
for c in json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]["functions"]["chains"]:
    print(c["pid"]); break' "$T_TMP/alloc.json")
[ -n "$PID" ] || fail "no chain at all"
$Q npu_chain "$PID" zeMemAllocHost IVPU_BO_CREATE ivpu_mmu_context_map_page 4131 < "$T_TMP/alloc.json" || fail "map_page chain"
$Q npu_chain "$PID" zeMemAllocHost IVPU_BO_CREATE ivpu_bo_create_ioctl 3 < "$T_TMP/alloc.json" || fail "handler chain"
$Q npu_chain "$PID" - IVPU_SUBMIT ivpu_hw_ip_db_set 1 < "$T_TMP/alloc.json" || fail "submit chain"
$Q npu_value jobs.done_total eq 1 < "$T_TMP/alloc.json" || fail "the job"
$Q npu_alerts < "$T_TMP/alloc.json" || fail "alerts"

t a_normal_inference_burst_raises_no_alert
$Q npu_alerts < "$T_TMP/normal.json" || fail "alerts in the normal burst"
$Q count 20 < "$T_TMP/normal.json" || fail "snapshots"

t ipc_jobs_and_memory_are_counted_from_the_stand_in
$Q npu_value jobs.done_total ge 300 < "$T_TMP/normal.json" || fail "jobs done"
$Q npu_value jobs.outstanding eq 0 < "$T_TMP/normal.json" || fail "jobs left outstanding"
$Q npu_value jobs.p50_ns ge 2900000 < "$T_TMP/normal.json" || fail "job latency p50 below the 3 ms jobs take"
$Q npu_value jobs.p50_ns le 20000000 < "$T_TMP/normal.json" || fail "job latency p50 far above 3 ms"
$Q npu_value ipc.rx_total ge 300 < "$T_TMP/normal.json" || fail "IPC rx"
$Q npu_value ipc.tx_total ge 5 < "$T_TMP/normal.json" || fail "IPC tx (heartbeat queries)"
$Q npu_value memory.bo_create_total ge 15 < "$T_TMP/normal.json" || fail "buffer objects"
$Q npu_value power.resumes ge 2 < "$T_TMP/normal.json" || fail "runtime resumes"

t a_firmware_stall_raises_stall_within_tdr_and_one_refresh
scenario stall 6 18
$Q npu_alerts npu.ipc_silent npu.stall < "$T_TMP/stall.json" || fail "stall alerts"
$Q npu_alert_severity npu.stall STALL < "$T_TMP/stall.json" || fail "severity"
$Q npu_alerts_due "$ONSET" $TDR_MS < "$T_TMP/stall.json" || fail "too late"
$Q npu_value jobs.outstanding eq 1 < "$T_TMP/stall.json" || fail "the stuck job"

t a_stall_is_caught_on_a_kernel_without_the_doorbell_from_the_submit_ioctl
OLD=$OUT/tests/progs/npu_driver_old
"$XPUTOP" -b -j -d 0.5 -n 18 --npu-probe-binary "$OLD" > "$T_TMP/old.json" 2> "$T_TMP/old.json.err" &
xp=$!
wait_json "$T_TMP/old.json"
"$OLD" stall 6 > "$T_TMP/old.onset" || fail "npu_driver_old stall failed"
wait $xp || fail "xputop exited with $?: $(cat "$T_TMP/old.json.err")"
ONSET=$(awk '/^onset/ { print $2 }' "$T_TMP/old.onset")
$Q npu_source jobs active "ivpu_submit_ioctl" < "$T_TMP/old.json" || fail "jobs source"
$Q npu_source "ivpu probes" active "ivpu_hw_ip_db_set" < "$T_TMP/old.json" || fail "the doorbell is not named missing"
$Q npu_alerts npu.ipc_silent npu.stall < "$T_TMP/old.json" || fail "stall alerts"
$Q npu_alerts_due "$ONSET" $TDR_MS < "$T_TMP/old.json" || fail "too late"
$Q npu_value jobs.outstanding eq 1 < "$T_TMP/old.json" || fail "the stuck job"
$Q npu_value jobs.done_total ge 300 < "$T_TMP/old.json" || fail "completions did not match their submissions"

t an_ipc_timeout_storm_raises_critical_and_a_rate_warning
scenario storm 8 18
$Q npu_alerts npu.ipc_timeout npu.ipc_rate < "$T_TMP/storm.json" || fail "storm alerts"
$Q npu_alert_severity npu.ipc_timeout CRITICAL < "$T_TMP/storm.json" || fail "severity"
$Q npu_alert_severity npu.ipc_rate WARN < "$T_TMP/storm.json" || fail "severity"
$Q npu_alerts_due "$ONSET" $TDR_MS < "$T_TMP/storm.json" || fail "too late"
$Q npu_value ipc.timeouts_total ge 1000 < "$T_TMP/storm.json" || fail "timeouts"

t a_recovery_raises_recovery_and_aborted_jobs
scenario recovery 8 18
$Q npu_alerts npu.recovery npu.job_aborted < "$T_TMP/recovery.json" || fail "recovery alerts"
$Q npu_alert_severity npu.recovery CRITICAL < "$T_TMP/recovery.json" || fail "severity"
$Q npu_alerts_due "$ONSET" $TDR_MS < "$T_TMP/recovery.json" || fail "too late"
$Q npu_value power.last_recovery eq "WDT NCE IRQ" < "$T_TMP/recovery.json" || fail "the reason"
$Q npu_value jobs.aborted_total eq 2 < "$T_TMP/recovery.json" || fail "aborted jobs"

t ioctls_with_ivpu_numbers_are_decoded_with_errno_and_latency
rm -f "$T_TMP/accel0"
mknod "$T_TMP/accel0" c 1 7 || fail "mknod"	# /dev/full: no ioctls, every call ENOTTY
"$XPUTOP" -b -j -d 0.5 -n 5 --window 60 --npu-dev "$T_TMP/accel0" > "$T_TMP/ioctl.json" 2> "$T_TMP/ioctl.json.err" &
xp=$!
wait_json "$T_TMP/ioctl.json"
PID=$("$IOC" "$T_TMP/accel0" calls | awk '{ print $2 }')
"$IOC" /dev/zero calls > "$T_TMP/other.pid"
OTHER=$(awk '{ print $2 }' "$T_TMP/other.pid")
wait $xp || fail "xputop failed: $(cat "$T_TMP/ioctl.json.err")"
$Q npu_call "$PID" IVPU_GET_PARAM 100 100 ENOTTY < "$T_TMP/ioctl.json" || fail "GET_PARAM"
$Q npu_call "$PID" IVPU_SUBMIT 50 50 ENOTTY < "$T_TMP/ioctl.json" || fail "SUBMIT"
$Q npu_call "$PID" IVPU_BO_WAIT 20 20 ENOTTY < "$T_TMP/ioctl.json" || fail "BO_WAIT"
$Q npu_call "$PID" DRM_VERSION 10 10 ENOTTY < "$T_TMP/ioctl.json" || fail "DRM_VERSION"
$Q npu_source ioctls active "$T_TMP/accel0 (1:7)" < "$T_TMP/ioctl.json" || fail "the node in the sources list"

t ioctls_on_other_devices_are_not_counted
$Q npu_no_calls "$OTHER" < "$T_TMP/ioctl.json" || fail "ioctls on /dev/zero were counted"

t level_zero_calls_through_the_real_loader_are_counted_per_process
"$XPUTOP" -b -j -d 0.5 -n 4 --window 60 > "$T_TMP/l0.json" 2> "$T_TMP/l0.json.err" &
xp=$!
wait_json "$T_TMP/l0.json"
"$L0" 3 > /dev/null & LP=$!
wait $LP || fail "npu_l0 failed"
xp_ok $xp
$Q npu_source "Level Zero" active "libze_loader.so.1" < "$T_TMP/l0.json" || fail "the loader probes"
for api in zeCommandQueueExecuteCommandLists zeCommandQueueSynchronize zeFenceHostSynchronize \
	zeEventHostSynchronize zeMemAllocHost zeMemAllocDevice zeMemAllocShared; do
	$Q npu_call "$LP" "$api" 3 3 UNINITIALIZED < "$T_TMP/l0.json" || fail "$api"
done

# npu_tree DIR: a stand-in for an NPU's sysfs and for /proc: accel0 with
# every intel-npu-smi file (hwmon power too), a process holding one client
# (two descriptors of it), one whose client reports engine time, and a file
# of another accel driver.
npu_tree() {
	D=$1/sys/class/accel/accel0/device
	mkdir -p "$D/hwmon/hwmon3"
	echo 1000 > "$D/npu_busy_time_us"
	echo 104857600 > "$D/npu_memory_utilization"
	echo 1400 > "$D/npu_current_frequency_mhz"
	echo 1950 > "$D/npu_max_frequency_mhz"
	echo 3500000 > "$D/hwmon/hwmon3/power1_input"
	for pid in 4242 4343 4444; do mkdir -p "$1/proc/$pid/fd" "$1/proc/$pid/fdinfo"; done
	echo app > "$1/proc/4242/comm"
	echo other > "$1/proc/4343/comm"
	echo engine > "$1/proc/4444/comm"
	for fd in 5 6; do
		ln -s /dev/accel/accel0 "$1/proc/4242/fd/$fd"
		printf 'pos:	0
drm-driver:	intel_vpu
drm-client-id:	7
drm-total-memory:	65536 KiB
drm-resident-memory:	32768 KiB
' \
			> "$1/proc/4242/fdinfo/$fd"
	done
	ln -s /dev/accel/accel1 "$1/proc/4343/fd/3"
	printf 'drm-driver:	habanalabs
drm-client-id:	9
drm-total-memory:	1 MiB
' > "$1/proc/4343/fdinfo/3"
	ln -s /dev/accel/accel0 "$1/proc/4444/fd/4"
	printf 'drm-driver:	intel_vpu
drm-client-id:	8
drm-total-memory:	4 MiB
drm-engine-npu:	0 ns
' > "$1/proc/4444/fdinfo/4"
}

t the_npu_device_and_its_clients_read_as_intel_npu_smi_shows_them
npu_tree "$T_TMP/root"
"$XPUTOP" -b -j -d 0.5 -n 8 --npu-sysfs "$T_TMP/root" > "$T_TMP/smi.json" 2> "$T_TMP/smi.err" &
xp=$!
D=$T_TMP/root/sys/class/accel/accel0/device
for i in 1 2 3 4 5 6 7 8 9 10; do	# busy half the time; the engine client a quarter
	echo $((1000 + i * 250000)) > "$D/npu_busy_time_us"
	printf 'drm-driver:	intel_vpu
drm-client-id:	8
drm-total-memory:	4 MiB
drm-engine-npu:	%s ns
' \
		$((i * 125000000)) > "$T_TMP/root/proc/4444/fdinfo/4"
	sleep 0.5
done
wait $xp || fail "xputop failed: $(cat "$T_TMP/smi.err")"
$Q npu_source sysfs active "npu_memory_utilization, npu_current_frequency_mhz, npu_max_frequency_mhz, hwmon power1_input" \
	< "$T_TMP/smi.json" || fail "the sysfs line"
$Q npu_value device.memory_bytes eq 104857600 < "$T_TMP/smi.json" || fail "memory"
$Q npu_value device.freq_mhz eq 1400 < "$T_TMP/smi.json" || fail "frequency"
$Q npu_value device.max_freq_mhz eq 1950 < "$T_TMP/smi.json" || fail "max frequency"
$Q npu_value device.power_w eq 3.5 < "$T_TMP/smi.json" || fail "power"
$Q npu_value busy_pct ge 30 < "$T_TMP/smi.json" || fail "busy"
$Q npu_value busy_pct le 70 < "$T_TMP/smi.json" || fail "busy"
python3 - "$T_TMP/smi.json" <<'PY' || fail "the clients"
import json, sys
c = {r["pid"]: r for r in json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]["clients"]}
assert sorted(c) == [4242, 4444], c          # one row for two descriptors; not another driver's
assert (c[4242]["comm"], c[4242]["client_id"], c[4242]["total_bytes"], c[4242]["resident_bytes"]) == \
    ("app", 7, 64 << 20, 32 << 20), c[4242]
assert c[4242]["engine_pct"] is None, c[4242]      # no drm-engine-*: N/A
assert c[4444]["resident_bytes"] is None, c[4444]
assert 10 <= c[4444]["engine_pct"] <= 40, c[4444]
PY

t what_sysfs_lacks_is_null_and_named
rm "$D/npu_memory_utilization" "$D/hwmon/hwmon3/power1_input"
"$XPUTOP" -b -j -d 0.5 -n 3 --npu-sysfs "$T_TMP/root" > "$T_TMP/smi2.json" 2> "$T_TMP/smi2.err" || fail "xputop failed"
$Q npu_value device.memory_bytes null - < "$T_TMP/smi2.json" || fail "memory"
$Q npu_value device.power_w null - < "$T_TMP/smi2.json" || fail "power"
$Q npu_value device.freq_mhz eq 1400 < "$T_TMP/smi2.json" || fail "frequency"
$Q npu_source sysfs active "N/A: npu_memory_utilization, hwmon power1_input" < "$T_TMP/smi2.json" || fail "the sysfs line"

t a_recovery_uevent_is_critical
"$XPUTOP" -b -j -d 0.5 -n 5 > "$T_TMP/ue.json" 2> "$T_TMP/ue.json.err" &
xp=$!
wait_json "$T_TMP/ue.json"
ONSET=$("$OUT/tests/progs/npu_uevent" | awk '/^onset/ { print $2 }')
"$OUT/tests/progs/npu_uevent" ACTION=change > /dev/null	# not a recovery
wait $xp || fail "xputop failed"
$Q npu_source uevents active "IVPU_PM_EVENT" < "$T_TMP/ue.json" || fail "the uevents line"
$Q npu_alerts npu.recovery < "$T_TMP/ue.json" || fail "alerts"
$Q npu_alert_severity npu.recovery CRITICAL < "$T_TMP/ue.json" || fail "severity"
$Q npu_alerts_within "$ONSET" $((REFRESH_MS + 100)) < "$T_TMP/ue.json" || fail "too late"
$Q npu_value power.recoveries eq 1 < "$T_TMP/ue.json" || fail "recoveries"

t a_replayed_npu_recording_gives_the_same_snapshots
"$XPUTOP" -b -j -d 0.5 -n 14 --npu-probe-binary "$DRV" -w "$T_TMP/npu.xpr" > "$T_TMP/live.json" 2>&1 &
xp=$!
wait_json "$T_TMP/live.json"
"$DRV" recovery 6 > /dev/null
wait $xp || fail "recording run failed"
"$XPUTOP" -r "$T_TMP/npu.xpr" -b -j > "$T_TMP/replay.json" 2> "$T_TMP/replay.err" || fail "replay failed: $(cat "$T_TMP/replay.err")"
$Q same_as "$T_TMP/live.json" < "$T_TMP/replay.json" || fail "replay numbers differ"
$Q npu_alerts npu.recovery npu.job_aborted < "$T_TMP/replay.json" || fail "replayed alerts"

t a_bpftrace_log_replays_into_the_npu_view
"$XPUTOP" -r tests/fixtures/npu-bpftrace.log -b -j -d 0.5 > "$T_TMP/bt.json" 2> "$T_TMP/bt.err" || fail "import failed: $(cat "$T_TMP/bt.err")"
[ -s "$T_TMP/bt.err" ] && fail "a good log gave messages: $(cat "$T_TMP/bt.err")"
$Q npu_alerts npu.ipc_silent npu.stall npu.recovery npu.job_aborted < "$T_TMP/bt.json" || fail "alerts"
$Q npu_value jobs.done_total eq 40 < "$T_TMP/bt.json" || fail "jobs"
$Q npu_source "bpftrace log" active "0 lines not understood" < "$T_TMP/bt.json" || fail "import report"

t damaged_lines_of_a_bpftrace_log_are_reported_not_fatal
{ sed -n 1,100p tests/fixtures/npu-bpftrace.log; printf 'garbage\n\001\002\n12x kprobe:\n'; sed -n '101,$p' tests/fixtures/npu-bpftrace.log; } > "$T_TMP/bad.log"
"$XPUTOP" -r "$T_TMP/bad.log" -b -j -d 0.5 > "$T_TMP/bad.json" 2> "$T_TMP/bad.err" || fail "a damaged log was refused"
expect_grep "3 lines not understood (the first is line 101)" "$T_TMP/bad.err"
$Q npu_value jobs.done_total eq 40 < "$T_TMP/bad.json" || fail "the good lines were not all used"

finish
