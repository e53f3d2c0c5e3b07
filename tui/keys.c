/* SPDX-License-Identifier: GPL-2.0-only */
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "table_view.h"
#include "tui.h"
#include "views.h"

#define CTRL(c) ((c) & 0x1f)
#define KEY_ESC 27

/* Most useful first: the hint line drops what does not fit from the end. */
const struct xpu_key_hint xpu_key_hints[] = {
	{ "q", "Quit" }, { "?", "Help" }, { "Tab", "View" }, { "/", "Filter" },
	{ "<>", "Sort" }, { "r", "Reverse" }, { "f", "Flame" }, { "H", "Threads" },
	{ "k", "Kill" }, { "1", "CPUs" }, { "w", "Window" }, { "Space", "Pause" },
	{ "s", "Export" }, { "z", "Unzoom" }, { "T", "Theme" }, { "S", "Save" },
};
const unsigned xpu_key_nhints = sizeof(xpu_key_hints) / sizeof(xpu_key_hints[0]);

int xpu_keys_set_view(struct xpu_viewstate *vs, int v)
{
	if (vs->view == (enum xpu_view)v)
		return XPU_REACT_NONE;
	vs->view = (enum xpu_view)v;
	return XPU_REACT_REBUILD;
}

int xpu_keys_select(const struct xpu_snapshot *s, struct xpu_viewstate *vs, int to, int rel)
{
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	if (!t || !t->nrows)
		return XPU_REACT_NONE;
	/* The cursor's place, as the last key or refresh left it (several keys
	 * may come before the next rebuild). */
	int lost;
	int cur = xpu_table_keep_row(t, 0, vs->sel_row[vs->view], 0, &lost);
	int row = rel ? cur + to : to;
	if (row < 0)
		row = 0;
	if (row >= (int)t->nrows)
		row = (int)t->nrows - 1;
	if (row == cur)
		return XPU_REACT_NONE;
	vs->selected[vs->view] = t->keys[row];
	vs->sel_row[vs->view] = row;
	return XPU_REACT_REBUILD;
}

/* Steps the sort column to the next shown column in direction dir. */
static int move_sort(const struct xpu_snapshot *s, struct xpu_viewstate *vs, int dir)
{
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	int v = vs->view;
	if (!t || !t->ncols)
		return XPU_REACT_NONE;
	int col = vs->sort_col[v] >= 0 ? vs->sort_col[v] : t->sort_col >= 0 ? t->sort_col : 0;
	for (uint32_t i = 0; i < t->ncols; i++) {
		col = (col + dir + (int)t->ncols) % (int)t->ncols;
		if (xpu_col_shown(&t->cols[col]))
			break;
	}
	vs->sort_col[v] = col;
	return XPU_REACT_REBUILD;
}

