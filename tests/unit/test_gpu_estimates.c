/* SPDX-License-Identifier: GPL-2.0-only */
/* The sampled GPU estimates against the exact figures, without a GPU.
 *
 * A workload is an exact stream of launches (each with its kernel's time).
 * It is replayed as if sampled, the way xputop's sources deliver it: an
 * injected process traces slices placed by the library's own schedule
 * (inject/sched.c), its kernels coming a flush after they ended and each
 * slice reported when it ends; a process seen by the launch probes only is
 * counted while the probes are on (slices placed the same way), its counts
 * read at every refresh and the probes' spans handed on after them, as
 * core/sources/gpu_probes.c does.  The GPU model's estimates are then held
 * against what the workload really did, over many seeds: on average within
 * 5% (no bias), and each run within 5% or within the uncertainty the
 * estimate states.
 *
 * Beside the synthetic shapes, real workloads: exact recordings made on a
 * GPU and kept in tests/fixtures/ (gpu-*.fx.gz, README.md there), each
 * launch with its thread and kernels (graph kernels share their launch's
 * correlation id), replayed end to end as many times as the run needs.
 * Their kernel calls and each kernel's share of the GPU time are held to
 * the exact figures too. */
#include "check.h"

#include <math.h>
#include <zlib.h>

#include "dict.h"
#include "event.h"
#include "gpu_probes.h"
#include "inject.h"
#include "model_gpu.h"
#include "table.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL
#define T0 (1000 * SEC)		/* xputop starts */
#define TICK SEC
#define FLUSH (20 * MS)		/* the library's records come this much later */

enum shape { STEADY, IDLE, BURSTY, RECORDED };

/* The sampled mode replayed: the default's, or --gpu-sample SLICE/PERIOD's
 * (sample_at). */
static uint32_t slice_ms = XPU_SCHED_SLICE_MS, period_ms = XPU_SCHED_PERIOD_MS;

static void sample_at(uint32_t slice, uint32_t period)
{
	slice_ms = slice;
	period_ms = period;
}

/* A recorded workload (bench/gpufixture.c writes them): launches in time
 * order, each with its kernels. */
struct fx_kernel {
	uint32_t name;
	int32_t start_us;	/* after the launch */
	uint32_t dur_ns;
	uint32_t graph;
};

struct fx_launch {
	uint64_t at;		/* ns after the first launch */
	uint32_t tid, first, n;	/* thread (0, 1, ...); its kernels */
};

struct fixture {
	char **names;
	uint32_t nnames;
	struct fx_launch *l;
	struct fx_kernel *k;
	uint32_t nl, nk;
};

struct work {
	const char *name;
	enum shape shape;
	int launch_only;
	uint64_t seconds;
	const struct fixture *fx;	/* RECORDED */
	uint64_t tile_ns;		/* RECORDED: a copy of the recording starts every tile_ns */
	/* generator state */
	uint64_t rng, burst_end, burst_next;
	uint32_t burst_left;
	uint64_t tile, at;		/* RECORDED: which copy, which launch */
	uint64_t origin;		/* RECORDED: where the first copy starts */
	/* The observer effect: inside a slice the launching thread runs at
	 * `pace` (0 reads as 1) of its untraced speed, its own code as fast as
	 * ever and CUDA's slower (docs/gpu-estimates.md).  With own_hz the
	 * sampler's GPU_OWN events come: each launch's own_us of own CPU time,
	 * sampled at own_hz, and own_slow more of it inside a slice (the
	 * program's own code slowed too, which own time cannot correct). */
	double pace, own_slow;
	uint32_t own_hz;
	uint32_t own_us;
	/* The launch probes count an injected process too: its launches in
	 * their slices (placed as xputop places them, from its start), read
	 * at each refresh, the spans after (core/sources/gpu_probes.c).  With
	 * trap_ns each launch they count takes that much longer (their trap),
	 * what follows coming as much later, and the count says so. */
	int probes;
	uint64_t trap_ns;
	/* The library traces throughout while its launches would cost CUPTI
	 * at most whole_us a second (inject/sched.c, run launch by launch:
	 * lsim); 0: slices only.  Needs pace 1. */
	uint32_t whole_us;
	/* The probes' thread does not tell the process's CPU time (GPU_CPU):
	 * their count scales by time alone, as before it did. */
	int cpu_off;
	/* IDLE: bursts idle_x times as long (0 reads as 1), their launches
	 * idle_gap_us apart (0 reads as 20). */
	uint32_t idle_x, idle_gap_us;
};

/* One launch as the workload made it: its time, thread and kernels. */
struct launch {
	uint64_t t;
	uint32_t tid, nk;
	const struct fx_kernel *k;
	struct fx_kernel one;	/* the synthetic shapes' kernel */
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t uniform(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* The launch after t.  Steady: every 200 us (+-50).  Idle: a burst of
 * 30-150 launches 20 us apart every 0.5-2.5 s (about 900 in 12 s, as the
 * issue's mostly idle PyTorch process).  Bursty: steady for 1 s in every 10. */
static uint64_t next_launch(struct work *w, uint64_t t)
{
	switch (w->shape) {
	case STEADY:
		return t + uniform(&w->rng, 150 * US, 250 * US);
	case IDLE:
		if (w->burst_left) {
			w->burst_left--;
			return t + (w->idle_gap_us ? w->idle_gap_us : 20) * US;
		}
		w->burst_next += uniform(&w->rng, 500 * MS, 2500 * MS);
		w->burst_left = (uint32_t)uniform(&w->rng, 30, 150) * (w->idle_x ? w->idle_x : 1) - 1;
		return w->burst_next;
	case BURSTY: {
		uint64_t t1 = t + uniform(&w->rng, 150 * US, 250 * US);
		uint64_t phase = (t1 - w->burst_next) % (10 * SEC);
		return phase < SEC ? t1 : t1 + 10 * SEC - phase;
	}
	case RECORDED:
		break;
	}
	return UINT64_MAX;
}

/* The workload's first launch at or after start (first 1), or the one after
 * l; 0 when it made no more before end. */
static int next(struct work *w, uint64_t start, uint64_t end, struct launch *l, int first)
{
	if (w->shape != RECORDED) {
		l->t = first ? next_launch(w, start) : next_launch(w, l->t);
		l->tid = 0;
		l->nk = 1;
		l->one = (struct fx_kernel){ 0, 5, (uint32_t)(50 * US + l->t % (100 * US)), 0 };
		l->k = &l->one;
		return l->t < end;
	}
	const struct fixture *fx = w->fx;
	if (first) {
		w->tile = 0;
		w->at = 0;
		w->origin = start;
	} else if (++w->at == fx->nl) {
		w->at = 0;
		w->tile++;
	}
	const struct fx_launch *r = &fx->l[w->at];
	l->t = w->origin + w->tile * w->tile_ns + r->at;
	l->tid = r->tid;
	l->nk = r->n;
	l->k = &fx->k[r->first];
	return l->t < end;
}

static char *read_line(gzFile f, char **buf, size_t *cap)
{
	size_t len = 0;
	for (;;) {
		if (*cap - len < 2) {
			*cap = *cap ? 2 * *cap : 1 << 16;
			*buf = realloc(*buf, *cap);
			if (!*buf)
				abort();
		}
		if (!gzgets(f, *buf + len, (int)(*cap - len)))
			return len ? *buf : NULL;
		len += strlen(*buf + len);
		if (len && (*buf)[len - 1] == '\n') {
			(*buf)[len - 1] = 0;
			return *buf;
		}
	}
}

static void fixture_free(struct fixture *fx)
{
	if (!fx)
		return;
	for (uint32_t i = 0; fx->names && i < fx->nnames; i++)
		free(fx->names[i]);
	free(fx->names);
	free(fx->l);
	free(fx->k);
	free(fx);
}

/* Reads a fixture (format: bench/gpufixture.c); NULL with a message if it
 * cannot. */
static struct fixture *fixture_load(const char *path)
{
	gzFile f = gzopen(path, "rb");
	char *buf = NULL, *line;
	size_t cap = 0;
	uint32_t cap_k = 0;
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!f || !fx)
		goto bad;
	if (!(line = read_line(f, &buf, &cap)) || strcmp(line, "xputop-gpu-fixture 1") ||
	    !(line = read_line(f, &buf, &cap)) || sscanf(line, "names %u", &fx->nnames) != 1)
		goto bad;
	fx->names = calloc(fx->nnames, sizeof(*fx->names));
	for (uint32_t i = 0; fx->names && i < fx->nnames; i++)
		if (!(line = read_line(f, &buf, &cap)) || !(fx->names[i] = strdup(line)))
			goto bad;
	if (!fx->names || !(line = read_line(f, &buf, &cap)) || sscanf(line, "launches %u", &fx->nl) != 1)
		goto bad;
	fx->l = calloc(fx->nl ? fx->nl : 1, sizeof(*fx->l));
	uint64_t at = 0;
	for (uint32_t i = 0; fx->l && i < fx->nl; i++) {
		char *p;
		if (!(line = read_line(f, &buf, &cap)))
			goto bad;
		struct fx_launch *r = &fx->l[i];
		at += strtoull(line, &p, 10) * US;
		r->at = at;
		r->tid = (uint32_t)strtoul(p, &p, 10);
		r->n = (uint32_t)strtoul(p, &p, 10);
		r->first = fx->nk;
		for (uint32_t j = 0; j < r->n; j++) {
			if (fx->nk == cap_k) {
				cap_k = cap_k ? 2 * cap_k : 4096;
				fx->k = realloc(fx->k, cap_k * sizeof(*fx->k));
				if (!fx->k)
					abort();
			}
			struct fx_kernel *k = &fx->k[fx->nk++];
			k->name = (uint32_t)strtoul(p, &p, 10);
			k->start_us = (int32_t)strtol(p, &p, 10);
			k->dur_ns = (uint32_t)strtoul(p, &p, 10);
			k->graph = (uint32_t)strtoul(p, &p, 10);
			if (k->name >= fx->nnames)
				goto bad;
		}
	}
	if (!fx->l)
		goto bad;
	gzclose(f);
	free(buf);
	return fx;
bad:
	fprintf(stderr, "  cannot read %s (run from the source tree)\n", path);
	fixture_free(fx);
	fx = NULL;
	if (f)
		gzclose(f);
	free(buf);
	return fx;
}

/* An event as a source hands it on, at its arrival time. */
struct arrival {
	uint64_t at, seq;
	struct xpu_event ev;
};

struct stream {
	struct arrival *v;
	size_t n, cap;
};

static void put(struct stream *s, uint64_t at, const struct xpu_event *ev)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n] = (struct arrival){ at, s->n, *ev };
	s->n++;
}

