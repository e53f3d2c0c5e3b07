# SPDX-License-Identifier: GPL-2.0-only
# The mouse through a real terminal (tmux): the terminal's own mouse reports
# (X10 for TERM=screen-256color, SGR for xterm-256color) are typed into the
# pane, as a terminal would send them, while a recording of busy replays.
# A click on a tab switches the view, on a row selects it, on a heading
# sorts, on a flamegraph frame zooms; the wheel moves the selection; mouse
# reporting ends with xputop, however it ends.  Needs root (the recording).
. tests/lib.sh
need_root
. tests/tmux.sh

record_busy "$T_TMP/rec.xpr" 6

# start [ENV=...]: the replay in a fresh 100x30 terminal, no settings file.
start() {
	new_terminal 100 30 "env LANG=C.UTF-8 XDG_CONFIG_HOME=$T_TMP/none $* $XPUTOP -r $T_TMP/rec.xpr; echo EXITED rc=\$?; sleep 600"
}

# x10 BUTTON X Y: a mouse report as xterm's X10 protocol sends it (0-based
# cells): ESC [ M, then 32 + button, 33 + x, 33 + y as bytes.
x10() { keys -H 1b 5b 4d "$(printf %x $((32 + $1)))" "$(printf %x $((33 + $2)))" "$(printf %x $((33 + $3)))"; }
# click X Y: press and release of the left button; wheel up|down X Y.
click() { x10 0 "$1" "$2"; x10 3 "$1" "$2"; }
wheel() { if [ "$1" = up ]; then x10 64 "$2" "$3"; else x10 65 "$2" "$3"; fi; }
# sgr_click X Y: the same in the SGR protocol (1006), 1-based.
sgr_click() { keys -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' $(($1 + 1)) $(($2 + 1)) $(($1 + 1)) $(($2 + 1)))"; }

flag() { tm display-message -p -t 0 "#{$1}"; }
# (sort arrows made one byte, so that byte offsets are columns)
line() { sed -n "$(($1 + 1))p" "$T_TMP/screen" | sed "s/▼/v/g; s/▲/^/g"; }
# col TEXT Y: the first column where TEXT is on screen line Y.
col() { line "$2" | awk -v t="$1" '{ i = index($0, t); print i ? i - 1 : -1 }'; }
# tid_at Y: the first number on screen line Y (a table row's PID or TID).
tid_at() { line "$1" | awk '{ print $2 }'; }

t the_terminal_reports_the_mouse_while_xputop_runs
start
wait_for "REPLAY ENDED"
[ "$(flag mouse_any_flag)" = 1 ] || fail "mouse reporting is off"

t a_click_on_a_tab_switches_the_view
click 9 1
wait_for "Alert log"
click 3 1
wait_for "GPU source:"
click 15 1
wait_for "%CPU"

t a_click_on_a_row_selects_it_and_the_flamegraph_follows
keys H
wait_for "threads"
wait_for "TID"
screen
# rows start under the heading on line 3; pick the third row
want=$(line 6 | awk '{ print $2 }')
click 20 6
wait_for "(tid $want)"

t the_wheel_moves_the_selection_three_rows
screen
want=$(line 9 | awk '{ print $2 }')
wheel down 20 12
wait_for "(tid $want)"
screen
want=$(line 6 | awk '{ print $2 }')
wheel up 20 12
wait_for "(tid $want)"

t a_click_on_a_heading_sorts_by_it_and_again_reverses
screen
# The headings' row: below the header, the tabs and the text lines above
# the table (the load/CPU/memory line, the source's status).
y=$(grep -n "SAMPLES" "$T_TMP/screen" | head -1 | cut -d: -f1)
y=$((${y:-1} - 1))
x=$(col SAMPLES "$y")
[ "$x" -ge 0 ] || fail "no SAMPLES heading"
click $((x + 2)) "$y"
wait_for "▼SAMPLES"
click $((x + 2)) "$y"
wait_for "▲SAMPLES"

t a_click_on_a_frame_zooms_the_flamegraph_and_z_zooms_out
wait_for "busy_middle"
y=$(grep -n "busy_middle" "$T_TMP/screen" | head -1 | cut -d: -f1)
y=$((y - 1))
x=$(col busy_middle "$y")
click $((x + 1)) "$y"
wait_for "zoomed on busy_middle (z: zoom out)"
keys z
wait_for "zoomed on busy_outer (z: zoom out)"
keys Enter
wait_for "zoomed on busy_middle (z: zoom out)"

t a_click_on_the_flamegraph_title_zooms_all_the_way_out
y=$(grep -n "zoomed on" "$T_TMP/screen" | head -1 | cut -d: -f1)
click 2 $((y - 1))
wait_gone "zoomed on"

t a_help_longer_than_the_screen_scrolls_with_keys_and_the_wheel_and_a_click_closes_it
keys '?'
wait_for "for more, any other key closes"
grep -q "^    wheel  " "$T_TMP/screen" && fail "the help's last entry shows before scrolling"
keys End
wait_for "    wheel  "
wheel up 20 10
wait_gone "    wheel  "
expect_grep "xputop help" "$T_TMP/screen" "the help after the wheel"
click 20 10
wait_gone "xputop help"

t quitting_turns_mouse_reporting_off
keys q
wait_for "EXITED rc=0"
[ "$(flag mouse_any_flag)" = 0 ] || fail "the terminal still reports the mouse after q"

t a_crash_turns_mouse_reporting_off
start
wait_for "REPLAY"
[ "$(flag mouse_any_flag)" = 1 ] || fail "mouse reporting is off"
pid=$(pgrep -P "$(tm display-message -p -t 0 '#{pane_pid}')" -x xputop)
[ -n "$pid" ] && kill -SEGV "$pid"
wait_for "EXITED rc=139"
[ "$(flag mouse_any_flag)" = 0 ] || fail "the terminal still reports the mouse after a crash"
[ "$(alternate_screen)" = 0 ] || fail "still on the alternate screen after a crash"

t sgr_reports_of_an_xterm_work_too
start TERM=xterm-256color
wait_for "REPLAY ENDED"
[ "$(flag mouse_sgr_flag)" = 1 ] || fail "xputop did not ask an xterm for SGR reports"
sgr_click 9 1
wait_for "Alert log"
keys q
wait_for "EXITED rc=0"
[ "$(flag mouse_any_flag)" = 0 ] || fail "the terminal still reports the mouse after q"

t mouse_no_in_the_settings_leaves_the_mouse_to_the_terminal
mkdir -p "$T_TMP/nomouse/xputop"
printf 'version = 1\nmouse = no\n' > "$T_TMP/nomouse/xputop/xputop.conf"
new_terminal 100 30 "env LANG=C.UTF-8 XDG_CONFIG_HOME=$T_TMP/nomouse $XPUTOP -r $T_TMP/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "REPLAY"
[ "$(flag mouse_any_flag)" = 0 ] || fail "mouse reporting is on"
keys q

tm_end "$SOCK"
finish
