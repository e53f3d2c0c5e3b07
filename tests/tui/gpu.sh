# SPDX-License-Identifier: GPL-2.0-only
# The GPU view through a real terminal (tmux) while the fake-CUPTI stand-in
# plays a CUDA program: the device and process summary, the kernels table,
# the CPU -> launch API -> kernel flamegraph, keys, and the export.  Needs root.
# test-from: private.sh
. tests/lib.sh
need_root
. tests/tmux.sh

FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
SOCKDIR=$(mktemp -d /tmp/xputop-gpu.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock

t without_a_cuda_process_the_view_says_how_to_get_one
new_terminal 120 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET $XPUTOP --gpu-exact -d 0.3 --view gpu -o $T_TMP; echo EXITED; sleep 600"
wait_for "GPU source:"
expect_grep "CUDA_INJECTION64_PATH=" "$T_TMP/screen" "the message box"
expect_grep "xputop -- CMD" "$T_TMP/screen" "the message box"

t an_injected_process_fills_the_summary_the_table_and_the_flame
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 6 > /dev/null 2>&1 &
S=$!
wait_for "gpu_standin" 60
wait_for "GPU0  kernel time (traced)"
# The traced kernels' union is never called busy: that word is NVML's.
grep "^ *GPU0  kernel time" "$T_TMP/screen" | grep -q "busy" && fail "the traced device line says busy"
wait_for "of it with the launching CPU stack"
expect_grep "100.0% of it with the launching CPU stack" "$T_TMP/screen" "the stack coverage"
expect_grep "^matmul_kernel  *$S gpu_standin  *0 " "$T_TMP/screen" "the matmul row"
expect_grep "CPU stacks -> launch API -> GPU kernel" "$T_TMP/screen" "the flame title"
expect_grep "standin_train_step" "$T_TMP/screen" "the flame"
expect_grep "cudaLaunchKernel" "$T_TMP/screen" "the flame's launch frames"

t the_selected_kernels_full_name_is_shown
expect_grep "matmul_kernel(float\*, float\*, float\*, int)" "$T_TMP/screen" "the full name"

t pytorch_kernels_read_apart_and_the_selected_ones_full_name_wraps_above_the_table
keys / F i l l F u n c Enter
wait_for 'filter "FillFunc"'
wait_gone "matmul_kernel  "
expect_grep "^vectorized_elementwise_kernel<4, FillFunctor<b" "$T_TMP/screen" "the FillFunctor<bool> row"
expect_grep "^vectorized_elementwise_kernel<4, FillFunctor<i" "$T_TMP/screen" "the FillFunctor<int> row"
# The heavier (bool) row is selected: its full name, over two lines.
expect_grep "^ void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, std::array<char\*, 1ul> >(int, *$" \
	"$T_TMP/screen" "the full name's first line"
expect_grep "^ at::native::FillFunctor<bool>, std::array<char\*, 1ul>) *$" "$T_TMP/screen" "the full name's second line"
keys Down
wait_for "at::native::FillFunctor<int>, std::array<char*, 1ul>)"
expect_grep "^ void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char\*, 1ul> >(int, *$" \
	"$T_TMP/screen" "the other row's full name"
keys / BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace Enter
wait_for "matmul_kernel  "

t the_filter_narrows_the_kernels
keys / r e l u Enter
wait_gone "graph_node_kernel  "
expect_grep "^relu_kernel " "$T_TMP/screen" "the filtered table"
keys / BSpace BSpace BSpace BSpace Enter
wait_for "graph_node_kernel"

t w_switches_the_flame_to_since_start
keys w
wait_for "GPU time, since start"

t s_exports_the_gpu_view
keys s
wait_for "exported "
ls "$T_TMP"/xputop-gpu-2*.folded > /dev/null 2>&1 || fail "no GPU folded file"
ls "$T_TMP"/xputop-gpu-merged-*.folded > /dev/null 2>&1 || fail "no merged file"
ls "$T_TMP"/xputop-gpu-*.trace.json > /dev/null 2>&1 || fail "no trace"

kill $S 2> /dev/null
wait $S 2> /dev/null

t e_switches_gpu_tracing_between_exact_for_a_while_and_sampled
# Started with --gpu-exact (no limit): the header says so, and what xputop
# itself costs; e goes to sampled at once; e again asks first (exact tracing
# slows CUDA programs 30-100%): n leaves it sampled, y gives exact for 60 s.
expect_grep " GPU exact  self [0-9.]*% CPU" "$T_TMP/screen" "the header's mode and cost"
keys e
wait_for "GPU sampled 10/500ms"
expect_grep "GPU: sampled tracing, 10 ms in every 500 ms" "$T_TMP/screen" "the status message"
keys e
wait_for "Trace every GPU kernel? It slows CUDA programs 30-100%"
keys n
wait_for "nothing done"
sleep 1
screen
expect_grep "GPU sampled 10/500ms" "$T_TMP/screen" "still sampled after n"
grep -q "GPU exact" "$T_TMP/screen" && fail "exact after n"
keys e
wait_for "Trace every GPU kernel?"
keys y
wait_for "GPU: every kernel traced for 60 s (e: back to sampled)"
wait_for "GPU exact 60s"

t sampled_kernel_rows_state_their_uncertainty_where_there_is_room
# Sampled (the default): each row's total with its uncertainty ("+-4%"), "?"
# until enough slices saw it; at 80x24 that column gives way first.  In
# slices only (XPUTOP_TRACE_WHOLE_US=0): the stand-in launches so little
# that its library would trace it throughout (the next case).
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 30 > /dev/null 2>&1 &
S=$!
new_terminal 120 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET XPUTOP_TRACE_WHOLE_US=0 $XPUTOP -d 0.3 --view gpu; sleep 600"
wait_for "gpu_standin" 60
wait_for_re "^matmul_kernel  *$S gpu_standin  *0  *[0-9]+  *[0-9.]+[mun]?s  *[+]-[0-9]+%  " 300
expect_grep "TOTAL  *+- " "$T_TMP/screen" "the uncertainty's heading"
tm resize-window -t 0 -x 80 -y 24
wait_gone "+-"
expect_grep "^matmul_kernel" "$T_TMP/screen" "the matmul row at 80x24"
kill $S 2> /dev/null
wait $S 2> /dev/null

t a_process_traced_throughout_says_so
# The stand-in's launches cost its library's CUPTI well within 1 ms a
# second: it is traced throughout, and its process line says for how much
# of its time, not "sampled".
setpriv --reuid=65534 --regid=65534 --clear-groups "$STANDIN" "$FAKE" 10 > /dev/null 2>&1 &
S=$!
new_terminal 120 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET $XPUTOP -d 0.3 --view gpu; sleep 600"
wait_for_re "pid $S  *gpu_standin  *throughout [0-9]+%" 150
kill $S 2> /dev/null
wait $S 2> /dev/null

t a_program_that_cannot_load_its_library_is_named_on_the_status_line
# Started by hand as uid 65534, launching through the real libcudart, with a
# CUDA_INJECTION64_PATH it cannot reach (T_TMP is 0700).  The status line
# names the newest finding: xputop watches this program alone (-p), so
# that programs like it that other suites run beside this one (from
# private.sh's clone) are none of its findings.
mkdir -p "$T_TMP/hidden"
cp "$OUT/libxputop_inject.so" "$T_TMP/hidden/"
setpriv --reuid=65534 --regid=65534 --clear-groups env CUDA_INJECTION64_PATH="$T_TMP/hidden/libxputop_inject.so" \
	"$(public "$OUT/tests/progs/cuda_launch")" -s 120 -i 1 > /dev/null 2>&1 &
L=$!
new_terminal 220 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET $XPUTOP -p $L --gpu-exact -d 0.3 --view gpu -o $T_TMP; echo EXITED; sleep 600"
wait_for "pid $L (cuda_launch) runs without xputop's library: uid 65534 cannot load its CUDA_INJECTION64_PATH ($T_TMP is not searchable by it: mode 0700, owner root)" 600
kill $L 2> /dev/null
wait $L 2> /dev/null

t the_probes_count_by_the_launching_threads_cpu_time_says_so
# The real library over the stand-in CUPTI, each launch also through the
# real libcudart, so that the launch probes count it: its figures scale by
# their count, and that count by the share of its launching thread's CPU
# time they were on in, which the summary names.
STAND=$OUT/tests/stand/libcupti.so.13
[ -f "$STAND" ] || fail "$OUT has no stand-in CUPTI (built without the CUDA toolkit?)"
mkdir -p "$T_TMP/cudart"
cp "$(ldd "$OUT/tests/progs/cuda_launch" | awk '/libcudart/ { print $3 }')" "$T_TMP/cudart/"
new_terminal 220 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET XPUTOP_TRACE_WHOLE_US=0 $XPUTOP -d 0.5 --gpu-sample 25/250 --view gpu; sleep 600"
wait_for "GPU source:"
env CUDA_INJECTION64_PATH="$(cd "$OUT" && pwd)/libxputop_inject.so" STAND_CUPTI_ATTACH_MS=10 \
	"$OUT/tests/progs/cupti_standin" -b 2 -c "$(ls "$T_TMP"/cudart/libcudart.so.*)" "$STAND" 30 > /dev/null 2>&1 &
S=$!
wait_for_re "estimated from [0-9.]+% of the time traced and the launches counted in [0-9.]+% of the launching threads' CPU time" 300
kill $S 2> /dev/null
wait $S 2> /dev/null

t kernels_without_their_launches_say_so_and_are_not_estimated
# A client whose kernels mostly came without their launch records, after a
# span on throughout (tests/progs/gpu_forger.c's orphans): its GPU time is
# not estimated, and the summary says why, not "too few slices".
new_terminal 220 40 "env LANG=C.UTF-8 XPUTOP_SOCKET=$XPUTOP_SOCKET $XPUTOP -d 0.5 --view gpu; sleep 600"
wait_for "GPU source:"
setpriv --reuid=65534 --regid=65534 --clear-groups "$(public "$OUT/tests/progs/gpu_forger")" "$XPUTOP_SOCKET" orphans 12 \
	> /dev/null 2>&1 &
F=$!
wait_for "GPU time not estimated: 1 process's kernels came without their launch records" 150
kill $F 2> /dev/null
wait $F 2> /dev/null

t a_process_whose_cupti_ids_stuck_says_so_and_is_not_estimated
# A client whose library says CUPTI's correlation ids stuck and cannot be
# detached (gpu_forger's stuck: graphs, inject/cupti.c): its line says so,
# and the summary says why its GPU time is not estimated.
setpriv --reuid=65534 --regid=65534 --clear-groups "$(public "$OUT/tests/progs/gpu_forger")" "$XPUTOP_SOCKET" stuck 12 \
	> /dev/null 2>&1 &
F=$!
wait_for "GPU time not estimated: CUPTI's correlation ids stuck in 1 process" 150
wait_for "(CUPTI's ids stuck: not traced until it restarts)" 20
kill $F 2> /dev/null
wait $F 2> /dev/null
tm_end "$SOCK"
rm -rf "$SOCKDIR"
finish
