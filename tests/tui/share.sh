# SPDX-License-Identifier: GPL-2.0-only
# Several xputops at once (issue 17): a node agent runs; an interactive
# xputop started after it reads the agent's stream and shows what the agent
# shows; killing the agent leaves it working (it takes over); nobody but root
# attaches; a stopped client never delays the agent; the watched program runs
# as fast under three xputops as under one.  Needs root.
. tests/lib.sh
need_root
. tests/tmux.sh
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
PUBXPUTOP=$(public "$XPUTOP")
SOCKDIR=$(mktemp -d /tmp/xputop-share.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock
W=$(mktemp -d /tmp/xputop-rates.XXXXXX)	# where the unprivileged stand-in writes
chmod 777 "$W"

# The agent as a fleet would run it: batch JSON and Prometheus metrics (any
# free port; it says which on stderr).  Its metrics are scraped while
# clients come, stop and go.
AGENT_OPTS="-b -j -d 0.5 --window 60 --prometheus 127.0.0.1:0"
start_agent() {
	# The files go first: the shell behind & opens them when it gets to run,
	# and the last agent's lines must not be taken for this one's.
	rm -f "$T_TMP/agent.json" "$T_TMP/agent.err"
	$AGENT_PIN "$XPUTOP" $AGENT_OPTS "$@" > "$T_TMP/agent.json" 2> "$T_TMP/agent.err" &
	AGENT=$!
	wait_json "$T_TMP/agent.json"
	i=0
	until grep -q "metrics at" "$T_TMP/agent.err" 2> /dev/null || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	METRICS=$(sed -n 's/.*metrics at \(http:[^ ]*\).*/\1/p' "$T_TMP/agent.err" | head -1)
	[ -n "$METRICS" ] || fail "the agent does not say where its metrics are: $(cat "$T_TMP/agent.err")"
}
# refreshes: the agent's xputop_refreshes_total, scraped within 2 s (0: no answer).
refreshes() {
	python3 - "$METRICS" <<-'EOF'
	import sys, urllib.request
	try:
	    body = urllib.request.urlopen(sys.argv[1], timeout=2).read().decode()
	except OSError:
	    print(0)
	    sys.exit()
	print(next((l.split()[1] for l in body.splitlines() if l.startswith("xputop_refreshes_total")), 0))
	EOF
}
# serving_on: the agent's metrics answer, and its refresh count went up
# since the last call.
LAST_REFRESHES=0
serving_on() {
	n=$(refreshes)
	awk -v n="$n" -v l="$LAST_REFRESHES" 'BEGIN { exit !(n + 0 > l + 0) }' ||
		fail "the agent's metrics $1: $n refreshes, $LAST_REFRESHES before"
	LAST_REFRESHES=$n
}
stop() { kill "$@" 2> /dev/null; wait "$@" 2> /dev/null; }

# rate FILE FROM_MS TO_MS: the steps per 100 ms the stand-in ran at in the
# slices of [FROM_MS, TO_MS), as the 80th percentile: what it can do when
# the machine's other work (other tests) leaves it alone.
rate() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 < b { print $2 }' "$1" |
		sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int(NR * 0.8 + 0.5)] : 0 }'
}
at_least() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(b > 0 && a >= f * b) }'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

