# SPDX-License-Identifier: GPL-2.0-only
# Driving xputop through a real terminal: the helpers the TUI tests share.
# Source after tests/lib.sh.  Each test gets its own tmux server (SOCK).
command -v tmux > /dev/null || { echo "FAIL $(basename "$0"): tmux is not installed" >&2; exit 1; }

NTERM=0
SOCK="xputop-test-$$-0"
printf 'set -g default-terminal screen-256color\nset -g escape-time 0\n' > "$T_TMP/tmux.conf"

tm() { tmux -u -L "$SOCK" -f "$T_TMP/tmux.conf" "$@"; }

# tm_end SOCKET: what its panes run ends first (SIGTERM, then up to 10 s),
# then the server.  A terminal that goes under a running xputop orphans its
# process group, and the kernel's SIGHUP and SIGCONT to it can discard the
# SIGSTOP a sanitizer build's leak check at exit stops the process with:
# that xputop then spun at 95% of a CPU for good (the strays left after
# CI's sanitizer pass, `-r rec.xpr` and `-r dev.xpr --view gpu`, their
# LeakSanitizer tracer waiting in waitpid).
tm_end() {
	for p in $(tmux -L "$1" list-panes -a -F '#{pane_pid}' 2> /dev/null); do
		kids=$(pgrep -P "$p")
		[ -n "$kids" ] || continue
		kill -TERM $kids 2> /dev/null
		for k in $kids; do
			i=0
			while kill -0 "$k" 2> /dev/null && [ $i -lt 100 ]; do
				sleep 0.1
				i=$((i + 1))
			done
		done
	done
	tmux -L "$1" kill-server 2> /dev/null
}

# Every terminal this suite made goes when it ends, however it ends.
tm_cleanup() {
	for s in "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/xputop-test-$$-"*; do
		[ -S "$s" ] && tm_end "${s##*/}"
	done
}
T_CLEANUP="$T_CLEANUP tm_cleanup"

# new_terminal COLS ROWS COMMAND: a fresh server with one pane running COMMAND
# (a dying server can take a new session with it, so each gets its own).
new_terminal() {
	tm_end "$SOCK"
	NTERM=$((NTERM + 1))
	SOCK="xputop-test-$$-$NTERM"
	tm new-session -d -x "$1" -y "$2" "$3"
}

screen() { tm capture-pane -p -t 0 > "$T_TMP/screen" 2> /dev/null; }
keys() { tm send-keys -t 0 "$@"; }
alternate_screen() { tm display-message -p -t 0 '#{alternate_on}'; }

# wait_screen GREP_FLAG PATTERN TENTHS VERB: until grep -q GREP_FLAG finds
# PATTERN on the screen, at most TENTHS tenths of a second; else the test
# fails saying "the screen never VERB 'PATTERN'" and shows the screen.
wait_screen() {
	i=0
	while [ $i -lt "$3" ]; do
		screen
		grep -q"$1" -- "$2" "$T_TMP/screen" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "the screen never $4 '$2'"
	sed 's/^/    | /' "$T_TMP/screen" >&2
	return 1
}

# wait_for TEXT [TENTHS]: until the screen shows TEXT (fixed string).
wait_for() { wait_screen F "$1" "${2:-80}" showed; }

# wait_for_re REGEX [TENTHS]: until a line of the screen matches REGEX
# (grep -E).
wait_for_re() { wait_screen E "$1" "${2:-200}" matched; }

# wait_gone TEXT: until the screen no longer shows TEXT.
wait_gone() {
	i=0
	while [ $i -lt 50 ]; do
		screen
		grep -qF -- "$1" "$T_TMP/screen" || return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "the screen still shows '$1'"
	return 1
}

# record_busy FILE [THREADS]: a short recording of tests/progs/busy alone
# (root), so that a replay of it shows the same screen every time it ends.
record_busy() {
	# Busy for longer than xputop may take to start on a loaded machine:
	# samples from before its first refresh are not counted (issue 19).
	"$OUT/tests/progs/busy" 30 "${2:-1}" > /dev/null 2>&1 &
	rb_busy=$!
	"$XPUTOP" -b -n 6 -d 0.3 -p "$rb_busy" -w "$1" > /dev/null 2>&1 ||
		echo "FAIL $(basename "$0"): cannot record $1" >&2
	kill "$rb_busy" 2> /dev/null
	wait "$rb_busy" 2> /dev/null
}
