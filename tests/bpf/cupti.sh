# SPDX-License-Identifier: GPL-2.0-only
# The injection library's own CUPTI layer (inject/cupti.c), which no GPU runs
# in CI: the real library over a stand-in libcupti.so.13 that keeps CUPTI's
# rules and counts what CUPTI would cost and lose (tests/fake/stand_cupti.c),
# in a program launching 30,000 kernels a second from known functions
# (tests/progs/cupti_standin.c), watched by a live xputop.  In the sampled
# mode the library records launches for a slice, keeps kernel activity on
# only until the slice's kernels have run, then detaches CUPTI
# (cuptiFinalize at a launch's return, after a forced flush) and attaches it
# again for the next slice, unless the process was seen using CUDA graphs
# (issue 25, inject/cupti.c).  These check that a slice is its length of
# tracing, that the estimates hold, that CUPTI is attached only around the
# slices, that no kernel record is lost however far the GPU is behind, that
# a process using graphs is never detached once CUPTI saw them, and that a
# profiler that had CUPTI first keeps it.
# Needs root and a build with the CUDA toolkit.
# test-lane: quiet (the shares of time traced)
# test-timeout: 180
. tests/lib.sh
. tests/cupti_lib.sh

# The default mode, 10 ms in every 500, with cuptiSubscribe taking 10 ms as
# on the H100: 16 slices in 8 s.  Switching kernel activity on takes 3 ms,
# launches going on meanwhile: a slice is counted from when both callbacks
# and activity are on (the library counted its launches from before
# activity was, and its kernels came out 24% low against them).
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_ENABLE_MS=3"
play sampled 20 "" "$STAND" 8

t a_slice_is_10ms_of_tracing
$Q gpu_traced_pct "$T_TMP/sampled.expected" 1.6 2.8 < "$T_TMP/sampled.json" || fail "not 2% of the time traced"

t sampled_estimates_hold_within_the_uncertainty_xputop_states
# (a slice that a busy machine kept the program from launching in makes the
# stated uncertainty grow: 2-14% in 8 s here)
$Q gpu_within_stated "$T_TMP/sampled.expected" 3 10 < "$T_TMP/sampled.json" || fail "estimates"

t kernel_activity_is_off_between_slices
# On for the slice only where it launched no CUDA graph (a kernel launched
# by itself keeps its times with activity off): about 2% of the launches
# get a record.  Activity left on would give all of them one; left on until
# a flush found every record of a buffer complete (as it was for every
# slice), 6%.
$Q stand "$T_TMP/sampled.stand" "traced < 0.045 * launches" "traced > 0" ||
	fail "kernel activity stays on between slices"

t cupti_is_detached_between_slices_where_its_header_asks
# One cuptiFinalize a slice (16 in 8 s), each at a launch's return with
# kernel activity off, nothing lost with it; attached again for each slice;
# CUPTI's cost on launches only around the slices.
$Q stand "$T_TMP/sampled.stand" "finalizes >= 8" "violations == 0" "finalize_tracing == 0" "lost == 0" \
	"misuse == 0" "subscriptions >= finalizes" "attached < 0.25 * launches" ||
	fail "CUPTI not detached between slices, or detached wrongly"

t no_kernel_record_is_lost_between_slices
$Q stand_account "$T_TMP/sampled.stand" < "$T_TMP/sampled.json" || fail "records unaccounted for"

t every_traced_kernel_is_joined_to_its_launch_stack
$Q gpu_stack_pct 100 < "$T_TMP/sampled.json" || fail "kernels without their launch"
$Q gpu_path gemm_kernel main standin_step standin_gemm cudaLaunchKernel 'gemm_kernel_[g]' < "$T_TMP/sampled.json" ||
	fail "the gemm's launch stack"

# A flush that takes 1 ms: launches go on while a slice ends.
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_FLUSH_US=1000"
play slowflush 10 "" "$STAND" 3

