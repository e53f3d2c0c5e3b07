#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Event ingest from a recording, and memory over an hour of events.
#
#   bench/replay.sh [BUILD_DIR]        (SECS=3600 RATE=5000 ROUNDS=2; no root needed)
#
# bench/genrec writes SECS seconds of a busy 32-CPU machine at about RATE
# events a second: 160 processes alive at a time, thousands coming and going,
# 131,072 distinct stacks, CPU samples, CUDA launches and kernels, NPU jobs,
# IPC and ioctls (see bench/genrec.c).  Then, alternated ROUNDS times:
#   pipeline   bench/replay: the recording decoded and aggregated by the
#              session and models alone, as fast as one core goes
#   xputop     xputop -b -r FILE: the same plus a text snapshot built and
#              printed at every recorded refresh (one a second: SECS of them)
# Throughput is events over CPU time (one core; this machine is shared, so
# wall time includes waiting for a CPU) and over wall time.  Memory: the peak
# RSS of `xputop -b -r`, and its RSS through the run (sampled every 0.5 s), to
# tell growth that stops from growth that does not.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
SECS=${SECS:-3600}
RATE=${RATE:-5000}
ROUNDS=${ROUNDS:-2}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "== generating $SECS s of events at $RATE/s"
"$OUT/bench/genrec" -s "$SECS" -r "$RATE" "$TMP/rec.xpr" > "$TMP/gen"
cat "$TMP/gen"
events=$(awk '{ print $2 }' "$TMP/gen")

: > "$TMP/pipeline"
: > "$TMP/xputop"
echo "== replaying it, $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	timed "$OUT/bench/replay" "$TMP/rec.xpr" >> "$TMP/pipeline"
	RSS_LOG=$TMP/rss.$r timed "$X" -b -r "$TMP/rec.xpr" >> "$TMP/xputop"
	printf 'round %d: pipeline %.1fs (cpu %.1fs)  xputop -b -r %.1fs (cpu %.1fs, peak RSS %.1f MB)\n' "$r" \
		$(tail -1 "$TMP/pipeline" | awk '{ print $1, $2 }') \
		$(tail -1 "$TMP/xputop" | awk '{ print $1, $2, $3 / 1024 }')
done

rate() { awk -v n="$events" -v k="$2" '{ print n / $k }' "$TMP/$1" | median; }
rspread() { awk -v n="$events" -v k="$2" '{ print n / $k }' "$TMP/$1" | spread %.3g; }
echo
echo "== events per second (medians; spread)"
for c in pipeline xputop; do
	printf '%-9s %9.0f per CPU second (%s)  %9.0f per wall second\n' $c "$(rate $c 2)" "$(rspread $c 2)" "$(rate $c 1)"
done
peak=$(awk '{ print $3 / 1024 }' "$TMP/xputop" | sort -g | tail -1)
# RSS at each quarter of the last run, and the growth over its second half.
last=$TMP/rss.$ROUNDS
quarters=$(awk '{ v[NR] = $2 } END {
	for (q = 1; q <= 4; q++) { i = int(NR * q / 4); printf "%s%.0f", (q > 1 ? "/" : ""), v[i ? i : 1] / 1024 } }' "$last")
growth=$(awk '{ v[NR] = $2 } END { printf "%.1f", (v[NR] - v[int(NR / 2)]) / 1024 }' "$last")
echo "xputop RSS at each quarter of the run (MB): $quarters; peak $(fmt %.1f "$peak") MB"

pr=$(rate pipeline 2)
row "replay ingest, pipeline alone (events/s on one core)" "$(fmt %.0f "$pr") ($(rspread pipeline 2))" \
	"goal >= 1,000,000" "x$(fmt %.2f "$(awk -v a="$pr" 'BEGIN { print a / 1e6 }')") of goal" "$(verdict "$pr" ge 1000000)"
xr=$(rate xputop 2)
row "replay ingest, xputop -b -r: + a snapshot a second (events/s)" "$(fmt %.0f "$xr") ($(rspread xputop 2))" \
	"goal >= 1,000,000" "x$(fmt %.2f "$(awk -v a="$xr" 'BEGIN { print a / 1e6 }')") of goal" "$(verdict "$xr" ge 1000000)"
row "peak RSS after $((SECS / 60)) min replayed, $(awk '{ print $6 }' "$TMP/gen") stacks (MB)" \
	"$(fmt %.1f "$peak"); quarters $quarters" "goal < 100, flat (2nd half +$growth)" \
	"x$(fmt %.2f "$(awk -v a="$peak" 'BEGIN { print a / 100 }')") of goal" \
	"$(awk -v p="$peak" -v g="$growth" 'BEGIN { print p < 100 && g < 0.1 * p ? "ok" : "MISS" }')"
