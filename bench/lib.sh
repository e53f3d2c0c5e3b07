# Helpers for the benchmarks: timing, CPU time of a process, medians.

# cpu_ns PID: CPU time of all of PID's threads so far, in nanoseconds
# (schedstat's run time: finer than the clock ticks of /proc/PID/stat).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# median: the median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wall SECONDS-OF: runs a command, prints its wall time in seconds.
wall() {
	s=$(date +%s.%N)
	"$@" > /dev/null 2>&1
	e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}


# pair_ratios A B: median of B[i]/A[i] for two files of numbers, one per line.
pair_ratios() {
	paste "$1" "$2" | awk '{ print $2 / $1 }' | median
}
