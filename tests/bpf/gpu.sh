# The GPU path without a GPU: the injection library with CUPTI replaced by a
# stand-in, played by an unprivileged process through the real socket, BPF
# site probe, DWARF unwinding and model; hostile clients; the launch-only
# probes on the real libcudart.  Needs root.
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
"$XPUTOP" -b -j -n 12 -d 0.5 --window 60 > "$T_TMP/gpu.json" 2> "$T_TMP/gpu.err" &
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

t dwarf_unwinding_crosses_code_without_frame_pointers
$Q gpu_path nofp_kernel standin_train_step standin_nofp_outer standin_nofp_inner cudaLaunchKernel < "$T_TMP/gpu.json" || fail "path through no-frame-pointer code"

t the_process_is_named_and_its_launches_counted
$Q gpu_process gpu_standin cupti < "$T_TMP/gpu.json" || fail "process row"

t the_gpu_export_writes_folded_merged_and_trace_files
mkdir -p "$T_TMP/exp"
"$XPUTOP" -b -j -n 10 -d 0.5 --window 60 --view gpu --export -o "$T_TMP/exp" > "$T_TMP/exp.json" 2> "$T_TMP/exp.err" &
X=$!
wait_json "$T_TMP/exp.json"
as_nobody "$STANDIN" "$FAKE" 1.5 > /dev/null 2>&1
wait $X
F=$(ls "$T_TMP"/exp/xputop-gpu-2*.folded 2> /dev/null | head -1)
M=$(ls "$T_TMP"/exp/xputop-gpu-merged-*.folded 2> /dev/null | head -1)
J=$(ls "$T_TMP"/exp/xputop-gpu-*.trace.json 2> /dev/null | head -1)
if [ -z "$F" ] || [ -z "$M" ] || [ -z "$J" ]; then
	fail "missing export files: $(ls "$T_TMP/exp") $(cat "$T_TMP/exp.err")"
