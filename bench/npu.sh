#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# NPU probes under load, next to the NPU tutorial's bpftrace script.
#
#   sudo bench/npu.sh [BUILD_DIR]        (ROUNDS=3 SECS=3 RATE=100000 IOCTL_SECS=5)
#
# 1. Driver probes.  The stand-in driver (tests/progs/npu_driver rate 0)
#    submits and completes jobs as fast as it can for SECS seconds: three
#    probed driver calls a job.  It runs alone, traced by xputop (the ivpu_*
#    programs attached as uprobes with --npu-probe-binary), and traced by the
#    tutorial's script attached the same way, its output going to a file:
#        bpftrace -e 'uprobe:DRV:ivpu_* { printf("%-10llu %-40s\n",
#            nsecs / 1000000, probe); @calls[probe] = count(); }'
#    Also traced by xputop with --npu-no-latency (entry probes only, no
#    return probes: what timing each call entry to return costs).
#    In rotating order, ROUNDS times.  The workload's slowdown is its time per
#    call traced over alone (CPU time of the driver: the probes run in it).
#    Also: the highest rate the storm reaches under xputop, and whether
#    xputop counted every call (counted + dropped = issued) and dropped none.
# 2. The ioctl path: RATE ioctls a second carrying DRM_IOCTL_IVPU_* numbers
#    from tests/progs/npu_ioctl on a node given with --npu-dev (the device of
#    /dev/full, so every call fails fast with ENOTTY), alone then under
#    `xputop -b -j --npu-dev NODE`: xputop must count every one, drop
#    nothing, and stay cheap (ioctls are counted in a BPF map, not a ring).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
DRV=$(realpath "$OUT/tests/progs/npu_driver")
GEN=$OUT/tests/progs/npu_ioctl
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-3}
RATE=${RATE:-100000}
IOCTL_SECS=${IOCTL_SECS:-5}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
command -v bpftrace > /dev/null || { echo "bench: bpftrace is missing (sudo make deps)" >&2; exit 1; }

# ---- 1. driver probes ----

# storm CONFIG: one traced (or not) storm; appends
# "calls wall_ns cpu_ns counted dropped" to $TMP/CONFIG.
storm() {
	case $1 in
	xputop|xputop_nolat)
		nolat=; [ "$1" = xputop_nolat ] && nolat=--npu-no-latency
		"$X" -b -j -d 1 --window 600 $nolat --npu-probe-binary "$DRV" > "$TMP/x.json" 2> "$TMP/x.err" &
		tool=$!
		wait_for "$TMP/x.json" ""
		# A process that starts within about two seconds of the probes
		# attaching loses most of them (see bench/RESULTS.md): settle first.
		sleep 3 ;;
	bpftrace)
		bpftrace -e "uprobe:$DRV:ivpu_* { printf(\"%-10llu %-40s\\n\", nsecs / 1000000, probe);
			@calls[probe] = count(); }" > "$TMP/bt.out" 2>&1 &
		tool=$!
		wait_for "$TMP/bt.out" Attaching
		sleep 3 ;;
	esac
	"$DRV" rate 0 "$SECS" > "$TMP/drv"
	set -- $1 $(awk '{ print $2, $4, $6 }' "$TMP/drv")
	case $1 in
	alone)
		echo "$2 $3 $4 $2 0" >> "$TMP/alone" ;;
	xputop|xputop_nolat)
		sleep 2	# the refresh after the storm has read everything
		stop $tool
		tail -1 "$TMP/x.json" | python3 -c "
import json, sys
s = json.loads(sys.stdin.read())
j, i = s['npu']['jobs'], s['npu']['ipc']
print('$2 $3 $4', j['submitted_total'] + j['done_total'] + i['rx_total'], s['dropped'])" >> "$TMP/$1" ;;
	bpftrace)
		stop $tool	# SIGINT: it prints @calls, then exits
		lines=$(grep -c ' uprobe:' "$TMP/bt.out" || true)
		lost=$(awk '/^Lost [0-9]+ events/ { n += $2 } END { print n + 0 }' "$TMP/bt.out")
		echo "$2 $3 $4 $lines $lost" >> "$TMP/bpftrace" ;;
	esac
}

CONFIGS="alone xputop xputop_nolat bpftrace"
for c in $CONFIGS; do : > "$TMP/$c"; done
echo "== stand-in driver storm (3 probed calls a job, as fast as it goes) for ${SECS}s, $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	order=$(echo $CONFIGS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }')
	for c in $order; do storm $c; done
	printf 'round %d:' "$r"
	for c in $CONFIGS; do
		tail -1 "$TMP/$c" | awk -v c=$c '{ printf " %s %.0f calls/s %.0f ns cpu/call (%d seen, %d lost)", c,
			$1 * 1e9 / $2, $3 / $1, $4, $5 }'
	done
	echo
done

med() { awk "{ print $2 }" "$TMP/$1" | median; }
echo
echo "== per probed call (medians over rounds)"
for c in $CONFIGS; do
	printf '%-9s %9.0f calls/s  %7.0f ns CPU/call  seen/issued %.6f  lost %s\n' $c "$(med $c '$1 * 1e9 / $2')" \
		"$(med $c '$3 / $1')" "$(med $c '$4 / $1')" "$(awk '{ print $5 }' "$TMP/$c" | sort -n | tail -1)"
