/* SPDX-License-Identifier: GPL-2.0-only */
/* The tracing schedule (inject.h): exact is on from the start and stays on;
 * sampled is off, then on for a slice at a uniformly random point of each
 * period.  Random placement keeps a workload whose steps repeat at the
 * period (a training loop of exactly one second) from being seen always in
 * the same phase. */
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

/* The next slice's start within the period that starts at s->period. */
static void place_slice(struct xpu_sched *s)
{
	uint64_t room = (uint64_t)(s->mode.period_ms - s->mode.slice_ms) * NS_PER_MS;
	s->next = s->period + (room ? next_random(s) % (room + 1) : 0);
}

void xpu_sched_mode(struct xpu_sched *s, const struct xpu_wire_mode *m, uint64_t now, uint64_t seed)
{
	struct xpu_wire_mode ok = *m;
	if (ok.mode != XPU_WIRE_MODE_EXACT &&
	    (ok.mode != XPU_WIRE_MODE_SAMPLED || ok.slice_ms == 0 || ok.period_ms <= ok.slice_ms ||
	     ok.period_ms > 3600000))
		ok = (struct xpu_wire_mode){ XPU_WIRE_MODE_SAMPLED, XPU_SCHED_PERIOD_MS, XPU_SCHED_SLICE_MS, 0 };
	s->mode = ok;
	s->rng = seed | 1;
	s->period = now;
	if (ok.mode == XPU_WIRE_MODE_SAMPLED)
		place_slice(s);
	/* From exact to sampled: off at once, the first slice a period later. */
	if (ok.mode == XPU_WIRE_MODE_SAMPLED && s->on)
		s->next = now;
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
	if (!s->on) {
		s->on = 1;
		s->next = now + (uint64_t)s->mode.slice_ms * NS_PER_MS;
		return XPU_SCHED_ON;
	}
	s->on = 0;
	/* The next period starts where this one ends; a late wake-up (a busy
	 * machine) starts it now rather than crowding slices together. */
	s->period += (uint64_t)s->mode.period_ms * NS_PER_MS;
	if (s->period < now)
		s->period = now;
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
	if (s->mode.mode == XPU_WIRE_MODE_SAMPLED && s->on)
		s->next = now + (uint64_t)s->mode.slice_ms * NS_PER_MS;
}
