# SPDX-License-Identifier: GPL-2.0-only
# Faults xputop must survive (issue 6), each for real: watched programs that
# fork, exec and exit under it; a monitor killed or stalled while a program
# runs flat out; rings and the injection channel overflowing; exports that
# cannot be written or whose name is taken; missing kernel pieces.  Needs root.
# test-from: private.sh
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
BUSY=$(realpath "$OUT/tests/progs/busy")
SOCKDIR=$(mktemp -d /tmp/xputop-faults.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock
W=$(mktemp -d /tmp/xputop-rates.XXXXXX)	# where the unprivileged stand-in writes
chmod 777 "$W"

# median_rate FILE FROM_MS TO_MS [CONNECTED]: the median steps per 100 ms slice
# the stand-in wrote for slices in [FROM_MS, TO_MS) (with that connected state).
median_rate() {
	awk -v a="$2" -v b="$3" -v c="${4:-}" '$1 >= a && $1 < b && (c == "" || $3 == c) { print $2 }' "$1" |
		sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}

# median_per_cpu FILE FROM_MS TO_MS: the median steps per CPU ms of the
# stand-in's slices in [FROM_MS, TO_MS): its speed where the suites beside
# it take the CPUs (the wall-clock rate swung 2x there).
median_per_cpu() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 < b && $4 > 0 { printf "%.3f\n", $2 * 1000 / $4 }' "$1" |
		sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}

# at_least A B FRACTION: A >= FRACTION * B
at_least() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(b > 0 && a >= f * b) }'; }

rss_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

t a_program_started_before_xputop_that_forks_and_execs_is_followed
"$OUT/tests/progs/forker" 4 "$BUSY" 2 > "$T_TMP/forker.out" &
P=$!
sleep 0.4
"$XPUTOP" -b -j -n 14 -d 0.5 --window 60 > "$T_TMP/fork.json" 2> "$T_TMP/fork.err" || fail "xputop failed: $(cat "$T_TMP/fork.err")"
wait $P || fail "forker failed"
C=$(awk '/^child/ { print $2 }' "$T_TMP/forker.out")
$Q stack_has $P forker main forker_parent_waits forker_spin_until < "$T_TMP/fork.json" || fail "the parent"
$Q stack_has "$C" busy main forker_child_before_exec forker_spin_until < "$T_TMP/fork.json" || fail "the child before exec"
# The same pid after exec runs other code: symbolized against the new image.
$Q stack_has "$C" busy main busy_outer busy_middle busy_leaf_spin < "$T_TMP/fork.json" || fail "the child after exec"

t a_gpu_program_that_forks_is_accounted_exactly_and_its_child_does_not_hang
"$XPUTOP" -b -j --gpu-exact -n 12 -d 0.5 --window 60 > "$T_TMP/gfork.json" 2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/gfork.json"
STANDIN_FORK=1 timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 2 > "$T_TMP/gfork.expected" 2> "$T_TMP/gfork.err"
rc=$?
xp_ok $X
[ $rc -eq 0 ] || fail "the stand-in exited with $rc (124: it hung): $(cat "$T_TMP/gfork.err")"
expect_grep "forked child" "$T_TMP/gfork.err"
$Q gpu_kernels "$T_TMP/gfork.expected" < "$T_TMP/gfork.json" || fail "the parent's kernels are not exact"

t a_killed_xputop_leaves_the_program_at_full_speed_and_a_new_one_picks_it_up
# One run of the program: alone (no monitor) for 1.5 s, watched, its monitor
# killed, alone again, and a new monitor.  Its speed alone before and after
# the kill must match: the library went dormant, nothing waits on the socket.
as_nobody "$STANDIN" "$FAKE" 40 "$W/rates1" nowait > /dev/null 2> "$T_TMP/kill.err" &
S=$!
sleep 1.5
"$XPUTOP" -b -j --gpu-exact -d 0.5 > "$T_TMP/first.json" 2>> "$T_TMP/xputop.err" &
A=$!
wait_json "$T_TMP/first.json"
# Kill the monitor once the program says it is connected.
connected_after() { awk -v k="$1" '$1 > k && $3 == 1 { f = 1 } END { exit !f }' "$W/rates1" 2> /dev/null; }
i=0; while ! connected_after 0 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -9 $A
wait $A 2> /dev/null
sleep 2
"$XPUTOP" -b -j --gpu-exact -d 0.5 > "$T_TMP/again.json" 2>> "$T_TMP/xputop.err" &
A=$!
K=$(awk 'on && $3 == 0 { print $1; exit } $3 == 1 { on = 1 }' "$W/rates1")
i=0; while ! connected_after "${K:-0}" && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1.5
kill $A; wait $A 2> /dev/null
kill -0 $S 2> /dev/null || fail "the program ended early: $(cat "$T_TMP/kill.err")"
kill $S 2> /dev/null
if ! timeout 20 sh -c "while kill -0 $S 2>/dev/null; do sleep 0.2; done"; then
	fail "the program hung after its monitor was killed"
	kill -9 $S