static int by_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The library's slices from `from` to `to`, as its schedule places them
 * at the sampling replayed (sample_at). */
static uint32_t slices(uint64_t seed, uint64_t from, uint64_t to, uint64_t (*v)[2], uint32_t max)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode mode = { XPU_WIRE_MODE_SAMPLED, period_ms, slice_ms, 0 };
	uint32_t n = 0;
	uint64_t now = from;
	xpu_sched_mode(&s, &mode, now, seed);
	while (now < to && n < max) {
		now += xpu_sched_wait(&s, now);
		int act = xpu_sched_due(&s, now);
		if (act == XPU_SCHED_ON)
			v[n][0] = now;
		if (act == XPU_SCHED_OFF)
			v[n++][1] = now;
	}
	return n;
}

/* The launch probes' schedule as core/sources/launch_probes.c runs it: on
 * throughout from the start, then, once their traps outrun the budget, a
 * slice at a random point of each period; after a slice whose hits, at its
 * pace, would cost at most half the budget a second, paused to the
 * period's end, then on throughout until a check (every 20 ms) finds the
 * bucket (a second's budget, refilled with time, drained by the hits'
 * traps) empty, the next period starting there.
 * Advanced launch by launch (psim_hit), its spans collected for the
 * refreshes; one on throughout is handed on up to each refresh
 * (psim_refresh), as xpu_launch_probes_spans does. */
#define PSIM_CHECK (20 * MS)
#define PSIM_SPANS 8192
/* After a span on throughout its traps ended, the probes stay in for a
 * slice within PSIM_KEEP (launch_probes.c's KEEP_MS), and go out otherwise,
 * which takes PSIM_DETACH (100-120 ms in a busy CUDA process on an H200): a
 * slice placed before that is done begins when it is. */
#define PSIM_KEEP (250 * MS)
#define PSIM_DETACH (100 * MS)

/* The launching thread's CPU time, as the probes' thread reads its
 * counter at each change of their state and at each refresh
 * (launch_probes.c): on CPU between launches at most PSIM_BUSY_GAP apart
 * (its own code, a sync that spins), else asleep until PSIM_LAUNCH_CPU
 * before the next. */
#define PSIM_BUSY_GAP (5 * MS)
#define PSIM_LAUNCH_CPU (20 * US)

struct psim_cpu {
	uint64_t last, next;	/* the last launch, the next (0: none yet, not known) */
	uint64_t at_last;	/* CPU time at the last launch */
	uint64_t mark;		/* the last reading */
	uint64_t ns[3];		/* since the last refresh: in slices, on throughout, in all */
};

struct psim {
	struct psim_cpu cpu;
	int cpu_off;		/* its CPU time not told */
	uint64_t rng, period, slice, len, budget, trap;
	int state;		/* 0: waiting for the slice, 1: in it, 2: on throughout,
				 * 3: after a slice, waiting for the period's end to be so */
	uint64_t at;		/* when the state changes or is checked next */
	uint64_t from;		/* the span's start */
	uint64_t hits, mark;	/* hits in all; at the span's start or the last check */
	double bucket;
	uint64_t sp[PSIM_SPANS][3];	/* start, end, XPU_GPU_MODE_* */
	uint32_t n, sent;
};

/* When the thread is on CPU before the next launch. */
static uint64_t cpu_busy_from(const struct psim_cpu *c)
{
	if (!c->next || !c->last)
		return UINT64_MAX;
	return c->next - c->last <= PSIM_BUSY_GAP ? c->last
	       : c->next > PSIM_LAUNCH_CPU ? c->next - PSIM_LAUNCH_CPU : 0;
}

static uint64_t cpu_at(const struct psim_cpu *c, uint64_t t)
{
	uint64_t from = cpu_busy_from(c);
	if (t <= from)
		return c->at_last;
	return c->at_last + (t < c->next ? t : c->next) - from;
}

/* The counter read at t: the time since the last reading put to the
 * probes' state then (1: a slice, 2: on throughout). */
static void cpu_read(struct psim *ps, uint64_t t)
{
	struct psim_cpu *c = &ps->cpu;
	uint64_t v = cpu_at(c, t);
	if (v <= c->mark)
		return;
	uint64_t d = v - c->mark;
	c->mark = v;
	c->ns[2] += d;
	if (ps->state == 1)
		c->ns[0] += d;
	else if (ps->state == 2)
		c->ns[1] += d;
}

/* The next launch comes at t (the refreshes and changes before it read the
 * clock knowing it). */
static void cpu_next(struct psim *ps, uint64_t t)
{
	ps->cpu.next = t;
}

static void cpu_launch(struct psim *ps, uint64_t t)
{
	struct psim_cpu *c = &ps->cpu;
	c->at_last = cpu_at(c, t);
	c->last = t;
	c->next = 0;
}

static void psim_place(struct psim *ps)
{
	ps->state = 0;
	ps->at = ps->period + rnd(&ps->rng) % (ps->len - ps->slice + 1);
}

static void psim_init(struct psim *ps, uint64_t seed, uint64_t t0, uint64_t trap_ns)
{
	*ps = (struct psim){ .rng = seed | 1, .period = t0, .len = (uint64_t)period_ms * MS, .trap = trap_ns };
	ps->slice = xpu_gpu_probes_slice_ms(slice_ms, period_ms) * MS;
	ps->budget = XPU_GPU_PROBE_WHOLE_US * US;
	/* the first files go on throughout at once */
	ps->state = 2;
	ps->from = t0;
	ps->bucket = (double)ps->budget;
	ps->at = t0 + PSIM_CHECK;
}

static void psim_span(struct psim *ps, uint64_t lo, uint64_t hi, uint32_t mode)
{
	if (hi <= lo || ps->n == PSIM_SPANS)
		return;
	ps->sp[ps->n][0] = lo;
	ps->sp[ps->n][1] = hi;
	ps->sp[ps->n++][2] = mode;
}

static void psim_until(struct psim *ps, uint64_t t)
{
	/* what a trap costs, for the budget: 1 us until measured, as xputop */
	double trap = ps->trap ? (double)ps->trap : 1000;
	while (ps->at <= t) {
		cpu_read(ps, ps->at);
		if (ps->state == 0) {
			ps->state = 1;
			ps->from = ps->at;
			ps->mark = ps->hits;
			ps->at += ps->slice;
		} else if (ps->state == 1) {
			psim_span(ps, ps->from, ps->at, XPU_GPU_MODE_SAMPLED);
			if (ps->budget && (double)(ps->hits - ps->mark) * trap * 1e9 / (double)ps->slice <=
						  (double)ps->budget / 2) {
				ps->state = 3;
				ps->at = ps->period + ps->len;
			} else {
				ps->period += ps->len;
				if (ps->period < ps->at)
					ps->period = ps->at;
				psim_place(ps);
			}
		} else if (ps->state == 3) {
			ps->state = 2;
			ps->from = ps->at;
			ps->mark = ps->hits;
			ps->bucket = (double)ps->budget;
			ps->at += PSIM_CHECK;
		} else {
			ps->bucket = fmin(ps->bucket + (double)ps->budget * (double)PSIM_CHECK / 1e9, (double)ps->budget) -
				     (double)(ps->hits - ps->mark) * trap;
			ps->mark = ps->hits;
			if (ps->bucket < 0) {
				uint64_t cut = ps->at;
				psim_span(ps, ps->from, cut, XPU_GPU_MODE_WHOLE);
				ps->period = cut;
				psim_place(ps);
				if (ps->at > cut + PSIM_KEEP && ps->at < cut + PSIM_DETACH)
					ps->at = cut + PSIM_DETACH;
			} else {
				ps->at += PSIM_CHECK;
			}
		}
	}
}

