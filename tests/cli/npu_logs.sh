# SPDX-License-Identifier: GPL-2.0-only
# test-san: only (checks of parsing and output, deterministic: the sanitizers
# add most here and the plain build nothing; tests/run)
# The NPU view from bpftrace logs of the tutorial's script, generated for each
# scenario (tests/npu_logs.py) and replayed with -r: the tutorial's own
# figures, a stall seen only through function names, a recovery, an IPC
# storm and normal bursts.  Needs no root.
. tests/lib.sh
Q="python3 tests/jsonq.py"

# replay NAME [FORMAT]: writes the scenario's log (in FORMAT, tests/npu_logs.py),
# replays it, leaves $T_TMP/NAME[-FORMAT].json and .log.
replay() {
	local f="$1${2:+-$2}"
	python3 tests/npu_logs.py "$1" ${2:+"$2"} > "$T_TMP/$f.log" 2> "$T_TMP/$f.onset" || fail "npu_logs.py $1 $2"
	"$XPUTOP" -r "$T_TMP/$f.log" -b -j -d 0.5 > "$T_TMP/$f.json" 2> "$T_TMP/$f.err" ||
		fail "replay of $f failed: $(cat "$T_TMP/$f.err")"
	[ -s "$T_TMP/$f.err" ] && fail "a good log gave messages: $(cat "$T_TMP/$f.err")"
}

# tutorial_counts JSON: the tutorial's table, whatever form its calls came in.
tutorial_counts() {
	$Q npu_value functions.total eq 8198 < "$1" || fail "calls"
	$Q npu_category "memory management" 4648 57 < "$1" || fail "memory management"
	$Q npu_category IPC 2842 35 < "$1" || fail "IPC"
	$Q npu_category "buffer management" 74 "<1" < "$1" || fail "buffer management"
}

t the_tutorials_run_shows_its_category_shares_since_start
replay tutorial
tutorial_counts "$T_TMP/tutorial.json"
$Q npu_value counts_only eq False < "$T_TMP/tutorial.json" || fail "a timed log is not counts only"

t the_mmu_context_set_up_at_open_is_not_memory_and_runtime_pm_is_power
# the log has ivpu_mmu_context_init once (memory would be 4,649) and ivpu_rpm_get/put 3 times each
$Q npu_category power 89 1 < "$T_TMP/tutorial.json" || fail "power"

t batch_text_writes_the_shares_as_the_screen_does
"$XPUTOP" -r "$T_TMP/tutorial.log" -b -d 0.5 --view npu > "$T_TMP/tutorial.txt" 2>&1 || fail "replay"
expect_grep "buffer management 74 (<1%)" "$T_TMP/tutorial.txt" "the category's share"
expect_grep "^  shares: .*buffer management <1%" "$T_TMP/tutorial.txt" "the window's share"

t at_the_end_of_a_replay_functions_gone_from_the_window_are_in_order_of_their_totals
# with a 1 s window, map_page's 4,131 calls have left it by the end: sorted by
# the window's count alone it came last; the count since the start breaks the tie
"$XPUTOP" -r "$T_TMP/tutorial.log" -b -d 0.5 --window 1 --view npu > "$T_TMP/window.txt" 2>&1 || fail "replay"
python3 - "$T_TMP/window.txt" <<'PY' || fail "the last table's order"
import sys
text = open(sys.argv[1]).read()
table = text[text.rindex("DRIVER FUNCTION"):].splitlines()
rows = [l.split() for l in table[1:] if l.startswith(" ivpu_")]
# COUNT and TOTAL counted from the right (a category has spaces)
hdr = table[0].split()
count, total = hdr.index("COUNT") - len(hdr), hdr.index("TOTAL") - len(hdr)
gone = [(r[0], int(r[total])) for r in rows if int(r[count]) == 0]
if not gone or gone[0] != ("ivpu_mmu_context_map_page", 4131):
    sys.exit(f"first of the functions gone from the window: {gone[:3]}")
if [t for _, t in gone] != sorted((t for _, t in gone), reverse=True):
    sys.exit(f"not by total: {gone}")
PY

t sort_accepts_every_column_of_the_driver_functions_table
for col in total share_pct function category; do
	"$XPUTOP" -r "$T_TMP/tutorial.log" -b -n 1 -d 5 --view npu -s "$col" > /dev/null 2> "$T_TMP/sort.err" ||
		fail "-s $col: $(cat "$T_TMP/sort.err")"
