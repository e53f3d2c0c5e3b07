/* SPDX-License-Identifier: GPL-2.0-only */
#include "model_npu.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "event.h"
#include "grow.h"
#include "model_npu_int.h"
#include "npu.h"

const struct xpu_col xpu_npu_cols[XPU_NPU_NCOLS] = {
	[XPU_NPU_COL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },
	[XPU_NPU_COL_COMM] = { "COMMAND", "comm", XPU_CELL_STR, 15, XPU_COL_LEFT },
	[XPU_NPU_COL_KIND] = { "API", "api", XPU_CELL_STR, 5, XPU_COL_LEFT },
	[XPU_NPU_COL_CALL] = { "CALL", "call", XPU_CELL_STR, 22, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_NPU_COL_RATE] = { "CALLS/s", "per_s", XPU_CELL_RATE, 8, 0 },
	[XPU_NPU_COL_AVG] = { "AVG/s", "avg_per_s", XPU_CELL_RATE, 7, 0 },
	[XPU_NPU_COL_TOTAL] = { "COUNT", "count", XPU_CELL_INT, 8, 0 },
	[XPU_NPU_COL_ERRORS] = { "ERR", "errors", XPU_CELL_INT, 6, 0 },
	[XPU_NPU_COL_ERRNO] = { "ERRNO", "errno", XPU_CELL_STR, 13, XPU_COL_LEFT },
	[XPU_NPU_COL_P50] = { "P50", "p50_ns", XPU_CELL_NS, 8, 0 },
	[XPU_NPU_COL_P99] = { "P99", "p99_ns", XPU_CELL_NS, 8, 0 },
	[XPU_NPU_COL_BUSY] = { "BUSY%", "busy_pct", XPU_CELL_PCT, 6, 0 },
};

const struct xpu_col xpu_npu_fcols[XPU_NPU_NFCOLS] = {
	[XPU_NPU_FCOL_FUNC] = { "DRIVER FUNCTION", "function", XPU_CELL_STR, 26, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_NPU_FCOL_CAT] = { "CATEGORY", "category", XPU_CELL_STR, 17, XPU_COL_LEFT },
	[XPU_NPU_FCOL_RATE] = { "CALLS/s", "per_s", XPU_CELL_RATE, 8, 0 },
	[XPU_NPU_FCOL_COUNT] = { "COUNT", "count", XPU_CELL_INT, 8, 0 },
	[XPU_NPU_FCOL_TOTAL] = { "TOTAL", "total", XPU_CELL_INT, 8, 0 },
	[XPU_NPU_FCOL_SHARE] = { "SHARE%", "share_pct", XPU_CELL_PCT, 7, XPU_COL_SPARE },
	[XPU_NPU_FCOL_P50] = { "P50", "p50_ns", XPU_CELL_NS, 7, XPU_COL_SPARE },
	[XPU_NPU_FCOL_P99] = { "P99", "p99_ns", XPU_CELL_NS, 7, 0 },
	[XPU_NPU_FCOL_MAX] = { "MAX", "max_ns", XPU_CELL_NS, 7, XPU_COL_SPARE },
	[XPU_NPU_FCOL_TIMED] = { "TIMED", "timed", XPU_CELL_INT, 8, XPU_COL_JSON_ONLY },
	[XPU_NPU_FCOL_UNTIMED] = { "UNTIMED", "untimed", XPU_CELL_INT, 8, XPU_COL_JSON_ONLY },
};

const struct xpu_col xpu_npu_kcols[XPU_NPU_NKCOLS] = {
	[XPU_NPU_KCOL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },
	[XPU_NPU_KCOL_COMM] = { "COMMAND", "comm", XPU_CELL_STR, 15, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_NPU_KCOL_CLIENT] = { "CLIENT", "client_id", XPU_CELL_INT, 6, 0 },
	[XPU_NPU_KCOL_TOTAL] = { "NPU MEM", "total_bytes", XPU_CELL_BYTES, 8, 0 },
	[XPU_NPU_KCOL_RESIDENT] = { "RESIDENT", "resident_bytes", XPU_CELL_BYTES, 8, 0 },
	[XPU_NPU_KCOL_ENGINE] = { "ENGINE%", "engine_pct", XPU_CELL_PCT, 7, 0 },
};

const struct xpu_col xpu_npu_ccols[XPU_NPU_NCCOLS] = {
	[XPU_NPU_CCOL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },
	[XPU_NPU_CCOL_COMM] = { "COMMAND", "comm", XPU_CELL_STR, 15, XPU_COL_LEFT },
	[XPU_NPU_CCOL_L0] = { "LEVEL ZERO", "l0", XPU_CELL_STR, 22, XPU_COL_LEFT },
	[XPU_NPU_CCOL_IOCTL] = { "IOCTL", "ioctl", XPU_CELL_STR, 16, XPU_COL_LEFT },
	[XPU_NPU_CCOL_FUNC] = { "DRIVER FUNCTION", "function", XPU_CELL_STR, 26, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_NPU_CCOL_RATE] = { "CALLS/s", "per_s", XPU_CELL_RATE, 8, 0 },
	[XPU_NPU_CCOL_TOTAL] = { "TOTAL", "total", XPU_CELL_INT, 8, 0 },
};

/* ---- names ---- */

static const struct { uint16_t cmd; const char *name; } ioctl_names[] = {
	{ 0x6400, "DRM_VERSION" }, { 0x6409, "DRM_GEM_CLOSE" }, { 0x640c, "DRM_GET_CAP" },
	{ 0x642d, "DRM_PRIME_HANDLE_TO_FD" }, { 0x642e, "DRM_PRIME_FD_TO_HANDLE" },
	{ 0x6440, "IVPU_GET_PARAM" }, { 0x6441, "IVPU_SET_PARAM" }, { 0x6442, "IVPU_BO_CREATE" },
	{ 0x6443, "IVPU_BO_INFO" }, { 0x6445, "IVPU_SUBMIT" }, { 0x6446, "IVPU_BO_WAIT" },
	{ 0x6447, "IVPU_METRIC_STREAMER_START" }, { 0x6448, "IVPU_METRIC_STREAMER_STOP" },
	{ 0x6449, "IVPU_METRIC_STREAMER_GET_DATA" }, { 0x644a, "IVPU_METRIC_STREAMER_GET_INFO" },
	{ 0x644b, "IVPU_CMDQ_CREATE" }, { 0x644c, "IVPU_CMDQ_DESTROY" }, { 0x644d, "IVPU_CMDQ_SUBMIT" },
	{ 0x644e, "IVPU_BO_CREATE_FROM_USERPTR" },
};

