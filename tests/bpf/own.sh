# SPDX-License-Identifier: GPL-2.0-only
# The launching threads' own CPU time (issue 25, core/sources/gpu_own.c):
# tracing slows a launching thread inside the library's slices in CUDA's
# code only, so the thread's own time out of the slices over its own time in
# them says how many launches the slices missed.  A stand-in launching
# thread (tests/progs/own_standin.c) loads the real library, dormant, and a
# stand-in for CUDA's code named like CUPTI, sets the library's
# xputop_tracing word itself for 10 ms of every 50 and spends three times
# as long in the CUDA stand-in meanwhile; the sampler, driven directly
# (tests/bpf/own_counts.c), must count what it did.  Then a real xputop over
# the real library and the stand-in CUPTI (tests/bpf/cupti.sh's machinery)
# must send the counts as GPU_OWN events, or none with --gpu-own-hz 0.
# Needs root and a build with the CUDA toolkit.
# test-lane: quiet (CPU-time shares)
# test-timeout: 120
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
LIB=$(cd "$OUT" && pwd)/libxputop_inject.so
FAKE=$(cd "$OUT" && pwd)/tests/own/libcupti.so.99
STANDIN=$OUT/tests/progs/own_standin
COUNTS=$OUT/tests/own_counts
if [ ! -f "$LIB" ] || [ ! -f "$FAKE" ] || [ ! -x "$STANDIN" ] || [ ! -x "$COUNTS" ]; then
	echo "FAIL $(basename "$0"): $OUT has no injection library or own-time test programs" \
		"(built without the CUDA toolkit?)" >&2
	exit 1
fi

# field FILE KEY [INDEX]: a number of the first JSON line of FILE with KEY.
field() {
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if sys.argv[2] in d:
        v = d[sys.argv[2]]
        print(v[int(sys.argv[3])] if len(sys.argv) > 3 else v)
        break' "$@"
}

# sample NAME SECONDS [OWN_COUNTS_OPTION...]: the stand-in for SECONDS + 2,
# its thread sampled for SECONDS from 1 s in.
sample() {
	name=$1 secs=$2
	shift 2
	"$STANDIN" "$LIB" "$FAKE" $((secs + 2)) > "$T_TMP/$name.standin" 2> "$T_TMP/$name.err" &
	S=$!
	i=0
	while [ ! -s "$T_TMP/$name.standin" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	pid=$(field "$T_TMP/$name.standin" pid) tid=$(field "$T_TMP/$name.standin" tid)
	[ -n "$tid" ] || fail "the stand-in did not start: $(cat "$T_TMP/$name.err")"
	sleep 1
	"$COUNTS" "$@" "$secs" "$pid" "${OWN_TID:-$tid}" > "$T_TMP/$name.json" 2>> "$T_TMP/$name.err" ||
		fail "own_counts failed: $(cat "$T_TMP/$name.err")"
	wait $S || fail "the stand-in failed: $(cat "$T_TMP/$name.err")"
	echo "  $name: $(cat "$T_TMP/$name.json") $(tail -n 1 "$T_TMP/$name.standin")"
}

sample standin 6

t samples_arrive_at_the_rate_asked
# The stand-in spins all the time: a sample for each ms of CPU it had, 6 s
# of it when it has a CPU to itself (a loaded machine gives it less: a
# sanitizer pass beside other suites, 3 s).
python3 - "$T_TMP/standin.json" <<'PY' || fail "not one sample a ms of CPU +- 30%: $(cat "$T_TMP/standin.json")"
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(d["own"]) + sum(d["cuda"])
print("    %d samples in %.0f ms of CPU" % (n, d["cpu_ms"]))
sys.exit(not (d["threads"] == 1 and d["unread"] == 0 and d["cpu_ms"] >= 1500 and
              0.7 * d["cpu_ms"] <= n <= 1.3 * d["cpu_ms"]))
PY

t samples_in_slices_are_the_flags_share_of_the_time
python3 - "$T_TMP/standin.json" <<'PY' || fail "not 20% of the samples with the flag on: $(cat "$T_TMP/standin.json")"
import json, sys
d = json.load(open(sys.argv[1]))
share = (d["own"][1] + d["cuda"][1]) / (sum(d["own"]) + sum(d["cuda"]))
print("    in slices: %.1f%% of the samples" % (100 * share))
sys.exit(not 0.15 <= share <= 0.25)
PY

t own_time_scales_the_work_done_in_slices_to_the_work_done_out_of_them
# What the model relies on: iterations out / in = own samples out / in, where
# the iterations in are slower (three times the CUDA time) and wall time
# would say 4.
python3 - "$T_TMP/standin.json" "$T_TMP/standin.standin" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
it = [json.loads(l) for l in open(sys.argv[2]) if "iters" in l][0]["iters"]
want, got = it[0] / it[1], d["own"][0] / d["own"][1]
print("    iterations out/in %.2f, own samples out/in %.2f" % (want, got))
sys.exit(not abs(got / want - 1) <= 0.25)
PY
	fail "own time out/in does not follow the work"

t cuda_share_is_higher_in_slices
# Out: 61 of 234 us an iteration in CUDA's code (26%); in: 183 of 356 (51%).
python3 - "$T_TMP/standin.json" <<'PY' || fail "CUDA's share in slices not higher: $(cat "$T_TMP/standin.json")"
import json, sys
d = json.load(open(sys.argv[1]))
out = d["cuda"][0] / (d["own"][0] + d["cuda"][0])
inn = d["cuda"][1] / (d["own"][1] + d["cuda"][1])
print("    CUDA's share out %.0f%%, in %.0f%%" % (100 * out, 100 * inn))
sys.exit(not (0.16 <= out <= 0.36 and 0.41 <= inn <= 0.61))
PY

t a_thread_of_another_process_is_not_sampled
# The tid comes from the library, so from the process: one that names
# another process's thread (this shell's) is refused.
OWN_TID=$$ sample other 2
python3 - "$T_TMP/other.json" <<'PY' || fail "another process's thread was sampled: $(cat "$T_TMP/other.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["threads"] == 0 and d["not_own"] == 1 and sum(d["own"]) + sum(d["cuda"]) == 0))
PY

