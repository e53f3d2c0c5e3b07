#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A long fuzzing campaign, all harnesses at once (tests/fuzz/README.md):
#
#     tests/fuzz/long.sh BIN SECONDS RESULT_DIR NAME=WORKERS...
#
# runs WORKERS processes of BIN/fuzz_NAME for SECONDS each, from the kept
# corpus, and writes into RESULT_DIR: summary.txt (each harness's executions,
# the sum of its workers' stat::number_of_executed_units, and its crashes),
# logs.tgz (the workers' logs and any crash inputs, NAME/artifacts), and
# NAME.tgz (the inputs it found that add coverage to the kept corpus, to
# merge back with -merge=1).  At most 7 harnesses: 9 files would not all
# come back from the device machine.
set -u
[ $# -ge 4 ] || { echo "usage: long.sh BIN SECONDS RESULT_DIR NAME=WORKERS..." >&2; exit 2; }
BIN=$(realpath "$1")
SECS=$2
mkdir -p "$3" || exit 1
RESULT=$(realpath "$3")
shift 3
cd "$(dirname "$0")/../.." || exit 1
FUZZ_DIR=$PWD/tests/fuzz
. "$FUZZ_DIR/common.sh"
W=$(mktemp -d /tmp/xputop-long.XXXXXX) || exit 1

for spec; do
	name=${spec%%=*}
	n=${spec#*=}
	mkdir -p "$W/$name/new" "$W/$name/artifacts"
	# shellcheck disable=SC2046
	(cd "$W/$name" && exec "$BIN/fuzz_$name" $(fuzz_opts "$name") -jobs="$n" -workers="$n" \
		-max_total_time="$SECS" -print_final_stats=1 -artifact_prefix="$W/$name/artifacts/" \
		new "$FUZZ_DIR/corpus/$name" > driver.log 2>&1) &
done
wait

for spec; do
	name=${spec%%=*}
	runs=$(cat "$W/$name"/fuzz-*.log 2> /dev/null |
		sed -n 's/^stat::number_of_executed_units: *//p' | awk '{ s += $1 } END { print s + 0 }')
	crashes=$(ls "$W/$name/artifacts" | wc -l)
	echo "fuzz_$name workers=${spec#*=} seconds=$SECS executions=$runs crashes=$crashes" |
		tee -a "$RESULT/summary.txt"
	# Only what adds coverage to the kept corpus comes back.
	mkdir -p "$W/$name/kept" "$W/$name/added"
	cp "$FUZZ_DIR/corpus/$name"/* "$W/$name/kept/"
	# shellcheck disable=SC2046
	"$BIN/fuzz_$name" $(fuzz_opts "$name") -merge=1 "$W/$name/kept" "$W/$name/new" > /dev/null 2>&1
	for f in "$W/$name/kept"/*; do
		[ -e "$FUZZ_DIR/corpus/$name/${f##*/}" ] || mv "$f" "$W/$name/added/"
	done
	tar czf "$RESULT/$name.tgz" -C "$W/$name" added
done
(cd "$W" && tar czf "$RESULT/logs.tgz" */fuzz-*.log */driver.log */artifacts)
rm -rf "$W"