/* F6: htop's "sort by", a column at a time, saying which. */
static int sort_next(const struct xpu_snapshot *s, struct xpu_viewstate *vs)
{
	int r = move_sort(s, vs, 1);
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	if (r != XPU_REACT_NONE) {
		char msg[96];
		snprintf(msg, sizeof(msg), "sorted by %s (F6 or > the next column, < the previous)",
			 t->cols[vs->sort_col[vs->view]].title);
		xpu_tui_status(msg);
	}
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* u: htop's user menu, of the users the CPU table has rows of, A to Z. */
static int open_users(struct xpu_ui *ui, const struct xpu_snapshot *s, const struct xpu_viewstate *vs)
{
	const struct xpu_view_desc *d = xpu_views[vs->view];
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	if (!d->processes || !t)
		return XPU_REACT_NONE;
	ui->users.n = 1;
	ui->users.row = 0;
	snprintf(ui->users.names[0], sizeof(ui->users.names[0]), "All users");
	if (vs->user[0])	/* the one shown now, which the rows have alone */
		snprintf(ui->users.names[ui->users.n++], sizeof(ui->users.names[0]), "%s", vs->user);
	for (uint32_t r = 0; r < t->nrows && ui->users.n < XPU_USERS_MENU; r++) {
		const struct xpu_cell *c = &xpu_table_row(t, r)[d->user_col];
		int dup = c->na || !c->s;
		for (int i = 1; i < ui->users.n && !dup; i++)
			dup = !strcmp(ui->users.names[i], c->s);
		if (!dup)
			snprintf(ui->users.names[ui->users.n++], sizeof(ui->users.names[0]), "%s", c->s);
	}
	qsort(ui->users.names[1], (size_t)ui->users.n - 1, sizeof(ui->users.names[0]), by_name);
	ui->users.open = 1;
	return XPU_REACT_REDRAW;
}

static int users_key(struct xpu_ui *ui, struct xpu_viewstate *vs, int key)
{
	switch (key) {
	case KEY_UP:
		ui->users.row -= ui->users.row > 0;
		return XPU_REACT_REDRAW;
	case KEY_DOWN:
		ui->users.row += ui->users.row + 1 < ui->users.n;
		return XPU_REACT_REDRAW;
	case '\n': case '\r': case KEY_ENTER:
		ui->users.open = 0;
		snprintf(vs->user, sizeof(vs->user), "%s", ui->users.row ? ui->users.names[ui->users.row] : "");
		return XPU_REACT_REBUILD;
	}
	if (key > ' ' && key < 127) {	/* a letter: the next user it starts */
		for (int i = 1; i <= ui->users.n; i++) {
			int r = (ui->users.row + i) % ui->users.n;
			if (r && ui->users.names[r][0] == key) {
				ui->users.row = r;
				break;
			}
		}
		return XPU_REACT_REDRAW;
	}
	ui->users.open = 0;	/* Esc, or another key */
	return XPU_REACT_REDRAW;
}

static int start_filter(struct xpu_ui *ui, const struct xpu_snapshot *s,
			const struct xpu_viewstate *vs)
{
	if (!xpu_view_table(s, vs->view))
		return XPU_REACT_NONE;
	ui->editing = 1;
	memcpy(ui->saved, vs->filter[vs->view], sizeof(ui->saved));
	return XPU_REACT_REDRAW;
}

/* Handles a key while the filter prompt is open; -1 passes it on (moving
 * the selection and resizing still work while typing). */
static int edit_filter(struct xpu_ui *ui, struct xpu_viewstate *vs, int key)
{
	char *f = vs->filter[vs->view];
	size_t n = strlen(f);

	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		ui->editing = 0;
		return XPU_REACT_REDRAW;
	case KEY_ESC:
		ui->editing = 0;
		if (!strcmp(f, ui->saved))
			return XPU_REACT_REDRAW;
		memcpy(f, ui->saved, XPU_FILTER_MAX);
		f[XPU_FILTER_MAX - 1] = '\0';
		return XPU_REACT_REBUILD;
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		if (!n)
			return XPU_REACT_NONE;
		/* Remove a whole UTF-8 character: its continuation bytes too. */
		while (n > 1 && ((unsigned char)f[n - 1] & 0xc0) == 0x80)
			n--;
		f[n - 1] = '\0';
		return XPU_REACT_REBUILD;
	case CTRL('u'):
		if (!n)
			return XPU_REACT_NONE;
		f[0] = '\0';
		return XPU_REACT_REBUILD;
	case KEY_UP: case KEY_DOWN: case KEY_PPAGE: case KEY_NPAGE:
	case KEY_HOME: case KEY_END: case KEY_RESIZE: case CTRL('l'):
		return -1;
	}
	if (key < ' ' || key > 255 || key == 127)
		return XPU_REACT_NONE;
	if (n + 1 >= XPU_FILTER_MAX)
		return XPU_REACT_NONE;
	f[n] = (char)key;
	f[n + 1] = '\0';
	return XPU_REACT_REBUILD;
}

/* The replay's b (atop -r's): a time into the recording, in seconds or
 * [H:]M:SS, or +S / -S from where it is; the nearest refresh is shown. */
static int start_seek(struct xpu_ui *ui, const struct xpu_snapshot *s)
{
	if (!s->replay)
		return XPU_REACT_NONE;
	ui->seeking = 1;
	ui->seek_to[0] = '\0';
	return XPU_REACT_REDRAW;
}

/* Seconds of "S", "M:SS" or "H:MM:SS" (fractions allowed in the last
 * part); -1 if it is none of them. */
static double parse_time(const char *t)
{
	double v = 0;
	int parts = 0;
	while (*t) {
		char *end;
		double x = strtod(t, &end);
		if (end == t || x < 0 || ++parts > 3)
			return -1;
		v = v * 60 + x;
		if (*end == ':')
			end++;
		else if (*end)
			return -1;
		t = end;
	}
	return parts ? v : -1;
}

