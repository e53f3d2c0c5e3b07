/* SPDX-License-Identifier: GPL-2.0-only */
#include "table_view.h"

#include <string.h>

#include "draw.h"

static int is_left(const struct xpu_col *c)
{
	return (c->flags & XPU_COL_LEFT) || c->kind == XPU_CELL_STR;
}

/* Room for the heading and the sort marker next to it. */
static int min_width(const struct xpu_col *c)
{
	int w = (int)strlen(c->title) + 1;
	return c->width > w ? c->width : w;
}

/* Which columns to show: all that fit.  When they do not, SPARE columns go
 * first, then text columns other than the FLEX one (USER before any number:
 * a top without %CPU is no top), then numbers from the right end; the first
 * column, the FLEX column (the one that says what a row is) and the sort
 * column always stay. */
static void choose_columns(const struct xpu_table *t, int avail, int flex, uint8_t *show)
{
	int need = 0, shown = 0, first = -1;

	for (uint32_t i = 0; i < t->ncols; i++) {
		show[i] = xpu_col_shown(&t->cols[i]);
		if (show[i] && first < 0)
			first = (int)i;
		if (show[i])
			need += min_width(&t->cols[i]) + (shown++ ? 1 : 0);
	}
	for (int pass = 2; pass >= 0; pass--)
		for (int i = (int)t->ncols - 1; i >= 0 && need > avail && shown > 1; i--) {
			if (!show[i] || i == flex || i == first || i == t->sort_col ||
			    (pass == 2 && !(t->cols[i].flags & XPU_COL_SPARE)) ||
			    (pass == 1 && !(t->cols[i].flags & XPU_COL_LEFT)))
				continue;
			show[i] = 0;
			need -= min_width(&t->cols[i]) + 1;
			shown--;
		}
}

int xpu_tui_table_widths(const struct xpu_table *t, int avail, int *widths)
{
	uint8_t show[t->ncols + 1];
	int fixed = 0, shown = 0, flex = -1, x = 0;

	for (uint32_t i = 0; i < t->ncols; i++)
		if ((t->cols[i].flags & XPU_COL_FLEX) && xpu_col_shown(&t->cols[i])) {
			flex = (int)i;
			break;
		}
	choose_columns(t, avail, flex, show);
	for (uint32_t i = 0; i < t->ncols; i++) {
		if (!show[i])
			continue;
		if (shown++)
			fixed++;
		if ((int)i != flex)
			fixed += min_width(&t->cols[i]);
	}
	for (uint32_t i = 0; i < t->ncols; i++) {
		widths[i] = 0;
		if (!show[i] || x + (x ? 1 : 0) >= avail)	/* no room after the gap */
			continue;
		int w = min_width(&t->cols[i]);
		if ((int)i == flex && avail - fixed > w)
			w = avail - fixed;
		if (x)
			x++;
		widths[i] = x + w > avail ? avail - x : w;
		x += widths[i];
	}
	return x;
}

int xpu_tui_table_scroll(int top, int sel, int nrows, int visible)
{
	if (visible <= 0 || nrows <= 0)
		return 0;
	if (sel < top)
		top = sel;
	if (sel >= top + visible)
		top = sel - visible + 1;
	if (top > nrows - visible)
		top = nrows - visible;
	return top < 0 ? 0 : top;
}

int xpu_tui_table_selected_row(const struct xpu_table *t, uint64_t key)
{
	if (!t->nrows)
		return -1;
	int r = key ? xpu_table_find(t, key) : 0;
	return r < 0 ? 0 : r;
}

/* Writes text into a cell of width w, aligned as its column wants. */
static void put_cell(int y, int x, int w, const char *s, int left, attr_t attr)
{
	int tw = xpu_text_width(s);
	if (!left && tw < w)
		x += w - tw;
	xpu_put_text(y, x, w, s, attr, 1);
}

static void draw_headings(const struct xpu_rect *r, const struct xpu_table *t, const int *widths)
{
	attr_t head = xpu_draw_attr(XPU_ROLE_TABLE_HEAD);
	int x = r->x;

	xpu_fill(r->y, r->x, r->w, head);
	for (uint32_t i = 0; i < t->ncols; i++) {
		const struct xpu_col *c = &t->cols[i];
		char title[128];
		if (!widths[i])
			continue;
		int left = is_left(c);
		if ((int)i == t->sort_col) {
			/* Numbers sort largest first, text A to Z; reverse flips. */
			int down = (c->kind != XPU_CELL_STR) != (t->reverse != 0);
			const char *mark = xpu_glyph(down ? XPU_GLYPH_DOWN : XPU_GLYPH_UP);
			snprintf(title, sizeof(title), left ? "%s%s" : "%2$s%1$s", c->title, mark);
			xpu_fill(r->y, x, widths[i], xpu_draw_attr(XPU_ROLE_TABLE_SORT));
			put_cell(r->y, x, widths[i], title, left, xpu_draw_attr(XPU_ROLE_TABLE_SORT));
		} else {
			put_cell(r->y, x, widths[i], c->title, left, head);
		}
		x += widths[i] + 1;
	}
}

static void draw_row(int y, const struct xpu_rect *r, const struct xpu_table *t,
		     uint32_t row, const int *widths, int selected)
{
	attr_t base = xpu_draw_attr(selected ? XPU_ROLE_ROW_SELECTED : XPU_ROLE_ROW);
	const struct xpu_cell *cells = xpu_table_row(t, row);
	int x = r->x;
	char buf[256];

	xpu_fill(y, r->x, r->w, base);
	for (uint32_t i = 0; i < t->ncols; i++) {
		if (!widths[i])
			continue;
		const struct xpu_col *c = &t->cols[i];
		attr_t a = base;
		xpu_cell_format(c, &cells[i], buf, sizeof(buf));
		if (cells[i].na)
			a = selected ? base | A_DIM : xpu_draw_attr(XPU_ROLE_NA);
		put_cell(y, x, widths[i], buf, is_left(c), a);
		x += widths[i] + 1;
	}
}

void xpu_tui_table_draw(const struct xpu_rect *r, const struct xpu_table *t, int sel,
			 int *top, const char *empty)
{
	int widths[t->ncols + 1];
	int body = r->h - 1;

	if (r->h <= 0 || r->w <= 0)
		return;
	xpu_tui_table_widths(t, r->w, widths);
	draw_headings(r, t, widths);
	if (!t->nrows) {
		*top = 0;
		if (body > 0 && empty) {
			int w = xpu_text_width(empty);
			int x = w < r->w ? r->x + (r->w - w) / 2 : r->x;
			xpu_put_text(r->y + 1 + (body - 1) / 2, x, r->w, empty,
				     xpu_draw_attr(XPU_ROLE_EMPTY), 1);
		}
		return;
	}
	*top = xpu_tui_table_scroll(*top, sel, (int)t->nrows, body);
	for (int i = 0; i < body && (uint32_t)(*top + i) < t->nrows; i++)
		draw_row(r->y + 1 + i, r, t, (uint32_t)(*top + i), widths, *top + i == sel);
}
