/* SPDX-License-Identifier: GPL-2.0-only */
/* The mouse, as htop users expect it: a click on a view's tab switches to it,
 * on a table row selects it, on a column heading sorts by it (again: reverses
 * it), on a flamegraph frame zooms onto it; the wheel moves the selection
 * (or scrolls the help, which a click closes).
 *
 * A click is resolved against the layout the last draw used and with the
 * same pure functions the widgets draw with, so it lands on what the user
 * sees.  Like a key handler it changes choices and returns XPU_REACT_* flags;
 * it never draws.  No curses here: the unit test clicks without a terminal. */
#ifndef XPU_TUI_MOUSE_H
#define XPU_TUI_MOUSE_H

#include "keys.h"
#include "layout.h"

enum xpu_mouse_button { XPU_MOUSE_CLICK, XPU_MOUSE_WHEEL_UP, XPU_MOUSE_WHEEL_DOWN };

/* Rows one wheel step moves the selection. */
#define XPU_MOUSE_WHEEL_ROWS 3

int xpu_mouse_handle(struct xpu_ui *ui, const struct xpu_layout *l, const struct xpu_snapshot *s,
		     struct xpu_viewstate *vs, int y, int x, enum xpu_mouse_button b);

#endif