/* A launch at t: 0 if the probes were off, else XPU_GPU_MODE_SAMPLED or
 * XPU_GPU_MODE_WHOLE (its hit counted). */
static int psim_hit(struct psim *ps, uint64_t t)
{
	cpu_next(ps, t);
	psim_until(ps, t);
	cpu_launch(ps, t);
	if (ps->state == 0 || ps->state == 3)
		return 0;
	ps->hits++;
	return ps->state == 1 ? XPU_GPU_MODE_SAMPLED : XPU_GPU_MODE_WHOLE;
}

/* A refresh at tick: the spans that ended before it, and the one on
 * throughout up to it. */
static void psim_refresh(struct psim *ps, uint64_t tick)
{
	psim_until(ps, tick);
	cpu_read(ps, tick);
	if (ps->state == 2 && tick > ps->from) {
		psim_span(ps, ps->from, tick, XPU_GPU_MODE_WHOLE);
		ps->from = tick;
	}
}

#define MAX_NAMES 256

struct truth {
	uint64_t launches, kernels, gpu_ns;
	uint64_t name_ns[MAX_NAMES];	/* by kernel name */
	uint64_t name_calls[MAX_NAMES];
};

#define PID 4242
#define MAX_SLICES 4096

struct names {
	uint32_t comm, api, graph_api, stack;
	uint32_t kernel[MAX_NAMES];	/* dict strings, by the workload's name index */
};

static void count(struct truth *tr, const struct launch *l)
{
	tr->launches++;
	tr->kernels += l->nk;
	for (uint32_t j = 0; j < l->nk; j++) {
		tr->gpu_ns += l->k[j].dur_ns;
		tr->name_ns[l->k[j].name] += l->k[j].dur_ns;
		tr->name_calls[l->k[j].name]++;
	}
}

static void launch_event(struct xpu_event *ev, const struct names *nm, uint64_t t, uint32_t tid, uint32_t corr,
			 int only, uint32_t count, int graph)
{
	*ev = (struct xpu_event){ .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = PID, .tid = tid,
				  .time = t };
	ev->launch.corr = corr;
	ev->launch.api = graph ? nm->graph_api : nm->api;
	ev->launch.comm = nm->comm;
	ev->launch.stack = nm->stack;
	ev->launch.flags = only ? XPU_GPU_LAUNCH_ONLY : 0;
	ev->launch.count = count;
}

static void slice_event(struct xpu_event *ev, uint32_t pid, uint64_t lo, uint64_t hi, uint32_t comm)
{
	*ev = (struct xpu_event){ .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = pid, .time = lo };
	ev->slice.end = hi;
	ev->slice.mode = XPU_GPU_MODE_SAMPLED;
	ev->slice.comm = comm;
}

/* The probes' spans handed on at a refresh (after the counts). */
static void psim_send(struct psim *ps, uint64_t tick, struct stream *out)
{
	struct xpu_event ev;
	psim_refresh(ps, tick);
	for (; ps->sent < ps->n; ps->sent++) {
		slice_event(&ev, 0, ps->sp[ps->sent][0], ps->sp[ps->sent][1], 0);
		ev.slice.mode = (uint32_t)ps->sp[ps->sent][2];
		put(out, tick, &ev);
	}
}

/* What the probes counted of the process on throughout, at a refresh. */
static void whole_event(const struct names *nm, uint64_t tick, uint64_t *count, uint64_t *trap, int only,
			struct stream *out);

/* A launch traced in a slice (or, whole, on throughout) and its kernels,
 * each kernel a flush after it ended (a graph's kernels all carry the
 * launch's correlation id). */
static void traced(const struct names *nm, const struct launch *l, uint32_t corr, int whole, struct stream *out)
{
	struct xpu_event ev;
	int graph = l->nk && l->k[0].graph;
	launch_event(&ev, nm, l->t, PID + l->tid, corr, 0, 0, graph);
	if (whole)
		ev.launch.flags = XPU_GPU_LAUNCH_WHOLE;
	put(out, l->t + FLUSH, &ev);
	for (uint32_t j = 0; j < l->nk; j++) {
		const struct fx_kernel *k = &l->k[j];
		uint64_t t = k->start_us > 0 ? l->t + (uint64_t)k->start_us * US : l->t;
		ev = (struct xpu_event){ .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = PID, .time = t };
		ev.kernel.end = t + k->dur_ns;
		ev.kernel.corr = corr;
		ev.kernel.name = nm->kernel[k->name];
		ev.kernel.comm = nm->comm;
		ev.kernel.graph = k->graph;
		put(out, ev.kernel.end + FLUSH, &ev);
	}
}

/* Where the workload's time v falls in real time, when inside slices it
 * runs at w->pace: the clock (r, v) of the last launch moves on to v. */
struct warp {
	uint64_t r;
	double v;
	uint32_t k;		/* the first slice not over at r */
};

static uint64_t warp_to(struct warp *c, const struct work *w, uint64_t (*sl)[2], uint32_t ns, uint64_t v)
{
	double pace = w->pace > 0 ? w->pace : 1;
	while (c->v < (double)v) {
		while (c->k < ns && sl[c->k][1] <= c->r)
			c->k++;
		double left = (double)v - c->v;
		if (c->k < ns && c->r >= sl[c->k][0]) {	/* inside a slice */
			double room = pace * (double)(sl[c->k][1] - c->r);
			if (left <= room) {
				c->r += (uint64_t)(left / pace);
				c->v = (double)v;
			} else {
				c->v += room;
				c->r = sl[c->k][1];
			}
		} else {
			uint64_t to = c->k < ns ? sl[c->k][0] : UINT64_MAX;
			if (left <= (double)(to - c->r)) {
				c->r += (uint64_t)left;
				c->v = (double)v;
			} else {
				c->v += (double)(to - c->r);
				c->r = to;
			}
		}
	}
	return c->r;
}

/* Samples of mean `mean` (small: Knuth's method). */
static uint32_t poisson(uint64_t *s, double mean)
{
	double l = exp(-mean), p = 1;
	uint32_t n = 0;
	do {
		p *= (double)(rnd(s) >> 11) / 9007199254740992.0;
		n++;
	} while (p > l && n < 1000);
	return n - 1;
}

/* The sampler's GPU_OWN events: cumulative counts at each refresh up to
 * the launch at t (inside a slice or not). */
struct own_feed {
	uint64_t own[2], cuda[2];
	uint64_t next_tick;
	uint64_t rng;
};

static void own_emit_until(struct own_feed *o, const struct work *w, uint64_t t, struct stream *out)
{
	for (; o->next_tick <= t; o->next_tick += TICK) {
		struct xpu_event ev = { .type = XPU_EV_GPU_OWN, .source = XPU_SRC_GPU, .pid = PID,
					.time = o->next_tick - 1 };
		memcpy(ev.gown.own, o->own, sizeof(o->own));
		memcpy(ev.gown.cuda, o->cuda, sizeof(o->cuda));
		ev.gown.hz = w->own_hz;
		ev.gown.threads = 1;
		put(out, o->next_tick - 1, &ev);
	}
}

static void whole_event(const struct names *nm, uint64_t tick, uint64_t *count, uint64_t *trap, int only,
			struct stream *out)
{
	struct xpu_event ev;
	if (!*count && !*trap)
		return;
	launch_event(&ev, nm, tick, PID, 0, 0, (uint32_t)*count, 0);
	ev.launch.flags = XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE | (only ? XPU_GPU_LAUNCH_ONLY : 0);
	ev.launch.trap_ns = (uint32_t)*trap;
	put(out, tick, &ev);
	*count = 0;
	*trap = 0;
}

/* A refresh's read of the probes' count of an injected process (in
 * slices, c[0..1]: count and traps' time; on throughout, c[2..3]), then
 * the probes' spans. */
