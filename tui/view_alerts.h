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
/* Newest first, one line each: time, severity, source, message, count, state. */
void xpu_tui_alert_log_draw(const struct xpu_rect *r, const struct xpu_snapshot *s);

#endif