done
"$XPUTOP" -r "$T_TMP/tutorial.log" -b -d 0.5 --view npu -s total > "$T_TMP/total.txt" 2>&1 || fail "-s total"
awk '/DRIVER FUNCTION/ { n = 0; next } /^ ivpu_/ && n < 2 { print $1; n++ }' "$T_TMP/total.txt" | tail -2 \
	| tr '\n' ' ' > "$T_TMP/top2"
[ "$(cat "$T_TMP/top2")" = "ivpu_mmu_context_map_page ivpu_hw_ip_ipc_rx_count_get " ] ||
	fail "-s total: $(cat "$T_TMP/top2")"

t the_tutorials_whole_script_with_its_begin_and_end_text_replays_without_complaint
replay tutorial script
tutorial_counts "$T_TMP/tutorial-script.json"

t a_log_with_pid_and_command_columns_gives_per_process_rows
replay tutorial procs
tutorial_counts "$T_TMP/tutorial-procs.json"
python3 - "$T_TMP/tutorial-procs.json" <<'PY' || fail "per-process rows"
import json, sys
f = json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]["functions"]
mine = {c["function"]: c["total"] for c in f["chains"] if c["pid"] == 4242 and c["comm"] == "matmul"}
if mine.get("ivpu_mmu_context_map_page") != 4131 or mine.get("ivpu_submit_ioctl") != 1:
    sys.exit(f"pid 4242's rows: {mine}")
PY
$Q npu_value jobs.submitted_total eq 1 < "$T_TMP/tutorial-procs.json" || fail "the job"

for fmt in oneliner uniq map; do
	t "the_tutorials_calls_as_${fmt}_are_counts_only_with_the_tutorials_table"
	replay tutorial "$fmt"
	tutorial_counts "$T_TMP/tutorial-$fmt.json"
	$Q npu_value counts_only eq True < "$T_TMP/tutorial-$fmt.json" || fail "not marked counts only"
	$Q npu_value jobs.submitted_total eq 0 < "$T_TMP/tutorial-$fmt.json" || fail "jobs from counts"
	$Q npu_alerts < "$T_TMP/tutorial-$fmt.json" || fail "alerts from counts"
	"$XPUTOP" -r "$T_TMP/tutorial-$fmt.log" -b -n 1 --view npu > "$T_TMP/$fmt.txt" 2>&1 || fail "text"
	expect_grep "counts only: the log has no times" "$T_TMP/$fmt.txt" "the text saying so"
	expect_grep "^ ivpu_mmu_context_map_page .* N/A  *4131 " "$T_TMP/$fmt.txt" "a count, and no rate"
done

t a_file_that_is_no_log_says_what_it_looked_like
printf 'hello world\nsecond\n' > "$T_TMP/nolog.txt"
"$XPUTOP" -r "$T_TMP/nolog.txt" -b -n 1 > /dev/null 2> "$T_TMP/nolog.err" && fail "accepted"
expect_grep 'none of its 2 lines is a probe (the first: "hello world")' "$T_TMP/nolog.err" "the reason"

t the_tutorials_top_functions_have_the_tutorials_counts
$Q npu_top_functions ivpu_mmu_context_map_page=4131 ivpu_hw_ip_ipc_rx_count_get=951 \
	ivpu_ipc_irq_handler=946 ivpu_ipc_receive=945 ivpu_pgtable_free_page=517 < "$T_TMP/tutorial.json" ||
	fail "top functions"
for f in ivpu_gem_create_object=25 ivpu_bo_pin=25 ivpu_bo_create_ioctl=24; do
	python3 - "$T_TMP/tutorial.json" "$f" <<'PY' || fail "$f"
import json, sys
rows = json.loads(open(sys.argv[1]).read().splitlines()[-1])["npu"]["functions"]["rows"]
name, n = sys.argv[2].split("=")
top = sorted(rows, key=lambda r: -r["total"])[:20]
sys.exit(0 if any(r["function"] == name and r["total"] == int(n) for r in top) else f"{name} not {n} in the top 20")
PY
done

t the_tutorials_page_mappings_read_as_a_rate
$Q npu_value memory.map_page_total eq 4131 < "$T_TMP/tutorial.json" || fail "map_page"
$Q npu_value memory.free_page_total eq 517 < "$T_TMP/tutorial.json" || fail "free_page"