static void probed_tick(const struct names *nm, uint64_t tick, uint64_t c[4], struct psim *ps, struct stream *out)
{
	struct xpu_event ev;
	if (c[0]) {
		launch_event(&ev, nm, tick, PID, 0, 0, (uint32_t)c[0], 0);
		ev.launch.flags = XPU_GPU_LAUNCH_PROBED;
		ev.launch.trap_ns = (uint32_t)c[1];
		put(out, tick, &ev);
		c[0] = 0;
		c[1] = 0;
	}
	whole_event(nm, tick, &c[2], &c[3], 0, out);
	psim_until(ps, tick);
	cpu_read(ps, tick);
	if (ps->cpu.ns[2] && !ps->cpu_off) {
		ev = (struct xpu_event){ .type = XPU_EV_GPU_CPU, .source = XPU_SRC_GPU, .pid = PID, .tid = PID,
					 .time = tick };
		ev.gcpu.slice_ns = ps->cpu.ns[0];
		ev.gcpu.whole_ns = ps->cpu.ns[1];
		ev.gcpu.all_ns = ps->cpu.ns[2];
		put(out, tick, &ev);
		memset(ps->cpu.ns, 0, sizeof(ps->cpu.ns));
	}
	psim_send(ps, tick, out);
}

/* Launch l as it came, at real time t (0: past end), counted in the truth. */
static int arrive(const struct launch *l, struct launch *r, uint64_t t, uint64_t end, struct truth *tr)
{
	*r = *l;
	r->t = t;
	if (t >= end)
		return 0;
	if (r->k == &l->one)
		r->k = &r->one;
	count(tr, r);
	return 1;
}

/* What the probes do at a launch of an injected process at t (w->probes):
 * the refreshes before it, then its hit counted; returns the time its trap
 * takes (what follows comes as much later). */
static uint64_t probes_launch(const struct work *w, const struct names *nm, struct psim *ps, uint64_t *ptick,
			      uint64_t pc[4], uint64_t t, struct stream *out)
{
	if (w->probes)
		cpu_next(ps, t);
	for (; w->probes && *ptick <= t; *ptick += TICK)
		probed_tick(nm, *ptick, pc, ps, out);
	int hit = w->probes ? psim_hit(ps, t) : 0;
	if (!hit)
		return 0;
	int wh = hit == XPU_GPU_MODE_WHOLE;
	pc[2 * wh]++;
	pc[2 * wh + 1] += w->trap_ns;
	return w->trap_ns;
}

/* An injected process: connected at start, its slices' launches and
 * kernels a flush later, each slice when it ends; it exits at end. */
static void sample_injected(struct work *w, const struct names *nm, uint64_t start, uint64_t end, uint64_t seed,
			    struct stream *out, struct truth *tr)
{
	static uint64_t sl[MAX_SLICES][2];
	uint32_t ns = slices(seed, start, end, sl, MAX_SLICES), k = 0, corr = 0;
	struct warp clock = { start, (double)start, 0 };
	struct own_feed own = { .next_tick = T0 + TICK, .rng = seed * 0xD1B54A32D192ED03ULL | 1 };
	double own_mean = (double)w->own_us * 1e-6 * w->own_hz;
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = PID, .time = start };
	ev.gproc.state = XPU_GPU_PROC_CONNECTED;
	ev.gproc.comm = nm->comm;
	put(out, start, &ev);
	for (uint32_t i = 0; i < ns; i++) {
		slice_event(&ev, PID, sl[i][0], sl[i][1], nm->comm);
		put(out, sl[i][1], &ev);
	}
	ev = (struct xpu_event){ .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = PID, .time = end };
	ev.gproc.state = XPU_GPU_PROC_LEFT;
	put(out, end + FLUSH, &ev);
	static struct psim ps;
	psim_init(&ps, seed * 0x9E3779B97F4A7C15ULL | 1, T0, w->trap_ns);
	ps.cpu_off = w->cpu_off;
	uint64_t ptick = T0 + TICK, pc[4] = { 0 }, shift = 0;
	struct launch l;
	for (int more = next(w, start, end, &l, 1); more; more = next(w, start, end, &l, 0)) {
		struct launch r;	/* l.t: the workload's time, r.t: real time */
		if (!arrive(&l, &r, warp_to(&clock, w, sl, ns, l.t) + shift, end, tr))
			break;
		corr++;
		shift += probes_launch(w, nm, &ps, &ptick, pc, r.t, out);
		while (k < ns && sl[k][1] <= r.t)
			k++;
		int in = k < ns && r.t >= sl[k][0];
		if (w->own_hz) {
			own_emit_until(&own, w, r.t, out);
			own.own[in] += poisson(&own.rng, in ? own_mean * (1 + w->own_slow) : own_mean);
			/* CUDA's part: as much again untraced, more inside */
			own.cuda[in] += poisson(&own.rng, in ? own_mean / (w->pace > 0 ? w->pace : 1) : own_mean);
		}
		if (!in)
			continue;
		traced(nm, &r, corr, 0, out);
	}
	if (w->own_hz)
		own_emit_until(&own, w, end, out);
	for (; w->probes && ptick <= end + TICK; ptick += TICK)
		probed_tick(nm, ptick, pc, &ps, out);
}

/* The library's schedule with tracing throughout (inject/sched.c), run
 * as its agent runs it, launch by launch: the launches it traced so far
 * given before each switch; its slices reported at their end, a span on
 * throughout at every flush (inject.c's report_exact). */
struct lsim {
	struct xpu_sched s;
	uint64_t now, from;	/* the last switch; the span's (or its piece's) start */
	int whole;
};

static void lsim_span(struct lsim *ls, uint64_t hi, const struct names *nm, struct stream *out)
{
	struct xpu_event ev;
	if (hi <= ls->from)
		return;
	slice_event(&ev, PID, ls->from, hi, nm->comm);
	if (ls->whole)
		ev.slice.mode = XPU_GPU_MODE_WHOLE;
	put(out, hi, &ev);
	ls->from = hi;
}

/* Runs the schedule to t (launches: traced so far). */
static void lsim_until(struct lsim *ls, uint64_t t, uint64_t launches, const struct names *nm, struct stream *out)
{
	for (;;) {
		uint64_t due = ls->now + xpu_sched_wait(&ls->s, ls->now);
		for (; ls->s.on && ls->whole && ls->from + FLUSH <= (due < t ? due : t);)
			lsim_span(ls, ls->from + FLUSH, nm, out);
		if (due > t)
			return;
		ls->now = due;
		ls->s.launches = launches;
		int act = xpu_sched_due(&ls->s, due);
		if (act == XPU_SCHED_OFF) {
			lsim_span(ls, due, nm, out);
		} else if (act != XPU_SCHED_NONE) {
			ls->from = due;
			ls->whole = act == XPU_SCHED_WHOLE;
		}
	}
}

/* An injected process whose library traces throughout where it launches
 * little (w->whole_us): its schedule follows its launches. */
static void sample_injected_whole(struct work *w, const struct names *nm, uint64_t start, uint64_t end,
				  uint64_t seed, struct stream *out, struct truth *tr)
{
	struct lsim ls = { .now = start };
	struct xpu_wire_mode mode = { XPU_WIRE_MODE_SAMPLED, period_ms, slice_ms, w->whole_us };
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = PID, .time = start };
	ev.gproc.state = XPU_GPU_PROC_CONNECTED;
	ev.gproc.comm = nm->comm;
	put(out, start, &ev);
	xpu_sched_mode(&ls.s, &mode, start, seed);
	static struct psim ps;
	psim_init(&ps, seed * 0x9E3779B97F4A7C15ULL | 1, T0, w->trap_ns);
	ps.cpu_off = w->cpu_off;
	uint64_t ptick = T0 + TICK, pc[4] = { 0 }, shift = 0, corr = 0, recorded = 0;
	struct launch l;
	for (int more = next(w, start, end, &l, 1); more; more = next(w, start, end, &l, 0)) {
		struct launch r;
		if (!arrive(&l, &r, l.t + shift, end, tr))
			break;
		corr++;
		shift += probes_launch(w, nm, &ps, &ptick, pc, r.t, out);
		lsim_until(&ls, r.t, recorded, nm, out);
		if (!ls.s.on)
			continue;
		recorded++;
		traced(nm, &r, (uint32_t)corr, ls.whole, out);
	}
	lsim_until(&ls, end, recorded, nm, out);
	if (ls.s.on)
		lsim_span(&ls, end, nm, out);
	ev = (struct xpu_event){ .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = PID, .time = end };
	ev.gproc.state = XPU_GPU_PROC_LEFT;
	put(out, end + FLUSH, &ev);
	for (; w->probes && ptick <= end + TICK; ptick += TICK)
		probed_tick(nm, ptick, pc, &ps, out);
}

/* A process the launch probes count: the probes' slices from xputop's
 * start, the counts read at each refresh, then the spans that ended. */
