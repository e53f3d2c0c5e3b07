/* SPDX-License-Identifier: GPL-2.0-only */
#include "source_cpu.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cpu.h"
#include "cpu.skel.h"
#include "err.h"
#include "pidset.h"
#include "procstat.h"
#include "rawstack.h"
#include "session.h"
#include "source.h"
#include "symbolize.h"
#include "sys.h"

/* How often the ring is drained, on average.  Not on each sample: woken by
 * a sample, xputop ran just as the other CPUs' sampling timers (started
 * together, so in phase) fired, and was charged CPU time its victims lost.
 * Nor on a fixed period: the timer was armed just before the sampling
 * timers, so at any -F that divides its period (10, 25, 50 Hz) each drain
 * ran as a sample was taken and xputop's row showed 40% at -F 10 where the
 * kernel said 0.7% (issue 28).  Each wait is drawn anew, uniform over
 * DRAIN_MS/2 .. 3*DRAIN_MS/2, so the drains fall at any phase of the
 * sampling period and are sampled as often as they run, no more.  Often
 * enough that the maps of a process that lives a moment are read while it
 * is there. */
#define DRAIN_MS 100

struct cpu_source {
	struct xpu_source base;
	struct cpu_bpf *skel;
	struct ring_buffer *ring;
	int epfd;		/* the ring (when it fills up) and the drain timer */
	int timerfd;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	uint32_t hz;
	struct xpu_session *sess;
	struct xpu_symbolizer *sym;
	uint64_t seen_drops;
	uint64_t bad_records;
	struct xpu_procstat procstat;
	uint64_t rand;		/* the drain timer's jitter (xorshift) */
};

static uint32_t comm_str(struct xpu_dict *d, const char *comm)
{
	return xpu_dict_str(d, comm, strnlen(comm, XPU_COMM_LEN));
}

static int stack_depth(int32_t bytes)
{
	if (bytes <= 0)
		return 0;
	return bytes / 8 > XPU_CPU_MAX_DEPTH ? XPU_CPU_MAX_DEPTH : bytes / 8;
}

static void on_sample(struct cpu_source *c, const struct xpu_cpu_sample *r)
{
	struct xpu_dict *d = &c->sess->dict;
	/* Taken while the other sources were starting, before the first
	 * interval: counted in it, a thread would run at 113%. */
	if (r->time_ns < c->sess->start_mono) {
		c->sess->before_start++;
		return;
	}
	struct xpu_event ev = {
		.type = XPU_EV_CPU_SAMPLE, .source = XPU_SRC_CPU,
		.pid = r->pid, .tid = r->tid, .time = r->time_ns,
	};
	/* __u64 is unsigned long long, uint64_t unsigned long: the same 64 bits. */
	ev.cpu.stack = xpu_rawstack_intern(c->sym, d, r->pid, (const uint64_t *)r->ustack,
					   stack_depth(r->ulen), (const uint64_t *)r->kstack,
					   stack_depth(r->klen), NULL, 0);
	ev.cpu.comm = comm_str(d, r->comm);
	ev.cpu.tcomm = comm_str(d, r->tcomm);
	ev.cpu.uid = r->uid;
	ev.cpu.user = xpu_dict_cstr(d, xpu_sys_user_name(r->uid));
	ev.cpu.cpu = r->cpu;
	xpu_session_emit(c->sess, &ev);
}

static void on_proc(struct cpu_source *c, const struct xpu_cpu_proc *r)
{
	if (r->type == XPU_CPU_REC_EXEC) {
		xpu_sym_proc_exec(c->sym, r->pid);
		return;
	}
	xpu_sym_proc_exit(c->sym, r->pid);
	struct xpu_event ev = {
		.type = XPU_EV_PROC_EXIT, .source = XPU_SRC_CPU, .pid = r->pid, .time = r->time_ns,
	};
	xpu_session_emit(c->sess, &ev);
}

/* Every record is checked for size and type before it is read. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct cpu_source *c = ctx;
	uint32_t type;

	if (size < sizeof(type))
		goto bad;
	memcpy(&type, data, sizeof(type));
	if (type == XPU_CPU_REC_SAMPLE && size >= sizeof(struct xpu_cpu_sample))
		on_sample(c, data);
	else if ((type == XPU_CPU_REC_EXEC || type == XPU_CPU_REC_EXIT) &&
		 size >= sizeof(struct xpu_cpu_proc))
		on_proc(c, data);
	else
		goto bad;
	return 0;
bad:
	c->bad_records++;
	return 0;
}

/* The next drain, DRAIN_MS/2 .. 3*DRAIN_MS/2 from now (see DRAIN_MS). */
static int arm_drain(struct cpu_source *c)
{
	c->rand ^= c->rand << 13;
	c->rand ^= c->rand >> 7;
	c->rand ^= c->rand << 17;
	long ns = DRAIN_MS * 500000L + (long)(c->rand % (DRAIN_MS * 1000000UL));
	struct itimerspec its = { .it_value = { ns / 1000000000L, ns % 1000000000L } };
	return timerfd_settime(c->timerfd, 0, &its, NULL);
}