t the_tutorials_job_is_submitted_and_done_from_function_names
$Q npu_value jobs.submitted_total eq 1 < "$T_TMP/tutorial.json" || fail "submitted"
$Q npu_value jobs.done_total eq 1 < "$T_TMP/tutorial.json" || fail "done"
$Q npu_value jobs.outstanding eq 0 < "$T_TMP/tutorial.json" || fail "outstanding"

t the_tutorials_normal_run_raises_no_alert
$Q npu_alerts < "$T_TMP/tutorial.json" || fail "alerts"

t a_job_the_firmware_never_finishes_stalls_in_a_kprobe_only_log
replay stall
ONSET_MS=$(cat "$T_TMP/stall.onset")
$Q npu_alerts npu.ipc_silent npu.stall < "$T_TMP/stall.json" || fail "alerts"
$Q npu_alert_severity npu.stall STALL < "$T_TMP/stall.json" || fail "severity"
$Q npu_alerts_within "${ONSET_MS}000000" 2500 < "$T_TMP/stall.json" || fail "not within the TDR and a refresh"
$Q npu_value jobs.outstanding eq 1 < "$T_TMP/stall.json" || fail "the stuck job"
$Q npu_value jobs.oldest_ns ge 7000000000 < "$T_TMP/stall.json" || fail "its age"

t a_recovery_in_a_log_is_critical_with_the_aborted_jobs
replay recovery
$Q npu_alerts npu.recovery npu.job_aborted < "$T_TMP/recovery.json" || fail "alerts"
$Q npu_alert_severity npu.recovery CRITICAL < "$T_TMP/recovery.json" || fail "severity"
$Q npu_value jobs.aborted_total eq 2 < "$T_TMP/recovery.json" || fail "aborted"

t an_ipc_storm_in_a_log_warns_of_the_rate
replay storm
$Q npu_alerts npu.ipc_rate < "$T_TMP/storm.json" || fail "alerts"
$Q npu_alert_severity npu.ipc_rate WARN < "$T_TMP/storm.json" || fail "severity"

t an_ipc_storm_inside_one_long_job_warns_against_the_rate_learned_in_it
replay longstorm
$Q npu_alerts npu.ipc_rate < "$T_TMP/longstorm.json" || fail "alerts"
$Q npu_alerts_within "$((5000000 + 10000))000000" 1000 < "$T_TMP/longstorm.json" || fail "not within a refresh of the burst"
grep -q '"message":"firmware IPC at [0-9]* msgs/s, [0-9]*x the learned 7[0-2]/s"' "$T_TMP/longstorm.json" ||
	fail "the rate learned in the job: $(grep -o '"message":"firmware IPC[^"]*"' "$T_TMP/longstorm.json" | head -1)"

t a_stall_in_a_name_only_log_carries_its_evidence_and_says_jobs_were_matched_by_order
python3 - "$T_TMP/stall.json" <<'PY' || fail "the stall's evidence"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]["npu"]
st = last["stall"]
want = {"active": True, "job_id_known": False, "job_id": None, "pid": None, "bo_waits": 800,
        "tdr_ms": 2000, "tdr_from": "default", "after": ""}
bad = {k: st.get(k) for k, v in want.items() if st.get(k) != v}
if bad or not 9e6 < st["bo_wait_every_ns"] < 11e6 or st["age_ns"] < 7e9 or not last["jobs"]["matched_by_order"]:
    sys.exit(f"stall {st}, matched_by_order {last['jobs']['matched_by_order']}")
PY
$Q npu_value stall eq None < "$T_TMP/tutorial.json" || fail "a stall in the tutorial's run"
"$XPUTOP" -r "$T_TMP/stall.log" -b -d 0.5 --view npu > "$T_TMP/stall.txt" 2>&1 || fail "replay as text"
expect_grep "^  stall (active): job on queue 0, submitted [0-9: -]*, outstanding 8.[0-9] s; last IPC [0-9: -]*; BO_WAIT x800 every 10 ms; TDR 2000 ms (default); matched by order (no job ids)$" \
	"$T_TMP/stall.txt" "the batch text"


t normal_bursts_in_a_log_raise_no_alert
replay normal
$Q npu_alerts < "$T_TMP/normal.json" || fail "alerts"
$Q npu_value jobs.done_total eq 800 < "$T_TMP/normal.json" || fail "jobs"

t an_export_without_alerts_writes_no_alert_log_and_says_so
mkdir -p "$T_TMP/exp-tut"
"$XPUTOP" -r "$T_TMP/tutorial.log" -b -d 0.5 --view npu --export -o "$T_TMP/exp-tut" > /dev/null 2> "$T_TMP/exp-tut.err" ||
	fail "export failed: $(cat "$T_TMP/exp-tut.err")"
