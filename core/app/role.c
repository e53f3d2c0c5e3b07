/* SPDX-License-Identifier: GPL-2.0-only */
/* Several xputops at once (core/sources/share.h): which one this xputop is
 * (collector or client), what a collector collects for its clients, what a
 * client asks of its collector, each one's refresh, and a client's takeover
 * when the collector goes. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "app.h"
#include "child.h"
#include "err.h"
#include "inject_lib.h"
#include "procs.h"
#include "record.h"
#include "role.h"
#include "service.h"
#include "share.h"
#include "source.h"
#include "source_cpu.h"
#include "source_gpu.h"
#include "symbolize.h"
#include "sys.h"
#include "tui.h"

#define EXACT_KEY_S 60	/* how long e turns exact tracing on, unless --gpu-exact=SECS */
/* How long a starting xputop waits for a collector that holds the lock to
 * serve, and for its hello once connected. */
#define SHARE_WAIT_MS 5000
/* How often an xputop left without a collector tries again. */
#define SHARE_RETRY_NS 20000000ULL

/* The events -p filters in the session: every event of a process, for the
 * collector's sources collect what its clients need too (app_role_needs()),
 * and a client reads the collector's stream. */
#define EVBIT(t) (1ULL << (t))
#define CLIENT_WATCH (EVBIT(XPU_EV_GPU_LAUNCH) | EVBIT(XPU_EV_GPU_KERNEL) | EVBIT(XPU_EV_GPU_MEMCPY) | \
		      EVBIT(XPU_EV_GPU_PROC) | EVBIT(XPU_EV_GPU_SLICE) | EVBIT(XPU_EV_GPU_OWN) | \
		      EVBIT(XPU_EV_GPU_CPU) | EVBIT(XPU_EV_GPU_BORN) | EVBIT(XPU_EV_CPU_SAMPLE) | \
		      EVBIT(XPU_EV_PROC_STAT) | EVBIT(XPU_EV_THREAD_STAT) | EVBIT(XPU_EV_NPU_IOCTL) | EVBIT(XPU_EV_NPU_L0))

/* This xputop's own wish for exact GPU tracing, from --gpu-exact. */
static void gpu_want_init(struct app *a)
{
	a->role.gpu_want.exact = a->o.gpu_exact;
	a->role.gpu_want.until = a->o.gpu_exact && a->o.gpu_exact_s > 0 ?
				    xpu_now_mono() + (uint64_t)(a->o.gpu_exact_s * 1e9) : 0;
	a->sess.gpu_exact_asked = a->role.gpu_want.exact;
}

/* The collector serves its stream to the xputops started after it. */
static void share_serve(struct app *a, int lockfd)
{
	char err[300] = "";
	struct xpu_rec_meta m;
	if (lockfd < 0)
		return;
	app_session_meta(a, &m);
	a->role.server = xpu_share_server_new(&a->sess, lockfd, &m, err, sizeof(err));
	if (!a->role.server || xpu_session_add_source(&a->sess, a->role.server) < 0) {
		xpu_source_destroy(a->role.server);
		a->role.server = NULL;
		xpu_warn("%s: other xputops started now will not see this one's data", err[0] ? err : "out of memory");
	}
}

/* Whether other xputops read this one's stream now. */
static int serving(struct app *a)
{
	struct xpu_share_counts c = { 0 };
	if (a->role.server)
		xpu_share_server_counts(a->role.server, &c);
	return c.attached > 0;
}

/* What this xputop needs collected. */
static void own_need(const struct app *a, struct xpu_share_need *n)
{
	memset(n, 0, sizeof(*n));
	n->hz = a->o.hz;
	n->interval_ms = (uint32_t)(a->o.delay_s * 1000 + 0.5);
	if (n->interval_ms < XPU_NEED_MS_MIN)
		n->interval_ms = XPU_NEED_MS_MIN;
	if (n->interval_ms > XPU_NEED_MS_MAX)
		n->interval_ms = XPU_NEED_MS_MAX;
	n->flags = (a->o.npids ? 0 : XPU_NEED_ALL_PIDS) | (a->o.cmd ? XPU_NEED_FOLLOW : 0) |
		   (a->role.gpu_want.exact ? XPU_NEED_GPU_EXACT : 0);
	n->npids = a->o.npids;
	memcpy(n->pids, a->o.pids, a->o.npids * sizeof(n->pids[0]));
}

