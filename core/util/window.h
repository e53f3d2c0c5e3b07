/* SPDX-License-Identifier: GPL-2.0-only */
/* What the models keep per tick over the recent window and since the start:
 * counts, maxima and histograms.  One copy of the bookkeeping for every
 * model (issue 29).
 *
 * Whatever is added lands in the open tick, which snapshots do not see until
 * the model closes it, so a paused display stays still while collection goes
 * on.  Closing a tick takes the slot and `full` that xpu_ticks_close (ticks.h)
 * gave for it: the value moves into the slot of the ring, the window's sum
 * loses the tick that left it (when full) and the since-start figure grows.
 */
#ifndef XPU_WINDOW_H
#define XPU_WINDOW_H

#include <stdint.h>

#include "ticks.h"

enum xpu_window { XPU_WIN_RECENT = 0, XPU_WIN_ALL = 1 };

/* How long window w lasted: the closed ticks in it. */
static inline uint64_t xpu_win_span(const struct xpu_ticks *t, enum xpu_window w)
{
	return w == XPU_WIN_ALL ? t->total_ns : t->window_ns;
}

/* n over ns as a rate a second, 0 over no time. */
static inline double xpu_win_per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

/* A count per tick (calls, samples, nanoseconds).  A zeroed one with no
 * ring keeps last and total only (recent stays 0). */
struct xpu_win_count {
	uint64_t open;		/* the open tick */
	uint64_t last;		/* the last closed tick */
	uint64_t recent;	/* the window's closed ticks */
	uint64_t total;		/* every closed tick */
	uint64_t *ring;		/* per closed tick in the window */
};

/* Returns 0 or -ENOMEM. */
int xpu_win_count_init(struct xpu_win_count *c, uint32_t window);
void xpu_win_count_free(struct xpu_win_count *c);
void xpu_win_count_close(struct xpu_win_count *c, uint32_t slot, int full);
static inline uint64_t xpu_win_count_get(const struct xpu_win_count *c, enum xpu_window w)
{
	return w == XPU_WIN_ALL ? c->total : c->recent;
}

/* The largest value of each tick. */
struct xpu_win_max {
	uint64_t open, all;
	uint64_t *ring;		/* per closed tick in the window */
};

int xpu_win_max_init(struct xpu_win_max *x, uint32_t window);
void xpu_win_max_free(struct xpu_win_max *x);
static inline void xpu_win_max_add(struct xpu_win_max *x, uint64_t v)
{
	if (v > x->open)
		x->open = v;
}
void xpu_win_max_close(struct xpu_win_max *x, uint32_t slot);
/* The largest in window w (of `window` ticks); 0 when none. */
uint64_t xpu_win_max_get(const struct xpu_win_max *x, enum xpu_window w, uint32_t window);

/* A tick's or a parked histogram's nonzero buckets, ascending. */
struct xpu_win_sparse {
	uint32_t n;
	uint16_t *b;
	uint64_t *c;
};

/* Counts by bucket (the caller numbers them, at most 65536), and the
 * largest value added.  Dense while in use; once nothing of it is left in
 * the window, only its since-start buckets are kept, sparse (`parked`), so
 * the idle rows of a long session cost a few hundred bytes instead of
 * three dense arrays.  Nothing is allocated until the first value. */
struct xpu_win_hist {
	uint32_t window, nb;		/* ticks in the window, buckets */
	uint64_t *open, *win, *all;	/* nb each; NULL until used, and when parked */
	struct xpu_win_sparse *ring;	/* per closed tick in the window */
	struct xpu_win_sparse parked;	/* the since-start buckets of an idle histogram */
	struct xpu_win_max max;		/* its ring goes with the dense arrays */
	uint64_t n_open, n_win, n_all;
};

void xpu_win_hist_init(struct xpu_win_hist *h, uint32_t window, uint32_t buckets);
void xpu_win_hist_free(struct xpu_win_hist *h);
/* Adds n values of `value` in bucket b.  Returns 0 or -ENOMEM. */
int xpu_win_hist_add(struct xpu_win_hist *h, uint32_t b, uint64_t value, uint64_t n);
/* Out of memory, a tick stays in the since-start counts but leaves the
 * window early. */
void xpu_win_hist_close(struct xpu_win_hist *h, uint32_t slot, int full);
/* The bucket quantile q (0..1) of window w falls in, or nb when the counts
 * do not reach it.  Returns 0 when the window holds nothing. */
int xpu_win_hist_quantile(const struct xpu_win_hist *h, enum xpu_window w, double q, uint32_t *b);

#endif
