# SPDX-License-Identifier: GPL-2.0-only
# The GPU path without a GPU: the injection library with CUPTI replaced by a
# stand-in, played by an unprivileged process through the real socket, BPF
# site probe, DWARF unwinding and model; hostile clients; the launch-only
# probes on the real libcudart.  Needs root.
# test-from: private.sh
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
FORGER=$(public "$OUT/tests/progs/gpu_forger")
LAUNCHER=$(public "$OUT/tests/progs/cuda_launch")
# A socket directory of our own (root's, not writable by others, as xputop
# requires) that the unprivileged stand-in can reach.
SOCKDIR=$(mktemp -d /tmp/xputop-gpu.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock

t an_injected_process_shows_every_kernel_with_exact_totals
"$XPUTOP" -b -j --gpu-exact -n 12 -d 0.5 --window 60 > "$T_TMP/gpu.json" 2> "$T_TMP/gpu.err" &
X=$!
wait_json "$T_TMP/gpu.json"
as_nobody "$STANDIN" "$FAKE" 2 > "$T_TMP/expected" 2> "$T_TMP/standin.err" || fail "stand-in failed: $(cat "$T_TMP/standin.err")"
wait $X || fail "xputop failed: $(cat "$T_TMP/gpu.err")"
$Q gpu_kernels "$T_TMP/expected" < "$T_TMP/gpu.json" || fail "kernel totals"

t every_kernel_is_joined_to_a_launch_stack
$Q gpu_stack_pct 100 < "$T_TMP/gpu.json" || fail "stack coverage"

t stacks_follow_the_call_path_to_the_launch_api_and_kernel
$Q gpu_path matmul_kernel main standin_train_step standin_forward standin_matmul cudaLaunchKernel 'matmul_kernel(float*, float*, float*, int)_[g]' < "$T_TMP/gpu.json" || fail "runtime launch path"
$Q gpu_path driver_kernel standin_train_step standin_driver_launch cuLaunchKernel 'driver_kernel_[g]' < "$T_TMP/gpu.json" || fail "driver launch path"

t a_graph_launchs_kernels_belong_to_the_graph_launch
$Q gpu_path graph_node_kernel standin_train_step standin_graph_replay cudaGraphLaunch 'graph_node_kernel_[g]' < "$T_TMP/gpu.json" || fail "graph path"
$Q gpu_graphs_joined < "$T_TMP/gpu.json" || fail "graph kernels not all joined to their graph launch"

t dwarf_unwinding_crosses_code_without_frame_pointers
$Q gpu_path nofp_kernel standin_train_step standin_nofp_outer standin_nofp_inner cudaLaunchKernel < "$T_TMP/gpu.json" || fail "path through no-frame-pointer code"

t a_launch_200_calls_deep_keeps_its_stack_to_main
# PyTorch's compiled training launched cuDNN kernels from stacks deeper than
# the 127 frames of the kernel's frame-pointer walk (2.7% of its GPU time
# lost its root on an H200); the DWARF walk goes on to 256.
"$XPUTOP" -b -j --gpu-exact -n 8 -d 0.5 --window 60 > "$T_TMP/deep.json" 2> "$T_TMP/deep.err" &
X=$!
wait_json "$T_TMP/deep.json"
as_nobody env STANDIN_DEEP=200 "$STANDIN" "$FAKE" 1 > /dev/null 2>&1 || fail "stand-in failed"
xp_ok $X
$Q gpu_path deep_kernel main standin_train_step standin_deep standin_deep cudaLaunchKernel 'deep_kernel_[g]' \
	< "$T_TMP/deep.json" || fail "the deep launch's stack lost its root"

t pytorch_kernels_read_short_and_apart_in_the_table_and_whole_in_json
FILL_INT=_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_
FILL_BOOL=_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIbEESt5arrayIPcLm1EEEEviT0_T1_
for dt in int bool; do
	[ $dt = int ] && m=$FILL_INT || m=$FILL_BOOL
	$Q gpu_kernel_names "$m" "vectorized_elementwise_kernel<4, FillFunctor<$dt>>" \
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<$dt>, std::array<char*, 1ul> >(int, at::native::FillFunctor<$dt>, std::array<char*, 1ul>)" \
		< "$T_TMP/gpu.json" || fail "the FillFunctor<$dt> kernel's names"
done

t sampled_tracing_estimates_every_kernels_calls_and_share_from_a_fifth_of_the_time
# Slices of 50 ms in every 250: the figures are the traced kernels scaled by
# the share of time traced, and come close to what ran.  Slices only
# (XPUTOP_TRACE_WHOLE_US=0): the stand-in launches so little that its
# library would trace it throughout (tests/bpf/cupti.sh's case).
XPUTOP_TRACE_WHOLE_US=0 "$XPUTOP" -b -j -n 22 -d 0.5 --window 60 --gpu-sample 50/250 -w "$T_TMP/sampled.xpr" > "$T_TMP/sampled.json" 2> "$T_TMP/sampled.err" &
X=$!
wait_json "$T_TMP/sampled.json"
as_nobody "$STANDIN" "$FAKE" 8 > "$T_TMP/sampled.expected" 2> /dev/null || fail "stand-in failed"
xp_ok $X
$Q gpu_estimates "$T_TMP/sampled.expected" 35 5 15 25 < "$T_TMP/sampled.json" || fail "sampled estimates"

t a_replay_of_sampled_tracing_gives_the_same_estimates
"$XPUTOP" -r "$T_TMP/sampled.xpr" -b -j --window 60 > "$T_TMP/sampled-replay.json" 2> /dev/null || fail "replay failed"
$Q same_as "$T_TMP/sampled.json" < "$T_TMP/sampled-replay.json" || fail "the replay's estimates differ"

t exact_tracing_for_a_few_seconds_then_sampled
# The seconds count from xputop's start, before its sources load: a
# sanitizer build's, beside other suites, took more than 3 s to its first
# refresh (T_SLOW: 3 s for a plain build, 9 for a sanitizer build).
"$XPUTOP" -b -j -n $((8 + 2 * 3 * T_SLOW)) -d 0.5 --gpu-exact=$((3 * T_SLOW)) > "$T_TMP/switch.json" \
	2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/switch.json"
as_nobody "$STANDIN" "$FAKE" 5 > /dev/null 2>&1
xp_ok $X
$Q gpu_modes exact sampled < "$T_TMP/switch.json" || fail "the mode did not go from exact to sampled"

t the_process_is_named_and_its_launches_counted
$Q gpu_process gpu_standin cupti < "$T_TMP/gpu.json" || fail "process row"

t the_gpu_export_writes_folded_merged_and_trace_files
mkdir -p "$T_TMP/exp"
"$XPUTOP" -b -j --gpu-exact -n 10 -d 0.5 --window 60 --view gpu --export -o "$T_TMP/exp" > "$T_TMP/exp.json" 2> "$T_TMP/exp.err" &
X=$!
wait_json "$T_TMP/exp.json"
as_nobody "$STANDIN" "$FAKE" 1.5 > /dev/null 2>&1
xp_ok $X
F=$(ls "$T_TMP"/exp/xputop-gpu-2*.folded 2> /dev/null | head -1)
M=$(ls "$T_TMP"/exp/xputop-gpu-merged-*.folded 2> /dev/null | head -1)
J=$(ls "$T_TMP"/exp/xputop-gpu-*.trace.json 2> /dev/null | head -1)
if [ -z "$F" ] || [ -z "$M" ] || [ -z "$J" ]; then
	fail "missing export files: $(ls "$T_TMP/exp") $(cat "$T_TMP/exp.err")"
else
	# GPU time in microseconds: 2 ms per matmul call.
	expect_grep 'gpu_standin;.*;standin_matmul;cudaLaunchKernel;matmul_kernel(float\*, float\*, float\*, int)_\[g\] [0-9]*000$' "$F"
	expect_grep 'standin_graph_replay;cudaGraphLaunch;graph_node_kernel_\[g\] ' "$M"
	expect_grep ';standin_fill;cudaLaunchKernel;void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, std::array<char\*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char\*, 1ul>)_\[g\] [0-9]*$' "$F"
	[ "$T_CUR_FAILED" -eq 0 ] || { echo "  the export was:"; sed 's/^/    | /' "$F"; } >&2
	for f in "$F" "$M"; do
		perl /usr/share/perl5/Devel/NYTProf/flamegraph.pl "$f" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed on $f"
		[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned on $f: $(cat "$T_TMP/fg.err")"
	done
	python3 tests/jsonq.py chrome_trace "$J" < /dev/null || fail "the trace export"
fi

t a_program_outlives_a_killed_xputop_and_a_new_one_picks_it_up
# (it runs until the new xputop is done: on a loaded machine xputop's start
# and end take seconds, and a program of a fixed 12 s ended in the new one's
# first refresh, ci27)
# (setpriv itself, not as_nobody: $! must be the program's pid.)
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 60 > /dev/null 2> "$T_TMP/standin2.err" &
S=$!
"$XPUTOP" -b -j --gpu-exact -d 0.5 > "$T_TMP/first.json" 2>> "$T_TMP/xputop.err" &
A=$!
wait_json "$T_TMP/first.json"
sleep 1.5
kill -9 $A
wait $A 2> /dev/null
sleep 1
kill -0 $S 2> /dev/null || fail "the program died with its monitor"
"$XPUTOP" -b -j --gpu-exact -n 10 -d 0.5 --window 60 > "$T_TMP/again.json" 2>> "$T_TMP/xputop.err" || xp_failed $?
after=$(kill -0 $S 2> /dev/null && echo "ran on after it" || echo "had ended by its end")
kill -0 $S 2> /dev/null || fail "the program ended before the new xputop did: $(cat "$T_TMP/standin2.err")"
kill $S 2> /dev/null
wait $S 2> /dev/null
$Q gpu_process gpu_standin cupti < "$T_TMP/again.json" || fail "the new xputop does not see the program"
why=$($Q gpu_stack_pct 100 < "$T_TMP/again.json" 2>&1) ||
	fail "call sites were not announced again to the new xputop: $why; the program $after: $(tail -c 300 "$T_TMP/standin2.err" | tr '\n' ' '); its row: $(grep -o '"processes":\[{[^]]*' "$T_TMP/again.json" | tail -1 | cut -c1-400)"

t p_shows_only_its_process_and_leaves_the_others_library_dormant
# (setpriv itself, not as_nobody: $! must be the program's pid, not a subshell's)
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 6 > /dev/null 2>&1 &
S1=$!
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 6 > /dev/null 2>&1 &
S2=$!
"$XPUTOP" -b -j --gpu-exact -d 0.5 -n 10 --window 60 -p $S1 -v > "$T_TMP/p.json" 2> "$T_TMP/p.err" ||
	fail "xputop -p failed: $(cat "$T_TMP/p.err")"
wait $S1 $S2
$Q gpu_only_pids $S1 < "$T_TMP/p.json" || fail "-p $S1"
expect_grep "pid $S2 is not one -p watches: its injection library is left dormant" "$T_TMP/p.err"

t a_client_given_p_shows_only_its_process_from_the_collectors_stream
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 8 > /dev/null 2>&1 &
S1=$!
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 8 > /dev/null 2>&1 &
S2=$!
"$XPUTOP" -b -j --gpu-exact -d 0.5 -n 16 --window 60 > "$T_TMP/pa.json" 2> "$T_TMP/pa.err" &
A=$!
wait_json "$T_TMP/pa.json"
"$XPUTOP" -b -j -n 10 --window 60 -p $S1 > "$T_TMP/pc.json" 2> "$T_TMP/pc.err" ||
	fail "the client failed: $(cat "$T_TMP/pc.err")"
wait $A $S1 $S2
grep -q '"source":"collector pid' "$T_TMP/pc.json" || fail "the client collected for itself"
$Q gpu_only_pids $S1 < "$T_TMP/pc.json" || fail "the client's -p $S1"
$Q gpu_only_pids $S1 $S2 < "$T_TMP/pa.json" || fail "the agent (no -p) does not show both programs"

t a_commands_gpu_work_is_seen_when_what_it_starts_launches_it
# -- CMD watches the command and what it starts (-p's set follows them):
# here the CUDA program is the shell's child.
SUDO_UID=65534 SUDO_GID=65534 "$XPUTOP" -b -j --gpu-exact -d 0.5 --window 60 -- \
	sh -c '"$1" "$2" 1; true' sh "$STANDIN" "$FAKE" > "$T_TMP/cmd2.json" 2> "$T_TMP/cmd2.err" ||
	fail "xputop -- sh -c failed: $(cat "$T_TMP/cmd2.err")"
$Q gpu_process gpu_standin cupti < "$T_TMP/cmd2.json" || fail "the shell's child's GPU activity is missing"

# forged NAME OPTIONS MODE [ARG...]: a batch xputop with OPTIONS (one word
# list) writing NAME.json while the forger, as nobody, plays MODE; what the
# forger printed in r.
forged() {
	name=$1 opts=$2
	shift 2
	# shellcheck disable=SC2086
	"$XPUTOP" -b -j $opts > "$T_TMP/$name.json" 2>> "$T_TMP/xputop.err" &
	X=$!
	wait_json "$T_TMP/$name.json"
	r=$(as_nobody "$FORGER" "$XPUTOP_SOCKET" "$@")
	xp_ok $X
}

t a_client_claiming_another_pid_is_refused
forged forge "-n 6 -d 0.5" other-pid
[ "$r" = refused ] || fail "the forged connection stayed open"
expect_grep "claimed to be pid 1: connection refused" "$T_TMP/xputop.err"
$Q gpu_no_process gpu_forger < "$T_TMP/forge.json" || fail "the forger's data was shown"

t malformed_packets_are_dropped_and_counted_and_the_rest_kept
forged garbage "-n 6 -d 0.5" garbage
[ "$r" = open ] || fail "a client that sent bad packets was cut off"
$Q gpu_process gpu_forger cupti < "$T_TMP/garbage.json" || fail "the valid records after the bad ones are missing"
$Q dropped_at_least 3 < "$T_TMP/garbage.json" || fail "bad packets not counted as dropped"

t spans_a_client_claims_traced_throughout_are_bounded_and_checked
# Its own figures are all a client's spans can move: one past what it lived
# counts as at most its time, one that ends before it starts and one of two
# hours are refused and counted.
forged whole "-n 6 -d 0.5" whole
[ "$r" = open ] || fail "a client that claimed spans on throughout was cut off"
$Q gpu_comm_proc gpu_forger "0 < traced_whole_pct <= 100" "traced_whole_launches == 10" \
	< "$T_TMP/whole.json" || fail "the client's spans on throughout"
$Q dropped_at_least 2 < "$T_TMP/whole.json" || fail "the refused spans not counted as dropped"

t kernels_a_client_sends_without_their_launches_are_not_scaled_by_them
# A client traced throughout for a second, then sends slices whose kernels
# mostly came with no launch: its kernels cannot be told a span's from a
# slice's, and are not estimated (each would have stood for 50 of them).
forged orphans "-n 16 -d 0.5 --window 60" orphans 7
$Q gpu_comm_proc gpu_forger "kernels > 250" "kernels_without_launch_pct > 50" "kernels_est is None" \
	"gpu_ns_est is None" "launches_est is not None" < "$T_TMP/orphans.json" ||
	fail "kernels without their launches were estimated"

t run_a_command_as_the_invoking_user_with_the_library_set
SUDO_UID=65534 SUDO_GID=65534 "$XPUTOP" -b -j --gpu-exact -d 0.5 --window 60 -- "$STANDIN" "$FAKE" 1 > "$T_TMP/cmd.json" 2> "$T_TMP/cmd.err" || fail "xputop -- CMD failed: $(cat "$T_TMP/cmd.err")"
expect_grep "gpu_standin: uid=65534 CUDA_INJECTION64_PATH=.*/libxputop_inject[^/]*\.so loads$" "$T_TMP/cmd.err"
expect_grep "gpu_standin (pid [0-9]*) exited with status 0" "$T_TMP/cmd.err"
$Q gpu_process gpu_standin cupti < "$T_TMP/cmd.json" || fail "the command's GPU activity is missing"

# xputop and its library where uid 65534 cannot enter (T_TMP is 0700), as in
# a build tree under a private home.
PRIV=$T_TMP/priv
mkdir -p "$PRIV"
cp "$XPUTOP" "$OUT/libxputop_inject.so" "$PRIV/"
# run_priv NAME [WRAPPER...]: PRIV's xputop runs the stand-in as uid 65534.
run_priv() {
	name=$1
	shift
	"$@" env SUDO_UID=65534 SUDO_GID=65534 "$PRIV/xputop" -b -j --gpu-exact -d 0.3 -- "$STANDIN" "$FAKE" 0.5 \
		> "$T_TMP/$name.json" 2> "$T_TMP/$name.err" || fail "xputop -- CMD failed: $(cat "$T_TMP/$name.err")"
}
# given NAME: the library the stand-in was given, if it could load it.
given() { sed -n 's/^gpu_standin: uid=65534 CUDA_INJECTION64_PATH=\(.*\) loads$/\1/p' "$T_TMP/$1.err"; }

t a_command_whose_user_cannot_reach_the_library_loads_a_copy_of_roots
run_priv copy
COPY=$(given copy)
case $COPY in
"$SOCKDIR"/libxputop_inject-*.so) ;;
*) fail "the command was not given a copy in $SOCKDIR that it loads: $(cat "$T_TMP/copy.err")" ;;
esac
expect_grep "uid 65534 cannot load $PRIV/libxputop_inject.so ($T_TMP is not searchable by it: mode 0700, owner root); .*gpu_standin gets a copy it can load: $COPY$" "$T_TMP/copy.err"
if [ -f "$COPY" ]; then
	[ "$(stat -c '%U %a %h %F' "$COPY")" = "root 644 1 regular file" ] || fail "the copy is $(stat -c '%U %a %h %F' "$COPY")"
	cmp -s "$COPY" "$OUT/libxputop_inject.so" || fail "the copy differs from the library"
