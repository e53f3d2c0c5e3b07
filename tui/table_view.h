/* SPDX-License-Identifier: GPL-2.0-only */
/* The table widget: draws any struct xpu_table (headings, the sort column
 * marked, right-aligned numbers, a FLEX column taking the rest, the selected
 * row highlighted, "N/A" dimmed).  Knows nothing about what the rows are. */
#ifndef XPU_TUI_TABLE_VIEW_H
#define XPU_TUI_TABLE_VIEW_H

#include "layout.h"
#include "table.h"

/* Column widths for `avail` columns of screen: hidden columns get 0, the
 * FLEX column the space the others leave, and columns past the right edge 0
 * (the one crossing it is cut).  Columns are separated by one space.
 * widths[] has t->ncols entries; returns the total width used. */
int xpu_tui_table_widths(const struct xpu_table *t, int avail, int *widths);

/* The first row to show so that `sel` is visible, moving as little as
 * possible from `top`, without leaving empty rows below the last one. */
int xpu_tui_table_scroll(int top, int sel, int nrows, int visible);

/* The row the selection key designates: its row, or the first row when the
 * key is 0 or no longer in the table; -1 for an empty table. */
int xpu_tui_table_selected_row(const struct xpu_table *t, uint64_t key);

/* Draws t in r (row 0 = headings).  *top is the scroll position, kept
 * across draws.  `empty` is shown when the table has no rows. */
void xpu_tui_table_draw(const struct xpu_rect *r, const struct xpu_table *t, int sel,
			 int *top, const char *empty);

#endif
