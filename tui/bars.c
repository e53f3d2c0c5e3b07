/* SPDX-License-Identifier: GPL-2.0-only */
#include "bars.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "err.h"
#include "views.h"

static void fmt_secs(char *buf, size_t size, uint64_t ns)
{
	if (ns % 1000000000ull == 0)
		snprintf(buf, size, "%" PRIu64 "s", (uint64_t)(ns / 1000000000ull));
	else
		snprintf(buf, size, "%.2gs", (double)ns / 1e9);
}

static void fmt_time(char *buf, size_t size, uint64_t wall_ns, int with_date)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;
	if (!wall_ns || !localtime_r(&t, &tm) ||
	    !strftime(buf, size, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm))
		snprintf(buf, size, "--:--:--");
}

/* Writes one header field if it fits before `limit`; returns the new x. */
static int field(int y, int x, int limit, const char *text, enum xpu_role role)
{
	int w = xpu_text_width(text);
	if (x + w > limit)
		return limit;
	xpu_put_text(y, x, w, text, xpu_draw_attr(role), 0);
	return x + w + 2;
}

/* Draws a marker ending at column `end`; returns where it starts. */
static int marker(int y, int end, const char *text, enum xpu_role role)
{
	char buf[72];
	snprintf(buf, sizeof(buf), " %s ", text);
	int w = xpu_text_width(buf);
	xpu_put_text(y, end - w, w, buf, xpu_draw_attr(role), 0);
	return end - w;
}

/* Which GPU tracing mode is on: what a replay's (or the collector's)
 * figures were (sampled, with the share traced), or what the libraries were
 * asked for. */
static void gpu_tracing(char *buf, size_t size, const struct xpu_snapshot *s)
{
	if (s->attached && !(s->collect & XPU_TICK_KNOWN))
		snprintf(buf, size, "GPU mode: waiting for the collector");
	else if (s->attached && s->gpu.tracing.mode == XPU_GPU_MODE_EXACT)
		snprintf(buf, size, s->gpu.exact_asked ? "GPU exact (asked)" : "GPU exact (collector's)");
	else if (s->attached)	/* the collector's figures: the share it traced */
		snprintf(buf, size, s->gpu.exact_asked ? "GPU sampled %.1f%% (exact asked, not yet)" :
			 "GPU sampled %.1f%%", 100 * s->gpu.cover);
	else if (s->replay)
		snprintf(buf, size, s->gpu.sampled ? "GPU sampled %.1f%%" : "GPU exact", 100 * s->gpu.cover);
	else if (s->gpu.tracing.mode == XPU_GPU_MODE_EXACT && s->gpu.exact_left_s > 0)
		snprintf(buf, size, "GPU exact %.0fs", s->gpu.exact_left_s);
	else if (s->gpu.tracing.mode == XPU_GPU_MODE_EXACT)
		snprintf(buf, size, "GPU exact");
	else
		snprintf(buf, size, "GPU sampled %u/%ums", s->gpu.tracing.slice_ms, s->gpu.tracing.period_ms);
}

