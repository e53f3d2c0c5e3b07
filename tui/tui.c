/* The curses front-end's lifecycle: start, draw a snapshot, read keys, stop.
 * Drawing is delegated to the widgets and bars; keys to keys.c. */
#include "tui.h"

#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <term.h>
#include <unistd.h>

#include "alerts_view.h"
#include "bars.h"
#include "draw.h"
#include "err.h"
#include "flame_view.h"
#include "keys.h"
#include "snapshot.h"
#include "theme.h"
#include "views.h"

static struct {
	volatile sig_atomic_t active;
	SCREEN *screen;
	struct xpu_ui ui;
	char msg[512];
	int msg_level;
	/* For the crash path: what endwin() would undo, without calling curses. */
	struct termios saved_tio;
	int have_tio;
	char restore[256];
	size_t restore_len;
} tui;

static void status_sink(void *ctx, int level, const char *msg)
{
	snprintf(tui.msg, sizeof(tui.msg), "%s%s", level == XPU_LOG_WARN ? "warning: " : "", msg);
	tui.msg_level = level;
}

void xpu_tui_status(const char *msg)
{
	snprintf(tui.msg, sizeof(tui.msg), "%s", msg ? msg : "");
	tui.msg_level = XPU_LOG_INFO;
}

static int no_color_env(void)
{
	const char *v = getenv("NO_COLOR");
	return v && *v;
}

/* Finds and reads the theme before the terminal is touched, so a bad -t
 * is reported on a normal terminal.  *text stays NULL for the built-in. */
static int read_theme(const char *name, char **text, char *path, size_t size)
{
	*text = NULL;
	if (xpu_theme_find(name ? name : "dark", path, size) < 0) {
		if (!name)
			return 0;	/* not installed: the built-in default is the same */
		xpu_err("theme '%s' not found: give a path, or NAME for NAME.theme in "
			"~/.config/xputop/themes or the installed themes (dark, light, mono)",
			name);
		return -1;
	}
	int err = xpu_theme_read(path, text);
	if (err) {
		xpu_err("cannot read theme %s: %s", path, strerror(-err));
		return -1;
	}
	return 0;
}

static void save_restore_sequences(void)
{
	static const char *const caps[] = { "sgr0", "cnorm", "rmkx", "rmcup" };
	tui.restore_len = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		const char *s = tigetstr((char *)caps[i]);
		if (!s || s == (char *)-1)
			continue;
		size_t n = strlen(s);
		if (tui.restore_len + n >= sizeof(tui.restore))
			break;
		memcpy(tui.restore + tui.restore_len, s, n);
		tui.restore_len += n;
	}
}

static int start_curses(void)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		xpu_err("the interactive display needs a terminal on standard input and output");
		return -1;
	}
	tui.have_tio = tcgetattr(STDIN_FILENO, &tui.saved_tio) == 0;
	tui.screen = newterm(NULL, stdout, stdin);
	if (!tui.screen) {
		const char *term = getenv("TERM");
		xpu_err("cannot start the display on terminal type '%s': set TERM to one "
			"terminfo knows (e.g. xterm-256color)", term ? term : "");
		return -1;
	}
	set_term(tui.screen);
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	save_restore_sequences();
	return 0;
}

int xpu_tui_init(const struct xpu_tui_opts *opts)
{
	char path[4096], *text;
	int mono;

	if (tui.active)
		return 0;
	setlocale(LC_ALL, "");
	/* Exports written while the TUI runs must not get decimal commas. */
	setlocale(LC_NUMERIC, "C");
	xpu_draw_set_utf8(!strcmp(nl_langinfo(CODESET), "UTF-8"));
	if (read_theme(opts ? opts->theme : NULL, &text, path, sizeof(path)) < 0)
		return -1;
	if (start_curses() < 0) {
		free(text);
		return -1;
	}
	mono = (opts && opts->no_color) || no_color_env() || !has_colors();
	if (!mono && (start_color() != OK || use_default_colors() != OK))
		mono = 1;
	memset(&tui.ui, 0, sizeof(tui.ui));
	tui.msg[0] = '\0';
	tui.active = 1;
	xpu_log_set_sink(status_sink, NULL);

	struct xpu_theme theme = mono ? xpu_theme_mono : xpu_theme_default;
	if (text && !mono)
		xpu_theme_parse(&theme, text, path);
	free(text);
	xpu_draw_apply_theme(&theme, mono);
	return 0;
}

void xpu_tui_fini(void)
{
	if (!tui.active)
		return;
	xpu_log_set_sink(NULL, NULL);
	endwin();
	delscreen(tui.screen);
	tui.screen = NULL;
	tui.active = 0;
	xpu_flame_view_free();
}

/* Async-signal-safe: writes the terminal's own reset sequences and puts the
 * saved tty modes back, as endwin() would, without entering curses. */
void xpu_tui_emergency_restore(void)
{
	if (!tui.active)
		return;
	tui.active = 0;
	/* Nothing can be done about a failed write on this path. */
	if (write(STDOUT_FILENO, tui.restore, tui.restore_len) < 0 ||
	    write(STDOUT_FILENO, "\r\n", 2) < 0)
		tui.restore_len = 0;
	if (tui.have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &tui.saved_tio);
}

/* Picks up a size change even when SIGWINCH went to the main loop's
 * signalfd instead of curses' handler. */
static void follow_terminal_size(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col &&
	    (ws.ws_row != LINES || ws.ws_col != COLS)) {
		resize_term(ws.ws_row, ws.ws_col);
		tui.ui.relayout = 1;
	}
}

void xpu_tui_draw(const struct xpu_snapshot *s, const struct xpu_viewstate *vs)
{
	struct xpu_layout_opts o;
	struct xpu_layout l;
	int cursor = -1;

	if (!tui.active)
		return;
	follow_terminal_size();
	if (tui.ui.relayout) {
		clearok(curscr, TRUE);
		tui.ui.relayout = 0;
	}
	erase();
	xpu_view_layout_opts(s, vs, &tui.ui, &o);
	xpu_layout_compute(&l, LINES, COLS, &o);
	if (l.too_small) {
		tui.ui.page = 0;
		xpu_too_small_draw(&l.small);
	} else {
		xpu_header_draw(&l.header, s, vs);
		xpu_tabs_draw(&l.tabs, s, vs);
		if (l.alerts.h)
			xpu_alert_bar_draw(&l.alerts, s);
		if (l.help.h)
			xpu_help_draw(&l.help);
		else
			xpu_view_draw(&l, s, vs, &tui.ui);
		if (l.hints.h)
			xpu_hints_draw(&l.hints);
		cursor = xpu_status_draw(&l.status, &tui.ui, vs, tui.msg, tui.msg_level);
	}
	attrset(A_NORMAL);
	if (cursor >= 0 && cursor < COLS) {
		move(l.status.y, cursor);
		curs_set(1);
		leaveok(stdscr, FALSE);
	} else {
		curs_set(0);
		leaveok(stdscr, TRUE);
	}
	refresh();
}

int xpu_tui_input(const struct xpu_snapshot *s, struct xpu_viewstate *vs)
{
	int react = XPU_REACT_NONE, key;

	if (!tui.active)
		return react;
	while (!(react & XPU_REACT_QUIT) && (key = getch()) != ERR)
		react |= xpu_keys_handle(&tui.ui, s, vs, key);
	return react;
}
