# SPDX-License-Identifier: GPL-2.0-only
# test-lane: quiet
# Several xputops at once, issue 24: the collector collects what every
# attached xputop needs (the widest -p, the highest -F, exact GPU tracing if
# any asks, the shortest -d) and each shows its own view at its own -d; a
# client that does not read is cut off, the dictionary it is sent included,
# and one past the last place is turned away and counted.  Measures sampling
# rates, refresh intervals and RSS: runs alone.  Needs root.
. tests/lib.sh
need_root
. tests/share_lib.sh

t the_agents_data_is_unchanged_when_a_narrower_xputop_started_first
xrun narrow -p "$B1" -F 19
wait_json "$T_TMP/narrow.json"
xrun agent --window 60 --prometheus 127.0.0.1:0
wait_json "$T_TMP/agent.json"
sleep 6
# What Prometheus would scrape from the agent: both processes, at 99 Hz.
ADDR=$(sed -n 's|^xputop: metrics at http://\(.*\)/metrics$|\1|p' "$T_TMP/agent.err")
curl -sf "http://$ADDR/metrics" > "$T_TMP/agent.prom" || fail "the agent's /metrics did not answer ($ADDR)"
grep -q "^xputop_cpu_sample_frequency_hertz 99$" "$T_TMP/agent.prom" ||
	fail "the agent's metrics are not at 99 Hz: $(grep sample_frequency "$T_TMP/agent.prom")"
for b in $B1 $B2; do
	grep -q "^xputop_process_cpu_samples_total{pid=\"$b\"" "$T_TMP/agent.prom" ||
		fail "the agent's metrics have no series for pid $b: $(grep -c process_cpu_samples "$T_TMP/agent.prom") series"
done
last agent 's["collection"]["by"] == "collector" and s["collection"]["sample_hz"] == 99 and s["collection"]["all_processes"]'
last agent "any(p['pid'] == $B2 for p in s['cpu']) and any(p['pid'] == $B1 for p in s['cpu'])"
# Two busy programs on the CPUs: about 99 samples a second on each CPU (99 a
# 0.5 s refresh on two), where 19 Hz would give at most 19.
last agent "sum(x['cpu_info']['samples_tick'] for x in S[-4:]) / 4 > 60"
last agent "s['cpu_info']['hz'] == 99"

t the_narrower_xputop_still_shows_only_its_process_at_its_own_rate
last narrow "[p['pid'] for p in s['cpu']] == [$B1]"
last narrow "s['cpu_info']['hz'] == 19 and s['collection']['sample_hz'] == 99 and s['collection']['shown_hz'] == 19"
# Thinned to 19 a second: at most 19 (plus a little for the edges) per second of run.
last narrow "all(x['cpu_info']['samples_tick'] <= 19 * 0.5 * 1.3 + 2 for x in S[-6:])"
xstop agent

t the_collector_narrows_back_when_its_client_leaves
sleep 2
last narrow "s['collection']['sample_hz'] == 19 and not s['collection']['all_processes']"

xstop narrow
# The rest needs no busy programs: the CPUs to the other suites.
kill "$B1" "$B2" 2> /dev/null

t a_client_that_asks_for_exact_gpu_tracing_gets_it_and_says_so
xrun gcol
wait_json "$T_TMP/gcol.json"
xrun gcli --gpu-exact --window 60
wait_json "$T_TMP/gcli.json"
within 20 holds gcol "s['collection']['gpu_mode'] == 'exact'"
within 20 holds gcli "s['collection']['gpu_mode'] == 'exact'"
last gcli "s['collection']['gpu_mode'] == 'exact' and s['collection']['gpu_exact_asked']"
last gcol "s['collection']['gpu_mode'] == 'exact' and not s['collection']['gpu_exact_asked']"
# Every kernel the stand-in runs (as uid 65534, through the injection
# library and the collector) is in the client's view, exact to the call.
as_nobody "$STANDIN" "$FAKE" 2 > "$T_TMP/expected" 2> "$T_TMP/standin.err" || fail "stand-in failed: $(cat "$T_TMP/standin.err")"
within 20 sh -c '$0 gpu_kernels "$1" < "$2"' "$Q" "$T_TMP/expected" "$T_TMP/gcli.json"
$Q gpu_kernels "$T_TMP/expected" < "$T_TMP/gcli.json" || fail "the client's kernels are not exact"
xstop gcli
within 20 holds gcol "s['collection']['gpu_mode'] == 'sampled'"
last gcol "s['collection']['gpu_mode'] == 'sampled'"

