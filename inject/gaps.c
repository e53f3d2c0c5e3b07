/* SPDX-License-Identifier: GPL-2.0-only */
/* The pauses in tracing, and the graph kernels cut by one.
 *
 * CUPTI times a CUDA graph's kernels through slots it keeps with the
 * instantiated graph.  When activity is switched off while a graph launch
 * is still running on the GPU, the records of its kernels come out at a
 * later flush with that flush's time as their end.  Measured on the H200
 * (torch.compile's CUDA graphs, 10 ms slices in 500 ms, bench/gpu/cupti_cost.c
 * and docs/gpu-cost.md): every kernel of the launch in flight at each
 * switch-off took 20 ms under xputop's library (it flushes every 20 ms) and
 * 170-230 ms under a library flushing less often, instead of 2-18 us; the
 * sampled shares of a compiled model came out flat, 28 points off.  Kernels
 * launched one by one are not affected.
 *
 * So kernel activity stays on after a slice that launched a graph until
 * its kernels have run (inject/cupti.c), and a graph kernel launched before
 * activity went off (its correlation id no later than the slice's last
 * launch) whose record ends after it went off is dropped and counted.  A slice is the launches
 * made in it: the kernels of launches made while activity was still on
 * after it, in the pause, are left out (not traced, not dropped), as a
 * launch made before a slice is not traced at all. */
#include <pthread.h>

#include "inject.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void xpu_gaps_reset(struct xpu_gaps *g)
{
	pthread_mutex_lock(&lock);
	g->n = 0;
	pthread_mutex_unlock(&lock);
}

void xpu_gaps_pause(struct xpu_gaps *g, uint32_t last_corr)
{
	pthread_mutex_lock(&lock);
	struct xpu_gap *p = &g->gap[g->n % XPU_GAPS];
	*p = (struct xpu_gap){ .off = UINT64_MAX, .corr = last_corr, .open = 1 };
	g->n++;
	pthread_mutex_unlock(&lock);
}

void xpu_gaps_activity_off(struct xpu_gaps *g, uint64_t now)
{
	pthread_mutex_lock(&lock);
	if (g->n) {
		struct xpu_gap *p = &g->gap[(g->n - 1) % XPU_GAPS];
		if (p->off == UINT64_MAX)
			p->off = now;
	}
	pthread_mutex_unlock(&lock);
}

void xpu_gaps_resume(struct xpu_gaps *g, uint32_t last_corr)
{
	pthread_mutex_lock(&lock);
	if (g->n) {
		struct xpu_gap *p = &g->gap[(g->n - 1) % XPU_GAPS];
		if (p->open) {
			p->open = 0;
			/* No launch seen since the pause began: the pause holds none. */
			p->on_corr = (int32_t)(last_corr - p->corr) > 0 ? last_corr : p->corr;
		}
	}
	pthread_mutex_unlock(&lock);
}

int xpu_gaps_outside(const struct xpu_gaps *g, uint32_t corr)
{
	if (!__atomic_load_n(&g->n, __ATOMIC_RELAXED))
		return 0;
	int out = 0;
	pthread_mutex_lock(&lock);
	uint32_t first = g->n > XPU_GAPS ? g->n - XPU_GAPS : 0;
	for (uint32_t i = first; i < g->n && !out; i++) {
		const struct xpu_gap *p = &g->gap[i % XPU_GAPS];
		out = (int32_t)(corr - p->corr) > 0 && (p->open || (int32_t)(corr - p->on_corr) <= 0);
	}
	pthread_mutex_unlock(&lock);
	return out;
}

int xpu_gaps_cut(const struct xpu_gaps *g, uint32_t corr, uint64_t end)
{
	if (!__atomic_load_n(&g->n, __ATOMIC_RELAXED))
		return 0;
	int cut = 0;
	pthread_mutex_lock(&lock);
	uint32_t first = g->n > XPU_GAPS ? g->n - XPU_GAPS : 0;
	/* The first pause after the launch: the oldest one kept whose last
	 * launch is this one or later (ids grow; compared across a wrap). */
	for (uint32_t i = first, after = 0; i < g->n; i++) {
		const struct xpu_gap *p = &g->gap[i % XPU_GAPS];
		after |= (int32_t)(p->corr - corr) >= 0;
		/* From there, the first time activity went off (a slice that
		 * began before its kernels had run kept it on). */
		if (after && p->off != UINT64_MAX) {
			cut = end > p->off;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return cut;
}
