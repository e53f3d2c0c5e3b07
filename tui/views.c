/* SPDX-License-Identifier: GPL-2.0-only */
#include "views.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "alerts_view.h"
#include "draw.h"
#include "flame_view.h"
#include "table_view.h"
#include "view_gpu.h"
#include "view_npu.h"

const char *const xpu_view_names[XPU_VIEW_MAX] = {
	[XPU_VIEW_GPU] = "GPU", [XPU_VIEW_NPU] = "NPU", [XPU_VIEW_CPU] = "CPU",
};

/* Shown when a source gives no text of its own: never a blank pane. */
static const char *const fallback_text[XPU_VIEW_MAX] = {
	[XPU_VIEW_GPU] = "No GPU data. Run a CUDA program under xputop (sudo xputop -- CMD), "
			 "or start it with CUDA_INJECTION64_PATH set to libxputop_inject.so.",
	[XPU_VIEW_NPU] = "No NPU data. The NPU view needs an Intel NPU with the intel_vpu "
			 "driver (/dev/accel/accel*).",
	[XPU_VIEW_CPU] = "No CPU samples yet.",
};

const struct xpu_table *xpu_view_table(const struct xpu_snapshot *s, enum xpu_view v)
{
	switch (v) {
	case XPU_VIEW_CPU: return &s->cpu;
	case XPU_VIEW_NPU: return &s->npu.calls;
	default: return xpu_view_gpu_has_data(s) ? &s->gpu : NULL;
	}
}

const struct xpu_flame *xpu_view_flame(const struct xpu_snapshot *s, enum xpu_view v)
{
	if (v == XPU_VIEW_GPU)
		return xpu_view_gpu_has_data(s) ? &s->gpu_flame : NULL;
	return v == XPU_VIEW_CPU ? &s->cpu_flame : NULL;
}

const struct xpu_src_status *xpu_view_status(const struct xpu_snapshot *s, enum xpu_view v)
{
	switch (v) {
	case XPU_VIEW_GPU: return &s->gpu_status;
	case XPU_VIEW_NPU: return &s->npu_status;
	default: return &s->cpu_status;
	}
}

static const char *status_text(const struct xpu_snapshot *s, enum xpu_view v)
{
	const struct xpu_src_status *st = xpu_view_status(s, v);
	return st->text[0] ? st->text : fallback_text[v];
}

void xpu_view_layout_opts(const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
			  const struct xpu_ui *ui, int cols, struct xpu_layout_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->help = ui->help;
	o->table = xpu_view_table(s, vs->view) != NULL;
	o->flame = vs->flame && xpu_view_flame(s, vs->view) != NULL;
	o->text = o->table || o->flame ? 1 : 0;
	if (vs->view == XPU_VIEW_CPU && o->text && s->cpu_sys.flags)
		o->text = 2;	/* load, CPU and memory above the source's line */
	o->alerts = xpu_alert_bar_wanted(s);
	if (vs->view == XPU_VIEW_GPU && o->table)
		o->text = xpu_view_gpu_text_rows(s, cols);
	if (vs->view == XPU_VIEW_NPU) {	/* the lower pane holds the alert log */
		o->flame = 1;
		o->text = xpu_view_npu_text_rows(s);
		/* No NPU and nothing in the table: its rows go to the sources
		 * list, which says what is missing. */
		const struct xpu_table *t = xpu_view_table(s, vs->view);
		if (xpu_view_status(s, vs->view)->state == XPU_SRC_OFF && (!t || !t->nrows))
			o->table = 0;
	}
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
	const char *text = status_text(s, v);
	const char *foot = "c: CPU view   ?: help";
	char head[96];

	snprintf(head, sizeof(head), "%s source: %s", xpu_view_names[v],
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
	draw_frame(y, x, h, w, xpu_view_names[v]);
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

/* One line above the table: the source's state and what it says. */
static void draw_summary(const struct xpu_rect *r, const struct xpu_snapshot *s, enum xpu_view v)
{
	const struct xpu_src_status *st = xpu_view_status(s, v);
	char right[64] = "";
	int x = r->x + 1;

	if (r->h <= 0)
		return;
	if (v == XPU_VIEW_CPU && st->state == XPU_SRC_ACTIVE)
		snprintf(right, sizeof(right), "%" PRIu64 " samples last refresh", s->cpu_samples_tick);
	int rw = xpu_text_width(right);
	if (rw + 2 >= r->w / 2)
		rw = 0;
	x += xpu_put_text(r->y, x, r->w - 1 - rw, xpu_src_state_name(st->state),
			  xpu_draw_attr(xpu_src_state_role(st->state)), 1);
	x += 2;
	xpu_put_text(r->y, x, r->x + r->w - x - rw - 2, status_text(s, v),
		     xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	if (rw)
		xpu_put_text(r->y, r->x + r->w - rw - 1, rw, right, xpu_draw_attr(XPU_ROLE_MODE), 0);
}

static void draw_cpu_table(const struct xpu_rect *r, const struct xpu_snapshot *s,
			   const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	xpu_view_draw_table(r, &s->cpu, vs, ui,
			    s->cpu_status.state == XPU_SRC_ACTIVE ? "waiting for the first samples"
								  : status_text(s, XPU_VIEW_CPU));
}

static void draw_cpu_flame(const struct xpu_rect *r, const struct xpu_snapshot *s,
			   const struct xpu_viewstate *vs, const struct xpu_ui *ui)
{
	char info[96];
	const char *title = s->cpu_flame_title[0] ? s->cpu_flame_title : "all processes";

	snprintf(info, sizeof(info), "%" PRIu64 " samples, %s", s->cpu_flame.total,
		 vs->window == XPU_WIN_ALL ? "since start" : "recent window");
	xpu_flame_view_draw(r, &s->cpu_flame, s->dict, &ui->zoom[XPU_VIEW_CPU], title, info,
			    "no stacks for this selection yet");
}

void xpu_view_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		   const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	enum xpu_view v = vs->view;

	ui->page = 0;
	if (v == XPU_VIEW_NPU) {
		xpu_view_npu_draw(l, s, vs, ui);
		return;
	}
	if (v == XPU_VIEW_GPU && xpu_view_gpu_has_data(s)) {
		xpu_view_gpu_draw(l, s, vs, ui);
		return;
	}
	if (v != XPU_VIEW_CPU) {
		if (l->text.h)
			draw_message_box(&l->text, s, v);
		return;
	}
	struct xpu_rect text = l->text;
	if (text.h > 1) {
		char sys[160];
		xpu_cpu_sys_text(&s->cpu_sys, sys, sizeof(sys));
		xpu_put_text(text.y, text.x + 1, text.w - 1, sys, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
		text.y++;
		text.h--;
	}
	if (text.h)
		draw_summary(&text, s, v);
	if (l->table.h)
		draw_cpu_table(&l->table, s, vs, ui);
	if (l->flame.h)
		draw_cpu_flame(&l->flame, s, vs, ui);
}
