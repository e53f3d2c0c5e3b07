#!/bin/sh
# xputop's own cost and its sampling overhead, measured side by side.
#
#   sudo bench/overhead.sh [BUILD_DIR]
#
# 1. Idle cost: CPU time of the xputop process per second of wall time over
#    30 s at the default refresh (1 s), batch mode and the interactive screen
#    (in tmux), next to `top -d 1 -b` doing the same job.
# 2. Sampling overhead: a CPU-bound real program (xz -9 compressing 8 MB of
#    text, one thread) timed alone and under xputop sampling at 99 Hz, the two
#    alternated ROUNDS times; the median of the per-pair ratios is the slowdown.
#    This machine is noisy, so the BPF program's own run time per sample
#    (kernel.bpf_stats_enabled) is reported too: a direct measure of what each
#    sample costs the CPU it interrupts.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$OUT/xputop
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-30}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"; tmux -L xputop-bench kill-server 2>/dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }

# cost_of CMD...: % of one core the command's process used over SECS.
cost_of() {
	"$@" > /dev/null 2>&1 &
	pid=$!
	sleep 2	# start-up (BPF load, kallsyms) is not steady-state cost
	t0=$(cpu_ns $pid)
	sleep "$SECS"
	t1=$(cpu_ns $pid)
	kill $pid 2> /dev/null || true
	wait $pid 2> /dev/null || true
	echo "($t1 - $t0) / 10000000 / $SECS" | bc -l
}

tui_cost() {
	tmux -L xputop-bench kill-server 2> /dev/null || true
	tmux -L xputop-bench new-session -d -x 160 -y 50 "$X"
	sleep 2
	pid=$(pgrep -P "$(tmux -L xputop-bench display-message -p '#{pane_pid}')" -x xputop || \
		tmux -L xputop-bench display-message -p '#{pane_pid}')
	t0=$(cpu_ns $pid)
	sleep "$SECS"
	t1=$(cpu_ns $pid)
	tmux -L xputop-bench kill-server
	echo "($t1 - $t0) / 10000000 / $SECS" | bc -l
}

echo "== idle cost over ${SECS}s (percent of one core)"
c_batch=$(cost_of "$X" -b)
c_tui=$(tui_cost)
c_top=$(cost_of top -d 1 -b)
printf '%-28s %6.2f%%\n' "xputop -b" "$c_batch" "xputop (screen, 160x50)" "$c_tui" "top -d 1 -b" "$c_top"

echo "== sampling overhead: xz -9 over 8 MB, alone vs under xputop -F 99, $ROUNDS rounds"
seq 1 4000000 | head -c 8388608 > "$TMP/input"
run_xz() { xz -9 -T1 -c "$TMP/input" > /dev/null; }
: > "$TMP/alone"
: > "$TMP/under"
for r in $(seq 1 "$ROUNDS"); do
	wall sh -c "xz -9 -T1 -c $TMP/input" >> "$TMP/alone"
	sysctl -qw kernel.bpf_stats_enabled=1
	"$X" -b -F 99 > /dev/null 2>&1 &
	xp=$!
	sleep 2
	wall sh -c "xz -9 -T1 -c $TMP/input" >> "$TMP/under"
	bpftool prog show | awk '/ name cpu_sample / { for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") n = $(i + 1) } } END { if (n) print t / n }' >> "$TMP/per_sample"
	kill $xp
	wait $xp 2> /dev/null || true
	sysctl -qw kernel.bpf_stats_enabled=0
done
ns=$(median < "$TMP/per_sample")
a=$(median < "$TMP/alone")
u=$(median < "$TMP/under")
ratio=$(pair_ratios "$TMP/alone" "$TMP/under")
printf 'alone:        median %.3fs (%s)\n' "$a" "$(tr '\n' ' ' < "$TMP/alone")"
printf 'under xputop: median %.3fs (%s)\n' "$u" "$(tr '\n' ' ' < "$TMP/under")"

echo
echo "== summary"
printf '%-44s %s\n' "xputop idle, batch (% of a core)" "$(printf '%.2f' "$c_batch")"
printf '%-44s %s\n' "xputop idle, screen (% of a core)" "$(printf '%.2f' "$c_tui")"
printf '%-44s %s\n' "top -d 1 -b idle (% of a core)" "$(printf '%.2f' "$c_top")"
printf '%-44s %s\n' "xz under xputop -F 99 / alone (median of pairs)" "$(printf '%.4f' "$ratio")"
printf '%-44s %s\n' "BPF run time per sample (ns, median)" "$(printf '%.0f' "$ns")"
printf '%-44s %s\n' "  = share of each CPU at 99 Hz (%)" "$(echo "$ns * 99 / 10000000" | bc -l | xargs printf '%.3f')"
