# SPDX-License-Identifier: GPL-2.0-only
# make install and make uninstall into a DESTDIR: every file where it belongs,
# the staged xputop running and finding its own injection library and themes
# there, PREFIX moving every path, and nothing left after uninstall.  Needs
# root: the library is found by a live run.
# test-san: skip
. tests/lib.sh
need_root
D=$T_TMP/stage
MAKE="make -s --no-print-directory OUTPUT=$OUT"
LIB=$OUT/libxputop_inject.so
[ -f "$LIB" ] || { echo "FAIL $(basename "$0"): $LIB was not built (no CUDA toolkit?)" >&2; exit 1; }

# The directories xputop was built for (make writes them for core/util/install.c).
dir_of() { sed -n "s/^#define $1 \"\\(.*\\)\"$/\\1/p" "$OUT/install_dirs.h"; }
BINDIR=$(dir_of XPU_BINDIR)
LIBDIR=$(dir_of XPU_LIBDIR)
DATADIR=$(dir_of XPU_DATADIR)
PREFIX=${BINDIR%/sbin}
COMPDIR=$(pkg-config --define-variable=prefix="$PREFIX" --variable=completionsdir bash-completion 2> /dev/null)
COMPDIR=${COMPDIR:-$PREFIX/share/bash-completion/completions}
STAGED=$D$BINDIR/xputop
REPLAY=$(pwd)/tests/fixtures/npu-bpftrace.log

