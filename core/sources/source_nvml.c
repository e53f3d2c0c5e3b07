/* SPDX-License-Identifier: GPL-2.0-only */
#include "source_nvml.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "err.h"
#include "event.h"
#include "session.h"
#include "source.h"
#include "sys.h"

#define MIN_PERIOD_NS 1000000000ULL
/* How long the exit waits for a poll in progress (an NVML call on a failing
 * GPU can hang); past that the process leaves the thread behind. */
#define JOIN_WAIT_NS 1000000000ULL

struct nvml_source {
	struct xpu_source base;
	struct xpu_session *sess;
	const char *path;
	uint64_t period_ns;
	int efd;			/* the thread's "a poll is ready" */
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock: what the thread hands over */
	int stop;
	int fresh;			/* ready holds a poll not emitted yet */
	int state;			/* enum xpu_src_state */
	char status[280];
	int status_fresh;
	struct xpu_nvml_sample *ready;
	/* the thread's own */
	struct xpu_nvml_sample *work;
	/* the ingest side's own */
	struct xpu_nvml_sample *taken;
	uint64_t refused;
};

const char *xpu_nvml_lib_path(void)
{
	const char *p = getenv("XPUTOP_NVML");
	return p && *p ? p : NULL;
}

/* ---- the events of a poll (ingest side) ---- */

static uint32_t bounded_str(struct xpu_dict *d, const char *s, size_t size)
{
	size_t n = strnlen(s, size);
	if (n == size)	/* not terminated: a broken library; keep what fits */
		n = size - 1;
	return n ? xpu_dict_str(d, s, n) : 0;
}

/* Clears bit from *flags when a value is out of range. */
static void in_range(uint32_t *flags, uint32_t bit, uint64_t v, uint64_t max, uint64_t *refused)
{
	if ((*flags & bit) && v > max) {
		*flags &= ~bit;
		(*refused)++;
	}
}

static void dev_event(const struct xpu_nvml_dev *n, uint64_t time, struct xpu_dict *d,
		      struct xpu_event *ev, uint64_t *refused)
{
	struct xpu_ev_gpu_dev *g = &ev->gdev;
	uint32_t f = n->flags & (XPU_GPU_DEV_STATE_BITS | XPU_GPU_DEV_MIG);
	memset(ev, 0, sizeof(*ev));
	ev->type = XPU_EV_GPU_DEV;
	ev->source = XPU_SRC_GPU;
	ev->time = time;
	g->index = n->index;
	g->name = bounded_str(d, n->name, sizeof(n->name));
	g->bus = bounded_str(d, n->bus, sizeof(n->bus));
	in_range(&f, XPU_GPU_DEV_UTIL, n->util_gpu, 100, refused);
	in_range(&f, XPU_GPU_DEV_MEM_UTIL, n->util_mem, 100, refused);
	in_range(&f, XPU_GPU_DEV_MEM, n->mem_used, n->mem_total, refused);
	in_range(&f, XPU_GPU_DEV_MEM, n->mem_total >> 20, UINT32_MAX, refused);
	in_range(&f, XPU_GPU_DEV_TEMP, n->temp_c, UINT16_MAX, refused);
	in_range(&f, XPU_GPU_DEV_SM_CLOCK, n->sm_mhz, UINT16_MAX, refused);
	in_range(&f, XPU_GPU_DEV_MEM_CLOCK, n->mem_mhz, UINT16_MAX, refused);
	g->flags = f;
	g->util_gpu = f & XPU_GPU_DEV_UTIL ? (uint8_t)n->util_gpu : 0;
	g->util_mem = f & XPU_GPU_DEV_MEM_UTIL ? (uint8_t)n->util_mem : 0;
	g->mem_used_mib = f & XPU_GPU_DEV_MEM ? (uint32_t)(n->mem_used >> 20) : 0;
	g->mem_total_mib = f & XPU_GPU_DEV_MEM ? (uint32_t)(n->mem_total >> 20) : 0;
	g->temp_c = f & XPU_GPU_DEV_TEMP ? (uint16_t)n->temp_c : 0;
	g->sm_mhz = f & XPU_GPU_DEV_SM_CLOCK ? (uint16_t)n->sm_mhz : 0;
	g->mem_mhz = f & XPU_GPU_DEV_MEM_CLOCK ? (uint16_t)n->mem_mhz : 0;
	g->power_mw = f & XPU_GPU_DEV_POWER ? n->power_mw : 0;
	g->power_limit_mw = f & XPU_GPU_DEV_POWER_LIMIT ? n->power_limit_mw : 0;
}