void xpu_header_draw(const struct xpu_rect *r, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs)
{
	char buf[224], num[32];
	int y = r->y, x = r->x, limit = r->x + r->w;

	xpu_fill(y, r->x, r->w, xpu_draw_attr(XPU_ROLE_HEADER));
	/* Markers first, at the right end, so that nothing can push them off. */
	if (vs->paused)
		limit = marker(y, limit, XPU_MARK_PAUSED, XPU_ROLE_PAUSED);
	if (s->replay) {
		char pos[64];	/* where in the recording: refresh k of n */
		if (s->replay_ticks)
			snprintf(pos, sizeof(pos), "%s %" PRIu64 "/%" PRIu64,
				 s->replay_done ? XPU_MARK_REPLAY_DONE : XPU_MARK_REPLAY, s->ticks, s->replay_ticks);
		else
			snprintf(pos, sizeof(pos), "%s", s->replay_done ? XPU_MARK_REPLAY_DONE : XPU_MARK_REPLAY);
		limit = marker(y, limit, pos, XPU_ROLE_REPLAY);
	}

	x = field(y, x, limit, " xputop", XPU_ROLE_BRAND);
	x = field(y, x, limit, s->host[0] ? s->host : "?", XPU_ROLE_HEADER);
	fmt_time(buf, sizeof(buf), s->wall_ns, s->replay);
	x = field(y, x, limit, buf, XPU_ROLE_HEADER);
	fmt_secs(num, sizeof(num), s->interval_ns);
	snprintf(buf, sizeof(buf), "refresh %s", s->interval_ns ? num : "-");
	x = field(y, x, limit, buf, XPU_ROLE_HEADER);
	xpu_tui_fmt_rate(num, sizeof(num), s->events_per_s);
	snprintf(buf, sizeof(buf), "%s ev/s", num);
	x = field(y, x, limit, buf, XPU_ROLE_HEADER);
	if (s->dropped_tick)
		snprintf(buf, sizeof(buf), "dropped %" PRIu64 " (+%" PRIu64 ")", s->dropped_total,
			 s->dropped_tick);
	else
		snprintf(buf, sizeof(buf), "dropped %" PRIu64, s->dropped_total);
	x = field(y, x, limit, buf, s->dropped_total ? XPU_ROLE_DROPPED : XPU_ROLE_HEADER);
	gpu_tracing(buf, sizeof(buf), s);
	x = field(y, x, limit, buf, XPU_ROLE_HEADER);
	snprintf(buf, sizeof(buf), "self %.1f%% CPU", s->self_cpu_pct);
	x = field(y, x, limit, buf, XPU_ROLE_HEADER);
	if (!s->replay) {	/* own probes, or the collector's (core/sources/share.h) */
		snprintf(buf, sizeof(buf), "data: %s", s->source_name);
		field(y, x, limit, buf, XPU_ROLE_HEADER);
	}
}

int xpu_meters_per_line(int cols)
{
	return cols >= 160 ? 4 : cols >= 80 ? 2 : 1;
}

int xpu_meters_rows(const struct xpu_snapshot *s, int cols)
{
	int per = xpu_meters_per_line(cols), n = (int)s->cpu.sys.ncpus;
	return n ? (n + per - 1) / per : 1;
}

/* One CPU as htop draws it: "  0[|||||        23.4%]". */
static void meter(int y, int x, int w, int cpu, double pct)
{
	char label[16], val[16];
	snprintf(label, sizeof(label), "%3d[", cpu);
	snprintf(val, sizeof(val), "%.1f%%]", pct);
	int lw = xpu_text_width(label), vw = xpu_text_width(val), bar = w - lw - vw - 1;
	xpu_put_text(y, x, lw, label, xpu_draw_attr(XPU_ROLE_HEADER), 0);
	if (bar > 0) {
		int fill = (int)(pct / 100.0 * bar + 0.5);
		xpu_fill(y, x + lw, bar + 1, xpu_draw_attr(XPU_ROLE_DEFAULT));
		for (int i = 0; i < fill && i < bar; i++)
			xpu_put_text(y, x + lw + i, 1, "|", xpu_draw_attr(XPU_ROLE_METER), 0);
	}
	xpu_put_text(y, x + w - vw, vw, val, xpu_draw_attr(XPU_ROLE_DEFAULT), 0);
}

void xpu_meters_draw(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_cpu_sys *y = &s->cpu.sys;
	int per = xpu_meters_per_line(r->w), colw = r->w / per;

	xpu_fill_rect(r, xpu_draw_attr(XPU_ROLE_DEFAULT));
	if (!y->ncpus) {
		xpu_put_text(r->y, r->x + 1, r->w - 1, s->replay ? "no per-CPU figures in this recording (made "
				     "before xputop read them)" : "per-CPU meters: waiting for the second read of /proc/stat",
			     xpu_draw_attr(XPU_ROLE_NA), 1);
		return;
	}
	for (uint32_t i = 0; i < y->ncpus; i++) {
		int row = (int)i / per, col = (int)i % per;
		if (row >= r->h)
			break;	/* the layout kept the table's room */
		meter(r->y + row, r->x + col * colw, colw - 1, (int)i, y->cpu_busy100[i] / 100.0);
	}
}

