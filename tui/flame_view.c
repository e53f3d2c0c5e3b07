/* SPDX-License-Identifier: GPL-2.0-only */
#include "flame_view.h"

#include <string.h>

#include <stdio.h>
#include <stdlib.h>

#include "dict.h"
#include "draw.h"
#include "flame_layout.h"

static struct xpu_tui_flame_box *boxes;
static uint32_t boxes_cap;

static const enum xpu_role kind_role[XPU_FRAME_KIND_MAX] = {
	[XPU_FRAME_USER] = XPU_ROLE_FLAME_USER,
	[XPU_FRAME_KERNEL] = XPU_ROLE_FLAME_KERNEL,
	[XPU_FRAME_JIT] = XPU_ROLE_FLAME_JIT,
	[XPU_FRAME_UNKNOWN] = XPU_ROLE_FLAME_UNKNOWN,
	[XPU_FRAME_LAUNCH] = XPU_ROLE_FLAME_LAUNCH,
	[XPU_FRAME_GPU] = XPU_ROLE_FLAME_GPU,
	[XPU_FRAME_INFO] = XPU_ROLE_FLAME_INFO,
};

enum xpu_role xpu_tui_flame_role(const struct xpu_flame *f, const struct xpu_dict *d,
				  uint32_t node)
{
	const struct xpu_flame_node *n = &f->nodes[node];
	if (node == 0 || n->label || !n->frame)
		return XPU_ROLE_FLAME_INFO;
	const struct xpu_frame *fr = xpu_dict_frame_get(d, n->frame);
	if (!fr || fr->kind >= XPU_FRAME_KIND_MAX)
		return XPU_ROLE_FLAME_UNKNOWN;
	return kind_role[fr->kind];
}

void xpu_tui_flame_text(const struct xpu_flame *f, const struct xpu_dict *d, uint32_t node,
			 char *buf, size_t size)
{
	const struct xpu_flame_node *n = &f->nodes[node];
	if (n->label)
		snprintf(buf, size, "%s", xpu_dict_str_get(d, n->label));
	else if (n->frame)
		xpu_frame_text(d, n->frame, buf, size);
	else
		snprintf(buf, size, "all");
}

static int reserve(uint32_t n)
{
	if (n <= boxes_cap)
		return 0;
	void *p = realloc(boxes, (size_t)n * sizeof(*boxes));
	if (!p)
		return -1;
	boxes = p;
	boxes_cap = n;
	return 0;
}

void xpu_tui_flame_title(const struct xpu_rect *r, const char *title, const char *info)
{
	attr_t a = xpu_draw_attr(XPU_ROLE_FLAME_TITLE);
	int iw = info ? xpu_text_width(info) : 0;

	xpu_fill(r->y, r->x, r->w, a);
	/* What the pane shows (whose stacks) comes before how much: in a
	 * narrow pane the info goes rather than cut the title. */
	if (iw && xpu_text_width(title) + iw + 3 <= r->w)
		xpu_put_text(r->y, r->x + r->w - iw - 1, iw, info, a, 0);
	else
		iw = -2;
	xpu_put_text(r->y, r->x + 1, r->w - iw - 3, title, a, 1);
}

/* A frame fills its columns but the last, which is left as a gap so that
 * neighbours of the same colour (and of any kind in monochrome) stay apart;
 * a frame one column wide has no gap. */
static void draw_box(const struct xpu_rect *r, const struct xpu_flame *f,
		     const struct xpu_dict *d, const struct xpu_tui_flame_box *b)
{
	attr_t a = xpu_draw_attr(xpu_tui_flame_role(f, d, b->node));
	int y = r->y + 1 + b->row, x = r->x + b->col;
	int w = b->width > 1 ? b->width - 1 : 1;
	char text[256];

	xpu_fill(y, x, w, a);
	xpu_tui_flame_text(f, d, b->node, text, sizeof(text));
	/* Its share of the whole flamegraph at the right end, where the box is
	 * wide enough to keep some of the name too (as perf top's and
	 * flamegraph.pl's percentages). */
	char pct[16] = "";
	uint64_t all = f->nodes[0].value;
	if (all && b->node)
		snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * (double)f->nodes[b->node].value / (double)all);
	int pw = (int)strlen(pct);
	if (pw && w >= pw + 8) {
		xpu_put_text(y, x + w - pw, pw, pct, a, 0);
		w -= pw + 1;
	}
	/* A name cut to a stub of one or two letters says nothing: then colour only. */
	if (w >= 4 || xpu_text_width(text) <= w)
		xpu_put_text(y, x, w, text, a, 1);
}

void xpu_tui_flame_draw(const struct xpu_rect *r, const struct xpu_flame *f,
			 const struct xpu_dict *d, const struct xpu_tui_flame_zoom *zoom,
			 const char *title, const char *info, const char *empty)
{
	char right[160], left[512], name[256];
	int rows = r->h - 1;
	uint32_t root = zoom ? xpu_tui_flame_zoom_node(f, zoom) : 0;
	uint32_t levels = f->n ? f->max_depth + 1 - (root ? f->nodes[root].depth : 0) : 0;

	if (r->h <= 0 || r->w <= 0)
		return;
	if (levels > (uint32_t)rows && rows > 0)
		snprintf(right, sizeof(right), "%s%s%d of %u levels", info ? info : "",
			 info && *info ? "  " : "", rows, levels);
	else
		snprintf(right, sizeof(right), "%s", info ? info : "");
	if (root) {
		xpu_tui_flame_text(f, d, root, name, sizeof(name));
		snprintf(left, sizeof(left), "%s  zoomed on %s (z: zoom out)", title, name);
		title = left;
	}
	xpu_tui_flame_title(r, title, right);
	if (rows <= 0)
		return;
	uint32_t n = 0;
	if (f->n && f->nodes[root].value && reserve(f->n) == 0)
		n = xpu_tui_flame_layout_zoom(f, root, rows, r->w, boxes, f->n);
	if (!n) {
		if (empty) {
			int w = xpu_text_width(empty);
			int x = w < r->w ? r->x + (r->w - w) / 2 : r->x;
			xpu_put_text(r->y + 1 + (rows - 1) / 2, x, r->w, empty,
				     xpu_draw_attr(XPU_ROLE_EMPTY), 1);
		}
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		draw_box(r, f, d, &boxes[i]);
}

void xpu_tui_flame_free(void)
{
	free(boxes);
	boxes = NULL;
	boxes_cap = 0;
}