fi
$Q gpu_process gpu_standin cupti < "$T_TMP/copy.json" || fail "the command's GPU activity is missing"

t a_later_run_shares_the_copy
ino=$(stat -c %i "$COPY" 2> /dev/null)
run_priv again
[ "$(given again)" = "$COPY" ] && [ "$(stat -c %i "$COPY" 2> /dev/null)" = "$ino" ] ||
	fail "not the same copy: $(given again), inode $(stat -c %i "$COPY" 2> /dev/null) (was $ino)"

t an_entry_in_the_copys_place_is_replaced_never_followed
echo precious > "$T_TMP/victim"
rm -f "$COPY"
ln -s "$T_TMP/victim" "$COPY"
run_priv planted
[ "$(cat "$T_TMP/victim")" = precious ] || fail "the copy was written through a symlink"
[ -f "$COPY" ] && [ ! -L "$COPY" ] && cmp -s "$COPY" "$OUT/libxputop_inject.so" || fail "the symlink is still there"
[ "$(given planted)" = "$COPY" ] || fail "the command was not given the new copy: $(cat "$T_TMP/planted.err")"
chmod 666 "$COPY"
run_priv writable
[ "$(stat -c %a "$COPY")" = 644 ] || fail "a copy that others could write into was kept"

# A socket directory on a noexec mount, and /var/cache of a mount namespace
# of the test's own (the machine's stays as it is).
NX=$(mktemp -d /tmp/xputop-noexec.XXXXXX)
mount -t tmpfs -o noexec,mode=755 tmpfs "$NX" || fail "cannot mount a noexec tmpfs"
# shellcheck disable=SC2016
var_cache() { unshare -m sh -c 'mount -t tmpfs -o "$1",mode=755 tmpfs /var/cache && shift && exec "$@"' sh "$@"; }

