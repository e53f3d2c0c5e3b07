# SPDX-License-Identifier: GPL-2.0-only
# /metrics and /healthz beside untrusted peers: slow and idle clients held
# by an unprivileged user (uid 65534) from other loopback addresses and from
# the scraper's own, a request dribbled byte by byte, and the health of the
# sources.  Its bound (1 s a scrape, against ~40 ms measured) holds beside
# other suites.  Needs root.
. tests/lib.sh
. tests/metrics_lib.sh
need_root
REC=tests/fixtures/fleet.xpr
PEERS=$(public tests/slowpeers.py)

# timed_scrapes N FILE: N scrapes a quarter of a second apart, "CODE SECONDS" a line.
timed_scrapes() {
	i=0
	: > "$2"
	while [ "$i" -lt "$1" ]; do
		curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}\n' "http://$ADDR/metrics" >> "$2"
		i=$((i + 1))
		sleep 0.25
	done
}
# flood NAME FROM: 1,000 slow and idle clients as uid 65534 from the addresses FROM
# for 40 scrapes (20 s at most); every scrape meanwhile is answered within 1 s.
# (setpriv itself, not as_nobody: P must be python's pid, which the TERM ends.)
flood() {
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$PEERS" 127.0.0.1 "${ADDR##*:}" 1000 \
		--from "$2" --seconds 20 > "$T_TMP/$1.peers" 2>&1 &
	P=$!
	for _ in $(seq 100); do grep -q '^ready$' "$T_TMP/$1.peers" && break; sleep 0.1; done
	grep -q '^ready$' "$T_TMP/$1.peers" || fail "the slow clients did not connect: $(cat "$T_TMP/$1.peers")"
	sleep 1
	timed_scrapes 40 "$T_TMP/$1.times"
	kill -TERM "$P" 2> /dev/null
	wait "$P" || fail "the slow clients failed: $(cat "$T_TMP/$1.peers")"
	echo "  $(tail -1 "$T_TMP/$1.peers"); slowest scrape $(sort -k2 -n "$T_TMP/$1.times" | tail -1 | cut -d' ' -f2) s"
	bad=$(awk '$1 != 200 || $2 >= 1.0' "$T_TMP/$1.times")
	[ -z "$bad" ] || fail "scrapes not answered within 1 s: $(echo "$bad" | tr '\n' ' ')"
	[ "$(wc -l < "$T_TMP/$1.times")" -eq 40 ] || fail "$(wc -l < "$T_TMP/$1.times") scrapes timed, not 40"
}
cut_count() {
	curl -sf "http://$ADDR/metrics" | awk -v r="$1" '$1 == "xputop_metrics_cut_connections_total{reason=\"" r "\"}" { print $2 }'
}

serve agent -b -d 0.5

t scrapes_are_answered_within_1s_beside_1000_slow_clients_of_other_addresses
flood others 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5
HELD=$(sed -n 's/.* held \([0-9]*\)$/\1/p' "$T_TMP/others.peers")
[ "${HELD:-0}" -ge 900 ] || fail "only ${HELD:-0} of the 1000 slow clients were held at the end: the test did not test"
[ "$(cut_count deadline)" -gt 0 ] || fail "no slow client was cut at the request deadline"

t scrapes_are_answered_within_1s_beside_1000_slow_clients_of_their_own_address
flood same 127.0.0.1
[ "$(cut_count evicted)" -gt 0 ] || fail "no connection of the flood was cut to make room"

t a_request_dribbled_byte_by_byte_is_cut_at_the_deadline
as_nobody /usr/bin/python3 - "${ADDR##*:}" > "$T_TMP/dribble.out" 2>&1 << 'EOF' || fail "$(cat "$T_TMP/dribble.out")"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.5)
t0 = time.monotonic()
for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 100:
    try:
        s.send(bytes([b]))
        if s.recv(1) == b"":
            break
    except socket.timeout:
        pass
    except OSError:
        break
took = time.monotonic() - t0
if not 4.5 <= took <= 7.5:
    sys.exit(f"cut after {took:.1f} s, not at the 5 s deadline")
EOF
stop agent

t healthz_is_200_with_each_sources_state_while_refreshes_come
serve live -b -d 0.5
curl -s -o "$T_TMP/health" -w '%{http_code}' "http://$ADDR/healthz" > "$T_TMP/health.code"
[ "$(cat "$T_TMP/health.code")" = 200 ] || fail "/healthz: $(cat "$T_TMP/health.code"): $(cat "$T_TMP/health")"
for src in cpu gpu npu nvml; do
	grep -q "^$src [a-z]*: " "$T_TMP/health" || fail "no line for $src: $(cat "$T_TMP/health")"
done
expect_grep "^cpu active: " "$T_TMP/health"
stop live

t healthz_is_503_when_a_source_failed
XPUTOP_NVML=/nonexistent/libnvidia-ml.so.1 serve failed -b -d 0.5
curl -s -o "$T_TMP/health" -w '%{http_code}' "http://$ADDR/healthz" > "$T_TMP/health.code"
[ "$(cat "$T_TMP/health.code")" = 503 ] || fail "/healthz: $(cat "$T_TMP/health.code"), not 503: $(cat "$T_TMP/health")"
expect_grep "^nvml failed: cannot load /nonexistent/libnvidia-ml.so.1" "$T_TMP/health"
stop failed

t healthz_is_503_when_refreshes_stop
serve ended -b -r "$REC" -d 0.1
for _ in $(seq 100); do grep -q "end of the recording" "$T_TMP/ended.err" && break; sleep 0.1; done
sleep 2.5
curl -s -o "$T_TMP/health" -w '%{http_code}' "http://$ADDR/healthz" > "$T_TMP/health.code"
[ "$(cat "$T_TMP/health.code")" = 503 ] || fail "/healthz: $(cat "$T_TMP/health.code"), not 503: $(cat "$T_TMP/health")"
expect_grep "^stalled: no refresh for " "$T_TMP/health"
expect_grep "^cpu active: replaying" "$T_TMP/health"
stop ended

finish
