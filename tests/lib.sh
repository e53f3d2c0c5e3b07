# Helpers for the shell tests.  Each test script sources this, calls `t NAME`
# before each behaviour, `fail MSG` when it does not hold, and `finish` last.
# OUT is the build directory (default build).
OUT=${OUT:-build}
XPUTOP=${XPUTOP:-$OUT/xputop}
T_FAILED=0
T_RAN=0
T_CUR=""
T_CUR_FAILED=0
T_TMP=$(mktemp -d /tmp/xputop-test.XXXXXX)
# xputop never reads or writes the settings of whoever runs the tests (a path
# that is not there, for root and the unprivileged user of some tests alike).
export XDG_CONFIG_HOME=/nonexistent/xputop-tests
# Under `sudo make check` xputop would hand exports and commands to whoever
# ran sudo: tests that mean it say so themselves.
unset SUDO_UID SUDO_GID SUDO_USER
# What tests run as another user must be somewhere that user can reach, and
# the checkout may be where only root can go (a clone under `mktemp -d`, a
# 0700 home): `public FILE` copies FILE into T_PUB, which everyone can read,
# and prints the copy's path.
T_PUB=$(mktemp -d /tmp/xputop-pub.XXXXXX)
chmod 755 "$T_PUB"
public() {
	cp "$1" "$T_PUB/" && chmod a+rX "$T_PUB/${1##*/}" && echo "$T_PUB/${1##*/}"
}
# Each suite's xputops collect for themselves: a socket directory of the
# suite's own (the library's socket, the stream other xputops attach to),
# so that an xputop agent running on this machine, or another suite running
# beside, does not make them clients of its collector (core/sources/share.h).
# Suites that need their own place set XPUTOP_SOCKET again.
T_SOCK=
if [ -z "${XPUTOP_SOCKET:-}" ]; then
	T_SOCK=$(mktemp -d /tmp/xputop-sock.XXXXXX)
	chmod 755 "$T_SOCK"
	export XPUTOP_SOCKET=$T_SOCK/gpu.sock
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

t() {
	t_end
	T_CUR=$1
	T_CUR_FAILED=0
	T_RAN=$((T_RAN + 1))
}

t_end() {
	if [ -n "$T_CUR" ]; then
		if [ "$T_CUR_FAILED" -eq 0 ]; then echo "ok   $T_CUR"; else echo "FAIL $T_CUR"; fi
	fi
	T_CUR=""
}

fail() {
	echo "  $T_CUR: $*" >&2
	if [ "$T_CUR_FAILED" -eq 0 ]; then T_FAILED=$((T_FAILED + 1)); fi
	T_CUR_FAILED=1
}

# expect_grep PATTERN FILE [what]
expect_grep() {
	grep -q -- "$1" "$2" || fail "${3:-$2} does not contain '$1'"
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "FAIL $(basename "$0"): these tests need root (run the suite with sudo)" >&2
		exit 1
	fi
}

finish() {
	t_end
	rm -rf "$T_TMP" "$T_PUB" ${T_SOCK:+"$T_SOCK"}
	echo "$((T_RAN - T_FAILED))/$T_RAN passed"
	[ "$T_FAILED" -eq 0 ]
}

# wait_json FILE [TENTHS]: until a batch xputop writing to FILE has printed its
# first snapshot, which it does only once every source is up (slow under the
# sanitizers on a loaded machine, hence no fixed sleeps).
wait_json() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt "${2:-300}" ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$1" ] || fail "xputop printed nothing into $1 in $((${2:-300} / 10)) s $(cat "$1.err" 2> /dev/null)"
}