/* A client tells the collector what it needs. */
static void share_tell_needs(struct app *a)
{
	struct xpu_share_need n;
	own_need(a, &n);
	a->sess.gpu_exact_asked = a->role.gpu_want.exact;
	if (a->role.client && xpu_share_client_need(a->role.client, &n) < 0)
		xpu_debug("cannot tell the collector what this xputop needs: its stream will end");
}

/* This xputop's exact GPU tracing runs out (--gpu-exact's seconds, e's). */
static void gpu_want_expire(struct app *a)
{
	if (a->role.gpu_want.exact && a->role.gpu_want.until && xpu_now_mono() >= a->role.gpu_want.until) {
		a->role.gpu_want.exact = 0;
		a->role.gpu_want.until = 0;
		if (a->role.client)
			share_tell_needs(a);
	}
}

/* The processes the collector's GPU source serves: -p's of all. */
static void collect_pids(struct app *a, const struct xpu_share_needs *u)
{
	int all = (u->flags & XPU_NEED_ALL_PIDS) != 0;
	if (a->role.collect_ps_set)
		xpu_pidset_free(&a->role.collect_ps);
	a->role.collect_ps_set = !all && xpu_pidset_init(&a->role.collect_ps, u->pids, u->npids,
						     (u->flags & XPU_NEED_FOLLOW) != 0) == 0;
	all |= !a->role.collect_ps_set;	/* out of memory: widen, never narrow */
	xpu_session_collect(&a->sess, all, a->role.collect_ps_set ? &a->role.collect_ps : NULL);
	a->sess.stream_collect = all ? XPU_TICK_ALL_PIDS : 0;
	if (a->role.gpu)	/* libraries woken for an xputop that left go back to sleep */
		xpu_source_gpu_narrow(a->role.gpu);
}

/* The stream ticks at the shortest -d asked (-d's own floor, 0.05 s, is
 * XPU_NEED_MS_MIN): every xputop's view then ticks at its own -d, merging
 * the stream's ticks in between, this one's included. */
static void stream_pace(struct app *a, uint32_t ms)
{
	uint64_t ns = (uint64_t)ms * 1000000ULL, own = (uint64_t)(a->o.delay_s * 1e9);
	if (!ms || ns > own)
		ns = own;
	if (ns == (a->role.stream_ns ? a->role.stream_ns : own))
		return;
	a->role.stream_ns = ns;
	if (a->timer_set)
		app_arm_timer(a);
	xpu_debug("the stream ticks every %.3f s, this xputop's view every %.3f s", (double)ns / 1e9,
		  a->o.delay_s);
}

/* The collector collects the union of its own needs and its clients': the
 * CPU sampler at the highest rate and on the widest set of processes, the
 * GPU libraries of those processes served, exact if any asks, the stream
 * ticking at the shortest -d.  At each refresh, and at once (force) when
 * this xputop's own needs change. */
void app_role_needs(struct app *a, int force)
{
	struct xpu_share_needs *u = calloc(1, sizeof(*u));
	struct xpu_share_need own;
	gpu_want_expire(a);
	if (!u || !a->role.collecting)
		goto out;
	uint64_t gen = a->role.server ? xpu_share_server_needs(a->role.server, u) : 0;
	int theirs = (u->flags & XPU_NEED_GPU_EXACT) != 0;
	own_need(a, &own);
	xpu_share_needs_add(u, &own);
	int exact = (u->flags & XPU_NEED_GPU_EXACT) != 0;
	if (exact != (a->sess.cfg.gpu.mode == XPU_GPU_MODE_EXACT)) {
		xpu_session_gpu_exact(&a->sess, exact, 0, xpu_now_mono());
		force = 1;
	}
	/* Only this xputop's own wish runs out by itself (the GPU source ends it). */
	a->sess.cfg.gpu.exact_until = exact && !theirs ? a->role.gpu_want.until : 0;
	a->sess.gpu_exact_asked = a->role.gpu_want.exact;
	if (!force && a->role.needs_applied && gen == a->role.needs_gen && own.hz == a->role.applied.hz &&
	    own.flags == a->role.applied.flags)
		goto out;
	a->role.needs_gen = gen;
	a->role.needs_applied = 1;
	a->role.applied = own;
	stream_pace(a, u->interval_ms);
	struct xpu_cpu_source_opts co = { .hz = u->hz, .pids = u->pids,
					  .npids = u->flags & XPU_NEED_ALL_PIDS ? 0 : u->npids,
					  .follow_forks = (u->flags & XPU_NEED_FOLLOW) != 0 };
	if (a->role.cpu && xpu_source_cpu_retune(a->role.cpu, &co) < 0)
		xpu_warn("cannot sample at %u Hz for the xputops attached to this one: sampling at %u Hz",
			 co.hz, xpu_source_cpu_hz(a->role.cpu));
	a->sess.stream_hz = a->role.cpu ? xpu_source_cpu_hz(a->role.cpu) : u->hz;
	collect_pids(a, u);
	xpu_debug("collecting for %s: %u Hz, %s, GPU %s",
		  a->role.server ? "this xputop and its clients" : "this xputop", a->sess.stream_hz,
		  u->flags & XPU_NEED_ALL_PIDS ? "every process" : "some processes", exact ? "exact" : "sampled");
out:
	free(u);
}