const char *xpu_npu_ioctl_name(uint32_t cmd)
{
	for (size_t i = 0; i < sizeof(ioctl_names) / sizeof(ioctl_names[0]); i++)
		if (ioctl_names[i].cmd == (cmd & 0xffff))
			return ioctl_names[i].name;
	return NULL;
}

const char *xpu_npu_l0_name(uint32_t api)
{
	static const char *names[XPU_NPU_L0_API_MAX] = {
		[XPU_NPU_L0_EXECUTE] = "zeCommandQueueExecuteCommandLists",
		[XPU_NPU_L0_QUEUE_SYNC] = "zeCommandQueueSynchronize",
		[XPU_NPU_L0_FENCE_SYNC] = "zeFenceHostSynchronize",
		[XPU_NPU_L0_EVENT_SYNC] = "zeEventHostSynchronize",
		[XPU_NPU_L0_ALLOC_HOST] = "zeMemAllocHost",
		[XPU_NPU_L0_ALLOC_DEVICE] = "zeMemAllocDevice",
		[XPU_NPU_L0_ALLOC_SHARED] = "zeMemAllocShared",
	};
	return api < XPU_NPU_L0_API_MAX ? names[api] : NULL;
}

const char *xpu_npu_mem_name(uint32_t code)
{
	static const char *names[XPU_NPU_MEM_MAX] = {
		[XPU_NPU_MEM_BO_CREATE] = "bo_create", [XPU_NPU_MEM_BIND] = "bind",
		[XPU_NPU_MEM_MAP] = "mmu_map", [XPU_NPU_MEM_UNMAP] = "mmu_unmap",
		[XPU_NPU_MEM_FAULT] = "mmu_fault", [XPU_NPU_MEM_OTHER_MMU] = "mmu_other",
		[XPU_NPU_MEM_OTHER_BO] = "bo_other", [XPU_NPU_MEM_MAP_PAGE] = "map_page",
		[XPU_NPU_MEM_FREE_PAGE] = "free_page",
	};
	return code < XPU_NPU_MEM_MAX ? names[code] : NULL;
}

/* ---- calls ---- */

/* Keeps the four most frequent error codes of a row. */
static void err_note(struct xpu_npu_call *c, uint32_t code, uint64_t n)
{
	int min = 0;
	for (int i = 0; i < 4; i++) {
		if (c->err_count[i] && c->err_code[i] == code) {
			c->err_count[i] += n;
			return;
		}
		if (c->err_count[i] < c->err_count[min])
			min = i;
	}
	if (c->err_count[min] <= n) {
		c->err_code[min] = code;
		c->err_count[min] = n;
	}
}

/* ---- init / free ---- */

static void cfg_defaults(struct xpu_npu_cfg *c)
{
	if (!(c->storm_factor > 1))
		c->storm_factor = 5;
	if (!(c->storm_min > 0))
		c->storm_min = 50;
	if (!c->silence_ms)
		c->silence_ms = 1000;
	if (!c->learn_ticks)
		c->learn_ticks = 5;
	if (!c->learn_jobs)
		c->learn_jobs = 8;
}

int xpu_npu_model_init(struct xpu_npu_model *m, const struct xpu_npu_cfg *cfg, uint32_t window_ticks,
		       struct xpu_alerts *alerts)
{
	memset(m, 0, sizeof(*m));
	if (cfg)
		m->cfg = *cfg;
	cfg_defaults(&m->cfg);
	m->alerts = alerts;
	m->max_calls = XPU_NPU_MAX_CALL_ROWS;
	xpu_htab_init(&m->idx);
	xpu_htab_init(&m->fn_idx);
	xpu_htab_init(&m->chain_idx);
	if (xpu_ticks_init(&m->ticks, window_ticks) < 0)
		goto fail;
	xpu_win_hist_init(&m->job_lat, m->ticks.window, XPU_NPU_HIST_BUCKETS);
	for (int i = 0; i < XPU_NPU_NCTR; i++)
		if (xpu_win_count_init(&m->g[i], m->ticks.window) < 0)
			goto fail;
	for (int i = 0; i < XPU_NPU_NCAT; i++)
		if (xpu_win_count_init(&m->cat[i], m->ticks.window) < 0)
			goto fail;
	return 0;
fail:
	xpu_npu_model_free(m);
	return -ENOMEM;
}

void xpu_npu_model_free(struct xpu_npu_model *m)
{
	for (uint32_t i = 0; i < m->ncalls; i++)
		xpu_npu_call_free(&m->calls[i]);
	for (uint32_t i = 0; i < m->ntypes; i++) {
		xpu_win_count_free(&m->types[i].tx);
		xpu_win_count_free(&m->types[i].rx);
	}
	for (int i = 0; i < XPU_NPU_NCTR; i++)
		xpu_win_count_free(&m->g[i]);
	for (int i = 0; i < XPU_NPU_NCAT; i++)
		xpu_win_count_free(&m->cat[i]);
	for (uint32_t i = 0; i < m->nfns; i++) {
		xpu_win_count_free(&m->fns[i].calls);
		xpu_win_count_free(&m->fns[i].untimed);
		xpu_win_hist_free(&m->fns[i].lat);
	}
	free(m->fns);
	free(m->chains);
	xpu_htab_free(&m->fn_idx);
	xpu_htab_free(&m->chain_idx);
	xpu_win_hist_free(&m->job_lat);
	free(m->calls);
	free(m->jobs);
	free(m->ring);
	xpu_ticks_free(&m->ticks);
	xpu_htab_free(&m->idx);
	memset(m, 0, sizeof(*m));
}