t an_interactive_xputop_after_the_agent_shows_its_kernels_stacks_and_totals
start_agent --gpu-exact
serving_on "before a client"
new_terminal 160 45 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET $XPUTOP --view gpu -o $T_TMP; echo EXITED; sleep 600"
wait_for "data: collector pid $AGENT" 100
serving_on "with a client attached"
as_nobody "$STANDIN" "$FAKE" 3 > "$T_TMP/expected" 2> "$T_TMP/standin.err" || fail "stand-in failed: $(cat "$T_TMP/standin.err")"
wait_for "gpu_standin" 60
wait_for "of it with the launching CPU stack"
expect_grep "100.0% of it with the launching CPU stack" "$T_TMP/screen" "the stack coverage"
expect_grep "standin_train_step" "$T_TMP/screen" "the flame"
expect_grep "cudaLaunchKernel" "$T_TMP/screen" "the flame's launch frames"
# The agent's JSON has every kernel; the view the same calls for each,
# since it started (w).
keys w
sleep 1.5
$Q gpu_kernels "$T_TMP/expected" < "$T_TMP/agent.json" || fail "the agent's totals"
screen
python3 - "$T_TMP/expected" "$T_TMP/screen" <<'EOF' || fail "the view's totals differ from the agent's"
import json, re, sys
rows = open(sys.argv[2]).read().splitlines()
for line in open(sys.argv[1]):
    k = json.loads(line)
    if k["kernel"].startswith("_ZN"):
        continue    # shown by what tells them apart (tests/tui/gpu.sh)
    m = re.match(r"_Z(\d+)", k["kernel"])
    short = k["kernel"][m.end():m.end() + int(m.group(1))] if m else k["kernel"]
    row = [r for r in rows if re.match(re.escape(short) + r"\s", r)]
    if not row:
        sys.exit(f"{short}: no row in the view")
    if not re.search(r"\s%d\s" % k["calls"], row[0]):
        sys.exit(f"{short}: the view shows {row[0]!r}, the agent counted {k['calls']} calls")
EOF

t killing_the_agent_leaves_the_interactive_view_working_within_one_refresh
# The client loaded its probes when it started (not attached): taking over
# only attaches them.  Timed from the kill, not from the agent's end: a
# killed xputop takes a second or more to go (its probes are detached one
# by one), and the view must not wait for that.
as_nobody "$STANDIN" "$FAKE" 12 "$W/rates1" > /dev/null 2> "$T_TMP/standin1.err" &
S=$!
sleep 1.5
kill -9 "$AGENT"
killed=$(now_ms)
wait_for "data: own probes" 100
took=$(($(now_ms) - killed))
wait "$AGENT" 2> /dev/null
echo "  the view went on $took ms after the kill; the agent was gone after $(($(now_ms) - killed)) ms"
# One refresh (the agent's 0.5 s), and the screen's polling (0.1 s, and
# tmux's capture) on top.
[ "$took" -le $((500 + 250)) ] || fail "the view stood still for $took ms"
# The program's library finds the new collector (it looks once a second).
i=0
reconnected() { awk -v k="$((1500 + took))" '$1 > k && $3 == 1 { f = 1 } END { exit !f }' "$W/rates1"; }
while [ $i -lt 40 ] && ! reconnected; do
	sleep 0.2; i=$((i + 1))
done
reconnected || fail "the program's library did not connect to the new collector: $(awk '{ printf "%s:%s ", $1, $3 }' "$W/rates1")"
expect_grep "gpu_standin" "$T_TMP/screen" "the view after the takeover"
stop $S

t a_user_who_is_not_root_cannot_attach
as_nobody "$PUBXPUTOP" -b -n 1 > /dev/null 2> "$T_TMP/nobody.err" && fail "nobody attached"
expect_grep "only root and members of group xputop" "$T_TMP/nobody.err"
# (Debian's python3: root's own may live where nobody cannot run it, and
# then this would pass for the wrong reason; 3 is "permission denied".)
as_nobody /usr/bin/python3 -c "import socket,sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    sys.exit(3)" "$SOCKDIR/share.sock" 2> "$T_TMP/nobody_py.err"
rc=$?
[ $rc -eq 3 ] || fail "nobody's connect to the socket: exit $rc (0: connected), $(tail -1 "$T_TMP/nobody_py.err")"
mode=$(stat -c %a "$SOCKDIR/share.sock")
case $mode in 600|660) ;; *) fail "the socket's mode is $mode" ;; esac
keys q
wait_for EXITED

t a_stopped_client_does_not_delay_the_agents_refreshes
as_nobody "$STANDIN" "$FAKE" 20 > /dev/null 2> "$T_TMP/standin2.err" &
S=$!
start_agent --gpu-exact -F 499
"$XPUTOP" -b -j > "$T_TMP/client.json" 2> "$T_TMP/client.err" &
C=$!
wait_json "$T_TMP/client.json"
LAST_REFRESHES=0
serving_on "with a client attached"
kill -STOP $C
stopped=$(python3 -c "import time; print(time.monotonic_ns())")
sleep 5
serving_on "while a client is stopped"
sleep 5
kill -CONT $C
sleep 1.5
# Each of the agent's refreshes while the client stood still came on time.
python3 - "$T_TMP/agent.json" "$stopped" <<'EOF' || fail "the agent's refreshes were late"
import json, sys
snaps = []
for l in open(sys.argv[1], errors="replace"):
    try:
        snaps.append(json.loads(l))
    except ValueError:
        pass    # the line being written