/* How the stream is collected and how this xputop shows it, for the
 * header: the rate and, where this view merges the stream's ticks, the
 * stream's interval. */
static void collect_text(const struct app *a, char *buf, size_t size)
{
	const struct xpu_session *s = &a->sess;
	uint32_t hz = s->stream_hz ? s->stream_hz : s->cfg.sample_hz;
	uint64_t ns = s->stream_ns ? s->stream_ns : s->stream_interval;
	/* a client's is measured: a tenth of the view's -d either way is the same pace */
	int merged = ns && ns * 10 < s->cfg.interval_ns * 9;
	int n = snprintf(buf, size, "%u Hz", hz);
	/* the view's own interval is the header's "refresh" */
	if (merged && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "/%.3g s", (double)ns / 1e9);
	if (n > 0 && (size_t)n < size && hz > s->cfg.sample_hz)
		snprintf(buf + n, size - (size_t)n, " (shown at %u)", s->cfg.sample_hz);
}

/* What the header says the data comes from. */
static void describe(struct app *a)
{
	struct xpu_share_counts c = { 0 };
	char rate[96];
	if (a->role.collecting)
		a->sess.stream_ns = a->role.stream_ns ? a->role.stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	else
		a->sess.stream_ns = 0;	/* as the collector's ticks come */
	collect_text(a, rate, sizeof(rate));
	if (a->role.client) {
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "collector pid %d, %s",
			 (int)a->role.collector, rate);
		return;
	}
	if (a->role.server)
		xpu_share_server_counts(a->role.server, &c);
	a->sess.clients = c;
	if (c.attached || c.dropped || c.refused || c.turned_away)
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes, %s, serving %u xputop%s%s",
			 rate, c.attached, c.attached == 1 ? "" : "s",
			 c.dropped || c.refused || c.turned_away ? " (some dropped or turned away)" : "");
	else
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes, %s", rate);
}

static void share_client_status(struct app *a)
{
	int pid = (int)a->role.collector;
	a->sess.attached = 1;
	a->sess.collector_pid = pid;
	describe(a);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its CPU sampling", pid);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its injection library socket and launch probes", pid);
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its NPU tracing", pid);
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_ACTIVE,
				"from the collector, xputop pid %d: its NVML readings", pid);
}

static void mark_client(void *arg, struct xpu_dict *d)
{
	struct app *a = arg;
	if (a->role.client)
		xpu_share_client_mark(a->role.client, d);
}

/* The samples no xputop took while none collected count as dropped. */
static void share_count_gap(struct app *a, uint64_t from)
{
	uint64_t now = xpu_now_mono();
	if (!from || now <= from)
		return;
	struct xpu_event ev = { .type = XPU_EV_DROP, .source = XPU_SRC_CPU, .time = now };
	ev.drop.source = XPU_SRC_CPU;
	ev.drop.what = XPU_DROP_GAP;
	ev.drop.count = (uint64_t)((double)(now - from) / 1e9 * a->sess.cfg.sample_hz * a->sess.ncpus);
	if (ev.drop.count)
		xpu_session_emit(&a->sess, &ev);
}

/* Reads from the collector on fd: 0, or -1 (said why when loud). */
static int share_attach(struct app *a, int fd, int wait_ms, int loud)
{
	struct xpu_share_client *c = xpu_share_client_new(fd, &a->sess.dict);
	if (!c || xpu_share_client_wait_meta(c, wait_ms) < 0) {
		if (loud)
			xpu_err("cannot read from the xputop collecting on this machine: %s",
				c ? xpu_share_client_error(c) : "out of memory");
		xpu_share_client_free(c);
		return -1;
	}
	a->role.client = c;
	a->role.collector = xpu_share_client_pid(c);
	/* The keeper ends as the collector begins to die: the moment to take
	 * over, before its stream ends (share.h). */
	a->role.keeper_fd = xpu_share_keeper_pidfd(a->role.collector);
	if (a->role.keeper_fd < 0)
		xpu_debug("no lock keeper found for the collector (xputop pid %d): taking over when its "
			  "stream ends", (int)a->role.collector);
	return 0;
}