void xpu_npu_model_source(struct xpu_npu_model *m, const char *name, int state, const char *fmt, ...)
{
	struct xpu_npu_srcinfo *s = &m->sources;
	uint32_t i = 0;
	va_list ap;

	while (i < s->n && strcmp(s->line[i].name, name) != 0)
		i++;
	if (i == XPU_NPU_MAX_SRCLINES)
		return;
	if (i == s->n)
		s->n++;
	snprintf(s->line[i].name, sizeof(s->line[i].name), "%s", name);
	s->line[i].state = state;
	va_start(ap, fmt);
	vsnprintf(s->line[i].detail, sizeof(s->line[i].detail), fmt, ap);
	va_end(ap);
}

/* ---- events ---- */

static void on_pm(struct xpu_npu_model *m, const struct xpu_dict *d, const struct xpu_event *ev,
		  uint64_t n)
{
	const struct xpu_ev_npu *e = &ev->npu;
	if (e->code < XPU_NPU_PM_MAX)
		m->g[XPU_NPU_C_PM0 + e->code].open += n;
	if (e->code == XPU_NPU_PM_TDR && e->arg > 0 && e->arg < 3600000) {
		m->tdr_ms_driver = (uint32_t)e->arg;
	} else if (e->code == XPU_NPU_PM_RECOVERY) {
		const char *reason = e->aux ? xpu_dict_str_get(d, e->aux) : NULL;
		m->last_recovery_reason = e->aux;
		xpu_npu_stall_after(m, XPU_NPU_AFTER_RECOVERY, ev->time, "the driver recovered the NPU (reason: %s)",
				    reason && *reason ? reason : "not known");
		xpu_alert_raise(m->alerts, XPU_ALERT_CRITICAL, "npu", "npu.recovery", 0, ev->time,
				XPU_NPU_ALERT_HOLD_NS, "NPU recovery (reason: %s)",
				reason && *reason ? reason : "not known");
	}
}

static void on_busy(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	if (ev->npu.aux >= XPU_NPU_MAX_DEVICES)
		return;
	struct xpu_npu_device *d = &m->dev[ev->npu.aux];
	d->prev_us = d->busy_us;
	d->prev_ns = d->at_ns;
	d->busy_us = ev->npu.arg;
	d->at_ns = ev->time;
	d->readings++;
}

static void on_dev(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	if (ev->ndev.index >= XPU_NPU_MAX_DEVICES)
		return;
	m->dev[ev->ndev.index].state = ev->ndev;
	m->dev[ev->ndev.index].have_state = 1;
}

/* A file is one client id of one process (a dup'ed descriptor is the same). */
static void on_client(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_npu_client *c = &ev->nclient;
	uint32_t i = 0;
	while (i < m->nclients && !(m->clients[i].pid == ev->pid && m->clients[i].c.client_id == c->client_id &&
				     m->clients[i].c.index == c->index))
		i++;
	if (i == m->nclients) {
		if (m->nclients == XPU_NPU_MAX_CLIENTS)
			return;
		m->clients[m->nclients++] = (struct xpu_npu_client){ .pid = ev->pid };
	}
	struct xpu_npu_client *k = &m->clients[i];
	k->prev_at = k->at;
	k->prev_engine_ns = k->c.engine_ns;
	k->c = *c;
	k->at = ev->time;
	k->samples++;
}

static void clients_expire(struct xpu_npu_model *m, uint64_t now)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->nclients; i++)
		if (now < m->clients[i].at + XPU_NPU_CLIENT_STALE_NS)
			m->clients[n++] = m->clients[i];
	m->nclients = n;
}

static int on_call(struct xpu_npu_model *m, const struct xpu_event *ev, uint32_t kind, uint64_t n)
{
	const struct xpu_ev_npu *e = &ev->npu;
	uint32_t i = xpu_npu_call_get(m, ev->pid, kind, kind == XPU_NPU_KIND_IOCTL ? e->code & 0xffff : e->code,
			      e->comm);
	if (i == UINT32_MAX)
		return -ENOMEM;
	struct xpu_npu_call *c = &m->calls[i];
	c->calls.open += n;
	m->g[kind == XPU_NPU_KIND_IOCTL ? XPU_NPU_C_IOCTL : XPU_NPU_C_L0].open += n;
	if (kind == XPU_NPU_KIND_IOCTL && (e->code & 0xff) == XPU_NPU_NR_BO_WAIT) {
		m->waits_by_ioctl = 1;
		xpu_npu_on_wait(m, ev->pid, ev->time, n);
	}
	if (e->result != 0) {
		c->errors.open += n;
		err_note(c, kind == XPU_NPU_KIND_IOCTL ? (uint32_t)-e->result : (uint32_t)e->result, n);
		if (kind == XPU_NPU_KIND_IOCTL)
			m->g[XPU_NPU_C_IOCTL_ERR].open += n;
	}
	if (kind == XPU_NPU_KIND_IOCTL && (e->aux & XPU_NPU_F_NODUR))
		return 0;
	return xpu_npu_lat_add(&c->lat, e->dur_ns, n);
}

/* ---- driver functions ---- */

static int fn_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_npu_model *m = ctx;
	return m->fns[i].name == *(const uint32_t *)k;
}

/* The function's index, or UINT32_MAX when the table is full or memory is out. */
static uint32_t fn_get(struct xpu_npu_model *m, const struct xpu_dict *d, uint32_t name)
{
	uint64_t h = xpu_hash_u64(name);
	uint32_t i = xpu_htab_find(&m->fn_idx, h, fn_eq, m, &name);
	if (i != UINT32_MAX)
		return i;
	const char *text = xpu_dict_str_get(d, name);
	if (!text || m->nfns == XPU_NPU_MAX_FNS ||
	    xpu_grow((void **)&m->fns, &m->capfns, m->nfns + 1, sizeof(*m->fns)))
		return UINT32_MAX;
	struct xpu_npu_fn *f = &m->fns[m->nfns];
	f->name = name;
	f->cat = xpu_npu_fn_category(text);
	f->ioctl = xpu_npu_fn_ioctl(text);
	if (!strcmp(text, "ivpu_mmu_context_map_page"))
		m->fn_map_page = m->nfns + 1;
	if (!strcmp(text, "ivpu_job_done_callback"))
		m->fn_job_done = m->nfns + 1;
	xpu_win_hist_init(&f->lat, m->ticks.window, XPU_NPU_HIST_BUCKETS);
	if (xpu_win_count_init(&f->calls, m->ticks.window) < 0)
		return UINT32_MAX;
	if (xpu_win_count_init(&f->untimed, m->ticks.window) < 0 ||
	    xpu_htab_put(&m->fn_idx, h, m->nfns) < 0) {
		xpu_win_count_free(&f->calls);
		xpu_win_count_free(&f->untimed);
		return UINT32_MAX;
	}
	return m->nfns++;
}