static void link_event(const struct xpu_nvml_dev *n, uint64_t time, struct xpu_event *ev)
{
	struct xpu_ev_gpu_dev_link *l = &ev->glink;
	uint32_t f = n->flags & XPU_GPU_DEV_LINK_BITS;
	memset(ev, 0, sizeof(*ev));
	ev->type = XPU_EV_GPU_DEV_LINK;
	ev->source = XPU_SRC_GPU;
	ev->time = time;
	l->index = n->index;
	l->flags = f;
	l->pcie_rx_kbs = f & XPU_GPU_DEV_PCIE_RX ? n->pcie_rx_kbs : 0;
	l->pcie_tx_kbs = f & XPU_GPU_DEV_PCIE_TX ? n->pcie_tx_kbs : 0;
	l->nvlink_rx_kib = f & XPU_GPU_DEV_NVLINK_RX ? n->nvlink_rx_kib : 0;
	l->nvlink_tx_kib = f & XPU_GPU_DEV_NVLINK_TX ? n->nvlink_tx_kib : 0;
	l->nvlinks = f & XPU_GPU_DEV_NVLINKS ? n->nvlinks : 0;
}

static void proc_event(const struct xpu_nvml_proc *p, uint32_t index, uint64_t time, struct xpu_dict *d,
		       struct xpu_event *ev, uint64_t *refused)
{
	struct xpu_ev_gpu_dev_proc *e = &ev->gdproc;
	uint32_t f = p->flags & XPU_GPU_DEVPROC_BITS;
	memset(ev, 0, sizeof(*ev));
	ev->type = XPU_EV_GPU_DEV_PROC;
	ev->source = XPU_SRC_GPU;
	ev->time = time;
	ev->pid = p->pid;
	e->index = index;
	uint32_t most = p->sm > p->mem_util ? p->sm : p->mem_util;
	most = most > p->enc ? most : p->enc;
	in_range(&f, XPU_GPU_DEVPROC_UTIL, most > p->dec ? most : p->dec, 100, refused);
	in_range(&f, XPU_GPU_DEVPROC_MIG, p->gi > p->ci ? p->gi : p->ci, UINT16_MAX, refused);
	e->flags = f;
	e->mem = f & XPU_GPU_DEVPROC_MEM ? p->mem : 0;
	if (f & XPU_GPU_DEVPROC_UTIL) {
		e->sm_pct = (uint8_t)p->sm;
		e->mem_pct = (uint8_t)p->mem_util;
		e->enc_pct = (uint8_t)p->enc;
		e->dec_pct = (uint8_t)p->dec;
	}
	if (f & XPU_GPU_DEVPROC_MIG) {
		e->gi = (uint16_t)p->gi;
		e->ci = (uint16_t)p->ci;
	}
	if (f & XPU_GPU_DEVPROC_NSPID) {
		e->nspid = p->ns.nspid;
		e->comm = bounded_str(d, p->ns.comm, sizeof(p->ns.comm));
		e->user = xpu_dict_cstr(d, xpu_sys_user_name(p->ns.uid));
	}
}

void xpu_nvml_events(const struct xpu_nvml_sample *smp, struct xpu_dict *d, xpu_nvml_sink sink,
		     void *ctx, uint64_t *refused)
{
	struct xpu_event ev;
	uint32_t ndev = smp->ndev < XPU_GPU_DEV_MAX ? smp->ndev : XPU_GPU_DEV_MAX;
	uint32_t nproc = smp->nproc < XPU_NVML_PROCS ? smp->nproc : XPU_NVML_PROCS;
	for (uint32_t i = 0; i < ndev; i++) {
		const struct xpu_nvml_dev *n = &smp->dev[i];
		if (n->index >= XPU_GPU_DEV_MAX) {
			(*refused)++;
			continue;
		}
		dev_event(n, smp->time, d, &ev, refused);
		sink(ctx, &ev);
		link_event(n, smp->time, &ev);
		sink(ctx, &ev);
		for (uint32_t k = 0; k < nproc; k++) {
			if (smp->proc[k].dev != i)
				continue;
			proc_event(&smp->proc[k], n->index, smp->time, d, &ev, refused);
			sink(ctx, &ev);
		}
	}
}

