/* SPDX-License-Identifier: GPL-2.0-only */
#include "view_gpudev.h"

#include <stdio.h>
#include <string.h>

#include "dict.h"
#include "draw.h"
#include "units.h"
#include "pane.h"

#define LABEL_W 6	/* "GPU12 " */
#define NAME_W 28
#define NAME_MIN 12
#define METER_PREF 24	/* "MEM[|||  12.0/80.0 GiB]" and a little bar */
#define METER_MIN 14
#define METER_MAX 44

/* How much of each device is drawn: the panel sheds detail to fit. */
enum detail { ONE_LINE = 1, TWO_LINES = 2, WITH_PROCS = 3 };

/* A line being written left to right, clipped at end. */
struct pen {
	int y, x, end;
};

static void put(struct pen *p, enum xpu_role role, const char *text)
{
	if (p->x < p->end)
		p->x += xpu_put_text(p->y, p->x, p->end - p->x, text, xpu_draw_attr(role), 1);
}

/* "label value", the value dim and "N/A" when unknown. */
static void field(struct pen *p, const char *label, uint32_t known, const char *value)
{
	put(p, XPU_ROLE_DEFAULT, label);
	put(p, known ? XPU_ROLE_DEFAULT : XPU_ROLE_NA, known ? value : "N/A");
}

static void gap(struct pen *p)
{
	put(p, XPU_ROLE_DEFAULT, "  ");
}

static uint32_t shown_procs(const struct xpu_gpudev_snap *g, uint32_t index)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nproc; i++)
		n += g->proc[i].index == index;
	return n;
}

/* Process lines of a device: up to XPU_VIEW_GPUDEV_PROCS, then "+N more". */
static int proc_lines(const struct xpu_gpudev_snap *g, const struct xpu_gpudev *d)
{
	uint32_t shown = shown_procs(g, d->index);
	uint32_t drawn = shown < XPU_VIEW_GPUDEV_PROCS ? shown : XPU_VIEW_GPUDEV_PROCS;
	return (int)drawn + (d->nprocs > drawn);
}

static int rows_at(const struct xpu_snapshot *s, enum detail detail)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	int n = 1;	/* the state line */
	for (uint32_t i = 0; i < g->ndev; i++)
		n += (detail >= TWO_LINES ? 2 : 1) + (detail == WITH_PROCS ? proc_lines(g, &g->dev[i]) : 0);
	return n;
}

int xpu_view_gpudev_rows(const struct xpu_snapshot *s)
{
	return s->gpu.dev.ndev || s->gpu.dev.status[0] ? rows_at(s, WITH_PROCS) : 0;
}

int xpu_view_gpudev_has_data(const struct xpu_snapshot *s)
{
	return s->gpu.dev.ndev > 0 || s->gpu.dev.state == XPU_SRC_FAILED;
}

/* A gauge as nvtop draws it: "GPU[|||||     45%]", the text inside at the right. */
static void meter(struct pen *p, int w, const char *label, uint32_t known, double pct, const char *text)
{
	char bar[METER_MAX + 1];
	int inner = w - (int)strlen(label) - 2;
	if (inner < 4)
		return;
	int fill = known ? (int)(pct / 100.0 * inner + 0.5) : 0;
	fill = fill < 0 ? 0 : fill > inner ? inner : fill;
	int tw = (int)strlen(text) < inner ? (int)strlen(text) : inner;
	memset(bar, '|', (size_t)fill);
	memset(bar + fill, ' ', (size_t)(inner - fill));
	memcpy(bar + inner - tw, text, (size_t)tw);
	bar[inner] = '\0';
	put(p, XPU_ROLE_DEFAULT, label);
	put(p, XPU_ROLE_DEFAULT, "[");
	char rest = bar[fill];
	bar[fill] = '\0';
	put(p, XPU_ROLE_METER, bar);
	bar[fill] = rest;
	put(p, known ? XPU_ROLE_DEFAULT : XPU_ROLE_NA, bar + fill);
	put(p, XPU_ROLE_DEFAULT, "]  ");
}

/* "12.0/80.0 GiB", or "512 MiB/80.0 GiB" when the units differ. */
static void used_of_total(char *buf, size_t size, uint64_t used, uint64_t total)
{
	char u[24], t[24];
	xpu_fmt_bytes(u, sizeof(u), (double)used);
	xpu_fmt_bytes(t, sizeof(t), (double)total);
	const char *us = strrchr(u, ' '), *ts = strrchr(t, ' ');
	if (us && ts && strcmp(us, ts) == 0)
		snprintf(buf, size, "%.*s/%s", (int)(us - u), u, t);
	else
		snprintf(buf, size, "%s/%s", u, t);
}