struct chain_key { uint32_t pid, ctx, fn; };

static uint64_t chain_hash(const struct chain_key *k)
{
	return xpu_hash_u64(((uint64_t)k->pid << 32 | k->ctx) ^ ((uint64_t)k->fn << 48));
}

static int chain_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_npu_chain *c = &((const struct xpu_npu_model *)ctx)->chains[i];
	const struct chain_key *key = k;
	return c->pid == key->pid && c->ctx == key->ctx && c->fn == key->fn;
}

/* Calls made inside a known Level Zero call or ioctl, or by a known process, form a chain. */
static void chain_add(struct xpu_npu_model *m, const struct xpu_event *ev, uint32_t fn, uint64_t n)
{
	struct chain_key k = { ev->pid, ev->npu.aux, fn };
	uint64_t h = chain_hash(&k);
	uint32_t i = xpu_htab_find(&m->chain_idx, h, chain_eq, m, &k);
	if (i == UINT32_MAX) {
		if (m->nchains == XPU_NPU_MAX_CHAINS ||
		    xpu_grow((void **)&m->chains, &m->capchains, m->nchains + 1, sizeof(*m->chains)) ||
		    xpu_htab_put(&m->chain_idx, h, m->nchains) < 0) {
			m->chains_over += n;
			return;
		}
		i = m->nchains++;
		m->chains[i] = (struct xpu_npu_chain){ .pid = ev->pid, .ctx = ev->npu.aux, .fn = fn };
	}
	if (ev->npu.comm)
		m->chains[i].comm = ev->npu.comm;
	m->chains[i].calls.open += n;
}

uint64_t xpu_npu_fn_unchained(const struct xpu_npu_model *m, uint32_t fn)
{
	uint64_t n = fn < m->nfns ? m->fns[fn].calls.total : 0;
	for (uint32_t k = 0; k < m->nchains && n; k++)
		if (m->chains[k].fn == fn)
			n -= m->chains[k].calls.total < n ? m->chains[k].calls.total : n;
	return n;
}

uint64_t xpu_npu_irq_take(const struct xpu_npu_model *m, uint32_t i, uint64_t *left)
{
	const struct xpu_npu_call *c = &m->calls[i];
	uint64_t n = c->kind != XPU_NPU_KIND_IRQ ? 0 : c->calls.total < *left ? c->calls.total : *left;
	*left -= n;
	return n;
}

static void on_func(struct xpu_npu_model *m, const struct xpu_dict *d, const struct xpu_event *ev,
		    uint64_t n)
{
	uint32_t i = ev->npu.code ? fn_get(m, d, ev->npu.code) : UINT32_MAX;
	if (i == UINT32_MAX) {
		m->fns_over += n;
		return;
	}
	struct xpu_npu_fn *f = &m->fns[i];
	f->calls.open += n;
	if (i + 1 == m->fn_map_page)
		m->map_pages += n;
	m->cat[f->cat].open += n;
	/* Firmware IPC handled is progress, whether or not each message is seen. */
	if (f->cat == XPU_NPU_CAT_IPC && ev->time > m->last_ipc_fn)
		m->last_ipc_fn = ev->time;
	if ((f->ioctl & 0xff) == XPU_NPU_NR_BO_WAIT && !m->waits_by_ioctl)
		xpu_npu_on_wait(m, ev->pid, ev->time, n);
	/* A call of a known process forms a chain too (a log's pid and
	 * command columns): its per-process row. */
	if (ev->npu.aux || ev->pid)
		chain_add(m, ev, i, n);
}

/* How long calls took; the calls themselves came as NPU_FUNC. */
static int on_func_lat(struct xpu_npu_model *m, const struct xpu_dict *d, const struct xpu_event *ev,
		       uint64_t n)
{
	uint32_t i = ev->npu.code ? fn_get(m, d, ev->npu.code) : UINT32_MAX;
	if (i == UINT32_MAX)
		return 0;	/* its calls are in fns_over */
	m->fn_timed = 1;
	if (ev->npu.aux & XPU_NPU_FLAT_UNTIMED) {
		m->fns[i].untimed.open += n;
		return 0;
	}
	return xpu_npu_lat_add(&m->fns[i].lat, ev->npu.dur_ns, n);
}

int xpu_npu_model_event(struct xpu_npu_model *m, const struct xpu_dict *d, const struct xpu_event *ev)
{
	uint64_t n = ev->npu.count ? ev->npu.count : 1;

	m->events++;
	if (ev->time > m->now)
		m->now = ev->time;
	switch (ev->type) {
	case XPU_EV_NPU_IOCTL:
		return on_call(m, ev, XPU_NPU_KIND_IOCTL, n);
	case XPU_EV_NPU_L0:
		return on_call(m, ev, XPU_NPU_KIND_L0, n);
	case XPU_EV_NPU_IPC:
		xpu_npu_on_ipc(m, ev, n);
		return 0;
	case XPU_EV_NPU_JOB:
		return xpu_npu_on_job(m, ev, n);
	case XPU_EV_NPU_MEM:
		if (ev->npu.code < XPU_NPU_MEM_MAX)
			m->g[XPU_NPU_C_MEM0 + ev->npu.code].open += n;
		if (ev->npu.code == XPU_NPU_MEM_BO_CREATE)
			m->bo_bytes += ev->npu.arg * n;
		return 0;
	case XPU_EV_NPU_PM:
		on_pm(m, d, ev, n);
		return 0;
	case XPU_EV_NPU_BUSY:
		on_busy(m, ev);
		return 0;
	case XPU_EV_NPU_FUNC:
		on_func(m, d, ev, n);
		return 0;
	case XPU_EV_NPU_FUNC_LAT:
		return on_func_lat(m, d, ev, n);
	case XPU_EV_NPU_DEV:
		on_dev(m, ev);
		return 0;
	case XPU_EV_NPU_CLIENT:
		on_client(m, ev);
		return 0;
	default:
		return 0;
	}
}