static int cpu_fd(struct xpu_source *src)
{
	struct cpu_source *c = (struct cpu_source *)src;
	return c->epfd;
}

static int cpu_drain(struct xpu_source *src, struct xpu_session *s)
{
	struct cpu_source *c = (struct cpu_source *)src;
	uint64_t expirations;
	if (read(c->timerfd, &expirations, sizeof(expirations)) < 0) {
		if (errno != EAGAIN)
			xpu_debug("CPU drain timer: %s", strerror(errno));
	} else if (arm_drain(c) < 0) {
		xpu_debug("CPU drain timer: %s", strerror(errno));
	}
	int n = ring_buffer__consume(c->ring);
	return n == -EINTR ? 0 : n;
}

static void cpu_tick(struct xpu_source *src, struct xpu_session *s)
{
	struct cpu_source *c = (struct cpu_source *)src;
	xpu_session_drops(s, XPU_SRC_CPU,
			  c->skel->bss->dropped_samples + c->skel->bss->dropped_procs + c->bad_records,
			  &c->seen_drops);
	/* Once a refresh, for the rows shown: not in the ring's callbacks. */
	xpu_procstat_tick(&c->procstat, s);
}

static void detach_cpus(struct cpu_source *c)
{
	for (int i = 0; i < c->ncpus; i++) {
		bpf_link__destroy(c->links[i]);
		if (c->pfds[i] >= 0)
			close(c->pfds[i]);
	}
	free(c->links);
	free(c->pfds);
	c->links = NULL;
	c->pfds = NULL;
	c->ncpus = 0;
}

static void cpu_destroy(struct xpu_source *src)
{
	struct cpu_source *c = (struct cpu_source *)src;
	detach_cpus(c);
	ring_buffer__free(c->ring);
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->timerfd >= 0)
		close(c->timerfd);
	cpu_bpf__destroy(c->skel);
	xpu_procstat_free(&c->procstat);
	free(c);
}

