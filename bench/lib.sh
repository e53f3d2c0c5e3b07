# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the benchmarks: timing, CPU time of a process, medians, BPF
# program costs, and the rows of the summary table that bench/run.sh prints.

# cpu_ns PID: CPU time of all of PID's threads so far, in nanoseconds
# (schedstat's run time: finer than the clock ticks of /proc/PID/stat).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# median: the median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread: "min-max" of the numbers on stdin, with printf format $1 (default %.3g).
spread() {
	sort -g | awk -v f="${1:-%.3g}" 'NR == 1 { a = $1 } { b = $1 } END { printf f "-" f "\n", a, b }'
}

# wall CMD...: runs a command, prints its wall time in seconds.
wall() {
	s=$(date +%s.%N)
	"$@" > /dev/null 2>&1
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}

# timed CMD...: runs a command; prints its wall time and CPU time in
# seconds and its peak RSS in KiB.  The CPU time is user + system from the
# kernel's exact run time of the process: time spent waiting for a CPU on a
# busy machine is not in it; time its CPU spent in interrupt handlers that
# interrupted it (samplers) is, since this kernel has no IRQ time accounting.
# With RSS_LOG=FILE set, also writes "seconds rss_kb" lines to FILE, the
# command's resident memory sampled every half second.
timed() {
	python3 -c '
import os, shutil, sys, time
log = open(os.environ["RSS_LOG"], "w") if os.environ.get("RSS_LOG") else None
null = os.open(os.devnull, os.O_WRONLY)
t = time.monotonic()
pid = os.posix_spawn(shutil.which(sys.argv[1]), sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
while True:
    if log:
        try:
            for line in open("/proc/%d/status" % pid):
                if line.startswith("VmRSS:"):
                    log.write("%.1f %s\n" % (time.monotonic() - t, line.split()[1]))
        except OSError:
            pass
    for i in range(50):
        done, status, ru = os.wait4(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    if done:
        break
w = time.monotonic() - t
if os.waitstatus_to_exitcode(status):
    sys.exit("bench: %s failed (%d)" % (sys.argv[1], os.waitstatus_to_exitcode(status)))
print("%.4f %.4f %d" % (w, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))' "$@"
}

# pair_ratios A B: median of B[i]/A[i] for two files of numbers, one per line.
pair_ratios() {
	paste "$1" "$2" | awk '{ print $2 / $1 }' | median
}

# stop PID: SIGINT, then SIGKILL if it is still there after 5 s; waits for it.
# (Tools that symbolize at exit, like bpftrace, can take long: the measured
# part is over, and the next measurement must not share the machine with it.)
stop() {
	kill -INT "$1" 2> /dev/null || true
	i=0
	while kill -0 "$1" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$1" 2> /dev/null || true
	wait "$1" 2> /dev/null || true
}

# wait_for FILE PATTERN [SECS]: until FILE has a line matching PATTERN
# (or is not empty, with PATTERN ""); fails after SECS (default 30).
wait_for() {
	i=0
	while [ $i -lt $((${3:-30} * 10)) ]; do
		if [ -z "$2" ] && [ -s "$1" ]; then return 0; fi
		if [ -n "$2" ] && grep -q "$2" "$1" 2> /dev/null; then return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "bench: timed out waiting for '$2' in $1" >&2
	return 1
}

# bpf_cost PID TYPE: "run_time_ns run_cnt" summed over the BPF programs of
# TYPE (perf_event, kprobe, ...) that process PID holds open.  Counts only
# while kernel.bpf_stats_enabled is 1.
bpf_cost() {
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' | sort -u | tr '\n' ' ')
	bpftool prog show --json | python3 -c "
import json, sys
ids = set(int(i) for i in '$ids'.split())
t = n = 0
for p in json.load(sys.stdin):
    if p['id'] in ids and p.get('type') == '$2':
        t += p.get('run_time_ns', 0)
        n += p.get('run_cnt', 0)
print(t, n)"
}

# row METRIC XPUTOP PEER RATIO VERDICT: a line of the summary table (in
# $BENCH_ROWS when bench/run.sh collects them), echoed as it is made.
row() {
	if [ -n "${BENCH_ROWS:-}" ]; then
		printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >> "$BENCH_ROWS"
	fi
	printf '  => %s: %s | %s | %s | %s\n' "$1" "$2" "$3" "$4" "$5"
}

# verdict A OP B: "ok" when the comparison holds (OP: le, ge, lt, gt), else "MISS".
verdict() {
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		ok = op == "le" ? a <= b : op == "ge" ? a >= b : op == "lt" ? a < b : a > b
		print ok ? "ok" : "MISS" }'
}

# fmt FORMAT NUMBER: printf for numbers that may come as 1e+06.
fmt() {
	awk -v f="$1" -v x="$2" 'BEGIN { printf f "\n", x }'
}
