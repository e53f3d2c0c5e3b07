# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the metrics suites (tests/cli/metrics*.sh) after tests/lib.sh:
# an xputop serving --prometheus on a free port, scraped and stopped.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# serve NAME ARGS...: starts xputop with --prometheus on a free port, sets X
# (its pid) and ADDR (host:port) once it answers /metrics (503 until its
# first refresh).
serve() {
	n=$1
	shift
	"$XPUTOP" --prometheus 0 "$@" > "$T_TMP/$n.out" 2> "$T_TMP/$n.err" &
	X=$!
	ADDR=""
	for _ in $(seq 100); do
		ADDR=$(sed -n 's|^xputop: metrics at http://\(.*\)/metrics$|\1|p' "$T_TMP/$n.err")
		[ -n "$ADDR" ] && break
		sleep 0.1
	done
	[ -n "$ADDR" ] || fail "xputop did not say where it serves: $(cat "$T_TMP/$n.err")"
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://$ADDR/metrics" && return 0
		sleep 0.1
	done
	fail "xputop at $ADDR did not serve metrics: $(cat "$T_TMP/$n.err")"
}
scrape() { curl -sf "$@" "http://$ADDR/metrics"; }
# stop NAME: ends xputop $X (it serves until killed) and checks it ended as asked.
stop() {
	kill -TERM "$X"
	wait "$X"
	rc=$?
	[ "$rc" -eq 143 ] || fail "xputop ended with $rc, not 143 (SIGTERM): $(cat "$T_TMP/$1.err")"
}