t a_slow_flush_at_a_slices_end_leaves_no_kernel_without_its_launch
$Q gpu_stack_pct 100 < "$T_TMP/slowflush.json" || fail "kernels traced without their launch"
$Q stand_account "$T_TMP/slowflush.stand" < "$T_TMP/slowflush.json" || fail "records unaccounted for"

# Each launch's callback three times with its one correlation id (as a
# runtime launch's nested driver launch carries the runtime's id).
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_REPEAT=3"
play repeat 10 "" "$STAND" 3

t a_launch_whose_callback_comes_again_is_counted_once
$Q stand_account "$T_TMP/repeat.stand" < "$T_TMP/repeat.json" || fail "launches counted more than once"
$Q gpu_within_stated "$T_TMP/repeat.expected" 3 15 < "$T_TMP/repeat.json" || fail "estimates"

# Slices 10 ms in every 60 and a GPU 1.5 s behind: the last slice's kernels
# are still awaited (100 ms at most) when most slices start.  Their records
# come once a buffer of them has run: with the library's buffers of 2 MB
# (31 slices' records) none came in the 2 s the program runs.
PROG_ENV=STAND_CUPTI_ATTACH_MS=10
play overlap 6 "--gpu-sample 10/60" -q "$STAND" 2

t a_slice_starting_while_the_last_ones_kernels_are_awaited_enables_nothing_twice
$Q stand "$T_TMP/overlap.stand" "reenables == 0" "misuse == 0" || fail "a callback or activity kind enabled while on"
$Q gpu_proc "$T_TMP/overlap.stand" "kernels > 0" < "$T_TMP/overlap.json" || fail "nothing traced"

PROG_ENV=
play exact 8 --gpu-exact -e "$STAND" 2

t exact_tracing_counts_every_kernel_exactly
$Q gpu_kernels "$T_TMP/exact.expected" < "$T_TMP/exact.json" || fail "kernel totals"
$Q stand "$T_TMP/exact.stand" "traced == launches" "complete == launches" || fail "launches untraced"

t cupti_is_never_finalized_in_the_exact_mode
# (nor at the exit, where cuptiFinalize races CUPTI's own teardown)
$Q stand "$T_TMP/exact.stand" "finalizes == 0" "violations == 0" "misuse == 0" || fail "finalized"

# The program starts replaying a CUDA graph 2 s in: CUPTI attached again
# after a teardown crashed graph replays (pytorch/pytorch#112507), so once
# a slice has seen the graph, CUPTI stays attached.
PROG_ENV=STAND_CUPTI_ATTACH_MS=10
play graph 12 "" -g 2 "$STAND" 5

t cupti_is_never_torn_down_once_it_saw_a_cuda_graph
$Q stand "$T_TMP/graph.stand" "graph_teardowns == 0" "graph_launches > 0" "finalizes >= 1" "misuse == 0" \
	"violations == 0" "stale_ids == 0" ||
	fail "cuptiFinalize after CUPTI saw a graph, no detach before the graph, or ids stuck after it"
$Q gpu_proc "$T_TMP/graph.stand" "kernels > 0" < "$T_TMP/graph.json" || fail "nothing traced"
$Q stand_account "$T_TMP/graph.stand" < "$T_TMP/graph.json" || fail "records unaccounted for"

# A graph replayed every step, the GPU 2 ms behind the launches (20% of a
# slice): a slice starts at the launches, for every kernel, and must end
# there too, the graph's kernels of a slice's last 2 ms kept (issue 25: they
# were dropped once the GPU ran them after activity went off, -13% on an
# H100; with the cut at the slice's end here, graph_kernel came out -43.5%,
# 0.54 of gemm_kernel's calls, 809 dropped).
# (Kernel activity is not kept on after the graph is made, so that what
# stays on after each slice is the drain's alone.)
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 XPUTOP_GRAPH_ACTIVITY_MS=0"
play graphlag 20 "" -g 0 -l 2 "$STAND" 8