static int open_perf_event(int cpu, uint32_t hz)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.freq = 1,
		.sample_freq = hz,
	};
	return (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_cpus(struct cpu_source *c, uint32_t hz)
{
	int *cpus = NULL;
	int n = xpu_sys_online_cpus(&cpus);
	if (n <= 0) {
		xpu_err("cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -1;
	}
	c->links = calloc(n, sizeof(*c->links));
	c->pfds = malloc(n * sizeof(int));
	if (!c->links || !c->pfds) {
		free(cpus);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		c->pfds[i] = open_perf_event(cpus[i], hz);
		c->ncpus = i + 1;
		if (c->pfds[i] < 0) {
			int err = errno;
			if (err == ENODEV)	/* went offline meanwhile */
				continue;
			xpu_err("cannot open a cpu-clock perf event on CPU %d: %s", cpus[i],
				xpu_sys_bpf_hint(err));
			free(cpus);
			return -1;
		}
		c->links[i] = bpf_program__attach_perf_event(c->skel->progs.cpu_sample, c->pfds[i]);
		if (!c->links[i]) {
			xpu_err("cannot attach the CPU sampler on CPU %d: %s", cpus[i],
				xpu_sys_bpf_hint(errno));
			free(cpus);
			return -1;
		}
	}
	free(cpus);
	return 0;
}

/* One descriptor for the main loop: the ring's (readable when the ring
 * fills up) and the drain timer's. */
static int watch_ring(struct cpu_source *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	c->rand = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->epfd < 0 || c->timerfd < 0 || arm_drain(c) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->timerfd, &ev) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(c->ring), &ev) < 0) {
		xpu_err("cannot set up the CPU sample drain: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* A ring that holds a few hundred milliseconds of samples on every CPU. */
static uint32_t ring_size(int ncpus, uint32_t hz)
{
	uint64_t want = (uint64_t)ncpus * hz * sizeof(struct xpu_cpu_sample) / 2;
	uint32_t sz = 4u << 20;
	while (sz < want && sz < (256u << 20))
		sz <<= 1;
	return sz;
}

struct xpu_source *xpu_source_cpu_load(struct xpu_session *s, struct xpu_symbolizer *sym,
				       const struct xpu_cpu_source_opts *o)
{
	struct cpu_source *c = calloc(1, sizeof(*c));
	int err;
	if (!c)
		return NULL;
	c->base = (struct xpu_source){ "cpu", cpu_fd, cpu_drain, cpu_tick, cpu_destroy };
	c->epfd = c->timerfd = -1;
	c->sess = s;
	c->sym = sym;
	xpu_procstat_init(&c->procstat);

	c->skel = cpu_bpf__open();
	if (!c->skel) {
		xpu_err("cannot open the CPU sampler BPF object: %s", xpu_sys_bpf_hint(errno));
		goto fail;
	}
	c->skel->bss->filter_pids = o->npids > 0;
	c->skel->bss->follow_forks = o->follow_forks;
	uint32_t ncpus = o->ncpus ? o->ncpus : s->ncpus ? s->ncpus : 1;
	uint32_t ring = ring_size((int)ncpus, o->hz);
	bpf_map__set_max_entries(c->skel->maps.events, ring);
	c->skel->rodata->wakeup_bytes = ring / 4;
	err = cpu_bpf__load(c->skel);
	if (err) {
		xpu_err("cannot load the CPU sampler BPF program: %s", xpu_sys_bpf_hint(err));
		goto fail;
	}
	for (uint32_t i = 0; i < o->npids; i++) {
		uint8_t one = 1;
		bpf_map__update_elem(c->skel->maps.pids, &o->pids[i], sizeof(uint32_t), &one, 1, BPF_ANY);
	}
	c->ring = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record, c, NULL);
	if (!c->ring) {
		xpu_err("cannot set up the CPU sample ring buffer: %s", xpu_sys_bpf_hint(errno));
		goto fail;
	}
	c->hz = o->hz;
	return &c->base;
fail:
	cpu_destroy(&c->base);
	return NULL;
}

int xpu_source_cpu_attach(struct xpu_source *src)
{
	struct cpu_source *c = (struct cpu_source *)src;
	if (watch_ring(c) < 0 || attach_cpus(c, c->hz) < 0)
		return -1;
	int err = cpu_bpf__attach(c->skel);
	if (err) {
		xpu_err("cannot attach the exec/exit tracepoints: %s", xpu_sys_bpf_hint(err));
		return -1;
	}
	xpu_session_status(c->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE, "cpu-clock sampling at %u Hz on %d CPUs",
			   c->hz, c->ncpus);
	return 0;
}

/* The processes first: a wider set only adds samples, so nothing is lost
 * while the rate changes. */
/* The pid map keeps only what o needs: its pids and, where it follows
 * forks, their descendants (looked up in /proc once each).  Pids of an
 * xputop that left go, so the kernel filter narrows back with the union. */
static void narrow_pids(struct cpu_source *c, const struct xpu_cpu_source_opts *o)
{
	struct xpu_pidset keep;
	uint32_t key, next, *drop = NULL, ndrop = 0, cap = 0;
	int more;
	if (xpu_pidset_init(&keep, o->pids, o->npids, o->follow_forks) < 0)
		return;	/* out of memory: wider than needed, never narrower */
	for (more = bpf_map__get_next_key(c->skel->maps.pids, NULL, &next, sizeof(next)) == 0; more;
	     more = bpf_map__get_next_key(c->skel->maps.pids, &key, &next, sizeof(next)) == 0) {
		key = next;
		if (xpu_pidset_has(&keep, key))
			continue;
		if (ndrop == cap) {
			uint32_t *d = realloc(drop, (cap = cap ? 2 * cap : 64) * sizeof(*d));
			if (!d)
				break;
			drop = d;
		}
		drop[ndrop++] = key;
	}
	for (uint32_t i = 0; i < ndrop; i++)
		bpf_map__delete_elem(c->skel->maps.pids, &drop[i], sizeof(drop[i]), 0);
	if (ndrop)
		xpu_debug("CPU sampling: %u processes no xputop watches any more left the pid filter", ndrop);
	free(drop);
	xpu_pidset_free(&keep);
}

int xpu_source_cpu_retune(struct xpu_source *src, const struct xpu_cpu_source_opts *o)
{
	struct cpu_source *c = (struct cpu_source *)src;
	int all = !o->npids;
	if (!all)
		narrow_pids(c, o);
	for (uint32_t i = 0; i < o->npids && !all; i++) {
		uint8_t one = 1;
		if (bpf_map__update_elem(c->skel->maps.pids, &o->pids[i], sizeof(uint32_t), &one, 1, BPF_ANY) < 0)
			all = 1;	/* the map is full: every process rather than fewer than asked */
	}
	c->skel->bss->follow_forks = o->follow_forks;
	c->skel->bss->filter_pids = !all;
	if (o->hz == c->hz || !c->links)
		return 0;
	uint32_t old = c->hz;
	detach_cpus(c);
	if (attach_cpus(c, o->hz) == 0) {
		c->hz = o->hz;
		xpu_session_status(c->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE, "cpu-clock sampling at %u Hz on %d CPUs",
				   c->hz, c->ncpus);
		return 0;
	}
	detach_cpus(c);
	if (attach_cpus(c, old) < 0)
		xpu_session_status(c->sess, XPU_SRC_CPU, XPU_SRC_FAILED, "CPU sampling stopped: it could not be "
				   "started again at %u Hz (see the message above)", old);
	return -1;
}

uint32_t xpu_source_cpu_hz(const struct xpu_source *src)
{
	return ((const struct cpu_source *)src)->hz;
}

struct xpu_source *xpu_source_cpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      const struct xpu_cpu_source_opts *o)
{
	struct xpu_source *src = xpu_source_cpu_load(s, sym, o);
	if (src && xpu_source_cpu_attach(src) < 0) {
		cpu_destroy(src);
		return NULL;
	}
	return src;
}
