# SPDX-License-Identifier: GPL-2.0-only
# The GPU suites from a checkout only root can enter (issue 18): a clone of
# this checkout, with its uncommitted changes, in a 0700 directory (as
# `mktemp -d` makes them and as many homes are), its programs linked there, and the suites
# whose programs run as another user run from it.  There, uid 65534 can reach
# nothing of the checkout: the suites must give it what it runs, and
# `xputop -- CMD` must give it a library it can load.  Needs root.
# test-timeout: 900
# test-san: skip
. tests/lib.sh
need_root
ROOT=$(pwd)
PRIV=$(mktemp -d /tmp/xputop-private.XXXXXX)
CLONE=$PRIV/xputop
# The build the suites need, configured as $OUT is (sanitizers, static).
SAN=$T_SAN_BUILD
SUITES="tests/bpf/gpu.sh tests/bpf/exports.sh tests/bpf/faults.sh tests/tui/gpu.sh"
# xputop, its library, and every test program the suites name ($OUT/tests/...).
NEEDED="build/xputop build/libxputop_inject.so $(grep -ho '\$OUT/tests/[A-Za-z0-9_./-]*' $SUITES |
	sed 's|^\$OUT/|build/|' | sort -u | tr '\n' ' ')"

# git -C "$ROOT" as root, whoever owns the checkout.
g() { git -c safe.directory="$ROOT" -C "$ROOT" "$@"; }

# clone: HEAD, then what the working tree changes (tracked and untracked); a
# tree that is not a git checkout (a release tarball) is copied as it is.
clone() {
	if ! g rev-parse --git-dir > /dev/null 2>&1; then
		mkdir "$CLONE" && tar -C "$ROOT" --exclude="./$OUT" --exclude='./build*' -cf - . | tar -C "$CLONE" -xf -
		return
	fi
	git -c safe.directory="$ROOT" clone -q "$ROOT" "$CLONE" || return 1
	g diff --binary HEAD > "$T_TMP/changes"
	[ ! -s "$T_TMP/changes" ] || git -C "$CLONE" apply --binary "$T_TMP/changes" || return 1
	g ls-files -z --others --exclude-standard | (cd "$ROOT" && tar --null -T - -cf -) | tar -C "$CLONE" -xf -
}

# seed: the checkout's build ($OUT, built from the same sources), dated after
# the clone's sources so that make takes its objects as they are, without
# the programs the suites run: make links those in the clone.  Compiling
# everything a second time took most of this suite's 430 s in CI; the
# compiling is the checkout's build's to test, the private place this one's.
# A build that is not up to date is not seeded from: the clone compiles
# (install.c counts as compiled whatever the dry run says: install_dirs.h is
# remade on every make, and replaced only when it changes).
seed() {
	# shellcheck disable=SC2086
	if make -n -C "$ROOT" OUTPUT="$OUT" SAN="${SAN:-0}" $(echo "$NEEDED" | sed "s|build/|$OUT/|g") 2>&1 |
		grep -E '(^| )-c ' | grep -qv ' -c core/util/install\.c '; then
		echo "$OUT is not up to date: the clone compiles everything"
		return 0
	fi
	mkdir -p "$CLONE/build" &&
		tar -C "$OUT" --exclude=./fuzz -cf - . | tar -C "$CLONE/build" -xf - &&
		find "$CLONE/build" -exec touch -h -d "@$(($(date +%s) + 1))" {} + &&
		(cd "$CLONE" && rm -f $NEEDED)
}

t a_clone_in_a_0700_directory_links_its_programs
[ "$(stat -c %a "$PRIV")" = 700 ] || fail "$PRIV is mode $(stat -c %a "$PRIV"), not 0700"
if ! clone > "$T_TMP/clone.log" 2>&1; then
	fail "cannot clone $ROOT: $(cat "$T_TMP/clone.log")"
elif ! seed > "$T_TMP/seed.log" 2>&1; then
	fail "cannot copy $OUT into the clone: $(cat "$T_TMP/seed.log")"
# shellcheck disable=SC2086
elif ! make -C "$CLONE" -j2 SAN="${SAN:-0}" $NEEDED > "$T_TMP/build.log" 2>&1; then
	fail "the clone does not build: $(tail -20 "$T_TMP/build.log")"
else
	# Only the programs were made there: anything compiled means the
	# seeding failed and the timing above is a full build's.
	grep -E '(^| )-c ' "$T_TMP/build.log" | head -3 | sed 's/^/  compiled: /'
fi
# The point of the exercise: its user cannot reach the clone's build.
as_nobody test -r "$CLONE/build/libxputop_inject.so" && fail "uid 65534 can read the clone's library"

# The suites run from the clone, gpu.sh (the longest, most of it waiting on
# refreshes) beside the other three one after another; then each is reported.
# suite N FILE: runs it into $T_TMP/suite.N.log, its status in .rc.
suite() {
	(cd "$CLONE" && OUT=build sh "$2") > "$T_TMP/suite.$1.log" 2>&1
	echo $? > "$T_TMP/suite.$1.rc"
}
if [ -x "$CLONE/build/xputop" ]; then
	n=1
	for s in $SUITES; do
		if [ $n = 1 ]; then
			suite 1 "$s" &
			G=$!
		else
			suite $n "$s"
		fi
		n=$((n + 1))
	done
	wait $G
fi
n=1
for s in $SUITES; do
	t "$(echo "$s" | tr '/.' '__')_passes_from_the_clone"
	if [ ! -x "$CLONE/build/xputop" ]; then
		fail "not built"
	elif [ "$(cat "$T_TMP/suite.$n.rc")" != 0 ] || grep -q '^FAIL' "$T_TMP/suite.$n.log"; then
		fail "$(grep -E '^FAIL|^  ' "$T_TMP/suite.$n.log" | head -20)"
	fi
	grep "passed$" "$T_TMP/suite.$n.log" | sed 's/^/  /'
	n=$((n + 1))
done

rm -rf "$PRIV"
finish
