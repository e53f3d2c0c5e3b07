/* SPDX-License-Identifier: GPL-2.0-only */
#include "layout.h"

#include <string.h>

static struct xpu_rect rect(int y, int x, int h, int w)
{
	if (h <= 0 || w <= 0)
		return (struct xpu_rect){ 0, 0, 0, 0 };
	return (struct xpu_rect){ y, x, h, w };
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* The split by the panes' wants (xpu_layout_opts.flame_want), in order of
 * need: the minimums, the flame pane's want, the table's, the text's, then
 * the rest to the flame pane. */
static void split_wants(struct xpu_layout *l, int y, int h, const struct xpu_layout_opts *o,
			int table_min, int flame_min)
{
	int w = l->cols;
	int text = min_int(o->text_min > 0 ? o->text_min : 0, o->text > 0 ? o->text : 0);
	text = min_int(text, h - table_min - flame_min);
	if (text < 0)
		text = 0;
	int left = h - text - table_min - flame_min;
	int flame = flame_min + min_int(left, o->flame_want > flame_min ? o->flame_want - flame_min : 0);
	left = h - text - table_min - flame;
	int table = table_min + min_int(left, o->table_want > table_min ? o->table_want - table_min : 0);
	left = h - text - table - flame;
	int more = min_int(left, o->text > text ? o->text - text : 0);
	text += more;
	flame += left - more;
	l->text = rect(y, 0, text, w);
	l->table = rect(y + text, 0, table, w);
	l->flame = rect(y + text + table, 0, flame, w);
}

/* Splits the view area (rows y .. y+h-1) between text, table and flame. */
static void split_view(struct xpu_layout *l, int y, int h, const struct xpu_layout_opts *o)
{
	int w = l->cols;

	if (o->help) {
		l->help = rect(y, 0, h, w);
		return;
	}
	int table_min = o->table ? 1 + XPU_LAYOUT_TABLE_MIN : 0;
	int flame_min = 1 + XPU_LAYOUT_FLAME_MIN;
	/* A table that wants fewer rows than the minimum gets what it wants. */
	if (o->flame_want && o->table && o->table_want > 1 && o->table_want < table_min)
		table_min = o->table_want;
	int flame = o->flame && h - table_min >= flame_min;

	if (!o->table && !flame) {
		l->text = rect(y, 0, h, w);
		return;
	}
	if (flame && o->flame_want) {
		split_wants(l, y, h, o, table_min, flame_min);
		return;
	}
	int spare = h - table_min - (flame ? flame_min : 0);
	int text = o->text > 0 ? o->text : 0;
	if (text > spare)
		text = spare > 0 ? spare : 0;
	l->text = rect(y, 0, text, w);
	y += text;
	h -= text;
	if (!flame) {
		l->table = rect(y, 0, h, w);
		return;
	}
	/* The table keeps half the rows (the flame gets the odd one); a view
	 * without a table gives the flame everything. */
	int table = o->table ? h / 2 : 0;
	if (table < table_min)
		table = table_min;
	l->table = rect(y, 0, table, w);
	l->flame = rect(y + table, 0, h - table, w);
}

/* The side pane takes its columns from the right of the flame pane, or the
 * whole pane. */
static void split_side(struct xpu_layout *l, const struct xpu_layout_opts *o)
{
	struct xpu_rect *f = &l->flame;
	if (o->side <= 0 || !f->h)
		return;
	if (o->side_only || f->w - o->side < XPU_LAYOUT_FLAME_MIN_COLS) {
		l->side = *f;
		*f = rect(0, 0, 0, 0);
		return;
	}
	l->side = rect(f->y, f->x + f->w - o->side, f->h, o->side);
	f->w -= o->side;
}

void xpu_layout_compute(struct xpu_layout *l, int rows, int cols, const struct xpu_layout_opts *o)
{
	memset(l, 0, sizeof(*l));
	l->rows = rows;
	l->cols = cols;
	if (rows < XPU_LAYOUT_MIN_ROWS || cols < XPU_LAYOUT_MIN_COLS) {
		l->too_small = 1;
		l->small = rect(0, 0, rows, cols);
		return;
	}
	int hints = rows >= XPU_LAYOUT_HINT_ROWS;
	/* The meters leave the view its table's minimum (or one line). */
	int keep = o->table ? 1 + XPU_LAYOUT_TABLE_MIN : 1;
	int meters = o->meters > 0 ? o->meters : 0;
	if (meters > rows - 3 - hints - keep)
		meters = rows - 3 - hints - keep > 0 ? rows - 3 - hints - keep : 0;
	l->header = rect(0, 0, 1, cols);
	l->meters = rect(1, 0, meters, cols);
	l->tabs = rect(1 + meters, 0, 1, cols);
	l->status = rect(rows - 1, 0, 1, cols);
	if (hints)
		l->hints = rect(rows - 2, 0, 1, cols);
	/* The alert bar takes a line from the view, never the view's last one. */
	int top = 2 + meters;
	int bar = o->alerts && rows - top - 1 - hints > 1;
	if (bar)
		l->alerts = rect(top, 0, 1, cols);
	split_view(l, top + bar, rows - top - 1 - hints - bar, o);
	split_side(l, o);
}

void xpu_layout_rects(const struct xpu_layout *l, const struct xpu_rect *out[XPU_LAYOUT_NRECTS])
{
	const struct xpu_rect *r[XPU_LAYOUT_NRECTS] = {
		&l->small, &l->header, &l->meters, &l->tabs, &l->alerts, &l->text, &l->table,
		&l->flame, &l->side, &l->help, &l->hints, &l->status,
	};
	memcpy(out, r, sizeof(r));
}
