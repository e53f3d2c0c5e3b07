/* SPDX-License-Identifier: GPL-2.0-only */
/* The views (GPU, NPU, CPU): each is one descriptor, struct xpu_view_desc,
 * defined in its own file (view_<name>.c) and found in xpu_views[] (views.c)
 * by its line in core/session/view_list.h.  Keys, clicks, tabs, layout and drawing walk that table instead
 * of switching on the view. */
#ifndef XPU_TUI_VIEWS_H
#define XPU_TUI_VIEWS_H

#include <stddef.h>

#include "keys.h"
#include "layout.h"
#include "pane.h"
#include "snapshot.h"

/* Everything the TUI knows of a view, as htop knows a meter by its
 * MeterClass.  Optional hooks may be NULL. */
struct xpu_view_desc {
	const char *name;	/* "CPU": its tab, its message box */
	int key;		/* the letter that shows it ('c') */
	const char *no_data;	/* its source's line when the source says nothing */
	/* Its part of the snapshot: the source's state, and the table and
	 * flamegraph the keys and clicks work on (NULL: none, or none yet;
	 * a view with neither shows a box saying what is missing). */
	const struct xpu_src_status *(*status)(const struct xpu_snapshot *s);
	const struct xpu_table *(*table)(const struct xpu_snapshot *s);
	const struct xpu_flame *(*flame)(const struct xpu_snapshot *s);
	/* Optional: what its panes want on a terminal cols wide, over the
	 * defaults (a table if it has one, the flame pane if shown, one text line). */
	void (*layout)(const struct xpu_snapshot *s, const struct xpu_viewstate *vs, int cols,
		       struct xpu_layout_opts *o);
	/* Draws its panes as laid out (without it, or without a table or a
	 * flame to show: the box of a view without data, with its status). */
	void (*draw)(const struct xpu_layout *l, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs, struct xpu_ui *ui);
	/* Optional: the modes at the right of the tab line (without it: the
	 * source's state); `window` says the window shown ("last 10s"), and
	 * the filter is added after them.  Returns the length written. */
	int (*modes)(char *buf, size_t size, const struct xpu_viewstate *vs, const char *window);
	/* Optional: a key of its own (H, e): XPU_REACT_* flags, or -1 for a key
	 * it does not take. */
	int (*on_key)(struct xpu_viewstate *vs, int key);
	/* Optional: where its table's rows are processes (keys are pids, or
	 * tids), the columns of their name and their user: what kill, renice
	 * and u act on.  Views without it have none of these keys. */
	int comm_col, user_col;
	int processes;
	/* Optional: a key for the view's own panes (the NPU view's second
	 * table and alert card), asked before the common keys: XPU_REACT_*
	 * flags, or -1 to leave the key to them. */
	int (*pane_key)(struct xpu_ui *ui, const struct xpu_snapshot *s, int key);
};

/* Each view's descriptor, xpu_view_<name> in its view_<name>.c, for each
 * view of core/session/view_list.h. */
#define XPU_VIEW_DESC(ID, name) extern const struct xpu_view_desc xpu_view_##name;
XPU_VIEW_LIST(XPU_VIEW_DESC)
#undef XPU_VIEW_DESC
/* In the order of enum xpu_view: the tabs' order. */
extern const struct xpu_view_desc *const xpu_views[XPU_VIEW_MAX];

/* The view's table, or NULL for a view without one (yet). */
const struct xpu_table *xpu_view_table(const struct xpu_snapshot *s, enum xpu_view v);
/* The view's flamegraph, or NULL. */
const struct xpu_flame *xpu_view_flame(const struct xpu_snapshot *s, enum xpu_view v);
const struct xpu_src_status *xpu_view_status(const struct xpu_snapshot *s, enum xpu_view v);
/* The source's line: its own text, or the view's no_data. */
const char *xpu_view_status_text(const struct xpu_snapshot *s, enum xpu_view v);

/* What the layout should make room for in the current view, on a terminal
 * cols wide. */
void xpu_view_layout_opts(const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
			  const struct xpu_ui *ui, int cols, struct xpu_layout_opts *o);
/* Draws the current view's panes (text, table, flame) as laid out. */
void xpu_view_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs, struct xpu_ui *ui);
/* The key's view: its letter; -1 for another key (digits are not views':
 * top's 1 is per-CPU meters). */
int xpu_view_of_key(int key);

#endif
