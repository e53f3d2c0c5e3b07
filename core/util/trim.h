/* SPDX-License-Identifier: GPL-2.0-only */
/* Bounded tables: which rows stay when a table outgrows its limit.
 *
 * The stacks, CPU, GPU and NPU models keep since-start rows for as long as
 * they can; past a limit, rows with nothing in the window are aged out, the
 * lightest since the start first, down to 3/4 of the limit, so a trim runs
 * once per quarter of the limit of new rows, not on every tick.  Rows with
 * something in the window always stay.
 */
#ifndef XPU_TRIM_H
#define XPU_TRIM_H

#include <stdint.h>

struct xpu_trim {
	uint64_t cut;		/* idle rows heavier than this stay ... */
	uint32_t ties;		/* ... and this many of those equal to it */
};

/* Plans a trim of a table with max rows, `busy` of them with something in
 * the window, and the idle rows' since-start weights in w[0..nidle) (w is
 * reordered).  Returns 1 when some idle rows must go (then xpu_trim_keeps
 * decides each), 0 when all fit. */
int xpu_trim_plan(uint32_t max, uint32_t busy, uint64_t *w, uint32_t nidle, struct xpu_trim *t);

/* Whether an idle row of this weight stays; call once per idle row, in
 * table order. */
static inline int xpu_trim_keeps(struct xpu_trim *t, uint64_t weight)
{
	if (weight > t->cut)
		return 1;
	if (weight == t->cut && t->ties) {
		t->ties--;
		return 1;
	}
	return 0;
}

#endif
