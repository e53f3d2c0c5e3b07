/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view: a summary panel (firmware IPC with its sparkline, jobs,
 * memory activity, device, Level Zero, and the list of data sources with what
 * each is doing on this machine), the calls table (per process: ioctls,
 * Level Zero calls, jobs) and the alert log. */
#include <inttypes.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "npu.h"
#include "pane.h"
#include "sparkline.h"
#include "table_view.h"
#include "view_alerts.h"
#include "views.h"

/* Text the tests look for. */
#define XPU_NPU_SOURCES_TITLE "Sources"
#define XPU_NPU_IPC_LABEL "IPC"
#define XPU_NPU_FUNCS_TITLE "Driver functions"

#define METRIC_ROWS 5	/* IPC, IPC types, jobs, memory, device */
#define LABEL_W 8

static void dur(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, size, "%.2fs", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.0fus", (double)ns / 1e3);
}

/* Rows the summary panel would like. */
static int text_rows(const struct xpu_snapshot *s)
{
	return 1 + METRIC_ROWS + 2 + (int)s->npu.sources.n;	/* status, metrics, gap, title, sources */
}

/* A line: the label in the heading role, then text. */
static int label(int y, const struct xpu_rect *r, const char *name)
{
	xpu_put_text(y, r->x + 1, LABEL_W, name, xpu_draw_attr(XPU_ROLE_TABLE_HEAD), 0);
	return r->x + 1 + LABEL_W + 1;
}

static void text_at(int y, int x, const struct xpu_rect *r, const char *t)
{
	if (x < r->x + r->w)
		xpu_put_text(y, x, r->x + r->w - x, t, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
}

static void line_ipc(int y, const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char tx[16], rx[16], base[16], peak[16], buf[160];
	int x = label(y, r, XPU_NPU_IPC_LABEL);
	if (n->untimed) {
		text_at(y, x, r, "counts only: the log has no times, so no rates, no jobs, no alerts");
		return;
	}
	xpu_tui_fmt_rate(tx, sizeof(tx), n->tx_s);
	xpu_tui_fmt_rate(rx, sizeof(rx), n->rx_s);
	snprintf(buf, sizeof(buf), "tx %s/s  rx %s/s  ", tx, rx);
	x += xpu_put_text(y, x, r->x + r->w - x, buf, xpu_draw_attr(XPU_ROLE_DEFAULT), 0);
	int spark = r->x + r->w - x - 44;
	if (spark > 60)
		spark = 60;
	if (spark >= 8) {
		x += xpu_sparkline_draw(y, x, spark, n->history, n->nhistory) + 1;
		xpu_tui_fmt_rate(peak, sizeof(peak), n->history_peak);
		snprintf(buf, sizeof(buf), "peak %s/s ", peak);
		x += xpu_put_text(y, x, r->x + r->w - x, buf, xpu_draw_attr(XPU_ROLE_NA), 0);
	}
	if (n->baseline_armed)
		xpu_tui_fmt_rate(base, sizeof(base), n->baseline);
	snprintf(buf, sizeof(buf), " learned %s%s  timeouts %" PRIu64, n->baseline_armed ? base : "-",
		 n->baseline_armed ? "/s" : "", n->timeouts_total);
	text_at(y, x, r, buf);
}

static void line_types(int y, const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char buf[512], v[16];
	size_t used = 0;
	int x = label(y, r, "by type");
	buf[0] = '\0';
	for (uint32_t i = 0; i < n->ntypes && used < sizeof(buf); i++) {
		const struct xpu_npu_type_snap *t = &n->types[i];
		if (t->tx_s > 0 || t->tx_total) {
			xpu_tui_fmt_rate(v, sizeof(v), t->tx_s);
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s tx %s/s  ", t->name, v);
		}
		if (used < sizeof(buf) && (t->rx_s > 0 || t->rx_total)) {
			xpu_tui_fmt_rate(v, sizeof(v), t->rx_s);
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s rx %s/s  ", t->name, v);
		}
	}
	text_at(y, x, r, used ? buf : "no message types seen (the kernel tells them via vpu:jsm or ivpu_ipc_* probes)");
}

static void line_jobs(int y, const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char sub[16], done[16], old[16], p50[16], p99[16], max[16], buf[256];
	int x = label(y, r, "Jobs");
	if (n->untimed) {
		text_at(y, x, r, "N/A: counts without times say nothing of jobs");
		return;
	}
	xpu_tui_fmt_rate(sub, sizeof(sub), n->submit_s);
	xpu_tui_fmt_rate(done, sizeof(done), n->done_s);
	dur(old, sizeof(old), n->oldest_ns);
	dur(p50, sizeof(p50), n->p50_ns);
	dur(p99, sizeof(p99), n->p99_ns);
	dur(max, sizeof(max), n->max_ns);
	int k = snprintf(buf, sizeof(buf), "submitted %s/s  done %s/s  outstanding %u", sub, done, n->outstanding);
	if (n->outstanding && k > 0)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, " (oldest %s)", old);
	if (k > 0)
		snprintf(buf + k, sizeof(buf) - (size_t)k, "  latency p50 %s p99 %s max %s  aborted %" PRIu64,
			 n->lat_valid ? p50 : "N/A", n->lat_valid ? p99 : "N/A", n->lat_valid ? max : "N/A",
			 n->aborted_total);
	text_at(y, x, r, buf);
}

