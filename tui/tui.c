/* SPDX-License-Identifier: GPL-2.0-only */
/* The curses front-end's lifecycle: start, draw a snapshot, read keys, stop.
 * Drawing is delegated to the widgets and bars; keys to keys.c. */
#include "tui.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <term.h>
#include <unistd.h>

#include "bars.h"
#include "draw.h"
#include "err.h"
#include "flame_view.h"
#include "keys.h"
#include "mouse.h"
#include "snapshot.h"
#include "theme.h"
#include "view_alerts.h"
#include "views.h"

static struct {
	volatile sig_atomic_t active;
	SCREEN *screen;
	struct xpu_ui ui;
	char msg[512];
	int msg_level;
	struct timespec msg_at;		/* when msg was set: it goes after STATUS_KEEP_S */
	/* For the crash path: what endwin() would undo, without calling curses. */
	struct termios saved_tio;
	int have_tio;
	char restore[256];
	size_t restore_len;
	struct xpu_layout layout;	/* the last draw's: what clicks are resolved against */
	char theme[256];		/* the theme in use, as named */
	int mono;			/* no colours: attributes only */
	int mouse;			/* the terminal reports the mouse to us */
} tui;

/* A message stays this long on the status line, then the line clears. */
#define STATUS_KEEP_S 6

static void status_sink(void *ctx, int level, const char *msg)
{
	snprintf(tui.msg, sizeof(tui.msg), "%s%s", level == XPU_LOG_WARN ? "warning: " : "", msg);
	tui.msg_level = level;
	clock_gettime(CLOCK_MONOTONIC, &tui.msg_at);
}

void xpu_tui_status(const char *msg)
{
	snprintf(tui.msg, sizeof(tui.msg), "%s", msg ? msg : "");
	tui.msg_level = XPU_LOG_INFO;
	clock_gettime(CLOCK_MONOTONIC, &tui.msg_at);
}

static void expire_status(void)
{
	struct timespec now;
	if (tui.msg[0] && clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec - tui.msg_at.tv_sec >= STATUS_KEEP_S)
		tui.msg[0] = '\0';
}

const char *xpu_tui_theme(void)
{
	return tui.theme[0] ? tui.theme : "dark";
}

static int no_color_env(void)
{
	const char *v = getenv("NO_COLOR");
	return v && *v;
}

/* Finds and reads a theme.  At start this runs before the terminal is
 * touched, so that a bad -t is reported on a normal terminal.  *text stays
 * NULL for the built-in default.  Returns 0, -1 (reported), or 1 when an
 * `optional` theme (one the settings file names) is missing: the default
 * then stands in for it. */
static int read_theme(const char *name, int optional, char **text, char *path, size_t size)
{
	*text = NULL;
	if (xpu_theme_find(name ? name : "dark", path, size) < 0) {
		snprintf(tui.theme, sizeof(tui.theme), "dark");
		if (!name)
			return 0;	/* not installed: the built-in default is the same */
		if (optional)
			return 1;
		xpu_err("theme '%s' not found: give a path, or NAME for NAME.theme in "
			"~/.config/xputop/themes or the installed themes (dark, light, "
			"high-contrast, mono)", name);
		return -1;
	}
	int err = xpu_theme_read(path, text);
	if (err) {
		xpu_err("cannot read theme %s: %s", path,
			err == -EFBIG ? "larger than 64 KiB" : err == -EINVAL ? "not a text file"
							      : strerror(-err));
		return -1;
	}
	snprintf(tui.theme, sizeof(tui.theme), "%s", name ? name : "dark");
	return 0;
}

/* A theme file over the built-in default (roles it leaves out keep theirs).
 * Returns the number of lines skipped, each reported. */
static int parse_theme(struct xpu_theme *t, const char *text, const char *path)
{
	*t = xpu_theme_default;
	return text ? xpu_theme_parse(t, text, path) : 0;
}

static void ignore_log(void *ctx, int level, const char *msg)
{
}

/* A file of which no line sets a role (-t /etc/passwd) is not a theme: it is
 * refused before a warning per line is printed. */
static int is_theme(const char *text, const char *path)
{
	struct xpu_theme t = xpu_theme_default;
	unsigned good;
	if (!text)
		return 1;
	xpu_log_set_sink(ignore_log, NULL);
	int bad = xpu_theme_parse_counted(&t, text, path, &good);
	xpu_log_set_sink(NULL, NULL);
	if (good || !bad)
		return 1;
	xpu_err("%s is not a theme file: none of its lines is 'role = colour' (see themes/dark.theme)", path);
	return 0;
}