t install_puts_every_file_where_it_belongs
$MAKE DESTDIR="$D" install > "$T_TMP/install.out" 2>&1 || fail "make install failed: $(cat "$T_TMP/install.out")"
{
	echo "$BINDIR/xputop 755"
	echo "$LIBDIR/libxputop_inject.so 644"
	for f in themes/*.theme; do echo "$DATADIR/$f 644"; done
	echo "$PREFIX/share/man/man8/xputop.8 644"
	echo "$COMPDIR/xputop 644"
	echo "$PREFIX/lib/systemd/system/xputop.service 644"
	echo "$DATADIR/grafana-dashboard.json 644"
} | sort > "$T_TMP/want"
(cd "$D" && find . -type f -printf '/%P %m\n') | sort > "$T_TMP/got"
cmp -s "$T_TMP/want" "$T_TMP/got" || fail "installed files differ: $(diff "$T_TMP/want" "$T_TMP/got" | grep '^[<>]' | tr '\n' ' ')"
for f in themes/*.theme; do
	cmp -s "$f" "$D$DATADIR/$f" || fail "$f was not installed as it is"
done
cmp -s man/xputop.8 "$D$PREFIX/share/man/man8/xputop.8" || fail "the man page was not installed as it is"
cmp -s "$OUT/xputop.bash" "$D$COMPDIR/xputop" || fail "the completion installed is not the one built"

t the_installed_systemd_unit_runs_the_installed_xputop_as_a_node_agent
UNIT=$D$PREFIX/lib/systemd/system/xputop.service
EXEC=$(sed -n 's/^ExecStart=//p' "$UNIT")
[ "$EXEC" = "$BINDIR/xputop -b --prometheus 19400" ] || fail "ExecStart=$EXEC"
expect_grep "^WantedBy=multi-user.target$" "$UNIT"
expect_grep "^StandardOutput=null$" "$UNIT"
# its command line, run by the staged binary (on any free port, for two refreshes)
# shellcheck disable=SC2086
set -- $EXEC
shift
"$STAGED" $(echo "$@" | sed 's/--prometheus 19400/--prometheus 0/') -n 2 -d 0.3 > /dev/null 2> "$T_TMP/unit.err" ||
	fail "the unit's command failed: $(cat "$T_TMP/unit.err")"
expect_grep "^xputop: metrics at http://127.0.0.1:[0-9]*/metrics$" "$T_TMP/unit.err"

t the_unit_scores_4_or_better_in_systemd_analyze_security
# the unit as built (build/xputop.service), rated offline as systemd would rate it installed
command -v systemd-analyze > /dev/null || fail "systemd-analyze is not installed (Debian: the systemd package)"
systemd-analyze security --offline=true --no-pager "$OUT/xputop.service" > "$T_TMP/security" 2>&1 ||
	fail "systemd-analyze failed: $(tail -3 "$T_TMP/security")"
SCORE=$(sed -n 's/^→ Overall exposure level for xputop.service: \([0-9.]*\) .*/\1/p' "$T_TMP/security")
echo "  systemd-analyze security: $SCORE"
[ -n "$SCORE" ] || fail "no score in: $(tail -3 "$T_TMP/security")"
awk -v s="${SCORE:-99}" 'BEGIN { exit !(s <= 4.0) }' ||
	fail "the unit's exposure is $SCORE, over 4.0: $(grep '✗' "$T_TMP/security" | tr -s ' ' | head -20)"
for cap in CAP_BPF CAP_PERFMON CAP_SYS_PTRACE; do
	grep -q "^CapabilityBoundingSet=.*$cap" "$OUT/xputop.service" || fail "the unit's bounding set lacks $cap"
done
expect_grep "^NoNewPrivileges=yes$" "$OUT/xputop.service"
expect_grep "^MemoryMax=" "$OUT/xputop.service"
expect_grep "^ProtectSystem=strict$" "$OUT/xputop.service"
expect_grep "^ExecReload=/bin/kill -HUP \$MAINPID$" "$OUT/xputop.service"

t the_installed_binary_runs
[ "$("$STAGED" --version)" = "$("$XPUTOP" --version)" ] || fail "--version: $("$STAGED" --version 2>&1)"
"$STAGED" --help > "$T_TMP/help" 2>&1 || fail "--help failed"
"$XPUTOP" --help | cmp -s - "$T_TMP/help" || fail "--help differs from the built binary's"

t the_installed_xputop_finds_its_injection_library
(cd / && "$STAGED" -b -n 1 -d 0.2 -- sh -c 'echo "LIB=$CUDA_INJECTION64_PATH"' > /dev/null 2> "$T_TMP/run.err") ||
	fail "the staged xputop failed: $(cat "$T_TMP/run.err")"
expect_grep "^LIB=$D$LIBDIR/libxputop_inject.so$" "$T_TMP/run.err" "the command's environment"

t the_installed_xputop_finds_the_installed_themes
# From /, with an empty home: the staged themes are the only ones to find.
# The theme is looked up before the terminal, so without one a found theme
# ends in "needs a terminal" and a missing one in "not found".
mkdir -p "$T_TMP/home"
cp themes/mono.theme "$D$DATADIR/themes/staged-only.theme"
for name in light staged-only; do
	(cd / && HOME=$T_TMP/home XDG_CONFIG_HOME= "$STAGED" -t "$name" -r "$REPLAY" \
		< /dev/null > /dev/null 2> "$T_TMP/theme.err")
	expect_grep "needs a terminal" "$T_TMP/theme.err" "-t $name"
done
(cd / && HOME=$T_TMP/home XDG_CONFIG_HOME= "$STAGED" -t nosuch -r "$REPLAY" \
	< /dev/null > /dev/null 2> "$T_TMP/theme.err")
expect_grep "theme 'nosuch' not found" "$T_TMP/theme.err" "-t nosuch"

t the_installed_completion_offers_the_installed_themes
# shellcheck disable=SC2016
got=$(cd / && HOME=$T_TMP/home XDG_CONFIG_HOME= bash --norc --noprofile -c '
	. "$1"; COMP_WORDS=("$2" -t st); COMP_CWORD=2; _xputop "$2" st -t; printf "%s\n" "${COMPREPLY[@]}"' \
	sh "$D$COMPDIR/xputop" "$STAGED")
[ "$got" = staged-only ] || fail "completing -t st offered [$got], not staged-only"
rm -f "$D$DATADIR/themes/staged-only.theme"

t the_installed_man_page_renders_in_section_8
[ "$(man --manpath="$D$PREFIX/share/man" -w 8 xputop 2> /dev/null)" = "$D$PREFIX/share/man/man8/xputop.8" ] ||
	fail "man -w 8 xputop does not find the installed page"
MANWIDTH=80 man --manpath="$D$PREFIX/share/man" 8 xputop 2> "$T_TMP/man.err" | grep -q "^OPTIONS" ||
	fail "the installed page does not render: $(cat "$T_TMP/man.err")"

t prefix_moves_every_installed_path_and_the_compiled_in_ones
# A dry run: nothing is rebuilt or written.
$MAKE -n PREFIX=/opt/xputop-x DESTDIR="$D" install > "$T_TMP/dry" 2>&1 || fail "make -n install failed"
for p in "$D/opt/xputop-x/sbin/xputop" "$D/opt/xputop-x/lib/xputop/libxputop_inject.so" \
	"$D/opt/xputop-x/share/xputop/themes/" "$D/opt/xputop-x/share/man/man8/xputop.8" \
	"$D/opt/xputop-x/lib/systemd/system/xputop.service" \
	"'/opt/xputop-x/sbin' '/opt/xputop-x/lib/xputop' '/opt/xputop-x/share/xputop'"; do
	grep -qF -- "$p" "$T_TMP/dry" || fail "PREFIX=/opt/xputop-x: no '$p' in the dry run"
done
[ "$(dir_of XPU_LIBDIR)" = "$LIBDIR" ] || fail "the dry run changed $OUT/install_dirs.h"

t uninstall_removes_what_install_put_and_nothing_else
mkdir -p "$D/usr/share/keep"
echo mine > "$D/usr/share/keep/file"
$MAKE DESTDIR="$D" uninstall > "$T_TMP/uninstall.out" 2>&1 || fail "make uninstall failed: $(cat "$T_TMP/uninstall.out")"
left=$(cd "$D" && find . -type f ! -path ./usr/share/keep/file)
[ -z "$left" ] || fail "files left: $left"
left=$(cd "$D" && find . -name '*xputop*')
[ -z "$left" ] || fail "left behind: $left"
[ -f "$D/usr/share/keep/file" ] || fail "uninstall removed a file it did not install"

t uninstall_keeps_a_themes_directory_someone_added_to
$MAKE DESTDIR="$D" install > /dev/null 2>&1 || fail "make install failed"
echo "header = red" > "$D$DATADIR/themes/site.theme"
$MAKE DESTDIR="$D" uninstall > /dev/null 2>&1 || fail "make uninstall failed"
[ -f "$D$DATADIR/themes/site.theme" ] || fail "a theme make install did not put there was removed"
[ -e "$STAGED" ] && fail "the binary is still there"

finish