/* The name gives up columns to the gauges on a narrow terminal. */
static int name_width(const struct pen *p)
{
	int w = p->end - p->x - 2 * (METER_PREF + 2) - 2;
	return w > NAME_W ? NAME_W : w < NAME_MIN ? NAME_MIN : w;
}

static void line_gauges(struct pen *p, const struct xpu_snapshot *s, const struct xpu_gpudev *d)
{
	char buf[96];
	snprintf(buf, sizeof(buf), "GPU%u", d->index);
	put(p, XPU_ROLE_TABLE_HEAD, buf);
	p->x += LABEL_W - (int)strlen(buf);
	int nw = name_width(p);
	snprintf(buf, sizeof(buf), "%s%s", d->name ? xpu_dict_str_get(s->dict, d->name) : "(name N/A)",
		 d->mig ? " (MIG)" : "");
	if (p->x + nw <= p->end)
		xpu_put_text(p->y, p->x, nw, buf, xpu_draw_attr(d->name ? XPU_ROLE_DEFAULT : XPU_ROLE_NA), 1);
	p->x += nw;
	put(p, XPU_ROLE_DEFAULT, "  ");
	if (d->stale) {
		snprintf(buf, sizeof(buf), "no sample from the driver for %.0f s", d->age_s);
		put(p, XPU_ROLE_NA, buf);
		return;
	}
	int w = (p->end - p->x) / 2 - 2;
	w = w < METER_MIN ? METER_MIN : w > METER_MAX ? METER_MAX : w;
	uint32_t util = d->valid & XPU_GPU_DEV_UTIL, mem = d->valid & XPU_GPU_DEV_MEM;
	snprintf(buf, sizeof(buf), "%.0f%%", d->util_gpu);
	meter(p, w, "GPU", util, d->util_gpu, util ? buf : "N/A");
	used_of_total(buf, sizeof(buf), d->mem_used, d->mem_total);
	meter(p, w, "MEM", mem, d->mem_pct, mem ? buf : "N/A");
}

/* Two rates: "rx 1.2 GiB/s tx 300 MiB/s". */
static void rx_tx(struct pen *p, uint32_t rx_known, double rx, uint32_t tx_known, double tx)
{
	char a[32], b[32];
	xpu_fmt_byte_rate(a, sizeof(a), rx);
	xpu_fmt_byte_rate(b, sizeof(b), tx);
	field(p, " rx ", rx_known, a);
	field(p, " tx ", tx_known, b);
}

static void line_state(struct pen *p, const struct xpu_gpudev *d)
{
	char a[32];
	uint32_t v = d->valid;
	p->x += LABEL_W;
	snprintf(a, sizeof(a), "%u%s", d->temp_c, xpu_draw_utf8() ? "°C" : " C");
	field(p, "temp ", v & XPU_GPU_DEV_TEMP, a);
	gap(p);
	snprintf(a, sizeof(a), "%.0f", d->power_w);
	field(p, "power ", v & XPU_GPU_DEV_POWER, a);
	snprintf(a, sizeof(a), "%.0f W", d->power_limit_w);
	field(p, " / ", v & XPU_GPU_DEV_POWER_LIMIT, a);
	gap(p);
	snprintf(a, sizeof(a), "%u", d->sm_mhz);
	field(p, "clocks SM ", v & XPU_GPU_DEV_SM_CLOCK, a);
	snprintf(a, sizeof(a), "%u MHz", d->mem_mhz);
	field(p, " mem ", v & XPU_GPU_DEV_MEM_CLOCK, a);
	gap(p);
	snprintf(a, sizeof(a), "%.0f%%", d->util_mem);
	field(p, "mem busy ", v & XPU_GPU_DEV_MEM_UTIL, a);
	gap(p);
	put(p, XPU_ROLE_DEFAULT, "PCIe");
	rx_tx(p, v & XPU_GPU_DEV_PCIE_RX, d->pcie_rx, v & XPU_GPU_DEV_PCIE_TX, d->pcie_tx);
	if ((v & XPU_GPU_DEV_NVLINKS) && !d->nvlinks)
		return;	/* a GPU without NVLink */
	gap(p);
	snprintf(a, sizeof(a), "x%u", d->nvlinks);
	field(p, "NVLink ", v & XPU_GPU_DEV_NVLINKS, a);
	rx_tx(p, v & XPU_GPU_DEV_NVLINK_RX, d->nvlink_rx, v & XPU_GPU_DEV_NVLINK_TX, d->nvlink_tx);
}

