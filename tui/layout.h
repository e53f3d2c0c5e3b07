/* SPDX-License-Identifier: GPL-2.0-only */
/* Where everything goes on the screen: a pure function of the terminal size
 * and what is shown.  No curses here, so the unit test can try every size. */
#ifndef XPU_TUI_LAYOUT_H
#define XPU_TUI_LAYOUT_H

/* A rectangle of cells; h == 0 or w == 0 means "not shown". */
struct xpu_rect {
	int y, x, h, w;
};

/* Below this size only "terminal too small" is shown. */
#define XPU_LAYOUT_MIN_ROWS 6
#define XPU_LAYOUT_MIN_COLS 32
/* The hint line is dropped below this many rows. */
#define XPU_LAYOUT_HINT_ROWS 9
/* A table pane needs its heading and this many rows; a flame pane its title
 * and this many levels.  The flame pane is dropped before the table shrinks
 * below its minimum. */
#define XPU_LAYOUT_TABLE_MIN 4
#define XPU_LAYOUT_FLAME_MIN 3
/* A flame pane narrower than this beside a side pane gives it the whole width. */
#define XPU_LAYOUT_FLAME_MIN_COLS 32

struct xpu_layout_opts {
	int table;	/* the view has a table */
	int flame;	/* the view wants its flame pane */
	int text;	/* rows wanted for the text/summary area above the table;
			 * without a table or flame the text area takes the view area */
	int help;	/* the help overlay replaces the view area */
	int alerts;	/* the alert bar: one line under the tabs, in every view */
	int meters;	/* rows of per-CPU meters under the header (1), in every view;
			 * fewer where the view would keep under its minimum */
	/* A view whose flame pane holds more than a flamegraph (the NPU view's
	 * driver functions and alert log) says what each pane needs; rows go
	 * first to text_min rows of text, then the flame pane up to flame_want,
	 * the table up to table_want (heading included), the text up to text,
	 * and what is left to the flame pane.  flame_want 0: the usual split. */
	int text_min, table_want, flame_want;
	/* A pane beside the flame pane, on its right (the CPU view's hottest
	 * functions): the columns it wants, 0 for none.  It has the flame
	 * pane's rows; it takes the whole of them where the flame pane is
	 * hidden (side_only) or would be left under XPU_LAYOUT_FLAME_MIN_COLS.
	 * With side set, flame says that the lower pane is shown at all. */
	int side, side_only;
};

struct xpu_layout {
	int rows, cols;
	int too_small;		/* only `small` is set */
	struct xpu_rect small;	/* the "terminal too small" message */
	struct xpu_rect header;	/* host, time, rates, PAUSED/REPLAY */
	struct xpu_rect meters;	/* a meter per CPU (1) */
	struct xpu_rect tabs;	/* GPU · NPU · CPU and the view's modes */
	struct xpu_rect alerts;	/* the alert bar, when alerts are active or recent */
	struct xpu_rect text;	/* the view's text: a summary line or a message box */
	struct xpu_rect table;	/* column headings + rows */
	struct xpu_rect flame;	/* title + one row per depth */
	struct xpu_rect side;	/* title + rows, right of the flame pane (or in its place) */
	struct xpu_rect help;	/* the help overlay */
	struct xpu_rect hints;	/* key hints */
	struct xpu_rect status;	/* last message, or the filter prompt */
};

void xpu_layout_compute(struct xpu_layout *l, int rows, int cols, const struct xpu_layout_opts *o);

/* All rectangles of a layout, for drawing loops and tests. */
#define XPU_LAYOUT_NRECTS 12
void xpu_layout_rects(const struct xpu_layout *l, const struct xpu_rect *out[XPU_LAYOUT_NRECTS]);

#endif
