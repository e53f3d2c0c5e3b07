/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view: a summary of each device and process above the kernels
 * table, and the CPU -> launch API -> kernel flamegraph weighted by GPU time. */
#ifndef XPU_TUI_VIEW_GPU_H
#define XPU_TUI_VIEW_GPU_H

#include "keys.h"
#include "layout.h"
#include "snapshot.h"

/* Whether there is anything to show yet (else the view's message box). */
int xpu_view_gpu_has_data(const struct xpu_snapshot *s);
/* Rows the summary would like in a text area cols wide. */
int xpu_view_gpu_text_rows(const struct xpu_snapshot *s, int cols);
void xpu_view_gpu_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		       const struct xpu_viewstate *vs, struct xpu_ui *ui);

#endif
