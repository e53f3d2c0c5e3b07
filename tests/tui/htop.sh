# SPDX-License-Identifier: GPL-2.0-only
# The keys htop and top users press by habit (issue 28): k and F9 kill with a
# signal menu and a question, F7/F8 and ] [ renice after a question, 1 shows
# a meter per CPU (it is not a view), the function keys as htop maps them.
# Needs root (live CPU sampling) and tmux.
. tests/lib.sh
need_root

. tests/tmux.sh

# start_on PID: xputop watching PID alone, its row selected (the only one).
start_on() {
	new_terminal 120 30 "env LANG=C.UTF-8 $XPUTOP -d 0.3 -p $1; echo EXITED rc=\$?; sleep 600"
	wait_for "busy"
}

busy() {
	"$OUT/tests/progs/busy" 120 > /dev/null 2>&1 &
	B=$!
}
stop_busy() { kill -9 "$B" 2> /dev/null; wait "$B" 2> /dev/null; }
T_CLEANUP="$T_CLEANUP stop_busy"

nice_of() { awk '{ sub(/.*\) /, ""); print $17 }' /proc/"$1"/stat; }

t k_opens_a_signal_menu_at_sigterm_and_sends_it_after_y
busy
start_on $B
keys k
wait_for "Send signal:"
expect_grep "Send which signal to $B (busy)?" "$T_TMP/screen"
grep -q " 15 SIGTERM" "$T_TMP/screen" || fail "no SIGTERM in the menu"
keys Enter
wait_for "Send SIGTERM (15) to $B (busy)? y: send"
keys y
wait_for "SIGTERM sent to $B (busy)"
wait "$B"; rc=$?
[ $rc -eq 143 ] || fail "busy ended with $rc, not killed by SIGTERM (143)"

t f9_picks_another_signal_and_n_sends_nothing
busy
start_on $B
keys F9
wait_for "Send signal:"
keys Up
keys Enter
wait_for "Send SIGALRM (14) to $B"
keys n
wait_for "nothing done"
kill -0 "$B" 2> /dev/null || fail "busy was signalled after n"
keys F9
wait_for "Send signal:"
keys Escape
wait_gone "Send signal:"
kill -0 "$B" 2> /dev/null || fail "busy was signalled after Esc"
stop_busy

t f8_and_left_bracket_renice_a_step_after_y_f7_back
busy
start_on $B
keys F8
wait_for "Renice $B (busy) from 0 to 1? y: renice"
keys y
wait_for "nice 0 -> 1: $B (busy)"
[ "$(nice_of $B)" = 1 ] || fail "nice $(nice_of $B) after F8, not 1"
keys '['
wait_for "from 1 to 2?"
keys y
wait_for "nice 1 -> 2"
keys F7
wait_for "from 2 to 1?"
keys y
wait_for "nice 2 -> 1"
keys ']'
wait_for "from 1 to 0?"
keys x
wait_for "nothing done"
[ "$(nice_of $B)" = 1 ] || fail "nice $(nice_of $B) after ] and no, not 1"
stop_busy

t one_shows_a_meter_per_cpu_and_stays_in_the_view
busy
start_on $B
keys 1
n=$(grep -c '^cpu[0-9]' /proc/stat)
wait_for "  0["
[ "$n" -lt 2 ] || grep -q "  1\[" "$T_TMP/screen" || fail "no meter for CPU 1"
expect_grep "%]" "$T_TMP/screen"
expect_grep "PID" "$T_TMP/screen"
keys 1
wait_gone "  0["
stop_busy

t function_keys_do_what_htop_does
busy
start_on $B
keys F1
wait_for "xputop help"
keys x
wait_gone "xputop help"
keys F4
wait_for "Filter: "
keys Escape
wait_gone "Filter: "
keys F6
wait_for "sorted by"
keys F2
wait_for "no setup screen"
keys F10
wait_for "EXITED rc=0"
stop_busy

t t_shows_a_child_process_under_its_parent
# busy's second copy is the first's child: the shell forks it, then
# becomes the first.
sh -c "\"$OUT/tests/progs/busy\" 120 > /dev/null 2>&1 & exec \"$OUT/tests/progs/busy\" 120 > /dev/null 2>&1" &
B=$!
i=0
while [ $i -lt 50 ] && ! C=$(pgrep -P $B); do sleep 0.1; i=$((i + 1)); done
[ -n "$C" ] || fail "no child of busy"
new_terminal 120 30 "env LANG=C.UTF-8 $XPUTOP -d 0.3 --no-config; echo EXITED rc=\$?; sleep 600"
wait_for "PID"
keys /
keys b u s y Enter
wait_for " $C "
keys t
wait_for "process tree"
wait_for '`- busy'
grep -E "^ +$B .* busy *$" "$T_TMP/screen" > /dev/null || fail "the parent is not a root: $(grep busy "$T_TMP/screen")"
grep -E "^ +$C .*\`- busy *$" "$T_TMP/screen" > /dev/null || fail "the child is not under it: $(grep busy "$T_TMP/screen")"
[ "$(grep -n " $B " "$T_TMP/screen" | cut -d: -f1)" -lt "$(grep -n " $C " "$T_TMP/screen" | cut -d: -f1)" ] ||
	fail "the child is drawn above its parent"