else
	# GPU time in microseconds: 2 ms per matmul call.
	expect_grep 'gpu_standin;.*;standin_matmul;cudaLaunchKernel;matmul_kernel(float\*, float\*, float\*, int)_\[g\] [0-9]*000$' "$F"
	expect_grep 'standin_graph_replay;cudaGraphLaunch;graph_node_kernel_\[g\] ' "$M"
	[ "$T_CUR_FAILED" -eq 0 ] || { echo "  the export was:"; sed 's/^/    | /' "$F"; } >&2
	for f in "$F" "$M"; do
		perl /usr/share/perl5/Devel/NYTProf/flamegraph.pl "$f" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed on $f"
		[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned on $f: $(cat "$T_TMP/fg.err")"
	done
	python3 tests/jsonq.py chrome_trace "$J" < /dev/null || fail "the trace export"
fi

t a_program_outlives_a_killed_xputop_and_a_new_one_picks_it_up
as_nobody "$STANDIN" "$FAKE" 12 > /dev/null 2> "$T_TMP/standin2.err" &
S=$!
"$XPUTOP" -b -j -d 0.5 > "$T_TMP/first.json" 2> /dev/null &
A=$!
wait_json "$T_TMP/first.json"
sleep 1.5
kill -9 $A
wait $A 2> /dev/null
sleep 1
kill -0 $S 2> /dev/null || fail "the program died with its monitor"
"$XPUTOP" -b -j -n 10 -d 0.5 --window 60 > "$T_TMP/again.json" 2> /dev/null
wait $S || fail "the program failed: $(cat "$T_TMP/standin2.err")"
$Q gpu_process gpu_standin cupti < "$T_TMP/again.json" || fail "the new xputop does not see the program"
$Q gpu_stack_pct 100 < "$T_TMP/again.json" || fail "call sites were not announced again to the new xputop"

t a_client_claiming_another_pid_is_refused
"$XPUTOP" -b -j -n 6 -d 0.5 > "$T_TMP/forge.json" 2> "$T_TMP/forge.err" &
X=$!
wait_json "$T_TMP/forge.json"
r=$(as_nobody "$FORGER" "$XPUTOP_SOCKET" other-pid)
wait $X
[ "$r" = refused ] || fail "the forged connection stayed open"
expect_grep "claimed to be pid 1: connection refused" "$T_TMP/forge.err"
$Q gpu_no_process forger < "$T_TMP/forge.json" || fail "the forger's data was shown"

t malformed_packets_are_dropped_and_counted_and_the_rest_kept
"$XPUTOP" -b -j -n 6 -d 0.5 > "$T_TMP/garbage.json" 2> /dev/null &
X=$!
wait_json "$T_TMP/garbage.json"
r=$(as_nobody "$FORGER" "$XPUTOP_SOCKET" garbage)
wait $X
[ "$r" = open ] || fail "a client that sent bad packets was cut off"
$Q gpu_process forger cupti < "$T_TMP/garbage.json" || fail "the valid records after the bad ones are missing"
$Q dropped_at_least 3 < "$T_TMP/garbage.json" || fail "bad packets not counted as dropped"

t run_a_command_as_the_invoking_user_with_the_library_set
SUDO_UID=65534 SUDO_GID=65534 "$XPUTOP" -b -j -d 0.5 --window 60 -- "$STANDIN" "$FAKE" 1 > "$T_TMP/cmd.json" 2> "$T_TMP/cmd.err" || fail "xputop -- CMD failed: $(cat "$T_TMP/cmd.err")"
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
	"$@" env SUDO_UID=65534 SUDO_GID=65534 "$PRIV/xputop" -b -j -d 0.3 -- "$STANDIN" "$FAKE" 0.5 \
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
mkdir -p "$T_TMP/hidden"
cp "$OUT/libxputop_inject.so" "$T_TMP/hidden/"
# (setpriv itself, not as_nobody: $! must be the program's pid.)
setpriv --reuid=65534 --regid=65534 --clear-groups \
	env CUDA_INJECTION64_PATH="$T_TMP/hidden/libxputop_inject.so" "$LAUNCHER" 7 > /dev/null &
A=$!
setpriv --reuid=65534 --regid=65534 --clear-groups env CUDA_INJECTION64_PATH="$FAKE" "$LAUNCHER" 8 > /dev/null &
B=$!
OTHER=$T_PUB/libother_tool.so	# a library by another name: another tool's
cp "$FAKE" "$OTHER"
setpriv --reuid=65534 --regid=65534 --clear-groups env CUDA_INJECTION64_PATH="$OTHER" "$LAUNCHER" 8 > /dev/null &
C=$!
"$XPUTOP" -b -j -n 24 -d 0.5 > "$T_TMP/diag.json" 2> "$T_TMP/diag.err"
wait $A $B $C

t a_program_that_cannot_load_its_library_is_named_in_the_gpu_status_with_why
$Q gpu_status_had "pid $A (cuda_launch) runs without xputop's library: uid 65534 cannot load its CUDA_INJECTION64_PATH ($T_TMP is not searchable by it: mode 0700, owner root)" < "$T_TMP/diag.json" ||
	fail "no word of pid $A"

t a_program_whose_readable_library_was_never_loaded_is_told_what_to_check
$Q gpu_status_had "pid $B (cuda_launch) runs without xputop's library: CUDA did not load its CUDA_INJECTION64_PATH, $FAKE, though uid 65534 can read it" < "$T_TMP/diag.json" ||
	fail "no word of pid $B"

t a_program_with_another_tools_injection_library_is_told_so
$Q gpu_status_had "pid $C (cuda_launch) runs without xputop's library: its CUDA_INJECTION64_PATH is another tool's, $OTHER" < "$T_TMP/diag.json" ||
	fail "no word of pid $C"

t the_other_findings_are_counted
$Q gpu_status_had "(and 1 more); no CUDA process is connected" < "$T_TMP/diag.json" || fail "the second finding is not counted"

t a_finding_goes_when_its_program_ends
$Q gpu_status_lacks "runs without xputop's library" < "$T_TMP/diag.json" || fail "a finding outlived its program"

t a_program_without_the_library_shows_its_launches_and_their_stacks
"$OUT/tests/progs/cuda_launch" 4 > /dev/null &
C=$!
"$XPUTOP" -b -j -n 4 -d 0.5 > "$T_TMP/lo.json" 2> /dev/null
wait $C
$Q gpu_launch_path $C main app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/lo.json" || fail "launch-only stack"
$Q gpu_process cuda_launch "launches only" < "$T_TMP/lo.json" || fail "launch-only process row"

rm -rf "$SOCKDIR"
finish
