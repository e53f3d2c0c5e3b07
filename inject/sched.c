/* SPDX-License-Identifier: GPL-2.0-only */
/* The tracing schedule (inject.h): exact is on from the start and stays on;
 * sampled is off, then on for a slice at a uniformly random point of each
 * period, or on throughout while the process launches little.  Random
 * placement keeps a workload whose steps repeat at the period (a training
 * loop of exactly one second) from being seen always in the same phase. */
#include <stdint.h>

#include "inject.h"

#define NS_PER_MS 1000000ULL

static uint64_t next_random(struct xpu_sched *s)
{
	/* xorshift64*: enough to place slices, no state shared with anyone */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1DULL;
}

/* The next slice's start within the period that starts at s->period, at a
 * uniformly random point of it. */
static void place_slice(struct xpu_sched *s)
{
	uint64_t room = (uint64_t)(s->mode.period_ms - s->mode.slice_ms) * NS_PER_MS;
	s->next = s->period + (room ? next_random(s) % (room + 1) : 0);
	s->part = (uint64_t)s->mode.slice_ms * NS_PER_MS;
	s->wrap = 0;
}

/* The same after a cut, wrapping around the period's end: every instant of
 * the period is traced with the same chance, slice / period.  Inside the
 * period, its first and last slice lengths were less likely to be, and a
 * burst that began with the period, as the one that cut the span on
 * throughout does, came out 5% low (tests/unit/test_gpu_estimates.c, the
 * mostly idle process with larger bursts scaled by time).  A slice that
 * wraps is traced in two parts: from the period's start, then up to its
 * end. */
static void place_slice_wrapping(struct xpu_sched *s)
{
	uint64_t len = (uint64_t)s->mode.period_ms * NS_PER_MS, slice = (uint64_t)s->mode.slice_ms * NS_PER_MS;
	uint64_t at = next_random(s) % len;
	s->part = slice;
	s->wrap = 0;
	if (at + slice <= len) {
		s->next = s->period + at;
		return;
	}
	s->next = s->period;
	s->part = at + slice - len;
	s->wrap = s->period + at;
}

/* Tracing throughout is allowed: sampled, with a budget. */
static int whole_allowed(const struct xpu_sched *s)
{
	return s->mode.mode == XPU_WIRE_MODE_SAMPLED && s->mode.whole_us;
}

static double budget_ns(const struct xpu_sched *s)
{
	return (double)s->mode.whole_us * 1000.0;
}

void xpu_sched_mode(struct xpu_sched *s, const struct xpu_wire_mode *m, uint64_t now, uint64_t seed)
{
	struct xpu_wire_mode ok = *m;
	if (ok.mode != XPU_WIRE_MODE_EXACT &&
	    (ok.mode != XPU_WIRE_MODE_SAMPLED || ok.slice_ms == 0 || ok.period_ms <= ok.slice_ms ||
	     ok.period_ms > 3600000 || ok.whole_us > 1000000))
		ok = (struct xpu_wire_mode){ XPU_WIRE_MODE_SAMPLED, XPU_SCHED_PERIOD_MS, XPU_SCHED_SLICE_MS, 0 };
	s->mode = ok;
	s->rng = seed | 1;
	s->period = now;
	s->whole_next = 0;
	if (ok.mode == XPU_WIRE_MODE_SAMPLED)
		place_slice(s);
	/* From exact (or a span cut short) to sampled: off at once, the first
	 * slice where the new period places it. */
	if (s->on) {
		s->whole = 0;
		s->whole_tried = 1;
		s->closing = 1;
		s->after = s->next;
		if (ok.mode == XPU_WIRE_MODE_SAMPLED)
			s->next = now;
	} else if (ok.mode == XPU_WIRE_MODE_SAMPLED && !s->whole_tried && whole_allowed(s)) {
		/* The first period on throughout: a process that launches
		 * little is traced from its first launch, one that launches
		 * much costs a budget and goes to slices within a check or two. */
		s->next = now;
	}
}

/* On throughout: at a check, the budget refilled for the time since the
 * last and drained by what the launches and graph kernels since cost (a
 * graph's kernels are counted as their records come, at the flushes: a
 * buffer's worth late at most).  Returns 1 to go on. */
static int within_budget(struct xpu_sched *s, uint64_t now)
{
	double full = budget_ns(s);
	s->bucket += full * (double)(now - s->checked) / 1e9;
	if (s->bucket > full)
		s->bucket = full;
	s->bucket -= (double)(s->launches - s->counted) * XPU_SCHED_LAUNCH_NS +
		     (double)(s->graph_kernels - s->counted_gk) * XPU_SCHED_GRAPH_KERNEL_NS;
	s->checked = now;
	s->counted = s->launches;
	s->counted_gk = s->graph_kernels;
	s->checks++;
	return s->bucket >= 0;
}

