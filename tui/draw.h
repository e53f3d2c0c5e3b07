/* SPDX-License-Identifier: GPL-2.0-only */
/* Drawing primitives shared by the widgets: role attributes, text clipped to
 * a width in columns, glyphs that fall back to ASCII. */
#ifndef XPU_TUI_DRAW_H
#define XPU_TUI_DRAW_H

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "layout.h"
#include "theme.h"

/* Applies a theme to the screen: one colour pair per role, or attributes
 * only when `mono` is set. */
void xpu_draw_apply_theme(const struct xpu_theme *t, int mono);
/* The curses attributes for a role. */
attr_t xpu_draw_attr(enum xpu_role r);

/* Whether the locale is UTF-8: decides the glyphs below. */
void xpu_draw_set_utf8(int utf8);
int xpu_draw_utf8(void);

enum xpu_glyph {
	XPU_GLYPH_SEP,		/* "·" between tabs */
	XPU_GLYPH_DOWN,		/* "▼" sort descending */
	XPU_GLYPH_UP,		/* "▲" sort ascending */
	XPU_GLYPH_ELLIPSIS,	/* "…" text cut short */
	XPU_GLYPH_MAX
};
const char *xpu_glyph(enum xpu_glyph g);

/* Columns a string takes; control and invalid bytes count as one ("?"). */
int xpu_text_width(const char *s);
/* A rate in a few columns: "5.2", "196", "12.3k", "1.5M". */
void xpu_tui_fmt_rate(char *buf, size_t size, double v);
/* Bytes of s that fit in `width` columns, cut at a character boundary. */
size_t xpu_text_fit(const char *s, int width);
/* The next line of s that fits in width columns, broken at a space where
 * possible (and at a newline).  Returns its length in bytes; *next is where
 * the line after it starts. */
size_t xpu_text_wrap(const char *s, int width, const char **next);
/* Lines s takes wrapped to width columns. */
int xpu_text_lines(const char *s, int width);
/* Writes s at (y, x), at most `width` columns, control characters and bytes
 * that do not decode shown as '?'.  With `ellipsis`, text cut short ends in
 * "…".  Returns the columns written. */
int xpu_put_text(int y, int x, int width, const char *s, attr_t attr, int ellipsis);
/* Fills `width` cells at (y, x) with spaces. */
void xpu_fill(int y, int x, int width, attr_t attr);
void xpu_fill_rect(const struct xpu_rect *r, attr_t attr);

#endif
