/* SPDX-License-Identifier: GPL-2.0-only */
/* The tracing schedule of the injection library (inject/sched.c): exact
 * traces from the first moment to the last; sampled traces one slice of the
 * asked length in every period, at a point that moves from period to
 * period, and switches between the two as xputop asks. */
#include "check.h"

#include "inject.h"

#define MS 1000000ULL

/* Runs the schedule from t0 to t1 in 1 ms steps; returns the time traced and
 * counts the slices (and their lengths' extremes). */
static uint64_t run(struct xpu_sched *s, uint64_t t0, uint64_t t1, uint32_t *slices, uint64_t *shortest,
		    uint64_t *longest)
{
	uint64_t traced = 0, since = 0;
	*slices = 0;
	*shortest = UINT64_MAX;
	*longest = 0;
	for (uint64_t t = t0; t < t1; t += MS) {
		int act;
		while ((act = xpu_sched_due(s, t)) != XPU_SCHED_NONE) {
			if (act == XPU_SCHED_ON) {
				since = t;
				(*slices)++;
			} else {
				uint64_t len = t - since;
				traced += len;
				*shortest = len < *shortest ? len : *shortest;
				*longest = len > *longest ? len : *longest;
			}
		}
	}
	if (s->on)
		traced += t1 - since;
	return traced;
}

TEST(sampled_traces_one_slice_of_the_asked_length_per_period)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	uint32_t n;
	uint64_t lo, hi;
	xpu_sched_mode(&s, &m, 1000 * MS, 42);
	uint64_t traced = run(&s, 1000 * MS, 61000 * MS, &n, &lo, &hi);
	CHECK_INT(n, >=, 119);
	CHECK_INT(n, <=, 121);
	CHECK_INT(lo, ==, 10 * MS);
	CHECK_INT(hi, ==, 10 * MS);
	/* 2% of a minute */
	CHECK_INT(traced, >=, 1190 * MS);
	CHECK_INT(traced, <=, 1210 * MS);
}

TEST(slices_fall_at_different_points_of_their_periods)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 1000, 20, 0 };
	uint32_t seen[10] = { 0 };
	xpu_sched_mode(&s, &m, 0, 7);
	for (uint64_t t = 0; t < 200000 * MS; t += MS)
		if (xpu_sched_due(&s, t) == XPU_SCHED_ON)
			seen[(t % (1000 * MS)) / (100 * MS)]++;
	/* 200 slices spread over the tenths of the period, none empty */
	for (int i = 0; i < 10; i++)
		CHECK_INT(seen[i], >, 5);
}

TEST(exact_is_on_at_once_and_stays_on)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode m = { XPU_WIRE_MODE_EXACT, 0, 0, 0 };
	xpu_sched_mode(&s, &m, 5 * MS, 1);
	CHECK_INT(xpu_sched_wait(&s, 5 * MS), ==, 0);
	CHECK_INT(xpu_sched_due(&s, 5 * MS), ==, XPU_SCHED_ON);
	for (uint64_t t = 6 * MS; t < 10000 * MS; t += 7 * MS)
		CHECK_INT(xpu_sched_due(&s, t), ==, XPU_SCHED_NONE);
	CHECK(xpu_sched_wait(&s, 10000 * MS) == UINT64_MAX);
}

TEST(switching_from_exact_to_sampled_turns_tracing_off_at_once)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode exact = { XPU_WIRE_MODE_EXACT, 0, 0, 0 };
	struct xpu_wire_mode sampled = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	xpu_sched_mode(&s, &exact, 0, 1);
	CHECK_INT(xpu_sched_due(&s, 0), ==, XPU_SCHED_ON);
	xpu_sched_mode(&s, &sampled, 3000 * MS, 1);
	CHECK_INT(xpu_sched_due(&s, 3000 * MS), ==, XPU_SCHED_OFF);
	uint32_t n;
	uint64_t lo, hi;
	run(&s, 3000 * MS, 8000 * MS, &n, &lo, &hi);
	CHECK_INT(n, >=, 9);
	CHECK_INT(hi, ==, 10 * MS);
}