/* The client's descriptors in the loop's epoll set. */
void app_role_watch(struct app *a)
{
	app_epoll_add(a->epfd, xpu_share_client_fd(a->role.client), TAG_SHARE);
	if (a->role.keeper_fd >= 0)
		app_epoll_add(a->epfd, a->role.keeper_fd, TAG_KEEPER);
}

/* -p, -F, -d and exact GPU tracing are asked of the collector, which
 * collects for every xputop attached (share_tell_needs()); how the
 * collector traces is its own (said again on the screen). */
static void share_warn_options(struct app *a)
{
	const struct xpu_opts *o = &a->o;
	if (!o->gpu_no_stacks && !o->gpu_slice_ms && !o->gpu_period_ms && !o->gpu_waiters_spec && !o->npu_dev &&
	    !o->npu_probe_binary && o->gpu_own_hz == XPU_GPU_OWN_HZ_DEFAULT)
		return;
	snprintf(a->role.share_warning, sizeof(a->role.share_warning), "this xputop reads the collector's stream "
		 "(xputop pid %d): --gpu-slice, --gpu-period, --gpu-no-stacks, --gpu-waiters, --gpu-own-hz and "
		 "--npu-* given here "
		 "apply only if it "
		 "takes over (-p, -F, -d and --gpu-exact do apply)", (int)a->role.collector);
	xpu_warn("%s", a->role.share_warning);
}

/* A client's start: the models are sized as the collector's (its -F and
 * -d), whose stream feeds them. */
static int start_client(struct app *a, int fd)
{
	if (share_attach(a, fd, SHARE_WAIT_MS, 1) < 0)
		return -1;
	share_warn_options(a);
	const struct xpu_rec_meta *m = xpu_share_client_meta(a->role.client);
	struct xpu_session_cfg cfg = app_session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	if (app_start_services(a, &cfg) < 0 || xpu_session_add_holder(&a->sess, mark_client, a) < 0)
		return -1;
	a->sess.ncpus = m->ncpus;
	a->sess.stream_hz = m->sample_hz;	/* then each of its ticks says */
	a->sess.pace = 1;	/* its own -d, the collector ticking at least as often */
	const char *lib = xpu_inject_lib_path();
	if ((a->o.cmd && app_start_child(a, lib) < 0) || app_watch_pids(a, CLIENT_WATCH) < 0)
		return -1;
	gpu_want_init(a);
	share_tell_needs(a);
	app_preload_probes(a);
	share_client_status(a);
	if (a->o.cmd && xpu_child_release(&a->child, a->o.cmd[0]) < 0)
		return -1;
	xpu_session_begin(&a->sess, xpu_now_mono());
	return 0;
}

/* Attaches to the collector if one runs (1), else takes the collector lock
 * (0, *lockfd holds it, or -1 where it cannot be taken: then this xputop
 * collects alone).  -1 on an error, said. */
static int choose_role(struct app *a, int *lockfd)
{
	char sock[128];
	xpu_share_paths(sock, sizeof(sock), NULL, 0);
	for (int waited = 0; waited < SHARE_WAIT_MS; waited += 20) {
		int fd, rc = xpu_share_connect(&fd);
		if (rc == 0)
			return start_client(a, fd) < 0 ? -1 : 1;
		if (rc == -EACCES) {
			xpu_err("cannot attach to the xputop collecting on this machine (%s): only root and "
				"members of group %s may — run as root", sock, XPU_SHARE_GROUP);
			return -1;
		}
		if (waited == 0 && xpu_sys_check_root() < 0)
			return -1;
		*lockfd = xpu_share_lock();
		if (*lockfd >= 0)
			return 0;
		if (errno != EWOULDBLOCK) {
			xpu_warn("cannot take the collector lock beside %s (%s): this xputop collects alone",
				 sock, strerror(errno));
			return 0;
		}
		usleep(20000);	/* a collector is starting: it serves in a moment */
	}
	xpu_err("another xputop holds the collector lock but does not serve %s", sock);
	return -1;
}

/* Becomes the collector once the last one is gone: 0, -1 when another
 * xputop took the lock first, -2 when its probes would not start (it quits). */
