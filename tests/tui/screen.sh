# SPDX-License-Identifier: GPL-2.0-only
# The interactive screen through a real terminal (tmux): what a user sees
# and what each key does.  Needs root (live CPU sampling) and tmux.
. tests/lib.sh
need_root

. tests/tmux.sh
ESC=$(printf '\033')

# start COLS ROWS [ENV=...] -- ARGS: xputop in a fresh terminal of that size.
start() {
	cols=$1 rows=$2
	shift 2
	envs=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	[ "$1" = "--" ] && shift
	new_terminal "$cols" "$rows" \
		"env LANG=C.UTF-8 $envs $XPUTOP -d 0.3 -o $T_TMP $*; echo EXITED rc=\$?; sleep 600"
}

# Something busy with known function names to look at.
"$OUT/tests/progs/busy" 120 > /dev/null 2>&1 &
BUSY=$!

t the_screen_shows_the_header_and_the_view_tabs
start 100 30 -- ""
wait_for "GPU · NPU · CPU"
expect_grep " xputop " "$T_TMP/screen"
expect_grep "PID" "$T_TMP/screen"
[ "$(alternate_screen)" = 1 ] || fail "not on the alternate screen"

t help_opens_with_a_key_and_any_key_closes_it
keys '?'
wait_for "xputop help"
expect_grep "Flamegraph frames" "$T_TMP/screen"
keys x
wait_gone "xputop help"

t view_keys_switch_between_gpu_npu_and_cpu
keys g
# The GPU view: its message box, or its kernel table where another suite's
# CUDA stand-ins run beside this one (their launch-only rows are data).
i=0
until screen && grep -qE "GPU source:|^ *KERNEL +PID" "$T_TMP/screen"; do
	i=$((i + 1))
	[ $i -lt 80 ] || { fail "the GPU view never showed"; break; }
	sleep 0.1
done
keys n
wait_for "Sources on this machine"
keys Tab
wait_gone "Sources on this machine"
wait_for "PID"

t space_pauses_and_resumes
keys Space
wait_for "PAUSED"
keys Space
wait_gone "PAUSED"

t slash_filters_and_esc_restores
keys /
wait_for "Filter: "
keys z q z q z q
wait_for 'no rows match the filter "zqzqzq"'
keys Escape
wait_gone "Filter: "
wait_gone 'filter "zqzqzq"'

t the_cursor_keeps_its_place_as_rows_resort_and_f_follows_its_row
# htop's cursor (issue 28): on the top row, a busy program that ends sorts to
# the bottom (0.0%, kept 30 s by --window) and the cursor stays on top; the
# flamegraph, which shows the selected row, moves off it.  With F it follows
# the program while it runs; when it ends following stops and the cursor
# keeps its place (it followed the ended row down to the idle ones).
start 120 30 -- --window 30
wait_for "PID"
"$OUT/tests/progs/busy" 4 3 > /dev/null 2>&1 &
B=$!
wait_for "busy (pid $B)" 150
wait $B
wait_gone "busy (pid $B)"
"$OUT/tests/progs/busy" 4 3 > /dev/null 2>&1 &
B=$!
wait_for "busy (pid $B)" 150
keys F
wait_for " F 1/"
wait $B
# Following ends at the first refresh that shows the row ended (X): 10 s at
# most (a sanitizer build beside other suites took more than 2 s).
i=0
while [ $i -lt 100 ]; do
	screen
	grep -qE " F [0-9]+/" "$T_TMP/screen" || break
	sleep 0.1
	i=$((i + 1))
done
# Then the ended row sorts down (0.0%) and the cursor keeps the top place:
# the flamegraph leaves the ended program.
wait_gone "busy (pid $B)"
grep -qE " F [0-9]+/" "$T_TMP/screen" && fail "still following an ended program"

t s_exports_a_folded_file_that_flamegraph_renders
keys c
wait_for "PID"
keys s
wait_for "exported "
F=$(ls "$T_TMP"/xputop-cpu-*.folded 2> /dev/null | head -1)
expect_grep "to $F" "$T_TMP/screen" "the status line"
if [ -z "$F" ]; then
	fail "no folded file in $T_TMP"