t where_the_socket_directory_is_mounted_noexec_the_copy_goes_to_var_cache
run_priv nx var_cache exec env XPUTOP_SOCKET="$NX/gpu.sock"
case $(given nx) in
/var/cache/xputop/libxputop_inject-*.so) ;;
*) fail "the command was not given a copy in /var/cache/xputop that it loads: $(cat "$T_TMP/nx.err")" ;;
esac

t when_no_copy_can_be_loaded_what_stops_each_is_said_and_what_to_fix
run_priv nothing var_cache noexec env XPUTOP_SOCKET="$NX/gpu.sock"
expect_grep "uid 65534 cannot load $PRIV/libxputop_inject.so ($T_TMP is not searchable by it: mode 0700, owner root), nor a copy of it ($NX/libxputop_inject-[0-9a-f]*\.so is on a file system mounted noexec; /var/cache/xputop/libxputop_inject-[0-9a-f]*\.so is on a file system mounted noexec): until it can, only .*gpu_standin's launches are seen, not its GPU kernels: let uid 65534 reach the library, or install xputop" "$T_TMP/nothing.err"
expect_grep "gpu_standin: uid=65534 CUDA_INJECTION64_PATH=$PRIV/libxputop_inject.so cannot be loaded" "$T_TMP/nothing.err"
umount "$NX" && rmdir "$NX"

