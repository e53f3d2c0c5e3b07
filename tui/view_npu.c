/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view: a summary panel (firmware IPC with its sparkline, jobs,
 * memory activity, device, Level Zero, and the list of data sources with what
 * each is doing on this machine), the calls table (per process: ioctls,
 * Level Zero calls, jobs) and the alert log. */
#include <inttypes.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "draw.h"
#include "npu.h"
#include "pane.h"
#include "sparkline.h"
#include "table_view.h"
#include "tui.h"
#include "view_alerts.h"
#include "views.h"

/* Text the tests look for. */
#define XPU_NPU_SOURCES_TITLE "Sources"
#define XPU_NPU_IPC_LABEL "IPC"
#define XPU_NPU_FUNCS_TITLE "Driver functions"
#define XPU_NPU_CARD_TITLE "Alert card"
#define XPU_NPU_CHAINS_TITLE "Chains since start: process, Level Zero call -> ioctl -> driver function (t: next table)"

/* Which table the table keys move (t cycles them). */
enum { FOCUS_CALLS = 0, FOCUS_FUNCS = 1, FOCUS_CHAINS = 2 };

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

/* Rows the panel takes with no NPU: the status line and the sources list. */
static int text_rows(const struct xpu_snapshot *s)
{
	return 1 + 1 + (int)s->npu.sources.n;	/* status, title, sources */
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
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, " (oldest %s%s)", old,
			      n->jobs_by_order ? ", matched by order" : "");
	else if (n->jobs_by_order && k > 0)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, " (matched by order)");
	if (k > 0)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, "  latency p50 %s p99 %s max %s  aborted %" PRIu64,
			      n->lat_valid ? p50 : "N/A", n->lat_valid ? p99 : "N/A", n->lat_valid ? max : "N/A",
			      n->aborted_total);
	/* Whose the completions' IRQ/IPC work is (the calls table's irq rows). */
	if (k > 0 && (size_t)k < sizeof(buf) && n->irq_linked)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, "  IRQ/IPC: %" PRIu64 " charged to jobs' processes",
			      n->irq_linked);
	else if (k > 0 && (size_t)k < sizeof(buf) && n->irq_unlinked)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, "  IRQ/IPC: no process (no job ids to match)");
	if (k > 0 && (size_t)k < sizeof(buf) && n->jobs_dropped)
		snprintf(buf + k, sizeof(buf) - (size_t)k, "  trace export: last %" PRIu64 " jobs, %" PRIu64
			 " older dropped", n->jobs_kept, n->jobs_dropped);
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

/* The sources list, one line each with what it is doing, from row y. */
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

/* The sources folded to one line: those at work by name, in their state's
 * colour, the others counted ("ivpu probes, Level Zero active  11 off"). */
static void line_sources(int y, const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	static const enum xpu_src_state order[] = { XPU_SRC_ACTIVE, XPU_SRC_WAITING, XPU_SRC_FAILED, XPU_SRC_OFF };
	const struct xpu_npu_srcinfo *si = &s->npu.sources;
	int x = label(y, r, XPU_NPU_SOURCES_TITLE), end = r->x + r->w;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]) && x < end; k++) {
		attr_t a = xpu_draw_attr(xpu_src_state_role(order[k]));
		uint32_t n = 0;
		for (uint32_t i = 0; i < si->n; i++)
			n += si->line[i].state == (int)order[k];
		if (!n)
			continue;
		char buf[48];
		if (order[k] == XPU_SRC_OFF && n > 2) {
			snprintf(buf, sizeof(buf), "%u off", n);
			x += xpu_put_text(y, x, end - x, buf, a, 1) + 2;
			continue;
		}
		uint32_t done = 0;
		for (uint32_t i = 0; i < si->n && x < end; i++) {
			if (si->line[i].state != (int)order[k])
				continue;
			snprintf(buf, sizeof(buf), "%s%s", si->line[i].name, ++done < n ? ", " : " ");
			x += xpu_put_text(y, x, end - x, buf, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
		}
		if (x < end)
			x += xpu_put_text(y, x, end - x, xpu_src_state_name(order[k]), a, 1) + 2;
	}
}