static int edit_seek(struct xpu_ui *ui, const struct xpu_snapshot *s, struct xpu_viewstate *vs, int key)
{
	size_t n = strlen(ui->seek_to);
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER: {
		ui->seeking = 0;
		const char *t = ui->seek_to;
		int rel = *t == '+' ? 1 : *t == '-' ? -1 : 0;
		double secs = parse_time(t + (rel != 0));
		if (secs < 0 || !s->interval_ns) {
			xpu_tui_status("not a time: seconds, M:SS or H:MM:SS into the recording, or +S/-S from here");
			return XPU_REACT_REDRAW;
		}
		double per = (double)s->interval_ns / 1e9;
		int64_t now = (int64_t)s->ticks;
		int64_t to = rel ? now + rel * (int64_t)(secs / per + 0.5) : (int64_t)(secs / per + 0.5);
		vs->seek = (int)(to - now);
		return XPU_REACT_SEEK;
	}
	case KEY_ESC:
		ui->seeking = 0;
		return XPU_REACT_REDRAW;
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		if (n)
			ui->seek_to[n - 1] = '\0';
		return XPU_REACT_REDRAW;
	}
	if (((key >= '0' && key <= '9') || key == ':' || key == '.' || ((key == '+' || key == '-') && !n)) &&
	    n + 1 < sizeof(ui->seek_to)) {
		ui->seek_to[n] = (char)key;
		ui->seek_to[n + 1] = '\0';
	}
	return XPU_REACT_REDRAW;
}

static int toggle(int *flag)
{
	*flag = !*flag;
	return XPU_REACT_REBUILD;
}

int xpu_keys_zoom(struct xpu_ui *ui, const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
		  uint32_t node)
{
	const struct xpu_flame *f = xpu_view_flame(s, vs->view);
	struct xpu_tui_flame_zoom *z = &ui->zoom[vs->view];
	if (!f || node >= f->n || node == xpu_tui_flame_zoom_node(f, z))
		return XPU_REACT_NONE;
	xpu_tui_flame_zoom_set(z, f, node);
	return XPU_REACT_REDRAW;
}

/* The frame's own weight: what its linked callees leave (lighter ones are
 * folded into it). */
static uint64_t self_weight(const struct xpu_flame *f, uint32_t node)
{
	uint64_t in = 0;
	for (uint32_t c = f->nodes[node].first_child; c; c = f->nodes[c].next)
		in += f->nodes[c].value;
	return f->nodes[node].value > in ? f->nodes[node].value - in : 0;
}

/* Zooms one level out (dir < 0), or in onto the heaviest callee of the
 * zoomed frame, drawn below it (dir > 0): the hot path, a level at a time.
 * Where the frame's own time outweighs every callee the hot path ends: going
 * on would zoom from 550 samples onto a callee of 5. */
static int zoom_step(struct xpu_ui *ui, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs, int dir)
{
	const struct xpu_flame *f = xpu_view_flame(s, vs->view);
	if (!f || !vs->flame || !f->n)
		return XPU_REACT_NONE;
	uint32_t root = xpu_tui_flame_zoom_node(f, &ui->zoom[vs->view]);
	if (dir < 0)
		return root ? xpu_keys_zoom(ui, s, vs, f->nodes[root].parent) : XPU_REACT_NONE;
	uint32_t child = f->nodes[root].first_child;	/* the heaviest */
	if (!child)
		return XPU_REACT_NONE;
	if (root && self_weight(f, root) > f->nodes[child].value) {
		xpu_tui_status("the hot path ends here: this frame's own time outweighs each of its callees "
			       "(click one to zoom onto it)");
		return XPU_REACT_REDRAW;
	}
	return xpu_keys_zoom(ui, s, vs, child);
}

/* A key of the view's own (H in the CPU view), none in the others. */
static int view_key(struct xpu_viewstate *vs, int key)
{
	const struct xpu_view_desc *d = xpu_views[vs->view];
	int r = d->on_key ? d->on_key(vs, key) : -1;
	return r >= 0 ? r : XPU_REACT_NONE;
}

/* Keys that scroll the help when it is longer than the screen; 0 for the
 * others, which close it. */
static int help_scroll(int key)
{
	switch (key) {
	case KEY_DOWN: case 'j': return 1;
	case KEY_UP: case 'k': return -1;
	case KEY_NPAGE: case ' ': return 10;
	case KEY_PPAGE: return -10;
	case KEY_HOME: return -(1 << 20);
	case KEY_END: return 1 << 20;
	}
	return 0;
}

