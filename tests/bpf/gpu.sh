# The GPU path without a GPU: the injection library with CUPTI replaced by a
# stand-in, played by an unprivileged process through the real socket, BPF
# site probe, DWARF unwinding and model; hostile clients; the launch-only
# probes on the real libcudart.  Needs root.
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
FAKE=$(realpath "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(realpath "$OUT/tests/progs/gpu_standin")
# A socket directory of our own (root's, not writable by others, as xputop
# requires) that the unprivileged stand-in can reach.
SOCKDIR=$(mktemp -d /tmp/xputop-gpu.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

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
$Q gpu_graphs_joined < "$T_TMP/gpu.json" || fail "graph kernels not all joined to their graph launch"

t dwarf_unwinding_crosses_code_without_frame_pointers
$Q gpu_path nofp_kernel standin_train_step standin_nofp_outer standin_nofp_inner cudaLaunchKernel < "$T_TMP/gpu.json" || fail "path through no-frame-pointer code"

t pytorch_kernels_read_short_and_apart_in_the_table_and_whole_in_json
FILL_INT=_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_
FILL_BOOL=_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIbEESt5arrayIPcLm1EEEEviT0_T1_
for dt in int bool; do
	[ $dt = int ] && m=$FILL_INT || m=$FILL_BOOL
	$Q gpu_kernel_names "$m" "vectorized_elementwise_kernel<4, FillFunctor<$dt>>" \
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<$dt>, std::array<char*, 1ul> >(int, at::native::FillFunctor<$dt>, std::array<char*, 1ul>)" \
		< "$T_TMP/gpu.json" || fail "the FillFunctor<$dt> kernel's names"
done

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
	expect_grep ';standin_fill;cudaLaunchKernel;void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, std::array<char\*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char\*, 1ul>)_\[g\] [0-9]*$' "$F"
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
r=$(as_nobody "$OUT/tests/progs/gpu_forger" "$XPUTOP_SOCKET" other-pid)
wait $X
[ "$r" = refused ] || fail "the forged connection stayed open"
expect_grep "claimed to be pid 1: connection refused" "$T_TMP/forge.err"
$Q gpu_no_process forger < "$T_TMP/forge.json" || fail "the forger's data was shown"

t malformed_packets_are_dropped_and_counted_and_the_rest_kept
"$XPUTOP" -b -j -n 6 -d 0.5 > "$T_TMP/garbage.json" 2> /dev/null &
X=$!
wait_json "$T_TMP/garbage.json"
r=$(as_nobody "$OUT/tests/progs/gpu_forger" "$XPUTOP_SOCKET" garbage)
wait $X
[ "$r" = open ] || fail "a client that sent bad packets was cut off"
$Q gpu_process forger cupti < "$T_TMP/garbage.json" || fail "the valid records after the bad ones are missing"
$Q dropped_at_least 3 < "$T_TMP/garbage.json" || fail "bad packets not counted as dropped"

t run_a_command_as_the_invoking_user_with_the_library_set
SUDO_UID=65534 SUDO_GID=65534 "$XPUTOP" -b -j -d 0.5 --window 60 -- "$STANDIN" "$FAKE" 1 > "$T_TMP/cmd.json" 2> "$T_TMP/cmd.err" || fail "xputop -- CMD failed: $(cat "$T_TMP/cmd.err")"
expect_grep "gpu_standin: uid=65534 CUDA_INJECTION64_PATH=.*libxputop_inject.so" "$T_TMP/cmd.err"
expect_grep "gpu_standin (pid [0-9]*) exited with status 0" "$T_TMP/cmd.err"
$Q gpu_process gpu_standin cupti < "$T_TMP/cmd.json" || fail "the command's GPU activity is missing"

t a_program_without_the_library_shows_its_launches_and_their_stacks
"$OUT/tests/progs/cuda_launch" 4 > /dev/null &
C=$!
"$XPUTOP" -b -j -n 4 -d 0.5 > "$T_TMP/lo.json" 2> /dev/null
wait $C
$Q gpu_launch_path $C main app_model_step app_launch_layer cudaLaunchKernel < "$T_TMP/lo.json" || fail "launch-only stack"
$Q gpu_process cuda_launch "launches only" < "$T_TMP/lo.json" || fail "launch-only process row"

rm -rf "$SOCKDIR"
finish
