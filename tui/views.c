/* SPDX-License-Identifier: GPL-2.0-only */
#include "views.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "view_alerts.h"

#define XPU_VIEW_ENTRY(ID, name) [XPU_VIEW_##ID] = &xpu_view_##name,
const struct xpu_view_desc *const xpu_views[XPU_VIEW_MAX] = { XPU_VIEW_LIST(XPU_VIEW_ENTRY) };

const struct xpu_table *xpu_view_table(const struct xpu_snapshot *s, enum xpu_view v)
{
	return xpu_views[v]->table ? xpu_views[v]->table(s) : NULL;
}

const struct xpu_flame *xpu_view_flame(const struct xpu_snapshot *s, enum xpu_view v)
{
	return xpu_views[v]->flame ? xpu_views[v]->flame(s) : NULL;
}

const struct xpu_src_status *xpu_view_status(const struct xpu_snapshot *s, enum xpu_view v)
{
	return xpu_views[v]->status(s);
}

/* Never a blank pane: the view's own words when the source has none. */
const char *xpu_view_status_text(const struct xpu_snapshot *s, enum xpu_view v)
{
	const struct xpu_src_status *st = xpu_view_status(s, v);
	return st->text[0] ? st->text : xpu_views[v]->no_data;
}

int xpu_view_of_key(int key)
{
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		if (key == xpu_views[v]->key)
			return v;
	return -1;
}

void xpu_view_layout_opts(const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
			  const struct xpu_ui *ui, int cols, struct xpu_layout_opts *o)
{
	const struct xpu_view_desc *d = xpu_views[vs->view];

	memset(o, 0, sizeof(*o));
	o->help = ui->help;
	o->table = xpu_view_table(s, vs->view) != NULL;
	o->flame = vs->flame && xpu_view_flame(s, vs->view) != NULL;
	o->text = o->table || o->flame ? 1 : 0;
	o->alerts = xpu_tui_alert_bar_wanted(s);
	if (d->layout)
		d->layout(s, vs, cols, o);
}

static void draw_frame(int y, int x, int h, int w, const char *title)
{
	attr_t a = xpu_draw_attr(XPU_ROLE_BOX);
	attrset(a);
	mvhline(y, x + 1, ACS_HLINE | a, w - 2);
	mvhline(y + h - 1, x + 1, ACS_HLINE | a, w - 2);
	mvvline(y + 1, x, ACS_VLINE | a, h - 2);
	mvvline(y + 1, x + w - 1, ACS_VLINE | a, h - 2);
	mvaddch(y, x, ACS_ULCORNER | a);
	mvaddch(y, x + w - 1, ACS_URCORNER | a);
	mvaddch(y + h - 1, x, ACS_LLCORNER | a);
	mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER | a);
	char t[64];
	snprintf(t, sizeof(t), " %s ", title);
	xpu_put_text(y, x + 2, w - 4, t, xpu_draw_attr(XPU_ROLE_BOX_TITLE), 1);
}

/* A view without data: a box saying what is missing and how to get it. */
static void draw_message_box(const struct xpu_rect *r, const struct xpu_snapshot *s,
			     enum xpu_view v)
{
	const struct xpu_src_status *st = xpu_view_status(s, v);
	const char *text = xpu_view_status_text(s, v);
	const char *foot = "c: CPU view   ?: help";
	char head[96];

	snprintf(head, sizeof(head), "%s source: %s", xpu_views[v]->name,
		 xpu_src_state_name(st->state));
	int w = r->w - 2 < 76 ? r->w - 2 : 76;
	int inner = w - 4;
	if (w < 12 || r->h < 3) {
		xpu_put_text(r->y, r->x, r->w, head, xpu_draw_attr(xpu_src_state_role(st->state)), 1);
		if (r->h > 1)
			xpu_put_text(r->y + 1, r->x, r->w, text, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
		return;
	}
	int body = xpu_text_lines(text, inner);
	int h = 2 + 1 + 1 + body + 1 + 1 + 1;	/* frame, head, gap, text, gap, foot, pad */
	if (h > r->h)
		h = r->h;
	int y = r->y + (r->h - h) / 3, x = r->x + (r->w - w) / 2;
	draw_frame(y, x, h, w, xpu_views[v]->name);
	int line = y + 1, last = y + h - 2;
	xpu_put_text(line++, x + 2, inner, head, xpu_draw_attr(xpu_src_state_role(st->state)), 1);
	line++;
	for (const char *p = text; *p && line <= last; line++) {
		const char *start = p;
		size_t n = xpu_text_wrap(p, inner, &p);
		char buf[sizeof(st->text) + 1];
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, start, n);
		buf[n] = '\0';
		xpu_put_text(line, x + 2, inner, buf, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	}
	if (line + 1 <= last)
		xpu_put_text(line + 1, x + 2, inner, foot, xpu_draw_attr(XPU_ROLE_HINT_TEXT), 1);
}

void xpu_view_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	enum xpu_view v = vs->view;

	ui->page = 0;
	if ((!xpu_view_table(s, v) && !xpu_view_flame(s, v)) || !xpu_views[v]->draw) {
		if (l->text.h)
			draw_message_box(&l->text, s, v);
		return;
	}
	xpu_views[v]->draw(l, s, vs, ui);
}
