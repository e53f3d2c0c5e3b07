/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model's call rows (model_npu.h): one per process and ioctl
 * command, Level Zero API or jobs, their bounded number, and the quantiles
 * of their latency histograms. */
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "model_npu.h"
#include "model_npu_int.h"
#include "npu.h"
#include "trim.h"

struct call_key { uint32_t pid, kind, code; };

static uint64_t call_hash(uint32_t pid, uint32_t kind, uint32_t code)
{
	return xpu_hash_u64(((uint64_t)pid << 32) ^ ((uint64_t)kind << 24) ^ code);
}

static int call_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_npu_model *m = ctx;
	const struct call_key *key = k;
	const struct xpu_npu_call *c = &m->calls[i];
	return c->pid == key->pid && c->kind == key->kind && c->code == key->code;
}

void xpu_npu_call_free(struct xpu_npu_call *c)
{
	xpu_win_count_free(&c->calls);
	xpu_win_count_free(&c->errors);
	xpu_win_count_free(&c->busy_ns);
	xpu_win_hist_free(&c->lat);
}

uint32_t xpu_npu_call_get(struct xpu_npu_model *m, uint32_t pid, uint32_t kind, uint32_t code,
			  uint32_t comm)
{
	struct call_key k = { pid, kind, code };
	uint64_t h = call_hash(pid, kind, code);
	uint32_t i = xpu_htab_find(&m->idx, h, call_eq, m, &k);
	if (i != UINT32_MAX) {
		if (comm)
			m->calls[i].comm = comm;
		return i;
	}
	if (xpu_grow((void **)&m->calls, &m->cap, m->ncalls + 1, sizeof(*m->calls)))
		return UINT32_MAX;
	struct xpu_npu_call *c = &m->calls[m->ncalls];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->kind = kind;
	c->code = code;
	c->comm = comm;
	xpu_win_hist_init(&c->lat, m->ticks.window, XPU_NPU_HIST_BUCKETS);
	if (xpu_win_count_init(&c->calls, m->ticks.window) || xpu_win_count_init(&c->errors, m->ticks.window) ||
	    xpu_win_count_init(&c->busy_ns, m->ticks.window) || xpu_htab_put(&m->idx, h, m->ncalls) < 0) {
		xpu_npu_call_free(c);
		return UINT32_MAX;
	}
	return m->ncalls++;
}

/* A row may go with nothing in the window and no job outstanding on it. */
static int call_idle(const struct xpu_npu_model *m, uint32_t i)
{
	const struct xpu_npu_call *c = &m->calls[i];
	if (c->calls.open || c->calls.recent || c->errors.open || c->errors.recent || c->busy_ns.open ||
	    c->busy_ns.recent)
		return 0;
	for (uint32_t j = 0; j < m->njobs; j++)
		if (m->jobs[j].call == i + 1)
			return 0;
	return 1;
}

void xpu_npu_calls_trim(struct xpu_npu_model *m)
{
	uint32_t busy = 0, nidle = 0, n = 0;
	uint64_t *w = malloc((size_t)m->ncalls * sizeof(*w));
	uint32_t *remap = malloc((size_t)m->ncalls * sizeof(*remap));
	uint8_t *idle = malloc(m->ncalls);
	struct xpu_trim plan;

	if (!w || !remap || !idle)
		goto out;
	for (uint32_t i = 0; i < m->ncalls; i++) {
		idle[i] = (uint8_t)call_idle(m, i);
		if (idle[i])
			w[nidle++] = m->calls[i].calls.total;
		else
			busy++;
	}
	if (!xpu_trim_plan(m->max_calls, busy, w, nidle, &plan))
		goto out;
	for (uint32_t i = 0; i < m->ncalls; i++) {
		struct xpu_npu_call *c = &m->calls[i];
		if (!idle[i] || xpu_trim_keeps(&plan, c->calls.total)) {
			remap[i] = n;
			m->calls[n++] = *c;
			continue;
		}
		remap[i] = UINT32_MAX;
		xpu_npu_call_free(c);
		m->calls_aged_out++;
	}
	m->ncalls = n;
	for (uint32_t j = 0; j < m->njobs; j++)	/* their rows all stayed */
		if (m->jobs[j].call)
			m->jobs[j].call = remap[m->jobs[j].call - 1] + 1;
	xpu_htab_free(&m->idx);
	xpu_htab_init(&m->idx);
	for (uint32_t i = 0; i < n; i++)
		xpu_htab_put(&m->idx, call_hash(m->calls[i].pid, m->calls[i].kind, m->calls[i].code), i);
out:
	free(w);
	free(remap);
	free(idle);
}

/* The middle of bucket b; 0 past the last. */
static uint64_t bucket_mid(uint32_t b)
{
	if (b >= XPU_NPU_HIST_BUCKETS)
		return 0;
	uint64_t lo = xpu_npu_hist_lower(b);
	if (b < XPU_NPU_HIST_SUB || b + 1 == XPU_NPU_HIST_BUCKETS)
		return lo;
	return lo + (xpu_npu_hist_lower(b + 1) - lo) / 2;
}

int xpu_npu_lat_quantiles(const struct xpu_win_hist *l, enum xpu_window w, uint64_t *p50,
			  uint64_t *p99)
{
	uint32_t b50, b99;
	if (!xpu_win_hist_quantile(l, w, 0.5, &b50) || !xpu_win_hist_quantile(l, w, 0.99, &b99))
		return 0;
	*p50 = bucket_mid(b50);
	*p99 = bucket_mid(b99);
	return 1;
}