fi
wait $S 2> /dev/null
ON_MS=$(awk '$3 == 1 { print $1; exit }' "$W/rates1")
KILLED_MS=$(awk 'on && $3 == 0 { print $1; exit } $3 == 1 { on = 1 }' "$W/rates1")
[ -n "$ON_MS" ] && [ -n "$KILLED_MS" ] || fail "the program was never watched, or never left alone: $(tr '\n' ' ' < "$W/rates1")"
base=$(median_per_cpu "$W/rates1" 200 "${ON_MS:-1500}")
after=$(median_per_cpu "$W/rates1" $((${KILLED_MS:-0} + 300)) $((${KILLED_MS:-0} + 1800)))
echo "  steps per CPU ms: $base alone before, $after alone after the kill" \
	"(per 100 ms: $(median_rate "$W/rates1" 200 "${ON_MS:-1500}" 0) and" \
	"$(median_rate "$W/rates1" $((${KILLED_MS:-0} + 300)) $((${KILLED_MS:-0} + 1800)) 0))"
# Still sending (not dormant) would halve it, waiting would stop it (the
# hang check above); the connected flag is the exact check of dormancy,
# this the speed's, per CPU time of the process (the library's threads
# included) so that what runs beside the suite does not count.
at_least "$after" "$base" 0.6 || fail "after the kill it ran $after steps per CPU ms, alone before $base"
awk -v k="${KILLED_MS:-0}" '$1 > k && $3 == 1 { found = 1 } END { exit !found }' "$W/rates1" ||
	fail "the new xputop did not connect again: $(awk '{ printf "%s:%s ", $1, $3 }' "$W/rates1")"
$Q gpu_process gpu_standin cupti < "$T_TMP/again.json" || fail "the new xputop does not see the program"

t a_stalled_xputop_never_slows_the_program_drops_are_counted_memory_stays_bounded
"$XPUTOP" -b -j --gpu-exact -d 0.5 -n 16 --window 60 > "$T_TMP/stall.json" 2>> "$T_TMP/xputop.err" &
A=$!
wait_json "$T_TMP/stall.json"
as_nobody "$STANDIN" "$FAKE" 5 "$W/rates2" > "$T_TMP/stall.expect" 2> "$T_TMP/stall.err" &
S=$!
sleep 1.5
kill -STOP $A
sleep 2
kill -CONT $A
wait $S || fail "the program failed: $(cat "$T_TMP/stall.err")"
hwm=$(rss_kb $A)
wait $A || fail "xputop failed after being stopped"
before=$(median_rate "$W/rates2" 300 1400 1)
during=$(median_rate "$W/rates2" 1700 3300 1)
echo "  steps per 100 ms: $before while watched, $during while xputop was stopped; peak RSS ${hwm:-?} kB"
# A program that waited on its stalled monitor would all but stop; the
# machine's own noise (2 shared cores) is why the bar is not higher.
at_least "$during" "$before" 0.3 || fail "the program slowed to $during steps/100ms (from $before) while xputop was stopped"
$Q dropped_at_least 1000 < "$T_TMP/stall.json" || fail "the records that did not fit were not counted"
$Q gpu_account "$T_TMP/stall.expect" < "$T_TMP/stall.json" || fail "kernels lost without being counted"
$Q gpu_process gpu_standin cupti < "$T_TMP/stall.json" || fail "the program was lost after the stall"
[ -n "$hwm" ] && [ "$hwm" -lt 400000 ] || fail "xputop's peak RSS was ${hwm:-unknown} kB"