else
	expect_grep "busy_leaf_spin" "$F"
	perl /usr/share/perl5/Devel/NYTProf/flamegraph.pl "$F" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed"
	[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned: $(cat "$T_TMP/fg.err")"
	grep -q "<svg" "$T_TMP/fg.svg" || fail "flamegraph.pl made no SVG"
fi

t a_tiny_terminal_says_it_is_too_small_and_recovers
tm resize-window -t 0 -x 30 -y 5
wait_for "terminal too small"
tm resize-window -t 0 -x 100 -y 30
wait_for "GPU · NPU · CPU"

t resizes_while_samples_come_in_leave_it_running
# A resize redraws the last snapshot's tables while new samples have grown
# the dictionary since: the tables' strings must be their own copies (the
# sanitizer pass caught a read of freed memory here).
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	tm resize-window -t 0 -x 30 -y 5
	sleep 0.2
	tm resize-window -t 0 -x 100 -y 30
	sleep 0.2
done
wait_for "GPU · NPU · CPU"
screen
grep -q "EXITED" "$T_TMP/screen" && fail "xputop ended: $(tail -5 "$T_TMP/screen")"

t q_quits_and_gives_the_terminal_back
keys q
wait_for "EXITED rc=0"
[ "$(alternate_screen)" = 0 ] || fail "still on the alternate screen after q"

t ctrl_c_quits_and_gives_the_terminal_back
start 100 30 -- ""
wait_for "GPU · NPU · CPU"
keys C-c
wait_for "EXITED rc=0"
[ "$(alternate_screen)" = 0 ] || fail "still on the alternate screen after Ctrl-C"

t the_shell_is_usable_after_q
new_terminal 100 30 "env LANG=C.UTF-8 PS1='shell> ' sh"
wait_for "shell>"
keys "$XPUTOP -d 0.3" Enter
wait_for "GPU · NPU · CPU"
keys q
wait_gone "GPU · NPU · CPU"
keys "stty -a | tr ' ' '\n' | grep -x -e echo -e icanon | tr '\n' + ; echo" Enter
wait_for "icanon+echo+"
keys "echo still-alive" Enter
wait_for "still-alive"

t f10_quits
start 100 30 -- ""
wait_for "GPU · NPU · CPU"
keys F10
wait_for "EXITED rc=0"

t sigterm_gives_the_terminal_back
start 100 30 -- ""
wait_for "GPU · NPU · CPU"
pid=$(pgrep -P "$(tm display-message -p -t 0 '#{pane_pid}')" -x xputop)
[ -n "$pid" ] && kill -TERM "$pid"
wait_for "EXITED rc="
[ "$(alternate_screen)" = 0 ] || fail "still on the alternate screen after SIGTERM"

t a_terminal_gone_without_a_hangup_ends_it_with_its_recording_whole
# Its own session (setsid), so no SIGHUP reaches it when the terminal goes
# (as after a dropped ssh session where the hangup was not passed on): it
# must end, not refresh for nobody on a dead terminal (it spun at 60% of a
# CPU, parent 1, until killed), and finish what it writes.
new_terminal 100 30 "env LANG=C.UTF-8 setsid -w $XPUTOP -d 0.3 -o $T_TMP -w $T_TMP/gone.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "GPU · NPU · CPU"
pid=$(pgrep -f -- "-w $T_TMP/gone.xpr" | while read -r p; do [ "$(cat "/proc/$p/comm" 2> /dev/null)" = xputop ] && echo "$p"; done)
[ -n "$pid" ] || fail "cannot find the xputop in its own session"
tm kill-server
i=0
while [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then
	fail "still running 10 s after its terminal went: $(ps -o pid,ppid,pcpu,stat,args -p "$pid" | tail -n 1)"
	kill -9 "$pid"
fi
"$XPUTOP" -b -j -r "$T_TMP/gone.xpr" > "$T_TMP/gone.json" 2> "$T_TMP/gone.err" ||
	fail "its recording cannot be replayed: $(tail -n 3 "$T_TMP/gone.err")"
[ -s "$T_TMP/gone.json" ] || fail "its recording replays to nothing"

t no_color_draws_without_colours
start 100 30 NO_COLOR=1 -- ""
wait_for "GPU · NPU · CPU"
tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
if grep -qE "$ESC\[([0-9]+;)*(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;[0-9]+)*m" "$T_TMP/ansi"; then
	fail "colour escapes on the screen with NO_COLOR set"
fi
grep -qE "$ESC\[([0-9]+;)*7(;[0-9]+)*m" "$T_TMP/ansi" || fail "no reverse video in monochrome"
keys q

t colours_are_used_by_default
start 100 30 -- ""
wait_for "GPU · NPU · CPU"
tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
grep -qE "$ESC\[([0-9]+;)*(3[0-7]|4[0-7]|38;5;[0-9]+)(;[0-9]+)*m" "$T_TMP/ansi" || fail "no colours"
keys q

t a_non_utf8_locale_gets_ascii_tabs
start 100 30 LC_ALL=C -- ""
wait_for "GPU | NPU | CPU"
keys q

t themes_are_found_by_name_and_a_missing_one_is_an_error
start 100 30 -- -t light
wait_for "GPU · NPU · CPU"
keys q
wait_for "EXITED rc=0"
start 100 30 -- -t no-such-theme
wait_for "EXITED rc=2"
expect_grep "theme 'no-such-theme' not found" "$T_TMP/screen"

t a_replay_is_marked_in_the_header
"$XPUTOP" -b -n 3 -d 0.3 -w "$T_TMP/rec.xpr" > /dev/null 2>&1 || fail "cannot record"
start 100 30 -- -r "$T_TMP/rec.xpr"
wait_for "REPLAY"
keys q

t flamegraph_frames_show_their_share
# busy alone (-p): its frames, each with its percentage of the flamegraph.
start 120 40 -- --view cpu -p $BUSY
wait_for "busy_leaf_spin"
i=0
while [ $i -lt 80 ] && ! { screen; grep -qE "busy_outer +[0-9]+\.[0-9]%" "$T_TMP/screen"; }; do sleep 0.1; i=$((i + 1)); done
grep -qE "busy_outer +[0-9]+\.[0-9]%" "$T_TMP/screen" || fail "no percentage after busy_outer: $(grep busy_outer "$T_TMP/screen")"
keys q

t at_40x12_the_cpu_table_keeps_its_numbers_and_drops_user_first
start 40 12 -- --view cpu
wait_for "%CPU"
expect_grep "PID" "$T_TMP/screen"
expect_grep "COMMAND" "$T_TMP/screen"
grep -q "USER" "$T_TMP/screen" && fail "USER is shown while numbers were dropped: $(grep PID "$T_TMP/screen")"
grep -q " S " "$T_TMP/screen" && fail "the state letter is shown while numbers were dropped: $(grep PID "$T_TMP/screen")"
expect_grep "RES" "$T_TMP/screen"
keys q

t at_80x24_the_cpu_view_has_res_state_time_and_the_load_cpu_memory_line
start 80 24 -- --view cpu -p $BUSY
wait_for "busy"
i=0
while [ $i -lt 80 ] && ! { screen; grep -qE "^ +$BUSY +[a-z0-9_-]+ +[0-9.]+[KMG]? +[RSD] +[0-9.]+ +[0-9.]+ +[0-9]+:[0-9][0-9]\.[0-9][0-9] " "$T_TMP/screen"; }; do sleep 0.1; i=$((i + 1)); done
for col in PID USER RES " S " %CPU "TIME+" COMMAND; do
	grep -q -- "$col" "$T_TMP/screen" || fail "no $col heading: $(grep PID "$T_TMP/screen")"
done
grep -qE "^ +$BUSY +[a-z0-9_-]+ +[0-9.]+[KMG]? +[RSD] +[0-9.]+ +[0-9.]+ +[0-9]+:[0-9][0-9]\.[0-9][0-9] " "$T_TMP/screen" ||
	fail "busy's row has no RES, state or TIME+: $(grep " $BUSY " "$T_TMP/screen")"
grep -qE "load [0-9]+\.[0-9]{2} [0-9]+\.[0-9]{2} [0-9]+\.[0-9]{2}  cpu [0-9]+\.[0-9]%  mem [0-9.]+[MG]/[0-9.]+G" "$T_TMP/screen" ||
	fail "no load/cpu/mem line: $(sed -n 3,5p "$T_TMP/screen")"
keys q

t status_messages_clear_after_a_while
start 100 30 -- --view cpu
wait_for "PID"
keys s
wait_for "exported "
i=0
while [ $i -lt 120 ] && { screen; grep -qF "exported " "$T_TMP/screen"; }; do sleep 0.1; i=$((i + 1)); done
grep -qF "exported " "$T_TMP/screen" && fail "the export message is still there after 12 s"
keys q

t after_the_replay_ended_an_exports_path_is_shown
record_busy "$T_TMP/ended.xpr"
start 100 30 -- -r "$T_TMP/ended.xpr" --view cpu
wait_for "REPLAY ENDED" 150
keys w
wait_for "since start"
keys s
wait_for "exported "
keys q

t the_help_says_where_callees_are_drawn
start 100 40 -- ""
wait_for "PID"
keys '?'
wait_for "xputop help"
keys End	# the flamegraph's keys are near the end, past 40 rows
wait_for "heaviest callee below"
grep -q "heaviest frame above" "$T_TMP/screen" && fail "the help still says above"
keys q q

t a_terminal_that_cannot_place_the_cursor_is_refused_with_a_reason
start 100 30 TERM=dumb -- ""
wait_for "EXITED rc=1"
expect_grep "cannot place the cursor" "$T_TMP/screen"

t with_no_npu_its_sources_list_is_whole_at_80x24
if [ ! -e /sys/module/intel_vpu ] && ! ls /dev/accel/accel* > /dev/null 2>&1; then
	start 80 24 -- --view npu
	wait_for "Sources on this machine"
	for src in ioctls "vpu tracepoints" "ivpu probes" IPC jobs power memory "Level Zero" busy; do
		grep -q "^   $src  " "$T_TMP/screen" || fail "the '$src' row is not shown"
	done
	expect_grep "no NPU on this machine" "$T_TMP/screen"
	keys q
fi

tm_end "$SOCK"
kill $BUSY 2> /dev/null
finish
