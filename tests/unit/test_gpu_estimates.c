/* SPDX-License-Identifier: GPL-2.0-only */
/* The sampled GPU estimates against the exact figures, without a GPU.
 *
 * A workload is an exact stream of launches (each with its kernel's time).
 * It is replayed as if sampled, the way xputop's sources deliver it: an
 * injected process traces slices placed by the library's own schedule
 * (inject/sched.c), its kernels coming a flush after their launch and each
 * slice reported when it ends; a process seen by the launch probes only is
 * counted while the probes are on (slices placed the same way), its counts
 * read at every refresh and the probes' spans handed on after them, as
 * core/sources/gpu_probes.c does.  The GPU model's estimates are then held
 * against what the workload really did, over many seeds: on average within
 * 5% (no bias), and each run within 5% or within the uncertainty the
 * estimate states. */
#include "check.h"

#include <math.h>

#include "dict.h"
#include "event.h"
#include "inject.h"
#include "model_gpu.h"
#include "table.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL
#define T0 (1000 * SEC)		/* xputop starts */
#define TICK SEC
#define FLUSH (20 * MS)		/* the library's records come this much later */

enum shape { STEADY, IDLE, BURSTY };

struct work {
	const char *name;
	enum shape shape;
	int launch_only;
	uint64_t seconds;
	/* generator state */
	uint64_t rng, burst_end, burst_next;
	uint32_t burst_left;
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
			return t + 20 * US;
		}
		w->burst_next += uniform(&w->rng, 500 * MS, 2500 * MS);
		w->burst_left = (uint32_t)uniform(&w->rng, 30, 150) - 1;
		return w->burst_next;
	case BURSTY: {
		uint64_t t1 = t + uniform(&w->rng, 150 * US, 250 * US);
		uint64_t phase = (t1 - w->burst_next) % (10 * SEC);
		return phase < SEC ? t1 : t1 + 10 * SEC - phase;
	}
	}
	return UINT64_MAX;
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

/* The slices of the library's schedule from `from` to `to`. */
static uint32_t slices(uint64_t seed, uint64_t from, uint64_t to, uint64_t (*v)[2], uint32_t max)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode mode = { XPU_WIRE_MODE_SAMPLED, XPU_SCHED_PERIOD_MS, XPU_SCHED_SLICE_MS, 0 };
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

struct truth {
	uint64_t launches, gpu_ns;
};

#define PID 4242
#define MAX_SLICES 4096

struct names {
	uint32_t comm, api, kernel, stack;
};