keys F5
wait_gone "process tree"
kill -9 "$C" 2> /dev/null
stop_busy

t u_shows_the_processes_of_the_user_picked
busy
NB=$(public "$OUT/tests/progs/busy")
# setpriv itself (as_nobody is a function: its & would give a subshell's pid)
setpriv --reuid=65534 --regid=65534 --clear-groups "$NB" 120 > /dev/null 2>&1 &
N=$!
new_terminal 120 30 "env LANG=C.UTF-8 $XPUTOP -d 0.3 --no-config -p $B,$N; echo EXITED rc=\$?; sleep 600"
wait_for " $N "
wait_for " $B "
keys u
wait_for "Show processes of:"
expect_grep "All users" "$T_TMP/screen"
expect_grep "nobody" "$T_TMP/screen"
keys n Enter
wait_for "processes of nobody"
wait_gone " $B "
expect_grep " $N " "$T_TMP/screen"
keys u
wait_for "Show processes of:"
keys Enter
wait_gone "processes of nobody"
wait_for " $B "
kill -9 "$N" 2> /dev/null
stop_busy

t a_replay_steps_and_seeks_by_refreshes_and_shows_where_it_is
# xterm's entry names the Shift-arrows tmux sends (screen's does not).
record_busy "$T_TMP/r.xpr"
new_terminal 120 24 "env LANG=C.UTF-8 TERM=xterm-256color $XPUTOP -r $T_TMP/r.xpr -d 2 --no-config; echo EXITED rc=\$?; sleep 600"
wait_for "REPLAY 1/6"
keys Space
wait_for "PAUSED"
keys Right
wait_for "REPLAY 2/6"
keys Right Right
wait_for "REPLAY 4/6"
keys Left
wait_for "REPLAY 3/6"
keys S-Right
wait_for "REPLAY 6/6"
keys S-Left
wait_for "REPLAY 1/6"
expect_grep "PAUSED" "$T_TMP/screen"
keys q
wait_for "EXITED rc=0"

t a_replay_goes_to_a_time_typed_after_b
# The recording's refreshes are 0.3 s apart (record_busy's -d 0.3).
new_terminal 120 24 "env LANG=C.UTF-8 TERM=xterm-256color $XPUTOP -r $T_TMP/r.xpr -d 2 --no-config; echo EXITED rc=\$?; sleep 600"
wait_for "REPLAY 1/6"
keys Space
wait_for "PAUSED"
keys b
wait_for "Go to (seconds"
keys 0 . 9 Enter
wait_for "REPLAY 3/6"
keys b + 0 . 6 Enter
wait_for "REPLAY 5/6"
keys b 0 : 0 0 . 3 Enter
wait_for "REPLAY 1/6"
keys b 1 : 0 0 Enter
wait_for "REPLAY 6/6"
keys b - 0 . 6 Enter
wait_for "REPLAY 4/6"
keys b x Enter
wait_for "REPLAY 4/6"
keys b : Enter
wait_for "not a time"
keys q
wait_for "EXITED rc=0"

t a_upper_shows_the_flamegraph_of_all_processes
busy
start_on $B
wait_for "busy (pid $B)"
keys A
wait_for "all processes (A: the selected row's)"
keys A
wait_for "busy (pid $B)"
stop_busy

t p_shows_the_command_line
busy
start_on $B
keys p
wait_for "(command lines)"
wait_for "progs/busy 120"
keys p
wait_gone "(command lines)"
stop_busy

t the_signal_menu_fits_24_lines_and_scrolls_to_its_selection
busy
new_terminal 80 24 "env LANG=C.UTF-8 $XPUTOP -d 0.3 -p $B; echo EXITED rc=\$?; sleep 600"
wait_for "busy"
keys k
wait_for "Send signal:"
for s in " 1 SIGHUP" " 9 SIGKILL" "15 SIGTERM" "20 SIGTSTP"; do
	grep -q "$s" "$T_TMP/screen" || fail "$s not in the menu at 80x24"
done
grep -q "Send signal: [0-9]" "$T_TMP/screen" && fail "a position shown though all signals fit"
tm resize-window -t 0 -x 80 -y 12
wait_for "Send signal: 9/12"
grep -q "15 SIGTERM" "$T_TMP/screen" || fail "the selected SIGTERM scrolled out of an 80x12 menu"
keys End
wait_for "Send signal: 12/12"
grep -q "20 SIGTSTP" "$T_TMP/screen" || fail "End: SIGTSTP not shown"
keys Home
wait_for "Send signal: 1/12"
grep -q " 1 SIGHUP" "$T_TMP/screen" || fail "Home: SIGHUP not shown"
keys Down Down Down Down Down Down Down Down Down Down Down
wait_for "Send signal: 12/12"
keys Up Up Up Up Up Up Up Up Up Up Up
wait_for "Send signal: 1/12"
grep -q " 1 SIGHUP" "$T_TMP/screen" || fail "Up to the top: SIGHUP not shown"
keys Escape
wait_gone "Send signal:"
kill -0 "$B" 2> /dev/null || fail "busy was signalled after Esc"
stop_busy

finish