int xpu_keys_handle(struct xpu_ui *ui, const struct xpu_snapshot *s, struct xpu_viewstate *vs,
		    int key)
{
	int page = ui->page > 1 ? ui->page - 1 : 1;

	if (key == KEY_RESIZE || key == CTRL('l')) {
		ui->relayout = 1;
		return XPU_REACT_REDRAW;
	}
	if (ui->help) {
		int step = help_scroll(key);
		if (step)
			ui->help_top += step;	/* clamped where it is drawn */
		else
			ui->help = 0;
		return XPU_REACT_REDRAW;
	}
	if (ui->act.ask)
		return xpu_act_key(&ui->act, key);
	if (ui->users.open)
		return users_key(ui, vs, key);
	if (ui->seeking)
		return edit_seek(ui, s, vs, key);
	if (ui->editing) {
		int r = edit_filter(ui, vs, key);
		if (r >= 0)
			return r;
	}
	int v = xpu_view_of_key(key);
	if (v >= 0)
		return xpu_keys_set_view(vs, v);
	if (xpu_views[vs->view]->pane_key) {
		int r = xpu_views[vs->view]->pane_key(ui, s, key);
		if (r >= 0)
			return r;
	}
	switch (key) {
	case '\t': return xpu_keys_set_view(vs, (vs->view + 1) % XPU_VIEW_MAX);
	case KEY_BTAB: return xpu_keys_set_view(vs, (vs->view + XPU_VIEW_MAX - 1) % XPU_VIEW_MAX);
	case KEY_UP: return xpu_keys_select(s, vs, -1, 1);
	case KEY_DOWN: case 'j': return xpu_keys_select(s, vs, 1, 1);
	case KEY_PPAGE: return xpu_keys_select(s, vs, -page, 1);
	case KEY_NPAGE: return xpu_keys_select(s, vs, page, 1);
	case KEY_HOME: return xpu_keys_select(s, vs, 0, 0);
	case KEY_END: return xpu_keys_select(s, vs, 1 << 30, 0);
	case '\n': case '\r': case KEY_ENTER: return zoom_step(ui, s, vs, 1);
	case 'z': case KEY_BACKSPACE: case 127: case CTRL('h'): return zoom_step(ui, s, vs, -1);
	case 'T':
		ui->next_theme = 1;
		return XPU_REACT_REDRAW;
	case 'S': return XPU_REACT_SAVE | XPU_REACT_REDRAW;
	case '<': return move_sort(s, vs, -1);
	case '>': return move_sort(s, vs, 1);
	case 'r': case 'I':
		return xpu_view_table(s, vs->view) ? toggle(&vs->reverse[vs->view])
						   : XPU_REACT_NONE;
	case '/': case '\\': case KEY_F(3): case KEY_F(4): return start_filter(ui, s, vs);
	case KEY_F(6): return sort_next(s, vs);
	case 'k': case KEY_F(9): return xpu_act_kill(&ui->act, s, vs);
	case 'u': return open_users(ui, s, vs);
	case KEY_RIGHT: case KEY_LEFT: case KEY_SRIGHT: case KEY_SLEFT: {
		/* atop -r's t and T: a replay steps a refresh, Shift ten */
		int step = key == KEY_RIGHT ? 1 : key == KEY_LEFT ? -1 : key == KEY_SRIGHT ? 10 : -10;
		if (!s->replay)
			return XPU_REACT_NONE;
		vs->seek += step;
		return XPU_REACT_SEEK;
	}
	case 'b': return start_seek(ui, s);
	case ']': case KEY_F(7): return xpu_act_renice(&ui->act, s, vs, -1);
	case '[': case KEY_F(8): return xpu_act_renice(&ui->act, s, vs, 1);
	case '1':
		vs->meters = !vs->meters;
		ui->relayout = 1;
		return XPU_REACT_REDRAW;
	case KEY_F(2):
		xpu_tui_status("no setup screen: S saves the view, sort, theme... in xputop.conf, "
			       "which holds every setting (man xputop, CONFIGURATION FILE)");
		return XPU_REACT_REDRAW;
	case 'f': return toggle(&vs->flame);
	case 'F': {
		/* htop's follow: the cursor stays on the selected row's key as
		 * the rows re-sort, until that row is gone. */
		const struct xpu_table *t = xpu_view_table(s, vs->view);
		return t && t->nrows ? toggle(&vs->follow[vs->view]) : XPU_REACT_NONE;
	}
	case 'w':
		vs->window = vs->window == XPU_WIN_ALL ? XPU_WIN_RECENT : XPU_WIN_ALL;
		return XPU_REACT_REBUILD;
	case ' ':
		/* Resuming catches up with what was collected meanwhile. */
		vs->paused = !vs->paused;
		return vs->paused ? XPU_REACT_REDRAW : XPU_REACT_REBUILD;
	case 's': return XPU_REACT_EXPORT;
	case '?': case 'h': case KEY_F(1):
		ui->help = 1;
		ui->help_top = 0;
		return XPU_REACT_REDRAW;
	case 'q': case KEY_F(10): return XPU_REACT_QUIT;
	}
	return view_key(vs, key);
}
