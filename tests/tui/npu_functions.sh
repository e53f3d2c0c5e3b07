# SPDX-License-Identifier: GPL-2.0-only
# The NPU view's lower pane through a real terminal (tmux): the driver
# functions table with its category shares above the alert log, from the
# tutorial's run and from a stall, both replayed from bpftrace logs, at
# 80x24, 120x40 and 160x48; the focus key, the alert card and the export
# key.  Needs tmux, not root.
. tests/lib.sh
. tests/tmux.sh

python3 tests/npu_logs.py tutorial > "$T_TMP/tutorial.log" || fail "npu_logs.py tutorial"
python3 tests/npu_logs.py stall > "$T_TMP/stall.log" 2> /dev/null || fail "npu_logs.py stall"

t the_driver_functions_table_shows_every_row_with_the_tutorials_shares
new_terminal 160 48 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/tutorial.log --view npu -d 0.5 -o $T_TMP; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording"
expect_grep "Driver functions  8198 calls since start:  memory management 57%" "$T_TMP/screen" "the title"
expect_grep "IPC 35%" "$T_TMP/screen" "the IPC share"
expect_grep "buffer management <1%" "$T_TMP/screen" "the buffer share"
grep -q "^ivpu_mmu_context_map_page  *memory management  *[0-9.]*  *4131  *4131" "$T_TMP/screen" ||
	fail "no map_page row: $(grep map_page "$T_TMP/screen")"
expect_grep "^ivpu_ipc_irq_handler  *IPC " "$T_TMP/screen" "the IRQ handler row"
# every function row shows down to the last, the alert log below them
fn=$(grep -n "Driver functions" "$T_TMP/screen" | cut -d: -f1)
end=$(grep -n "^ivpu_job_done_callback" "$T_TMP/screen" | cut -d: -f1)
log=$(grep -n "Alert log" "$T_TMP/screen" | cut -d: -f1)
[ -n "$end" ] && [ "$end" -gt $((fn + 20)) ] && [ "$log" -gt "$end" ] ||
	fail "the table at line $fn, its last row at line $end, the alert log at line $log"
expect_grep "Alert log  0 alerts" "$T_TMP/screen" "no alert in the tutorial's run"

t s_exports_the_functions_and_no_empty_alert_file
keys s
wait_for "no alerts to export)"
F=$(ls "$T_TMP"/xputop-npu-functions-*.folded 2> /dev/null)
[ -f "$F" ] || fail "no folded file in $T_TMP"
expect_grep "^\[no process\];\[no Level Zero call\];\[no ioctl\];ivpu_mmu_context_map_page 4131\$" "$F" "the folded file"
ls "$T_TMP"/xputop-npu-alerts-*.jsonl > /dev/null 2>&1 && fail "an alert file with no alerts"
keys q
wait_for "EXITED rc=0"

# shares_and_rows COLS ROWS MIN_ROWS: the tutorial's every share on the
# screen, and at least MIN_ROWS function rows.
shares_and_rows() {
	new_terminal "$1" "$2" "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/tutorial.log --view npu -d 0.5; echo EXITED rc=\$?; sleep 600"
	wait_for "end of the recording"
	for share in "memory management 57%" "IPC 35%" "buffer management <1%" "jobs <1%" "power 1%" "other 7%"; do
		expect_grep "$share" "$T_TMP/screen" "the share '$share' at $1x$2"
	done
	rows=$(grep -c "^ivpu_" "$T_TMP/screen")
	[ "$rows" -ge "$3" ] || fail "$rows function rows at $1x$2 (at least $3 wanted)"
	expect_grep "^ *Sources  bpftrace log active" "$T_TMP/screen" "the sources on one line at $1x$2"
}

t every_share_and_eight_function_rows_show_at_80x24
shares_and_rows 80 24 8
expect_grep "^ *0 IVPU_SUBMIT " "$T_TMP/screen" "the calls table's last row"

t a_log_without_return_times_says_so_and_shows_no_latency_figures
expect_grep "\[no latency in this log\]" "$T_TMP/screen" "the title's latency note"
expect_grep "^DRIVER FUNCTION .* P99$" "$T_TMP/screen" "the P99 column at 80x24"
grep -q "^ivpu_mmu_context_map_page  *memory management  *[0-9.]*  *4131  *4131  *N/A$" "$T_TMP/screen" ||
	fail "map_page's P99 is not N/A: $(grep map_page "$T_TMP/screen")"