# Programs started by hand as uid 65534, launching through the real
# libcudart: one's CUDA_INJECTION64_PATH is where it cannot reach, the
# other's is readable but CUDA never loads it (there is no CUDA driver here).
# They launch until every finding has been said, then end: a loaded
# machine can take seconds to start xputop (ci30: programs that ran 7-8 s
# from before its start were never seen), so none has a fixed time.
mkdir -p "$T_TMP/hidden"
cp "$OUT/libxputop_inject.so" "$T_TMP/hidden/"
# (setpriv itself, not as_nobody: $! must be the program's pid.)
setpriv --reuid=65534 --regid=65534 --clear-groups \
	env CUDA_INJECTION64_PATH="$T_TMP/hidden/libxputop_inject.so" "$LAUNCHER" -s 60 -i 1 > /dev/null 2>&1 &
A=$!
setpriv --reuid=65534 --regid=65534 --clear-groups env CUDA_INJECTION64_PATH="$FAKE" "$LAUNCHER" -s 60 -i 1 > /dev/null 2>&1 &
B=$!
OTHER=$T_PUB/libother_tool.so	# a library by another name: another tool's
cp "$FAKE" "$OTHER"
setpriv --reuid=65534 --regid=65534 --clear-groups env CUDA_INJECTION64_PATH="$OTHER" "$LAUNCHER" -s 60 -i 1 > /dev/null 2>&1 &
C=$!
# One like the first that this xputop does not watch (-p): what another
# suite beside this one runs is as much none of its business.
setpriv --reuid=65534 --regid=65534 --clear-groups \
	env CUDA_INJECTION64_PATH="$T_TMP/hidden/libxputop_inject.so" "$LAUNCHER" -s 60 -i 1 > /dev/null 2>&1 &