static void sample_probed(struct work *w, const struct names *nm, uint64_t start, uint64_t end, uint64_t seed,
			  struct stream *out, struct truth *tr)
{
	static struct psim ps;
	psim_init(&ps, seed, T0, w->trap_ns);
	uint64_t tick = T0 + TICK, counted = 0, shift = 0, wc[2] = { 0 };
	struct xpu_event ev;
	struct launch l;
	int more = next(w, start, end, &l, 1);
	/* l.t: the workload's time; each launch the probes trap comes trap_ns
	 * later than it would, and so does every one after it */
	for (; tick <= end + TICK; tick += TICK) {
		for (; more && l.t + shift < tick && l.t + shift < end; more = next(w, start, end, &l, 0)) {
			uint64_t t = l.t + shift;
			count(tr, &l);
			int hit = psim_hit(&ps, t);
			if (hit) {
				counted++;
				shift += w->trap_ns;
			}
			if (hit == XPU_GPU_MODE_WHOLE) {
				wc[0]++;
				wc[1] += w->trap_ns;
			}
		}
		/* the launch events (every launch counted), then the whole
		 * count, then the spans (core/sources/gpu_probes.c's order) */
		if (counted) {
			launch_event(&ev, nm, tick, PID, 0, 1, (uint32_t)counted, 0);
			ev.launch.trap_ns = (uint32_t)(counted * w->trap_ns);
			put(out, tick, &ev);
			counted = 0;
		}
		whole_event(nm, tick, &wc[0], &wc[1], 1, out);
		psim_send(&ps, tick, out);
	}
}

enum { ROW_CALLS, ROW_NS, ROW_SHARE, ROW_FIGS };

struct estimate {
	double launches, launches_err;
	double kernels, kernels_err;	/* injected only */
	double gpu_ns, gpu_ns_err;	/* injected only */
	int launches_ok, kernels_ok, gpu_ns_ok;	/* an estimate was made */
	double share[MAX_NAMES];	/* percent of the GPU time, by kernel name (the GPU view's table) */
	/* The table's row of each kernel name: calls, total, share, and the
	 * uncertainty it states of each (-1: none stated, "?", or no row) */
	double row[MAX_NAMES][ROW_FIGS], row_err[MAX_NAMES][ROW_FIGS];
};

static void read_estimates(const struct xpu_gpu_model *m, const struct names *nm, uint32_t nnames,
			   struct estimate *e)
{
	*e = (struct estimate){ 0 };
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct xpu_gpu_est *l = &m->procs[i].est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
		const struct xpu_gpu_est *k = &m->procs[i].est[XPU_WIN_ALL][XPU_GPU_EST_KERNELS];
		if (m->procs[i].pid != PID)
			continue;
		e->launches = l->value;
		e->launches_err = l->err_pct;
		e->launches_ok = l->ok;
		e->kernels = k->value;
		e->kernels_err = k->err_pct;
		e->kernels_ok = k->ok;
	}
	struct xpu_gpu_est g = xpu_gpu_model_gpu_ns_err(m, XPU_WIN_ALL);
	e->gpu_ns = g.value;
	e->gpu_ns_err = g.err_pct;
	e->gpu_ns_ok = g.ok;
	struct xpu_table t;
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	if (xpu_gpu_model_table(m, m->dict, &t, XPU_WIN_ALL) < 0)
		abort();
	for (uint32_t j = 0; j < nnames; j++)	/* a kernel never seen has no row */
		for (int f = 0; f < ROW_FIGS; f++)
			e->row_err[j][f] = -1;
	static const int value_col[ROW_FIGS] = { XPU_GPU_COL_CALLS, XPU_GPU_COL_TOTAL, XPU_GPU_COL_SHARE };
	static const int err_col[ROW_FIGS] = { XPU_GPU_COL_CALLS_ERR, XPU_GPU_COL_TOTAL_ERR,
					       XPU_GPU_COL_SHARE_ERR };
	for (uint32_t r = 0; r < t.nrows; r++) {
		uint32_t name = m->kernels[t.keys[r] - 1].name;
		const struct xpu_cell *c = xpu_table_row(&t, r);
		for (uint32_t j = 0; j < nnames; j++) {
			if (nm->kernel[j] != name)
				continue;
			e->share[j] += c[XPU_GPU_COL_SHARE].d;
			for (int f = 0; f < ROW_FIGS; f++) {
				e->row[j][f] = f == ROW_SHARE ? c[value_col[f]].d : (double)c[value_col[f]].i;
				e->row_err[j][f] = c[err_col[f]].na ? -1 : c[err_col[f]].d;
			}
		}
	}
	xpu_table_free(&t);
}

/* One run of a workload: its truth and the model's estimates. */
static void run_once(struct work *w, uint64_t seed, struct truth *tr, struct estimate *est)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	struct stream s = { 0 };
	xpu_dict_init(&d);
	if (xpu_gpu_model_init(&m, &d, 60) < 0)
		abort();
	static struct names nm;
	nm = (struct names){ xpu_dict_cstr(&d, "app"), xpu_dict_cstr(&d, "cudaLaunchKernel"),
			     xpu_dict_cstr(&d, "cudaGraphLaunch"), 0, { 0 } };
	uint32_t nnames = w->fx ? w->fx->nnames : 1;
	for (uint32_t j = 0; j < nnames; j++)
		nm.kernel[j] = xpu_dict_cstr(&d, w->fx ? w->fx->names[j] : "k");
	uint32_t f = xpu_dict_frame(&d, XPU_FRAME_LAUNCH, nm.api, 0);
	nm.stack = xpu_dict_stack(&d, &f, 1);
	uint64_t start = T0 + 300 * MS, end = T0 + w->seconds * SEC;
	w->rng = seed * 0x9E3779B97F4A7C15ULL | 1;
	w->burst_next = start + uniform(&w->rng, 0, 10 * SEC);
	w->burst_left = 0;
	*tr = (struct truth){ 0 };
	if (w->launch_only)
		sample_probed(w, &nm, start, end, seed, &s, tr);
	else if (w->whole_us)
		sample_injected_whole(w, &nm, start, end, seed, &s, tr);
	else
		sample_injected(w, &nm, start, end, seed, &s, tr);
	qsort(s.v, s.n, sizeof(*s.v), by_arrival);
	uint64_t tick = T0 + TICK;
	/* A launch-only process exits at end (PROC_EXIT, from the kernel's
	 * exit tracepoint): the probes' spans after it are not its.  (Left
	 * alive, idle for the last tick or two, it came out within 5% in 44-48
	 * of 100 10 s runs where the probes sliced 60 ms a second, 96-98 at 30
	 * in 500: how often a slice caught that idle stretch.) */
	int exited = !w->launch_only;
	for (size_t i = 0; i <= s.n; i++) {
		uint64_t at = i < s.n ? s.v[i].at : end + 2 * TICK;
		if (!exited && at > end) {
			xpu_gpu_model_exit(&m, PID, end);
			exited = 1;
		}
		for (; tick < at; tick += TICK)
			xpu_gpu_model_tick(&m, tick, TICK);
		if (i < s.n && xpu_gpu_model_event(&m, &s.v[i].ev) < 0)
			abort();
	}
	read_estimates(&m, &nm, nnames, est);
	free(s.v);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* Seeds for the idle case: a sanitizer build runs it some twenty times
 * slower (48 s of CPU for 10,000 seeds, most of it the model's tables made
 * and freed for each), and is there for the memory it touches: 1,000 seeds,
 * whose mean is held to 5% plus twice its own standard error (3.9% there,
 * 1.2% with 10,000).  The plain build holds the mean to 5%. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
#define IDLE_SEEDS 1000
#define RECORDED_SEEDS 10
#define BIAS_SE 2.0
#else
#define IDLE_SEEDS 10000
#define RECORDED_SEEDS 100
#define BIAS_SE 0.0
#endif

struct verdict {
	double bias;		/* mean estimate / truth - 1 */
	double sq;		/* for the standard error of the bias */
	double err;		/* the uncertainty stated, summed */
	double worst;		/* the largest error of a run, relative */
	uint32_t honest;	/* runs within 5% or twice the stated uncertainty, or with none made */
	uint32_t precise;	/* runs within 5% */
	uint32_t runs;
	double bias_limit;	/* 5%, or more where the seeds are few (SANITIZED) */
};

static void judge(struct verdict *v, double truth, double est, double err_pct, int ok)
{
	double rel = truth > 0 ? est / truth - 1 : 0;
	v->runs++;
	v->bias += rel;
	v->sq += rel * rel;
	if (!ok) {
		v->honest++;
		return;
	}
	if (fabs(rel) > v->worst)
		v->worst = fabs(rel);
	v->precise += fabs(rel) <= 0.05;
	v->err += err_pct;
	/* the uncertainty is relative to the estimate */
	v->honest += fabs(rel) <= 0.05 || fabs(est - truth) <= 2 * err_pct / 100 * est;
}

static void report(const char *what, const struct work *w, struct verdict *v)
{
	double n = v->runs ? v->runs : 1;
	v->bias /= n;
	double se = sqrt(fmax(v->sq / n - v->bias * v->bias, 0) / n);
	v->bias_limit = 0.05 + BIAS_SE * se;
	fprintf(stderr, "  %-26s %-8s %3" PRIu64 " s: bias %+5.1f%% (+-%.1f), worst %6.1f%%, stated +-%5.1f%%, "
		"within 5%% %5u/%u, within 5%% or twice the stated %5u/%u\n", w->name, what, w->seconds,
		100 * v->bias, 100 * se, 100 * v->worst, v->err / n, v->precise, v->runs, v->honest, v->runs);
}