void xpu_npu_model_tick(struct xpu_npu_model *m, uint64_t now, uint64_t interval_ns)
{
	int full;
	uint32_t slot = xpu_ticks_close(&m->ticks, interval_ns, &full);

	for (int i = 0; i < XPU_NPU_NCTR; i++)
		xpu_win_count_close(&m->g[i], slot, full);
	for (uint32_t i = 0; i < m->ncalls; i++) {
		struct xpu_npu_call *c = &m->calls[i];
		xpu_win_count_close(&c->calls, slot, full);
		xpu_win_count_close(&c->errors, slot, full);
		xpu_win_count_close(&c->busy_ns, slot, full);
		xpu_win_hist_close(&c->lat, slot, full);
	}
	for (uint32_t i = 0; i < m->ntypes; i++) {
		xpu_win_count_close(&m->types[i].tx, slot, full);
		xpu_win_count_close(&m->types[i].rx, slot, full);
	}
	xpu_win_hist_close(&m->job_lat, slot, full);
	for (int i = 0; i < XPU_NPU_NCAT; i++)
		xpu_win_count_close(&m->cat[i], slot, full);
	for (uint32_t i = 0; i < m->nfns; i++) {
		xpu_win_count_close(&m->fns[i].calls, slot, full);
		xpu_win_count_close(&m->fns[i].untimed, slot, full);
		xpu_win_hist_close(&m->fns[i].lat, slot, full);
	}
	for (uint32_t i = 0; i < m->nchains; i++)
		xpu_win_count_close(&m->chains[i].calls, slot, full);

	uint32_t h = (m->hist_head + m->hist_n) % XPU_NPU_HISTORY;
	if (m->hist_n == XPU_NPU_HISTORY)
		m->hist_head = (m->hist_head + 1) % XPU_NPU_HISTORY;
	else
		m->hist_n++;
	m->hist_msgs[h] = m->g[XPU_NPU_C_TX].last + m->g[XPU_NPU_C_RX].last;
	m->hist_ns[h] = interval_ns;

	if (now > m->now)
		m->now = now;
	clients_expire(m, now);
	xpu_npu_jobs_expire(m, now);
	xpu_npu_rule_rate(m, now, interval_ns);
	xpu_npu_rule_silence(m, now);
	xpu_npu_rule_stall(m, now);
	xpu_npu_rule_map_pages(m, now);
	if (m->max_calls && m->ncalls > m->max_calls)
		xpu_npu_calls_trim(m);
}

/* ---- snapshot ---- */

void xpu_npu_snap_init(struct xpu_npu_snap *s)
{
	memset(s, 0, sizeof(*s));
	xpu_table_init(&s->calls, xpu_npu_cols, XPU_NPU_NCOLS);
	xpu_table_init(&s->funcs, xpu_npu_fcols, XPU_NPU_NFCOLS);
	xpu_table_init(&s->chains, xpu_npu_ccols, XPU_NPU_NCCOLS);
	xpu_table_init(&s->clients, xpu_npu_kcols, XPU_NPU_NKCOLS);
}

void xpu_npu_snap_free(struct xpu_npu_snap *s)
{
	xpu_table_free(&s->calls);
	xpu_table_free(&s->funcs);
	xpu_table_free(&s->chains);
	xpu_table_free(&s->clients);
}

static const char *call_name(const struct xpu_npu_call *c, char *buf, size_t size)
{
	const char *n = NULL;
	if (c->kind == XPU_NPU_KIND_IOCTL)
		n = xpu_npu_ioctl_name(c->code);
	else if (c->kind == XPU_NPU_KIND_L0)
		n = xpu_npu_l0_name(c->code);
	else if (c->kind == XPU_NPU_KIND_JOB)
		n = "jobs (submit to done)";
	else
		n = "job completions (IRQ/IPC)";
	if (!n) {
		snprintf(buf, size, c->kind == XPU_NPU_KIND_IOCTL ? "ioctl 0x%04x" : "API %u", c->code);
		n = buf;
	}
	return n;
}

static const char *ze_result_name(uint32_t r)
{
	switch (r) {
	case 0x70000001: return "DEVICE_LOST";
	case 0x70000002: return "OUT_OF_HOST_MEMORY";
	case 0x70000003: return "OUT_OF_DEVICE_MEMORY";
	case 0x78000001: return "UNINITIALIZED";
	case 0x78000003: return "UNSUPPORTED_FEATURE";
	case 0x78000004: return "INVALID_ARGUMENT";
	case 0x78000005: return "INVALID_NULL_HANDLE";
	case 0x78000007: return "INVALID_NULL_POINTER";
	case 0x7fffffff: return "UNKNOWN";
	default: return NULL;
	}
}

static void err_text(const struct xpu_npu_call *c, char *buf, size_t size)
{
	int top = 0;
	const char *name = NULL;
	for (int i = 1; i < 4; i++)
		if (c->err_count[i] > c->err_count[top])
			top = i;
	buf[0] = '\0';
	if (!c->err_count[top])
		return;
	if (c->kind == XPU_NPU_KIND_IOCTL)
		name = strerrorname_np((int)c->err_code[top]);
	else if (c->kind == XPU_NPU_KIND_L0)
		name = ze_result_name(c->err_code[top]);
	else
		name = "ABORTED";
	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, c->kind == XPU_NPU_KIND_IOCTL ? "errno %u" : "0x%x", c->err_code[top]);
}

static int calls_table(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_table *t,
		       enum xpu_window w)
{
	static const char *kinds[] = { "", "ioctl", "L0", "jobs", "irq" };
	uint64_t span = xpu_win_span(&m->ticks, w);