TEST(a_mode_that_makes_no_sense_becomes_the_default_sampled_one)
{
	static const struct xpu_wire_mode bad[] = {
		{ XPU_WIRE_MODE_SAMPLED, 10, 10, 0 },	/* the slice fills the period */
		{ XPU_WIRE_MODE_SAMPLED, 500, 0, 0 },
		{ XPU_WIRE_MODE_SAMPLED, 4000000, 10, 0 },
		{ 7, 500, 10, 0 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xpu_sched s = { 0 };
		xpu_sched_mode(&s, &bad[i], 0, 3);
		CHECK_INT(s.mode.mode, ==, XPU_WIRE_MODE_SAMPLED);
		CHECK_INT(s.mode.period_ms, ==, XPU_SCHED_PERIOD_MS);
		CHECK_INT(s.mode.slice_ms, ==, XPU_SCHED_SLICE_MS);
	}
}

TEST(a_late_wakeup_never_crowds_slices_together)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	xpu_sched_mode(&s, &m, 0, 9);
	/* the agent sleeps 10 s (a stopped process): at most one slice then */
	uint32_t ons = 0;
	for (int i = 0; i < 4; i++)
		ons += xpu_sched_due(&s, 10000 * MS + (uint64_t)i * MS) == XPU_SCHED_ON;
	CHECK_INT(ons, <=, 1);
}

/* Attaching CUPTI again before a slice took about 10 ms on the H100 and came
 * out of the slice: 0.6% of the time traced instead of 2%. */
TEST(a_slice_lasts_its_length_from_when_tracing_began)
{
	struct xpu_sched s = { 0 };
	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	xpu_sched_mode(&s, &m, 0, 7);
	uint64_t traced = 0, on_at = 0;
	uint32_t slices = 0;
	for (uint64_t t = 0; t < 60000 * MS; t += MS) {
		int act;
		while ((act = xpu_sched_due(&s, t)) != XPU_SCHED_NONE) {
			if (act == XPU_SCHED_ON) {
				on_at = t + 9 * MS;	/* the attach */
				xpu_sched_started(&s, on_at);
				slices++;
			} else {
				CHECK_INT(t - on_at, >=, 10 * MS);
				CHECK_INT(t - on_at, <=, 11 * MS);
				traced += t - on_at;
			}
		}
	}
	CHECK_INT(slices, >=, 119);
	CHECK_INT(traced, >=, 1190 * MS);
	/* Exact mode is not moved. */
	struct xpu_wire_mode e = { XPU_WIRE_MODE_EXACT, 0, 0, 0 };
	s = (struct xpu_sched){ 0 };
	xpu_sched_mode(&s, &e, 0, 7);
	CHECK_INT(xpu_sched_due(&s, 0), ==, XPU_SCHED_ON);
	xpu_sched_started(&s, 5 * MS);
	CHECK_INT(xpu_sched_wait(&s, 6 * MS), ==, UINT64_MAX);
}

/* Runs a sampled schedule with a budget from t0 to t1 in 1 ms steps, the
 * process launching `pace(t)` times a millisecond while traced (launches
 * are counted only then, as the library's callbacks count them); returns
 * the time on throughout and counts the switches. */
struct whole_run {
	uint64_t whole_ns, slice_ns, launches;
	uint64_t graph_kernels;	/* recorded: graph_x a launch */
	uint32_t graph_x;
	uint32_t wholes, slices, offs;
	uint64_t on_at;
	int whole;
};

static void run_whole(struct xpu_sched *s, uint64_t t0, uint64_t t1, uint32_t (*pace)(uint64_t),
		      struct whole_run *r)
{
	for (uint64_t t = t0; t < t1; t += MS) {
		int act;
		s->launches = r->launches;
		s->graph_kernels = r->graph_kernels;
		while ((act = xpu_sched_due(s, t)) != XPU_SCHED_NONE) {
			if (act == XPU_SCHED_OFF) {
				*(r->whole ? &r->whole_ns : &r->slice_ns) += t - r->on_at;
				r->offs++;
			} else {
				r->on_at = t;
				r->whole = act == XPU_SCHED_WHOLE;
				r->wholes += r->whole;
				r->slices += !r->whole;
			}
		}
		if (s->on) {
			r->launches += pace(t);
			r->graph_kernels += (uint64_t)pace(t) * r->graph_x;
		}
	}
	if (s->on) {		/* counted to t1; the next run goes on from there */
		*(r->whole ? &r->whole_ns : &r->slice_ns) += t1 - r->on_at;
		r->on_at = t1;
	}
}

/* The default sampled mode with the default budget (1 ms a second), from 0. */
static void with_budget(struct xpu_sched *s, struct whole_run *r, uint64_t seed)
{
	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 500, 10, 1000 };
	*s = (struct xpu_sched){ 0 };
	*r = (struct whole_run){ 0 };
	xpu_sched_mode(s, &m, 0, seed);
}

