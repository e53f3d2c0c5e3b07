# SPDX-License-Identifier: GPL-2.0-only
# Themes and colour depth through a real terminal (tmux): the colours a
# terminal type can show are the ones xputop sends, as tmux records them
# (capture-pane -e).  The flamegraph's user frames are #ffaf00 in the dark
# theme: 256-colour index 214, yellow (43) among 8, RGB on direct colour.
# Needs root (the recording).
. tests/lib.sh
need_root
. tests/tmux.sh
ESC=$(printf '\033')

record_busy "$T_TMP/rec.xpr"

# start [ENV=...] [-- ARGS]: the replay in a fresh terminal, no settings file.
start() {
	envs=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	[ "$1" = "--" ] && shift
	new_terminal 100 30 "env LANG=C.UTF-8 XDG_CONFIG_HOME=$T_TMP/cfg $envs $XPUTOP -r $T_TMP/rec.xpr $*; echo EXITED rc=\$?; sleep 600"
	wait_for "busy_leaf_spin"
	tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
}

# has SGR: the screen uses this SGR parameter list (e.g. "48;5;214").
has() { grep -qE "$ESC\[([0-9;]*;)?$1(;[0-9;]*)?m" "$T_TMP/ansi"; }
expect_sgr() { has "$1" || fail "no ESC[${1}m on the screen (${2:-})"; }
expect_no_sgr() { has "$1" && fail "ESC[${1}m on the screen (${2:-})"; }

t eight_colours_get_the_nearest_of_eight_and_bold_for_bright
start TERM=screen
expect_sgr 43 "user frames in yellow"
expect_no_sgr "(38|48);5;[0-9]+" "256 colours on an 8-colour terminal"
expect_no_sgr "(38|48);2;[0-9;]+" "RGB on an 8-colour terminal"
expect_no_sgr "(9[0-7]|10[0-7])" "bright colours on an 8-colour terminal"
# the header's "xputop" is bright-white on blue, so white in bold
grep " xputop" "$T_TMP/ansi" | grep -q "${ESC}\[1m" || fail "the brand is not bold"
keys q

t two_hundred_fifty_six_colours_get_the_colour_cube
start TERM=screen-256color
expect_sgr "48;5;214" "user frames"
expect_no_sgr "(38|48);2;[0-9;]+" "RGB on a 256-colour terminal"
keys q

t a_direct_colour_terminal_gets_rgb
start TERM=xterm-direct
expect_sgr "48;2;255;175;0" "user frames"
expect_no_sgr "48;5;214" "a 256-colour approximation"
keys q

t colorterm_truecolor_gets_rgb_through_the_direct_entry
start TERM=xterm-256color COLORTERM=truecolor
expect_sgr "48;2;255;175;0" "user frames"
keys q
start TERM=tmux-256color COLORTERM=24bit
expect_sgr "48;2;255;175;0" "user frames"
keys q

t colorterm_without_a_direct_entry_stays_at_256_colours
start TERM=screen-256color COLORTERM=truecolor
expect_sgr "48;5;214" "user frames"
keys q

t tmux_with_minus_2_and_its_own_default_terminal
tm_end "$SOCK"
NTERM=$((NTERM + 1))
SOCK="xputop-test-$$-$NTERM"
printf 'set -g default-terminal tmux-256color\nset -g escape-time 0\n' > "$T_TMP/tmux2.conf"
tmux -2 -u -L "$SOCK" -f "$T_TMP/tmux2.conf" new-session -d -x 100 -y 30 \
	"env LANG=C.UTF-8 XDG_CONFIG_HOME=$T_TMP/cfg $XPUTOP -r $T_TMP/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "busy_leaf_spin"
tr '\0' '\n' < "/proc/$(tm display-message -p -t 0 '#{pane_pid}')/environ" | grep -qx TERM=tmux-256color ||
	fail "the pane's TERM is not tmux's default-terminal"
tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
expect_sgr "48;5;214" "user frames"
keys q

t high_contrast_draws_everything_on_black
start -- -t high-contrast
expect_sgr 40 "the black background"
expect_sgr 107 "bright-white headings"
# erase() fills with the theme's background: rows no widget draws on (the
# flame's empty top levels) are filled too, where the dark theme leaves
# them to the terminal (tmux then keeps no cells there)
tm capture-pane -N -p -t 0 | tail -n 4 | head -n 1 > "$T_TMP/row"
[ "$(wc -L < "$T_TMP/row")" -eq 100 ] || fail "an empty row is not filled"
keys q

t t_steps_through_the_themes
start
keys T
wait_for "theme light (S saves it)"
keys T
wait_for "theme high-contrast (S saves it)"
tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
expect_sgr 107 "high-contrast headings after T"
keys T
wait_for "theme mono (S saves it)"
tm capture-pane -e -p -t 0 > "$T_TMP/ansi"
expect_no_sgr "(3[0-7]|4[0-7]|(38|48);5;[0-9]+)" "colours in the mono theme"
keys T
wait_for "theme dark (S saves it)"
keys q

t a_theme_in_the_users_config_dir_is_found_by_name_and_listed
mkdir -p "$T_TMP/cfg/xputop/themes"
printf 'flame_user = black on #ff0000\n' > "$T_TMP/cfg/xputop/themes/alarm.theme"
start -- -t alarm
expect_sgr "48;5;196" "the user theme's red frames"
keys T T T T T
wait_for "theme alarm (S saves it)"
keys q

t a_theme_file_with_mistakes_warns_per_line_and_keeps_the_rest
printf 'flame_user = black on #ff0000\nflame_kernel = purple\nno_such_role = red\n' > "$T_TMP/cfg/xputop/themes/oops.theme"
start -- -t oops
expect_sgr "48;5;196" "the good line"
keys q
wait_for "EXITED rc=0"
tm capture-pane -J -p -t 0 > "$T_TMP/after"	# long lines joined
expect_grep "oops.theme:2: unknown colour or attribute 'purple', line skipped" "$T_TMP/after" "the terminal after q"
expect_grep "oops.theme:3: unknown role 'no_such_role', line skipped" "$T_TMP/after" "the terminal after q"

tm_end "$SOCK"
finish
