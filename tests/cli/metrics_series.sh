# SPDX-License-Identifier: GPL-2.0-only
# test-san: only (checks of parsing and output, deterministic: the sanitizers
# add most here and the plain build nothing; tests/run)
# Series of a live agent over many short-lived processes: bounded by
# --prometheus-processes with the rest in "other" and counted, gone after
# --prometheus-expiry once the processes exit, and summed by name with
# --prometheus-label comm.  Needs root (live CPU sampling).
. tests/lib.sh
. tests/metrics_lib.sh
need_root

cp /bin/dash "$T_TMP/shortlived"
# burst N: N short-lived busy processes named shortlived, 20 at a time
burst() {
	i=0
	while [ "$i" -lt "$1" ]; do
		j=0
		while [ "$j" -lt 20 ]; do
			"$T_TMP/shortlived" -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done' &
			j=$((j + 1))
		done
		wait
		i=$((i + 20))
	done
}

t series_stay_bounded_over_300_short_lived_processes_and_exited_ones_go
serve bounded -b -d 0.5 -F 499 --prometheus-processes 40 --prometheus-expiry 2
burst 300 &
B=$!
MAX=0
while kill -0 "$B" 2> /dev/null; do
	curl -sf "http://$ADDR/metrics" > "$T_TMP/scrape" || fail "a scrape failed"
	N=$(grep -c '^xputop_process_cpu_samples_total{' "$T_TMP/scrape")
	[ "$N" -gt "$MAX" ] && MAX=$N
	sleep 0.5
done
wait "$B"
curl -sf "http://$ADDR/metrics" > "$T_TMP/scrape"
FOLDED=$(awk '$1 == "xputop_metrics_series_folded_total" { print $2 }' "$T_TMP/scrape")
echo "  at most $MAX process series at once; $FOLDED label values folded"
[ "$MAX" -le 41 ] || fail "$MAX process series at once, over the 40 allowed and other"
[ "${FOLDED:-0}" -gt 0 ] || fail "nothing was folded: the test did not test ($MAX series at most)"
grep -q '^xputop_process_cpu_samples_total{pid="other",comm="other"}' "$T_TMP/scrape" ||
	grep -q 'pid="other"' "$T_TMP/scrape" || fail "no \"other\" series"
sleep 4	# the expiry (2 s) and a refresh
curl -sf "http://$ADDR/metrics" > "$T_TMP/after"
grep 'comm="shortlived"' "$T_TMP/after" > "$T_TMP/left" && fail "exited processes kept series: $(head -3 "$T_TMP/left")"
stop bounded

t label_by_comm_sums_the_processes_of_one_name
serve bycomm -b -d 0.5 -F 499 --prometheus-label comm
BUSY=""
for k in 1 2 3; do
	"$T_TMP/shortlived" -c 'i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done' &
	BUSY="$BUSY $!"
done
sleep 2
curl -sf "http://$ADDR/metrics" > "$T_TMP/comm"
# shellcheck disable=SC2086
kill $BUSY 2> /dev/null
N=$(grep -c '^xputop_process_cpu_samples_total{comm="shortlived"}' "$T_TMP/comm")
[ "$N" -eq 1 ] || fail "$N series for comm=shortlived, not 1: $(grep shortlived "$T_TMP/comm" | head -3)"
grep -q '^xputop_process_cpu_[a-z_]*{pid=' "$T_TMP/comm" && fail "a pid label with --prometheus-label comm"
RATIO=$(awk '$1 == "xputop_process_cpu_ratio{comm=\"shortlived\"}" { print $2 }' "$T_TMP/comm")
echo "  three busy processes of one name: ${RATIO:-?} CPUs in one series"
# (the sum itself: tests/unit/test_metrics.c, label_by_comm_sums_the_processes_of_one_name_without_a_pid;
# here the CPUs are shared with whatever else runs)
awk -v r="${RATIO:-0}" 'BEGIN { exit !(r > 0) }' || fail "the series holds ${RATIO:-nothing} CPUs"
stop bycomm

t sighup_rereads_the_settings_file_applies_what_it_can_and_says_what_needs_a_restart
printf 'version = 1\nnpu-storm = 5\n' > "$T_TMP/agent.conf"
serve hup -b -d 0.5 --config "$T_TMP/agent.conf"
# -d on the command line wins over the file's delay, as at start; freq waits for a restart
printf 'version = 1\nnpu-storm = 7\ndelay = 2\nfreq = 199\nsort-cpu = comm\n' > "$T_TMP/agent.conf"
kill -HUP "$X"
for _ in $(seq 50); do grep -q "SIGHUP" "$T_TMP/hup.err" && break; sleep 0.1; done
expect_grep "^xputop: SIGHUP: settings re-read: applied npu-storm, the views' sort, threads, window and flamegraph; a restart applies freq$" "$T_TMP/hup.err"
rm "$T_TMP/agent.conf"
kill -HUP "$X"
for _ in $(seq 50); do grep -q "stay as they were" "$T_TMP/hup.err" && break; sleep 0.1; done
expect_grep "cannot read the settings file $T_TMP/agent.conf" "$T_TMP/hup.err"
expect_grep "SIGHUP: the settings stay as they were" "$T_TMP/hup.err"
sleep 0.6
curl -sf -o /dev/null "http://$ADDR/metrics" || fail "the agent stopped serving after SIGHUP"
stop hup

finish
