# SPDX-License-Identifier: GPL-2.0-only
# The NPU view through a real terminal (tmux): its sources, rates, the IPC
# sparkline, the alert bar in every view and the alert log, while the
# stand-in driver plays a recovery.  Needs root and tmux.
. tests/lib.sh
need_root

. tests/tmux.sh
DRV=$OUT/tests/progs/npu_driver

new_terminal 150 48 \
	"env LANG=C.UTF-8 $XPUTOP -d 0.3 --view npu --npu-probe-binary $DRV; echo EXITED rc=\$?; sleep 600"

t the_npu_view_lists_its_sources_and_their_state
wait_for "Sources on this machine"
expect_grep "ioctls  *off  *no accel device here" "$T_TMP/screen" "the ioctl source line"
expect_grep "vpu tracepoints  *off" "$T_TMP/screen" "the tracepoint line"
expect_grep "ivpu probes  *active  *uprobes on $DRV" "$T_TMP/screen" "the probes line"
expect_grep "Level Zero  *active" "$T_TMP/screen" "the Level Zero line"
expect_grep "busy  *off" "$T_TMP/screen" "the busy line"

t ipc_and_job_rates_and_the_sparkline_show_while_the_driver_works
"$DRV" recovery 12 > "$T_TMP/onset" &
DP=$!
wait_for "jobs (submit to done)" 80
screen
grep -q "IPC  *tx [0-9.]*/s  rx [1-9][0-9]*/s" "$T_TMP/screen" || fail "no IPC rates: $(grep IPC "$T_TMP/screen")"
grep -q "[▁▂▃▄▅▆▇█]" "$T_TMP/screen" || fail "no sparkline"
expect_grep "Jobs  *submitted [1-9][0-9]*/s" "$T_TMP/screen" "the job rates"
expect_grep "latency p50 [0-9.]*ms" "$T_TMP/screen" "the job latency"

t a_recovery_lights_the_alert_bar_and_fills_the_alert_log
wait_for "NPU recovery (reason: WDT NCE IRQ)" 120
wait_for "Alert log  2 alerts, 2 active"
expect_grep "^ CRITICAL npu " "$T_TMP/screen" "the alert bar"
expect_grep "CRITICAL npu  2 outstanding jobs aborted" "$T_TMP/screen" "the log line"

t the_alert_bar_shows_in_the_other_views_too
keys c
wait_for "PID"
expect_grep "^ CRITICAL npu " "$T_TMP/screen" "the alert bar in the CPU view"
keys g
wait_for "GPU"
expect_grep "^ CRITICAL npu " "$T_TMP/screen" "the alert bar in the GPU view"
keys n
wait_for "Sources on this machine"

t q_quits_the_npu_view_cleanly
keys q
wait_for "EXITED rc=0"

wait $DP 2> /dev/null
tm kill-server 2> /dev/null
finish