static void view_modes(char *buf, size_t size, const struct xpu_snapshot *s,
		       const struct xpu_viewstate *vs)
{
	const char *filter = vs->filter[vs->view];
	char win[32] = "since start";
	size_t n = 0;

	if (vs->window != XPU_WIN_ALL) {
		char secs[24];
		fmt_secs(secs, sizeof(secs), s->window_ns);
		snprintf(win, sizeof(win), s->window_ns ? "last %s" : "recent", secs);
	}
	if (xpu_views[vs->view]->modes)
		n = (size_t)xpu_views[vs->view]->modes(buf, size, vs, win);
	else
		n = (size_t)snprintf(buf, size, "%s",
				     xpu_src_state_name(xpu_view_status(s, vs->view)->state));
	if (filter[0] && n < size)
		snprintf(buf + n, size - n, "  filter \"%s\"", filter);
}

/* Where view v's tab (" GPU ") is drawn: tabs from the second column, a
 * separator between them.  Drawing and clicks both ask here. */
static int tab_span(const struct xpu_rect *r, int v, char *label, size_t size, int *x0)
{
	int x = r->x + 1, sep = xpu_text_width(xpu_glyph(XPU_GLYPH_SEP));
	for (int i = 0; i < v; i++) {
		snprintf(label, size, " %s ", xpu_views[i]->name);
		x += xpu_text_width(label) + sep;
	}
	snprintf(label, size, " %s ", xpu_views[v]->name);
	*x0 = x;
	return xpu_text_width(label);
}

int xpu_tabs_hit(const struct xpu_rect *r, int x)
{
	char label[16];
	int x0;
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		int w = tab_span(r, v, label, sizeof(label), &x0);
		if (x >= x0 && x < x0 + w && x < r->x + r->w)
			return v;
	}
	return -1;
}

void xpu_tabs_draw(const struct xpu_rect *r, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs)
{
	int x = r->x + 1, end = r->x + r->w;
	char modes[XPU_FILTER_MAX + 96];

	xpu_fill(r->y, r->x, r->w, xpu_draw_attr(XPU_ROLE_TAB));
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		enum xpu_src_state st = xpu_view_status(s, (enum xpu_view)v)->state;
		enum xpu_role role = v == (int)vs->view ? XPU_ROLE_TAB_ACTIVE
				   : st == XPU_SRC_OFF || st == XPU_SRC_FAILED ? XPU_ROLE_TAB_OFF
				   : XPU_ROLE_TAB;
		char label[16];
		int x0, w = tab_span(r, v, label, sizeof(label), &x0);
		if (v)
			xpu_put_text(r->y, x, end - x, xpu_glyph(XPU_GLYPH_SEP),
				     xpu_draw_attr(XPU_ROLE_TAB), 0);
		xpu_put_text(r->y, x0, end - x0, label, xpu_draw_attr(role), 0);
		x = x0 + w;
	}
	view_modes(modes, sizeof(modes), s, vs);
	int mw = xpu_text_width(modes);
	x += 2;
	if (mw > end - x - 1)
		mw = end - x - 1;
	if (mw > 0)
		xpu_put_text(r->y, end - mw - 1, mw, modes, xpu_draw_attr(XPU_ROLE_MODE), 1);
}

void xpu_hints_draw(const struct xpu_rect *r)
{
	int x = r->x, end = r->x + r->w;

	xpu_fill(r->y, r->x, r->w, xpu_draw_attr(XPU_ROLE_HINT_TEXT));
	for (unsigned i = 0; i < xpu_key_nhints; i++) {
		const struct xpu_key_hint *h = &xpu_key_hints[i];
		int kw = xpu_text_width(h->key), ww = xpu_text_width(h->what);
		if (x + kw + 1 + ww > end)
			break;
		x += xpu_put_text(r->y, x, kw, h->key, xpu_draw_attr(XPU_ROLE_HINT_KEY), 0) + 1;
		x += xpu_put_text(r->y, x, ww, h->what, xpu_draw_attr(XPU_ROLE_HINT_TEXT), 0) + 2;
	}
}