	xpu_table_reset(t);
	for (uint32_t i = 0; i < m->ncalls; i++) {
		const struct xpu_npu_call *c = &m->calls[i];
		uint64_t n = xpu_win_count_get(&c->calls, w), errs = xpu_win_count_get(&c->errors, w);
		char name[48], err[48];
		uint64_t p50 = 0, p99 = 0;
		if (!n && !errs)
			continue;
		uint64_t key = (uint64_t)c->pid << 32 | (uint64_t)c->kind << 24 | (c->code & 0xffffff);
		struct xpu_cell *row = xpu_table_add(t, key);
		if (!row)
			return -ENOMEM;
		err_text(c, err, sizeof(err));
		row[XPU_NPU_COL_PID].i = c->pid;
		row[XPU_NPU_COL_COMM].s = xpu_table_strdup(t, c->comm ? xpu_dict_str_get(d, c->comm) : "?");
		row[XPU_NPU_COL_KIND].s = kinds[c->kind < 5 ? c->kind : 0];
		row[XPU_NPU_COL_CALL].s = xpu_table_strdup(t, call_name(c, name, sizeof(name)));
		row[XPU_NPU_COL_RATE].d = xpu_win_per_s(c->calls.last, m->ticks.tick_ns);
		row[XPU_NPU_COL_AVG].d = xpu_win_per_s(n, span);
		row[XPU_NPU_COL_TOTAL].i = (int64_t)n;
		row[XPU_NPU_COL_ERRORS].i = (int64_t)errs;
		row[XPU_NPU_COL_ERRNO].s = xpu_table_strdup(t, err);
		if (xpu_npu_lat_quantiles(&c->lat, w, &p50, &p99)) {
			row[XPU_NPU_COL_P50].i = (int64_t)p50;
			row[XPU_NPU_COL_P99].i = (int64_t)p99;
		} else {
			row[XPU_NPU_COL_P50].na = row[XPU_NPU_COL_P99].na = 1;
		}
		if (c->kind == XPU_NPU_KIND_JOB)
			row[XPU_NPU_COL_BUSY].d = span ? 100.0 * (double)xpu_win_count_get(&c->busy_ns, w) / (double)span : 0;
		else
			row[XPU_NPU_COL_BUSY].na = 1;
	}
	return 0;
}

static void snap_mem(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w)
{
	uint64_t span = xpu_win_span(&m->ticks, w);
	uint64_t mm = 0, bo = 0, ipc;
	for (int c = 1; c < XPU_NPU_MEM_MAX; c++) {
		const struct xpu_win_count *k = &m->g[XPU_NPU_C_MEM0 + c];
		s->mem_s[c] = xpu_win_per_s(xpu_win_count_get(k, w), span);
		s->mem_total[c] = k->total;
		if (c == XPU_NPU_MEM_BO_CREATE || c == XPU_NPU_MEM_BIND || c == XPU_NPU_MEM_OTHER_BO)
			bo += xpu_win_count_get(k, w);
		else
			mm += xpu_win_count_get(k, w);
	}
	ipc = xpu_win_count_get(&m->g[XPU_NPU_C_TX], w) + xpu_win_count_get(&m->g[XPU_NPU_C_RX], w);
	if (s->fn_count) {	/* driver functions traced: shares of their calls */
		mm = s->cats[XPU_NPU_CAT_MM].count;
		bo = s->cats[XPU_NPU_CAT_BO].count;
		ipc = s->cats[XPU_NPU_CAT_IPC].count;
	}
	uint64_t all = s->fn_count ? s->fn_count : mm + bo + ipc;
	s->shares_valid = all > 0;
	s->untimed = m->untimed;
	if (s->shares_valid) {
		s->share_mm = 100.0 * (double)mm / (double)all;
		s->share_bo = 100.0 * (double)bo / (double)all;
		s->share_ipc = 100.0 * (double)ipc / (double)all;
		xpu_npu_share_text(s->share_mm_text, sizeof(s->share_mm_text), s->share_mm);
		xpu_npu_share_text(s->share_bo_text, sizeof(s->share_bo_text), s->share_bo);
		xpu_npu_share_text(s->share_ipc_text, sizeof(s->share_ipc_text), s->share_ipc);
	}
}

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0;
}

/* p50, p99 and max of a function's calls timed in the window: N/A where
 * none was (not timed at all, or no call in the window). */
static void fn_lat_cells(const struct xpu_npu_model *m, const struct xpu_npu_fn *f, enum xpu_window w,
			 struct xpu_cell *row)
{
	uint64_t p50 = 0, p99 = 0, max = 0;
	int valid = xpu_npu_lat_quantiles(&f->lat, w, &p50, &p99);
	if (valid) {
		max = xpu_win_max_get(&f->lat.max, w, m->ticks.window);
		p50 = p50 < max ? p50 : max;	/* a bucket's middle past the largest seen */
		p99 = p99 < max ? p99 : max;
	}
	row[XPU_NPU_FCOL_P50].i = (int64_t)p50;
	row[XPU_NPU_FCOL_P99].i = (int64_t)p99;
	row[XPU_NPU_FCOL_MAX].i = (int64_t)max;
	row[XPU_NPU_FCOL_P50].na = row[XPU_NPU_FCOL_P99].na = row[XPU_NPU_FCOL_MAX].na = (uint8_t)!valid;
	row[XPU_NPU_FCOL_TIMED].i = (int64_t)(w == XPU_WIN_ALL ? f->lat.n_all : f->lat.n_win);
	row[XPU_NPU_FCOL_UNTIMED].i = (int64_t)xpu_win_count_get(&f->untimed, w);
	row[XPU_NPU_FCOL_TIMED].na = row[XPU_NPU_FCOL_UNTIMED].na = (uint8_t)!m->fn_timed;
}

