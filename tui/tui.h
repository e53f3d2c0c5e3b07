/* SPDX-License-Identifier: GPL-2.0-only */
/* The curses front-end, as the main loop sees it.  No curses type crosses this
 * header, so core/app/, which starts the screen, stays free of curses. */
#ifndef XPU_TUI_H
#define XPU_TUI_H

struct xpu_snapshot;
struct xpu_viewstate;

struct xpu_tui_opts {
	const char *theme;	/* theme name or path; NULL = the default */
	int theme_optional;	/* the theme came from the settings file: a missing
				 * one is a warning, not an error */
	int no_color;		/* NO_COLOR set or colours unavailable */
	int no_mouse;		/* leave the mouse to the terminal */
};

/* What the main loop must do after a key. */
enum {
	XPU_REACT_NONE = 0,
	XPU_REACT_REDRAW = 1,	/* draw again from the same snapshot */
	XPU_REACT_REBUILD = 2,	/* choices changed: rebuild the snapshot, then draw */
	XPU_REACT_EXPORT = 4,	/* write a snapshot export of the current view */
	XPU_REACT_QUIT = 8,
	XPU_REACT_SAVE = 16,	/* save the settings (S) */
	XPU_REACT_GPU_EXACT = 32,	/* switch GPU tracing between exact and sampled (e) */
	XPU_REACT_SEEK = 64,	/* replay: move by vs->seek refreshes */
};

/* Starts curses and routes the error channel to the status line.
 * Returns 0, or -1 with a message printed (terminal untouched). */
int xpu_tui_init(const struct xpu_tui_opts *opts);
/* Checks a theme as xpu_tui_init would (found, readable, a theme file),
 * without touching the terminal: batch mode refuses what the screen would.
 * Returns 0, or -1 with a message. */
int xpu_tui_theme_check(const char *name, int optional);
/* Restores the terminal.  Safe to call more than once. */
void xpu_tui_fini(void);
/* Draws the whole screen from the snapshot. */
void xpu_tui_draw(const struct xpu_snapshot *s, const struct xpu_viewstate *vs);
/* Reads and handles all pending input; returns XPU_REACT_* flags. */
int xpu_tui_input(const struct xpu_snapshot *s, struct xpu_viewstate *vs);
/* Shows a message on the status line until the next one (e.g. the export path). */
void xpu_tui_status(const char *msg);
/* The theme in use, as named (-t, the settings file, or T): what S saves. */
const char *xpu_tui_theme(void);
/* Crash path: restore the terminal from a signal handler as far as possible. */
void xpu_tui_emergency_restore(void);

#endif
