# SPDX-License-Identifier: GPL-2.0-only
# Kernels launched by a helper thread for a thread that waits (issue 26):
# autograd's engine thread launches the backward pass while the thread in
# loss.backward() waits in Engine::execute.  Without a GPU: gpu_waiter's
# main thread waits in standin_wait_for_worker, given as the waiter, while
# its worker launches through the fake-CUPTI library; the worker's kernels
# must show under the main thread's stack, those it launches while the main
# thread waits elsewhere must not, and another process's must not either.
# Needs root.
# test-timeout: 180
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
PROG=$(public "$OUT/tests/progs/gpu_waiter")
WAITER=for:gpu_waiter:standin_wait_for_worker

t a_helper_threads_kernels_show_under_the_waiting_threads_stack
# (those of the first step too: the end of a wait is seen at the
# instruction its call returns to, probed when the first wait comes, and the
# main thread is found still waiting then)
# Process A waits in the waiter every step; process B, beside it, runs the
# same steps but polls instead (no waiter), so its worker launches while
# A's main thread waits.
"$XPUTOP" -b -j --gpu-exact -n 20 -d 0.5 --window 60 --gpu-waiters "$WAITER" -w "$T_TMP/rec.xpr" \
	> "$T_TMP/w.json" 2> "$T_TMP/w.err" &
X=$!
wait_json "$T_TMP/w.json"
as_nobody env STANDIN_PROBED=waiter "$PROG" "$FAKE" 3 > "$T_TMP/a.expected" 2> "$T_TMP/a.err" &
A=$!
as_nobody "$PROG" "$FAKE" 3 free > "$T_TMP/b.expected" 2> "$T_TMP/b.err" || fail "B failed: $(cat "$T_TMP/b.err")"
wait $A || fail "A failed: $(cat "$T_TMP/a.err")"
xp_ok $X
$Q gpu_stitched "$T_TMP/a.expected" mm_backward_kernel "launched for" main standin_step standin_backward \
	standin_wait_for_worker "[launched for]" standin_engine_thread standin_mm_backward cudaLaunchKernel \
	'mm_backward_kernel_[g]' < "$T_TMP/w.json" || fail "the worker's kernels are not all under the waiter"

t the_helper_threads_start_is_left_out_of_the_stitched_stack
$Q gpu_stacks_lack "$T_TMP/a.expected" mm_backward_kernel start_thread clone3 clone < "$T_TMP/w.json" ||
	fail "thread start frames in the stitched stack"
# (the names are there to be left out: the worker's launches outside the wait show them)
$Q gpu_stitched "$T_TMP/a.expected" outside_kernel "same thread" start_thread standin_engine_thread \
	< "$T_TMP/w.json" || fail "the thread's start is not in its own stacks"

t the_waiting_threads_own_launches_stay_its_own
$Q gpu_stitched "$T_TMP/a.expected" forward_kernel "same thread" main standin_step standin_forward \
	cudaLaunchKernel < "$T_TMP/w.json" || fail "the main thread's launches"
$Q gpu_stacks_lack "$T_TMP/a.expected" forward_kernel "[launched for]" < "$T_TMP/w.json" || fail "stitched"
# (and those made inside the wait)
$Q gpu_stitched "$T_TMP/a.expected" wait_kernel "same thread" main standin_wait_for_worker cudaLaunchKernel \
	< "$T_TMP/w.json" || fail "the waiting thread's launch inside its wait"
$Q gpu_stacks_lack "$T_TMP/a.expected" wait_kernel "[launched for]" < "$T_TMP/w.json" || fail "stitched to itself"

t launches_outside_the_wait_are_not_stitched
$Q gpu_stitched "$T_TMP/a.expected" outside_kernel "same thread" standin_engine_thread standin_outside_launch \
	< "$T_TMP/w.json" || fail "the worker's launches outside the wait"