D=$!
"$XPUTOP" -b -j -n 120 -d 0.5 -p "$A,$B,$C" > "$T_TMP/diag.json" 2> "$T_TMP/diag.err" &
X=$!
# The three findings come one a refresh, each 2 s after its program's first
# launch seen: until the third is said, and a refresh more.
i=0
until grep -q "(and 2 more)" "$T_TMP/diag.json" 2> /dev/null || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill $A $B $C $D 2> /dev/null
wait $A $B $C $D 2> /dev/null
# Until a refresh says none runs without the library, at most 10 s.
i=0
until tail -n 1 "$T_TMP/diag.json" | grep -q '"status":"no NVIDIA GPU' || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -INT $X
wait $X

# What each refresh's GPU status led with (a failure's context).
leads() { grep -o '"gpu":{"state":"[a-z]*","status":"[^;"]*' "$T_TMP/diag.json" | sed 's/.*"status":"//; s/ runs without.*(and \([0-9]*\) more)/ +\1 more/; s/ runs without.*/ +0 more/' | uniq -c | tr '\n' '|'; }

t a_program_that_cannot_load_its_library_is_named_in_the_gpu_status_with_why
$Q gpu_status_had "pid $A (cuda_launch) runs without xputop's library: uid 65534 cannot load its CUDA_INJECTION64_PATH ($T_TMP is not searchable by it: mode 0700, owner root)" < "$T_TMP/diag.json" ||
	fail "no word of pid $A; the status led with: $(leads)"

t a_program_whose_readable_library_was_never_loaded_is_told_what_to_check
$Q gpu_status_had "pid $B (cuda_launch) runs without xputop's library: CUDA did not load its CUDA_INJECTION64_PATH, $FAKE, though uid 65534 can read it" < "$T_TMP/diag.json" ||
	fail "no word of pid $B"

t a_program_with_another_tools_injection_library_is_told_so
$Q gpu_status_had "pid $C (cuda_launch) runs without xputop's library: its CUDA_INJECTION64_PATH is another tool's, $OTHER" < "$T_TMP/diag.json" ||
	fail "no word of pid $C"

t the_other_findings_are_counted
$Q gpu_status_had "(and 1 more); no CUDA process is connected" < "$T_TMP/diag.json" || fail "the second finding is not counted; the status led with: $(leads)"

t a_program_p_does_not_watch_is_no_finding
$Q gpu_status_had "pid $A (cuda_launch)" < "$T_TMP/diag.json" || fail "no word of pid $A"
$Q gpu_status_never "pid $D (" < "$T_TMP/diag.json" || fail "a finding about pid $D, which -p leaves out"

t a_finding_goes_when_its_program_ends
$Q gpu_status_lacks "runs without xputop's library" < "$T_TMP/diag.json" || fail "a finding outlived its program"

