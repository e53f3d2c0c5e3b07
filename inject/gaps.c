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
 * So a graph kernel launched before tracing stopped (its correlation id no
 * later than the last launch seen then) whose record ends after it stopped
 * is dropped and counted: the slice ends for graph kernels when tracing
 * stops, as it starts for every kernel when tracing starts (a launch made
 * before that is not traced at all). */
#include <pthread.h>

#include "inject.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void xpu_gaps_reset(struct xpu_gaps *g)
{
	pthread_mutex_lock(&lock);
	g->n = 0;
	pthread_mutex_unlock(&lock);
}

void xpu_gaps_off(struct xpu_gaps *g, uint64_t now, uint32_t last_corr)
{
	pthread_mutex_lock(&lock);
	struct xpu_gap *p = &g->gap[g->n % XPU_GAPS];
	p->off = now;
	p->corr = last_corr;
	g->n++;
	pthread_mutex_unlock(&lock);
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
	for (uint32_t i = first; i < g->n; i++) {
		const struct xpu_gap *p = &g->gap[i % XPU_GAPS];
		if ((int32_t)(p->corr - corr) >= 0) {
			cut = end > p->off;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return cut;
}