$Q gpu_stacks_lack "$T_TMP/a.expected" outside_kernel standin_wait_for_worker standin_poll_worker main \
	"[launched for]" < "$T_TMP/w.json" || fail "a launch outside the wait was stitched"

t another_processs_launches_are_not_stitched_under_this_ones_wait
$Q gpu_stitched "$T_TMP/b.expected" mm_backward_kernel "same thread" standin_engine_thread standin_mm_backward \
	< "$T_TMP/w.json" || fail "B's worker kernels"
$Q gpu_stacks_lack "$T_TMP/b.expected" mm_backward_kernel standin_wait_for_worker "[launched for]" main \
	< "$T_TMP/w.json" || fail "B's kernels stitched under A's wait"

t every_kernel_keeps_its_launch_stack_and_its_count
$Q gpu_stack_pct 100 < "$T_TMP/w.json" || fail "kernels without their (stitched) launch"
$Q gpu_pid_kernels "$T_TMP/a.expected" < "$T_TMP/w.json" || fail "A's kernel totals"
$Q gpu_pid_kernels "$T_TMP/b.expected" < "$T_TMP/w.json" || fail "B's kernel totals"

t the_status_line_counts_the_waits_and_the_stitched_launches
# A's 2 backward launches a step, over some 100 steps
$Q gpu_status_had "waiters: 1 function probed, " < "$T_TMP/w.json" || fail "no waiter in the status"
$Q gpu_status_had " launches stitched" < "$T_TMP/w.json" || fail "no stitched launches in the status"

t a_replay_shows_the_same_stitched_stacks
"$XPUTOP" -r "$T_TMP/rec.xpr" -b -j --window 60 > "$T_TMP/replay.json" 2> "$T_TMP/replay.err" ||
	fail "replay failed: $(cat "$T_TMP/replay.err")"
$Q gpu_stitched "$T_TMP/a.expected" mm_backward_kernel "launched for" standin_wait_for_worker "[launched for]" \
	standin_mm_backward < "$T_TMP/replay.json" || fail "the replay's stitched stacks"
$Q gpu_stitched "$T_TMP/a.expected" outside_kernel "same thread" standin_outside_launch \
	< "$T_TMP/replay.json" || fail "the replay's unstitched stacks"

t the_folded_export_holds_the_stitched_stack
mkdir -p "$T_TMP/exp"
"$XPUTOP" -r "$T_TMP/rec.xpr" -b --window 60 --view gpu --export -o "$T_TMP/exp" > /dev/null 2>&1 ||
	fail "export failed"
F=$(ls "$T_TMP"/exp/xputop-gpu-2*.folded 2> /dev/null | head -1)
have "$F" "the folded export"
expect_grep ';standin_wait_for_worker;\[launched for\];standin_engine_thread;standin_mm_backward;.*mm_backward_kernel_\[g\] [0-9]*$' "$F"

t with_no_waiters_nothing_is_stitched
"$XPUTOP" -b -j --gpu-exact -n 12 -d 0.5 --window 60 --gpu-waiters none > "$T_TMP/none.json" \
	2> "$T_TMP/none.err" &
X=$!
wait_json "$T_TMP/none.json"
as_nobody "$PROG" "$FAKE" 1 > "$T_TMP/n.expected" 2> /dev/null || fail "the program failed"
xp_ok $X
$Q gpu_stitched "$T_TMP/n.expected" mm_backward_kernel "same thread" standin_engine_thread standin_mm_backward \
	< "$T_TMP/none.json" || fail "stitched with no waiter given"

t an_exception_thrown_through_a_waiter_reaches_its_handler
# autograd's Engine::execute throws when the backward pass fails: the
# program must go on as without xputop (a uretprobe would make the unwinder
# end it in std::terminate).
THROW=$(public "$OUT/tests/progs/gpu_waiter_throw")
"$XPUTOP" -b -j --gpu-exact -n 8 -d 0.5 --gpu-waiters 'for:gpu_waiter_throw:_Z21standin_throwing_wait*' \
	> "$T_TMP/throw.json" 2> "$T_TMP/throw.err" &