int xpu_tui_theme_check(const char *name, int optional)
{
	char path[4096], *text;
	int missing = read_theme(name, optional, &text, path, sizeof(path));
	int ok = missing >= 0 && is_theme(text, path);
	free(text);
	return ok ? 0 : -1;
}

static void apply_theme(const struct xpu_theme *t)
{
	xpu_draw_apply_theme(tui.mono ? &xpu_theme_mono : t, tui.mono);
	tui.ui.relayout = 1;
}

/* T: the next theme of those installed or in the user's theme directory. */
static void next_theme(void)
{
	char names[64][XPU_THEME_NAME_MAX], path[4096], *text, msg[256];
	int n = xpu_theme_list(names, 64), cur = -1;

	if (!n) {
		xpu_warn("no theme files found (themes/ of the installation or ~/.config/xputop/themes)");
		return;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], xpu_tui_theme()))
			cur = i;
	if (read_theme(names[(cur + 1) % n], 0, &text, path, sizeof(path)) < 0)
		return;
	struct xpu_theme t;
	int bad = parse_theme(&t, text, path);
	free(text);
	apply_theme(&t);
	if (bad)
		return;	/* the status line keeps the last problem */
	snprintf(msg, sizeof(msg), tui.mono ? "theme %s (not shown: NO_COLOR is set or the terminal "
					      "has no colours)" : "theme %s (S saves it)", tui.theme);
	xpu_tui_status(msg);
}

static void add_restore(const char *s)
{
	size_t n = s && s != (char *)-1 ? strlen(s) : 0;
	if (n && tui.restore_len + n < sizeof(tui.restore)) {
		memcpy(tui.restore + tui.restore_len, s, n);
		tui.restore_len += n;
	}
}

static void save_restore_sequences(void)
{
	static const char *const caps[] = { "sgr0", "cnorm", "rmkx", "rmcup" };
	tui.restore_len = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		add_restore(tigetstr((char *)caps[i]));
	if (tui.mouse) {
		/* What mousemask() sent to turn reporting on, turned off: XM, or xterm's 1000. */
		const char *xm = tigetstr("XM");
		add_restore(xm && xm != (char *)-1 ? tiparm(xm, 0) : "\033[?1000l");
	}
}

/* COLORTERM=truecolor (or 24bit) says that the terminal takes RGB colours
 * even where its terminfo entry says 256.  The entry's direct-colour sibling
 * (xterm-256color: xterm-direct), when there is one, lets curses send them;
 * otherwise colours stay the nearest of the 256. */
static SCREEN *open_screen(void)
{
	const char *ct = getenv("COLORTERM"), *term = getenv("TERM");
	char direct[64];

	if (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")) && term &&
	    !strstr(term, "direct")) {
		size_t n = strcspn(term, "-");
		if (n && n < 32) {
			snprintf(direct, sizeof(direct), "%.*s-direct", (int)n, term);
			SCREEN *sc = newterm(direct, stdout, stdin);
			if (sc)
				return sc;
		}
	}
	return newterm(NULL, stdout, stdin);
}

/* Clicks and the wheel; the terminal's own selection stays on Shift+drag. */
static void start_mouse(void)
{
	tui.mouse = mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
	mouseinterval(0);	/* a press is reported at once, not after a wait for its release */
}

static int start_curses(int mouse)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		xpu_err("the interactive display needs a terminal on standard input and output");
		return -1;
	}
	tui.have_tio = tcgetattr(STDIN_FILENO, &tui.saved_tio) == 0;
	tui.screen = open_screen();
	if (!tui.screen) {
		const char *term = getenv("TERM");
		xpu_err("cannot start the display on terminal type '%s': set TERM to one "
			"terminfo knows (e.g. xterm-256color)", term ? term : "");
		return -1;
	}
	set_term(tui.screen);
	/* TERM=dumb and the like open, but cannot place the cursor: the screen
	 * would stay blank. */
	const char *cup = tigetstr("cup");
	if (!cup || cup == (char *)-1) {
		const char *term = getenv("TERM");
		endwin();
		delscreen(tui.screen);
		tui.screen = NULL;
		xpu_err("terminal type '%s' cannot place the cursor, so it cannot show xputop's screen: "
			"use -b for text, or set TERM to a full terminal (e.g. xterm-256color)", term ? term : "");
		return -1;
	}
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	tui.mouse = 0;
	if (mouse)
		start_mouse();
	save_restore_sequences();
	return 0;
}

