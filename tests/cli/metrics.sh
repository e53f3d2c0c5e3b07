# SPDX-License-Identifier: GPL-2.0-only
# --prometheus: /metrics as Debian's real Prometheus server and promtool read
# it, from a replay of the committed recording tests/fixtures/fleet.xpr (CPU
# samples of a process with a hostile name, the GPU stand-in's kernels, two
# GPUs of the fake NVML, the NPU stand-in's jobs, ioctls and a recovery),
# and live under a flood of scrapes.  Needs root (the live test) and the
# prometheus package (.ci/setup installs it).
. tests/lib.sh
. tests/metrics_lib.sh
need_root
P="python3 tests/promtext.py"
REC=tests/fixtures/fleet.xpr

# until_ended NAME: until the replay of xputop NAME reached its end (it then keeps serving).
until_ended() {
	for _ in $(seq 300); do
		grep -q "end of the recording" "$T_TMP/$1.err" && return 0
		sleep 0.1
	done
	fail "the replay did not end: $(cat "$T_TMP/$1.err")"
}

t bad_addresses_and_counts_are_refused_with_what_is_expected
for bad in 70000 x "::1:19400" ":19400" "127.0.0.1:"; do
	"$XPUTOP" -b -n 1 -r "$REC" --prometheus "$bad" > /dev/null 2> "$T_TMP/bad.err" && fail "--prometheus $bad accepted"
	expect_grep "expected \[ADDR:\]PORT\|IPv6 address goes in brackets\|empty address" "$T_TMP/bad.err" "--prometheus $bad"
done
"$XPUTOP" -b -n 1 -r "$REC" --prometheus 0 --prometheus-top -1 > /dev/null 2> "$T_TMP/bad.err" && fail "top -1 accepted"
expect_grep "expected 0 to 1000 kernel series per process" "$T_TMP/bad.err"

t a_port_in_use_is_refused_with_why
PORT=$(free_port)
python3 -c "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', $PORT)); s.listen(); open('$T_TMP/held', 'w'); time.sleep(10)" &
H=$!
for _ in $(seq 100); do [ -e "$T_TMP/held" ] && break; sleep 0.1; done
"$XPUTOP" -b -n 1 -r "$REC" --prometheus "$PORT" > /dev/null 2> "$T_TMP/busy.err" && fail "a taken port accepted"
expect_grep "cannot listen on $PORT: Address already in use (give another port)" "$T_TMP/busy.err"
kill $H 2> /dev/null

# One paced replay for what follows: ten scrapes while it plays, then its
# last refresh, which it keeps serving.
serve paced -b -r "$REC" -d 0.3
i=0
while [ $i -lt 10 ]; do
	scrape > "$T_TMP/scrape.$i" || fail "scrape $i failed"
	i=$((i + 1))
	sleep 0.3
done
until_ended paced
scrape > "$T_TMP/last.txt" || fail "the last scrape failed"
scrape -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' -D "$T_TMP/om.hdr" > /dev/null
scrape -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' -D "$T_TMP/om.hdr" > "$T_TMP/last.om"
scrape -D "$T_TMP/text.hdr" > /dev/null

t the_scrape_passes_promtool_check_metrics
promtool check metrics < "$T_TMP/last.txt" > "$T_TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$T_TMP/promtool.out")"
[ -s "$T_TMP/promtool.out" ] && fail "promtool has remarks: $(cat "$T_TMP/promtool.out")"
expect_grep "^xputop_gpu_kernel_seconds_total{" "$T_TMP/last.txt"

t openmetrics_is_served_when_the_scraper_asks_for_it
expect_grep "^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8" "$T_TMP/om.hdr"
expect_grep "^Content-Type: text/plain; version=0.0.4; charset=utf-8" "$T_TMP/text.hdr"
[ "$(tail -n 1 "$T_TMP/last.om")" = "# EOF" ] || fail "OpenMetrics does not end in # EOF"
expect_grep "^# TYPE xputop_gpu_kernel_seconds counter$" "$T_TMP/last.om"
expect_grep "^xputop_gpu_kernel_seconds_total{" "$T_TMP/last.om"
grep -q "# EOF" "$T_TMP/last.txt" && fail "the text format has an # EOF"