X=$!
wait_json "$T_TMP/throw.json"
as_nobody "$THROW" "$FAKE" 10 > "$T_TMP/throw.out" 2> "$T_TMP/throw.prog" ||
	fail "the program died: $(cat "$T_TMP/throw.out" "$T_TMP/throw.prog")"
expect_grep '"caught": 5' "$T_TMP/throw.out"
xp_ok $X
$Q gpu_status_had "waiters: 1 function probed, 10 waits" < "$T_TMP/throw.json" || fail "the waiter was not probed"

NODES=create=gpu_waiter:standin_make_node:*arg1,run=gpu_waiter:standin_evaluate_function:arg1
# waits_said JSON: what each refresh's status said of the waits and nodes
# (to tell why a launch missed its stitched stack, where one did).
waits_said() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        st = json.loads(l)["gpu"]["status"]
        print(st[st.find("waiters:"):])' "$1" 2> /dev/null | uniq | head -n 4
}

t a_nodes_backward_kernels_show_under_the_forward_call_that_made_it
# (the node probes, --gpu-nodes: the stand-in makes nodes A and B in
# layer_a_forward and layer_b_forward, then its worker runs A, B and C,
# never made, while the main thread waits)
"$XPUTOP" -b -j --gpu-exact -n 16 -d 0.5 --window 60 --gpu-waiters "$WAITER" --gpu-nodes="$NODES" \
	-w "$T_TMP/nodes.xpr" > "$T_TMP/nodes.json" 2> "$T_TMP/nodes.err" &
X=$!
wait_json "$T_TMP/nodes.json"
as_nobody env STANDIN_PROBED=waiter,nodes "$PROG" "$FAKE" 3 nodes > "$T_TMP/nodes.expected" \
	2> "$T_TMP/nodes.perr" ||
	fail "the program failed: $(cat "$T_TMP/nodes.perr")"
xp_ok $X
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_a_kernel 90 "forward site" main standin_step layer_a_forward \
	standin_make_node "[backward]" standin_engine_thread standin_run_nodes standin_evaluate_function \
	cudaLaunchKernel < "$T_TMP/nodes.json" ||
	fail "node A's kernels are not under layer_a_forward; the status said: $(waits_said "$T_TMP/nodes.json")"
$Q gpu_stacks_lack "$T_TMP/nodes.expected" node_a_kernel layer_b_forward layer_e_forward layer_f_forward \
	< "$T_TMP/nodes.json" || fail "node A's kernels under something else too"

t b_each_node_sits_under_its_own_forward_call
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_b_kernel 90 "forward site" main standin_step layer_b_forward \
	standin_make_node "[backward]" standin_evaluate_function < "$T_TMP/nodes.json" ||
	fail "node B's kernels are not under layer_b_forward"
$Q gpu_stacks_lack "$T_TMP/nodes.expected" node_b_kernel layer_a_forward < "$T_TMP/nodes.json" ||
	fail "node B's kernels under layer_a_forward"
# Nodes E and F: one class, made by one function at one depth, from two
# callers (as one Python module's forward serves two modules): each under
# its own.
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_e_kernel 90 "forward site" main standin_step layer_e_forward \
	standin_linear standin_make_node "[backward]" standin_evaluate_function < "$T_TMP/nodes.json" ||
	fail "node E's kernels are not under layer_e_forward"
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_f_kernel 90 "forward site" main standin_step layer_f_forward \
	standin_linear standin_make_node "[backward]" standin_evaluate_function < "$T_TMP/nodes.json" ||
	fail "node F's kernels are not under layer_f_forward"
$Q gpu_stacks_lack "$T_TMP/nodes.expected" node_f_kernel layer_e_forward < "$T_TMP/nodes.json" ||
	fail "node F's kernels under layer_e_forward"