/* A span on throughout whose launches cost more than the budget: the next
 * period starts now, its slice anywhere in it (a burst's start, the most
 * often: left out of every period, it would be missed).  On throughout
 * again after one period where the span lasted XPU_SCHED_LASTED_MS, 100 ms
 * (the process launched little that long: a burst ended it); where it was
 * cut sooner, after 4 periods, then twice as many each time, up to
 * XPU_SCHED_BACKOFF_MAX: a busy process pays a bucket's worth of tracing
 * that seldom (a million empty kernels on an H200, 4 s, paid +0.06 us a
 * launch with tries after 1, 2 and 4 periods).  (Cut at its second check
 * counted as lasting, a torch.compile loop of 6,400 graph launches a
 * second was on throughout 40-50 ms after each period of slices on the
 * H200.) */
static int cut(struct xpu_sched *s, uint64_t now)
{
	s->on = s->whole = 0;
	s->cuts++;
	s->backoff = (uint64_t)s->checks * XPU_SCHED_CHECK_MS >= XPU_SCHED_LASTED_MS ? 1
		     : s->backoff >= XPU_SCHED_BACKOFF_MAX / 2 ? XPU_SCHED_BACKOFF_MAX
		     : s->backoff > 1 ? 2 * s->backoff : XPU_SCHED_BACKOFF_FIRST;
	s->left = s->backoff;
	s->period = now;
	place_slice_wrapping(s);
	return XPU_SCHED_OFF;
}

int xpu_sched_end(struct xpu_sched *s, uint64_t now)
{
	if (!s->on)
		return XPU_SCHED_NONE;
	if (s->mode.mode == XPU_WIRE_MODE_EXACT) {
		s->on = 0;	/* on again at the next xpu_sched_due */
		return XPU_SCHED_OFF;
	}
	if (s->whole) {
		/* Not its cost: on throughout again as soon as it can be. */
		s->on = s->whole = 0;
		s->whole_next = 1;
		s->next = now;
		return XPU_SCHED_OFF;
	}
	s->next = now;		/* the slice ends here, as at its end */
	return xpu_sched_due(s, now);
}

int xpu_sched_due(struct xpu_sched *s, uint64_t now)
{
	if (s->mode.mode == XPU_WIRE_MODE_EXACT) {
		if (s->on)
			return XPU_SCHED_NONE;
		s->on = 1;
		return XPU_SCHED_ON;
	}
	if (now < s->next)
		return XPU_SCHED_NONE;
	if (s->on && s->whole) {
		if (within_budget(s, now)) {
			s->next = now + XPU_SCHED_CHECK_MS * NS_PER_MS;
			return XPU_SCHED_NONE;
		}
		return cut(s, now);
	}
	if (!s->on) {
		s->on = 1;
		if (whole_allowed(s) && (s->whole_next || !s->whole_tried)) {
			s->whole = 1;
			s->whole_next = 0;
			s->whole_tried = 1;
			s->bucket = budget_ns(s);
			s->checked = now;
			s->checks = 0;
			s->counted = s->launches;
			s->counted_gk = s->graph_kernels;
			s->next = now + XPU_SCHED_CHECK_MS * NS_PER_MS;
			return XPU_SCHED_WHOLE;
		}
		s->whole_tried = 1;
		s->next = now + s->part;
		return XPU_SCHED_ON;
	}
	s->on = 0;
	s->whole = 0;
	if (s->closing) {	/* a mode change ended it */
		s->closing = 0;
		s->next = s->after;
		return XPU_SCHED_OFF;
	}
	if (s->wrap) {		/* its first part: the second ends the period */
		s->next = s->wrap;
		s->part = s->period + (uint64_t)s->mode.period_ms * NS_PER_MS - s->wrap;
		s->wrap = 0;
		return XPU_SCHED_OFF;
	}
	/* On throughout from the period's end once the periods after a cut
	 * are over: how long the process stays in slices follows from what
	 * was traced throughout alone, never from what its slices saw, so
	 * that they stay a fair sample of that time.  (The launch probes go
	 * on throughout after a slice that saw little; here that rule showed
	 * no bias in the harness either, +0.1%, but it keeps a process in
	 * slices for as long as they catch it busy.)  Every sampled period is
	 * a whole one, its slice at a random point of it. */
	if (s->left)
		s->left--;
	s->whole_next = whole_allowed(s) && !s->left;
	/* The next period starts where this one ends; a late wake-up (a busy
	 * machine) starts it now rather than crowding slices together. */
	s->period += (uint64_t)s->mode.period_ms * NS_PER_MS;
	if (s->period < now)
		s->period = now;
	if (s->whole_next)
		s->next = s->period;
	else
		place_slice(s);
	return XPU_SCHED_OFF;
}

uint64_t xpu_sched_wait(const struct xpu_sched *s, uint64_t now)
{
	if (s->mode.mode == XPU_WIRE_MODE_EXACT)
		return s->on ? UINT64_MAX : 0;
	return s->next > now ? s->next - now : 0;
}

void xpu_sched_started(struct xpu_sched *s, uint64_t now)
{
	if (s->mode.mode != XPU_WIRE_MODE_SAMPLED || !s->on)
		return;
	if (s->whole) {
		s->checked = now;
		s->next = now + XPU_SCHED_CHECK_MS * NS_PER_MS;
	} else {
		s->next = now + s->part;
	}
}
