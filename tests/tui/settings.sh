# SPDX-License-Identifier: GPL-2.0-only
# The settings file through a real terminal (tmux): S saves what is on the
# screen, a restart brings it back, options win over the file, a bad file is
# warned about line by line, and a save that cannot happen says why and
# leaves nothing behind.  Needs root (a recording, sudo's identity, a mount).
. tests/lib.sh
need_root
. tests/tmux.sh

record_busy "$T_TMP/rec.xpr"
# Somewhere the unprivileged user of these tests can reach.
PUB=$T_PUB
public "$T_TMP/rec.xpr" > /dev/null
CFG=$T_TMP/cfg
CONF=$CFG/xputop/xputop.conf

# start [ENV=...] [-- ARGS]: a replay in a fresh terminal, settings under CFG.
start() {
	envs=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	[ "$1" = "--" ] && shift
	new_terminal 140 30 "env LANG=C.UTF-8 XDG_CONFIG_HOME=$CFG $envs $XPUTOP -r $PUB/rec.xpr $*; echo EXITED rc=\$?; sleep 600"
}

# quit: q, and the terminal shows how xputop ended.
quit() {
	keys q
	wait_for "EXITED rc="
}

ansi() { tm capture-pane -e -p -t 0 > "$T_TMP/ansi"; }

t s_saves_the_view_the_sort_and_the_theme_and_a_restart_restores_them
start
wait_for "REPLAY ENDED"
wait_for "%CPU"
keys '>'	# %CPU's neighbour: %MEM (htop's order)
wait_for "▼%MEM"
keys T
wait_for "theme light (S saves it)"
keys n
wait_for "Alert log"
keys S
wait_for "settings saved to $CONF"
expect_grep "^view = npu$" "$CONF"
expect_grep "^theme = light$" "$CONF"
expect_grep "^sort-cpu = mem_pct$" "$CONF"
expect_grep "^version = 1$" "$CONF"
quit
start
wait_for "Alert log"
ansi
# light's table headings: bright-white on #005f87 (256-colour 24); dark has no such colour
grep -q "48;5;24m" "$T_TMP/ansi" || fail "the restarted screen is not in the light theme"
keys c
wait_for "▼%MEM"
quit

t s_saves_the_tree_the_command_lines_the_cpu_meters_and_the_hottest_functions
start -- --view cpu
wait_for "REPLAY ENDED"
wait_for "%CPU"
keys t
wait_for "process tree"
keys p
wait_for "(command lines)"
keys 1
wait_for "  0["
keys o
wait_for "Hottest"
keys S
wait_for "settings saved to $CONF"
expect_grep "^tree = yes$" "$CONF"
expect_grep "^command-line = yes$" "$CONF"
expect_grep "^cpu-meters = yes$" "$CONF"
expect_grep "^hot-functions = yes$" "$CONF"
quit
start -- --view cpu
wait_for "REPLAY ENDED"
wait_for "process tree"
wait_for "(command lines)"
wait_for "  0["
wait_for "Hottest"
keys t p 1 o
wait_gone "process tree"
wait_gone "Hottest"
keys S
wait_for "settings saved to $CONF"
expect_grep "^tree = no$" "$CONF"
expect_grep "^cpu-meters = no$" "$CONF"
expect_grep "^hot-functions = no$" "$CONF"
quit

t saving_leaves_one_file_and_no_temporary_one
[ "$(ls -A "$CFG/xputop")" = "xputop.conf" ] || fail "the settings directory holds: $(ls -A "$CFG/xputop" | tr '\n' ' ')"

t a_bad_line_is_one_warning_with_file_and_line_and_xputop_still_starts
printf 'version = 1\nview = gpu\ncolour = blue\ndelay = fast\n' > "$CONF"
start -- -d 1	# a slow replay: its end replaces the status line
wait_for "GPU source:"
wait_for "xputop.conf:3: unknown key 'colour', line ignored (2 settings file problems"
quit
expect_grep "xputop: warning: $CONF:3: unknown key 'colour', line ignored" "$T_TMP/screen" "the terminal after q"
expect_grep "xputop: warning: $CONF:4: bad value 'fast' for delay (expected 0.05 to 3600), line ignored" "$T_TMP/screen" "the terminal after q"

t options_on_the_command_line_win_over_the_file
printf 'version = 1\nview = gpu\ntheme = light\n' > "$CONF"
start -- --view cpu -t dark
wait_for "%CPU"
ansi
grep -q "48;5;24m" "$T_TMP/ansi" && fail "the file's theme won over -t"
quit

t a_theme_the_file_names_that_is_missing_is_a_warning_not_an_error
printf 'version = 1\ntheme = no-such-theme\n' > "$CONF"
start
wait_for "theme 'no-such-theme' of the settings file not found: the default is used"
quit
expect_grep "EXITED rc=0" "$T_TMP/screen"

t a_named_settings_file_that_is_missing_is_an_error
"$XPUTOP" --config "$T_TMP/nope.conf" -r "$PUB/rec.xpr" -b > /dev/null 2> "$T_TMP/err"; rc=$?
[ $rc -eq 1 ] || fail "exit status $rc, expected 1"
expect_grep "cannot read the settings file $T_TMP/nope.conf: No such file or directory" "$T_TMP/err"