t a_full_bpf_ring_counts_its_drops_and_sampling_goes_on
# At 999 Hz on busy CPUs the sample ring holds about half a second: a monitor
# stopped for 3 s must lose samples, count them, and pick up again after.
"$BUSY" 8 2 > /dev/null &
B=$!
"$XPUTOP" -b -j -F 999 -d 0.5 -n 12 > "$T_TMP/ring.json" 2> "$T_TMP/ring.err" &
A=$!
sleep 1.5
kill -STOP $A
sleep 3
kill -CONT $A
wait $A || fail "xputop failed: $(cat "$T_TMP/ring.err")"
kill $B 2> /dev/null; wait $B 2> /dev/null
$Q dropped_at_least 100 < "$T_TMP/ring.json" || fail "a full ring's drops were not counted"
$Q stack_has $B busy busy_outer busy_leaf_spin < "$T_TMP/ring.json" || fail "sampling did not go on after the stall"

t an_export_that_cannot_be_written_leaves_nothing_and_says_why
mkdir -p "$T_TMP/full"
mount -t tmpfs -o size=64k tmpfs "$T_TMP/full" || fail "mount"
dd if=/dev/zero of="$T_TMP/full/filler" bs=4k 2> /dev/null
"$XPUTOP" -b -n 1 -d 0.3 --export -o "$T_TMP/full" > /dev/null 2> "$T_TMP/full.err"
rc=$?
[ $rc -eq 1 ] || fail "exit status $rc for a failed export"
expect_grep "cannot .* in $T_TMP/full: No space left on device" "$T_TMP/full.err"
[ "$(ls -A "$T_TMP/full")" = filler ] || fail "left behind: $(ls -A "$T_TMP/full")"
umount "$T_TMP/full"

t an_export_never_follows_a_symlink_or_replaces_a_file
mkdir -p "$T_TMP/trap"
echo precious > "$T_TMP/victim"
# A name for each second of the next minute: a sanitizer build beside other
# suites took more than the 7 s it had once.
now=$(date +%s)
for s in $(seq 0 60); do
	ts=$(date -d "@$((now + s))" +%Y%m%d-%H%M%S)
	ln -s "$T_TMP/victim" "$T_TMP/trap/xputop-cpu-$ts.folded"
done
"$XPUTOP" -b -n 1 -d 0.3 --export -o "$T_TMP/trap" > /dev/null 2> "$T_TMP/trap.err" || fail "export failed: $(cat "$T_TMP/trap.err")"
[ "$(cat "$T_TMP/victim")" = precious ] || fail "the export wrote through a symlink"
F=$(ls "$T_TMP"/trap/xputop-cpu-*-2.folded 2>/dev/null | head -1)
[ -n "$F" ] && [ -f "$F" ] && [ ! -L "$F" ] || fail "no export under a free name: $(ls "$T_TMP/trap")"
[ "$(find "$T_TMP/trap" -type l | wc -l)" -eq 61 ] || fail "a symlink was replaced"

t an_export_killed_half_way_leaves_no_file
# Exports go to an anonymous file that gets a name only when complete: kill
# xputop at random points of many exports and look for any stray file.
mkdir -p "$T_TMP/killed"
"$BUSY" 30 4 > /dev/null &
B=$!
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$XPUTOP" -b -n 1 -d 0.2 --export -o "$T_TMP/killed" > /dev/null 2>&1 &
	K=$!
	sleep "0.2$i"
	kill -9 $K 2> /dev/null
	wait $K 2> /dev/null