t counters_never_decrease_over_10_scrapes
N=$($P monotonic "$T_TMP"/scrape.? "$T_TMP/last.txt") || fail "$N"
[ "${N:-0}" -gt 100 ] || fail "only ${N:-0} counter samples compared"
# and they moved: the replay advanced between the first scrape and the last
[ "$(grep '^xputop_events_total' "$T_TMP/scrape.0")" != "$(grep '^xputop_events_total' "$T_TMP/last.txt")" ] ||
	fail "the scrapes all show the same refresh"

t a_hostile_process_name_is_escaped_and_valid_utf8
# comm is a"b\c<newline>x€ and a byte that is not UTF-8
$P label "$T_TMP/last.txt" xputop_process_cpu_samples_total comm | grep -xF 'a\"b\\c\nx€�' > /dev/null ||
	fail "the name is not escaped as expected (see $T_TMP/last.txt)"

t nvml_fields_are_exported_in_base_units_and_missing_ones_left_out
for want in 'xputop_gpu_utilization_ratio{gpu="0"} 0.45' 'xputop_gpu_memory_used_bytes{gpu="0"} 12884901888' \
	'xputop_gpu_power_watts{gpu="0"} 312' 'xputop_gpu_temperature_celsius{gpu="0"} 63' \
	'xputop_gpu_sm_clock_hertz{gpu="0"} 1980000000' 'xputop_gpu_memory_total_bytes{gpu="1"} 25769803776' \
	'xputop_gpu_info{gpu="1",name="NVIDIA A10",bus_id=""} 1'; do
	grep -qxF "$want" "$T_TMP/last.txt" || fail "no line '$want'"
done
# the A10 of the recording gave neither power, temperature nor clocks
grep -E '^xputop_gpu_(power_watts|temperature_celsius|sm_clock_hertz|utilization_ratio)\{gpu="1"' "$T_TMP/last.txt" &&
	fail "an N/A field of GPU 1 is exported"

t npu_counters_histogram_and_alerts_are_exported
for want in 'xputop_npu_jobs_aborted_total 2' 'xputop_npu_power_events_total{event="recovery"} 1' \
	'xputop_npu_ioctls_total{pid="[0-9]*",comm="npu_ioctl",ioctl="IVPU_GET_PARAM"} 100' \
	'xputop_alert_active{source="npu",rule="npu.recovery",severity="CRITICAL",key="0"} 1' \
	'xputop_alerts_active{severity="CRITICAL"} 2' 'xputop_npu_job_latency_seconds_bucket{le="+Inf"} [1-9]'; do
	grep -q "^$want" "$T_TMP/last.txt" || fail "no line '$want'"
done
[ "$(grep -c '^xputop_npu_job_latency_seconds_bucket' "$T_TMP/last.txt")" -eq 14 ] || fail "histogram buckets"

t kernels_past_the_top_n_go_to_other_and_the_totals_stay
sum_kernels() { awk -v m="$1" '$1 ~ "^"m"{" { s += $NF } END { printf "%.6f\n", s }' "$2"; }
kill $X
wait $X 2> /dev/null
serve top2 -b -r "$REC" --prometheus-top 2
until_ended top2
scrape > "$T_TMP/top2.txt"
NAMED=$($P label "$T_TMP/top2.txt" xputop_gpu_kernel_calls_total kernel | grep -vc '^other$')
[ "$NAMED" -eq 2 ] || fail "$NAMED kernels with series of their own, not 2"
$P label "$T_TMP/top2.txt" xputop_gpu_kernel_calls_total kernel | grep -qx other || fail "no other series"
[ "$(sum_kernels xputop_gpu_kernel_calls_total "$T_TMP/top2.txt")" = "$(sum_kernels xputop_gpu_kernel_calls_total "$T_TMP/last.txt")" ] ||
	fail "calls add up to $(sum_kernels xputop_gpu_kernel_calls_total "$T_TMP/top2.txt") with 2 series, $(sum_kernels xputop_gpu_kernel_calls_total "$T_TMP/last.txt") with 10"
