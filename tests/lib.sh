# SPDX-License-Identifier: GPL-2.0-only
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
# How much slower xputop may be than a plain build, for the few checks of a
# rate or a deadline: 3 in a sanitizer build (its xputops take several times
# the CPU, and the sanitizer pass runs its suites in lanes), else 1.  Only
# the bound of what is timed scales; what must happen still must.
# T_SAN_BUILD: OUT's SAN setting (1 for a sanitizer build), as make keeps it.
T_SAN_BUILD=$(sed -n 's/^SAN ?= //p' "$OUT/config.mk" 2> /dev/null)
T_SLOW=${XPU_TEST_SLOW:-1}
if [ -z "${XPU_TEST_SLOW:-}" ] && [ "$T_SAN_BUILD" = 1 ]; then
	T_SLOW=3
fi
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

# Every sanitizer report of every process the suite starts (xputop run as
# root or as nobody, in a terminal, in the background, its stderr kept or
# not) is written into T_SAN, and the test during which it came fails with
# it: a leak or an error at exit cannot pass unseen.  exitcode makes the
# process's status say so as well.
# tests/lsan.supp holds back leaks inside libraries xputop uses (each line
# says which and why).
T_SAN=$(mktemp -d /tmp/xputop-san.XXXXXX)
chmod 1777 "$T_SAN"
mkdir -p "$T_SAN/seen"
export ASAN_OPTIONS="detect_leaks=1:exitcode=23:abort_on_error=0:log_path=$T_SAN/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$T_SAN/ubsan"
# (a copy anyone can read: some xputops run as uid 65534 from a private checkout)
cp tests/lsan.supp "$T_SAN/lsan.supp" && chmod 644 "$T_SAN/lsan.supp"
export LSAN_OPTIONS="suppressions=$T_SAN/lsan.supp:print_suppressions=0"

# san_check: fails the current test with any sanitizer report written since
# the last check.
san_check() {
	for r in "$T_SAN"/asan.* "$T_SAN"/ubsan.*; do
		[ -s "$r" ] || continue
		fail "sanitizer report ($r): $(grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$r" | tr '\n' ' ')"
		sed 's/^/    # /' "$r" | head -n 40 >&2
		mv "$r" "$T_SAN/seen/"
	done
}

# On any exit (finish, a failure, a signal from tests/run's limit): the
# suite's background jobs, terminals and temporary files go.  A helper that
# starts something else adds a command to T_CLEANUP.
T_CLEANUP=""
t_stop_jobs() {
	jobs -p > "$T_TMP/.jobs" 2> /dev/null
	if [ -s "$T_TMP/.jobs" ]; then
		# shellcheck disable=SC2046
		kill -TERM $(cat "$T_TMP/.jobs") 2> /dev/null
		# shellcheck disable=SC2046
		kill -CONT $(cat "$T_TMP/.jobs") 2> /dev/null
		# What ignores SIGTERM (unshare --fork does) gets 2 s, then SIGKILL.
		i=0
		while [ $i -lt 20 ]; do
			alive=0
			for p in $(cat "$T_TMP/.jobs"); do
				case $(ps -o stat= -p "$p" 2> /dev/null) in '' | Z*) ;; *) alive=1 ;; esac
			done
			[ $alive = 0 ] && break
			sleep 0.1
			i=$((i + 1))
		done
		# shellcheck disable=SC2046
		kill -KILL $(cat "$T_TMP/.jobs") 2> /dev/null
	fi
	for c in $T_CLEANUP; do "$c"; done
	T_CLEANUP=""
}
t_cleanup() {
	trap - EXIT INT TERM
	t_stop_jobs
	# XPU_TEST_KEEP=DIR: a copy of the suite's files, to look into a failure
	[ -z "${XPU_TEST_KEEP:-}" ] || cp -a "$T_TMP" "$XPU_TEST_KEEP/$(basename "$0" .sh).$$" 2> /dev/null
	rm -rf "$T_TMP" "$T_PUB" "$T_SAN" ${T_SOCK:+"$T_SOCK"}
}
trap 't_cleanup' EXIT
trap 'echo "  $T_CUR: stopped by a signal" >&2; exit 143' INT TERM

t() {
	san_check
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

# have FILE WHAT: FILE is there and not empty, or the current test fails: a
# check never passes for want of its input.
have() {
	[ -n "$1" ] && [ -s "$1" ] && return 0
	fail "${2:-its input} is missing${1:+ ($1)}"
	return 1
}

# xp_ok PID: waits for a batch xputop the test started in the background,
# which must exit 0; xp_failed RC: one that ran in the foreground did not.
# Both say what it printed last (tests send its stderr to $T_TMP/xputop.err
# when they keep it nowhere else).
xp_failed() {
	fail "xputop exited with $1: $(tail -n 5 "$T_TMP/xputop.err" 2> /dev/null)"
}
xp_ok() {
	wait "$1"
	xp_rc=$?
	[ "$xp_rc" -eq 0 ] || xp_failed "$xp_rc"
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
	# What the suite left running stops now, and its reports count for
	# the last test.
	t_stop_jobs
	wait
	san_check
	t_end
	t_cleanup
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
