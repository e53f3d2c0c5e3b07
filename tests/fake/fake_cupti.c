/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for CUPTI, linked into libxputop_inject_fake.so for tests on
 * machines without a GPU: everything of the injection library runs for real
 * (agent, channel, call sites, wire format) except CUPTI, whose callbacks and
 * activity records the test program produces through fake_cuda_launch() and
 * fake_cuda_kernel(). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

#define QUEUE 65536

static struct xpu_chan *chan;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct { struct xpu_wire_kernel k; char name[128]; } queue[QUEUE];
static uint32_t nqueued;
static uint64_t dropped;	/* kernels the queue had no room for, as CUPTI counts its own */
static int tracing;	/* xpu_cupti_trace(): launches and kernels are recorded only then
			 * (2: on throughout) */

int xpu_cupti_load(void)
{
	return 0;
}

uint32_t xpu_cupti_version(void)
{
	return 0;
}

int xpu_cupti_start(struct xpu_chan *c, uint32_t flags)
{
	xpu_inj_new_monitor(flags);
	__atomic_store_n(&chan, c, __ATOMIC_RELEASE);
	return XPU_WIRE_STATE_OK;
}

int xpu_cupti_trace(int on)
{
	__atomic_store_n(&tracing, on, __ATOMIC_RELEASE);
	return XPU_WIRE_STATE_OK;
}

static int traced(void)
{
	return __atomic_load_n(&tracing, __ATOMIC_ACQUIRE);
}

/* Like CUPTI's buffer-completed callback: queued records go out now. */
void xpu_cupti_flush(int forced)
{
	struct xpu_chan *c = __atomic_load_n(&chan, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; c && i < nqueued; i++)
		xpu_inj_kernel(c, &queue[i].k, queue[i].name);
	nqueued = 0;
	pthread_mutex_unlock(&lock);
}

void xpu_cupti_stop(void)
{
	xpu_cupti_trace(0);
	xpu_cupti_flush(1);
	__atomic_store_n(&chan, NULL, __ATOMIC_RELEASE);
}

void xpu_cupti_detach(void)
{
	chan = NULL;
}

void xpu_cupti_at_exit(void)
{
}

void xpu_cupti_print_stats(void)
{
}

/* No CUPTI to detach: it stays as it is. */
uint32_t xpu_cupti_detach_state(void)
{
	return XPU_WIRE_DETACH_OFF;
}

/* Nothing is awaited after a slice: its kernels are queued at the launch. */
int xpu_cupti_settling(void)
{
	return 0;
}

/* Ids that stick are CUPTI's (the stand-in plays them, tests/fake/stand_cupti.c). */
int xpu_cupti_stuck(uint64_t *at)
{
	return 0;
}

int xpu_cupti_recovering(void)
{
	return 0;
}

uint64_t xpu_cupti_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

void xpu_cupti_reset_counts(void)
{
	__atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
}

XPU_INJ_API int fake_cuda_connected(void)
{
	return __atomic_load_n(&chan, __ATOMIC_ACQUIRE) != NULL;
}

/* What the launch callback does, on the calling thread. */
XPU_INJ_API void fake_cuda_launch(uint32_t corr, uint32_t cbid, uint32_t domain, const char *api)
{
	struct xpu_chan *c = __atomic_load_n(&chan, __ATOMIC_ACQUIRE);
	if (c && traced())
		xpu_inj_launch(c, corr, cbid, domain, api, traced() == 2);
}

/* Like CUPTI's kernel activity, recorded only while a monitor is connected. */
XPU_INJ_API void fake_cuda_kernel(const char *name, uint64_t start, uint64_t end, uint32_t corr,
				  uint32_t device, uint32_t stream, uint32_t graph)
{
	pthread_mutex_lock(&lock);
	if (!traced()) {
		pthread_mutex_unlock(&lock);
		return;
	}
	if (fake_cuda_connected() && nqueued < QUEUE) {
		queue[nqueued].k = (struct xpu_wire_kernel){
			.start = start, .end = end, .corr = corr, .device = device, .stream = stream,
			.graph = graph,
		};
		strncpy(queue[nqueued].name, name, sizeof(queue[nqueued].name) - 1);
		nqueued++;
	} else if (fake_cuda_connected()) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
}