done
ns_a=$(med alone '$3 / $1')
ns_x=$(med xputop '$3 / $1')
ns_b=$(med bpftrace '$3 / $1')
row "stand-in driver storm traced: slowdown (CPU per call)" \
	"x$(fmt %.1f "$(awk -v x="$ns_x" -v a="$ns_a" 'BEGIN { print x / a }')") ($(fmt %.0f "$ns_x") ns/call)" \
	"tutorial bpftrace x$(fmt %.1f "$(awk -v x="$ns_b" -v a="$ns_a" 'BEGIN { print x / a }')") ($(fmt %.0f "$ns_b") ns/call)" \
	"x$(fmt %.2f "$(awk -v x="$ns_x" -v b="$ns_b" 'BEGIN { print x / b }')")" "$(verdict "$ns_x" le "$ns_b")"
ns_n=$(med xputop_nolat '$3 / $1')
row "function latency (return probes): CPU per call, timed / --npu-no-latency" \
	"$(fmt %.0f "$ns_x") / $(fmt %.0f "$ns_n") ns (x$(fmt %.2f "$(awk -v x="$ns_x" -v n="$ns_n" 'BEGIN { print x / n }')"))" \
	"calls/s $(fmt %.0f "$(med xputop '$1 * 1e9 / $2')") / $(fmt %.0f "$(med xputop_nolat '$1 * 1e9 / $2')")" "-" "-"
rate=$(med xputop '$1 * 1e9 / $2')
short=$(awk '{ print $1 - $4 - $5 }' "$TMP/xputop" | sort -n | tail -1)
drops=$(awk '{ print $5 }' "$TMP/xputop" | sort -n | tail -1)
row "live ingest: uprobe storm at its top rate, ring records/s" \
	"$(fmt %.0f "$rate")/s; dropped $drops, uncounted $short" "goal: 0 dropped" "-" \
	"$(verdict "$((drops + short))" le 0)"

# ---- 2. the ioctl path ----

mknod "$TMP/accel0" c 1 7	# /dev/full's device: every ioctl fails fast with ENOTTY

# gen_run: runs the ioctl generator; prints "issued cpu_ns pid".
gen_run() {
	"$GEN" "$TMP/accel0" rate "$RATE" "$IOCTL_SECS" > "$TMP/gen.out" &
	g=$!
	sleep 0.2
	c0=$(cpu_ns $g)
	last=$c0
	while kill -0 $g 2> /dev/null; do
		c=$(cpu_ns $g)
		[ "${c:-0}" -gt 0 ] && last=$c
		sleep 0.2
	done
	wait $g
	echo "$(awk '{ print $4 }' "$TMP/gen.out") $((last - c0)) $(awk '{ print $2 }' "$TMP/gen.out")"
}

echo
echo "== ioctl path: $RATE ioctls/s for ${IOCTL_SECS}s, alone then under xputop, $ROUNDS rounds"
: > "$TMP/rows"
for r in $(seq 1 "$ROUNDS"); do
	set -- $(gen_run)
	alone_issued=$1 alone_cpu=$2
	rm -f "$TMP/i.json"
	"$X" -b -j -d 1 --window 600 --npu-dev "$TMP/accel0" > "$TMP/i.json" 2> "$TMP/i.err" &
	xp=$!
	wait_for "$TMP/i.json" ""
	x0=$(cpu_ns $xp)
	set -- $(gen_run)
	issued=$1 gen_cpu=$2 gpid=$3
	x1=$(cpu_ns $xp)
	sleep 2	# two more refreshes: the last counts are read
	stop $xp
	set -- $(tail -1 "$TMP/i.json" | python3 -c "
import json, sys
s = json.loads(sys.stdin.read())
print(sum(r['count'] for r in s['npu']['calls'] if r['pid'] == $gpid and r['api'] == 'ioctl'), s['dropped'])")
	echo "$issued $IOCTL_SECS $((x1 - x0)) $1 $2 $alone_issued $alone_cpu $gen_cpu" >> "$TMP/rows"
	printf 'round %d: %d ioctls issued, %d counted, %d dropped; xputop %.2f%% of a core\n' "$r" \
		"$issued" "$1" "$2" "$(echo "($x1 - $x0) / 10000000 / $IOCTL_SECS" | bc -l)"
done
rmed() { awk "{ print $1 }" "$TMP/rows" | median; }
ratio=$(rmed '$4 / $1')
idrops=$(awk '{ print $5 }' "$TMP/rows" | sort -n | tail -1)
pcpu=$(rmed '$3 / 1e7 / $2')
printf '%-44s %s\n' "ioctls/s reached" "$(fmt %.0f "$(rmed '$1 / $2')")"
printf '%-44s %s\n' "generator CPU per ioctl alone / traced (ns)" \
	"$(fmt %.0f "$(rmed '$7 / $6')") / $(fmt %.0f "$(rmed '$8 / $1')")"
row "ioctl path at $(fmt %.0f "$(rmed '$1 / $2')")/s: counted/issued, dropped, CPU" \
	"$(fmt %.6f "$ratio"), $idrops, $(fmt %.2f "$pcpu")% of a core" "goal: 1, 0, < 10%" "-" \
	"$(awk -v r="$ratio" -v d="$idrops" -v c="$pcpu" 'BEGIN { print r == 1 && d == 0 && c < 10 ? "ok" : "MISS" }')"