[ "$(sum_kernels xputop_gpu_kernel_seconds_total "$T_TMP/top2.txt")" = "$(sum_kernels xputop_gpu_kernel_seconds_total "$T_TMP/last.txt")" ] ||
	fail "GPU time differs between 2 and 10 series per process"
grep -q 'kernel="matmul_kernel"' "$T_TMP/top2.txt" || fail "the heaviest kernel has no series of its own"

t other_paths_and_methods_are_refused
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/nothing")" = 404 ] || fail "an unknown path is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://$ADDR/metrics")" = 405 ] || fail "POST is not 405"
kill $X
wait $X 2> /dev/null

t prometheus_stores_the_cpu_gpu_and_npu_series_of_a_replay
serve stored -b -r "$REC" -d 0.2
PPORT=$(free_port)
cat > "$T_TMP/prometheus.yml" << EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: xputop
    static_configs:
      - targets: ["$ADDR"]
EOF
prometheus --config.file="$T_TMP/prometheus.yml" --storage.tsdb.path="$T_TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" > "$T_TMP/prometheus.log" 2>&1 &
PROM=$!
# pq EXPR: "labels value" lines of an instant query, labels as Python dicts
pq() {
	curl -sf "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print({k: v for k, v in m.items() if k not in ("__name__", "instance", "job")}, r["value"][1])'
}
until_ended stored
# two scrapes after the end, so the stored values are the last ones
for _ in $(seq 200); do
	[ -n "$(pq 'xputop_replay == 1 and time() - timestamp(xputop_replay) < 1' 2> /dev/null)" ] && break
	sleep 0.1
done
sleep 2.5
pq 'up' | grep -q " 1$" || fail "Prometheus did not scrape xputop: $(tail -3 "$T_TMP/prometheus.log")"
pq 'xputop_process_cpu_samples_total' > "$T_TMP/q.cpu"
grep -qF "'comm': 'a\"b\\\\c\\nx€�'" "$T_TMP/q.cpu" || fail "the CPU series of the hostile name: $(cat "$T_TMP/q.cpu")"
pq 'sum by (kernel) (xputop_gpu_kernel_calls_total{comm="gpu_standin"})' > "$T_TMP/q.gpu"
grep -qx "{'kernel': 'matmul_kernel'} $(awk '/^xputop_gpu_kernel_calls_total.*kernel="matmul_kernel"/ { print $NF }' "$T_TMP/last.txt")" "$T_TMP/q.gpu" ||
	fail "GPU kernel calls: $(cat "$T_TMP/q.gpu")"
[ "$(pq 'xputop_gpu_power_watts')" = "{'gpu': '0'} 312" ] || fail "GPU power: $(pq 'xputop_gpu_power_watts')"
[ "$(pq 'xputop_npu_jobs_aborted_total')" = "{} 2" ] || fail "NPU aborted jobs: $(pq 'xputop_npu_jobs_aborted_total')"
[ "$(pq 'sum(xputop_npu_ioctls_total)')" = "{} 180" ] || fail "NPU ioctls: $(pq 'sum(xputop_npu_ioctls_total)')"
pq 'xputop_alert_active{severity="CRITICAL"}' | grep -q "npu.recovery" || fail "the recovery alert"
pq 'histogram_quantile(0.5, xputop_npu_job_latency_seconds_bucket)' | grep -q "^{} 0\.00" ||
	fail "job latency p50: $(pq 'histogram_quantile(0.5, xputop_npu_job_latency_seconds_bucket)')"

t every_series_of_the_grafana_dashboard_is_in_a_real_scrape_and_its_queries_run
python3 tests/dashboard.py names docs/grafana-dashboard.json > "$T_TMP/dash.names"
$P names "$T_TMP/last.txt" > "$T_TMP/scrape.names"
[ -s "$T_TMP/dash.names" ] || fail "no series in the dashboard"
missing=$(LC_ALL=C comm -23 "$T_TMP/dash.names" "$T_TMP/scrape.names" | tr '\n' ' ')
[ -z "$missing" ] || fail "the dashboard uses series a scrape does not have: $missing"
python3 tests/dashboard.py exprs docs/grafana-dashboard.json | while IFS= read -r expr; do
	curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$expr" > "$T_TMP/dash.q"
	grep -q '"status":"success"' "$T_TMP/dash.q" || fail "Prometheus refuses '$expr': $(cat "$T_TMP/dash.q")"