/* ---- the poller thread ---- */

/* Tells the ingest path that something is waiting.  A write can only fail
 * when the counter is full, which says so already. */
static void wake_ingest(struct nvml_source *ns)
{
	uint64_t one = 1;
	ssize_t r = write(ns->efd, &one, sizeof(one));
	(void)r;
}

static void set_status(struct nvml_source *ns, int state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_status(struct nvml_source *ns, int state, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&ns->lock);
	ns->state = state;
	va_start(ap, fmt);
	vsnprintf(ns->status, sizeof(ns->status), fmt, ap);
	va_end(ap);
	ns->status_fresh = 1;
	pthread_mutex_unlock(&ns->lock);
	wake_ingest(ns);
}

/* The names and container pids of a poll's processes, from /proc. */
static void name_procs(struct xpu_nvml_sample *s, int host)
{
	for (uint32_t i = 0; host && i < s->nproc; i++)
		if (xpu_pidns_lookup(s->proc[i].pid, &s->proc[i].ns) == 0)
			s->proc[i].flags |= XPU_GPU_DEVPROC_NSPID;
}

/* The first device error of a poll, as a clause of the status line. */
static void first_error(struct xpu_nvml *n, const struct xpu_nvml_sample *s, char *buf, size_t size)
{
	buf[0] = '\0';
	for (uint32_t i = 0; i < s->ndev; i++) {
		const struct xpu_nvml_dev *d = &s->dev[i];
		if (d->err) {
			snprintf(buf, size, "; GPU%u: %s: %s", d->index, d->err_fn, xpu_nvml_error(n, d->err));
			return;
		}
	}
}

static void publish(struct nvml_source *ns, struct xpu_nvml *n, int host)
{
	const struct xpu_nvml_sample *s = ns->work;
	char err[200], shown[48] = "";
	first_error(n, s, err, sizeof(err));
	if (s->count > s->ndev)
		snprintf(shown, sizeof(shown), " (the first %u shown)", s->ndev);
	if (!s->count)
		set_status(ns, XPU_SRC_OFF, "NVML, %s: the driver reports no GPU", xpu_nvml_describe(n));
	else
		set_status(ns, XPU_SRC_ACTIVE, "NVML, %s: %u GPU%s%s, polled every %.1f s in %.0f ms%s%s",
			   xpu_nvml_describe(n), s->count, s->count == 1 ? "" : "s", shown,
			   (double)ns->period_ns / 1e9, (double)s->took_ns / 1e6, err,
			   host ? "" : "; xputop is in a container: the driver's host pids cannot be named");
	pthread_mutex_lock(&ns->lock);
	struct xpu_nvml_sample *t = ns->ready;
	ns->ready = ns->work;
	ns->work = t;
	ns->fresh = 1;
	pthread_mutex_unlock(&ns->lock);
	wake_ingest(ns);
}

/* Sleeps until the next poll is due or the source stops; returns stop. */
static int wait_next(struct nvml_source *ns, const struct timespec *due)
{
	pthread_mutex_lock(&ns->lock);
	while (!ns->stop && pthread_cond_timedwait(&ns->wake, &ns->lock, due) != ETIMEDOUT)
		;
	int stop = ns->stop;
	pthread_mutex_unlock(&ns->lock);
	return stop;
}

static void advance(struct timespec *t, uint64_t ns)
{
	uint64_t v = (uint64_t)t->tv_nsec + ns;
	t->tv_sec += (time_t)(v / 1000000000ULL);
	t->tv_nsec = (long)(v % 1000000000ULL);
}

static void *poller(void *arg)
{
	struct nvml_source *ns = arg;
	char why[256];
	int absent;
	struct timespec due;
	struct xpu_nvml *n = xpu_nvml_open(ns->path, why, sizeof(why), &absent);
	if (!n) {
		set_status(ns, absent ? XPU_SRC_OFF : XPU_SRC_FAILED, "%s", why);
		return NULL;
	}
	int host = xpu_pidns_is_host();
	clock_gettime(CLOCK_MONOTONIC, &due);
	do {
		advance(&due, ns->period_ns);
		if (xpu_nvml_poll(n, ns->work, why, sizeof(why)) < 0) {
			set_status(ns, XPU_SRC_FAILED, "NVML, %s: %s", xpu_nvml_describe(n), why);
			continue;
		}
		name_procs(ns->work, host);
		publish(ns, n, host);
	} while (!wait_next(ns, &due));
	xpu_nvml_close(n);
	return NULL;
}

