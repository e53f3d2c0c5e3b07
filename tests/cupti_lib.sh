# SPDX-License-Identifier: GPL-2.0-only
# The set-up of the suites that run the injection library's own CUPTI layer
# (inject/cupti.c) over the stand-in libcupti.so.13 (tests/fake/stand_cupti.c)
# in tests/progs/cupti_standin.c: tests/bpf/cupti.sh and tests/bpf/cupti_pace.sh.
# Sourced after tests/lib.sh.
need_root
Q="python3 tests/jsonq.py"
STAND=$OUT/tests/stand/libcupti.so.13
PROG=$OUT/tests/progs/cupti_standin
if [ ! -f "$STAND" ] || [ ! -f "$PROG" ] || [ ! -f "$OUT/libxputop_inject.so" ]; then
	echo "FAIL $(basename "$0"): $OUT has no injection library or stand-in CUPTI (built without the CUDA toolkit?)" >&2
	exit 1
fi
CUDA_INJECTION64_PATH=$(cd "$OUT" && pwd)/libxputop_inject.so
export CUDA_INJECTION64_PATH
# The slices themselves: the library never traces throughout here (a
# program launching little, below, does).
XPUTOP_TRACE_WHOLE_US=0
export XPUTOP_TRACE_WHOLE_US

# play NAME SNAPSHOTS XPUTOP_OPTIONS PROGRAM_ARG...: a batch xputop
# refreshing every 0.5 s with XPUTOP_OPTIONS (one word list), and the
# program, with PROG_ENV's knobs, once xputop is up.  NAME.json: the
# snapshots, NAME.expected: the program's kernel totals, NAME.stand: the
# stand-in's counters and the other profiler's (printed into the log).
play() {
	name=$1 n=$2 xopts=$3
	shift 3
	# shellcheck disable=SC2086
	"$XPUTOP" -b -j -d 0.5 --window 60 -n "$n" $xopts > "$T_TMP/$name.json" 2> "$T_TMP/$name.err" &
	X=$!
	wait_json "$T_TMP/$name.json"
	# shellcheck disable=SC2086
	env $PROG_ENV "$PROG" "$@" > "$T_TMP/$name.out" 2> "$T_TMP/$name.prog" ||
		fail "the program failed: $(cat "$T_TMP/$name.prog")"
	wait $X || fail "xputop failed: $(tail -n 5 "$T_TMP/$name.err")"
	grep '"kernel"' "$T_TMP/$name.out" > "$T_TMP/$name.expected"
	grep -E '"(stand_cupti|other_profiler)"' "$T_TMP/$name.out" > "$T_TMP/$name.stand"
	echo "  $name: $(cat "$T_TMP/$name.stand")"
}