static void line_memory(int y, const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char buf[256], shares[128];
	int x = label(y, r, "Memory");
	if (n->shares_valid)
		snprintf(shares, sizeof(shares), "shares: memory mgmt %s  IPC %s  buffers %s", n->share_mm_text,
			 n->share_ipc_text, n->share_bo_text);
	else
		snprintf(shares, sizeof(shares), "shares: N/A");
	snprintf(buf, sizeof(buf), "bo create %.1f/s  bind %.1f/s  map %.1f/s  unmap %.1f/s  pages mapped %.1f/s "
		 "freed %.1f/s  faults %" PRIu64 "   %s",
		 n->mem_s[XPU_NPU_MEM_BO_CREATE], n->mem_s[XPU_NPU_MEM_BIND], n->mem_s[XPU_NPU_MEM_MAP],
		 n->mem_s[XPU_NPU_MEM_UNMAP], n->mem_s[XPU_NPU_MEM_MAP_PAGE], n->mem_s[XPU_NPU_MEM_FREE_PAGE],
		 n->mem_total[XPU_NPU_MEM_FAULT], shares);
	text_at(y, x, r, buf);
}

/* "N/A" where the field is unknown. */
static void dev_field(char *buf, size_t size, int valid, const char *fmt, double v)
{
	if (valid)
		snprintf(buf, size, fmt, v);
	else
		snprintf(buf, size, "N/A");
}

static void line_device(int y, const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char buf[320], busy[16], l0[16], mem[24], cur[16], max[16], pw[16];
	double l0s = 0;
	uint32_t f = n->dev_valid ? n->dev.flags : 0;
	int x = label(y, r, "Device");
	for (int a = 1; a < XPU_NPU_L0_API_MAX && a < 8; a++)
		l0s += n->l0_s[a];
	xpu_tui_fmt_rate(l0, sizeof(l0), l0s);
	dev_field(busy, sizeof(busy), n->busy_valid, "%.0f%%", n->busy_pct);
	dev_field(mem, sizeof(mem), f & XPU_NPU_DEV_MEM, "%.1f MiB", (double)n->dev.mem_bytes / (1 << 20));
	dev_field(cur, sizeof(cur), f & XPU_NPU_DEV_CUR_MHZ, "%.0f", n->dev.cur_mhz);
	dev_field(max, sizeof(max), f & XPU_NPU_DEV_MAX_MHZ, "%.0f", n->dev.max_mhz);
	dev_field(pw, sizeof(pw), f & XPU_NPU_DEV_POWER, "%.1f W", n->dev.power_mw / 1000.0);
	snprintf(buf, sizeof(buf), "busy %s  mem %s  freq %s/%s MHz  power %s  suspends %" PRIu64 " resumes %" PRIu64
		 " recoveries %" PRIu64 "%s%s  TDR %u ms (%s)  Level Zero %s calls/s  clients %u", busy, mem, cur, max,
		 pw, n->suspends, n->resumes, n->recoveries, n->last_recovery[0] ? " last: " : "", n->last_recovery,
		 n->tdr_ms, n->tdr_origin ? n->tdr_origin : "default", l0, n->clients.nrows);
	text_at(y, x, r, buf);
}

static void draw_sources(int y, int last, const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_npu_srcinfo *si = &s->npu.sources;
	if (y > last)
		return;
	xpu_put_text(y++, r->x + 1, r->w - 1, XPU_NPU_SOURCES_TITLE " on this machine",
		     xpu_draw_attr(XPU_ROLE_BOX_TITLE), 1);
	for (uint32_t i = 0; i < si->n && y <= last; i++, y++) {
		const struct xpu_npu_srcline *l = &si->line[i];
		int x = r->x + 3;
		char name[32];
		snprintf(name, sizeof(name), "%-16s", l->name);
		x += xpu_put_text(y, x, r->x + r->w - x, name, xpu_draw_attr(XPU_ROLE_DEFAULT), 0) + 1;
		const char *st = xpu_src_state_name((enum xpu_src_state)l->state);
		char stb[24];
		snprintf(stb, sizeof(stb), "%-8s", st);
		x += xpu_put_text(y, x, r->x + r->w - x, stb,
				  xpu_draw_attr(xpu_src_state_role((enum xpu_src_state)l->state)), 0) + 1;
		text_at(y, x, r, l->detail);
	}
}

