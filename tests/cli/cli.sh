# The command line: --help, the man page, errors a user can meet.
. tests/lib.sh

t help_and_man_page_list_the_same_options
"$XPUTOP" --help > "$T_TMP/help" || fail "--help failed"
grep -o -- '--[a-z][a-z-]*' "$T_TMP/help" | sort -u > "$T_TMP/help.opts"
sed -n 's/.*\\-\\-\([a-z][a-z\\-]*\).*/--\1/p' man/xputop.8 | sed 's/\\-/-/g' | sort -u > "$T_TMP/man.opts"
[ -s "$T_TMP/help.opts" ] || fail "no options found in --help"
if ! cmp -s "$T_TMP/help.opts" "$T_TMP/man.opts"; then
	fail "--help and man/xputop.8 disagree: $(diff "$T_TMP/help.opts" "$T_TMP/man.opts" | grep '^[<>]' | tr '\n' ' ')"
fi
for s in $(grep -o -- '^  -[A-Za-z],' "$T_TMP/help" | tr -d ' ,'); do
	grep -q -- "\\\\$s\"* *, *\\\\-\\\\-\|^\.BR \\\\$s " man/xputop.8 || fail "man page lacks $s"
done

t help_and_man_page_list_every_key
sed -n '/^Interactive keys:/,/^$/p' "$T_TMP/help" | sed '1d;$d' > "$T_TMP/keys"
[ -s "$T_TMP/keys" ] || fail "no keys in --help"
for k in g n c r H w f s q '/' '<' '?'; do
	grep -q "^  .*[ ,]$k[ ,]\|^  $k[ ,]\|^  $k  " "$T_TMP/keys" || fail "--help lacks key $k"
	grep -q "^\.BR* .*$k" man/xputop.8 || fail "man page lacks key $k"
done

t version_prints_the_version
"$XPUTOP" -V | grep -q '^xputop [0-9]' || fail "-V"

t bad_options_are_usage_errors
"$XPUTOP" --no-such-option > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 2 ] || fail "exit status $rc, expected 2"
expect_grep "xputop --help" "$T_TMP/err"
"$XPUTOP" -d 0 -b > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 2 ] || fail "-d 0: exit status $rc, expected 2"
expect_grep "refresh interval" "$T_TMP/err"
"$XPUTOP" -p 12x -b > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 2 ] || fail "-p 12x accepted"

t an_unprivileged_user_is_told_to_use_sudo
if [ "$(id -u)" -eq 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$XPUTOP" -b -n 1 > /dev/null 2> "$T_TMP/err"; rc=$?
else
	"$XPUTOP" -b -n 1 > /dev/null 2> "$T_TMP/err"; rc=$?
fi
[ $rc -eq 1 ] || fail "exit status $rc, expected 1"
expect_grep "needs root" "$T_TMP/err"
expect_grep "sudo" "$T_TMP/err"

t a_file_that_is_not_a_recording_is_rejected
printf 'hello, not a recording\n' > "$T_TMP/junk"
"$XPUTOP" -r "$T_TMP/junk" -b > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
[ $rc -eq 1 ] || fail "exit status $rc, expected 1"
[ -s "$T_TMP/out" ] && fail "printed a snapshot from a non-recording"
expect_grep "junk: .*recording" "$T_TMP/err"

t a_missing_recording_is_reported
"$XPUTOP" -r "$T_TMP/nope.xpr" -b > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 1 ] || fail "exit status $rc"
expect_grep "nope.xpr" "$T_TMP/err"

t a_damaged_recording_is_rejected_before_anything_is_shown
if [ "$(id -u)" -eq 0 ]; then
	"$XPUTOP" -b -j -n 3 -d 0.2 -w "$T_TMP/good.xpr" > /dev/null 2>&1 || fail "recording failed"
	size=$(stat -c %s "$T_TMP/good.xpr")
	cp "$T_TMP/good.xpr" "$T_TMP/flip.xpr"
	printf '\377' | dd of="$T_TMP/flip.xpr" bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
	"$XPUTOP" -r "$T_TMP/flip.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
	[ $rc -eq 1 ] || fail "flipped byte: exit status $rc"
	[ -s "$T_TMP/out" ] && fail "flipped byte: printed snapshots from a damaged file"
	expect_grep "damaged recording.*byte" "$T_TMP/err"
	head -c $((size - 17)) "$T_TMP/good.xpr" > "$T_TMP/cut.xpr"
	"$XPUTOP" -r "$T_TMP/cut.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err"; rc=$?
	[ $rc -eq 1 ] || fail "truncated: exit status $rc"
	expect_grep "truncated" "$T_TMP/err"
	"$XPUTOP" -r "$T_TMP/good.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err" || fail "the intact recording was refused: $(cat "$T_TMP/err")"
	[ "$(wc -l < "$T_TMP/out")" -eq 3 ] || fail "the intact recording gave $(wc -l < "$T_TMP/out") snapshots, not 3"
else
	fail "needs root to make a recording"
fi

finish