t graph_kernels_are_estimated_as_well_as_the_others_with_the_gpu_behind
# The lag shows in the ratio to gemm_kernel (launched in the same steps):
# within 5%.  The calls alone carry the slices' luck, which a loaded CI
# machine widens (+13.4%, stated +-19%, once): within twice what they state
# and 30%.
$Q gpu_kernel_within_stated "$T_TMP/graphlag.expected" graph_kernel gemm_kernel 5 30 < "$T_TMP/graphlag.json" ||
	fail "graph kernels cut short"
$Q gpu_proc "$T_TMP/graphlag.stand" "cupti_dropped == 0" "kernels_without_launch_pct < 0.5" < "$T_TMP/graphlag.json" || fail "graph kernels dropped"

t kernel_activity_stays_on_after_a_graph_slice_only_until_its_kernels_have_run
# 2% of the time traced, and the drain after each slice: until a buffer
# holding a kernel launched after the slice is complete, which with a
# thread launching on is a full one.  With the library's buffers of 2 MB
# (9,700 records: the drain to its 100 ms limit) 22% of the launches got a
# record; with 128 KB about 4% (a buffer fills in 15 ms here).
$Q stand "$T_TMP/graphlag.stand" "traced < 0.08 * launches" "traced > 0.01 * launches" ||
	fail "kernel activity stays on long after the slices"

# CUDA's teardown at exit takes 600 ms while slices come every 60 ms: the
# library must not attach CUPTI (nor change it) during it (a PyTorch loop
# died with SIGSEGV at exit on the H100 when it did).
PROG_ENV=STAND_CUPTI_ATTACH_MS=10
play teardown 12 "--gpu-sample 10/60" -T 600 "$STAND" 1

t nothing_is_attached_or_switched_while_cuda_tears_down_at_exit
$Q stand "$T_TMP/teardown.stand" "in_teardown == 0" "finalizes >= 4" "misuse == 0" ||
	fail "CUPTI called while CUDA tore down"

# XPUTOP_CUPTI_DETACH=0 in the program's environment keeps CUPTI attached;
# slices every 100 ms.
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 XPUTOP_CUPTI_DETACH=0"
play attached 10 "--gpu-sample 10/100" "$STAND" 3

t xputop_cupti_detach_0_keeps_cupti_attached
$Q stand "$T_TMP/attached.stand" "finalizes == 0" "subscriptions == 1" "misuse == 0" || fail "detached"
$Q gpu_proc "$T_TMP/attached.stand" "kernels > 0" < "$T_TMP/attached.json" || fail "nothing traced"

t staying_attached_the_callbacks_stay_on_and_every_launch_keeps_its_own_id
# A callback switched off while CUPTI stays attached leaves CUPTI's ids
# stuck (the H200: 5 launches recorded in 8 s, all kernels under 5 ids).
$Q stand "$T_TMP/attached.stand" "stale_ids == 0" || fail "CUPTI's correlation ids stuck"
$Q gpu_within_stated "$T_TMP/attached.expected" 3 15 < "$T_TMP/attached.json" || fail "estimates"

# A GPU 1.5 s behind its launches: a slice's kernels run long after the 100
# ms that kernel activity stays on for them; those still running when the
# program exits come from the exit's forced flush without times.
PROG_ENV=STAND_CUPTI_ATTACH_MS=10
play deep 10 "" -q -x "$STAND" 3

t a_gpu_far_behind_loses_no_record_and_counts_the_unfinished_as_dropped
# (CUPTI stays attached while a slice's kernels are awaited, 2 s at most:
# so here from slice to slice)
$Q stand "$T_TMP/deep.stand" "lost == 0" "misuse == 0" "violations == 0" || fail "records lost"
# The first slices' kernels are complete by the exit, the last ones' are
# dropped and counted.
$Q gpu_proc "$T_TMP/deep.stand" "kernels > 0" "cupti_dropped > 0" < "$T_TMP/deep.json" ||
	fail "no kernel complete, or none unfinished at the exit"