int xpu_status_draw(const struct xpu_rect *r, const struct xpu_ui *ui,
		    const struct xpu_viewstate *vs, const char *msg, int level)
{
	static const enum xpu_role level_role[] = {
		[XPU_LOG_ERR] = XPU_ROLE_STATUS_ERR, [XPU_LOG_WARN] = XPU_ROLE_STATUS_WARN,
		[XPU_LOG_INFO] = XPU_ROLE_STATUS_INFO, [XPU_LOG_DEBUG] = XPU_ROLE_STATUS_INFO,
	};
	const char *keys = "Enter keep  Esc cancel";
	int x = r->x;

	xpu_fill(r->y, r->x, r->w, xpu_draw_attr(XPU_ROLE_STATUS_INFO));
	if (ui->act.ask) {
		char q[256];
		if (ui->act.ask == XPU_ASK_CONFIRM)
			xpu_act_question(&ui->act, q, sizeof(q));
		else
			snprintf(q, sizeof(q), "Send which signal to %u (%s)? Up Down choose, Enter: send, Esc: no",
				 ui->act.pid, ui->act.comm);
		xpu_put_text(r->y, x, r->w, q, xpu_draw_attr(XPU_ROLE_PROMPT), 1);
		return -1;
	}
	if (ui->seeking) {
		char q[96];
		snprintf(q, sizeof(q), "Go to (seconds, M:SS; +S -S from here): %s", ui->seek_to);
		return r->x + xpu_put_text(r->y, x, r->w, q, xpu_draw_attr(XPU_ROLE_PROMPT), 1);
	}
	if (!ui->editing) {
		enum xpu_role role = level >= 0 && level <= XPU_LOG_DEBUG ? level_role[level]
									   : XPU_ROLE_STATUS_INFO;
		xpu_put_text(r->y, x, r->w, msg, xpu_draw_attr(role), 1);
		return -1;
	}
	int kw = xpu_text_width(keys);
	int avail = r->w - (kw + 2 < r->w / 2 ? kw + 2 : 0);
	x += xpu_put_text(r->y, x, avail, XPU_FILTER_PROMPT, xpu_draw_attr(XPU_ROLE_PROMPT), 0);
	/* Show the end of a filter longer than the line: that is where typing goes. */
	const char *f = vs->filter[vs->view];
	while (*f && xpu_text_width(f) > avail - (x - r->x) - 1)
		f++;
	x += xpu_put_text(r->y, x, avail - (x - r->x) - 1, f, xpu_draw_attr(XPU_ROLE_DEFAULT), 0);
	if (avail < r->w)
		xpu_put_text(r->y, r->x + r->w - kw, kw, keys, xpu_draw_attr(XPU_ROLE_HINT_TEXT), 0);
	return x;
}

/* The flamegraph's colours, each kind named in its own style. */
static void draw_legend(int y, int x, int end)
{
	static const struct { enum xpu_role role; const char *name; } kinds[] = {
		{ XPU_ROLE_FLAME_USER, "user" }, { XPU_ROLE_FLAME_KERNEL, "kernel" },
		{ XPU_ROLE_FLAME_JIT, "jit" }, { XPU_ROLE_FLAME_UNKNOWN, "unknown" },
		{ XPU_ROLE_FLAME_LAUNCH, "GPU launch" }, { XPU_ROLE_FLAME_GPU, "GPU kernel" },
		{ XPU_ROLE_FLAME_INFO, "process / all" },
	};
	x += xpu_put_text(y, x, end - x, "Flamegraph frames  ", xpu_draw_attr(XPU_ROLE_HELP_TITLE), 0);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char label[32];
		snprintf(label, sizeof(label), " %s ", kinds[i].name);
		if (x + xpu_text_width(label) > end)
			break;
		x += xpu_put_text(y, x, end - x, label, xpu_draw_attr(kinds[i].role), 0) + 1;
	}
}

