/* SPDX-License-Identifier: GPL-2.0-only */
#include "mouse.h"

#include "bars.h"
#include "flame_layout.h"
#include "table_view.h"
#include "tui.h"
#include "views.h"

static int inside(const struct xpu_rect *r, int y, int x)
{
	return r->h > 0 && r->w > 0 && y >= r->y && y < r->y + r->h && x >= r->x && x < r->x + r->w;
}

/* A heading: sort by its column, or reverse the order it already sorts. */
static int click_heading(const struct xpu_rect *r, const struct xpu_table *t,
			 struct xpu_viewstate *vs, int x)
{
	int widths[t->ncols + 1], left = r->x;
	xpu_tui_table_widths(t, r->w, widths);
	for (uint32_t i = 0; i < t->ncols; i++) {
		if (!widths[i])
			continue;
		if (x >= left && x < left + widths[i]) {
			if ((int)i == t->sort_col)
				vs->reverse[vs->view] = !vs->reverse[vs->view];
			else
				vs->sort_col[vs->view] = (int)i;
			return XPU_REACT_REBUILD;
		}
		left += widths[i] + 1;
	}
	return XPU_REACT_NONE;
}

static int click_table(const struct xpu_rect *r, const struct xpu_ui *ui,
		       const struct xpu_snapshot *s, struct xpu_viewstate *vs, int y, int x)
{
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	if (!t)
		return XPU_REACT_NONE;
	if (y == r->y)
		return click_heading(r, t, vs, x);
	int row = ui->top[vs->view] + (y - r->y - 1);
	if (row < 0 || (uint32_t)row >= t->nrows)
		return XPU_REACT_NONE;
	return xpu_keys_select(s, vs, row, 0);
}

/* A frame zooms onto it; the root (or the title line) zooms all the way out. */
static int click_flame(const struct xpu_rect *r, struct xpu_ui *ui, const struct xpu_snapshot *s,
		       struct xpu_viewstate *vs, int y, int x)
{
	const struct xpu_flame *f = xpu_view_flame(s, vs->view);
	if (!f || !f->n)
		return XPU_REACT_NONE;
	if (y == r->y)
		return xpu_keys_zoom(ui, s, vs, 0);
	uint32_t root = xpu_tui_flame_zoom_node(f, &ui->zoom[vs->view]);
	uint32_t node = xpu_tui_flame_hit(f, root, r->h - 1, r->w, y - r->y - 1, x - r->x);
	return node == XPU_FLAME_NONE ? XPU_REACT_NONE : xpu_keys_zoom(ui, s, vs, node);
}

int xpu_mouse_handle(struct xpu_ui *ui, const struct xpu_layout *l, const struct xpu_snapshot *s,
		     struct xpu_viewstate *vs, int y, int x, enum xpu_mouse_button b)
{
	if (ui->help) {	/* the wheel scrolls it, a click closes it */
		if (b == XPU_MOUSE_CLICK)
			ui->help = 0;
		else
			ui->help_top += b == XPU_MOUSE_WHEEL_UP ? -XPU_MOUSE_WHEEL_ROWS : XPU_MOUSE_WHEEL_ROWS;
		return XPU_REACT_REDRAW;
	}
	if (l->too_small)
		return XPU_REACT_NONE;
	if (b == XPU_MOUSE_WHEEL_UP)
		return xpu_keys_select(s, vs, -XPU_MOUSE_WHEEL_ROWS, 1);
	if (b == XPU_MOUSE_WHEEL_DOWN)
		return xpu_keys_select(s, vs, XPU_MOUSE_WHEEL_ROWS, 1);
	if (inside(&l->tabs, y, x)) {
		int v = xpu_tabs_hit(&l->tabs, x);
		return v < 0 ? XPU_REACT_NONE : xpu_keys_set_view(vs, v);
	}
	if (inside(&l->table, y, x))
		return click_table(&l->table, ui, s, vs, y, x);
	/* The NPU view's lower pane is its alert log, which has no flamegraph. */
	if (inside(&l->flame, y, x) && vs->flame)
		return click_flame(&l->flame, ui, s, vs, y, x);
	return XPU_REACT_NONE;
}