static void draw_panel(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	const struct xpu_src_status *st = &s->npu.status;
	int y = r->y, last = r->y + r->h - 1;
	void (*const lines[METRIC_ROWS])(int, const struct xpu_rect *, const struct xpu_npu_snap *) = {
		line_ipc, line_types, line_jobs, line_memory, line_device,
	};

	if (r->h <= 0)
		return;
	int x = r->x + 1;
	x += xpu_put_text(y, x, r->w - 1, xpu_src_state_name(st->state),
			  xpu_draw_attr(xpu_src_state_role(st->state)), 1) + 2;
	text_at(y++, x, r, st->text[0] ? st->text : "no NPU data source");
	/* With no NPU its metrics are all zero: the sources list (what is
	 * watched, what is missing) takes their rows, so it is not cut off. */
	if (st->state == XPU_SRC_OFF) {
		draw_sources(y, last, r, s);
		return;
	}
	for (int i = 0; i < METRIC_ROWS && y <= last; i++)
		lines[i](y++, r, n);
	draw_sources(y + 1 <= last ? y + 1 : y, last, r, s);
}


/* "Driver functions  8198 calls: memory management 57% (window 0%) ..." */
static void draw_funcs_title(const struct xpu_rect *r, const struct xpu_npu_snap *n)
{
	char buf[512];
	size_t used = (size_t)snprintf(buf, sizeof(buf), " " XPU_NPU_FUNCS_TITLE "  %" PRIu64 " calls since start:",
				       n->fn_total);
	for (uint32_t c = 0; c < XPU_NPU_NCAT && used < sizeof(buf); c++) {
		if (!n->cats[c].total)
			continue;
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "  %s %s (now %s)",
					 xpu_npu_cat_name(c), n->cats[c].share_total_text, n->cats[c].share_text);
	}
	xpu_fill(r->y, r->x, r->w, xpu_draw_attr(XPU_ROLE_FLAME_TITLE));
	xpu_put_text(r->y, r->x, r->w, buf, xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
}

/* The lower pane: the driver functions table, the alert log below it with
 * a line per alert (at least two, at most half the pane). */
static void draw_lower(const struct xpu_rect *r, const struct xpu_snapshot *s, struct xpu_ui *ui)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	int alerts = (int)s->nalerts + 1;
	if (alerts < 2)
		alerts = 2;
	if (alerts > r->h / 2)
		alerts = r->h / 2;
	int funcs = r->h - alerts;
	if (funcs < 3) {	/* too small for a table: the alerts matter more */
		xpu_tui_alert_log_draw(r, s);
		return;
	}
	struct xpu_rect title = { r->y, r->x, 1, r->w };
	struct xpu_rect table = { r->y + 1, r->x, funcs - 1, r->w };
	struct xpu_rect log = { r->y + funcs, r->x, alerts, r->w };
	draw_funcs_title(&title, n);
	xpu_tui_table_draw(&table, &n->funcs, -1, &ui->funcs_top,
			    "no driver functions traced (ivpu_* probes or a bpftrace log give them)");
	xpu_tui_alert_log_draw(&log, s);
}

/* The panel, table and alert log in the layout's text, table and lower panes. */
static void npu_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	const struct xpu_table *t = &s->npu.model.calls;
	const char *filter = vs->filter[XPU_VIEW_NPU];
	char empty[XPU_FILTER_MAX + 64];

	if (filter[0])
		snprintf(empty, sizeof(empty), "no rows match the filter \"%s\"", filter);
	else
		snprintf(empty, sizeof(empty), "no NPU ioctls, Level Zero calls or jobs yet");
	if (l->text.h)
		draw_panel(&l->text, s);
	if (l->table.h) {
		ui->page = l->table.h - 1;
		xpu_tui_table_draw(&l->table, t, xpu_tui_table_selected_row(t, vs->selected[XPU_VIEW_NPU]),
				    &ui->top[XPU_VIEW_NPU], empty);
	}
	if (l->flame.h)
		draw_lower(&l->flame, s, ui);
}

static const struct xpu_src_status *npu_status(const struct xpu_snapshot *s)
{
	return &s->npu.status;
}

static const struct xpu_table *npu_table(const struct xpu_snapshot *s)
{
	return &s->npu.model.calls;
}

static void npu_layout(const struct xpu_snapshot *s, int cols, struct xpu_layout_opts *o)
{
	o->flame = 1;	/* the lower pane holds the alert log */
	o->text = text_rows(s);
	/* No NPU and nothing in the table: its rows go to the sources list,
	 * which says what is missing. */
	if (s->npu.status.state == XPU_SRC_OFF && !s->npu.model.calls.nrows)
		o->table = 0;
}

const struct xpu_view_desc xpu_view_npu = {
	.name = "NPU",
	.key = 'n',
	.no_data = "No NPU data. The NPU view needs an Intel NPU with the intel_vpu "
		   "driver (/dev/accel/accel*).",
	.status = npu_status,
	.table = npu_table,
	.layout = npu_layout,
	.draw = npu_draw,
};
