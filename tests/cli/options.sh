# SPDX-License-Identifier: GPL-2.0-only
# test-san: only (checks of parsing and output, deterministic: the sanitizers
# add most here and the plain build nothing; tests/run)
# Options are checked before the run starts, whatever the front-end
# (issue 19): a bad one is a usage error (exit 2) said at once, not found
# out after the run, accepted in one mode only, or shown as an empty table.
# Needs root (the runs that are meant to start sample live).
. tests/lib.sh
need_root

# refused_at_once ARGS...: exit 2 within 2 s, before any snapshot.
refused_at_once() {
	start=$(date +%s%N)
	timeout 20 "$XPUTOP" -b -n 3 -d 1 "$@" > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	[ $rc -eq 2 ] || fail "$*: exit status $rc, expected 2"
	[ -s "$T_TMP/out" ] && fail "$*: printed a snapshot before refusing"
	[ $ms -lt 2000 ] || fail "$*: refused only after $ms ms"
}

t export_to_a_missing_directory_is_refused_before_the_run
refused_at_once --export -o /nonexistent/xputop
expect_grep "/nonexistent/xputop" "$T_TMP/err"

t export_to_a_read_only_directory_is_refused_before_the_run
mkdir "$T_TMP/ro"
if mount -t tmpfs -o ro xputop-test "$T_TMP/ro"; then
	refused_at_once --export -o "$T_TMP/ro"
	expect_grep "Read-only" "$T_TMP/err"
	umount "$T_TMP/ro"
else
	fail "cannot mount a read-only tmpfs"
fi

t a_missing_theme_is_refused_in_batch_mode_as_on_the_screen
refused_at_once --theme nosuch
expect_grep "theme 'nosuch' not found" "$T_TMP/err"

t a_file_that_is_no_theme_is_refused_with_one_message
refused_at_once --theme /etc/passwd
expect_grep "not a theme file" "$T_TMP/err"
[ "$(wc -l < "$T_TMP/err")" -eq 1 ] || fail "$(wc -l < "$T_TMP/err") lines of messages"

t a_hexadecimal_delay_is_refused
refused_at_once -d 0x10
expect_grep "refresh interval" "$T_TMP/err"

t a_pid_that_is_not_there_is_refused
refused_at_once -p 4194000
expect_grep "no such process" "$T_TMP/err"

t a_thread_id_is_refused_naming_its_process
"$OUT/tests/progs/busy" 10 2 & B=$!
sleep 0.3
TID=$(ls /proc/$B/task | grep -v "^$B\$" | head -1)
refused_at_once -p "$TID"
expect_grep "thread of process $B" "$T_TMP/err"
kill $B 2> /dev/null; wait $B 2> /dev/null

t a_process_name_selects_its_processes
# A name of its own: other tests on this machine run busy too.
cp "$OUT/tests/progs/busy" "$T_TMP/xpt-by-name"
"$T_TMP/xpt-by-name" 10 & B=$!
sleep 0.3
"$XPUTOP" -b -j -n 1 -d 0.5 -p xpt-by-name > "$T_TMP/name.json" 2> "$T_TMP/err" || fail "exit status $?: $(cat "$T_TMP/err")"
python3 tests/jsonq.py only_pids $B < "$T_TMP/name.json" || fail "other processes shown"
python3 tests/jsonq.py top_comm xpt-by-name < "$T_TMP/name.json" || fail "it is not shown"
kill $B 2> /dev/null; wait $B 2> /dev/null
refused_at_once -p no-process-is-called-this
expect_grep "no process of that name" "$T_TMP/err"

t verbose_says_what_each_source_does_in_batch_mode
"$XPUTOP" -b -n 1 -d 0.3 -v > /dev/null 2> "$T_TMP/err" || fail "exit status $?"
expect_grep "^xputop: CPU: cpu-clock sampling" "$T_TMP/err"
expect_grep "^xputop: GPU: " "$T_TMP/err"
expect_grep "^xputop: NPU: " "$T_TMP/err"

