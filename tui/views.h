/* SPDX-License-Identifier: GPL-2.0-only */
/* The view area: what each view (GPU, NPU, CPU) puts in its panes.  The one
 * place that knows which parts of the snapshot belong to which view. */
#ifndef XPU_TUI_VIEWS_H
#define XPU_TUI_VIEWS_H

#include "keys.h"
#include "layout.h"
#include "pane.h"
#include "snapshot.h"

extern const char *const xpu_view_names[XPU_VIEW_MAX];	/* "GPU", "NPU", "CPU" */

/* The view's table, or NULL for a view without one (yet). */
const struct xpu_table *xpu_view_table(const struct xpu_snapshot *s, enum xpu_view v);
/* The view's flamegraph, or NULL. */
const struct xpu_flame *xpu_view_flame(const struct xpu_snapshot *s, enum xpu_view v);
const struct xpu_src_status *xpu_view_status(const struct xpu_snapshot *s, enum xpu_view v);

/* What the layout should make room for in the current view, on a terminal
 * cols wide. */
void xpu_view_layout_opts(const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
			  const struct xpu_ui *ui, int cols, struct xpu_layout_opts *o);
/* Draws the current view's panes (text, table, flame) as laid out. */
void xpu_view_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs, struct xpu_ui *ui);

#endif
