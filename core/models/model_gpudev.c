/* SPDX-License-Identifier: GPL-2.0-only */
#include "model_gpudev.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xpu_gpudev_model_init(struct xpu_gpudev_model *m)
{
	memset(m, 0, sizeof(*m));
}

void xpu_gpudev_model_status(struct xpu_gpudev_model *m, int state, const char *fmt, ...)
{
	va_list ap;
	m->s.state = state;
	va_start(ap, fmt);
	vsnprintf(m->s.status, sizeof(m->s.status), fmt, ap);
	va_end(ap);
}

/* Where device index is in s->dev, or -1. */
static int position(const struct xpu_gpudev_snap *s, uint32_t index)
{
	for (uint32_t i = 0; i < s->ndev; i++)
		if (s->dev[i].index == index)
			return (int)i;
	return -1;
}

static struct xpu_gpudev *find(struct xpu_gpudev_model *m, uint32_t index)
{
	int at = position(&m->s, index);
	return at < 0 ? NULL : &m->s.dev[at];
}

/* The device of index, added in index order if new (event.h bounds the
 * index, so there is always room). */
static struct xpu_gpudev *add(struct xpu_gpudev_model *m, uint32_t index)
{
	struct xpu_gpudev *d = find(m, index);
	uint32_t at = 0;
	if (d || m->s.ndev == XPU_GPU_DEV_MAX)
		return d;
	while (at < m->s.ndev && m->s.dev[at].index < index)
		at++;
	memmove(&m->s.dev[at + 1], &m->s.dev[at], (m->s.ndev - at) * sizeof(m->s.dev[0]));
	m->s.ndev++;
	d = &m->s.dev[at];
	memset(d, 0, sizeof(*d));
	d->index = index;
	return d;
}

/* A new sample of a device replaces its processes. */
static void drop_procs(struct xpu_gpudev_model *m, uint32_t index)
{
	uint32_t keep = 0;
	for (uint32_t i = 0; i < m->s.nproc; i++)
		if (m->s.proc[i].index != index)
			m->s.proc[keep++] = m->s.proc[i];
	m->s.nproc = keep;
}

static void on_dev(struct xpu_gpudev_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_gpu_dev *e = &ev->gdev;
	struct xpu_gpudev *d = add(m, e->index);
	if (!d)
		return;
	drop_procs(m, e->index);
	d->nprocs = 0;
	d->name = e->name;
	d->bus = e->bus;
	d->valid = e->flags & XPU_GPU_DEV_STATE_BITS;
	d->mig = !!(e->flags & XPU_GPU_DEV_MIG);
	d->util_gpu = e->util_gpu;
	d->util_mem = e->util_mem;
	d->mem_used = (uint64_t)e->mem_used_mib << 20;
	d->mem_total = (uint64_t)e->mem_total_mib << 20;
	d->mem_pct = e->mem_total_mib ? 100.0 * e->mem_used_mib / e->mem_total_mib : 0;
	if (!e->mem_total_mib)
		d->valid &= ~(uint32_t)XPU_GPU_DEV_MEM;
	d->power_w = e->power_mw / 1e3;
	d->power_limit_w = e->power_limit_mw / 1e3;
	d->temp_c = e->temp_c;
	d->sm_mhz = e->sm_mhz;
	d->mem_mhz = e->mem_mhz;
	d->sampled = ev->time;
}

/* bytes/s between two readings of a KiB counter; -1 when there is no rate
 * (first reading, counter reset, time not moving). */
static double rate(uint64_t prev, uint64_t cur, uint64_t dt_ns)
{
	if (!dt_ns || cur < prev)
		return -1;
	return (double)(cur - prev) * 1024.0 * 1e9 / (double)dt_ns;
}

static void nvlink(struct xpu_gpudev *d, const struct xpu_ev_gpu_dev_link *e, uint64_t now)
{
	uint64_t dt = d->link_time && now > d->link_time ? now - d->link_time : 0;
	double rx = (d->link_valid & e->flags & XPU_GPU_DEV_NVLINK_RX) ? rate(d->nvlink_rx_kib, e->nvlink_rx_kib, dt) : -1;
	double tx = (d->link_valid & e->flags & XPU_GPU_DEV_NVLINK_TX) ? rate(d->nvlink_tx_kib, e->nvlink_tx_kib, dt) : -1;
	if (rx >= 0) {
		d->nvlink_rx = rx;
		d->valid |= XPU_GPU_DEV_NVLINK_RX;
	}
	if (tx >= 0) {
		d->nvlink_tx = tx;
		d->valid |= XPU_GPU_DEV_NVLINK_TX;
	}
	d->nvlink_rx_kib = e->nvlink_rx_kib;
	d->nvlink_tx_kib = e->nvlink_tx_kib;
	d->link_valid = e->flags;
	d->link_time = now;
}