t the_main_loop_does_not_wait_for_the_setup
# A process's maps, its library's flag and its threads' perf events (the
# first sampling event of a machine patches the kernel's text) are done on
# the service thread; the tick and the jobs' done() on the main loop took
# 12.5 ms before (rule 4: 10 ms a refresh at most for everything).
for n in standin other; do
	python3 - "$T_TMP/$n.json" <<'PY' || fail "$n: the tick held the loop: $(cat "$T_TMP/$n.json")"
import json, sys
d = json.load(open(sys.argv[1]))
print("    tick and done() at most %.3f ms" % d["tick_ms_max"])
sys.exit(not d["tick_ms_max"] < 3)
PY
done

# Through xputop: the real library over the stand-in CUPTI.
STAND=$OUT/tests/stand/libcupti.so.13
PROG=$OUT/tests/progs/cupti_standin
export CUDA_INJECTION64_PATH=$LIB
# watch NAME XPUTOP_OPTION...: a recording of a batch xputop watching the
# CUPTI stand-in launch for 4 s, as fast as 20 us of its own work between
# launches lets it; NAME.own: its GPU_OWN events.
watch() {
	name=$1
	shift
	"$XPUTOP" -b -j -d 0.5 -n 12 -w "$T_TMP/$name.xpr" "$@" > "$T_TMP/$name.jsonl" 2> "$T_TMP/$name.xerr" &
	X=$!
	wait_json "$T_TMP/$name.jsonl"
	# launch-bound (-b): busy in its own code, not in libc's sleeps and
	# clock reads, which count as neither side's (core/sources/gpu_own.c)
	STAND_CUPTI_ATTACH_MS=10 "$PROG" -b 20 "$STAND" 4 > /dev/null 2> "$T_TMP/$name.prog" ||
		fail "the program failed: $(cat "$T_TMP/$name.prog")"
	wait $X || fail "xputop failed: $(tail -n 5 "$T_TMP/$name.xerr")"
	"$COUNTS" -r "$T_TMP/$name.xpr" > "$T_TMP/$name.own" || fail "cannot read the recording"
}

watch live
t xputop_sends_the_launching_threads_counts_each_refresh
python3 - "$T_TMP/live.own" <<'PY' || fail "no GPU_OWN events with samples: $(tail -n 2 "$T_TMP/live.own")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
last = ev[-1] if ev else None
print("    %d events, the last: %s" % (len(ev), last))
ok = len(ev) >= 3 and last["hz"] == 1000 and last["threads"] >= 1 and sum(last["own"]) + sum(last["cuda"]) > 0
# cumulative: never going back
for a, b in zip(ev, ev[1:]):
    if a["pid"] == b["pid"] and any(b[k][i] < a[k][i] for k in ("own", "cuda") for i in (0, 1)):
        ok = False
sys.exit(not ok)
PY

watch exact --gpu-exact
t in_exact_mode_the_samples_are_in_tracing
# The library keeps its word at 1 while it traces: all but the samples taken
# before CUPTI was attached.
python3 - "$T_TMP/exact.own" <<'PY' || fail "not tracing in exact mode: $(tail -n 1 "$T_TMP/exact.own")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
last = ev[-1] if ev else None
print("    %d events, the last: %s" % (len(ev), last))
n = sum(last["own"]) + sum(last["cuda"]) if last else 0
sys.exit(not (n > 0 and last["own"][1] + last["cuda"][1] >= 0.8 * n))
PY

watch off --gpu-own-hz 0
t no_counts_with_gpu_own_hz_0
[ -s "$T_TMP/off.xpr" ] || fail "no recording"
[ ! -s "$T_TMP/off.own" ] || fail "GPU_OWN events with --gpu-own-hz 0: $(head -n 2 "$T_TMP/off.own")"

finish