static void launch_event(struct xpu_event *ev, const struct names *nm, uint64_t t, uint32_t corr, int only,
			 uint32_t count)
{
	*ev = (struct xpu_event){ .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = PID, .tid = PID,
				  .time = t };
	ev->launch.corr = corr;
	ev->launch.api = nm->api;
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

/* An injected process: connected at start, its slices' launches and
 * kernels a flush later, each slice when it ends; it exits at end. */
static void sample_injected(struct work *w, const struct names *nm, uint64_t start, uint64_t end, uint64_t seed,
			    struct stream *out, struct truth *tr)
{
	static uint64_t sl[MAX_SLICES][2];
	uint32_t ns = slices(seed, start, end, sl, MAX_SLICES), k = 0, corr = 0;
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
	for (uint64_t t = next_launch(w, start); t < end; t = next_launch(w, t)) {
		uint64_t dur = 50 * US + t % (100 * US);
		tr->launches++;
		tr->gpu_ns += dur;
		corr++;
		while (k < ns && sl[k][1] <= t)
			k++;
		if (k == ns || t < sl[k][0])
			continue;
		launch_event(&ev, nm, t, corr, 0, 0);
		put(out, t + FLUSH, &ev);
		ev = (struct xpu_event){ .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = PID,
					 .time = t + 5 * US };
		ev.kernel.end = t + 5 * US + dur;
		ev.kernel.corr = corr;
		ev.kernel.name = nm->kernel;
		ev.kernel.comm = nm->comm;
		put(out, t + FLUSH, &ev);
	}
}

/* A process the launch probes count: the probes' slices from xputop's
 * start, the counts read at each refresh, then the spans that ended. */
static void sample_probed(struct work *w, const struct names *nm, uint64_t start, uint64_t end, uint64_t seed,
			  struct stream *out, struct truth *tr)
{
	static uint64_t sl[MAX_SLICES][2];
	uint32_t ns = slices(seed, T0, end + TICK, sl, MAX_SLICES), k = 0, spans = 0;
	uint64_t tick = T0 + TICK, counted = 0;
	struct xpu_event ev;
	uint64_t t = next_launch(w, start);
	for (; tick <= end + TICK; tick += TICK) {
		for (; t < end && t < tick; t = next_launch(w, t)) {
			tr->launches++;
			tr->gpu_ns += 50 * US + t % (100 * US);
			while (k < ns && sl[k][1] <= t)
				k++;
			counted += k < ns && t >= sl[k][0];
		}
		if (counted) {
			launch_event(&ev, nm, tick, 0, 1, (uint32_t)counted);
			put(out, tick, &ev);
			counted = 0;
		}
		for (; spans < ns && sl[spans][1] <= tick; spans++) {
			slice_event(&ev, 0, sl[spans][0], sl[spans][1], 0);
			put(out, tick, &ev);
		}
	}
}

struct estimate {
	double launches, launches_err;
	double gpu_ns, gpu_ns_err;	/* injected only */
	int launches_ok, gpu_ns_ok;	/* an estimate was made */
};

static void read_estimates(const struct xpu_gpu_model *m, struct estimate *e)
{
	*e = (struct estimate){ 0 };
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct xpu_gpu_est *l = &m->procs[i].est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
		if (m->procs[i].pid != PID)
			continue;
		e->launches = l->value;
		e->launches_err = l->err_pct;
		e->launches_ok = l->ok;
	}
	struct xpu_gpu_est g = xpu_gpu_model_gpu_ns_err(m, XPU_WIN_ALL);
	e->gpu_ns = g.value;
	e->gpu_ns_err = g.err_pct;
	e->gpu_ns_ok = g.ok;
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
	struct names nm = { xpu_dict_cstr(&d, "app"), xpu_dict_cstr(&d, "cudaLaunchKernel"),
			    xpu_dict_cstr(&d, "k"), 0 };
	uint32_t f = xpu_dict_frame(&d, XPU_FRAME_LAUNCH, nm.api, 0);
	nm.stack = xpu_dict_stack(&d, &f, 1);
	uint64_t start = T0 + 300 * MS, end = T0 + w->seconds * SEC;
	w->rng = seed * 0x9E3779B97F4A7C15ULL | 1;
	w->burst_next = start + uniform(&w->rng, 0, 10 * SEC);
	w->burst_left = 0;
	*tr = (struct truth){ 0 };
	if (w->launch_only)
		sample_probed(w, &nm, start, end, seed, &s, tr);
	else
		sample_injected(w, &nm, start, end, seed, &s, tr);
	qsort(s.v, s.n, sizeof(*s.v), by_arrival);
	uint64_t tick = T0 + TICK;
	for (size_t i = 0; i <= s.n; i++) {
		uint64_t at = i < s.n ? s.v[i].at : end + 2 * TICK;
		for (; tick < at; tick += TICK)
			xpu_gpu_model_tick(&m, tick, TICK);
		if (i < s.n && xpu_gpu_model_event(&m, &s.v[i].ev) < 0)
			abort();
	}
	read_estimates(&m, est);
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
#define BIAS_SE 2.0
#else
#define IDLE_SEEDS 10000
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

/* seeds runs of w: the launches (and, injected, the GPU time) estimated */
static void check_work(struct work *w, uint32_t seeds, int need_precise)
{
	struct verdict vl = { 0 }, vg = { 0 };
	for (uint32_t i = 0; i < seeds; i++) {
		struct truth tr;
		struct estimate e;
		run_once(w, 1 + i, &tr, &e);
		judge(&vl, (double)tr.launches, e.launches, e.launches_err, e.launches_ok);
		if (!w->launch_only)
			judge(&vg, (double)tr.gpu_ns, e.gpu_ns, e.gpu_ns_err, e.gpu_ns_ok);
	}
	report("launches", w, &vl);
	CHECK(fabs(vl.bias) <= vl.bias_limit);
	CHECK_INT(vl.honest, >=, vl.runs * 9 / 10);
	if (need_precise)
		CHECK_INT(vl.precise, ==, vl.runs);
	if (w->launch_only)
		return;
	report("GPU time", w, &vg);
	CHECK(fabs(vg.bias) <= vg.bias_limit);
	CHECK_INT(vg.honest, >=, vg.runs * 9 / 10);
	if (need_precise)
		CHECK_INT(vg.precise, ==, vg.runs);
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

TEST(a_bursty_process_is_estimated_within_its_uncertainty)
{
	check_both("busy 1 s in 10, injected", "busy 1 s in 10, probes", BURSTY, 600, 20, 0);
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
