/* SPDX-License-Identifier: GPL-2.0-only */
/* What every view (views.c, view_cpu.c, view_gpu.c, view_npu.c,
 * view_gpudev.c) draws its panes with: a source state's words and colour
 * role, and a view's table with the view state's selection and scrolling. */
#ifndef XPU_TUI_PANE_H
#define XPU_TUI_PANE_H

#include "keys.h"
#include "layout.h"
#include "snapshot.h"

/* A view's table, with the selection and scrolling of the view state; empty
 * is what shows when there are no rows (unless a filter hides them all). */
void xpu_view_draw_table(const struct xpu_rect *r, const struct xpu_table *t,
			 const struct xpu_viewstate *vs, struct xpu_ui *ui, const char *empty);

/* "active", "waiting", "off" or "failed", and the role it is drawn in. */
const char *xpu_src_state_name(enum xpu_src_state st);
int xpu_src_state_role(enum xpu_src_state st);

#endif