static int funcs_table(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_npu_snap *s,
		       enum xpu_window w)
{
	struct xpu_table *t = &s->funcs;
	s->fn_count = s->fn_total = 0;
	for (int c = 0; c < XPU_NPU_NCAT; c++) {
		s->cats[c].count = xpu_win_count_get(&m->cat[c], w);
		s->cats[c].total = m->cat[c].total;
		s->fn_count += s->cats[c].count;
		s->fn_total += s->cats[c].total;
	}
	for (int c = 0; c < XPU_NPU_NCAT; c++) {
		s->cats[c].share = pct(s->cats[c].count, s->fn_count);
		s->cats[c].share_total = pct(s->cats[c].total, s->fn_total);
		xpu_npu_share_text(s->cats[c].share_text, sizeof(s->cats[c].share_text), s->cats[c].share);
		xpu_npu_share_text(s->cats[c].share_total_text, sizeof(s->cats[c].share_total_text),
				   s->cats[c].share_total);
	}
	s->fns_over = m->fns_over;
	s->fn_timed = m->fn_timed;
	s->fn_untimed = 0;
	xpu_table_reset(t);
	for (uint32_t i = 0; i < m->nfns; i++) {
		const struct xpu_npu_fn *f = &m->fns[i];
		uint64_t n = xpu_win_count_get(&f->calls, w);
		struct xpu_cell *row = xpu_table_add(t, (uint64_t)f->name);
		if (!row)
			return -ENOMEM;
		row[XPU_NPU_FCOL_FUNC].s = xpu_table_strdup(t, xpu_dict_str_get(d, f->name));
		row[XPU_NPU_FCOL_CAT].s = xpu_npu_cat_name(f->cat);
		row[XPU_NPU_FCOL_RATE].d = xpu_win_per_s(f->calls.last, m->ticks.tick_ns);
		row[XPU_NPU_FCOL_RATE].na = (uint8_t)m->untimed;
		row[XPU_NPU_FCOL_COUNT].i = (int64_t)n;
		row[XPU_NPU_FCOL_TOTAL].i = (int64_t)f->calls.total;
		row[XPU_NPU_FCOL_SHARE].d = pct(n, s->fn_count);
		fn_lat_cells(m, f, w, row);
		s->fn_untimed += (uint64_t)row[XPU_NPU_FCOL_UNTIMED].i;
	}
	if (m->fn_lat_absent && !m->fn_timed)
		snprintf(s->fn_lat_note, sizeof(s->fn_lat_note), "no latency in this log");
	else if (s->fn_untimed)
		snprintf(s->fn_lat_note, sizeof(s->fn_lat_note), "%" PRIu64 " returns not timed", s->fn_untimed);
	else
		s->fn_lat_note[0] = '\0';
	return 0;
}

static const char *ctx_name(uint32_t what, int l0, char *buf, size_t size)
{
	const char *n = l0 ? xpu_npu_l0_name(what) : xpu_npu_ioctl_name(what);
	if (!what)
		return "-";
	if (n)
		return n;
	snprintf(buf, size, l0 ? "API %u" : "ioctl 0x%04x", what);
	return buf;
}

/* The completions delivered for each process's jobs (its irq calls row) are
 * its calls of ivpu_job_done_callback, out of those no process made. */
static int irq_chains(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_table *t)
{
	uint64_t left = m->fn_job_done ? xpu_npu_fn_unchained(m, m->fn_job_done - 1) : 0;
	for (uint32_t i = 0; i < m->ncalls && left; i++) {
		const struct xpu_npu_call *c = &m->calls[i];
		uint64_t n = xpu_npu_irq_take(m, i, &left);
		if (!n)
			continue;
		struct xpu_cell *row = xpu_table_add(t, (uint64_t)1 << 32 | i);
		if (!row)
			return -ENOMEM;
		row[XPU_NPU_CCOL_PID].i = c->pid;
		row[XPU_NPU_CCOL_COMM].s = xpu_table_strdup(t, c->comm ? xpu_dict_str_get(d, c->comm) : "?");
		row[XPU_NPU_CCOL_L0].s = XPU_NPU_IRQ_FRAME;
		row[XPU_NPU_CCOL_IOCTL].s = "-";
		row[XPU_NPU_CCOL_FUNC].s =
			xpu_table_strdup(t, xpu_dict_str_get(d, m->fns[m->fn_job_done - 1].name));
		row[XPU_NPU_CCOL_RATE].d = xpu_win_per_s(c->calls.last, m->ticks.tick_ns);
		row[XPU_NPU_CCOL_RATE].na = (uint8_t)m->untimed;
		row[XPU_NPU_CCOL_TOTAL].i = (int64_t)n;
	}
	return 0;
}

static int chains_table(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_npu_snap *s)
{
	struct xpu_table *t = &s->chains;
	char a[32], b[32];
	xpu_table_reset(t);
	s->chains_over = m->chains_over;
	for (uint32_t i = 0; i < m->nchains; i++) {
		const struct xpu_npu_chain *c = &m->chains[i];
		if (!c->calls.total)
			continue;
		struct xpu_cell *row = xpu_table_add(t, i + 1);
		if (!row)
			return -ENOMEM;
		row[XPU_NPU_CCOL_PID].i = c->pid;
		row[XPU_NPU_CCOL_COMM].s = xpu_table_strdup(t, c->comm ? xpu_dict_str_get(d, c->comm) : "?");
		row[XPU_NPU_CCOL_L0].s = xpu_table_strdup(t, ctx_name(XPU_NPU_FN_API(c->ctx), 1, a, sizeof(a)));
		row[XPU_NPU_CCOL_IOCTL].s = xpu_table_strdup(t, ctx_name(XPU_NPU_FN_CMD(c->ctx), 0, b, sizeof(b)));
		row[XPU_NPU_CCOL_FUNC].s = xpu_table_strdup(t, xpu_dict_str_get(d, m->fns[c->fn].name));
		row[XPU_NPU_CCOL_RATE].d = xpu_win_per_s(c->calls.last, m->ticks.tick_ns);
		row[XPU_NPU_CCOL_RATE].na = (uint8_t)m->untimed;
		row[XPU_NPU_CCOL_TOTAL].i = (int64_t)c->calls.total;
	}
	return irq_chains(m, d, t);
}

static void snap_device(const struct xpu_npu_model *m, const struct xpu_dict *d,
			struct xpu_npu_snap *s, enum xpu_window w)
{
	uint64_t span = xpu_win_span(&m->ticks, w);
	const char *reason = m->last_recovery_reason ? xpu_dict_str_get(d, m->last_recovery_reason) : "";

