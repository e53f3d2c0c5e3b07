/* SPDX-License-Identifier: GPL-2.0-only */
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int ring_init(uint64_t **ring, uint32_t window)
{
	*ring = calloc(window ? window : 1, sizeof(uint64_t));
	return *ring ? 0 : -ENOMEM;
}

int xpu_win_count_init(struct xpu_win_count *c, uint32_t window)
{
	memset(c, 0, sizeof(*c));
	return ring_init(&c->ring, window);
}

void xpu_win_count_close(struct xpu_win_count *c, uint32_t slot, int full)
{
	if (c->ring) {
		if (full)
			c->recent -= c->ring[slot];
		c->ring[slot] = c->open;
		c->recent += c->open;
	}
	c->total += c->open;
	c->last = c->open;
	c->open = 0;
}

void xpu_win_count_free(struct xpu_win_count *c)
{
	free(c->ring);
	memset(c, 0, sizeof(*c));
}

int xpu_win_max_init(struct xpu_win_max *x, uint32_t window)
{
	memset(x, 0, sizeof(*x));
	return ring_init(&x->ring, window);
}

void xpu_win_max_close(struct xpu_win_max *x, uint32_t slot)
{
	if (x->ring)
		x->ring[slot] = x->open;
	if (x->open > x->all)
		x->all = x->open;
	x->open = 0;
}

uint64_t xpu_win_max_get(const struct xpu_win_max *x, enum xpu_window w, uint32_t window)
{
	uint64_t max = 0;
	if (w == XPU_WIN_ALL)
		return x->all;
	for (uint32_t i = 0; x->ring && i < window; i++)
		if (x->ring[i] > max)
			max = x->ring[i];
	return max;
}

void xpu_win_max_free(struct xpu_win_max *x)
{
	free(x->ring);
	memset(x, 0, sizeof(*x));
}

/* ---- histograms ---- */

void xpu_win_hist_init(struct xpu_win_hist *h, uint32_t window, uint32_t buckets)
{
	memset(h, 0, sizeof(*h));
	h->window = window ? window : 1;
	h->nb = buckets;
}

static void sparse_free(struct xpu_win_sparse *s)
{
	free(s->b);
	free(s->c);
	*s = (struct xpu_win_sparse){ 0 };
}

/* Frees what a histogram in use holds (dense arrays, the window's rings),
 * leaving its parked buckets and its counts. */
static void free_dense(struct xpu_win_hist *h)
{
	for (uint32_t i = 0; h->ring && i < h->window; i++)
		sparse_free(&h->ring[i]);
	free(h->ring);
	free(h->max.ring);
	free(h->open);
	free(h->win);
	free(h->all);
	h->ring = NULL;
	h->max.ring = h->open = h->win = h->all = NULL;
}

void xpu_win_hist_free(struct xpu_win_hist *h)
{
	free_dense(h);
	sparse_free(&h->parked);
	memset(h, 0, sizeof(*h));
}

/* The nonzero buckets of dense counts d[0..nb), ascending, into *out (empty,
 * with no arrays, when there are none).  Returns 0 or -ENOMEM. */
static int sparse_of(const uint64_t *d, uint32_t nb, struct xpu_win_sparse *out)
{
	uint32_t used = 0;
	for (uint32_t b = 0; b < nb; b++)
		used += d[b] != 0;
	*out = (struct xpu_win_sparse){ 0 };
	if (!used)
		return 0;
	out->b = malloc(used * sizeof(*out->b));
	out->c = malloc(used * sizeof(*out->c));
	if (!out->b || !out->c) {
		sparse_free(out);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < nb; b++)
		if (d[b]) {
			out->b[out->n] = (uint16_t)b;
			out->c[out->n++] = d[b];
		}
	return 0;
}

/* Keeps only the since-start buckets of a histogram with nothing in the
 * window; the counts and maxima stay as they are. */
static void park(struct xpu_win_hist *h)
{
	struct xpu_win_sparse parked;
	if (sparse_of(h->all, h->nb, &parked) < 0)	/* out of memory: it stays dense */
		return;
	free_dense(h);
	h->parked = parked;
}

int xpu_win_hist_add(struct xpu_win_hist *h, uint32_t b, uint64_t value, uint64_t n)
{
	if (!h->open) {
		h->open = calloc(h->nb, sizeof(uint64_t));
		h->win = calloc(h->nb, sizeof(uint64_t));
		h->all = calloc(h->nb, sizeof(uint64_t));
		h->ring = calloc(h->window, sizeof(*h->ring));
		if (!h->open || !h->win || !h->all || !h->ring || ring_init(&h->max.ring, h->window) < 0) {
			free_dense(h);	/* what was parked stays */
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < h->parked.n; i++)	/* back in use */
			h->all[h->parked.b[i]] = h->parked.c[i];
		sparse_free(&h->parked);
	}
	h->open[b] += n;
	h->n_open += n;
	xpu_win_max_add(&h->max, value);
	return 0;
}

void xpu_win_hist_close(struct xpu_win_hist *h, uint32_t slot, int full)
{
	struct xpu_win_sparse *r;

	if (!h->open)
		return;
	r = &h->ring[slot];
	if (full)
		for (uint32_t i = 0; i < r->n; i++) {
			h->win[r->b[i]] -= r->c[i];
			h->n_win -= r->c[i];
		}
	sparse_free(r);
	sparse_of(h->open, h->nb, r);
	for (uint32_t i = 0; i < r->n; i++) {
		h->win[r->b[i]] += r->c[i];
		h->n_win += r->c[i];
	}
	for (uint32_t b = 0; b < h->nb; b++) {
		h->all[b] += h->open[b];
		h->n_all += h->open[b];
		h->open[b] = 0;
	}
	xpu_win_max_close(&h->max, slot);
	h->n_open = 0;
	if (!h->n_win)
		park(h);
}

static uint64_t quantile_want(uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * (double)n + 0.999999);
	return want ? want : 1;
}

int xpu_win_hist_quantile(const struct xpu_win_hist *h, enum xpu_window w, double q, uint32_t *b)
{
	const uint64_t *d = w == XPU_WIN_ALL ? h->all : h->win;
	uint64_t n = w == XPU_WIN_ALL ? h->n_all : h->n_win;
	uint64_t want = quantile_want(n, q), seen = 0;

	if (!n)
		return 0;
	*b = h->nb;
	if (!d && w == XPU_WIN_ALL && h->parked.n) {
		for (uint32_t i = 0; i < h->parked.n && *b == h->nb; i++)
			if ((seen += h->parked.c[i]) >= want)
				*b = h->parked.b[i];
		return 1;
	}
	if (!d)
		return 0;
	for (uint32_t i = 0; i < h->nb && *b == h->nb; i++)
		if ((seen += d[i]) >= want)
			*b = i;
	return 1;
}