static void on_link(struct xpu_gpudev_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_gpu_dev_link *e = &ev->glink;
	struct xpu_gpudev *d = find(m, e->index);
	if (!d) {
		m->s.refused++;
		return;
	}
	/* NVLink's RX and TX bits come back with a rate (nvlink()). */
	d->valid = (d->valid & ~(uint32_t)XPU_GPU_DEV_LINK_BITS) |
		   (e->flags & (XPU_GPU_DEV_PCIE_RX | XPU_GPU_DEV_PCIE_TX | XPU_GPU_DEV_NVLINKS));
	d->pcie_rx = e->pcie_rx_kbs * 1024.0;
	d->pcie_tx = e->pcie_tx_kbs * 1024.0;
	d->nvlinks = e->nvlinks;
	nvlink(d, e, ev->time);
}

static void on_proc(struct xpu_gpudev_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_gpu_dev_proc *e = &ev->gdproc;
	struct xpu_gpudev *d = find(m, e->index);
	if (!d) {
		m->s.refused++;
		return;
	}
	d->nprocs++;
	if (m->s.nproc == XPU_GPUDEV_PROCS)
		return;
	struct xpu_gpudev_proc *p = &m->s.proc[m->s.nproc++];
	p->index = e->index;
	p->pid = ev->pid;
	p->nspid = e->nspid;
	p->comm = e->comm;
	p->user = e->user;
	p->valid = e->flags;
	p->mem = e->mem;
	p->sm_pct = e->sm_pct;
	p->mem_pct = e->mem_pct;
	p->enc_pct = e->enc_pct;
	p->dec_pct = e->dec_pct;
	p->gi = e->gi;
	p->ci = e->ci;
}

void xpu_gpudev_model_event(struct xpu_gpudev_model *m, const struct xpu_event *ev)
{
	switch (ev->type) {
	case XPU_EV_GPU_DEV:
		on_dev(m, ev);
		break;
	case XPU_EV_GPU_DEV_LINK:
		on_link(m, ev);
		break;
	case XPU_EV_GPU_DEV_PROC:
		on_proc(m, ev);
		break;
	}
}

void xpu_gpudev_model_tick(struct xpu_gpudev_model *m, uint64_t now, uint64_t interval_ns)
{
	m->tick_ns = now;
	m->interval_ns = interval_ns;
}

/* Device, then GPU memory (largest first, unknown last), then pid. */
static int by_device_memory(const void *a, const void *b)
{
	const struct xpu_gpudev_proc *x = a, *y = b;
	uint64_t mx = x->valid & XPU_GPU_DEVPROC_MEM ? x->mem + 1 : 0;
	uint64_t my = y->valid & XPU_GPU_DEVPROC_MEM ? y->mem + 1 : 0;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	if (mx != my)
		return mx > my ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A device the poller has not sampled for a while: nothing it said holds. */
static void age(const struct xpu_gpudev_model *m, struct xpu_gpudev *d)
{
	uint64_t period = m->interval_ns > XPU_GPUDEV_POLL_NS ? m->interval_ns : XPU_GPUDEV_POLL_NS;
	uint64_t old = m->tick_ns > d->sampled ? m->tick_ns - d->sampled : 0;
	d->age_s = (double)old / 1e9;
	d->stale = old > XPU_GPUDEV_STALE_POLLS * period;
	if (d->stale) {
		d->valid = 0;
		d->nprocs = 0;
	}
}

void xpu_gpudev_model_snapshot(const struct xpu_gpudev_model *m, struct xpu_gpudev_snap *out)
{
	uint32_t keep = 0;
	out->state = m->s.state;
	memcpy(out->status, m->s.status, sizeof(out->status));
	out->refused = m->s.refused;
	out->ndev = m->s.ndev;
	memcpy(out->dev, m->s.dev, m->s.ndev * sizeof(out->dev[0]));
	for (uint32_t i = 0; i < out->ndev; i++)
		age(m, &out->dev[i]);
	for (uint32_t i = 0; i < m->s.nproc; i++) {
		int at = position(out, m->s.proc[i].index);
		if (at >= 0 && !out->dev[at].stale)
			out->proc[keep++] = m->s.proc[i];
	}
	out->nproc = keep;
	qsort(out->proc, keep, sizeof(out->proc[0]), by_device_memory);
}
