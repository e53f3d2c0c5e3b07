/* SPDX-License-Identifier: GPL-2.0-only */
/* Key handling.  A handler changes the user's choices (struct xpu_viewstate)
 * or the TUI's own state (struct xpu_ui) and returns XPU_REACT_* flags; it
 * never draws.  The key list here is also what the help overlay and the hint
 * line show, so they cannot drift from what the keys do. */
#ifndef XPU_TUI_KEYS_H
#define XPU_TUI_KEYS_H

#include "act.h"
#include "flame_layout.h"
#include "opts.h"	/* xpu_keydocs: the keys documented for help */
#include "snapshot.h"

#define XPU_USERS_MENU 32

/* What the TUI remembers between draws that is not a view choice. */
struct xpu_ui {
	int help;			/* the help overlay is shown */
	int help_top;			/* its first entry shown, when it is scrolled */
	int editing;			/* the filter prompt is open */
	int seeking;			/* b: the replay's go-to-time prompt is open */
	char seek_to[16];		/* what was typed there */
	char saved[XPU_FILTER_MAX];	/* the filter before editing, for Esc */
	int page;			/* table rows visible at the last draw */
	int top[XPU_VIEW_MAX];		/* first table row shown, per view */
	int funcs_top;			/* first row of the NPU driver functions table */
	int funcs_focus;		/* t: the table keys move that table's cursor */
	int funcs_sel, funcs_page;	/* its cursor, and its rows at the last draw */
	int card;			/* Enter: the NPU view shows the top alert's card */
	int relayout;			/* clear and repaint everything (Ctrl-L, resize) */
	struct xpu_tui_flame_zoom zoom[XPU_VIEW_MAX];	/* flamegraph zoom, per view */
	int next_theme;			/* T was pressed: the TUI moves to the next theme */
	struct xpu_act act;		/* kill or renice, while asked */
	struct {			/* u: the users to pick from, "All users" first */
		int open, row, n;
		char names[XPU_USERS_MENU][32];
	} users;
};


struct xpu_key_hint {
	const char *key, *what;
};
extern const struct xpu_key_hint xpu_key_hints[];
extern const unsigned xpu_key_nhints;

/* Handles one key (a curses key code). */
int xpu_keys_handle(struct xpu_ui *ui, const struct xpu_snapshot *s, struct xpu_viewstate *vs,
		    int key);

/* What keys and the mouse share.  Each returns XPU_REACT_* flags. */
int xpu_keys_set_view(struct xpu_viewstate *vs, int view);
/* Selects row `to` of the view's table (clamped); `rel`: relative to the
 * selected row. */
int xpu_keys_select(const struct xpu_snapshot *s, struct xpu_viewstate *vs, int to, int rel);
/* Zooms the view's flamegraph onto a node of it (0: all the way out). */
int xpu_keys_zoom(struct xpu_ui *ui, const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
		  uint32_t node);

#endif
