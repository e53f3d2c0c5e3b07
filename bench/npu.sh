#!/bin/sh
# NPU ioctl path under load: 100k ioctls/s carrying IVPU command numbers from
# tests/progs/npu_ioctl on a node given with --npu-dev; xputop must count
# every one, drop nothing and stay under 10% of a core.
#
#   sudo bench/npu.sh [BUILD_DIR]        (RATE=100000 SECS=10 ROUNDS=3)
#
# Per round: the generator alone, then the generator under `xputop -b -j
# --npu-dev NODE`.  Reported: the rate reached, xputop's CPU time over the
# run as % of one core (from /proc/PID/schedstat), records dropped, ioctls
# counted / issued, and the generator's CPU time per ioctl alone and under
# xputop (the in-kernel probe cost, paid by the calling process).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
GEN=$OUT/tests/progs/npu_ioctl
RATE=${RATE:-100000}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
mknod "$TMP/accel0" c 1 7	# /dev/full's device: every ioctl fails fast with ENOTTY

# cpu_ns PID: time PID has run, in ns.
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat" 2> /dev/null || echo 0; }

# gen_run: runs the generator; prints "issued cpu_ns".
gen_run() {
	"$GEN" "$TMP/accel0" rate "$RATE" "$SECS" > "$TMP/gen.out" &
	g=$!
	sleep 0.2
	c0=$(cpu_ns $g)
	last=$c0
	while kill -0 $g 2> /dev/null; do
		c=$(cpu_ns $g)
		[ "$c" -gt 0 ] && last=$c
		sleep 0.2
	done
	wait $g
	echo "$(awk '{ print $4 }' "$TMP/gen.out") $((last - c0)) $(awk '{ print $2 }' "$TMP/gen.out")"
}

: > "$TMP/rows"
for r in $(seq 1 "$ROUNDS"); do
	set -- $(gen_run)
	alone_issued=$1 alone_cpu=$2
	rm -f "$TMP/x.json"	# the wait below must not see the last round's output
	"$X" -b -j -d 1 --window 600 --npu-dev "$TMP/accel0" > "$TMP/x.json" 2> "$TMP/x.err" &
	xp=$!
	while [ ! -s "$TMP/x.json" ]; do sleep 0.1; done	# its first refresh: attached
	x0=$(cpu_ns $xp)
	set -- $(gen_run)
	issued=$1 gen_cpu=$2 gpid=$3
	x1=$(cpu_ns $xp)
	sleep 2	# two more refreshes: the last counts are read
	kill -INT $xp
	wait $xp || true
	counted=$(tail -1 "$TMP/x.json" | python3 -c "
import json, sys
s = json.loads(sys.stdin.read())
print(sum(r['count'] for r in s['npu']['calls'] if r['pid'] == $gpid and r['api'] == 'ioctl'), s['dropped'])")
	set -- $counted
	echo "$issued $SECS $((x1 - x0)) $1 $2 $alone_issued $alone_cpu $gen_cpu" >> "$TMP/rows"
	printf 'round %d: %d ioctls issued, %d counted, %d dropped; xputop %.2f%% of a core\n' "$r" \
		"$issued" "$1" "$2" "$(echo "($x1 - $x0) / 10000000 / $SECS" | bc -l)"
done

echo
echo "== summary (median of $ROUNDS rounds, $RATE ioctls/s for ${SECS}s)"
med() { awk "{ print $1 }" "$TMP/rows" | median; }
printf '%-52s %s\n' "ioctls/s reached" "$(med '$1 / $2' | xargs printf '%.0f')"
printf '%-52s %s\n' "xputop CPU (% of one core)" "$(med '$3 / 1e7 / $2' | xargs printf '%.2f')"
printf '%-52s %s\n' "counted / issued" "$(med '$4 / $1' | xargs printf '%.6f')"
printf '%-52s %s\n' "records dropped (max over rounds)" "$(awk '{ print $5 }' "$TMP/rows" | sort -n | tail -1)"
printf '%-52s %s\n' "generator CPU per ioctl alone (ns)" "$(med '$7 / $6' | xargs printf '%.0f')"
printf '%-52s %s\n' "generator CPU per ioctl under xputop (ns)" "$(med '$8 / $1' | xargs printf '%.0f')"