/* ---- the source (ingest side) ---- */

static int nvml_fd(struct xpu_source *src)
{
	return ((struct nvml_source *)src)->efd;
}

static void emit(void *ctx, const struct xpu_event *ev)
{
	xpu_session_emit(ctx, ev);
}

static int nvml_drain(struct xpu_source *src, struct xpu_session *s)
{
	struct nvml_source *ns = (struct nvml_source *)src;
	uint64_t v;
	int fresh, state = 0;
	char status[sizeof(ns->status)];
	if (read(ns->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&ns->lock);
	fresh = ns->fresh;
	if (fresh) {
		struct xpu_nvml_sample *t = ns->taken;
		ns->taken = ns->ready;
		ns->ready = t;
		ns->fresh = 0;
	}
	status[0] = '\0';
	if (ns->status_fresh) {
		state = ns->state;
		memcpy(status, ns->status, sizeof(status));
		ns->status_fresh = 0;
	}
	pthread_mutex_unlock(&ns->lock);
	if (fresh)
		xpu_nvml_events(ns->taken, &s->dict, emit, s, &ns->refused);
	if (status[0] && ns->refused)
		xpu_gpudev_model_status(&s->gpudev, state, "%s; %llu values out of range shown as N/A",
					status, (unsigned long long)ns->refused);
	else if (status[0])
		xpu_gpudev_model_status(&s->gpudev, state, "%s", status);
	return fresh;
}

/* The poller gets a second to finish what it is doing; a thread stuck in
 * the driver is left to the process's exit. */
static int stop_poller(struct nvml_source *ns)
{
	struct timespec until;
	pthread_mutex_lock(&ns->lock);
	ns->stop = 1;
	pthread_cond_signal(&ns->wake);
	pthread_mutex_unlock(&ns->lock);
	clock_gettime(CLOCK_REALTIME, &until);
	advance(&until, JOIN_WAIT_NS);
	if (pthread_timedjoin_np(ns->thread, NULL, &until) == 0)
		return 0;
	xpu_debug("the NVML poller is still in the driver at exit; leaving it");
	return -1;
}

static void nvml_destroy(struct xpu_source *src)
{
	struct nvml_source *ns = (struct nvml_source *)src;
	if (ns->started && stop_poller(ns) < 0)
		return;
	pthread_mutex_destroy(&ns->lock);
	pthread_cond_destroy(&ns->wake);
	close(ns->efd);
	free(ns->work);
	free(ns->ready);
	free(ns->taken);
	free(ns);
}

static int init_sync(struct nvml_source *ns)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&ns->wake, &ca) || pthread_mutex_init(&ns->lock, NULL))
		return -1;
	pthread_condattr_destroy(&ca);
	return 0;
}

struct xpu_source *xpu_source_nvml_new(struct xpu_session *s, const char *path, uint64_t period_ns)
{
	struct nvml_source *ns = calloc(1, sizeof(*ns));
	if (!ns)
		return NULL;
	ns->base = (struct xpu_source){ .name = "nvml", .fd = nvml_fd, .drain = nvml_drain,
					.destroy = nvml_destroy };
	ns->sess = s;
	ns->path = path;
	ns->period_ns = period_ns > MIN_PERIOD_NS ? period_ns : MIN_PERIOD_NS;
	ns->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ns->work = malloc(sizeof(*ns->work));
	ns->ready = malloc(sizeof(*ns->ready));
	ns->taken = malloc(sizeof(*ns->taken));
	if (ns->efd < 0 || !ns->work || !ns->ready || !ns->taken || init_sync(ns) < 0) {
		nvml_destroy(&ns->base);
		return NULL;
	}
	xpu_gpudev_model_status(&s->gpudev, XPU_SRC_WAITING, "starting NVML (%s)",
				path ? path : XPU_NVML_SONAME);
	if (pthread_create(&ns->thread, NULL, poller, ns) != 0) {
		xpu_gpudev_model_status(&s->gpudev, XPU_SRC_FAILED, "cannot start the NVML poller thread");
		return &ns->base;
	}
	ns->started = 1;
	return &ns->base;
}