static uint32_t few(uint64_t t)
{
	return t % (10 * MS) == 0;	/* 100 a second: 0.5 ms of CUPTI's cost a second */
}

static uint32_t many(uint64_t t)
{
	return 20;	/* 20,000 a second */
}

/* A burst of 2,000 launches in 100 ms at 60 s, nothing else but few. */
static uint32_t burst(uint64_t t)
{
	return t >= 60000 * MS && t < 60100 * MS ? 20 : few(t);
}

TEST(a_process_that_launches_little_is_traced_throughout)
{
	struct xpu_sched s;
	struct whole_run r;
	with_budget(&s, &r, 5);
	CHECK_INT(xpu_sched_wait(&s, 0), ==, 0);
	run_whole(&s, 0, 60000 * MS, few, &r);
	CHECK_INT(r.wholes, ==, 1);
	CHECK_INT(r.offs, ==, 0);
	CHECK_INT(r.whole_ns, ==, 60000 * MS);
	CHECK_INT(s.cuts, ==, 0);
	/* Without a budget: slices only. */
	struct xpu_wire_mode none = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	s = (struct xpu_sched){ 0 };
	r = (struct whole_run){ 0 };
	xpu_sched_mode(&s, &none, 0, 5);
	run_whole(&s, 0, 60000 * MS, few, &r);
	CHECK_INT(r.wholes, ==, 0);
	CHECK_INT(r.slice_ns, ==, 1200 * MS);
}

/* A burst spends the budget: at the next check it is cut, a sampled period
 * starts there, and it is on throughout again at that period's end. */
TEST(a_burst_ends_tracing_throughout_for_a_period)
{
	struct xpu_sched s;
	struct whole_run r;
	with_budget(&s, &r, 5);
	run_whole(&s, 0, 60000 * MS, burst, &r);
	CHECK_INT(r.wholes, ==, 1);
	run_whole(&s, 60000 * MS, 61500 * MS, burst, &r);
	CHECK_INT(s.cuts, ==, 1);
	/* cut at its first check past 200 launches (1 ms of cost), one slice
	 * of 10 ms (in one or two parts), then on throughout again */
	CHECK_INT(r.slice_ns, ==, 10 * MS);
	CHECK_INT(r.wholes, >=, 2);
	CHECK(s.on && s.whole);
	/* out of it for one period (its slice's 10 ms in it) */
	CHECK_INT(61500 * MS - r.whole_ns, >=, 499 * MS);
	CHECK_INT(61500 * MS - r.whole_ns, <=, 502 * MS);
}

/* CUPTI's ids stuck (inject/cupti.c): the span on ends at once, and one on
 * throughout is on throughout again at the next switch, with no cut counted
 * nor periods in slices (its cost did not end it); a slice ends as at its
 * end; exact mode's is on again at the next switch; nothing on, nothing. */
TEST(a_span_ended_early_goes_on_as_it_was)
{
	struct xpu_sched s;
	struct whole_run r;
	with_budget(&s, &r, 5);
	run_whole(&s, 0, 2000 * MS, few, &r);
	CHECK(s.on && s.whole);
	CHECK_INT(xpu_sched_end(&s, 2000 * MS), ==, XPU_SCHED_OFF);
	CHECK(!s.on);
	CHECK_INT(xpu_sched_end(&s, 2000 * MS), ==, XPU_SCHED_NONE);
	CHECK_INT(xpu_sched_due(&s, 2030 * MS), ==, XPU_SCHED_WHOLE);
	CHECK_INT(s.cuts, ==, 0);

	struct xpu_wire_mode m = { XPU_WIRE_MODE_SAMPLED, 500, 10, 0 };
	s = (struct xpu_sched){ 0 };
	xpu_sched_mode(&s, &m, 0, 5);
	uint64_t t = 0;
	while (xpu_sched_due(&s, t) != XPU_SCHED_ON)
		t += MS;
	CHECK_INT(xpu_sched_end(&s, t + 3 * MS), ==, XPU_SCHED_OFF);
	CHECK(!s.on);
	/* the next slice in the next period */
	CHECK_INT(xpu_sched_wait(&s, t + 3 * MS), >, 0);

	struct xpu_wire_mode ex = { XPU_WIRE_MODE_EXACT, 0, 0, 0 };
	s = (struct xpu_sched){ 0 };
	xpu_sched_mode(&s, &ex, 0, 5);
	CHECK_INT(xpu_sched_due(&s, 0), ==, XPU_SCHED_ON);
	CHECK_INT(xpu_sched_end(&s, 5 * MS), ==, XPU_SCHED_OFF);
	CHECK_INT(xpu_sched_due(&s, 6 * MS), ==, XPU_SCHED_ON);
}

