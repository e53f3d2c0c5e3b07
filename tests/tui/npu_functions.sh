# SPDX-License-Identifier: GPL-2.0-only
# The NPU view's lower pane through a real terminal (tmux): the driver
# functions table with its category shares above the alert log, from the
# tutorial's run and from a stall, both replayed from bpftrace logs, and the
# export key.  Needs tmux, not root.
. tests/lib.sh
. tests/tmux.sh

python3 tests/npu_logs.py tutorial > "$T_TMP/tutorial.log" || fail "npu_logs.py tutorial"
python3 tests/npu_logs.py stall > "$T_TMP/stall.log" 2> /dev/null || fail "npu_logs.py stall"

t the_driver_functions_table_fills_the_lower_half_with_the_tutorials_shares
new_terminal 160 48 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/tutorial.log --view npu -d 0.5 -o $T_TMP; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording"
expect_grep "Driver functions  8198 calls since start:  memory management 57%" "$T_TMP/screen" "the title"
expect_grep "IPC 35%" "$T_TMP/screen" "the IPC share"
expect_grep "buffer management <1%" "$T_TMP/screen" "the buffer share"
grep -q "^ivpu_mmu_context_map_page  *memory management  *[0-9.]*  *4131  *4131" "$T_TMP/screen" ||
	fail "no map_page row: $(grep map_page "$T_TMP/screen")"
expect_grep "^ivpu_ipc_irq_handler  *IPC " "$T_TMP/screen" "the IRQ handler row"
# the table sits in the lower half, the alert log below it
fn=$(grep -n "Driver functions" "$T_TMP/screen" | cut -d: -f1)
log=$(grep -n "Alert log" "$T_TMP/screen" | cut -d: -f1)
[ "$fn" -gt 20 ] && [ "$log" -gt $((fn + 10)) ] || fail "the table at line $fn, the alert log at line $log"
expect_grep "Alert log  0 alerts" "$T_TMP/screen" "no alert in the tutorial's run"

t s_exports_the_functions_and_the_alerts
keys s
i=0
while ! ls "$T_TMP"/xputop-npu-alerts-*.jsonl > /dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
F=$(ls "$T_TMP"/xputop-npu-functions-*.folded 2> /dev/null)
[ -f "$F" ] || fail "no folded file in $T_TMP"
expect_grep "^\[no process\];\[no Level Zero call\];\[no ioctl\];ivpu_mmu_context_map_page 4131\$" "$F" "the folded file"
keys q
wait_for "EXITED rc=0"

t a_stall_shows_in_the_alert_log_under_the_functions
new_terminal 160 48 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/stall.log --view npu -d 0.5 -o $T_TMP; echo EXITED rc=\$?; sleep 600"
wait_for "end of the recording" 200
expect_grep "STALL    npu  job on queue 0 outstanding" "$T_TMP/screen" "the stall in the log"
expect_grep "^ivpu_bo_wait_ioctl  *jobs " "$T_TMP/screen" "the polling"
keys q
wait_for "EXITED rc=0"

tm kill-server 2> /dev/null
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