static void line_proc(struct pen *p, const struct xpu_snapshot *s, const struct xpu_gpudev_proc *q)
{
	char buf[96], ns[32] = "", mem[24];
	uint32_t u = q->valid & XPU_GPU_DEVPROC_UTIL;
	if ((q->valid & XPU_GPU_DEVPROC_NSPID) && q->nspid != q->pid)
		snprintf(ns, sizeof(ns), "(%u in container)", q->nspid);
	p->x += LABEL_W;
	snprintf(buf, sizeof(buf), "pid %-7u %-18s", q->pid, ns);
	put(p, XPU_ROLE_DEFAULT, buf);
	snprintf(buf, sizeof(buf), "%-16s ", q->comm ? xpu_dict_str_get(s->dict, q->comm) : "?");
	put(p, q->comm ? XPU_ROLE_DEFAULT : XPU_ROLE_NA, buf);
	snprintf(buf, sizeof(buf), "%-10.10s %-8s ", q->user ? xpu_dict_str_get(s->dict, q->user) : "-",
		 xpu_gpudev_proc_type(q->valid));
	put(p, XPU_ROLE_DEFAULT, buf);
	xpu_fmt_bytes(mem, sizeof(mem), (double)q->mem);
	snprintf(buf, sizeof(buf), "%9s", mem);
	field(p, "", q->valid & XPU_GPU_DEVPROC_MEM, buf);
	gap(p);
	snprintf(buf, sizeof(buf), "%3u%%", q->sm_pct);
	field(p, "SM ", u, buf);
	gap(p);
	snprintf(buf, sizeof(buf), "%3u%%", q->mem_pct);
	field(p, "mem ", u, buf);
}

static int draw_procs(const struct xpu_rect *r, int y, const struct xpu_snapshot *s,
		      const struct xpu_gpudev *d)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	uint32_t drawn = 0;
	for (uint32_t i = 0; i < g->nproc && drawn < XPU_VIEW_GPUDEV_PROCS; i++) {
		if (g->proc[i].index != d->index)
			continue;
		struct pen p = { y++, r->x + 1, r->x + r->w - 1 };
		line_proc(&p, s, &g->proc[i]);
		drawn++;
	}
	if (d->nprocs > drawn) {
		char buf[64];
		struct pen p = { y++, r->x + 1 + LABEL_W, r->x + r->w - 1 };
		snprintf(buf, sizeof(buf), "+%u more process%s", d->nprocs - drawn,
			 d->nprocs - drawn == 1 ? "" : "es");
		put(&p, XPU_ROLE_NA, buf);
	}
	return y;
}

static void line_status(const struct xpu_rect *r, const struct xpu_gpudev_snap *g)
{
	struct pen p = { r->y, r->x + 1, r->x + r->w - 1 };
	put(&p, XPU_ROLE_TABLE_HEAD, "devices");
	put(&p, XPU_ROLE_DEFAULT, " ");
	put(&p, (enum xpu_role)xpu_src_state_role(g->state), xpu_src_state_name(g->state));
	put(&p, XPU_ROLE_DEFAULT, "  ");
	put(&p, XPU_ROLE_DEFAULT, g->status);
}

int xpu_view_gpudev_draw(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	enum detail detail = WITH_PROCS;
	int y = r->y + 1;
	if (r->h <= 0 || !xpu_view_gpudev_rows(s))
		return 0;
	while (detail > ONE_LINE && rows_at(s, detail) > r->h)
		detail--;
	line_status(r, g);
	for (uint32_t i = 0; i < g->ndev && y < r->y + r->h; i++) {
		const struct xpu_gpudev *d = &g->dev[i];
		struct pen p = { y++, r->x + 1, r->x + r->w - 1 };
		line_gauges(&p, s, d);
		if (detail >= TWO_LINES && y < r->y + r->h) {
			struct pen q = { y++, r->x + 1, r->x + r->w - 1 };
			line_state(&q, d);
		}
		if (detail == WITH_PROCS)
			y = draw_procs(r, y, s, d);
	}
	return y - r->y;
}