static int share_take_over(struct app *a)
{
	uint64_t from = a->sess.stream_last;
	int lockfd = xpu_share_lock();
	if (lockfd < 0)
		return -1;
	uint64_t t0 = xpu_now_mono();
	a->role.locked = 1;
	if (app_start_probes(a) < 0) {	/* some sources may have started: no second try */
		xpu_err("cannot collect in the place of the collector that left (see above)");
		xpu_share_unlock(lockfd);
		a->quit = 1;
		a->status = 1;
		return -2;
	}
	xpu_debug("took over %.0f ms after the collector's last refresh: the lock came at %.0f ms, the "
		  "probes took %.0f ms", (double)(xpu_now_mono() - from) / 1e6, (double)(t0 - from) / 1e6,
		  (double)(xpu_now_mono() - t0) / 1e6);
	share_serve(a, lockfd);
	app_poll_new_sources(a);
	a->sess.attached = 0;
	app_role_needs(a, 1);	/* this xputop's own; its clients tell theirs as they attach */
	share_count_gap(a, from);
	return 0;
}

/* Without a collector to read from: take over, or attach to whoever did.
 * Tried again at each refresh until one works. */
void app_role_retry(struct app *a)
{
	int fd, pid = (int)a->role.collector;
	uint64_t from = a->sess.stream_last;
	int took = share_take_over(a);
	if (took == -2)
		return;
	if (took == 0) {
		xpu_warn("the collector (xputop pid %d) is gone: this xputop collects now", pid);
		a->sess.pace_lag = (int64_t)a->sess.cfg.interval_ns;	/* this tick is the view's, however short */
		app_role_tick(a);	/* at once: the view goes on within the refresh the collector missed */
		app_arm_timer(a);	/* and a whole refresh to the next */
		return;
	}
	if (xpu_share_connect(&fd) < 0 || share_attach(a, fd, 250, 0) < 0) {
		/* The dead collector's lock goes with its last files, or another
		 * xputop is starting to serve: soon, either way. */
		app_set_timer(a, SHARE_RETRY_NS);
		return;
	}
	app_arm_timer(a);
	app_role_watch(a);
	a->sess.stream_hz = xpu_share_client_meta(a->role.client)->sample_hz;
	share_tell_needs(a);
	share_client_status(a);
	share_count_gap(a, from);
}

static void share_collector_gone(struct app *a, int keeper)
{
	if (keeper)
		xpu_debug("the collector's lock keeper ended: the collector is going");
	else
		xpu_debug("the collector's stream ended: %s", xpu_share_client_error(a->role.client));
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, xpu_share_client_fd(a->role.client), NULL);
	if (a->role.keeper_fd >= 0) {
		epoll_ctl(a->epfd, EPOLL_CTL_DEL, a->role.keeper_fd, NULL);
		close(a->role.keeper_fd);
		a->role.keeper_fd = -1;
	}
	xpu_share_client_free(a->role.client);
	a->role.client = NULL;
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_WAITING,
			   "the collector (xputop pid %d) is gone: waiting for the next one", (int)a->role.collector);
	app_role_retry(a);
}

/* A collector's refresh: what its sources and the service have, the needs
 * applied (its own and its clients'), the stream ticked and, at this view's
 * -d, shown. */
void app_role_tick(struct app *a)
{
	if (xpu_share_lock_lost())
		xpu_warn("the collector lock's keeper (xputop-lock) was killed: another xputop may now "
			 "collect beside this one");
	/* What the service finished goes in before the sources' last records. */
	xpu_service_poll(a->svc);
	for (int i = 0; i < a->sess.nsources; i++) {
		struct xpu_source *src = a->sess.sources[i];
		src->drain(src, &a->sess);
		if (src->tick)
			src->tick(src, &a->sess);
	}
	app_role_needs(a, 0);
	/* Paused, the models stand still, unless other xputops read them. */
	if (a->vs.paused && !serving(a))
		return;
	describe(a);
	uint64_t views = a->sess.ticks;
	xpu_session_tick(&a->sess, xpu_now_mono(), xpu_now_wall());
	if (a->sess.ticks == views)	/* a tick of the stream only, merged into this view's next */
		return;
	xpu_sym_tick(a->sym, (uint64_t)(a->o.delay_s * 1e9));
	if (a->vs.paused)
		return;
	app_show(a);
	app_after_refresh(a);
}