t = [s["mono_ns"] for s in snaps if s["mono_ns"] >= int(sys.argv[2])]
gaps = [(b - a) / 1e9 for a, b in zip(t, t[1:])]
print(f"  {len(gaps)} refreshes while it was stopped, the longest {max(gaps):.3f} s")
sys.exit(len(gaps) < 18 or max(gaps) > 0.8)
EOF
kill -0 $C 2> /dev/null || fail "the client died: $(cat "$T_TMP/client.err")"
stop $C
sleep 1
serving_on "after the client left"
stop $S $AGENT

t the_programs_speed_is_the_same_with_one_or_three_xputops_watching
# What the program pays, not what the machine's other work (other tests,
# the xputops' own CPU on a small machine) takes from it: its steps per
# 100 ms of its own CPU time, which a uprobe or a CUPTI callback it runs
# would lower and being preempted does not.  One xputop, three, one again,
# in one run; the middle against both ends.  It runs on the first CPU, the
# xputops on the last.
LAST=$(($(nproc) - 1))
AGENT_PIN="taskset -c $LAST"
start_agent
AGENT_PIN=
as_nobody taskset -c 0 "$STANDIN" "$FAKE" 60 "$W/rates3" > /dev/null 2> "$T_TMP/standin3.err" &
S=$!
s0=$(now_ms)
sleep 1
P=$(pgrep -n -f "$W/rates3")	# the program itself, under as_nobody's shell
# mark: the program's time line (ms) and its CPU time (ticks) now
mark() { echo "$(($(now_ms) - s0)) $(awk '{ print $14 + $15 }' "/proc/$P/stat")"; }
m1=$(mark); sleep 2.5; m2=$(mark)
taskset -c "$LAST" "$XPUTOP" -b -j > "$T_TMP/c1.json" 2> "$T_TMP/c1.err" &
C1=$!
taskset -c "$LAST" "$XPUTOP" -b -j > "$T_TMP/c2.json" 2> "$T_TMP/c2.err" &
C2=$!
wait_json "$T_TMP/c1.json"
wait_json "$T_TMP/c2.json"
sleep 0.3
m3=$(mark); sleep 3; m4=$(mark)
stop $C1 $C2
sleep 0.5
m5=$(mark); sleep 2.5; m6=$(mark)
kill "$P"
wait "$S"
# steps_per_cpu "FROM_MS TICKS" "TO_MS TICKS" ...: steps per 10 ms of CPU
# (a tick) over the spans given as pairs of marks.
steps_per_cpu() {
	awk -v spans="$*" 'BEGIN { n = split(spans, v, " ") }
		{ for (i = 1; i + 3 <= n; i += 4) if ($1 >= v[i] + 0 && $1 < v[i + 2] + 0) steps += $2 }
		END { for (i = 1; i + 3 <= n; i += 4) cpu += v[i + 3] - v[i + 1]; print (cpu > 0 ? int(steps / cpu) : 0) }' "$W/rates3"
}
one=$(steps_per_cpu "$m1" "$m2" "$m5" "$m6")
three=$(steps_per_cpu "$m3" "$m4")
echo "  steps per 10 ms of its CPU: $one under one xputop, $three under three (per 100 ms of the clock: $(rate "$W/rates3" "${m1% *}" "${m2% *}"), $(rate "$W/rates3" "${m3% *}" "${m4% *}"))"
at_least "$three" "$one" 0.75 || fail "under three xputops it did $three steps per 10 ms of CPU, under one $one"
expect_grep "collector pid $AGENT" "$T_TMP/c1.json" "the second xputop's JSON"
expect_grep "collector pid $AGENT" "$T_TMP/c2.json" "the third xputop's JSON"
stop $AGENT

tm_end "$SOCK"
rm -rf "$SOCKDIR" "$W"
finish