/* The kernels' shares of the GPU time against the truth's, for the top
 * SHARE_TOP kernels by GPU time: each run's largest difference in points,
 * and each kernel's mean difference over the runs. */
#define SHARE_TOP 10

struct shares {
	uint32_t top[SHARE_TOP], ntop;
	double mean[SHARE_TOP];	/* est - truth, points, summed */
	double worst;		/* the largest difference of a run, points */
	uint32_t within, runs;	/* runs whose every top kernel is within 1 point */
	/* The top kernels' rows, each figure: the uncertainty stated (summed),
	 * rows with one, and of those the rows within twice it of the truth. */
	double row_err[ROW_FIGS];
	uint32_t rows_stated[ROW_FIGS], rows_covered[ROW_FIGS], rows;
};

/* Whether a row's figure est is within twice the uncertainty it states
 * (relative to the estimate, as the process figures') of the truth. */
static void judge_row(struct shares *v, int f, double truth, double est, double err_pct)
{
	if (err_pct < 0)
		return;
	v->row_err[f] += err_pct;
	v->rows_stated[f]++;
	v->rows_covered[f] += fabs(est - truth) <= 2 * err_pct / 100 * est;
}

static void judge_shares(struct shares *v, const struct truth *tr, const struct estimate *e, uint32_t nnames)
{
	if (!v->runs) {
		for (uint32_t j = 0; j < nnames; j++) {
			uint32_t at = v->ntop < SHARE_TOP ? v->ntop++ : SHARE_TOP;
			while (at > 0 && tr->name_ns[v->top[at - 1]] < tr->name_ns[j]) {
				if (at < SHARE_TOP)
					v->top[at] = v->top[at - 1];
				at--;
			}
			if (at < SHARE_TOP)
				v->top[at] = j;
		}
	}
	double run_worst = 0;
	for (uint32_t i = 0; i < v->ntop; i++) {
		uint32_t j = v->top[i];
		double d = e->share[j] - 100.0 * (double)tr->name_ns[j] / (double)tr->gpu_ns;
		v->mean[i] += d;
		double truth[ROW_FIGS] = { (double)tr->name_calls[j], (double)tr->name_ns[j],
					   100.0 * (double)tr->name_ns[j] / (double)tr->gpu_ns };
		for (int f = 0; f < ROW_FIGS; f++)
			judge_row(v, f, truth[f], e->row[j][f], e->row_err[j][f]);
		v->rows++;
		run_worst = fmax(run_worst, fabs(d));
	}
	v->worst = fmax(v->worst, run_worst);
	v->within += run_worst <= 1.0;
	v->runs++;
}

static void report_shares(const struct work *w, struct shares *v, const struct truth *tr)
{
	double n = v->runs ? v->runs : 1, mean_worst = 0;
	for (uint32_t i = 0; i < v->ntop; i++) {
		v->mean[i] /= n;
		mean_worst = fmax(mean_worst, fabs(v->mean[i]));
	}
	fprintf(stderr, "  %-26s %-8s %3" PRIu64 " s: top %u kernels (%.1f%% of the GPU time down to %.1f%%): "
		"mean difference at most %.2f points, worst %.2f, within 1 point %5u/%u\n", w->name, "shares",
		w->seconds, v->ntop, v->ntop ? 100.0 * (double)tr->name_ns[v->top[0]] / (double)tr->gpu_ns : 0,
		v->ntop ? 100.0 * (double)tr->name_ns[v->top[v->ntop - 1]] / (double)tr->gpu_ns : 0, mean_worst,
		v->worst, v->within, v->runs);
	static const char *const fig[ROW_FIGS] = { "calls", "total", "share" };
	for (int f = 0; f < ROW_FIGS; f++)
		fprintf(stderr, "    rows' %-5s stated +-%4.1f%% (mean), within twice it %5u/%u, "
			"%u without one\n",
			fig[f], v->rows_stated[f] ? v->row_err[f] / v->rows_stated[f] : 0, v->rows_covered[f],
			v->rows_stated[f], v->rows - v->rows_stated[f]);
	for (uint32_t i = 0; i < v->ntop; i++)
		if (fabs(v->mean[i]) > 1.0)
			fprintf(stderr, "    %s: %.1f%% of the GPU time, estimated %+.2f points off on average\n",
				w->fx ? w->fx->names[v->top[i]] : "k",
				100.0 * (double)tr->name_ns[v->top[i]] / (double)tr->gpu_ns, v->mean[i]);
}

/* seeds runs of w: the launches (and, injected, the kernel calls, the GPU
 * time and each kernel's share of it) estimated */
