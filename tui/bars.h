/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixed lines around the view: header, view tabs, key hints, status,
 * plus the help overlay and the "terminal too small" notice. */
#ifndef XPU_TUI_BARS_H
#define XPU_TUI_BARS_H

#include "keys.h"
#include "layout.h"
#include "snapshot.h"

/* Markers on the header's right end; tests look for these strings. */
#define XPU_MARK_PAUSED "PAUSED"
#define XPU_MARK_REPLAY "REPLAY"
#define XPU_MARK_REPLAY_DONE "REPLAY ENDED"
#define XPU_HELP_TITLE "xputop help"
#define XPU_TOO_SMALL "terminal too small"
#define XPU_FILTER_PROMPT "Filter: "

void xpu_header_draw(const struct xpu_rect *r, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs);
/* The per-CPU meters (1): how many a line holds on a terminal cols wide,
 * the lines they take, and the meters themselves, as many as r holds. */
int xpu_meters_per_line(int cols);
int xpu_meters_rows(const struct xpu_snapshot *s, int cols);
void xpu_meters_draw(const struct xpu_rect *r, const struct xpu_snapshot *s);
void xpu_tabs_draw(const struct xpu_rect *r, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs);
/* The view whose tab is drawn at column x of the tab line, or -1. */
int xpu_tabs_hit(const struct xpu_rect *r, int x);
void xpu_hints_draw(const struct xpu_rect *r);
/* Draws the status line: the filter prompt while editing, else the last
 * message coloured by its level.  Returns the cursor column while editing,
 * else -1. */
int xpu_status_draw(const struct xpu_rect *r, const struct xpu_ui *ui,
		    const struct xpu_viewstate *vs, const char *msg, int level);
/* The help: the flamegraph's colours, then every key; when the keys do not
 * fit, from entry *top on (clamped here), the title saying how to scroll. */
void xpu_help_draw(const struct xpu_rect *r, int *top);
void xpu_too_small_draw(const struct xpu_rect *r);
/* A menu of n items at the left of r, item sel highlighted (scrolled to
 * it), under a title line. */
void xpu_menu_draw(const struct xpu_rect *r, const char *title, const char *const *items, int n, int sel);
/* k's signal menu, at the left of r (htop's place), the cursor's signal
 * highlighted. */
void xpu_signal_menu_draw(const struct xpu_rect *r, const struct xpu_act *a);

#endif