void xpu_help_draw(const struct xpu_rect *r, int *top)
{
	const int keyw = 18, n = (int)xpu_nkeydocs;
	int legend = r->h >= 4;
	int rows = r->h - 2 - legend;	/* title, the legend, a blank line */
	int colw = keyw + 50;
	int ncols = n > rows && r->w >= 2 * colw + 2 ? 2 : 1;
	int per_col = (n + ncols - 1) / ncols;
	int scroll = per_col > rows;

	if (r->h <= 0)
		return;
	if (!scroll || *top < 0)
		*top = 0;
	if (scroll && *top > n - rows)
		*top = n - rows;
	xpu_fill_rect(r, xpu_draw_attr(XPU_ROLE_DEFAULT));
	xpu_put_text(r->y, r->x + 1, r->w - 2,
		     scroll ? XPU_HELP_TITLE " - Down Up PgDn PgUp for more, any other key closes"
			    : XPU_HELP_TITLE " - press any key to close",
		     xpu_draw_attr(XPU_ROLE_HELP_TITLE), 1);
	if (legend)
		draw_legend(r->y + 1, r->x + 2, r->x + r->w - 1);
	for (int i = *top; i < n; i++) {
		const struct xpu_keydoc *d = &xpu_keydocs[i];
		int col = (i - *top) / per_col, row = (i - *top) % per_col;
		int y = r->y + 2 + legend + row, x = r->x + 2 + col * (colw + 2);
		int w = ncols == 2 ? colw : r->w - 3;
		if (row >= rows || (scroll && i - *top >= rows))
			break;
		if (!d->keys) {
			xpu_put_text(y, x, w, d->help, xpu_draw_attr(XPU_ROLE_HELP_TITLE), 1);
			continue;
		}
		xpu_put_text(y, x + 2, keyw - 2, d->keys, xpu_draw_attr(XPU_ROLE_HELP_KEY), 1);
		xpu_put_text(y, x + keyw + 1, w - keyw - 1, d->help,
			     xpu_draw_attr(XPU_ROLE_HELP_TEXT), 1);
	}
}

void xpu_menu_draw(const struct xpu_rect *r, const char *title, const char *const *items, int n, int sel)
{
	int w = 24;
	if (r->h < 2 || r->w < w)
		return;
	int top = 0, rows = n < r->h - 1 ? n : r->h - 1;
	if (sel >= rows)
		top = sel - rows + 1;
	/* A list taller than the pane scrolls with the selection; its title says
	 * where the selection is, so a list cut short is not taken for all. */
	char head[64];
	if (rows < n)
		snprintf(head, sizeof(head), "%s %d/%d", title, sel + 1, n);
	else
		snprintf(head, sizeof(head), "%s", title);
	xpu_fill(r->y, r->x, w, xpu_draw_attr(XPU_ROLE_TABLE_HEAD));
	xpu_put_text(r->y, r->x + 1, w - 1, head, xpu_draw_attr(XPU_ROLE_TABLE_HEAD), 1);
	for (int i = 0; i < rows; i++) {
		attr_t at = xpu_draw_attr(top + i == sel ? XPU_ROLE_ROW_SELECTED : XPU_ROLE_ROW);
		xpu_fill(r->y + 1 + i, r->x, w, at);
		xpu_put_text(r->y + 1 + i, r->x + 1, w - 1, items[top + i], at, 1);
	}
}

void xpu_signal_menu_draw(const struct xpu_rect *r, const struct xpu_act *a)
{
	char lines[32][24];
	const char *items[32];
	int n = (int)xpu_act_nsignals < 32 ? (int)xpu_act_nsignals : 32;
	for (int i = 0; i < n; i++) {
		snprintf(lines[i], sizeof(lines[i]), "%2d %s", xpu_act_signals[i].sig, xpu_act_signals[i].name);
		items[i] = lines[i];
	}
	xpu_menu_draw(r, "Send signal:", items, n, a->sig_row);
}

void xpu_too_small_draw(const struct xpu_rect *r)
{
	char size[64];
	const char *lines[2] = { XPU_TOO_SMALL, size };

	snprintf(size, sizeof(size), "%dx%d, need %dx%d", r->w, r->h, XPU_LAYOUT_MIN_COLS,
		 XPU_LAYOUT_MIN_ROWS);
	for (int i = 0; i < 2 && i < r->h; i++) {
		int w = xpu_text_width(lines[i]);
		int x = w < r->w ? (r->w - w) / 2 : 0;
		int y = r->h > 1 ? (r->h - 2) / 2 + i : 0;
		xpu_put_text(y, x, r->w, lines[i], xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	}
}
