# The exports open unchanged in the tools they are written for, showing what
# the files hold: every folded export (CPU view, GPU view, GPU merged with CPU
# samples) in FlameGraph's flamegraph.pl and in speedscope, the GPU view's
# Chrome trace in speedscope (its own importer, tests/speedscope.mjs).  The
# files come from real runs: CPU sampling of a busy program, and the GPU path
# through the stand-in CUPTI.  Needs root.
. tests/lib.sh
need_root
FLAMEGRAPH=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
SPEEDSCOPE=${SPEEDSCOPE:-$(npm root -g 2> /dev/null)/speedscope}
for need in "$FLAMEGRAPH" "$SPEEDSCOPE/package.json" "$(command -v node)"; do
	[ -f "$need" ] || { echo "FAIL $(basename "$0"): ${need:-node} is missing: run .ci/setup" >&2; exit 1; }
done

# in_flamegraph FILE: flamegraph.pl draws it, silently, with every frame.
in_flamegraph() {
	perl "$FLAMEGRAPH" --minwidth 0 "$1" > "$T_TMP/fg.svg" 2> "$T_TMP/fg.err" || fail "flamegraph.pl failed on $1"
	[ -s "$T_TMP/fg.err" ] && fail "flamegraph.pl warned on $1: $(cat "$T_TMP/fg.err")"
	python3 tests/flamegraph.py "$1" "$T_TMP/fg.svg" || fail "flamegraph.pl drew something else"
}

# in_speedscope FILE...: speedscope imports them and shows what they hold.
in_speedscope() {
	node tests/speedscope.mjs "$SPEEDSCOPE" "$@" > "$T_TMP/ss.out" 2>&1 || fail "speedscope: $(cat "$T_TMP/ss.out")"
}

# The CPU view's export of a busy program.
mkdir -p "$T_TMP/cpu" "$T_TMP/gpu"
"$OUT/tests/progs/busy" 6 &
B=$!
"$XPUTOP" -b -n 2 -p $B --export -o "$T_TMP/cpu" > /dev/null 2> "$T_TMP/cpu.err"
kill $B 2> /dev/null
wait $B 2> /dev/null
CPU=$(ls "$T_TMP"/cpu/xputop-cpu-*.folded 2> /dev/null)

# The GPU view's three files, from a stand-in that plays CUPTI.
SOCKDIR=$(mktemp -d /tmp/xputop-exports.XXXXXX)
chmod 755 "$SOCKDIR"
export XPUTOP_SOCKET=$SOCKDIR/gpu.sock
"$XPUTOP" -b -j --gpu-exact -n 10 -d 0.5 --window 60 --view gpu --export -o "$T_TMP/gpu" > "$T_TMP/gpu.json" 2> "$T_TMP/gpu.err" &
X=$!
wait_json "$T_TMP/gpu.json"
as_nobody "$(public "$OUT/tests/progs/gpu_standin")" "$(public "$OUT/tests/libxputop_inject_fake.so")" 1.5 \
	> /dev/null 2>&1
wait $X
rm -rf "$SOCKDIR"
GPU=$(ls "$T_TMP"/gpu/xputop-gpu-2*.folded 2> /dev/null)
MERGED=$(ls "$T_TMP"/gpu/xputop-gpu-merged-*.folded 2> /dev/null)
TRACE=$(ls "$T_TMP"/gpu/xputop-gpu-*.trace.json 2> /dev/null)

t the_runs_wrote_every_export
[ -n "$CPU" ] || fail "no CPU export: $(cat "$T_TMP/cpu.err")"
[ -n "$GPU" ] && [ -n "$MERGED" ] && [ -n "$TRACE" ] || fail "GPU exports missing: $(ls "$T_TMP/gpu") $(cat "$T_TMP/gpu.err")"
[ -n "$CPU" ] && expect_grep ';busy_outer;busy_middle;busy_leaf_spin [0-9]*$' "$CPU"
[ -n "$GPU" ] && expect_grep ';cudaLaunchKernel;matmul_kernel(float\*, float\*, float\*, int)_\[g\] [0-9]*$' "$GPU"
[ -n "$TRACE" ] && expect_grep '"name":"matmul_kernel(float\*, float\*, float\*, int)","cat":"kernel"' "$TRACE"

t the_cpu_export_opens_in_flamegraph_pl
[ -n "$CPU" ] && in_flamegraph "$CPU"

t the_cpu_export_opens_in_speedscope
[ -n "$CPU" ] && in_speedscope "$CPU"

t the_gpu_folded_exports_open_in_flamegraph_pl
[ -n "$GPU" ] && in_flamegraph "$GPU"
[ -n "$MERGED" ] && in_flamegraph "$MERGED"

t the_gpu_folded_exports_open_in_speedscope
[ -n "$GPU" ] && [ -n "$MERGED" ] && in_speedscope "$GPU" "$MERGED"

t the_gpu_trace_opens_in_speedscope_with_every_kernel_and_launch
if [ -n "$TRACE" ]; then
	in_speedscope "$TRACE"
	# Kernels on the stream's track, launches on the launching thread.
	expect_grep "ok  .*trace.json: 2 threads" "$T_TMP/ss.out" "speedscope's import"
fi

finish