done
kill $B; wait $B 2> /dev/null
for f in "$T_TMP"/killed/* "$T_TMP"/killed/.[!.]*; do
	[ -e "$f" ] || continue
	# A file that is there must be a whole export: every line "stack count".
	grep -qvE '^.+ [0-9]+$' "$f" && fail "a partial file: $f"
	case $(basename "$f") in xputop-cpu-*.folded) ;; *) fail "a stray file: $f" ;; esac
done

t without_tracefs_xputop_mounts_it_and_traces
mknod "$T_TMP/accel1" c 1 7 2> /dev/null
unshare -m sh -c "umount /sys/kernel/tracing 2> /dev/null; umount /sys/kernel/debug/tracing 2> /dev/null;
	[ ! -e /sys/kernel/tracing/events ] || exit 3
	'$XPUTOP' -b -j -n 2 -d 0.5 --npu-dev '$T_TMP/accel1' > '$T_TMP/notr.json' 2> '$T_TMP/notr.err'"
rc=$?
[ $rc -eq 0 ] || fail "exit status $rc: $(cat "$T_TMP/notr.err")"
expect_grep "mounted tracefs on /sys/kernel/tracing" "$T_TMP/notr.err"
$Q npu_source ioctls active < "$T_TMP/notr.json" || fail "the ioctl tracepoints did not attach"

t without_btf_one_message_and_the_gpu_view_still_works
: > "$T_TMP/not-btf"
unshare -m sh -c "mount --bind '$T_TMP/not-btf' /sys/kernel/btf/vmlinux &&
	'$XPUTOP' -b -j -n 16 -d 0.5 --window 60 --gpu-exact > '$T_TMP/nobtf.json' 2> '$T_TMP/nobtf.err'" &
X=$!
wait_json "$T_TMP/nobtf.json"
as_nobody "$STANDIN" "$FAKE" 2 > "$T_TMP/nobtf.expected" 2> /dev/null
wait $X || fail "xputop without BTF exited with $?: $(cat "$T_TMP/nobtf.err")"
[ "$(grep -c . "$T_TMP/nobtf.err")" -eq 1 ] || fail "more than one message: $(cat "$T_TMP/nobtf.err")"
expect_grep "no usable BTF (/sys/kernel/btf/vmlinux is not BTF)" "$T_TMP/nobtf.err"
$Q gpu_kernels "$T_TMP/nobtf.expected" < "$T_TMP/nobtf.json" || fail "GPU kernel times without BTF"
python3 - "$T_TMP/nobtf.json" <<'EOF' || fail "the CPU view does not say why it is empty"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
c = s["cpu_info"]
sys.exit(0 if c["state"] == "failed" and "no usable BTF" in c["status"] and not s["cpu"] else 1)
EOF

t a_socket_planted_by_another_user_hears_nothing_from_the_library
# Someone (uid 4242) listens where a user's program was told to connect: the
# library must not send it anything, not even its pid.
PLANT=$(mktemp -d /tmp/xputop-plant.XXXXXX)
chmod 1777 "$PLANT"
cat > "$T_TMP/listen.py" <<'EOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
s.settimeout(8)
got = 0
try:
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += len(b)
        except socket.timeout:
            pass
except socket.timeout:
    pass
print("bytes", got)
EOF
chmod 644 "$T_TMP/listen.py"
cp "$T_TMP/listen.py" "$PLANT/listen.py"
setpriv --reuid=4242 --regid=4242 --clear-groups /usr/bin/python3 "$PLANT/listen.py" "$PLANT/s.sock" > "$T_TMP/plant.out" 2>&1 &
L=$!
sleep 0.5
XPUTOP_SOCKET=$PLANT/s.sock as_nobody "$STANDIN" "$FAKE" 1 > /dev/null 2> "$T_TMP/plant.err"
wait $L
expect_grep "bytes 0" "$T_TMP/plant.out" "what the planted socket got"
expect_grep "belongs to a process of uid 4242, not root's xputop: not connecting" "$T_TMP/plant.err"
rm -rf "$PLANT"

t a_library_that_cannot_be_probed_is_one_message_and_the_rest_works
# A libcudart without a single launch function (a stand-in with no symbols),
# loaded by a busy process: xputop tries it, says so once, and goes on.
mkdir -p "$T_TMP/lib"
echo 'int xputop_not_cuda;' > "$T_TMP/lib/empty.c"
cc -shared -fPIC -o "$T_TMP/lib/libcudart.so.12" "$T_TMP/lib/empty.c" || fail "cc"
/usr/bin/python3 -c "
import ctypes, time
ctypes.CDLL('$T_TMP/lib/libcudart.so.12')
end = time.time() + 6
while time.time() < end:
    pass
" &
PY=$!
sleep 0.5
"$XPUTOP" -b -j -n 6 -d 0.5 > "$T_TMP/unprobe.json" 2> "$T_TMP/unprobe.err" || fail "xputop failed: $(cat "$T_TMP/unprobe.err")"
kill $PY 2> /dev/null; wait $PY 2> /dev/null
[ "$(grep -c "no launch function of .*libcudart.so.12 could be probed" "$T_TMP/unprobe.err")" -eq 1 ] ||
	fail "not exactly one message: $(cat "$T_TMP/unprobe.err")"
$Q stack_has $PY python3 < "$T_TMP/unprobe.json" || fail "the process is not sampled"

t not_root_is_one_clear_message
as_nobody "$(public "$XPUTOP")" -b -n 1 > /dev/null 2> "$T_TMP/nonroot.err"
rc=$?
[ $rc -eq 1 ] || fail "exit status $rc"
[ "$(grep -c . "$T_TMP/nonroot.err")" -eq 1 ] || fail "more than one message: $(cat "$T_TMP/nonroot.err")"
expect_grep "needs root" "$T_TMP/nonroot.err"

rm -rf "$SOCKDIR" "$W"
finish