/* The collector's stream: each tick it sends is a refresh here. */
void app_role_input(struct app *a)
{
	int r;
	uint64_t views = a->sess.ticks;
	while ((r = xpu_share_client_next(a->role.client, &a->sess)) > 0) {
		gpu_want_expire(a);
		describe(a);
		if (a->vs.paused || a->sess.ticks == views)	/* merged into this view's next tick */
			continue;
		views = a->sess.ticks;
		app_show(a);
		app_after_refresh(a);
		if (a->quit)
			return;
	}
	if (r < 0)
		share_collector_gone(a, 0);
}

/* The collector's lock keeper ended: its collector is dying (or quit). */
void app_role_keeper_gone(struct app *a)
{
	/* (an event of the batch may be an earlier keeper's, closed since) */
	struct pollfd p = { a->role.keeper_fd, POLLIN, 0 };
	if (!a->role.client || a->role.keeper_fd < 0 || poll(&p, 1, 0) != 1)
		return;
	if (xpu_procs_exiting((uint32_t)a->role.collector) != 0) {
		share_collector_gone(a, 1);
		return;
	}
	/* A keeper killed by hand (its collector says so): the stream's end
	 * still tells. */
	xpu_debug("the collector's lock keeper ended, the collector (xputop pid %d) runs on",
		  (int)a->role.collector);
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, a->role.keeper_fd, NULL);
	close(a->role.keeper_fd);
	a->role.keeper_fd = -1;
}

/* Quitting: the injection library's socket and the collector lock go first,
 * so an attached xputop takes over now, not after this one's teardown. */
void app_role_stop(struct app *a)
{
	if (!a->role.server)
		return;
	xpu_source_gpu_close(a->role.gpu);
	xpu_share_server_stop(a->role.server);
}

/* The e key: exact GPU tracing for a while (--gpu-exact's seconds, else
 * EXACT_KEY_S), or back to sampled. */
void app_role_switch_gpu_tracing(struct app *a)
{
	char msg[160];
	if (a->replay || a->import) {
		xpu_tui_status("a replay shows the tracing mode it was recorded with");
		return;
	}
	int exact = !a->role.gpu_want.exact;
	double secs = a->o.gpu_exact_s > 0 ? a->o.gpu_exact_s : EXACT_KEY_S;
	a->role.gpu_want.exact = exact;
	a->role.gpu_want.until = exact ? xpu_now_mono() + (uint64_t)(secs * 1e9) : 0;
	if (!a->role.collecting) {	/* asked of the collector: the header says what it grants */
		share_tell_needs(a);
		snprintf(msg, sizeof(msg), exact ? "GPU: every kernel traced asked of the collector (xputop pid %d) "
						   "for %.0f s (e: no longer)" : "GPU: exact tracing no longer asked "
						   "of the collector (xputop pid %d)", (int)a->role.collector, secs);
		xpu_tui_status(msg);
		return;
	}
	app_role_needs(a, 1);
	if (!exact && a->sess.cfg.gpu.mode == XPU_GPU_MODE_EXACT) {
		xpu_tui_status("GPU: exact tracing stays on: an attached xputop asks for it");
		return;
	}
	if (exact)
		snprintf(msg, sizeof(msg), "GPU: every kernel traced for %.0f s (e: back to sampled)", secs);
	else
		snprintf(msg, sizeof(msg), "GPU: sampled tracing, %u ms in every %u ms", a->sess.cfg.gpu.slice_ms,
			 a->sess.cfg.gpu.period_ms);
	xpu_tui_status(msg);
}

/* Live: a client where a collector runs (start_client()), else the
 * collector, with its own probes, serving its stream. */
int app_role_start(struct app *a)
{
	int lockfd = -1;
	a->role.keeper_fd = -1;
	int role = choose_role(a, &lockfd);
	if (role != 0)
		return role < 0 ? -1 : 0;
	a->role.locked = lockfd >= 0;
	struct xpu_session_cfg cfg = app_session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	const char *lib = xpu_inject_lib_path();
	gpu_want_init(a);
	a->sess.pace = 1;
	if (app_start_services(a, &cfg) < 0 || (a->o.cmd && app_start_child(a, lib) < 0) ||
	    app_watch_pids(a, CLIENT_WATCH) < 0 || app_start_probes(a) < 0) {
		xpu_share_unlock(lockfd);
		return -1;
	}
	share_serve(a, lockfd);
	app_role_needs(a, 1);
	xpu_session_begin(&a->sess, xpu_now_mono());
	if (a->o.cmd && xpu_child_release(&a->child, a->o.cmd[0]) < 0)
		return -1;
	return 0;
}