/* 300 s at pace (graph_x graph kernels a launch), which spends the budget
 * within XPU_SCHED_LASTED_MS: tried on throughout after 4+8+16+32 = 60
 * periods (30 s), then every 64 (32 s): 1 + 4 + 8 tries, each at most
 * span_ms long. */
static void backs_off(struct xpu_sched *s, struct whole_run *r, uint32_t (*pace)(uint64_t), uint32_t graph_x,
		      uint64_t span_ms)
{
	with_budget(s, r, 5);
	r->graph_x = graph_x;
	run_whole(s, 0, 300000 * MS, pace, r);
	CHECK_INT(r->wholes, >=, 12);
	CHECK_INT(r->wholes, <=, 14);
	CHECK_INT(s->cuts, ==, r->wholes);
	CHECK_INT(r->whole_ns, <=, (uint64_t)r->wholes * span_ms * MS);
	CHECK_INT(s->backoff, ==, XPU_SCHED_BACKOFF_MAX);
}

/* Launching much, it pays one check's worth of tracing throughout after 4,
 * 8, ... 64 periods: a few hundredths of a percent of the time. */
TEST(a_busy_process_tries_tracing_throughout_ever_less_often)
{
	struct xpu_sched s;
	struct whole_run r;
	backs_off(&s, &r, many, 0, 20);
	/* and slices the rest of the time: 2% of it */
	CHECK_INT(r.slice_ns, >=, 5900 * MS);
	CHECK_INT(r.slice_ns, <=, 6000 * MS);
}

/* 6,200 launches a second (a torch.compile loop's graph launches on the
 * H200 were 6,400): the bucket lasts past the first check and is cut at the
 * second, 40 ms in.  That is no span that lasted: it backs off as the busy
 * one above (counted as lasting, it went on throughout after every period:
 * 556 tries in 300 s, 7.4% of the time). */
static uint32_t graphs(uint64_t t)
{
	return 6 + ((t / MS) % 5 == 0);
}

TEST(a_span_cut_at_its_second_check_backs_off_too)
{
	struct xpu_sched s;
	struct whole_run r;
	backs_off(&s, &r, graphs, 0, 40);
	CHECK_INT(r.whole_ns, >, (uint64_t)r.wholes * 20 * MS);
}

/* 100 graph launches a second, 200 kernels each: 0.5 ms of CUPTI's cost a
 * second by the launches alone (traced throughout, above), 40 ms by the
 * kernels: to slices within 60 ms, and tried ever less often.  The same
 * launches of graphs of 2 kernels (0.9 ms a second) stay on throughout. */
TEST(a_few_launches_of_large_graphs_spend_the_budget)
{
	struct xpu_sched s;
	struct whole_run r;
	backs_off(&s, &r, few, 200, 60);
	with_budget(&s, &r, 5);
	r.graph_x = 2;
	run_whole(&s, 0, 60000 * MS, few, &r);
	CHECK_INT(r.wholes, ==, 1);
	CHECK_INT(r.whole_ns, ==, 60000 * MS);
}

/* After a cut, a slice that would run past the period's end wraps to its
 * start: every instant of the period is as likely to be traced, its first
 * 10 ms (the burst that cut it) too. */
TEST(a_slice_after_a_cut_is_as_likely_at_the_period_start)
{
	uint32_t first = 0, middle = 0, n = 4000;
	for (uint32_t seed = 1; seed <= n; seed++) {
		struct xpu_sched s;
		struct whole_run r;
		with_budget(&s, &r, seed);
		/* launching much: cut at the first check, 20 ms; which of two
		 * instants of the period after it were traced */
		uint64_t cut = 20 * MS, traced[2] = { 0, 0 };
		for (uint64_t t = 0; t < cut + 500 * MS; t += MS / 2) {
			s.launches = r.launches;
			while (xpu_sched_due(&s, t) != XPU_SCHED_NONE)
				;
			if (s.on && !s.whole && (t == cut + 2 * MS || t == cut + 250 * MS))
				traced[t == cut + 250 * MS]++;
			if (s.on)
				r.launches += 10;
		}
		first += traced[0] > 0;
		middle += traced[1] > 0;
	}
	/* 2% each: 80 of 4,000, +-9 */
	CHECK_INT(first, >=, 50);
	CHECK_INT(first, <=, 110);
	CHECK_INT(middle, >=, 50);
	CHECK_INT(middle, <=, 110);
}
