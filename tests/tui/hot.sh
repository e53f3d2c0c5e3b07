# SPDX-License-Identifier: GPL-2.0-only
# The CPU view's machine-wide panes (issue 28, item 7): o lists the hottest
# functions as perf top does, A turns the flamegraph to every process.
# Needs root (live CPU sampling) and tmux.
. tests/lib.sh
need_root

. tests/tmux.sh

busy() {
	"$OUT/tests/progs/busy" 120 > /dev/null 2>&1 &
	B=$!
}
# forker: a second program burning CPU in functions of its own
# (forker_spin_until); its child spins too, until it execs true.
forker() {
	"$OUT/tests/progs/forker" 120 /bin/true > "$T_TMP/forker.out" 2> /dev/null &
	F=$!
}
stop_progs() {
	kill -9 "$B" "$F" $(sed -n 's/^child //p' "$T_TMP/forker.out" 2> /dev/null) 2> /dev/null
	wait "$B" "$F" 2> /dev/null
}
T_CLEANUP="$T_CLEANUP stop_progs"

# start COLS ROWS ARGS: xputop in a fresh terminal of that size.
start() {
	cols=$1 rows=$2
	shift 2
	new_terminal "$cols" "$rows" "env LANG=C.UTF-8 $XPUTOP -d 0.3 --no-config $*; echo EXITED rc=\$?; sleep 600"
}

t o_lists_the_hottest_functions_with_their_share_at_80x24
busy
start 80 24 -p "$B"
wait_for "busy (pid $B)" 200
keys o
wait_for "Hottest: watched processes only"
# the busy program's leaf, whole, with its share of all samples
wait_for_re "[ 1][ 0-9][0-9]\.[0-9]%  busy_leaf_spin( |$)"
# beside the flamegraph, all of it on the 24 lines: the table, the flame, the hints
[ "$(wc -l < "$T_TMP/screen")" -le 24 ] || fail "more than 24 lines"
expect_grep "PID" "$T_TMP/screen" "the table heading"
expect_grep "busy (pid $B)" "$T_TMP/screen" "the flame pane's title"
grep -E "^busy .*[0-9]\.[0-9]%  busy_leaf_spin" "$T_TMP/screen" > /dev/null ||
	fail "the hottest functions are not beside the flamegraph: $(grep busy_leaf_spin "$T_TMP/screen")"
expect_grep "q Quit" "$T_TMP/screen" "the key hints"
[ "$(LC_ALL=C.UTF-8 wc -L < "$T_TMP/screen")" -le 80 ] || fail "a line wider than 80 columns"
# without the flamegraph it has the whole width, with the samples it counts
keys f
wait_for_re "Hottest: watched processes only +[0-9]+ samples"
wait_gone "busy (pid $B)"
keys o
wait_gone "Hottest"
stop_progs

t without_p_the_hottest_functions_are_of_all_processes
busy
start 80 24
wait_for "PID" 200
keys o
wait_for "Hottest functions: all processes"
wait_for_re "[0-9]\.[0-9]%  busy_leaf_spin"
stop_progs

t a_upper_turns_the_flamegraph_to_every_process_under_its_name
busy
forker
start 120 30 -p "$B,$F"
wait_for " forker" 200
wait_for_re "^ (busy \(pid $B\)|forker \(pid [0-9]+\)) "
# the selected row's alone: one program's functions, not the other's
wait_for_re "busy_leaf_spin|forker_spin_until"
if grep -q "^ busy (pid $B)" "$T_TMP/screen"; then
	mine=busy_leaf_spin other=forker_spin_until
else
	mine=forker_spin_until other=busy_leaf_spin
fi
wait_for "$mine"
grep -q "$other" "$T_TMP/screen" && fail "the selected row's flamegraph shows $other"
keys A
wait_for "all processes (A: the selected row's)"
wait_for "$other"
expect_grep "$mine" "$T_TMP/screen"
# each process's stacks under its name, side by side on the first level
grep -E "^(busy .*forker|forker .*busy) " "$T_TMP/screen" > /dev/null ||
	fail "no level of process names: $(grep -A1 'all processes' "$T_TMP/screen" | tail -1)"
keys A
wait_gone "all processes (A: the selected row's)"
wait_gone "$other"
stop_progs

finish
