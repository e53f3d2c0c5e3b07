/* SPDX-License-Identifier: GPL-2.0-only */
#include "draw.h"

#include <stdio.h>

#include <string.h>
#include <stdlib.h>
#include <wchar.h>

static attr_t role_attr[XPU_ROLE_MAX];
static int utf8;

static attr_t curses_attrs(uint8_t a)
{
	return (a & XPU_ATTR_BOLD ? A_BOLD : 0) | (a & XPU_ATTR_DIM ? A_DIM : 0) |
	       (a & XPU_ATTR_REVERSE ? A_REVERSE : 0) |
	       (a & XPU_ATTR_UNDERLINE ? A_UNDERLINE : 0);
}

/* On a terminal of 8 colours a bright foreground is its colour in bold,
 * which most such terminals draw bright. */
static int bright_as_bold(int32_t fg)
{
	return COLORS < 16 && fg >= 8 && fg < 16;
}

void xpu_draw_apply_theme(const struct xpu_theme *t, int mono)
{
	for (int r = 0; r < XPU_ROLE_MAX; r++) {
		const struct xpu_style *s = &t->role[r];
		role_attr[r] = curses_attrs(s->attr);
		if (mono || r + 1 >= COLOR_PAIRS)
			continue;
		int fg = xpu_color_resolve(s->fg, COLORS);
		int bg = xpu_color_resolve(s->bg, COLORS);
		/* The extended call: direct colours do not fit in a short. */
		if (init_extended_pair(r + 1, fg, bg) == OK)
			role_attr[r] |= COLOR_PAIR(r + 1) | (bright_as_bold(s->fg) ? A_BOLD : 0);
	}
	/* What erase() fills with: a theme's own background, if it has one. */
	bkgd(' ' | role_attr[XPU_ROLE_DEFAULT]);
}

attr_t xpu_draw_attr(enum xpu_role r)
{
	return (unsigned)r < XPU_ROLE_MAX ? role_attr[r] : A_NORMAL;
}

void xpu_draw_set_utf8(int on)
{
	utf8 = on;
}

int xpu_draw_utf8(void)
{
	return utf8;
}

const char *xpu_glyph(enum xpu_glyph g)
{
	static const char *const u[XPU_GLYPH_MAX] = { "·", "▼", "▲", "…" };
	static const char *const a[XPU_GLYPH_MAX] = { "|", "v", "^", "~" };
	return (unsigned)g < XPU_GLYPH_MAX ? (utf8 ? u[g] : a[g]) : "?";
}

/* Decodes one printable character at s; a control character, or bytes that
 * do not decode, become '?' (one byte, one column).  Returns bytes used. */
static size_t next_char(const char *s, wchar_t *wc, int *cols)
{
	mbstate_t st;
	memset(&st, 0, sizeof(st));
	size_t n = mbrtowc(wc, s, MB_CUR_MAX, &st);
	int w = n && n < (size_t)-2 ? wcwidth(*wc) : -1;
	if (w < 0) {
		*wc = L'?';
		*cols = 1;
		return 1;
	}
	*cols = w;
	return n;
}

int xpu_text_width(const char *s)
{
	int total = 0, w;
	wchar_t wc;
	while (*s) {
		s += next_char(s, &wc, &w);
		total += w;
	}
	return total;
}

size_t xpu_text_fit(const char *s, int width)
{
	const char *p = s;
	int used = 0, w;
	wchar_t wc;
	while (*p) {
		size_t n = next_char(p, &wc, &w);
		if (used + w > width)
			break;
		used += w;
		p += n;
	}
	return (size_t)(p - s);
}

size_t xpu_text_wrap(const char *s, int width, const char **next)
{
	size_t n = xpu_text_fit(s, width);
	const char *nl = memchr(s, '\n', n);
	if (nl)
		n = (size_t)(nl - s);
	else if (s[n] && s[n] != ' ') {
		size_t sp = n;
		while (sp && s[sp - 1] != ' ')
			sp--;
		if (sp)
			n = sp;
	}
	if (!n && *s && !nl)
		n = 1;	/* a character wider than the box: skip it rather than loop */
	const char *p = s + n;
	while (*p == ' ' || *p == '\n')
		p++;
	*next = p;
	return n;
}

int xpu_text_lines(const char *s, int width)
{
	int lines = 0;
	while (*s) {
		xpu_text_wrap(s, width, &s);
		lines++;
	}
	return lines;
}

static int put_chars(int y, int x, int width, const char *s, attr_t attr)
{
	int used = 0, w;
	wchar_t wc[2] = { 0, 0 };

	attrset(attr);
	while (*s) {
		size_t n = next_char(s, &wc[0], &w);
		if (used + w > width)
			break;
		if (w > 0)
			mvaddnwstr(y, x + used, wc, 1);
		used += w;
		s += n;
	}
	return used;
}

int xpu_put_text(int y, int x, int width, const char *s, attr_t attr, int ellipsis)
{
	if (width <= 0 || !s)
		return 0;
	if (!ellipsis || xpu_text_width(s) <= width)
		return put_chars(y, x, width, s, attr);
	int used = put_chars(y, x, width - 1, s, attr);
	return used + put_chars(y, x + used, 1, xpu_glyph(XPU_GLYPH_ELLIPSIS), attr);
}

void xpu_fill(int y, int x, int width, attr_t attr)
{
	if (width <= 0)
		return;
	attrset(attr);
	mvhline(y, x, ' ' | attr, width);
}

void xpu_fill_rect(const struct xpu_rect *r, attr_t attr)
{
	for (int i = 0; i < r->h; i++)
		xpu_fill(r->y + i, r->x, r->w, attr);
}

void xpu_tui_fmt_rate(char *buf, size_t size, double v)
{
	if (v < 10)
		snprintf(buf, size, "%.1f", v);
	else if (v < 1e4)
		snprintf(buf, size, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, size, "%.1fk", v / 1e3);
	else
		snprintf(buf, size, "%.1fM", v / 1e6);
}