t t_moves_the_keys_to_the_functions_table_which_scrolls
grep -q "^ivpu_job_done_callback" "$T_TMP/screen" && fail "the last function row showed before scrolling"
keys t
keys End
wait_for "ivpu_job_done_callback"
expect_grep "^ *0 IVPU_GET_PARAM " "$T_TMP/screen" "the calls table kept its place"
keys t
keys q
wait_for "EXITED rc=0"

t t_again_puts_the_chains_in_the_functions_place_at_80x24
python3 tests/npu_logs.py tutorial procs > "$T_TMP/procs.log" || fail "npu_logs.py tutorial procs"
new_terminal 80 24 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/procs.log --view npu -d 0.5; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording"
grep -q "Chains since start" "$T_TMP/screen" && fail "chains at 80x24 before t"
keys t t
wait_for "Chains since start"
expect_grep "^ *4242 matmul  *ivpu_mmu_context_map_page  *[0-9.]*  *4131$" "$T_TMP/screen" "the chain of map_page"
keys t
wait_gone "Chains since start"
keys q
wait_for "EXITED rc=0"

t every_share_and_every_function_row_show_at_120x40
shares_and_rows 120 40 22
keys q
wait_for "EXITED rc=0"

t a_stall_shows_whole_at_80x24_and_enter_opens_its_card
new_terminal 80 24 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/stall.log --view npu -d 0.5; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording" 200
expect_grep "STALL    npu  job on queue 0 outstanding for 8.[0-9] s, past" "$T_TMP/screen" "the stall's first line"
expect_grep "^ *the 2000 ms TDR: no completion, no heartbeat or IPC$" "$T_TMP/screen" "the stall's second line"
expect_grep "Alert log  2 alerts, 2 active  (Enter: the alert card)" "$T_TMP/screen" "the card's key in the log's title"
expect_grep "^ *progress$" "$T_TMP/screen" "the stall's last line"
keys Enter
wait_for "Alert card: STALL npu (npu.stall)"
expect_grep "^ Submit   [0-9:.]*, outstanding 8.[0-9]*s and counting" "$T_TMP/screen" "the job's age"
expect_grep "^ Job      on queue 0; submissions in this trace carry no job id: completions" "$T_TMP/screen" "the order note"
expect_grep "^ Waits    BO_WAIT x[0-9]* every 10.0ms since the submit" "$T_TMP/screen" "the wait pattern"
expect_grep "^ TDR      2000 ms (default)" "$T_TMP/screen" "the TDR"
expect_grep "^ Firmware last IPC [0-9:.]* (8.[0-9]*s before now)" "$T_TMP/screen" "the last IPC"
expect_grep "^ After    nothing yet: still stalled" "$T_TMP/screen" "what came after"
keys Enter
wait_gone "Alert card"
keys q
wait_for "EXITED rc=0"

t a_stall_shows_in_the_alert_log_under_the_functions
new_terminal 160 48 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/stall.log --view npu -d 0.5 -o $T_TMP; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording" 200
expect_grep "STALL    npu  job on queue 0 outstanding" "$T_TMP/screen" "the stall in the log"
expect_grep "^ivpu_bo_wait_ioctl  *jobs " "$T_TMP/screen" "the polling"
keys q
wait_for "EXITED rc=0"

tm_end "$SOCK"
t uniq_counts_show_as_counts_only_with_no_rates
python3 tests/npu_logs.py tutorial uniq > "$T_TMP/uniq.log" || fail "npu_logs.py tutorial uniq"
new_terminal 160 48 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/uniq.log --view npu -d 0.5; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording"
expect_grep "counts only: the log has no times, so no rates, no jobs, no alerts" "$T_TMP/screen" "the IPC line"
expect_grep "Driver functions  8198 calls since start:  memory management 57%" "$T_TMP/screen" "the title"
grep -q "^ivpu_mmu_context_map_page  *memory management  *N/A  *4131  *4131" "$T_TMP/screen" ||
	fail "map_page is not a count without a rate: $(grep map_page "$T_TMP/screen")"
keys q
wait_for "EXITED rc=0"

finish
