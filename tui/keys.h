/* Key handling.  A handler changes the user's choices (struct xpu_viewstate)
 * or the TUI's own state (struct xpu_ui) and returns XPU_REACT_* flags; it
 * never draws.  The key list here is also what the help overlay and the hint
 * line show, so they cannot drift from what the keys do. */
#ifndef XPU_TUI_KEYS_H
#define XPU_TUI_KEYS_H

#include "opts.h"	/* xpu_keydocs: the keys documented for help */
#include "snapshot.h"

/* What the TUI remembers between draws that is not a view choice. */
struct xpu_ui {
	int help;			/* the help overlay is shown */
	int editing;			/* the filter prompt is open */
	char saved[XPU_FILTER_MAX];	/* the filter before editing, for Esc */
	int page;			/* table rows visible at the last draw */
	int top[XPU_VIEW_MAX];		/* first table row shown, per view */
	int relayout;			/* clear and repaint everything (Ctrl-L, resize) */
};


struct xpu_key_hint {
	const char *key, *what;
};
extern const struct xpu_key_hint xpu_key_hints[];
extern const unsigned xpu_key_nhints;

/* Handles one key (a curses key code). */
int xpu_keys_handle(struct xpu_ui *ui, const struct xpu_snapshot *s, struct xpu_viewstate *vs,
		    int key);

#endif
