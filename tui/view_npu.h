/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view: a summary panel (firmware IPC with its sparkline, jobs,
 * memory activity, device, Level Zero, and the list of data sources with what
 * each is doing on this machine), the calls table (per process: ioctls,
 * Level Zero calls, jobs) and the alert log. */
#ifndef XPU_TUI_VIEW_NPU_H
#define XPU_TUI_VIEW_NPU_H

#include "keys.h"
#include "layout.h"
#include "snapshot.h"

/* Text the tests look for. */
#define XPU_NPU_SOURCES_TITLE "Sources"
#define XPU_NPU_IPC_LABEL "IPC"
#define XPU_NPU_FUNCS_TITLE "Driver functions"

/* Rows the summary panel would like. */
int xpu_view_npu_text_rows(const struct xpu_snapshot *s);
/* Draws the panel, table and alert log in the layout's text, table and lower panes. */
void xpu_view_npu_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		       const struct xpu_viewstate *vs, struct xpu_ui *ui);

#endif
