# SPDX-License-Identifier: GPL-2.0-only
# The command line: --help, the man page, errors a user can meet.
. tests/lib.sh

t help_and_man_page_document_the_same_options
# Each option as --help prints it ("-d, --delay SECS") is a tag of the man
# page's OPTIONS section, and each tag there is an option of --help.
"$XPUTOP" --help > "$T_TMP/help" || fail "--help failed"
sed -n '/^Options:$/,/^$/p' "$T_TMP/help" | sed '1d;$d' | cut -c3-30 | sed 's/ *$//; s/^ *//' | sort > "$T_TMP/help.opts"
python3 tests/manpage.py options man/xputop.8 | sort > "$T_TMP/man.opts"
[ -s "$T_TMP/help.opts" ] || fail "no options found in --help"
if ! cmp -s "$T_TMP/help.opts" "$T_TMP/man.opts"; then
	fail "--help (<) and the OPTIONS of man/xputop.8 (>) disagree: $(diff "$T_TMP/help.opts" "$T_TMP/man.opts" | grep '^[<>]' | tr '\n' ' ')"
fi

t help_and_man_page_document_the_same_keys
# Every word of the keys column of --help ("Up Down  j k", "click a row") is
# in a tag of INTERACTIVE COMMANDS, and back.
sed -n '/^Interactive keys:/,/^$/p' "$T_TMP/help" | sed '1d;$d' | cut -c3-30 | tr -s ' ' '\n' | sed '/^$/d' | sort -u > "$T_TMP/help.keys"
python3 tests/manpage.py keys man/xputop.8 | sort -u > "$T_TMP/man.keys"
[ -s "$T_TMP/help.keys" ] || fail "no keys in --help"
if ! cmp -s "$T_TMP/help.keys" "$T_TMP/man.keys"; then
	fail "--help (<) and the INTERACTIVE COMMANDS of man/xputop.8 (>) disagree: $(diff "$T_TMP/help.keys" "$T_TMP/man.keys" | grep '^[<>]' | tr '\n' ' ')"
fi

t the_man_page_describes_every_key_of_the_settings_file
# The keys xputop reads (the table of settings' and the screen's) are the
# tags of CONFIGURATION FILE, and back.
"$XPUTOP" --list-keys | sort > "$T_TMP/keys" || fail "--list-keys failed"
[ -s "$T_TMP/keys" ] || fail "no keys from --list-keys"
python3 tests/manpage.py columns man/xputop.8 "CONFIGURATION FILE" | sort > "$T_TMP/man.keys"
if ! cmp -s "$T_TMP/keys" "$T_TMP/man.keys"; then
	fail "the settings file's keys (<) and the CONFIGURATION FILE of man/xputop.8 (>) disagree: $(diff "$T_TMP/keys" "$T_TMP/man.keys" | grep '^[<>]' | tr '\n' ' ')"
fi

t the_man_page_renders_without_warnings
groff -man -ww -z man/xputop.8 > "$T_TMP/groff" 2>&1 || fail "groff failed"
[ -s "$T_TMP/groff" ] && fail "groff warns: $(head -5 "$T_TMP/groff")"
MANWIDTH=80 man --warnings -l man/xputop.8 > "$T_TMP/man.txt" 2> "$T_TMP/man.err" || fail "man -l failed"
[ -s "$T_TMP/man.err" ] && fail "man warns: $(head -5 "$T_TMP/man.err")"
for s in SYNOPSIS REQUIREMENTS OPTIONS "INTERACTIVE COMMANDS" "CPU VIEW" "GPU VIEW" "NPU VIEW" ALERTS EXPORTS \
	FILES ENVIRONMENT OVERHEAD EXAMPLES "SEE ALSO"; do
	grep -q "^$s\$" "$T_TMP/man.txt" || fail "the man page has no $s section"
done

t the_man_page_describes_every_column_of_every_view
# Each column heading of each view's table (core/models/model_VIEW.c; JSON-only
# columns are not drawn) is a tag of the view's section.
for v in cpu gpu npu; do
	V=$(echo $v | tr a-z A-Z)
	grep "^\s*\[XPU_${V}_COL_[A-Z0-9_]*\] = { \"" core/models/model_$v.c | grep -v JSON_ONLY |
		sed 's/^[^"]*"\([^"]*\)".*/\1/' | sort -u > "$T_TMP/cols"
	[ -s "$T_TMP/cols" ] || fail "no columns found in core/models/model_$v.c"
	python3 tests/manpage.py columns man/xputop.8 "$V VIEW" | sort -u > "$T_TMP/man.cols"
	missing=$(comm -23 "$T_TMP/cols" "$T_TMP/man.cols" | tr '\n' ' ')
	[ -z "$missing" ] || fail "the $V VIEW section does not describe: $missing"
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
	as_nobody "$(public "$XPUTOP")" -b -n 1 > /dev/null 2> "$T_TMP/err"; rc=$?
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

t json_is_valid_utf8_whatever_bytes_a_process_is_named
# The fleet recording's process is named a"b\c<newline>x€ and a byte 0xff
# that is no UTF-8 (tests/fixtures/fleet.sh): the byte becomes U+FFFD.
"$XPUTOP" -b -j -r tests/fixtures/fleet.xpr --view cpu > "$T_TMP/names.json" 2> "$T_TMP/err" ||
	fail "the replay failed: $(cat "$T_TMP/err")"
python3 - "$T_TMP/names.json" <<'EOF' || fail "the JSON is not valid UTF-8, or the name is not there"
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")	# strict: a stray byte fails here
names = set()
for line in text.splitlines():
    for p in json.loads(line)["cpu"]:
        names.add(p["comm"])
if 'a"b\\c\nx\u20ac\ufffd' not in names:
    sys.exit(f"names: {sorted(names)!r}")
EOF

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
	"$XPUTOP" -r "$T_TMP/good.xpr" -b -j > "$T_TMP/out" 2> "$T_TMP/err" || fail "the intact recording was refused: $(cat "$T_TMP/err")"
	[ "$(wc -l < "$T_TMP/out")" -eq 3 ] || fail "the intact recording gave $(wc -l < "$T_TMP/out") snapshots, not 3"
else
	fail "needs root to make a recording"
fi

finish