	s->suspends = m->g[XPU_NPU_C_PM0 + XPU_NPU_PM_SUSPEND].total;
	s->resumes = m->g[XPU_NPU_C_PM0 + XPU_NPU_PM_RESUME].total;
	s->recoveries = m->g[XPU_NPU_C_PM0 + XPU_NPU_PM_RECOVERY].total;
	snprintf(s->last_recovery, sizeof(s->last_recovery), "%s", reason ? reason : "");
	/* The busiest device, over its last two readings. */
	s->busy_valid = 0;
	for (int i = 0; i < XPU_NPU_MAX_DEVICES; i++) {
		const struct xpu_npu_device *v = &m->dev[i];
		if (v->readings < 2 || v->at_ns <= v->prev_ns || v->busy_us < v->prev_us)
			continue;
		double pct = 100.0 * (double)(v->busy_us - v->prev_us) * 1e3 / (double)(v->at_ns - v->prev_ns);
		if (pct > 100)
			pct = 100;
		if (!s->busy_valid || pct > s->busy_pct)
			s->busy_pct = pct;
		s->busy_valid = 1;
	}
	for (uint32_t a = 1; a < XPU_NPU_L0_API_MAX && a < 8; a++) {
		uint64_t n = 0, tot = 0;
		for (uint32_t i = 0; i < m->ncalls; i++)
			if (m->calls[i].kind == XPU_NPU_KIND_L0 && m->calls[i].code == a) {
				n += xpu_win_count_get(&m->calls[i].calls, w);
				tot += m->calls[i].calls.total;
			}
		s->l0_s[a] = xpu_win_per_s(n, span);
		s->l0_total[a] = tot;
	}
}

/* Engine busy % between a client's last two samples, where fdinfo has it. */
static int clients_table(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_npu_snap *s)
{
	struct xpu_table *t = &s->clients;
	xpu_table_reset(t);
	for (uint32_t i = 0; i < m->nclients; i++) {
		const struct xpu_npu_client *k = &m->clients[i];
		struct xpu_cell *row = xpu_table_add(t, (uint64_t)k->pid << 32 | k->c.client_id);
		if (!row)
			return -ENOMEM;
		row[XPU_NPU_KCOL_PID].i = k->pid;
		row[XPU_NPU_KCOL_COMM].s = xpu_table_strdup(t, k->c.comm ? xpu_dict_str_get(d, k->c.comm) : "?");
		row[XPU_NPU_KCOL_CLIENT].i = k->c.client_id;
		row[XPU_NPU_KCOL_TOTAL].i = (int64_t)k->c.total_bytes;
		row[XPU_NPU_KCOL_TOTAL].na = !(k->c.flags & XPU_NPU_CLIENT_TOTAL);
		row[XPU_NPU_KCOL_RESIDENT].i = (int64_t)k->c.resident_bytes;
		row[XPU_NPU_KCOL_RESIDENT].na = !(k->c.flags & XPU_NPU_CLIENT_RESIDENT);
		int engine = (k->c.flags & XPU_NPU_CLIENT_ENGINE) && k->samples > 1 && k->at > k->prev_at &&
			     k->c.engine_ns >= k->prev_engine_ns;
		row[XPU_NPU_KCOL_ENGINE].d = engine ? 100.0 * (double)(k->c.engine_ns - k->prev_engine_ns) /
							      (double)(k->at - k->prev_at) : 0;
		row[XPU_NPU_KCOL_ENGINE].na = !engine;
	}
	return 0;
}

static void snap_stall(const struct xpu_npu_model *m, const struct xpu_dict *d, struct xpu_npu_stall_snap *o)
{
	const struct xpu_npu_stall *st = &m->stall;
	memset(o, 0, sizeof(*o));
	if (!st->raised)
		return;
	const char *comm = st->job.comm ? xpu_dict_str_get(d, st->job.comm) : NULL;
	uint64_t end = st->cleared ? st->cleared : m->now;
	o->shown = 1;
	o->active = !st->cleared;
	o->job_id_known = st->job.key != 0;
	o->job_id = st->job.key;
	o->queue = st->job.queue;
	o->pid = st->job.pid;
	snprintf(o->comm, sizeof(o->comm), "%s", comm ? comm : "");
	o->submit = st->job.submit_ns;
	o->raised = st->raised;
	o->cleared = st->cleared;
	o->exited = st->job.exited;
	o->age_ns = end > st->job.submit_ns ? end - st->job.submit_ns : 0;
	o->last_ipc = st->last_ipc;
	o->last_hb = st->last_hb;
	o->waits = st->waits;
	o->wait_every_ns = st->waits > 1 ? (st->wait_last - st->wait_first) / (st->waits - 1) : 0;
	o->tdr_ms = st->tdr_ms;
	o->tdr_origin = st->tdr_origin;
	snprintf(o->after, sizeof(o->after), "%s", st->after_text);
}

int xpu_npu_model_snapshot(const struct xpu_npu_model *m, const struct xpu_dict *d,
			   struct xpu_npu_snap *s, enum xpu_window w)
{
	snap_stall(m, d, &s->stall);
	s->dev_valid = 0;
	for (int i = 0; i < XPU_NPU_MAX_DEVICES && !s->dev_valid; i++)
		if (m->dev[i].have_state) {
			s->dev = m->dev[i].state;
			s->dev_valid = 1;
		}
	if (clients_table(m, d, s) < 0)
		return -ENOMEM;
	uint64_t p50 = 0, p99 = 0;

	s->any = m->events > 0;
	s->events = m->events;
	if (funcs_table(m, d, s, w) < 0 || chains_table(m, d, s) < 0)
		return -ENOMEM;
	xpu_npu_snap_ipc(m, s, w);
	xpu_npu_snap_jobs(m, s, w);
	snap_mem(m, s, w);
	snap_device(m, d, s, w);
	s->tdr_ms = xpu_npu_model_tdr_ms(m, &s->tdr_origin);
	s->silence_ms = m->cfg.silence_ms;
	if (m->job_lat.n_all >= m->cfg.learn_jobs && xpu_npu_lat_quantiles(&m->job_lat, XPU_WIN_ALL, &p50, &p99) &&
	    4 * p99 / MS > s->silence_ms)
		s->silence_ms = (uint32_t)(4 * p99 / MS);
	return calls_table(m, d, &s->calls, w);
}