t batch_text_shows_the_view_asked_for
"$XPUTOP" -b -n 1 -d 0.3 --view npu > "$T_TMP/npu.txt" 2> "$T_TMP/err" || fail "exit status $?"
expect_grep "^NPU" "$T_TMP/npu.txt"
grep -q "^CPU:" "$T_TMP/npu.txt" && fail "--view npu printed the CPU table"
grep -q "^GPU:" "$T_TMP/npu.txt" && fail "--view npu printed the GPU view"
"$XPUTOP" -b -n 1 -d 0.3 --view gpu > "$T_TMP/gpu.txt" 2> "$T_TMP/err" || fail "exit status $?"
expect_grep "^GPU" "$T_TMP/gpu.txt"
grep -q "^CPU:" "$T_TMP/gpu.txt" && fail "--view gpu printed the CPU table"
"$XPUTOP" -b -n 1 -d 0.3 > "$T_TMP/all.txt" 2> "$T_TMP/err" || fail "exit status $?"
for v in CPU GPU NPU; do expect_grep "^$v" "$T_TMP/all.txt"; done

t batch_mode_sorts_by_the_column_asked_for
# Rows to sort, however quiet the machine: two busy programs, alive through
# both runs however slowly xputop starts (a sanitizer build takes seconds).
"$OUT/tests/progs/busy" 60 & B1=$!
"$OUT/tests/progs/busy" 60 & B2=$!
"$XPUTOP" -b -j -n 1 -d 0.5 --sort pid > "$T_TMP/sort.json" 2> "$T_TMP/err" || fail "exit status $?: $(cat "$T_TMP/err")"
python3 tests/jsonq.py cpu_sorted_by pid desc < "$T_TMP/sort.json" || fail "--sort pid"
"$XPUTOP" -b -j -n 1 -d 0.5 -s samples > "$T_TMP/sort.json" 2> "$T_TMP/err" || fail "exit status $?"
python3 tests/jsonq.py cpu_sorted_by samples desc < "$T_TMP/sort.json" || fail "-s samples"
kill $B1 $B2 2> /dev/null; wait $B1 $B2 2> /dev/null
refused_at_once --sort no-such-column
expect_grep "cpu_pct" "$T_TMP/err"
expect_grep "cpu_time_ns" "$T_TMP/err"

t batch_mode_sorts_by_time_plus_and_res
"$OUT/tests/progs/busy" 60 & B1=$!
"$OUT/tests/progs/busy" 60 & B2=$!
"$XPUTOP" -b -j -n 1 -d 0.5 --sort cpu_time_ns > "$T_TMP/sort.json" 2> "$T_TMP/err" || fail "exit status $?: $(cat "$T_TMP/err")"
python3 tests/jsonq.py cpu_sorted_by cpu_time_ns desc < "$T_TMP/sort.json" || fail "--sort cpu_time_ns"
"$XPUTOP" -b -j -n 1 -d 0.5 --sort res_bytes > "$T_TMP/sort.json" 2> "$T_TMP/err" || fail "exit status $?: $(cat "$T_TMP/err")"
python3 tests/jsonq.py cpu_sorted_by res_bytes desc < "$T_TMP/sort.json" || fail "--sort res_bytes"
kill $B1 $B2 2> /dev/null; wait $B1 $B2 2> /dev/null

t batch_mode_shows_threads_with_H
"$OUT/tests/progs/busy" 60 2 & B=$!
"$XPUTOP" -b -j -n 1 -d 0.5 -H -p $B > "$T_TMP/threads.json" 2> "$T_TMP/err" || fail "exit status $?: $(cat "$T_TMP/err")"
kill $B 2> /dev/null; wait $B 2> /dev/null
python3 tests/jsonq.py cpu_view threads < "$T_TMP/threads.json" || fail "-H"

finish