/* The panel's lines in the order shown, each with its rank: on a short
 * panel the lines of the lowest ranks are the ones drawn. */
enum { L_IPC, L_TYPES, L_JOBS, L_MEMORY, L_DEVICE, L_SOURCES, L_N };
static const int line_rank[L_N] = {
	[L_IPC] = 1, [L_JOBS] = 2, [L_MEMORY] = 3, [L_SOURCES] = 4, [L_DEVICE] = 5, [L_TYPES] = 6,
};
#define PANEL_ROWS (1 + L_N)	/* the status line and every line above */
#define PANEL_MIN 5		/* status, IPC, jobs, memory, sources */

static void draw_panel(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	const struct xpu_src_status *st = &s->npu.status;
	int y = r->y, last = r->y + r->h - 1;
	void (*const lines[L_N])(int, const struct xpu_rect *, const struct xpu_npu_snap *) = {
		[L_IPC] = line_ipc, [L_TYPES] = line_types, [L_JOBS] = line_jobs,
		[L_MEMORY] = line_memory, [L_DEVICE] = line_device,
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
	for (int i = 0; i < L_N && y <= last; i++) {
		if (line_rank[i] >= r->h)
			continue;
		if (i == L_SOURCES)
			line_sources(y++, r, s);
		else
			lines[i](y++, r, n);
	}
}

/* The share line's parts: the head, then one part per category seen, its
 * share since the start and, where it differs, now (the window's). */
static int share_parts(const struct xpu_npu_snap *n, char parts[][64], int max)
{
	int k = 1, differ = 0;
	for (uint32_t c = 0; c < XPU_NPU_NCAT && k < max; c++) {
		const struct xpu_npu_cat_snap *cs = &n->cats[c];
		if (!cs->total)
			continue;
		if (strcmp(cs->share_text, cs->share_total_text)) {
			snprintf(parts[k++], 64, "%s %s (%s)", xpu_npu_cat_name(c), cs->share_total_text, cs->share_text);
			differ = 1;
		} else {
			snprintf(parts[k++], 64, "%s %s", xpu_npu_cat_name(c), cs->share_total_text);
		}
	}
	snprintf(parts[0], 64, " " XPU_NPU_FUNCS_TITLE "  %" PRIu64 " calls since start%s:", n->fn_total,
		 differ ? " (now)" : "");
	if (n->fn_lat_note[0] && k < max)
		snprintf(parts[k++], 64, "[%s]", n->fn_lat_note);
	return k;
}

/* Lays the share line out on a pane w wide, whole: a part moves to the next
 * line rather than be cut.  Draws it from row y when draw; returns its rows. */
static int share_line(const struct xpu_npu_snap *n, int y, int x0, int w, int draw)
{
	char parts[2 + XPU_NPU_NCAT][64];
	int k = share_parts(n, parts, 2 + XPU_NPU_NCAT), rows = 1, x = 0;
	attr_t a = xpu_draw_attr(XPU_ROLE_FLAME_TITLE);
	if (draw)
		xpu_fill(y, x0, w, a);
	for (int i = 0; i < k; i++) {
		int tw = xpu_text_width(parts[i]), at = i ? x + 2 : 0;	/* the head has its leading space */
		if (i && at + tw > w) {
			rows++;
			at = 1;
			if (draw)
				xpu_fill(y + rows - 1, x0, w, a);
		}
		if (draw)
			xpu_put_text(y + rows - 1, x0 + at, w - at, parts[i], a, 1);
		x = at + tw;
	}
	return rows;
}

/* Function rows the lower pane asks for before the text above takes more. */
#define FUNCS_FLOOR 8

static int funcs_rows(const struct xpu_npu_snap *n)
{
	return n->funcs.nrows ? (int)n->funcs.nrows : 1;
}

/* The alert card (Enter): the alert shown on the bar, whole, and for a
 * stall the evidence behind it. */
static const struct xpu_alert *card_alert(const struct xpu_snapshot *s)
{
	if (!s->nalerts)
		return NULL;
	return &s->alerts[s->alert_top >= 0 ? (uint32_t)s->alert_top : s->nalerts - 1];
}

static void clock_ms(char *buf, size_t size, const struct xpu_snapshot *s, uint64_t mono)
{
	uint64_t wall = xpu_snapshot_wall(s, mono);
	time_t t = (time_t)(wall / 1000000000ULL);
	struct tm tm;
	if (!mono || !localtime_r(&t, &tm) || !strftime(buf, size, "%H:%M:%S", &tm)) {
		snprintf(buf, size, "--:--:--");
		return;
	}
	size_t k = strlen(buf);
	snprintf(buf + k, size - k, ".%03u", (unsigned)(wall / 1000000 % 1000));
}

/* Writes a card row: a label and text wrapped below it; returns rows used. */
static int card_row(int y, int last, const struct xpu_rect *r, const char *name, const char *text)
{
	int x = label(y, r, name), used = 0;
	const char *p = text;
	while (*p && y + used <= last) {
		const char *start = p;
		size_t n = xpu_text_wrap(p, r->x + r->w - x, &p);
		char buf[512];
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, start, n);
		buf[n] = '\0';
		xpu_put_text(y + used++, x, r->x + r->w - x, buf, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	}
	return used ? used : 1;
}

static int card_stall(int y, int last, const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_npu_stall_snap *st = &s->npu.model.stall;
	uint64_t end = st->cleared ? st->cleared : st->submit + st->age_ns;
	char buf[256], c[24], d[16], e[16];
	int y0 = y;
	if (!st->shown)
		return 0;
	if (st->job_id_known)
		snprintf(buf, sizeof(buf), "%" PRIu64 " on queue %u (matched to its completion by job id)", st->job_id,
			 st->queue);
	else
		snprintf(buf, sizeof(buf), "on queue %u; submissions in this trace carry no job id: completions are "
			 "matched to jobs by order, so this may be an older job's wait", st->queue);
	y += card_row(y, last, r, "Job", buf);
	if (st->pid && st->exited) {
		dur(d, sizeof(d), st->exited > st->raised ? st->exited - st->raised : st->raised - st->exited);
		snprintf(buf, sizeof(buf), "%u %s, exited %s %s the stall was raised; the job stays outstanding "
			 "until the driver ends it", st->pid, st->comm[0] ? st->comm : "(command not known)", d,
			 st->exited > st->raised ? "after" : "before");
	} else if (st->pid) {
		snprintf(buf, sizeof(buf), "%u %s", st->pid, st->comm[0] ? st->comm : "(command not known)");
	} else
		snprintf(buf, sizeof(buf), "not known (the trace has no pids)");
	y += card_row(y, last, r, "Process", buf);
	clock_ms(c, sizeof(c), s, st->submit);
	dur(d, sizeof(d), st->age_ns);
	snprintf(buf, sizeof(buf), "%s, outstanding %s%s", c, d, st->active ? " and counting" : "");
	y += card_row(y, last, r, "Submit", buf);
	char hb[64], hc[24];
	clock_ms(c, sizeof(c), s, st->last_ipc);
	dur(d, sizeof(d), st->last_ipc && end > st->last_ipc ? end - st->last_ipc : 0);
	clock_ms(hc, sizeof(hc), s, st->last_hb);
	dur(e, sizeof(e), st->last_hb && end > st->last_hb ? end - st->last_hb : 0);
	if (st->last_hb)
		snprintf(hb, sizeof(hb), "%s (%s before)", hc, e);
	else
		snprintf(hb, sizeof(hb), "none seen");
	if (st->last_ipc)
		snprintf(buf, sizeof(buf), "last IPC %s (%s before %s); heartbeat progress %s", c, d,
			 st->active ? "now" : "the clear", hb);
	else
		snprintf(buf, sizeof(buf), "no IPC seen; heartbeat progress %s", hb);
	y += card_row(y, last, r, "Firmware", buf);
	if (st->waits > 1) {
		dur(d, sizeof(d), st->wait_every_ns);
		snprintf(buf, sizeof(buf), "BO_WAIT x%u every %s since the submit", st->waits, d);
	} else {
		snprintf(buf, sizeof(buf), st->waits ? "BO_WAIT x1 since the submit" : "no BO_WAIT seen since the submit");
	}
	y += card_row(y, last, r, "Waits", buf);
	snprintf(buf, sizeof(buf), "%u ms (%s)", st->tdr_ms, st->tdr_origin ? st->tdr_origin : "default");
	y += card_row(y, last, r, "TDR", buf);
	y += card_row(y, last, r, "After", st->after[0] ? st->after : "nothing yet: still stalled");
	return y - y0;
}

static void draw_card(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_alert *a = card_alert(s);
	char head[160], when[24], c[24];
	int y = r->y, last = r->y + r->h - 1;
	if (r->h <= 0)
		return;
	xpu_fill(y, r->x, r->w, xpu_draw_attr(XPU_ROLE_FLAME_TITLE));
	if (!a) {
		xpu_put_text(y, r->x, r->w, " " XPU_NPU_CARD_TITLE ": no alert  (Enter closes)",
			     xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
		return;
	}
	clock_ms(when, sizeof(when), s, a->raised);
	if (a->active)
		snprintf(c, sizeof(c), "active");
	else
		clock_ms(c, sizeof(c), s, a->cleared);
	snprintf(head, sizeof(head), " " XPU_NPU_CARD_TITLE ": %s %s (%s) raised %s, x%u, %s%s  (Enter closes)",
		 xpu_alert_sev_name(a->sev), a->source, a->rule, when, a->count, a->active ? "" : "cleared ", c);
	xpu_put_text(y++, r->x, r->w, head, xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
	y += card_row(y, last, r, "Alert", a->msg);
	if (!strcmp(a->rule, "npu.stall"))
		card_stall(y, last, r, s);
}

/* The lower pane: the share line, the driver functions table, the sources
 * list where rows are left, the alert log at the bottom. */
static void draw_lower(const struct xpu_rect *r, const struct xpu_snapshot *s, struct xpu_ui *ui)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	int share = share_line(n, 0, 0, r->w, 0);
	int amin = xpu_tui_alert_log_rows(s, r->w, 0), aneed = xpu_tui_alert_log_rows(s, r->w, 1);
	int avail = r->h - share - 1;
	if (avail - amin < 1) {	/* too small for a table: the alerts matter more */
		xpu_tui_alert_log_draw(r, s);
		return;
	}
	/* t on the chains: they take the functions' place */
	const struct xpu_table *main = ui->funcs_focus == FOCUS_CHAINS ? &n->chains : &n->funcs;
	int want = main->nrows ? (int)main->nrows : 1;
	int funcs = want < avail - amin ? want : avail - amin;
	int rest = avail - funcs;
	int alerts = rest < aneed ? rest : aneed;
	rest -= alerts;
	int chains = main == &n->funcs && n->chains.nrows && rest >= 3 ? 1 + 1 + (int)n->chains.nrows : 0;
	if (chains > rest)
		chains = rest;
	rest -= chains;
	int srcs = rest >= 1 + (int)s->npu.sources.n ? 1 + (int)s->npu.sources.n : 0;	/* whole or not at all */
	alerts += rest - srcs;
	int y = r->y;
	if (main == &n->chains) {
		for (int i = 0; i < share; i++)
			xpu_fill(y + i, r->x, r->w, xpu_draw_attr(XPU_ROLE_FLAME_TITLE));
		xpu_put_text(y, r->x, r->w, " " XPU_NPU_CHAINS_TITLE, xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
	} else {
		share_line(n, y, r->x, r->w, 1);
	}
	y += share;
	struct xpu_rect table = { y, r->x, 1 + funcs, r->w };
	ui->funcs_page = funcs;
	if (ui->funcs_sel >= (int)main->nrows)
		ui->funcs_sel = main->nrows ? (int)main->nrows - 1 : 0;
	xpu_tui_table_draw(&table, main, ui->funcs_focus ? ui->funcs_sel : -1, &ui->funcs_top,
			   main == &n->chains ? "no chains: no driver function call inside a known Level Zero call or ioctl"
					      : "no driver functions traced (ivpu_* probes or a bpftrace log give them)");
	y += 1 + funcs;
	if (chains) {
		int top = 0;
		struct xpu_rect ct = { y + 1, r->x, chains - 1, r->w };
		xpu_fill(y, r->x, r->w, xpu_draw_attr(XPU_ROLE_FLAME_TITLE));
		xpu_put_text(y, r->x, r->w, " " XPU_NPU_CHAINS_TITLE, xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
		xpu_tui_table_draw(&ct, &n->chains, -1, &top, NULL);
	}
	y += chains;
	if (srcs)
		draw_sources(y, y + srcs - 1, r, s);
	y += srcs;
	struct xpu_rect log = { y, r->x, alerts, r->w };
	xpu_tui_alert_log_draw(&log, s);
}

/* The panel, table and alert log in the layout's text, table and lower
 * panes; the alert card over the table and lower panes. */
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
	if (ui->card && (l->table.h || l->flame.h)) {
		struct xpu_rect c = l->table.h ? l->table : l->flame;
		c.h = l->table.h + l->flame.h;
		draw_card(&c, s);
		return;
	}
	if (l->table.h) {
		ui->page = l->table.h - 1;
		xpu_tui_table_draw(&l->table, t, ui->funcs_focus ? -1 : xpu_tui_table_selected_row(t, vs->selected[XPU_VIEW_NPU]),
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

/* At 80x24 first: five panel lines, the calls table's rows, then the share
 * line, FUNCS_FLOOR function rows and the newest alert whole; rows to spare
 * go to the rest of the panel, then to the functions. */
static void npu_layout(const struct xpu_snapshot *s, const struct xpu_viewstate *vs, int cols,
		       struct xpu_layout_opts *o)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	o->flame = 1;	/* the lower pane holds the functions and the alert log */
	/* No NPU and nothing in the table: its rows go to the sources list,
	 * which says what is missing. */
	if (s->npu.status.state == XPU_SRC_OFF) {
		o->text = text_rows(s);
		if (!n->calls.nrows)
			o->table = 0;
		return;
	}
	int funcs = funcs_rows(n) < FUNCS_FLOOR ? funcs_rows(n) : FUNCS_FLOOR;
	o->text = PANEL_ROWS;
	o->text_min = PANEL_MIN;
	o->table_want = 1 + (n->calls.nrows ? (int)n->calls.nrows : 1);
	o->flame_want = share_line(n, 0, 0, cols, 0) + 1 + funcs + xpu_tui_alert_log_rows(s, cols, 0);
}

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* t moves the table keys to the driver functions and back; while there,
 * they move its cursor.  Enter opens and closes the alert card. */
static int npu_pane_key(struct xpu_ui *ui, const struct xpu_snapshot *s, int key)
{
	static const char *const said[] = {
		[FOCUS_CALLS] = "the table keys move the calls table (t: the driver functions)",
		[FOCUS_FUNCS] = "the table keys move the driver functions table (t: the chains)",
		[FOCUS_CHAINS] = "the chains take the driver functions' place; the table keys move them (t: the calls table)",
	};
	const struct xpu_table *t = ui->funcs_focus == FOCUS_CHAINS ? &s->npu.model.chains : &s->npu.model.funcs;
	int rows = (int)t->nrows, page = ui->funcs_page > 1 ? ui->funcs_page - 1 : 1;
	if (key == 't') {
		ui->funcs_focus = (ui->funcs_focus + 1) % 3;
		ui->funcs_sel = ui->funcs_top = 0;
		xpu_tui_status(said[ui->funcs_focus]);
		return XPU_REACT_REDRAW;
	}
	if (key == '\n' || key == '\r' || key == KEY_ENTER || (key == 27 && ui->card)) {
		ui->card = key == 27 ? 0 : !ui->card;
		if (ui->card && !s->nalerts) {
			ui->card = 0;
			xpu_tui_status("no alert to show: the alert log is empty");
		}
		return XPU_REACT_REDRAW;
	}
	if (!ui->funcs_focus)
		return -1;
	int to = ui->funcs_sel;
	switch (key) {
	case KEY_UP: to--; break;
	case KEY_DOWN: case 'j': to++; break;
	case KEY_PPAGE: to -= page; break;
	case KEY_NPAGE: to += page; break;
	case KEY_HOME: to = 0; break;
	case KEY_END: to = rows - 1; break;
	default: return -1;
	}
	ui->funcs_sel = clamp(to, 0, rows > 0 ? rows - 1 : 0);
	return XPU_REACT_REDRAW;
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
	.pane_key = npu_pane_key,
};