done
kill $PROM $X
wait $PROM $X 2> /dev/null

t the_screen_serves_metrics_too_and_says_where
. tests/tmux.sh
SPORT=$(free_port)
new_terminal 120 40 "cd $(pwd) && $XPUTOP --no-config -r $REC -d 0.2 --prometheus 127.0.0.1:$SPORT"
wait_for "metrics at http://127.0.0.1:$SPORT/metrics" 100 || fail "the status line does not say where"
for _ in $(seq 50); do
	curl -sf "http://127.0.0.1:$SPORT/metrics" > "$T_TMP/screen.txt" && grep -q '^xputop_replay 1$' "$T_TMP/screen.txt" && break
	sleep 0.1
done
grep -q '^xputop_refreshes_total [1-9]' "$T_TMP/screen.txt" || fail "no metrics from the screen's xputop"
keys q
tm kill-server 2> /dev/null

t a_flood_of_scrapes_leaves_the_refresh_on_time
serve flood -b -j -d 0.2 -n 60
wait_json "$T_TMP/flood.out"
# The count a scrape reads is the one of the last refresh: each is read
# two refreshes after the scrapes it is to hold.
START=$(scrape | awk '/^xputop_metrics_scrapes_total/ { print $2 }')
sleep 0.5
T0=$(date +%s.%N)
curl -s -o /dev/null -w '%{http_code}\n' --rate 1100/s "http://$ADDR/metrics?[1-3300]" > "$T_TMP/flood.codes"
T1=$(date +%s.%N)
sleep 0.5
END=$(scrape | awk '/^xputop_metrics_scrapes_total/ { print $2 }')
wait $X || fail "xputop failed: $(cat "$T_TMP/flood.err")"
OK=$(grep -c '^200$' "$T_TMP/flood.codes")
RATE=$(echo "$OK / ($T1 - $T0)" | bc)
echo "  $OK of 3300 scrapes answered, $RATE a second; xputop counted $((END - START - 1)) more"
# Every scrape is answered, as fast as curl asks (1,100 a second); curl
# itself gets less of the CPUs beside other suites (992 and 825 a second were
# seen in CI), so the bar is 700, and T_SLOW lowers it for a sanitizer build.
[ "$OK" -eq 3300 ] || fail "$OK of 3300 scrapes answered ($(sort "$T_TMP/flood.codes" | uniq -c | tr '\n' ' '))"
[ "$RATE" -ge $((700 / T_SLOW)) ] || fail "only $RATE scrapes a second answered"
# The START scrape itself counts once more, and START may read the refresh
# an earlier scrape (serve's) read too.
N=$((END - START - 1))
[ "$N" -ge "$OK" ] && [ "$N" -le $((OK + 2)) ] || fail "xputop counted $N scrapes, curl had $OK answered"
# Refreshes of 0.2 s, about 15 of them during the flood: two at most more
# than 0.1 s late, none two whole refreshes late.  Beside other suites in CI
# one gap at a time came late, by a preemption: 0.317 s, 0.320 s, once
# 0.427 s, among 59.  Scrapes that held the main loop would make most of the
# flood's refreshes late.
python3 - "$T_TMP/flood.out" "$T_SLOW" << 'EOF' || fail "a refresh came late"
import json, sys
t = [json.loads(l)["mono_ns"] for l in open(sys.argv[1])]
gaps = [(b - a) / 1e9 for a, b in zip(t, t[1:])]
slow = int(sys.argv[2])
late = [g for g in gaps if g > 0.2 + 0.1 * slow]
if len(late) > 2 or any(g > 0.6 + 0.1 * slow for g in gaps) or len(t) < 30:
    sys.exit(f"{len(t)} refreshes, gaps over {0.2 + 0.1 * slow:.1f} s: {late}")
EOF

finish