expect_grep "exported [0-9]* function stacks, 1 job (no alerts to export): " "$T_TMP/exp-tut.err" "the message"
[ "$(ls "$T_TMP/exp-tut")" = "$(cd "$T_TMP/exp-tut" && ls xputop-npu-functions-*.folded xputop-npu-jobs-*.trace.json)" ] ||
	fail "files: $(ls -l "$T_TMP/exp-tut")"

t the_export_holds_the_function_counts_as_folded_stacks_and_the_alerts_as_json_lines
mkdir -p "$T_TMP/exp"
"$XPUTOP" -r "$T_TMP/stall.log" -b -n 1000 -d 0.5 --view npu --export -o "$T_TMP/exp" > /dev/null 2> "$T_TMP/exp.err" ||
	fail "export failed: $(cat "$T_TMP/exp.err")"
F=$(ls "$T_TMP"/exp/xputop-npu-functions-*.folded 2> /dev/null)
A=$(ls "$T_TMP"/exp/xputop-npu-alerts-*.jsonl 2> /dev/null)
[ -f "$F" ] && [ -f "$A" ] || fail "files: $(ls "$T_TMP/exp")"
expect_grep "^\[no process\];\[no Level Zero call\];\[no ioctl\];ivpu_bo_wait_ioctl 810\$" "$F" "the folded stacks"
awk '{ n += $NF } END { exit n == 851 ? 0 : 1 }' "$F" || fail "the stacks do not add up to the log's 851 calls"
FLAMEGRAPH=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
perl "$FLAMEGRAPH" --minwidth 0 "$F" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed"
[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned: $(cat "$T_TMP/fg.err")"
python3 tests/flamegraph.py "$F" "$T_TMP/fg.svg" || fail "flamegraph.pl drew something else"
python3 - "$A" <<'PY' || fail "the alert log"
import json, sys
rules = [json.loads(line)["rule"] for line in open(sys.argv[1])]
sys.exit(0 if rules == ["npu.ipc_silent", "npu.stall"] else f"alerts {rules}")
PY

t a_name_only_log_keeps_completions_ipc_with_no_process_and_says_matching_is_unavailable
# A bpftrace log of function names carries no job ids: the IRQ/IPC work of
# each completion cannot be tied to a job, so none is charged to a process.
expect_grep "^\[no process\];\[no Level Zero call\];\[no ioctl\];ivpu_job_done_callback 10\$" "$F" "the folded stacks"
grep -q "IRQ/IPC" "$F" && fail "completions charged without job ids: $(grep IRQ/IPC "$F")"
"$XPUTOP" -r "$T_TMP/stall.log" -b -j -d 0.5 > "$T_TMP/stall-irq.json" 2> /dev/null || fail "replay failed"
$Q npu_value jobs.irq_linked eq 0 < "$T_TMP/stall-irq.json" || fail "completions charged"
$Q npu_value jobs.irq_unlinked eq 10 < "$T_TMP/stall-irq.json" || fail "completions not counted"
grep -q '"irq_matching":"unavailable: the completions carry no job id' "$T_TMP/stall-irq.json" ||
	fail "the matching is not said to be unavailable"
"$XPUTOP" -r "$T_TMP/stall.log" -b -d 0.5 --view npu > "$T_TMP/stall-irq.txt" 2> /dev/null || fail "replay failed"
expect_grep "job completions' IRQ/IPC work: 0 charged to their jobs' processes, 10 with no process; matching unavailable" \
	"$T_TMP/stall-irq.txt" "batch text"

t the_jobs_trace_of_a_log_holds_its_jobs_and_the_stalled_one_outstanding
T=$(ls "$T_TMP"/exp/xputop-npu-jobs-*.trace.json 2> /dev/null)
have "$T" "the jobs trace" && python3 - "$T" <<'PY' || fail "the jobs trace"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
jobs = [e for e in ev if e.get("cat") == "npu_job"]
states = [e["args"]["status"] for e in jobs]
assert states == ["done"] * 10 + ["outstanding"], states
assert all(e["args"]["job_id"] is None and e["name"] == "job (no id)" for e in jobs), jobs[0]
assert [e["name"] for e in ev if e.get("cat") == "npu_alert"] == ["npu.ipc_silent", "npu.stall"]
PY

finish