$Q stand_account "$T_TMP/deep.stand" < "$T_TMP/deep.json" || fail "records unaccounted for"

# Another profiler subscribed before the library was initialized.
PROG_ENV=STAND_CUPTI_ATTACH_MS=10
play other 10 "" -o "$STAND" 3

t a_profiler_that_had_cupti_first_keeps_it
# Its callbacks saw every launch: the library's cuptiSubscribe was refused
# and nothing of the library's tore the other's subscription down.
$Q stand "$T_TMP/other.stand" "other_launches > 0" "other_seen == other_launches" "subscriptions == 1" \
	"subscribe_calls >= 2" "finalizes == 0" "misuse == 0" ||
	fail "the other profiler lost CUPTI, or the library called CUPTI wrongly"

t the_process_says_another_profiler_has_cupti_and_no_slice_is_counted
$Q gpu_proc "$T_TMP/other.stand" "'another CUPTI profiler is attached' in states" "traced_pct < 0.05" \
	< "$T_TMP/other.json" || fail "the process row"

# Tracing throughout where launches are few (inject/sched.c): 100 launches
# a second cost CUPTI 0.5 ms of the 1 ms a second it may take, and every
# one is traced, its kernel too; 30,000 a second go to slices at the first
# check (20 ms), and try again after 4, 8, 16 ... periods.
# (Last: the cases before keep the times they ran at beside other suites.)
XPUTOP_TRACE_WHOLE_US=1000
play sparse 16 "" -r 100 "$STAND" 6
play busywhole 20 "" "$STAND" 8

t a_process_that_launches_little_is_traced_throughout
$Q gpu_traced_whole "$T_TMP/sparse.expected" 95 100 1 < "$T_TMP/sparse.json" || fail "not traced throughout"

t a_busy_process_is_traced_throughout_a_few_checks_only
# on throughout at the start and after 4 and 8 periods: 3 x 20 ms of 8 s
$Q gpu_traced_whole "$T_TMP/busywhole.expected" 0.1 2.5 100 < "$T_TMP/busywhole.json" ||
	fail "traced throughout too long"
$Q gpu_within_stated "$T_TMP/busywhole.expected" 3 10 < "$T_TMP/busywhole.json" || fail "estimates"

t kernels_come_with_their_launches_in_and_out_of_spans_on_throughout
# A kernel whose launch record never came can be told neither a span on
# throughout's nor a slice's; past 10% of them the process's kernels are
# not estimated (on an H200, a torch.compile process's library sent 415,953
# kernels for 220 launches recorded: model_gpu.h).  Here none.
$Q gpu_proc "$T_TMP/busywhole.stand" "kernels_without_launch_pct < 0.5" "kernels_est is not None" \
	< "$T_TMP/busywhole.json" || fail "kernels without their launches"

# CUPTI's correlation ids stuck with nothing switched off (two torch.compile
# runs of six on an H200, the library on throughout: every API call from
# about the 500th under one id, no graph kernel recorded; the span on
# throughout then recorded no launch, so its budget never ended it, and the
# estimate was 1,600 times the kernels run).  Here they stick after 150
# calls of the first attachment, 1.5 s into a process launching 100 a
# second: the library sees one id come again and again, ends the span
# there, drops the kernels under that id (counted), detaches CUPTI at the
# next launch's return and traces afresh.
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_STICK_AFTER=150 XPUTOP_INJECT_STATS=1"
play stuck 16 "" -r 100 "$STAND" 6

