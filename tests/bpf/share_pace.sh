# SPDX-License-Identifier: GPL-2.0-only
# test-lane: quiet
# test-san: skip (refresh intervals and sample counts per refresh; the
# sharing paths run under the sanitizers in share_needs.sh and tests/tui/share.sh)
# Several xputops at once, issue 24: each refreshes at its own -d while the
# collector's stream ticks at the shortest; what a client woke (pids in the
# kernel's filter, a GPU library) goes back to sleep when it leaves.  Measures refresh intervals:
# runs alone.  Needs root.
. tests/lib.sh
need_root
. tests/share_lib.sh

t pids_a_client_asked_for_leave_the_kernel_filter_when_it_leaves
xrun narrow -p "$B1"
wait_json "$T_TMP/narrow.json"
# pidmap NAME: the pids in the CPU sampler's kernel filter of xputop NAME (its map "pids", found through its fds).
pidmap() {
	eval "p=\$P_$1"
	for id in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$p"/fdinfo/* 2> /dev/null | sort -u); do
		bpftool -j map show id "$id" 2> /dev/null | grep -q '"name":"pids"' || continue
		bpftool -j map dump id "$id" | python3 -c '
import json, sys
print(" ".join(str(int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")) for e in json.load(sys.stdin)))'
	done
}

xrun wide -p "$B2"
wait_json "$T_TMP/wide.json"
sleep 2
case " $(pidmap narrow) " in *" $B2 "*) ;; *) fail "the client's pid $B2 is not in the filter: $(pidmap narrow)" ;; esac
xstop wide
sleep 2
case " $(pidmap narrow) " in *" $B2 "*) fail "pid $B2 stayed in the filter: $(pidmap narrow)" ;; esac
case " $(pidmap narrow) " in *" $B1 "*) ;; *) fail "the collector's own pid $B1 left the filter" ;; esac
xstop narrow

t each_xputop_refreshes_at_its_own_d_the_stream_at_the_shortest
xrun dcol -d 1
wait_json "$T_TMP/dcol.json"
xrun dfast -d 0.25
xrun dslow -d 2
wait_json "$T_TMP/dfast.json"
wait_json "$T_TMP/dslow.json"
# gaps NAME LO HI: the last refreshes of xputop NAME came LO to HI s apart.
# A refresh merges whole ticks of the stream's (0.25 s while dfast runs), so
# one that came late moves it by up to a tick: its own -d, +- a tick (beside
# other suites +-15% failed a CI run).
gaps() {
	last "$1" "all($2 <= (b['mono_ns'] - a['mono_ns']) / 1e9 <= $3 for a, b in zip(S[-3:], S[-2:]))"
}
# settled SECS: until the collector ticks every SECS (at most 20 s), then
# three more refreshes of dslow (at most 20 s): the refresh that spans the
# change, later on a loaded machine, is none of the last two gaps.
settled() {
	i=0
	until holds dcol "abs(s['collection']['interval_s'] - $1) < 0.05" 2> /dev/null || [ $i -ge 40 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	n=$(wc -l < "$T_TMP/dslow.json")
	i=0
	while [ "$(wc -l < "$T_TMP/dslow.json")" -lt $((n + 3)) ] && [ $i -lt 100 ]; do
		sleep 0.2
		i=$((i + 1))
	done
}
settled 0.25
gaps dcol 0.75 1.25
gaps dfast 0.2 0.3
gaps dslow 1.75 2.25
last dcol "abs(s['collection']['interval_s'] - 0.25) < 0.01 and s['collection']['shown_interval_s'] == 1"
last dslow "abs(s['collection']['interval_s'] - 0.25) < 0.05 and s['collection']['shown_interval_s'] == 2"
# Nothing lost in the merging: a refresh of 2 s holds twice the samples of
# one of 1 s (two busy programs at 99 Hz: about 198 a second).
last dslow "sum(x['cpu_info']['samples_tick'] for x in S[-2:]) / 2 > 300"
last dcol "150 < sum(x['cpu_info']['samples_tick'] for x in S[-3:]) / 3 < 250"
xstop dfast
settled 1
last dcol "s['collection']['interval_s'] == 1"
gaps dslow 1.8 2.2
xstop dslow
xstop dcol

t a_library_woken_for_a_client_is_stopped_when_it_leaves
xrun lcol -p "$B1" -v
wait_json "$T_TMP/lcol.json"
# (nowait: its library is dormant until a client asks for it; flat out, its rates to /dev/null)
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 60 /dev/null nowait > /dev/null \
	2> "$T_TMP/standin3.err" &
S=$!
# more_than N: lcol.err says pid S's library is left dormant more than N times.
more_than() { [ "$(grep -c "pid $S is not one -p watches" "$T_TMP/lcol.err")" -gt "$1" ]; }
# The library connects, and is left dormant: no one watches it.
within 20 grep -q "pid $S is not one -p watches: its injection library is left dormant" "$T_TMP/lcol.err"
expect_grep "pid $S is not one -p watches: its injection library is left dormant" "$T_TMP/lcol.err"
xrun lcli -p "$S"
wait_json "$T_TMP/lcli.json"
# It comes back (within 3 s when on time), and is started for the client.
within 20 holds lcli "any(p['pid'] == $S for p in s['gpu'].get('processes', []))"
last lcli "any(p['pid'] == $S for p in s['gpu'].get('processes', []))"
xstop lcli
within 20 grep -q "pid $S: no xputop watches it any more: its injection library is stopped" "$T_TMP/lcol.err"
expect_grep "pid $S: no xputop watches it any more: its injection library is stopped" "$T_TMP/lcol.err"
n=$(grep -c "pid $S is not one -p watches" "$T_TMP/lcol.err")
within 20 more_than "$n"
more_than "$n" || fail "the stopped library did not come back dormant"
xstop lcol
kill "$S" 2> /dev/null
wait "$S" 2> /dev/null

kill "$B1" "$B2" 2> /dev/null
finish
