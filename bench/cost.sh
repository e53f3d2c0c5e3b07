#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# xputop's own cost per second at the default refresh (1 s), idle and under
# a load of 200,000 events a second, next to `top -d 1` and `perf top`.
#
#   sudo bench/cost.sh [BUILD_DIR]        (ROUNDS=3 SECS=5 RATE=200000)
#
# Cost: CPU time of the tool's process (all threads, /proc/PID/schedstat)
# over SECS seconds, as % of one core, measured after start-up (BPF load,
# kallsyms) has settled.  The tools, each doing its own job at the default
# refresh:
#   xputop -b                    batch text, sampling at 99 Hz
#   xputop -b -p 1               the same watching only init: nothing to sample,
#                                the fixed cost of refreshing (this machine is
#                                shared: "idle" above samples what others run)
#   xputop (screen)              the interactive screen, 160x50, in tmux
#   top -d 1 -b                  batch
#   perf top -F 99 -g -d 1       its screen, in tmux; sampling at xputop's rate
# The load: the stand-in NPU driver (tests/progs/npu_driver rate) making
# RATE probed driver calls a second, which xputop traces as the NPU view
# does (--npu-probe-binary: one uprobe -> BPF ring record -> event each);
# top and perf top see the same load running.  Configurations alternate in
# rounds (order rotating); medians and spread over rounds.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
DRV=$OUT/tests/progs/npu_driver
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
RATE=${RATE:-200000}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
TM="tmux -L xputop-bench"
trap 'rm -rf "$TMP"; $TM kill-server 2> /dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
command -v perf > /dev/null && command -v tmux > /dev/null || { echo "bench: needs perf and tmux" >&2; exit 1; }

# start CONFIG: starts the tool, waits until it has settled; sets $pid.
start() {
	case $1 in
	xputop|xputop-quiet|xputop-load)
		extra=
		[ $1 = xputop-quiet ] && extra="-p 1"
		[ $1 = xputop-load ] && extra="--npu-probe-binary $DRV"
		"$X" -b $extra > "$TMP/out" 2> "$TMP/err" &
		pid=$!
		wait_for "$TMP/out" "" ;;
	screen)
		$TM kill-server 2> /dev/null || true
		$TM new-session -d -x 160 -y 50 "$X"
		pid=$($TM display-message -p '#{pane_pid}') ;;
	top|top-load)
		top -d 1 -b > /dev/null &
		pid=$! ;;
	perftop|perftop-load)
		$TM kill-server 2> /dev/null || true
		$TM new-session -d -x 160 -y 50 "perf top -F 99 -g -d 1"
		pid=$($TM display-message -p '#{pane_pid}') ;;
	esac
	sleep 2	# start-up is not steady-state cost
}

finish() {
	case $1 in
	screen|perftop*) $TM kill-server 2> /dev/null || true ;;
	*) stop $pid ;;
	esac
}

# measure CONFIG: prints "cost% [calls_per_s]".
measure() {
	start $1
	load=
	case $1 in
	*-load)
		"$DRV" rate "$RATE" $((SECS + 2)) > "$TMP/drv" &
		load=$!
		sleep 1 ;;
	esac
	t0=$(cpu_ns $pid)
	sleep "$SECS"
	t1=$(cpu_ns $pid)
	if [ -n "$load" ]; then
		wait $load
		sleep 1.5	# the last refresh counts the end of the storm
	fi
	finish $1
	if [ -n "$load" ]; then
		echo "$(echo "($t1 - $t0) / 10000000 / $SECS" | bc -l) $(awk '{ print $2 * 1e9 / $4 }' "$TMP/drv")"
	else
		echo "($t1 - $t0) / 10000000 / $SECS" | bc -l
	fi
	if [ $1 = xputop-load ]; then	# what xputop saw: "N events/s - dropped D" of its last refresh
		grep '^xputop ' "$TMP/out" | tail -1 | sed 's/.* - dropped \([0-9]*\).*/\1/' >> "$TMP/dropped"
	fi
}

CONFIGS="xputop xputop-quiet screen top perftop xputop-load top-load perftop-load"
for c in $CONFIGS; do : > "$TMP/$c"; done
: > "$TMP/dropped"
echo "== CPU of each tool over ${SECS}s (% of one core), idle and under $RATE probed calls/s, $ROUNDS rounds"
echo "   (load average before: $(cut -d' ' -f1-3 /proc/loadavg): idle means nothing of ours runs)"
for r in $(seq 1 "$ROUNDS"); do
	order=$(echo $CONFIGS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }')
	for c in $order; do measure $c >> "$TMP/$c"; done
	printf 'round %d:' "$r"
	for c in $CONFIGS; do printf ' %s %.2f' $c "$(tail -1 "$TMP/$c" | awk '{ print $1 }')"; done
	echo
done

m() { awk '{ print $1 }' "$TMP/$1" | median; }
sp() { awk '{ print $1 }' "$TMP/$1" | spread %.2f; }
echo
echo "== medians (spread)"
for c in $CONFIGS; do printf '%-14s %6.2f%% (%s)\n' $c "$(m $c)" "$(sp $c)"; done
rate=$(awk '{ print $2 }' "$TMP/xputop-load" | median)
printf 'load reached: %.0f probed calls/s (median); xputop dropped at most %s\n' "$rate" \
	"$(sort -n "$TMP/dropped" | tail -1)"

xi=$(m xputop)
row "xputop idle, batch (% of a core; machine as found)" "$(fmt %.2f "$xi") ($(sp xputop))" \
	"top $(fmt %.2f "$(m top)"), perf top $(fmt %.2f "$(m perftop)"); goal < 1" \
	"x$(fmt %.2f "$(awk -v a="$xi" -v b="$(m top)" 'BEGIN { print b ? a / b : 0 }')") of top" "$(verdict "$xi" lt 1)"
xq=$(m xputop-quiet)
row "xputop idle, batch, nothing to sample (-p 1)" "$(fmt %.2f "$xq") ($(sp xputop-quiet))" "goal < 1" "-" \
	"$(verdict "$xq" lt 1)"
xs=$(m screen)
row "xputop idle, screen 160x50 (% of a core)" "$(fmt %.2f "$xs") ($(sp screen))" \
	"perf top $(fmt %.2f "$(m perftop)"); goal < 1" \
	"x$(fmt %.2f "$(awk -v a="$xs" -v b="$(m perftop)" 'BEGIN { print b ? a / b : 0 }')") of perf top" \
	"$(verdict "$xs" lt 1)"
xl=$(m xputop-load)
row "xputop under $(fmt %.0f "$rate") events/s (% of a core)" "$(fmt %.2f "$xl") ($(sp xputop-load))" \
	"top $(fmt %.2f "$(m top-load)"), perf top $(fmt %.2f "$(m perftop-load)") (no goal)" \
	"$(fmt %.2f "$(awk -v a="$xl" -v r="$rate" 'BEGIN { print a * 1e4 / r }')") us/event" "-"