static void check_work(struct work *w, uint32_t seeds, int need_precise)
{
	struct verdict vl = { 0 }, vk = { 0 }, vg = { 0 };
	struct shares sh = { 0 };
	struct truth tr;
	uint32_t nnames = w->fx ? w->fx->nnames : 1;
	for (uint32_t i = 0; i < seeds; i++) {
		struct estimate e;
		/* odd seeds: the schedule's generator starts from seed | 1 */
		run_once(w, 2 * i + 1, &tr, &e);
		judge(&vl, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
		if (w->launch_only)
			continue;
		judge(&vk, (double)tr.kernels, e.kernels, e.kernels_err, e.kernels_ok);
		judge(&vg, (double)tr.gpu_ns, e.gpu_ns, e.gpu_ns_err, e.gpu_ns_ok);
		/* a run with no estimate of the GPU time says so (judge) */
		if (w->fx && e.gpu_ns_ok)
			judge_shares(&sh, &tr, &e, nnames);
	}
	report("launches", w, &vl);
	CHECK(fabs(vl.bias) <= vl.bias_limit);
	CHECK_INT(vl.honest, >=, vl.runs * 9 / 10);
	if (need_precise)
		CHECK_INT(vl.precise, ==, vl.runs);
	if (w->launch_only)
		return;
	report("calls", w, &vk);
	CHECK(fabs(vk.bias) <= vk.bias_limit);
	CHECK_INT(vk.honest, >=, vk.runs * 9 / 10);
	if (need_precise)
		CHECK_INT(vk.precise, ==, vk.runs);
	report("GPU time", w, &vg);
	CHECK(fabs(vg.bias) <= vg.bias_limit);
	CHECK_INT(vg.honest, >=, vg.runs * 9 / 10);
	if (need_precise)
		CHECK_INT(vg.precise, ==, vg.runs);
	if (!w->fx)
		return;
	report_shares(w, &sh, &tr);
	for (uint32_t i = 0; i < sh.ntop; i++)
		CHECK(fabs(sh.mean[i]) <= 1.0);
	CHECK_INT(sh.within, >=, sh.runs * 9 / 10);
	/* each kernel row's stated uncertainty covers its true figure */
	for (int f = 0; f < ROW_FIGS; f++)
		CHECK_INT(sh.rows_covered[f], >=, sh.rows_stated[f] * 9 / 10);
}

/* The workload SHAPE for SECONDS, with the library and seen by the launch
 * probes only, each over SEEDS runs. */
static void check_both(const char *injected, const char *probed, enum shape shape, uint64_t seconds,
		       uint32_t seeds, int need_precise)
{
	struct work inj = { injected, shape, 0, seconds };
	struct work lo = { probed, shape, 1, seconds };
	check_work(&inj, seeds, need_precise);
	check_work(&lo, seeds, need_precise);
}

TEST(a_steady_loop_is_estimated_within_5_percent)
{
	check_both("steady loop, injected", "steady loop, launch probes", STEADY, 60, 20, 1);
}

TEST(a_mostly_idle_process_is_not_overestimated)
{
	check_both("mostly idle, injected", "mostly idle, launch probes", IDLE, 60, IDLE_SEEDS, 0);
}

/* A mostly idle process (about 900 launches in 12 s) launches so little
 * that the probes stay on throughout after their first slice, their traps
 * costing a few hundredths of the budget: they count its every launch,
 * with the library or without.  Sampled 6% of the time, as before, a run
 * caught a burst in about one in five (+-16% stated over 60 s, 765% off at
 * worst).  Its kernels and GPU time are still the library's slices' (2%). */
TEST(a_mostly_idle_process_is_counted_whole_by_the_probes)
{
	struct work lo = { "mostly idle, probes whole", IDLE, 1, 12 };
	struct work inj = { "mostly idle, + probes whole", IDLE, 0, 12 };
	inj.probes = 1;
	struct work *v[] = { &lo, &inj };
	for (int i = 0; i < 2; i++) {
		struct verdict vl = { 0 };
		struct truth tr;
		for (uint32_t seed = 0; seed < 200; seed++) {
			struct estimate e;
			run_once(v[i], 2 * seed + 1, &tr, &e);
			judge(&vl, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
			CHECK(e.launches_ok);
			CHECK(e.launches_err <= 5);
		}
		report("launches", v[i], &vl);
		CHECK_INT(vl.precise, >=, vl.runs * 99 / 100);
	}
}

/* Its kernels and GPU time too: the library traces it throughout (its
 * launches cost CUPTI a few hundredths of the budget), each figure counted
 * as it is but for the little time between its first slice and its
 * first span on throughout. */
TEST(a_mostly_idle_process_is_traced_whole_by_its_library)
{
	struct work inj = { "mostly idle, library whole", IDLE, 0, 12 };
	inj.probes = 1;
	inj.whole_us = XPU_GPU_TRACE_WHOLE_US;
	struct verdict vl = { 0 }, vk = { 0 }, vg = { 0 };
	struct truth tr;
	for (uint32_t seed = 0; seed < 200; seed++) {
		struct estimate e;
		run_once(&inj, 2 * seed + 1, &tr, &e);
		judge(&vl, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
		judge(&vk, (double)tr.kernels, e.kernels, e.kernels_err, e.kernels_ok);
		judge(&vg, (double)tr.gpu_ns, e.gpu_ns, e.gpu_ns_err, e.gpu_ns_ok);
		CHECK(e.kernels_ok && e.gpu_ns_ok);
		CHECK(e.kernels_err <= 5 && e.gpu_ns_err <= 5);
	}
	report("launches", &inj, &vl);
	report("calls", &inj, &vk);
	report("GPU time", &inj, &vg);
	CHECK_INT(vl.precise, >=, vl.runs * 99 / 100);
	CHECK_INT(vk.precise, >=, vk.runs * 99 / 100);
	CHECK_INT(vg.precise, >=, vg.runs * 99 / 100);
}

/* Where its library may trace throughout, a process that launches much
 * goes to slices at the first check, one that launches in bursts in and
 * out of it: every estimate as unbiased and as honest as with slices
 * only. */
TEST(tracing_throughout_where_launches_are_few_keeps_every_estimate_honest)
{
	static const enum shape shapes[] = { STEADY, IDLE, IDLE, BURSTY, IDLE };
	static const char *names[] = { "steady loop, library whole", "mostly idle 60 s, library whole",
				       "idle, bursts x3, library whole", "busy 1 s in 10, library whole",
				       "idle, bursts x3, no probes" };
	static const uint64_t secs[] = { 60, 60, 60, 600, 60 };
	static const uint32_t seeds[] = { 20, IDLE_SEEDS / 10, IDLE_SEEDS / 10, 20, IDLE_SEEDS / 10 };
	for (int i = 0; i < 5; i++) {
		struct work w = { names[i], shapes[i], 0, secs[i] };
		/* without the probes' count: the rest scaled by time alone */
		w.probes = i < 4;
		w.whole_us = XPU_GPU_TRACE_WHOLE_US;
		/* bench/gpu/shapes.py's: 90-450 launches, 10-45 ms, a burst:
		 * the larger ones spend the budget */
		if (i == 2 || i == 4) {
			w.idle_x = 3;
			w.idle_gap_us = 100;
		}
		check_work(&w, seeds[i], shapes[i] == STEADY);
	}
}

TEST(a_bursty_process_is_estimated_within_its_uncertainty)
{
	check_both("busy 1 s in 10, injected", "busy 1 s in 10, probes", BURSTY, 600, 20, 0);
}

/* A launch-bound loop that tracing slows to 60% of its speed inside a
 * slice (an H200's GPT-2 training thread ran at 0.69): scaled by time its
 * figures come out about 40% low; scaled by the launching thread's own CPU
 * time (GPU_OWN, sampled at 1 kHz) they hold to 5%. */
TEST(a_loop_slowed_in_its_slices_is_estimated_by_its_own_cpu_time)
{
	struct work w = { "slowed x0.6, own time", STEADY, 0, 60 };
	w.pace = 0.6;
	w.own_hz = 1000;
	w.own_us = 150;
	check_work(&w, 20, 0);
	struct work t = { "slowed x0.6, time only", STEADY, 0, 60 };
	t.pace = 0.6;
	struct verdict v = { 0 };
	struct truth tr;
	for (uint32_t i = 0; i < 10; i++) {
		struct estimate e;
		run_once(&t, 2 * i + 1, &tr, &e);
		judge(&v, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
	}
	report("launches", &t, &v);
	CHECK(v.bias < -0.3);	/* the observer effect is there to correct */
}

/* A steady loop at 0.6 of its pace inside CUPTI's slices, its own code
 * (150 us a launch, sampled at 1 kHz) 14% slower there; counted by the
 * launch probes as well where probes. */
static struct work slowed_loop(const char *name, int probes)
{
	struct work w = { name, STEADY, 0, 60 };
	w.pace = 0.6;
	w.own_hz = 1000;
	w.own_us = 150;
	w.own_slow = 0.14;
	w.probes = probes;
	return w;
}

/* n runs of w (odd seeds): its launches, kernels and GPU time judged. */
static void judge_runs(struct work *w, uint32_t n, struct verdict *v, struct verdict *vk, struct verdict *vg)
{
	struct truth tr;
	for (uint32_t i = 0; i < n; i++) {
		struct estimate e;
		run_once(w, 2 * i + 1, &tr, &e);
		judge(v, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
		judge(vk, (double)tr.kernels, e.kernels, e.kernels_err, e.kernels_ok);
		judge(vg, (double)tr.gpu_ns, e.gpu_ns, e.gpu_ns_err, e.gpu_ns_ok);
	}
}

/* The same loop with its own code 14% slower inside a slice as well: on
 * an H200 own-time figures came out 12.5% low (18 runs of training, decode
 * and a loop, docs/gpu-estimates.md), a bias no split by code sees.  The
 * stated uncertainty carries it (XPU_GPU_OWN_SYS_PCT) where the samples'
 * alone, +-3% here, would not. */
TEST(own_code_slowed_in_its_slices_stays_within_the_uncertainty_stated)
{
	struct work w = slowed_loop("own code x1.14 in slices", 0);
	struct verdict v = { 0 }, vk = { 0 }, vg = { 0 };
	judge_runs(&w, 10, &v, &vk, &vg);
	report("launches", &w, &v);
	report("calls", &w, &vk);
	CHECK(v.bias < -0.08);	/* the bias is there */
	CHECK_INT(v.honest, >=, v.runs * 9 / 10);
	CHECK_INT(vk.honest, >=, vk.runs * 9 / 10);
}

/* The same loop (its launches at 0.6 of their pace in CUPTI's slices, its
 * own code 14% slower there) counted by the launch probes as well: where
 * the probes counted enough, the figures scale by their count of launches
 * (their pace where CUPTI does not slow them), the kernels and GPU time by
 * what the slices saw of each launch.  No bias left, and all of the loop's
 * figures within 5%. */
TEST(the_launch_probes_count_gives_the_launches_a_slowed_slice_misses)
{
	struct work w = slowed_loop("slowed loop, probes' count", 1);
	struct verdict v = { 0 }, vk = { 0 }, vg = { 0 };
	judge_runs(&w, 10, &v, &vk, &vg);
	report("launches", &w, &v);
	report("calls", &w, &vk);
	report("GPU time", &w, &vg);
	CHECK(fabs(v.bias) < 0.02 && fabs(vk.bias) < 0.02 && fabs(vg.bias) < 0.02);
	CHECK_INT(v.precise, ==, v.runs);	/* made, and within 5% */
	CHECK_INT(vk.precise, ==, vk.runs);
	CHECK_INT(vg.precise, ==, vg.runs);
	CHECK_INT(v.honest, ==, v.runs);
	CHECK_INT(vg.honest, ==, vg.runs);
}

/* The same loop, each launch the probes count 20 us longer for their trap
 * (a tenth of a launch; 0.8 us of 10-30 on an H200): they count a tenth
 * less in their slices.  Their time less the traps' (the events' trap_ns)
 * gives the pace back; taken whole it would not. */
TEST(the_probes_own_traps_are_taken_off_their_time)
{
	struct work w = slowed_loop("slowed loop, probes trapping 20 us", 1);
	struct verdict v = { 0 }, vk = { 0 }, vg = { 0 };
	w.trap_ns = 20 * US;
	judge_runs(&w, 10, &v, &vk, &vg);
	report("launches", &w, &v);
	report("GPU time", &w, &vg);
	CHECK(fabs(v.bias) < 0.02 && fabs(vg.bias) < 0.02);
	CHECK_INT(v.precise, ==, v.runs);
	CHECK_INT(v.honest, ==, v.runs);
}

/* A launch-only loop (a launch every 150-250 us) that each probe's hit
 * slows by 20 us, a tenth: scaled by time their count comes out a tenth
 * low; their time less the traps' holds it (the events' trap_ns, as for an
 * injected process's count). */
TEST(a_launch_only_loop_the_probes_trap_is_estimated_less_their_traps_time)
{
	struct work w = { "launch-only loop, probes trapping 20 us", STEADY, 1, 60 };
	struct verdict v = { 0 }, vk = { 0 }, vg = { 0 };
	w.trap_ns = 20 * US;
	judge_runs(&w, 10, &v, &vk, &vg);
	report("launches", &w, &v);
	CHECK(fabs(v.bias) < 0.02);
	CHECK_INT(v.precise, ==, v.runs);
	CHECK_INT(v.honest, ==, v.runs);
}

TEST(too_few_slices_give_no_estimate)
{
	struct work w = { "steady loop, 3 s", STEADY, 0, 3 };
	struct truth tr;
	struct estimate e;
	run_once(&w, 1, &tr, &e);
	CHECK(tr.launches > 0);
	CHECK(!e.launches_ok);
	CHECK(!e.gpu_ns_ok);
}

/* A recorded workload (tests/fixtures/README.md) replayed from the start
 * of a run of SECONDS, a copy of it every TILE_MS, with the library and
 * seen by the launch probes only, each over SEEDS runs; and with the
 * library and counted by the launch probes too (PROBE_SEEDS runs, 0: not). */
static void check_recorded(const char *name, const char *path, uint64_t tile_ms, uint64_t seconds, uint32_t seeds,
			   uint32_t probe_seeds)
{
	struct fixture *fx = fixture_load(path);
	CHECK(fx != NULL);
	if (!fx)
		return;
	CHECK_INT(fx->nnames, <=, MAX_NAMES);
	CHECK(fx->nl > 0 && fx->l[fx->nl - 1].at < tile_ms * MS);
	if (fx->nnames > MAX_NAMES || !fx->nl || fx->l[fx->nl - 1].at >= tile_ms * MS) {
		fixture_free(fx);
		return;
	}
	char inj[64], lo[64];
	snprintf(inj, sizeof(inj), "%s, injected", name);
	snprintf(lo, sizeof(lo), "%s, probes", name);
	char pr[64];
	snprintf(pr, sizeof(pr), "%s, + probes", name);
	struct work wi = { inj, RECORDED, 0, seconds, fx, tile_ms * MS };
	struct work wl = { lo, RECORDED, 1, seconds, fx, tile_ms * MS };
	struct work wp = { pr, RECORDED, 0, seconds, fx, tile_ms * MS };
	wp.probes = 1;	/* injected, scaled by the probes' count where it can be */
	check_work(&wi, seeds, 0);
	check_work(&wl, seeds, 0);
	if (probe_seeds)
		check_work(&wp, probe_seeds, 0);
	fixture_free(fx);
}

/* Real workloads, recorded exact (tests/fixtures/README.md).  A copy of the
 * recording every TILE: its span and about one step's gap after it, so
 * that the steps go on at their own pace; the mostly idle one every 13.65 s
 * (its script's own length, a pause of 0.5 s after its last burst, as its
 * pauses of 0.5-2.5 s); the bursty one every 20 s, its script's length,
 * which keeps its bursts 10 s apart. */
TEST(recorded_training_is_estimated_within_5_percent)
{
	check_recorded("GPT-2 training", "tests/fixtures/gpu-train.fx.gz", 899, 60, RECORDED_SEEDS,
		       RECORDED_SEEDS / 2);
}

TEST(recorded_batch1_decode_is_estimated_within_5_percent)
{
	check_recorded("HF decode, batch 1", "tests/fixtures/gpu-decode.fx.gz", 1433, 60, RECORDED_SEEDS,
		       RECORDED_SEEDS / 2);
}

TEST(recorded_cuda_graphs_are_estimated_within_5_percent)
{
	check_recorded("torch.compile, graphs", "tests/fixtures/gpu-compiled.fx.gz", 133, 60, RECORDED_SEEDS,
		       RECORDED_SEEDS / 2);
}

TEST(a_recorded_mostly_idle_process_is_estimated_without_bias)
{
	/* Not scaled by the probes' count as well: that needs 30 launches seen
	 * by the slices and 30 counted by the probes, which a mostly idle
	 * process seldom gives.  Run so (5,000 seeds) it held the bias (-0.9%)
	 * but left another set of runs with an estimate of the GPU time, whose
	 * top kernels' shares were within 1 point in 87.5% of them (91.9%
	 * here): not the shares' doing (the scale cancels in them). */
	check_recorded("mostly idle (recorded)", "tests/fixtures/gpu-idle.fx.gz", 12050, 60, IDLE_SEEDS, 0);
}

TEST(a_recorded_bursty_process_is_estimated_within_its_uncertainty)
{
	check_recorded("busy 1 s in 10 (recorded)", "tests/fixtures/gpu-bursty.fx.gz", 20000, 600, RECORDED_SEEDS,
		       RECORDED_SEEDS / 2);
}

/* The recorded bursty process over 30 s, three bursts (the H200's run,
 * bench/gpu/variants.sh), its library on throughout between them and the
 * probes counting: scaled by the time their slices took, a slice that
 * falls where the process idles stands for the same time as one in a
 * burst; by its CPU time, each part of the time weighs as much as the
 * process worked in it.  On the H200 by time: -13 to -17% in three runs of
 * four (+-17-43% stated). */
TEST(a_bursty_process_is_counted_within_5_percent_in_30_s_by_its_cpu_time)
{
	struct fixture *fx = fixture_load("tests/fixtures/gpu-bursty.fx.gz");
	CHECK(fx != NULL);
	if (!fx)
		return;
	struct verdict v[2][3] = { 0 };
	for (int off = 0; off < 2; off++) {
		struct work w = { off ? "busy 1 s in 10, 30 s, by time" : "busy 1 s in 10, 30 s, by CPU time",
				  RECORDED, 0, 30, fx, 20000 * MS };
		w.probes = 1;
		w.whole_us = XPU_GPU_TRACE_WHOLE_US;
		w.cpu_off = off;
		for (uint32_t i = 0; i < RECORDED_SEEDS; i++) {
			struct truth tr;
			struct estimate e;
			run_once(&w, 2 * i + 1, &tr, &e);
			judge(&v[off][0], (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
			judge(&v[off][1], (double)tr.kernels, e.kernels, e.kernels_err, e.kernels_ok);
			judge(&v[off][2], (double)tr.gpu_ns, e.gpu_ns, e.gpu_ns_err, e.gpu_ns_ok);
		}
		report("launches", &w, &v[off][0]);
		report("calls", &w, &v[off][1]);
		report("GPU time", &w, &v[off][2]);
	}
	for (int f = 0; f < 3; f++) {
		CHECK(fabs(v[0][f].bias) < 0.02);
		CHECK_INT(v[0][f].honest, >=, v[0][f].runs * 9 / 10);
		CHECK_INT(v[0][f].precise, >=, v[0][f].runs * 95 / 100);
		/* by time alone, fewer runs within 5% */
		CHECK_INT(v[1][f].precise, <, v[0][f].precise);
	}
	fixture_free(fx);
}

/* Another sampling a user may ask for (--gpu-sample 20/1000: as much of
 * the time traced, in half as many slices, so half the attaches and
 * detaches that stall a launching thread, docs/gpu-cost.md): the library's
 * 20 ms in 1,000, the probes' as xputop derives them (60 ms in 1,000), the
 * recorded workloads over 60 s with the library and the probes counting,
 * and with the probes alone.  Nothing in the estimates may hang on the
 * default's 10 ms in 500.  (Replayed 100 times each, 10 s and 60 s runs,
 * 2026-11-30: training's GPU time within 5% in 82 of 100 10 s runs, 56 at
 * 10 ms in 500; decode, graphs and the probes alone the same as at the
 * default; docs/gpu-estimates.md.) */
TEST(the_estimates_hold_at_20_ms_in_1000)
{
	static const struct { const char *name, *path; uint64_t tile_ms; } fx[] = {
		{ "GPT-2 training, 20/1000", "tests/fixtures/gpu-train.fx.gz", 899 },
		{ "HF decode, 20/1000", "tests/fixtures/gpu-decode.fx.gz", 1433 },
		{ "torch.compile, 20/1000", "tests/fixtures/gpu-compiled.fx.gz", 133 },
	};
	sample_at(20, 1000);
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct fixture *f = fixture_load(fx[i].path);
		CHECK(f != NULL);
		if (!f)
			continue;
		struct work wp = { fx[i].name, RECORDED, 0, 60, f, fx[i].tile_ms * MS };
		struct work wl = { fx[i].name, RECORDED, 1, 60, f, fx[i].tile_ms * MS };
		wp.probes = 1;
		check_work(&wp, RECORDED_SEEDS / 2, 0);
		check_work(&wl, RECORDED_SEEDS / 2, 0);
		fixture_free(f);
	}
	sample_at(XPU_SCHED_SLICE_MS, XPU_SCHED_PERIOD_MS);
}