# (and the forward's own kernels beside them, launched by the main thread)
$Q gpu_stitched "$T_TMP/nodes.expected" a_forward_kernel "same thread" main standin_step layer_a_forward \
	cudaLaunchKernel < "$T_TMP/nodes.json" || fail "layer A's forward kernels"

t c_a_node_never_seen_made_keeps_the_waiters_stack
# (most of them, as every case here: the first wait or run of a process
# returns where no probe is yet and stitches nothing, and on a busy machine
# its end probe may go in after it returned)
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_c_kernel 90 "launched for" main standin_wait_for_worker \
	"[launched for]" standin_evaluate_function < "$T_TMP/nodes.json" || fail "node C's kernels"
$Q gpu_stacks_lack "$T_TMP/nodes.expected" node_c_kernel "[backward]" layer_a_forward layer_b_forward \
	< "$T_TMP/nodes.json" || fail "node C's kernels under a forward site"

t d_nodes_keep_every_kernel_and_the_status_counts_them
$Q gpu_stack_pct 100 < "$T_TMP/nodes.json" || fail "kernels without their launch"
$Q gpu_pid_kernels "$T_TMP/nodes.expected" < "$T_TMP/nodes.json" || fail "the kernel totals"
$Q gpu_status_had "nodes: 2 functions probed, " < "$T_TMP/nodes.json" || fail "no node probes in the status"
$Q gpu_status_had " lost, 0 taken again later, 0 not kept, 0 from sites past the limit)" < "$T_TMP/nodes.json" ||
	fail "nodes not kept"
# A stack is taken once a making site, not once a node: four sites, every
# step making the same four nodes (A, B, E, F) again.
$Q gpu_status_last " made from 4 making sites " < "$T_TMP/nodes.json" || fail "making sites not told apart"
$Q gpu_status_had " launches under their forward site" < "$T_TMP/nodes.json" || fail "no count of them"
# Node C's launches are in runs of a node never seen made, and the status
# says so (why a launch in a run did not get its forward site).
$Q gpu_status_had " of nodes whose making was not seen" < "$T_TMP/nodes.json" || fail "no word of node C's runs"

t e_a_replay_shows_the_same_forward_sites
"$XPUTOP" -r "$T_TMP/nodes.xpr" -b -j --window 60 > "$T_TMP/nreplay.json" 2> "$T_TMP/nreplay.err" ||
	fail "replay failed: $(cat "$T_TMP/nreplay.err")"
for k in node_a_kernel node_b_kernel node_e_kernel node_f_kernel; do
	L=$(echo "$k" | sed 's/node_\(.\)_kernel/layer_\1_forward/')
	$Q gpu_stitched_mostly "$T_TMP/nodes.expected" $k 90 "forward site" main "$L" "[backward]" standin_evaluate_function \
		< "$T_TMP/nreplay.json" || fail "the replay's $k"
done
$Q gpu_stitched_mostly "$T_TMP/nodes.expected" node_c_kernel 90 "launched for" "[launched for]" \
	< "$T_TMP/nreplay.json" || fail "the replay's node C"

t f_without_the_node_probes_backward_kernels_stay_under_the_waiter
"$XPUTOP" -b -j --gpu-exact -n 12 -d 0.5 --window 60 --gpu-waiters "$WAITER" > "$T_TMP/nonodes.json" \
	2> "$T_TMP/nonodes.err" &
X=$!
wait_json "$T_TMP/nonodes.json"
as_nobody env STANDIN_PROBED=waiter "$PROG" "$FAKE" 1 nodes > "$T_TMP/nn.expected" 2> /dev/null ||
	fail "the program failed"
xp_ok $X
$Q gpu_stitched_mostly "$T_TMP/nn.expected" node_a_kernel 90 "launched for" standin_wait_for_worker "[launched for]" \
	standin_evaluate_function < "$T_TMP/nonodes.json" || fail "node A's kernels without --gpu-nodes"
$Q gpu_status_lacks "nodes: " < "$T_TMP/nonodes.json" || fail "node probes on without --gpu-nodes"

finish