t a_client_never_claims_exact_while_the_collector_traces_sampled
xrun gcli2
wait_json "$T_TMP/gcli2.json"
sleep 2
last gcli2 "s['collection']['gpu_mode'] == 'sampled' and s['gpu']['tracing'].get('mode') == 'sampled'"
xstop gcli2
xstop gcol

t twenty_clients_that_never_read_leave_the_collector_bounded_and_four_are_turned_away
# A dictionary of several MB: the agent samples at 4999 Hz a program that
# runs code spread over 100,000 functions of a generated library (a new
# stack almost every sample).
if ! python3 tests/bigsym.py 100000 | as -o "$T_TMP/big.o" - || ! ld -shared -o "$T_TMP/libbigsym.so" "$T_TMP/big.o"; then
	fail "cannot generate the library (python3, as, ld)"
fi
kill "$B1" "$B2" 2> /dev/null	# the CPUs to the program with many stacks
"$OUT/tests/progs/bigsym_caller" "$T_TMP/libbigsym.so" 60 &
BC=$!
# (a sanitizer build: ASAN's quarantine would hold freed backlogs for a while: kept small)
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=8" xrun big --window 60 -d 1 -F 4999
wait_json "$T_TMP/big.json"
# What a client is sent on attaching: the dictionary, then the stream (one
# reading client, 1 s); until it is several MB, which takes longer where
# the program gets less of the CPUs.
i=0
while [ $i -lt 24 ]; do
	sleep 2
	dict=$(python3 - "${XPUTOP_SOCKET%/*}/share.sock" <<-'PY'
		import socket, sys, time
		s = socket.socket(socket.AF_UNIX)
		s.connect(sys.argv[1])
		s.settimeout(0.2)
		n, end = 0, time.time() + 1
		while time.time() < end:
		    try:
		        b = s.recv(1 << 20)
		    except socket.timeout:
		        continue
		    if not b:
		        break
		    n += len(b)
		print(n)
		PY
	)
	[ "$dict" -gt 2000000 ] && break
	i=$((i + 1))
done
BIG_DROPPED="(s['collection']['clients']['attached'] == 0 and
	s['collection']['clients']['dropped_not_reading'] >= 10)"
rss() { awk '/VmRSS/ { print $2 }' "/proc/$P_big/status"; }
sleep 2
before=$(rss)
python3 - "${XPUTOP_SOCKET%/*}/share.sock" <<-'PY' &
	import socket, sys, time
	socks = []
	for i in range(20):
	    s = socket.socket(socket.AF_UNIX)
	    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
	    s.connect(sys.argv[1])
	    socks.append(s)
	time.sleep(120)
	PY
HOLD=$!
# Held until the collector has dropped them (each 10 s after it last sent it
# anything: later where it attached and sent the dictionary late, on a
# loaded machine) or for 60 s, and for 12 s at least, the RSS read meanwhile.
peak=0
i=0
while [ $i -lt 30 ]; do
	sleep 2
	r=$(rss)
	[ "$r" -gt "$peak" ] && peak=$r
	i=$((i + 1))
	[ $i -ge 6 ] && holds big "$BIG_DROPPED" 2> /dev/null && break
done
kill $HOLD 2> /dev/null
wait $HOLD 2> /dev/null
sleep 2
after=$(rss)
echo "  first second a client is sent: $dict bytes; RSS (KiB): before $before, peak with 20 non-reading clients $peak, after $after" >&2
[ "$dict" -gt 2000000 ] || fail "the dictionary is not several MB ($dict bytes in the first second)"
# The bound: the 128 MiB of all backlogs, with the allocator's slack.
awk -v b="$before" -v d="$peak" 'BEGIN { exit !(d - b < 128 * 1024 + 32 * 1024) }' || fail "RSS grew $before -> $peak KiB"
last big "s['collection']['by'] == 'own probes'"
# 16 attach, the others are turned away; a client dropped for the total cap
# frees its place for one still connecting, so how many of each varies.
last big "s['collection']['clients']['turned_away_full'] >= 1 and s['collection']['clients']['turned_away_by_uid'] == [{'uid': 0, 'count': s['collection']['clients']['turned_away']}]"
last big "$BIG_DROPPED"
xstop big
kill "$BC" 2> /dev/null
wait "$BC" 2> /dev/null

kill "$B1" "$B2" 2> /dev/null
finish
