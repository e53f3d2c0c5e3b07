# SPDX-License-Identifier: GPL-2.0-only
# The GPU injection socket is 0666: any local user may connect.  Each attack
# of issue 24 played by an unprivileged user (uid 65534) against an agent:
# memory, blinding, spoofing, device ids, the journal.  Needs root.
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
FORGER=$(public "$OUT/tests/progs/gpu_forger")
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2> /dev/null; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2> /dev/null; }
# agent NAME ARGS...: a batch xputop writing $T_TMP/NAME.json (stderr in
# NAME.err), its pid in X once it has printed its first snapshot.
agent() {
	n=$1
	shift
	"$XPUTOP" -b "$@" > "$T_TMP/$n.json" 2> "$T_TMP/$n.err" &
	X=$!
	wait_json "$T_TMP/$n.json"
}
done_ok() { wait $X || fail "xputop failed: $(cat "$T_TMP/$1.err")"; }

t rss_grows_at_most_64_mib_under_30000_distinct_4kb_kernel_names
# The agent runs until the flood is over and measured, however long a loaded
# machine makes it take (it is stopped then, SIGINT: 130).
agent flood -j -d 0.5
sleep 1
before=$(rss_kb $X)
r=$(as_nobody "$FORGER" "$XPUTOP_SOCKET" flood 30000 2)
n=$(($(wc -l < "$T_TMP/flood.json") + 2)) i=0
while [ "$(wc -l < "$T_TMP/flood.json")" -lt $n ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
after=$(hwm_kb $X)
kill -INT $X
wait $X
rc=$?
[ $rc -eq 130 ] || fail "xputop exited with $rc: $(cat "$T_TMP/flood.err")"
echo "  RSS ${before} kB before, peak ${after} kB after 30000 names of 4 KB"
# Under the sanitizers freed memory is held in quarantine and every block has
# red zones: the flood still runs (for their reports), the bound is not held.
if [ "$(sed -n 's/^SAN ?= //p' "$OUT/config.mk" 2> /dev/null)" = 1 ]; then
	echo "  (sanitizer build: RSS not checked)"
elif [ -z "$before" ] || [ -z "$after" ] || [ $((after - before)) -gt $((64 * 1024)) ]; then
	fail "RSS grew from ${before:-?} to ${after:-?} kB"
fi
[ "$r" = open ] || fail "the flooding process was cut off rather than refused names"
$Q gpu_peers_refused names ge 25000 65534 < "$T_TMP/flood.json" || fail "names refused not counted for the uid"
$Q gpu_peers_refused names ge 25000 "" gpu_forger < "$T_TMP/flood.json" || fail "names refused not counted for the process"
$Q gpu_process gpu_forger cupti < "$T_TMP/flood.json" || fail "the flooding process is not shown"

t a_cuda_program_is_traced_while_another_user_holds_300_idle_connections
agent idle -j --gpu-exact -n 16 -d 0.5 --window 60
as_nobody "$FORGER" "$XPUTOP_SOCKET" idle 300 7 > "$T_TMP/idle.out" &
F=$!
sleep 1
setpriv --reuid=65533 --regid=65533 --clear-groups "$STANDIN" "$FAKE" 3 > "$T_TMP/idle.expected" 2> "$T_TMP/standin.err" ||
	fail "stand-in failed: $(cat "$T_TMP/standin.err")"
wait $F
done_ok idle
$Q gpu_process gpu_standin cupti < "$T_TMP/idle.json" || fail "the CUDA program was not traced"
$Q gpu_account "$T_TMP/idle.expected" < "$T_TMP/idle.json" || fail "the CUDA program's kernels are not all there"
$Q gpu_peers_refused connections ge 200 65534 < "$T_TMP/idle.json" || fail "connections over the quota not counted"
$Q gpu_peers_refused hello_late ge 32 65534 < "$T_TMP/idle.json" || fail "connections without HELLO not closed and counted"
$Q gpu_status_had "connections over quota" < "$T_TMP/idle.json" || fail "the status does not say so"

t a_name_forged_in_the_hello_is_never_shown_the_kernels_is
agent name -j -n 8 -d 0.5
as_nobody "$FORGER" "$XPUTOP_SOCKET" name 1 2 > /dev/null
done_ok name
$Q gpu_process gpu_forger cupti < "$T_TMP/name.json" || fail "the process is not shown by its comm"
$Q gpu_no_process systemd < "$T_TMP/name.json" || fail "the HELLO's name was shown"
grep -q '"systemd"' "$T_TMP/name.json" && fail "the HELLO's name is in the JSON"
agent nametext -n 8 -d 0.5 --view gpu
as_nobody "$FORGER" "$XPUTOP_SOCKET" name 1 2 > /dev/null
done_ok nametext
expect_grep "pid [0-9]* gpu_forger: " "$T_TMP/nametext.json" "the batch text"
grep -q systemd "$T_TMP/nametext.json" && fail "the HELLO's name is in the batch text"

t device_ids_this_machine_does_not_have_are_refused_counted_and_shown
agent dev -j -n 8 -d 0.5
as_nobody "$FORGER" "$XPUTOP_SOCKET" devices 1000 2 > /dev/null
done_ok dev
ndev=$(python3 -c 'import json,sys; d=json.JSONDecoder(); t=sys.stdin.read(); print(d.raw_decode(t)[0]["gpu"]["peers"]["devices"])' < "$T_TMP/dev.json")
$Q gpu_peers_refused devices eq $((1000 - ndev)) < "$T_TMP/dev.json" || fail "refused device records"
$Q gpu_peers_refused devices eq $((1000 - ndev)) "" gpu_forger < "$T_TMP/dev.json" || fail "not counted for the process"
$Q gpu_devices_below "$ndev" < "$T_TMP/dev.json" || fail "a device that does not exist was shown"
$Q gpu_status_had "$((1000 - ndev)) records of unknown devices" < "$T_TMP/dev.json" || fail "the status does not say so"

t refused_counts_show_in_the_batch_text
agent devtext -n 8 -d 0.5 --view gpu
as_nobody "$FORGER" "$XPUTOP_SOCKET" devices 100 2 > /dev/null
done_ok devtext
expect_grep "^GPU: refused from peers: .*records of unknown devices" "$T_TMP/devtext.json" "the batch text's status"
expect_grep "^  refused from uid 65534: .*devices [0-9]" "$T_TMP/devtext.json" "the batch text"

t warnings_about_one_users_peers_are_rate_limited
agent warn -j -n 10 -d 0.5
as_nobody "$FORGER" "$XPUTOP_SOCKET" bad-hellos 200
as_nobody "$FORGER" "$XPUTOP_SOCKET" idle 100 2 > /dev/null
as_nobody "$FORGER" "$XPUTOP_SOCKET" devices 50 1 > /dev/null
done_ok warn
lines=$(grep -c 'GPU socket' "$T_TMP/warn.err")
echo "  $lines warning lines for 200 false HELLOs, 100 idle connections and 42 bad records"
[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] || fail "$lines warning lines: $(head -5 "$T_TMP/warn.err")"
$Q gpu_peers_refused bad_hello eq 200 65534 < "$T_TMP/warn.json" || fail "false HELLOs not all counted"

t own_time_samples_at_most_64_threads_a_process_and_none_of_another_process
# The launching threads' own CPU time is sampled (core/sources/gpu_own.c)
# for the threads a connected process names in its launches: a peer that
# maps the library (so its tracing flag is found) and names init's thread,
# the agent's own and 80 threads of its own has the first two refused and
# counted, and 64 of its names taken at most, the rest counted.
[ -f "$OUT/libxputop_inject.so" ] || fail "$OUT has no injection library (built without the CUDA toolkit?)"
LIB=$(public "$OUT/libxputop_inject.so")
agent tids -j -n 12 -d 0.5
r=$(as_nobody "$FORGER" "$XPUTOP_SOCKET" tids "$LIB" 80 4 1 "$X")
[ "$r" = "80 threads" ] || fail "the forger made: $r"
done_ok tids
$Q gpu_status_had "2 threads refused (not the process's own)" < "$T_TMP/tids.json" || fail "foreign threads not refused"
$Q gpu_status_had "62 launching threads of 1 process sampled (1 with more than 64 threads)" < "$T_TMP/tids.json" ||
	fail "not 64 threads at most"
$Q gpu_status_never "63 launching threads" < "$T_TMP/tids.json" || fail "a foreign thread was sampled"

t cpu_time_is_kept_of_8_threads_a_process_and_none_of_another_process
# The same names, for the CPU time the launch probes' count scales by
# (core/sources/launch_probes.c): init's thread and the agent's are not the
# peer's (no counter opened on them), 6 of its own are kept, the 74 names
# after its first 8 counted and dropped.
$Q gpu_status_had "CPU time of 6 launching threads kept (2 refused: not the process's own; 74 past 8 a process)" \
	< "$T_TMP/tids.json" || fail "not 8 threads at most, or a foreign thread kept"
$Q gpu_status_never "CPU time of 7 launching threads" < "$T_TMP/tids.json" || fail "a foreign thread was kept"

finish
