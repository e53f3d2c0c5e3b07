# SPDX-License-Identifier: GPL-2.0-only
# How xputop ends (issue 19): the exit status of a command it ran, of a
# signal that stopped it, and how long leaving takes.  Needs root (live).
. tests/lib.sh
need_root

t a_command_that_exits_3_makes_xputop_exit_3
"$XPUTOP" -b -- sh -c 'exit 3' > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 3 ] || fail "exit status $rc, expected 3: $(cat "$T_TMP/err")"

t a_command_that_succeeds_makes_xputop_exit_0
"$XPUTOP" -b -- true > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc: $(cat "$T_TMP/err")"

t a_command_killed_by_a_signal_gives_128_plus_it
"$XPUTOP" -b -- sh -c 'kill -TERM $$' > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 143 ] || fail "exit status $rc, expected 143"

# stopped_by SIG: the status of a batch xputop stopped by SIG once it runs.
stopped_by() {
	rm -f "$T_TMP/sig.json"
	"$XPUTOP" -b -j -d 0.2 > "$T_TMP/sig.json" 2> "$T_TMP/sig.json.err" &
	X=$!
	wait_json "$T_TMP/sig.json"
	kill -"$1" $X
	wait $X
}

t a_command_not_found_gives_127_and_one_not_executable_126
"$XPUTOP" -b -- /nonexistent/nosuch > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 127 ] || fail "not found: exit status $rc, expected 127: $(cat "$T_TMP/err")"
expect_grep "cannot run /nonexistent/nosuch: No such file or directory" "$T_TMP/err"
printf 'not a program\n' > "$T_TMP/noexec"
chmod 644 "$T_TMP/noexec"
"$XPUTOP" -b -- "$T_TMP/noexec" > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 126 ] || fail "not executable: exit status $rc, expected 126: $(cat "$T_TMP/err")"

t sigint_and_sigterm_both_give_128_plus_the_signal
stopped_by INT; rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit status $rc, expected 130"
stopped_by TERM; rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit status $rc, expected 143"

t leaving_after_the_last_refresh_takes_well_under_a_second
# From the snapshot on stdout to the end of the pipe (xputop gone, and
# nothing it left behind holding the pipe): the uprobes' detaching (~70 ms
# each, one after another in the kernel) is not waited for.  A sanitizer
# build's exit adds LeakSanitizer's scan of the heap (554 ms once beside
# other suites): 1 s there, still short of the probes' detaching.
ms=$("$XPUTOP" -b -j -n 1 -d 0.3 2> "$T_TMP/err" | {
	read -r line; t0=$(date +%s%N); cat > /dev/null; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); })
[ -n "$ms" ] && [ "$ms" -lt $((T_SLOW > 1 ? 1000 : 500)) ] ||
	fail "xputop took $ms ms to end after its snapshot: $(cat "$T_TMP/err")"

t the_helper_that_detaches_the_probes_is_gone_soon_after_exit
# It is a fork of xputop with the same arguments: an -o directory of this
# run's own finds it, and no other suite's xputop.
MARK=$T_TMP/exit-helper-mark
mkdir -p "$MARK"
"$XPUTOP" -b -j -n 1 -d 0.3 -o "$MARK" > /dev/null 2>> "$T_TMP/xputop.err" || xp_failed $?
i=0
while [ $i -lt 50 ] && pgrep -f -- "$MARK" > /dev/null; do sleep 0.1; i=$((i + 1)); done
pgrep -f -- "$MARK" > /dev/null && fail "a helper is still there 5 s after exit"

finish
