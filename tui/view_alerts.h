/* SPDX-License-Identifier: GPL-2.0-only */
/* Alerts on screen: the alert bar (one line under the tabs, in every view,
 * while an alert is active or was cleared recently) and the alert log pane
 * (the NPU view's lower pane).  Both only show what the snapshot holds. */
#ifndef XPU_TUI_VIEW_ALERTS_H
#define XPU_TUI_VIEW_ALERTS_H

#include "layout.h"
#include "snapshot.h"

/* Text the tests look for. */
#define XPU_ALERT_LOG_TITLE "Alert log"
#define XPU_ALERT_BAR_CLEARED "cleared"

/* Whether the bar has something to say. */
int xpu_tui_alert_bar_wanted(const struct xpu_snapshot *s);
void xpu_tui_alert_bar_draw(const struct xpu_rect *r, const struct xpu_snapshot *s);
/* Newest first, one line each: time, severity, source, message, count,
 * state; the newest alert's message wraps over the rows left. */
/* Rows the log wants on a pane w wide: its title and the newest alert's
 * whole message (none without alerts), and with `all` a line for each other
 * alert too (or the line saying there are none). */
int xpu_tui_alert_log_rows(const struct xpu_snapshot *s, int w, int all);
void xpu_tui_alert_log_draw(const struct xpu_rect *r, const struct xpu_snapshot *s);

#endif
