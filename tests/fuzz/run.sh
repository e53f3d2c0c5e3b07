#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The fuzzers' part of the test suite (tests/run runs it): for each harness,
# replays the whole kept corpus (tests/fuzz/corpus/NAME), then fuzzes for a
# short fixed time from it.  Any crash, sanitizer report, leak, timeout or
# out-of-memory fails; the input that caused it is kept in
# OUT/fuzz/artifacts/.  A timeout is checked once more: its input is run
# alone, under the same limit; it fails only if it times out there too (CI
# saw a 4 ms input "time out after 12 s" while the machine ran eight
# suites, and a real hang, such as nested expansions walking every path,
# hangs alone as well).  New inputs found go to a scratch directory, not the
# kept corpus (tests/fuzz/README.md says how to add them).
#
#     tests/fuzz/run.sh [OUT]        XPU_FUZZ_SECONDS (default 30) per harness,
#                                    XPU_FUZZ_JOBS (default 2) at once
#
# tests/run's limit for it (make check fuzzes 9 harnesses 40 s each):
# test-timeout: 600
OUT=${1:-${OUT:-build}}
cd "$(dirname "$0")/../.." || exit 1
FUZZ_DIR=$PWD/tests/fuzz
. "$FUZZ_DIR/common.sh"
SECS=${XPU_FUZZ_SECONDS:-30}
ART=$OUT/fuzz/artifacts
mkdir -p "$ART" || exit 1
TMP=$(mktemp -d /tmp/xputop-fuzz.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
failed=0
python3 "$FUZZ_DIR/versions.py" || failed=$((failed + 1))

# one NAME: the harness's replay and fuzzing run; its lines go to
# $TMP/NAME.out, each failure also to $TMP/NAME.failed.
one() {
	name=$1
	bin=$OUT/fuzz/fuzz_$name
	corpus=tests/fuzz/corpus/$name
	exec > "$TMP/$name.out" 2>&1
	fail() {
		echo "FAIL $1"
		shift
		echo "  $*"
		echo x >> "$TMP/$name.failed"
	}
	if [ ! -x "$bin" ]; then
		fail "fuzz_$name" "$bin is not built: run make OUTPUT=$OUT fuzz"
		return
	fi
	n=$(ls "$corpus" 2> /dev/null | wc -l)
	if [ "$n" -eq 0 ]; then
		fail "fuzz_$name" "$corpus holds no inputs"
		return
	fi
	# shellcheck disable=SC2046
	if ! "$bin" $(fuzz_opts "$name") -runs=0 -artifact_prefix="$ART/$name-" "$corpus" \
		> "$TMP/$name.replay" 2>&1; then
		fail "fuzz_${name}_replays_its_corpus" "$(grep -E 'ERROR|SUMMARY|broken promise|Test unit written' "$TMP/$name.replay" | head -5)"
		return
	fi
	echo "ok   fuzz_${name}_replays_its_corpus ($n inputs)"
	mkdir -p "$TMP/$name.new"
	note=
	# shellcheck disable=SC2046
	if ! "$bin" $(fuzz_opts "$name") -max_total_time="$SECS" -print_final_stats=1 \
		-artifact_prefix="$ART/$name-" "$TMP/$name.new" "$corpus" > "$TMP/$name.log" 2>&1; then
		unit=$(grep -o "Test unit written to [^ ]*/$name-timeout-[0-9a-f]*" "$TMP/$name.log" | head -1 |
			sed 's/^Test unit written to //')
		# shellcheck disable=SC2046
		if [ -z "$unit" ] || ! grep -q 'ERROR: libFuzzer: timeout' "$TMP/$name.log" ||
			! "$bin" $(fuzz_opts "$name") "$unit" > "$TMP/$name.alone" 2>&1; then
			fail "fuzz_${name}_for_${SECS}s" "$(grep -E 'ERROR|SUMMARY|broken promise|Test unit written' "$TMP/$name.log" | head -5)"
			return
		fi
		note="; $(grep -o 'timeout after [0-9]* seconds' "$TMP/$name.log" | head -1) beside other suites, $(sed -n 's/^Executed .* in \([0-9]* ms\)/\1/p' "$TMP/$name.alone") alone: $unit"
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/$name.log")
	echo "ok   fuzz_${name}_for_${SECS}s (${runs:-?} runs$note)"
}

# XPU_FUZZ_JOBS harnesses at once (default 2), each its whole time: the
# fuzzing time of each is the same, the run's clock about half.
JOBS=${XPU_FUZZ_JOBS:-2}
k=0
while [ $k -lt "$JOBS" ]; do
	(
		i=0
		for name in $(fuzz_names); do
			[ $((i % JOBS)) -eq $k ] && (one "$name")
			i=$((i + 1))
		done
	) &
	k=$((k + 1))
done
wait
for name in $(fuzz_names); do
	cat "$TMP/$name.out" 2> /dev/null
	[ -s "$TMP/$name.failed" ] && failed=$((failed + $(wc -l < "$TMP/$name.failed")))
done
[ "$failed" -eq 0 ]