t config_names_the_file_that_is_read_and_saved
printf 'version = 1\nview = npu\n' > "$T_TMP/other.conf"
start -- --config "$T_TMP/other.conf"
wait_for "Alert log"
keys c S
wait_for "settings saved to $T_TMP/other.conf"
expect_grep "^view = cpu$" "$T_TMP/other.conf"
quit

t no_config_ignores_the_file_and_saves_nothing
printf 'version = 1\nview = gpu\n' > "$CONF"
cp "$CONF" "$T_TMP/before"
start -- --no-config
wait_for "%CPU"
keys S
wait_for "settings are not saved with --no-config"
cmp -s "$CONF" "$T_TMP/before" || fail "the file changed"
quit

t a_read_only_directory_gives_a_clear_message_and_no_file
mkdir -p "$PUB/ro/xputop"
chown -R 65534:65534 "$PUB/ro"
chmod 555 "$PUB/ro/xputop"
new_terminal 140 30 "setpriv --reuid=65534 --regid=65534 --clear-groups env LANG=C.UTF-8 XDG_CONFIG_HOME=$PUB/ro $(public "$XPUTOP") -r $PUB/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "%CPU"
keys S
wait_for "cannot save settings to $PUB/ro/xputop/xputop.conf: Permission denied"
[ -z "$(ls -A "$PUB/ro/xputop")" ] || fail "files were left: $(ls -A "$PUB/ro/xputop")"
quit

t a_full_disk_leaves_the_old_file_whole_and_no_temporary_file
FULL=$T_TMP/full
mkdir -p "$FULL"
if mount -t tmpfs -o size=64k tmpfs "$FULL"; then
	mkdir "$FULL/xputop"
	printf 'version = 1\nview = gpu\n' > "$FULL/xputop/xputop.conf"
	cp "$FULL/xputop/xputop.conf" "$T_TMP/before"
	dd if=/dev/zero of="$FULL/fill" bs=4k > /dev/null 2>&1
	new_terminal 140 30 "env LANG=C.UTF-8 XDG_CONFIG_HOME=$FULL $XPUTOP -r $PUB/rec.xpr; echo EXITED rc=\$?; sleep 600"
	wait_for "GPU source:"
	keys c S
	wait_for "cannot save settings to $FULL/xputop/xputop.conf: No space left on device"
	cmp -s "$FULL/xputop/xputop.conf" "$T_TMP/before" || fail "the old file was changed"
	[ "$(ls -A "$FULL/xputop")" = "xputop.conf" ] || fail "files were left: $(ls -A "$FULL/xputop" | tr '\n' ' ')"
	quit
	tm_end "$SOCK"
	umount "$FULL"
else
	fail "cannot mount a small tmpfs to fill"
fi

t under_sudo_the_file_and_its_directories_belong_to_the_invoking_user
SUDO_ENV="SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody"
mkdir -p "$PUB/home"
chown 65534:65534 "$PUB/home"
new_terminal 140 30 "env LANG=C.UTF-8 $SUDO_ENV XDG_CONFIG_HOME=$PUB/home/.config $XPUTOP -r $PUB/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "%CPU"
keys S
wait_for "settings saved to $PUB/home/.config/xputop/xputop.conf"
for f in "$PUB/home/.config" "$PUB/home/.config/xputop" "$PUB/home/.config/xputop/xputop.conf"; do
	[ "$(stat -c %u:%g "$f")" = "65534:65534" ] || fail "$f belongs to $(stat -c %U:%G "$f")"
done
quit

t under_sudo_root_writes_only_where_the_user_may
mkdir -p "$PUB/rootonly/xputop"
new_terminal 140 30 "env LANG=C.UTF-8 $SUDO_ENV XDG_CONFIG_HOME=$PUB/rootonly $XPUTOP -r $PUB/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "%CPU"
keys S
wait_for "cannot save settings to $PUB/rootonly/xputop/xputop.conf: Permission denied"
[ -z "$(ls -A "$PUB/rootonly/xputop")" ] || fail "root wrote into a directory the user cannot write"
quit

t under_sudo_a_link_to_a_file_only_root_may_read_is_not_read
printf 'version = 1\nsecret-line = 42\n' > "$PUB/secret"
chmod 600 "$PUB/secret"
mkdir -p "$PUB/home/.config/xputop"
ln -sf "$PUB/secret" "$PUB/home/.config/xputop/xputop.conf"
new_terminal 140 30 "env LANG=C.UTF-8 $SUDO_ENV XDG_CONFIG_HOME=$PUB/home/.config $XPUTOP -r $PUB/rec.xpr; echo EXITED rc=\$?; sleep 600"
wait_for "%CPU"
quit
expect_grep "cannot read it (Permission denied); started without it" "$T_TMP/screen" "the terminal after q"
grep -q "secret-line" "$T_TMP/screen" && fail "the root-only file's text was shown"

tm_end "$SOCK"
finish
