#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The soak of issue 6: an hour of replay at a high rate plus live sampling,
# side by side, with both xputops' memory sampled all along.
#
#   sudo bench/soak.sh [BUILD] [SECONDS] [OUTDIR]    (defaults: build 3600 /tmp/xputop-soak)
#
# - replay: bench/genrec writes SECONDS of a busy 32-CPU machine (20,000
#   events a second, 131,072 distinct stacks, processes coming and going) and
#   `xputop -r FILE -b -j -d 1` replays it at the recorded pace, one refresh a
#   second, for the whole run: 20,000 events/s through the models for an hour.
# - live: `xputop -b -j -F 999 -d 1` samples this machine at 999 Hz while a
#   churn of short-lived processes (fork, exec, exit, new stacks) runs.
# Every 10 s both RSS figures go to OUTDIR/rss.tsv, and every snapshot's
# dict and memory objects to OUTDIR/replay.dict and live.dict; at the end a summary
# compares the first and last tenth of the run (flat memory = bounded).
set -eu
OUT=${1:-build}
SECS=${2:-3600}
DIR=${3:-/tmp/xputop-soak}
RATE=${SOAK_RATE:-20000}
X=$OUT/xputop
[ -x "$X" ] || { echo "soak: build first: make OUTPUT=$OUT" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (live sampling)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$(dirname "$0")/.."

# The recording generator, against this build's core.
LIBBPF_A=$(pkg-config --variable=libdir libbpf)/libbpf.a
cc -O2 -D_GNU_SOURCE -DXPU_VERSION='"soak"' -Icore -Iinject -I"$OUT" bench/genrec.c "$OUT/libxpucore.a" \
	"$LIBBPF_A" -liberty -ldw -lelf -lz -llzma -lbz2 -lm -o "$DIR/genrec"
REC=${SOAK_REC:-$DIR/soak.xpr}	# SOAK_REC=FILE reuses a recording written before
if [ ! -s "$REC" ]; then
	echo "soak: writing $SECS s of recording at $RATE events/s"
	"$DIR/genrec" -s "$SECS" -r "$RATE" "$REC" | tee "$DIR/genrec.out"
fi

# A churn of short-lived processes with stacks of their own.
churn() {
	end=$(($(date +%s) + SECS))
	while [ "$(date +%s)" -lt "$end" ]; do
		"$OUT/tests/progs/busy" 0.2 > /dev/null 2>&1
		"$OUT/tests/progs/forker" 0.1 "$OUT/tests/progs/busy" 0.1 > /dev/null 2>&1
		head -c 200000 /dev/urandom | xz -1 > /dev/null
		sleep 0.2
	done
}
churn &
CHURN=$!

# Each snapshot's dict and memory objects are kept (replay.dict, live.dict):
# what the dictionary and the tables hold, and the heap against the RSS.
keep() { LC_ALL=C grep --line-buffered -o '"dict":{[^}]*},"memory":{[^}]*}' > "$1" || :; }
rm -f "$DIR/replay.pid" "$DIR/live.pid"
{ "$X" -r "$REC" -b -j -d 1 2> "$DIR/replay.err" & echo $! > "$DIR/replay.pid"; wait; } | keep "$DIR/replay.dict" &
{ "$X" -b -j -F 999 -d 1 2> "$DIR/live.err" & echo $! > "$DIR/live.pid"; wait; } | keep "$DIR/live.dict" &
while [ ! -s "$DIR/replay.pid" ] || [ ! -s "$DIR/live.pid" ]; do sleep 0.1; done
R=$(cat "$DIR/replay.pid")
L=$(cat "$DIR/live.pid")
trap 'kill $R $L $CHURN 2> /dev/null' EXIT INT TERM

kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0; }
printf 't_s\treplay_rss_kb\treplay_hwm_kb\tlive_rss_kb\tlive_hwm_kb\n' > "$DIR/rss.tsv"
t=0
while [ $t -lt "$SECS" ] && kill -0 $L 2> /dev/null; do
	sleep 10
	t=$((t + 10))
	printf '%s\t%s\t%s\t%s\t%s\n' $t "$(kb $R VmRSS)" "$(kb $R VmHWM)" "$(kb $L VmRSS)" "$(kb $L VmHWM)" >> "$DIR/rss.tsv"
done
kill $R $L $CHURN 2> /dev/null || :
wait 2> /dev/null || :
trap - EXIT INT TERM

# First and last tenth of the run: mean RSS of each, and the peak.
awk -F'\t' -v secs="$SECS" 'NR > 1 {
	n++; t[n] = $1; r[n] = $2; l[n] = $4; if ($3 > rh) rh = $3; if ($5 > lh) lh = $5
} END {
	k = int(n / 10); if (k < 1) k = 1
	for (i = 1; i <= k; i++) { r0 += r[i]; l0 += l[i]; r1 += r[n - k + i]; l1 += l[n - k + i] }
	printf "soak of %d s (%d samples)\n", secs, n
	printf "  replay at the recorded pace: RSS %.1f MB in the first tenth, %.1f MB in the last, peak %.1f MB\n", r0 / k / 1024, r1 / k / 1024, rh / 1024
	printf "  live sampling at 999 Hz:     RSS %.1f MB in the first tenth, %.1f MB in the last, peak %.1f MB\n", l0 / k / 1024, l1 / k / 1024, lh / 1024
}' "$DIR/rss.tsv" | tee "$DIR/summary.txt"

# What the memory is made of, at each quarter of the run: the heap in use,
# the dictionary's stacks (and how many sweeps freed), the stack entries.
for w in replay live; do
	awk -v who="$w" -F'[:,{}]' '{
		for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		n++; h[n] = v["\"heap_used_kb\""]; s[n] = v["\"stacks\""]; sw[n] = v["\"sweeps\""]
		e[n] = v["\"stack_entries\""] + v["\"gpu_stack_entries\""]
	} END {
		if (!n) exit
		printf "  %s: heap in use / dictionary stacks (sweeps) / stack entries at each quarter:\n   ", who
		for (q = 1; q <= 4; q++) { i = int(n * q / 4); printf " %.1f MB / %d (%d) / %d;", h[i] / 1024, s[i], sw[i], e[i] }
		printf "\n"
	}' "$DIR/$w.dict"
done | tee -a "$DIR/summary.txt"
