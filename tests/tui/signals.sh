# The terminal is given back however xputop ends (issue 6): SIGHUP from a
# shell, a closed terminal, and a crash signal; each from a real shell in
# tmux, which must be usable after (no alternate screen, echo and canonical
# input back on).  Needs root (live sampling) and tmux.
. tests/lib.sh
need_root

. tests/tmux.sh

# shell_with_xputop: a shell in a fresh terminal, running xputop; sets XP to
# xputop's pid once its screen is up.
shell_with_xputop() {
	new_terminal 100 30 "env LANG=C.UTF-8 PS1='shell> ' sh"
	wait_for "shell>"
	keys "$XPUTOP -d 0.3; echo EXITED rc=\$?" Enter
	wait_for "GPU · NPU · CPU"
	XP=$(pgrep -P "$(tm display-message -p -t 0 '#{pane_pid}')" -x xputop)
	[ -n "$XP" ] || fail "no xputop under the shell"
}

# the_shell_is_sane: the terminal left by xputop is the shell's again.
the_shell_is_sane() {
	[ "$(alternate_screen)" = 0 ] || fail "still on the alternate screen"
	keys "stty -a | tr ' ' '\n' | grep -x -e echo -e icanon | tr '\n' + ; echo" Enter
	wait_for "icanon+echo+"
	keys "echo still-alive" Enter
	wait_for "still-alive"
}

t sighup_gives_the_terminal_back
shell_with_xputop
[ -n "$XP" ] && kill -HUP "$XP"
wait_for "EXITED rc=129"
the_shell_is_sane

t a_crash_signal_gives_the_terminal_back_and_still_dies_of_it
shell_with_xputop
[ -n "$XP" ] && kill -SEGV "$XP"
wait_for "EXITED rc=139"
the_shell_is_sane

t sigabrt_too
shell_with_xputop
[ -n "$XP" ] && kill -ABRT "$XP"
wait_for "EXITED rc=134"
the_shell_is_sane

t closing_the_terminal_ends_xputop
new_terminal 100 30 "env LANG=C.UTF-8 $XPUTOP -d 0.3"
wait_for "GPU · NPU · CPU"
XP=$(pgrep -P "$(tm display-message -p -t 0 '#{pane_pid}')" -x xputop || tm display-message -p -t 0 '#{pane_pid}')
tm kill-server
# Detaching each uprobe waits for the kernel (about 0.1 s each, serialized),
# so ending takes a moment; it must not take forever.
i=0
while kill -0 "$XP" 2> /dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$XP" 2> /dev/null; then
	fail "xputop is still running 15 s after its terminal closed"
	kill -9 "$XP"
fi

tm kill-server 2> /dev/null
finish
