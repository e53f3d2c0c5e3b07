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