int xpu_tui_init(const struct xpu_tui_opts *opts)
{
	char path[4096], *text;

	if (tui.active)
		return 0;
	setlocale(LC_ALL, "");
	/* Exports written while the TUI runs must not get decimal commas. */
	setlocale(LC_NUMERIC, "C");
	xpu_draw_set_utf8(!strcmp(nl_langinfo(CODESET), "UTF-8"));
	int missing = read_theme(opts ? opts->theme : NULL, opts && opts->theme_optional, &text,
				 path, sizeof(path));
	if (missing < 0 || !is_theme(text, path)) {
		free(text);
		return -1;
	}
	/* Parsed here, so that its problems stay on the terminal after xputop. */
	struct xpu_theme theme;
	int bad = parse_theme(&theme, text, path);
	free(text);
	if (start_curses(!(opts && opts->no_mouse)) < 0)
		return -1;
	tui.mono = (opts && opts->no_color) || no_color_env() || !has_colors();
	if (!tui.mono && (start_color() != OK || use_default_colors() != OK))
		tui.mono = 1;
	memset(&tui.ui, 0, sizeof(tui.ui));
	memset(&tui.layout, 0, sizeof(tui.layout));
	tui.msg[0] = '\0';
	tui.active = 1;
	xpu_log_set_sink(status_sink, NULL);
	apply_theme(&theme);
	if (bad)
		xpu_warn("%s: %d line%s skipped (on the terminal after q)", path, bad, bad > 1 ? "s" : "");
	if (missing)
		xpu_warn("theme '%s' of the settings file not found: the default is used", opts->theme);
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
	xpu_tui_flame_free();
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

/* A menu (signals, users) opens over the table and what lies under it down
 * to the key hints: at 80x24 the table alone has too few rows for the
 * signals htop users look for. */
static struct xpu_rect menu_rect(const struct xpu_layout *l)
{
	struct xpu_rect r = l->table.h ? l->table : l->text;
	int end = l->hints.h ? l->hints.y : l->status.y;
	if (end > r.y + r.h)
		r.h = end - r.y;
	return r;
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
	xpu_view_layout_opts(s, vs, &tui.ui, COLS, &o);
	o.meters = vs->meters ? xpu_meters_rows(s, COLS) : 0;
	xpu_layout_compute(&l, LINES, COLS, &o);
	tui.layout = l;
	if (l.too_small) {
		tui.ui.page = 0;
		xpu_too_small_draw(&l.small);
	} else {
		xpu_header_draw(&l.header, s, vs);
		if (l.meters.h)
			xpu_meters_draw(&l.meters, s);
		xpu_tabs_draw(&l.tabs, s, vs);
		if (l.alerts.h)
			xpu_tui_alert_bar_draw(&l.alerts, s);
		if (l.help.h)
			xpu_help_draw(&l.help, &tui.ui.help_top);
		else
			xpu_view_draw(&l, s, vs, &tui.ui);
		struct xpu_rect menu = menu_rect(&l);
		if (tui.ui.act.ask == XPU_ASK_SIGNAL)
			xpu_signal_menu_draw(&menu, &tui.ui.act);
		if (tui.ui.users.open) {
			const char *items[XPU_USERS_MENU];
			for (int i = 0; i < tui.ui.users.n; i++)
				items[i] = tui.ui.users.names[i];
			xpu_menu_draw(&menu, "Show processes of:", items,
				      tui.ui.users.n, tui.ui.users.row);
		}
		if (l.hints.h)
			xpu_hints_draw(&l.hints);
		expire_status();
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

static int mouse_event(const struct xpu_snapshot *s, struct xpu_viewstate *vs)
{
	MEVENT ev;
	enum xpu_mouse_button b;

	if (getmouse(&ev) != OK)
		return XPU_REACT_NONE;
	if (ev.bstate & BUTTON4_PRESSED)
		b = XPU_MOUSE_WHEEL_UP;
	else if (ev.bstate & BUTTON5_PRESSED)
		b = XPU_MOUSE_WHEEL_DOWN;
	else if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		b = XPU_MOUSE_CLICK;
	else
		return XPU_REACT_NONE;
	return xpu_mouse_handle(&tui.ui, &tui.layout, s, vs, ev.y, ev.x, b);
}

int xpu_tui_input(const struct xpu_snapshot *s, struct xpu_viewstate *vs)
{
	int react = XPU_REACT_NONE, key;

	if (!tui.active)
		return react;
	while (!(react & XPU_REACT_QUIT) && (key = getch()) != ERR) {
		react |= key == KEY_MOUSE ? mouse_event(s, vs) : xpu_keys_handle(&tui.ui, s, vs, key);
		if (tui.ui.next_theme) {
			tui.ui.next_theme = 0;
			next_theme();
		}
	}
	return react;
}