# The launch-only probes, on the real libcudart (its launches fail without a
# GPU, but the probes see them).  Each test gives its programs a copy of the
# library of their own, a file no other process maps, so that finding it is
# this xputop's doing.
CL=$OUT/tests/progs/cuda_launch
GD=$OUT/tests/progs/gpu_dlopen
CUDART=$(ldd "$CL" | awk '/libcudart/ { print $3 }')
CUDART_SO=$(basename "$CUDART")
own_cudart() {
	mkdir -p "$T_TMP/$1"
	cp "$CUDART" "$T_TMP/$1/$CUDART_SO"
}
# wait_launches JSON PID FRAMES...: until xputop shows PID's launches through
# FRAMES (its library is probed), at most 15 s.
wait_launches() {
	f=$1
	shift
	i=0
	until $Q gpu_launch_path "$@" < "$f" > /dev/null 2>&1 || [ $i -ge 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

t a_program_launching_every_2ms_before_xputop_starts_is_found
own_cudart running
LD_LIBRARY_PATH=$T_TMP/running "$CL" -s 8 -i 2 > /dev/null 2>&1 &
C=$!
sleep 0.5
"$XPUTOP" -b -j -n 4 -d 0.5 > "$T_TMP/lo.json" 2>> "$T_TMP/xputop.err" || xp_failed $?
wait $C
$Q gpu_launch_path $C main app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/lo.json" || fail "launch-only stack"
$Q gpu_process cuda_launch "launches only" < "$T_TMP/lo.json" || fail "launch-only process row"

t a_program_started_after_xputop_shows_its_launches_within_2s
own_cudart later
"$XPUTOP" -b -j -n 12 -d 0.5 --window 60 > "$T_TMP/later.json" 2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/later.json"
LD_LIBRARY_PATH=$T_TMP/later "$CL" -s 3 -i 2 > "$T_TMP/later.out" 2> /dev/null &
C=$!
wait $C
xp_ok $X
START=$(sed -n 's/.*start_ns \([0-9]*\).*/\1/p' "$T_TMP/later.out")
$Q gpu_launches_within $C "$START" 2000 main app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/later.json" ||
	fail "the launches of a program started later"

t a_program_that_dlopens_libcudart_later_shows_its_launches_within_2s
own_cudart dl
"$XPUTOP" -b -j -n 12 -d 0.5 --window 60 > "$T_TMP/dl.json" 2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/dl.json"
"$GD" "$T_TMP/dl/$CUDART_SO" 1 1000 2 > "$T_TMP/dl.out" 2> "$T_TMP/dl.err" &
D=$!
wait $D || fail "gpu_dlopen failed: $(cat "$T_TMP/dl.err")"
xp_ok $X
LOADED=$(sed -n 's/.*loaded_ns \([0-9]*\).*/\1/p' "$T_TMP/dl.out")
$Q gpu_launches_within $D "$LOADED" 2000 main late_model_step late_launch_layer cudaLaunchKernel < "$T_TMP/dl.json" ||
	fail "the launches after a late dlopen"

t launch_counts_are_exact_and_come_as_one_event_per_call_site_and_refresh
# A slow launcher keeps the copy mapped, so it is probed before the program
# counted starts (named exact_launch, to tell its lines in the export).
own_cudart exact
cp "$CL" "$T_TMP/exact_launch"
LD_LIBRARY_PATH=$T_TMP/exact "$CL" -s 60 -i 50 > /dev/null 2>&1 &
H=$!
mkdir -p "$T_TMP/exp2"
"$XPUTOP" -b -j -n 16 -d 0.5 --window 60 --gpu-exact --view gpu --export -o "$T_TMP/exp2" -w "$T_TMP/exact.xpr" \
	> "$T_TMP/exact.json" 2> "$T_TMP/exact.err" &
X=$!
wait_json "$T_TMP/exact.json"
wait_launches "$T_TMP/exact.json" $H cudaLaunchKernel
LD_LIBRARY_PATH=$T_TMP/exact "$T_TMP/exact_launch" -n 20000 -t 2 > "$T_TMP/exact.out" 2> /dev/null &
E=$!
wait $E
wait $X || fail "xputop failed: $(cat "$T_TMP/exact.err")"
kill $H
wait $H 2> /dev/null
$Q gpu_launch_calls $E 40000 < "$T_TMP/exact.json" || fail "total"
$Q gpu_launch_calls $E 30000 app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/exact.json" || fail "step site"
$Q gpu_launch_calls $E 10000 app_model_eval app_launch_layer cudaLaunchKernel < "$T_TMP/exact.json" || fail "eval site"
# Launches come as one event per (thread, call site) and refresh, not one
# each: 40,000 launches, and all that 8 s of a machine made, in < 10,000.
$Q events_at_most 10000 < "$T_TMP/exact.json" || fail "one event per launch"

t launch_counts_replay_the_same_from_a_recording
"$XPUTOP" -r "$T_TMP/exact.xpr" -b -j --window 60 > "$T_TMP/replay.json" 2> "$T_TMP/replay.err" ||
	fail "replay failed: $(cat "$T_TMP/replay.err")"
$Q gpu_launch_calls $E 40000 < "$T_TMP/replay.json" || fail "total"
$Q gpu_launch_calls $E 30000 app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/replay.json" || fail "step site"

t sampled_launch_probes_are_on_a_quarter_of_the_time_and_estimate_the_launches
# --gpu-sample 50/250: the launch probes go on for a quarter of every 250 ms
# (three times the library's 50 ms, at most a quarter of the period; the
# default is 10/500, the probes 30 ms of it), so the counts are about a
# quarter of the launches, and the estimate scales them back.  A launcher that sleeps between launches
# makes them at a rate the probes do not change.  The other process mapping
# the library keeps its mmap lock busy (-m), as CUDA's driver threads do, so
# each slice's probes take long to go in and out (they are written into every
# process that maps the file, under its lock): the launches they meet then
# are not the slice's (on an H200 they made the estimates 5 times too high).
# The probes stay in slices here (XPUTOP_PROBES_WHOLE_US=0): the holder
# alone launches so little that they would go on throughout (next case).
# The launcher's time is its life, from its start (its launch key's
# GPU_BORN) to its exit: from the first slice that counted it, it came out
# 9-23% low (a period is 500-800 ms here, a fifth of its 4 s).
own_cudart sampled
LD_LIBRARY_PATH=$T_TMP/sampled "$CL" -s 60 -i 50 -m 64 > /dev/null 2>&1 &
H=$!
XPUTOP_PROBES_WHOLE_US=0 "$XPUTOP" -b -j -n 14 -d 0.5 --window 60 --gpu-sample 50/250 \
	> "$T_TMP/lsampled.json" 2> "$T_TMP/lsampled.err" &
X=$!
wait_json "$T_TMP/lsampled.json"
wait_launches "$T_TMP/lsampled.json" $H cudaLaunchKernel
LD_LIBRARY_PATH=$T_TMP/sampled "$CL" -s 4 -i 0.5 > "$T_TMP/lsampled.out" 2> /dev/null &
S=$!
wait $S
wait $X || fail "xputop failed: $(cat "$T_TMP/lsampled.err")"
kill $H
wait $H 2> /dev/null
MADE=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$T_TMP/lsampled.out")
why=$($Q gpu_launch_estimate $S "$MADE" 5 35 15 < "$T_TMP/lsampled.json" 2>&1) ||
	fail "estimate of $MADE launches: $why; $(grep -o 'launch probes on[^;]*' "$T_TMP/lsampled.json" | tail -1)"
$Q gpu_status_had "slices (" < "$T_TMP/lsampled.json" || fail "the status says nothing of the slices"

t a_launcher_that_maps_cuda_late_is_watched_from_its_mapping
# A process that maps its CUDA libraries seconds after it starts (a Python
# program importing torch) where no other one had: until then the probes
# had no file to be in, and its time counts from when the file was mapped
# (its record's time), not from its start: from its start, the 2 s before
# its exec were estimated at the slices' pace (+51%, its uncertainty stated
# at +-2.6%).  Nor from the probes' first span: the launches between its
# mapping and that span are its too (-12 to -15%, 0.85-0.88 of the share
# traced).  No other process here maps this copy of the library; one
# mapping another (another suite's) reports it first, and the probes'
# slices over the process's first seconds see none of its launches: the
# same estimate.
own_cudart late
XPUTOP_PROBES_WHOLE_US=0 "$XPUTOP" -b -j -n 18 -d 0.5 --window 60 --gpu-sample 50/250 \
	> "$T_TMP/late.json" 2> "$T_TMP/late.err" &
X=$!
wait_json "$T_TMP/late.json"
sh -c "sleep 2; LD_LIBRARY_PATH=$T_TMP/late exec $CL -s 4 -i 0.5" > "$T_TMP/late.out" 2> /dev/null &
S=$!
wait $S
wait $X || fail "xputop failed: $(cat "$T_TMP/late.err")"
MADE=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$T_TMP/late.out")
why=$($Q gpu_launch_estimate $S "$MADE" 5 35 15 < "$T_TMP/late.json" 2>&1) ||
	fail "estimate of $MADE launches: $why; $(grep -o 'launch probes on[^;]*' "$T_TMP/late.json" | tail -1)"

t a_launcher_idle_before_its_first_launch_has_its_time_on_throughout
# Its library mapped, a launcher waits 3 s (a Python program building its
# model) and then launches at full pace: the probes, on throughout from its
# mapping, count nothing for 3 s, go to slices at its first launches, and
# xputop meets it only then (its first key).  Its 3 s on throughout are its
# time counted too: without them the time before its first launches was
# estimated at its slices' pace (+46-49% here in four runs; on an H200 a launch-only
# training run +182%, decode +85%).
own_cudart idle1
"$XPUTOP" -b -j -n 20 -d 0.5 --window 60 > "$T_TMP/idle1.json" 2> "$T_TMP/idle1.err" &
X=$!
wait_json "$T_TMP/idle1.json"
LD_LIBRARY_PATH=$T_TMP/idle1 "$CL" -w 3 -s 4 -i 0.1 > "$T_TMP/idle1.out" 2> /dev/null &
S=$!
wait $S
wait $X || fail "xputop failed: $(cat "$T_TMP/idle1.err")"
MADE=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$T_TMP/idle1.out")
$Q gpu_launch_whole $S "$MADE" 30 15 < "$T_TMP/idle1.json" ||
	fail "estimate of $MADE launches; $(grep -o 'launch probes on[^;]*' "$T_TMP/idle1.json" | tail -1)"

t a_sparse_launcher_is_counted_throughout
# About 190 launches a second (a 5 ms sleep between them) and a holder's 20:
# their traps cost the machine a few hundredths of the budget (1 ms a
# second), so the probes, on throughout from the start, stay so and count
# every launch: the estimate is the count, where slices of 6% of the time
# would give it +-10% or more.  A launcher that comes at full pace for a
# moment (-n: 20,000 launches back to back) outruns the budget: the probes
# go to slices (the status says how often they ended so) and back once their
# slices see little; the sparse one's estimate still holds, within 3% or
# twice the uncertainty it states for the time not counted throughout.
own_cudart sparse
LD_LIBRARY_PATH=$T_TMP/sparse "$CL" -s 60 -i 50 > /dev/null 2>&1 &
H=$!
"$XPUTOP" -b -j -n 24 -d 0.5 --window 60 > "$T_TMP/sparse.json" 2> "$T_TMP/sparse.err" &
X=$!
wait_json "$T_TMP/sparse.json"
wait_launches "$T_TMP/sparse.json" $H cudaLaunchKernel
LD_LIBRARY_PATH=$T_TMP/sparse "$CL" -s 7 -i 5 > "$T_TMP/sparse.out" 2> /dev/null &
S=$!
sleep 3
LD_LIBRARY_PATH=$T_TMP/sparse "$CL" -n 20000 > /dev/null 2> /dev/null
wait $S
wait $X || fail "xputop failed: $(cat "$T_TMP/sparse.err")"
kill $H
wait $H 2> /dev/null
MADE=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$T_TMP/sparse.out")
$Q gpu_launch_whole $S "$MADE" 60 3 < "$T_TMP/sparse.json" ||
	fail "estimate of $MADE launches; $(grep -o 'launch probes on[^;]*' "$T_TMP/sparse.json" | tail -1)"
grep -qE "on throughout [0-9]+ times? \([0-9.]+ s ended; [1-9][0-9]* ended by their traps' cost\)" "$T_TMP/sparse.json" ||
	fail "the status never said the probes went back to slices: $(grep -o 'launch probes on[^;]*' "$T_TMP/sparse.json" | tail -1)"

t the_launch_export_weights_each_call_site_by_its_count
F=$(ls "$T_TMP"/exp2/xputop-gpu-launches-*.folded 2> /dev/null | head -1)
if [ -z "$F" ]; then
	fail "no launch stacks exported: $(ls "$T_TMP/exp2")"
else
	total=$(awk '/^exact_launch;/ { n += $NF } END { print n + 0 }' "$F")
	# The weights are this test's point: a frame the unwinder could not name
	# between the call site and the API (seen once under ASan in a loaded
	# run; the stack tests above check the frames) does not move a count.
	step=$(awk '/^exact_launch;.*;app_model_step;app_launch_layer;(\[unknown\];)?cudaLaunchKernel [0-9]+$/ { n += $NF } END { print n + 0 }' "$F")
	[ "$total" = 40000 ] && [ "$step" = 30000 ] || fail "exported $total launches, $step from the step site: $(cat "$F")"
fi

t a_launch_through_nvccs_stub_is_counted_once
# nvcc's <<<>>> calls __cudaLaunchKernel since CUDA 13, which only jumps to
# cudaLaunchKernel: a probe on both counted a PyTorch launch twice (launch-
# only estimates 1.5 times the truth on an H200).  The stub is left out.
own_cudart stub
LD_LIBRARY_PATH=$T_TMP/stub "$CL" -s 60 -i 50 -k > /dev/null 2>&1 &
H=$!
"$XPUTOP" -b -j -n 12 -d 0.5 --window 60 --gpu-exact > "$T_TMP/stub.json" 2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/stub.json"
wait_launches "$T_TMP/stub.json" $H cudaLaunchKernel
LD_LIBRARY_PATH=$T_TMP/stub "$CL" -n 3000 -k > "$T_TMP/stub.out" 2> /dev/null &
N=$!
wait $N
xp_ok $X
kill $H
wait $H 2> /dev/null
grep -q "^launches 3000 " "$T_TMP/stub.out" || fail "the launcher: $(cat "$T_TMP/stub.out")"
$Q gpu_launch_calls $N 3000 < "$T_TMP/stub.json" || fail "total"

t a_driver_launch_made_by_the_runtime_is_not_counted_twice
# A stand-in runtime whose cudaLaunchKernel calls the driver's cuLaunchKernel
# (the toolkit's stub), and a program that also calls cuLaunchKernel itself.
mkdir -p "$T_TMP/nested"
cp "$OUT/tests/fake_cudart/libcudart.so.13" "$T_TMP/nested/"
cp "$(dirname "$CUDART")/stubs/libcuda.so" "$T_TMP/nested/"
export XPU_TEST_LIBCUDA="$T_TMP/nested/libcuda.so"
"$GD" "$T_TMP/nested/libcudart.so.13" 0 1200 50 "$XPU_TEST_LIBCUDA" > /dev/null 2>&1 &
H=$!
"$XPUTOP" -b -j -n 12 -d 0.5 --window 60 --gpu-exact > "$T_TMP/nested.json" 2>> "$T_TMP/xputop.err" &
X=$!
wait_json "$T_TMP/nested.json"
wait_launches "$T_TMP/nested.json" $H late_driver_layer cuLaunchKernel
"$GD" "$T_TMP/nested/libcudart.so.13" 0 5000 0 "$XPU_TEST_LIBCUDA" > /dev/null 2>&1 &
N=$!
wait $N
xp_ok $X
kill $H
wait $H 2> /dev/null
unset XPU_TEST_LIBCUDA
$Q gpu_launch_calls $N 10000 < "$T_TMP/nested.json" || fail "total"
$Q gpu_launch_calls $N 5000 late_launch_layer cudaLaunchKernel < "$T_TMP/nested.json" || fail "runtime launches"
$Q gpu_launch_calls $N 5000 late_driver_layer cuLaunchKernel < "$T_TMP/nested.json" || fail "direct driver launches"

rm -rf "$SOCKDIR"
finish
