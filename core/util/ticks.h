/* SPDX-License-Identifier: GPL-2.0-only */
/* The closed ticks a model keeps in its window: which ring slot a closing
 * tick fills, and how long the window and the whole session are.  Every
 * model keeps its per-tick values (window.h) in rings of `window` slots
 * indexed by the slot this gives. */
#ifndef XPU_TICKS_H
#define XPU_TICKS_H

#include <stdint.h>

struct xpu_ticks {
	uint32_t window;	/* ticks in the recent window (the rings' size) */
	uint32_t head;		/* slot the next closed tick fills */
	uint32_t filled;	/* slots holding a closed tick */
	uint64_t *lens;		/* each slot's tick length */
	uint64_t tick_ns;	/* the last closed tick's length */
	uint64_t window_ns;	/* the window's ticks together */
	uint64_t total_ns;	/* every closed tick together */
};

int xpu_ticks_init(struct xpu_ticks *t, uint32_t window);
void xpu_ticks_free(struct xpu_ticks *t);
/* Closes a tick of interval_ns.  Returns the slot it fills; *full is set when
 * that slot held the window's oldest tick, whose values the caller takes out
 * of its window sums before overwriting them. */
uint32_t xpu_ticks_close(struct xpu_ticks *t, uint64_t interval_ns, int *full);

#endif
