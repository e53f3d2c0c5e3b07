/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view: load, CPU and memory, the source's line, the processes (or
 * threads) table, the flamegraph of the selected row's stacks and, beside it
 * (o), the machine's hottest functions. */
#include <inttypes.h>
#include <stdio.h>

#include <curses.h>

#include "dict.h"
#include "draw.h"
#include "flame_view.h"
#include "tui.h"
#include "views.h"

static const struct xpu_src_status *cpu_status(const struct xpu_snapshot *s)
{
	return &s->cpu.status;
}

static const struct xpu_table *cpu_table(const struct xpu_snapshot *s)
{
	return &s->cpu.rows;
}

static const struct xpu_flame *cpu_flame(const struct xpu_snapshot *s)
{
	return &s->cpu.flame;
}

/* The hottest functions' pane: half the width beside the flamegraph (at 80
 * columns a name of 30 characters), the whole lower pane without it. */
static int hot_cols(int cols)
{
	int w = cols / 2;
	return w < 36 ? 36 : w > 64 ? 64 : w;
}

static void cpu_layout(const struct xpu_snapshot *s, const struct xpu_viewstate *vs, int cols,
		       struct xpu_layout_opts *o)
{
	if (o->text && s->cpu.sys.flags)
		o->text = 2;	/* load, CPU and memory above the source's line */
	if (vs->hot) {
		o->side = hot_cols(cols);
		o->side_only = !o->flame;
		o->flame = 1;
	}
}

/* One line above the table: the source's state and what it says. */
static void draw_summary(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_src_status *st = &s->cpu.status;
	char right[64] = "";
	int x = r->x + 1;

	if (r->h <= 0)
		return;
	if (st->state == XPU_SRC_ACTIVE)
		snprintf(right, sizeof(right), "%" PRIu64 " samples last refresh", s->cpu.samples_tick);
	int rw = xpu_text_width(right);
	if (rw + 2 >= r->w / 2)
		rw = 0;
	x += xpu_put_text(r->y, x, r->w - 1 - rw, xpu_src_state_name(st->state),
			  xpu_draw_attr(xpu_src_state_role(st->state)), 1);
	x += 2;
	xpu_put_text(r->y, x, r->x + r->w - x - rw - 2, xpu_view_status_text(s, XPU_VIEW_CPU),
		     xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	if (rw)
		xpu_put_text(r->y, r->x + r->w - rw - 1, rw, right, xpu_draw_attr(XPU_ROLE_MODE), 0);
}

static void draw_table(const struct xpu_rect *r, const struct xpu_snapshot *s,
		       const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	xpu_view_draw_table(r, &s->cpu.rows, vs, ui,
			    s->cpu.status.state == XPU_SRC_ACTIVE ? "waiting for the first samples"
								  : xpu_view_status_text(s, XPU_VIEW_CPU));
}

static void draw_flame(const struct xpu_rect *r, const struct xpu_snapshot *s,
		       const struct xpu_viewstate *vs, const struct xpu_ui *ui)
{
	char info[96];
	const char *title = s->cpu.flame_title[0] ? s->cpu.flame_title
			  : vs->flame_all ? "all processes (A: the selected row's)" : "all processes";

	snprintf(info, sizeof(info), "%" PRIu64 " samples, %s", s->cpu.flame.total,
		 vs->window == XPU_WIN_ALL ? "since start" : "recent window");
	xpu_tui_flame_draw(r, &s->cpu.flame, s->dict, &ui->zoom[XPU_VIEW_CPU], title, info,
			    "no stacks for this selection yet");
}

/* perf top's list: each function's share of all the samples (of the
 * watched processes' alone, after -p: the title says so). */
static void draw_hot(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const char *title = s->watched_only ? "Hottest: watched processes only"
					    : "Hottest functions: all processes";
	char info[48], line[600], name[512];
	snprintf(info, sizeof(info), "%" PRIu64 " samples", s->cpu.hot_all);
	xpu_tui_flame_title(r, title, info);
	if (!s->cpu.nhot || !s->cpu.hot_all) {
		xpu_put_text(r->y + 1 + (r->h - 2) / 2, r->x + 1, r->w - 1, "no samples yet",
			     xpu_draw_attr(XPU_ROLE_EMPTY), 1);
		return;
	}
	for (int i = 0; i < s->cpu.nhot && i < r->h - 1; i++) {
		xpu_frame_text(s->dict, s->cpu.hot[i].frame, name, sizeof(name));
		snprintf(line, sizeof(line), "%5.1f%%  %s",
			 100.0 * (double)s->cpu.hot[i].samples / (double)s->cpu.hot_all, name);
		xpu_put_text(r->y + 1 + i, r->x + 1, r->w - 1, line, xpu_draw_attr(XPU_ROLE_ROW), 1);
	}
}

static void cpu_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	struct xpu_rect text = l->text;
	if (text.h > 1) {
		char sys[160];
		xpu_cpu_sys_text(&s->cpu.sys, sys, sizeof(sys));
		xpu_put_text(text.y, text.x + 1, text.w - 1, sys, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
		text.y++;
		text.h--;
	}
	if (text.h)
		draw_summary(&text, s);
	if (l->table.h)
		draw_table(&l->table, s, vs, ui);
	if (l->flame.h)
		draw_flame(&l->flame, s, vs, ui);
	if (l->side.h)
		draw_hot(&l->side, s);
}

static int cpu_modes(char *buf, size_t size, const struct xpu_viewstate *vs, const char *window)
{
	return snprintf(buf, size, "%s%s%s%s%s  %s", vs->threads ? "threads" : vs->tree ? "process tree" : "processes",
			vs->tree && vs->threads ? " (no tree)" : "",
			vs->cmdline && !vs->threads ? " (command lines)" : "", vs->user[0] ? " of " : "", vs->user,
			window);
}

/* H: one row per thread instead of per process; p: the command line in
 * COMMAND instead of the name; t and F5: htop's tree; A: the flamegraph of
 * all processes; o: the hottest functions. */
static int cpu_key(struct xpu_viewstate *vs, int key)
{
	switch (key) {
	case 'H':
		vs->threads = !vs->threads;
		return XPU_REACT_REBUILD;
	case 'p':
		vs->cmdline = !vs->cmdline;
		return XPU_REACT_REBUILD;
	case 'A':
		vs->flame_all = !vs->flame_all;
		return XPU_REACT_REBUILD;
	case 'o':
		vs->hot = !vs->hot;
		return XPU_REACT_REBUILD;
	case 't': case KEY_F(5):
		vs->tree = !vs->tree;
		return XPU_REACT_REBUILD;
	}
	return -1;
}

const struct xpu_view_desc xpu_view_cpu = {
	.name = "CPU",
	.key = 'c',
	.no_data = "No CPU samples yet.",
	.status = cpu_status,
	.table = cpu_table,
	.flame = cpu_flame,
	.layout = cpu_layout,
	.draw = cpu_draw,
	.modes = cpu_modes,
	.on_key = cpu_key,
	.processes = 1,
	.comm_col = XPU_CPU_COL_COMM,
	.user_col = XPU_CPU_COL_USER,
};