t cupti_ids_that_stick_are_seen_and_ended_by_a_detach
grep -q '"ids_stuck": 1,' "$T_TMP/stuck.prog" || fail "the library did not see the ids stuck: $(grep xputop_inject "$T_TMP/stuck.prog")"
$Q stand "$T_TMP/stuck.stand" "stale_ids > 0" "finalizes >= 1" "violations == 0" "misuse == 0" \
	"graph_teardowns == 0" || fail "CUPTI not detached after its ids stuck"
$Q gpu_proc "$T_TMP/stuck.stand" "cupti_dropped > 0" "kernels_without_launch_pct < 0.5" \
	"kernels_est is not None" < "$T_TMP/stuck.json" || fail "the stuck id's kernels kept, or not estimated"
# (the launches made in the 8 callbacks before the library is sure are lost)
$Q gpu_within_stated "$T_TMP/stuck.expected" 3 10 < "$T_TMP/stuck.json" || fail "estimates"

# The ids stuck too, on the H200, where kernel activity was switched on
# again shortly after the process made its CUDA graphs (8 of 16
# torch.compile runs, each time within 2 ms of the first switch-on 85-314 ms
# after the capture; never seconds after): the stand-in plays that for a
# switch-on within 1 s of a graph made.  The program makes its graph 1 s in,
# CUPTI staying attached (slices every 100 ms): the library keeps activity
# on from the graph call for 2 s (XPUTOP_GRAPH_ACTIVITY_MS), so no slice
# switches it on in that second.
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_GRAPH_STICK_MS=1000 XPUTOP_CUPTI_DETACH=0 XPUTOP_INJECT_STATS=1"
play graphkeep 12 "--gpu-sample 10/100" -g 1 "$STAND" 4

t kernel_activity_stays_on_after_a_cuda_graph_is_made_and_the_ids_hold
grep -q '"ids_stuck": 0,.*"activity_kept": 1' "$T_TMP/graphkeep.prog" ||
	fail "activity not kept, or the ids stuck: $(grep '"xputop_inject"' "$T_TMP/graphkeep.prog")"
$Q stand "$T_TMP/graphkeep.stand" "stale_ids == 0" "graph_launches > 0" "finalizes == 0" "misuse == 0" ||
	fail "CUPTI's ids stuck"
$Q gpu_proc "$T_TMP/graphkeep.stand" "kernels_est is not None" "kernels_without_launch_pct < 0.5" \
	< "$T_TMP/graphkeep.json" || fail "not estimated"
$Q gpu_within_stated "$T_TMP/graphkeep.expected" 3 15 < "$T_TMP/graphkeep.json" || fail "estimates"

# The same with activity switched as before (XPUTOP_GRAPH_ACTIVITY_MS=0):
# the next slice sticks the ids, and CUPTI must not be detached once it saw
# a graph (pytorch/pytorch#112507): the library sees them stuck, the
# process says so and nothing of it is estimated from then on.
PROG_ENV="STAND_CUPTI_ATTACH_MS=10 STAND_CUPTI_GRAPH_STICK_MS=1000 XPUTOP_CUPTI_DETACH=0 XPUTOP_INJECT_STATS=1 XPUTOP_GRAPH_ACTIVITY_MS=0"
play graphstuck 12 "--gpu-sample 10/100" -g 1 "$STAND" 4

t cupti_ids_stuck_where_it_may_not_be_detached_are_said_and_not_estimated
grep -q '"ids_stuck": 1,' "$T_TMP/graphstuck.prog" || fail "the library did not see the ids stuck"
$Q stand "$T_TMP/graphstuck.stand" "stale_ids > 0" "graph_teardowns == 0" "finalizes == 0" "misuse == 0" ||
	fail "no ids stuck to see, or CUPTI torn down after a graph"
$Q gpu_proc "$T_TMP/graphstuck.stand" "\"CUPTI's correlation ids stuck: not traced until it restarts\" in states" \
	"kernels_est is None" "gpu_ns_est is None" < "$T_TMP/graphstuck.json" || fail "the process row"

finish
