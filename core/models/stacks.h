/* SPDX-License-Identifier: GPL-2.0-only */
/* Weighted stacks over a sliding window.
 *
 * Counts weight (samples, or nanoseconds of GPU time) per (pid, tid, stack)
 * with two views of the closed data: the last `window` ticks and everything
 * since the start.  Weight added between ticks lands in an open bucket that
 * snapshots do not see until the next tick closes it, so a paused display
 * stays still while collection goes on.  Used by the CPU and GPU models; the
 * flamegraph widget and the folded exporter read it through xpu_stacks_each().
 *
 * Memory is bounded: when a tick leaves more than `max` entries, the entries
 * with no weight in the window and the least since-start weight are aged out
 * down to 3/4 of `max`.  Their weight is not lost: it moves to an entry of
 * the same process (tid 0) whose stack is `aged_stack` (a "[aged out]" label
 * the owner interns), or to pid 0 when even those would not fit, so totals
 * and per-process sums since the start stay exact.
 *
 * Exited processes are not kept one by one: once a process has exited
 * (xpu_stacks_retire) and none of its entries has weight in the window, its
 * entries merge into entries of pid 0 keyed by process name (tid = the comm
 * string id), one per (name, stack).  The since-start flamegraph of all
 * processes and the folded export (which group by name) stay the same, and
 * memory grows with the distinct call paths of the programs that run, not
 * with how many times they ran.
 */
#ifndef XPU_STACKS_H
#define XPU_STACKS_H

#include <stdint.h>

#include "htab.h"
#include "ticks.h"
#include "window.h"

struct xpu_stack_entry {
	uint32_t pid, tid, stack;
	uint32_t comm;		/* dict string: process name when last seen */
	uint64_t open;		/* weight in the open bucket */
	uint64_t recent;	/* closed weight within the window */
	uint64_t total;		/* closed weight since the start */
};

struct xpu_stacks {
	struct xpu_stack_entry *v;
	uint32_t n, cap;
	struct xpu_htab idx;
	uint32_t *touched;	/* entries with open weight this tick */
	uint32_t ntouched, touched_cap;
	struct xpu_bucket *ring; /* per closed tick in the window */
	struct xpu_ticks ticks;	/* which slot a closing tick fills */
	uint64_t sum_recent, sum_total;
	uint32_t max;		/* entries kept after a tick (default XPU_STACKS_MAX) */
	uint32_t aged_stack;	/* stack id that receives aged-out weight (0: dropped) */
	uint64_t aged_out;	/* entries aged out so far */
	uint32_t *retired;	/* pids that exited, merged once idle */
	uint32_t nretired, retired_cap;
	uint64_t merged;	/* entries of exited processes merged so far */
};

#define XPU_STACKS_MAX (1u << 18)

int xpu_stacks_init(struct xpu_stacks *s, uint32_t window_ticks);
void xpu_stacks_free(struct xpu_stacks *s);
/* Adds weight; returns 0 or -ENOMEM. */
int xpu_stacks_add(struct xpu_stacks *s, uint32_t pid, uint32_t tid, uint32_t stack,
		   uint32_t comm, uint64_t weight);
/* pid has exited: its entries merge by process name once idle. */
void xpu_stacks_retire(struct xpu_stacks *s, uint32_t pid);
/* Closes the open bucket and ages out the bucket that leaves the window. */
void xpu_stacks_tick(struct xpu_stacks *s);
static inline uint64_t xpu_stacks_sum(const struct xpu_stacks *s, enum xpu_window w)
{
	return w == XPU_WIN_ALL ? s->sum_total : s->sum_recent;
}
static inline uint64_t xpu_stack_weight(const struct xpu_stack_entry *e, enum xpu_window w)
{
	return w == XPU_WIN_ALL ? e->total : e->recent;
}

/* Calls fn for every entry with weight in window w matching pid/tid (0 = any).
 * Stops early and returns fn's value when it returns nonzero. */
/* Marks every stack id the table holds (entries and aged_stack) in d's sweep. */
struct xpu_dict;
void xpu_stacks_mark(const struct xpu_stacks *s, struct xpu_dict *d);

typedef int (*xpu_stacks_fn)(void *arg, const struct xpu_stack_entry *e, uint64_t weight);
int xpu_stacks_each(const struct xpu_stacks *s, enum xpu_window w, uint32_t pid, uint32_t tid,
		    xpu_stacks_fn fn, void *arg);

#endif
