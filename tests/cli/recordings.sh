# SPDX-License-Identifier: GPL-2.0-only
# Recordings a user can lose or choke on (issue 19): the output being the
# input by another name, a full disk, torn or garbage tails, and inputs that
# are no recording at all (a FIFO, a large file of zeros or text), which must
# be refused at once without reading them in.  Needs root (recording is live).
. tests/lib.sh
need_root

# A small real recording to play with.
"$XPUTOP" -b -j -n 3 -d 0.2 -w "$T_TMP/rec.xpr" > /dev/null 2> "$T_TMP/rec.err" ||
	fail "cannot make a recording: $(cat "$T_TMP/rec.err")"
cksum < "$T_TMP/rec.xpr" > "$T_TMP/rec.sum"

# same_input: the recording is what it was.
same_input() {
	cksum < "$T_TMP/rec.xpr" | cmp -s - "$T_TMP/rec.sum" || fail "the input recording was changed ($(stat -c %s "$T_TMP/rec.xpr") bytes)"
}

t writing_the_input_by_a_second_path_is_refused_and_the_input_kept
X=$(realpath "$XPUTOP")
(cd "$T_TMP" && "$X" -b -r "$T_TMP/rec.xpr" -w ./rec.xpr > /dev/null 2> "$T_TMP/err"); rc=$?
[ $rc -ne 0 ] || fail "exit status 0"
expect_grep "being replayed" "$T_TMP/err"
same_input

t writing_the_input_through_a_hard_link_is_refused_and_the_input_kept
ln "$T_TMP/rec.xpr" "$T_TMP/link.xpr"
"$XPUTOP" -b -r "$T_TMP/rec.xpr" -w "$T_TMP/link.xpr" > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -ne 0 ] || fail "exit status 0"
expect_grep "being replayed" "$T_TMP/err"
same_input
rm -f "$T_TMP/link.xpr"

t a_recording_that_fills_the_disk_fails_the_run_and_replays_its_blocks
mkdir "$T_TMP/small"
if mount -t tmpfs -o size=40k xputop-test "$T_TMP/small"; then
	# Busy stacks fill it within seconds; a batch run ends when its recording does.
	"$OUT/tests/progs/busy" 30 & B=$!
	timeout 60 "$XPUTOP" -b -j -n 3000 -d 0.1 -w "$T_TMP/small/full.xpr" > "$T_TMP/live.json" 2> "$T_TMP/err"; rc=$?
	kill $B 2> /dev/null; wait $B 2> /dev/null
	[ $rc -eq 1 ] || fail "exit status $rc, expected 1"
	expect_grep "No space left" "$T_TMP/err"
	cp "$T_TMP/small/full.xpr" "$T_TMP/full.xpr"
	umount "$T_TMP/small"
	"$XPUTOP" -r "$T_TMP/full.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
	[ $rc -eq 0 ] || fail "the replay exited $rc: $(cat "$T_TMP/err")"
	n=$(wc -l < "$T_TMP/out")
	[ "$n" -ge 2 ] || fail "replayed $n snapshots of the full disk's recording"
else
	fail "cannot mount a small tmpfs"
fi

t a_torn_tail_replays_every_intact_block_with_a_warning
size=$(stat -c %s "$T_TMP/rec.xpr")
head -c $((size - 17)) "$T_TMP/rec.xpr" > "$T_TMP/cut.xpr"
"$XPUTOP" -r "$T_TMP/cut.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc: $(cat "$T_TMP/err")"
[ -s "$T_TMP/out" ] || fail "nothing replayed"
expect_grep "warning: .*not a whole block.*intact block" "$T_TMP/err"

t trailing_garbage_replays_the_whole_recording_with_a_warning
cp "$T_TMP/rec.xpr" "$T_TMP/garbage.xpr"
echo "some trailing garbage" >> "$T_TMP/garbage.xpr"
"$XPUTOP" -r "$T_TMP/garbage.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc: $(cat "$T_TMP/err")"
[ "$(wc -l < "$T_TMP/out")" -eq 3 ] || fail "replayed $(wc -l < "$T_TMP/out") snapshots, not 3"
expect_grep "warning: .*22 bytes" "$T_TMP/err"

# cost FILE: "SECONDS CPU-SECONDS KB" that `xputop -r FILE -b` took (wall
# clock, then user + system) and used.
cost() {
	/usr/bin/time -f "%e %U %S %M" -o "$T_TMP/time" timeout 10 "$XPUTOP" -r "$1" -b > /dev/null 2> "$T_TMP/err"
	rc=$?
	tail -n 1 "$T_TMP/time" | awk '{ print $1, $2 + $3, $4 }'
	return $rc
}
# What refusing a missing file costs this build (a sanitizer's shadow memory
# and start-up are most of it there): the floor the others are held to.
read -r BASE_S BASE_CPU BASE_KB <<-END
$(cost "$T_TMP/no-such-file")
END

# refused_fast FILE: -r FILE fails within 0.1 s of CPU time and 10 MB of
# memory more than refusing a missing file, and without waiting (within 1 s
# of its wall-clock time: a blocking open would wait for the 10 s timeout).
# CPU time, not the clock, is what reading the file would cost: beside
# other suites the clock of a refusal swung by 0.2 s.
refused_fast() {
	read -r secs cpu kb <<-END
	$(cost "$1"; echo "rc $?" > "$T_TMP/rc")
	END
	rc=$(sed -n 's/^rc //p' "$T_TMP/rc")
	[ "$rc" = 1 ] || fail "exit status $rc, expected 1"
	awk "BEGIN { exit !($cpu <= $BASE_CPU + 0.1 && $secs <= $BASE_S + 1) }" ||
		fail "took $secs s, $cpu s of CPU (a missing file: $BASE_S s, $BASE_CPU s of CPU)"
	[ "${kb:-99999}" -le $((BASE_KB + 10240)) ] || fail "used $kb KB (a missing file: $BASE_KB KB)"
}

t a_fifo_is_refused_at_once
mkfifo "$T_TMP/fifo"
refused_fast "$T_TMP/fifo"
expect_grep "not a regular file" "$T_TMP/err"

t a_directory_is_refused_as_one
refused_fast "$T_TMP"
expect_grep "a directory, not a recording" "$T_TMP/err"

t a_large_file_of_zeros_is_refused_at_once
truncate -s 3G "$T_TMP/zeros"
refused_fast "$T_TMP/zeros"
expect_grep "not an xputop recording" "$T_TMP/err"
rm -f "$T_TMP/zeros"

t a_large_text_file_is_refused_at_once
yes "a line of some text file that is not a recording" | head -c 200000000 > "$T_TMP/text"
refused_fast "$T_TMP/text"
expect_grep "not an xputop recording" "$T_TMP/err"
rm -f "$T_TMP/text"

finish
