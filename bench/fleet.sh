#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What the fleet exporters cost: xputop serving Prometheus metrics (scraped
# every second) and writing pprof profiles every second, against the same
# xputop without them, side by side on the same machine.
#
#   sudo bench/fleet.sh [BUILD_DIR]        (ROUNDS=5 SECS=10)
#
# Four configurations of `xputop -b` (live, sampling this machine at 99 Hz,
# the default refresh of 1 s), alternated in rounds with the order rotating:
#   plain     no exporter
#   prom      --prometheus, curl scraping /metrics every second
#   pprof     --pprof DIR --pprof-interval 1
#   both      the two
# Cost: CPU time of xputop's process (all threads, /proc/PID/schedstat) over
# SECS seconds after 3 s of start-up, as % of one core; the exporters' cost
# is the difference from "plain" in the same round (medians over rounds).
# Because the machine is shared and that difference is small against what
# sampling it costs, xputop's own account is printed too: the refresh loop's
# CPU time in each exporter (xputop_exporter_cpu_seconds_total, from the last
# scrape of "both"), which leaves out only the server's thread.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-10}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }

# measure CONFIG: prints "cost%" (and leaves the last scrape in $TMP/scrape)
measure() {
	mkdir -p "$TMP/profiles"
	rm -f "$TMP"/profiles/*
	case $1 in
	plain) args= ;;
	prom) args="--prometheus 0" ;;
	pprof) args="--pprof $TMP/profiles --pprof-interval 1" ;;
	both) args="--prometheus 0 --pprof $TMP/profiles --pprof-interval 1" ;;
	esac
	# shellcheck disable=SC2086
	"$X" -b $args > /dev/null 2> "$TMP/err" &
	pid=$!
	sleep 3
	addr=$(sed -n 's|^xputop: metrics at http://\(.*\)/metrics$|\1|p' "$TMP/err")
	scraper=
	if [ -n "$addr" ]; then
		(while :; do curl -s -o "$TMP/scrape" "http://$addr/metrics"; sleep 1; done) &
		scraper=$!
	fi
	t0=$(cpu_ns $pid)
	sleep "$SECS"
	t1=$(cpu_ns $pid)
	if [ -n "$scraper" ]; then
		kill $scraper
		wait $scraper 2> /dev/null || true
		curl -s -o "$TMP/scrape" "http://$addr/metrics"
	fi
	stop $pid
	echo "($t1 - $t0) / 10000000 / $SECS" | bc -l
}

CONFIGS="plain prom pprof both"
for c in $CONFIGS; do : > "$TMP/$c"; done
: > "$TMP/own"
echo "== xputop -b's CPU over ${SECS}s (% of one core) with and without the exporters, $ROUNDS rounds"
echo "   (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq 1 "$ROUNDS"); do
	order=$(echo $CONFIGS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }')
	for c in $order; do
		measure $c >> "$TMP/$c"
		if [ $c = both ]; then	# the refresh loop's own account of its exporters, per second
			awk -v s="$SECS" '/^xputop_exporter_cpu_seconds_total/ { split($1, a, "\""); v[a[2]] = $2 }
				/^xputop_refreshes_total/ { n = $2 }
				END { printf "%s %s %s\n", v["prometheus"] / n * 100, v["pprof"] / n * 100, n }' \
				"$TMP/scrape" >> "$TMP/own"
		fi
	done
	printf 'round %d:' "$r"
	for c in $CONFIGS; do printf ' %s %.3f' $c "$(tail -1 "$TMP/$c")"; done
	echo
done

m() { median < "$TMP/$1"; }
base=$(m plain)
echo
echo "== medians (spread); the exporters' cost is the difference from plain"
for c in $CONFIGS; do
	printf '%-6s %7.3f%% (%s)  %+.3f%% of a core  ratio %.3f\n' $c "$(m $c)" "$(spread %.3f < "$TMP/$c")" \
		"$(echo "$(m $c) - $base" | bc -l)" "$(echo "$(m $c) / $base" | bc -l)"
done
prom_own=$(awk '{ print $1 }' "$TMP/own" | median)
pprof_own=$(awk '{ print $2 }' "$TMP/own" | median)
printf '\nxputop'"'"'s own account (refresh loop, per refresh of 1 s): metrics %.4f%%, pprof %.4f%% of a core\n' \
	"$prom_own" "$pprof_own"
cost=$(echo "$(m both) - $base" | bc -l)
row "metrics scraped every 1 s + pprof every 1 s (% of a core)" \
	"$(fmt %+.3f "$cost") ($(fmt %.3f "$base") -> $(fmt %.3f "$(m both)")); own account $(fmt %.3f "$(echo "$prom_own + $pprof_own" | bc -l)")" \
	"goal <= 0.5" "x$(fmt %.3f "$(echo "$(m both) / $base" | bc -l)") of plain" "$(verdict "$cost" le 0.5)"
