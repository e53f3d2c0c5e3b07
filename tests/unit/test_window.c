/* SPDX-License-Identifier: GPL-2.0-only */
/* What the models keep per tick (core/util/window.c): counts over the
 * window and since the start, maxima, and histograms that park their
 * since-start buckets once idle. */
#include "check.h"

#include "ticks.h"
#include "window.h"

#define W 3	/* ticks in the window */

/* Closes a tick of 1 s on t and c. */
static void close_count(struct xpu_ticks *t, struct xpu_win_count *c)
{
	int full;
	uint32_t slot = xpu_ticks_close(t, 1000000000ULL, &full);
	xpu_win_count_close(c, slot, full);
}

TEST(a_count_is_seen_only_once_its_tick_closes)
{
	struct xpu_ticks t;
	struct xpu_win_count c;
	REQUIRE(xpu_ticks_init(&t, W) == 0 && xpu_win_count_init(&c, W) == 0);
	c.open += 5;
	CHECK_INT(xpu_win_count_get(&c, XPU_WIN_RECENT), ==, 0);
	CHECK_INT(xpu_win_count_get(&c, XPU_WIN_ALL), ==, 0);
	close_count(&t, &c);
	CHECK_INT(c.open, ==, 0);
	CHECK_INT(c.last, ==, 5);
	CHECK_INT(xpu_win_count_get(&c, XPU_WIN_RECENT), ==, 5);
	CHECK_INT(xpu_win_count_get(&c, XPU_WIN_ALL), ==, 5);
	xpu_win_count_free(&c);
	xpu_ticks_free(&t);
}

TEST(a_tick_leaves_the_window_after_window_ticks_but_stays_in_the_total)
{
	struct xpu_ticks t;
	struct xpu_win_count c;
	REQUIRE(xpu_ticks_init(&t, W) == 0 && xpu_win_count_init(&c, W) == 0);
	static const uint64_t per_tick[] = { 1, 10, 100, 1000, 0, 0 };
	static const uint64_t recent[] = { 1, 11, 111, 1110, 1100, 1000 };
	for (int i = 0; i < 6; i++) {
		c.open += per_tick[i];
		close_count(&t, &c);
		CHECK_INT(c.recent, ==, recent[i]);
		CHECK_INT(c.last, ==, per_tick[i]);
	}
	CHECK_INT(c.total, ==, 1111);
	xpu_win_count_free(&c);
	xpu_ticks_free(&t);
}

TEST(a_count_without_a_ring_keeps_last_and_total_only)
{
	struct xpu_ticks t;
	struct xpu_win_count c = { 0 };
	REQUIRE(xpu_ticks_init(&t, W) == 0);
	for (int i = 0; i < 5; i++) {
		c.open += 2;
		close_count(&t, &c);
	}
	CHECK_INT(c.last, ==, 2);
	CHECK_INT(c.total, ==, 10);
	CHECK_INT(c.recent, ==, 0);
	xpu_ticks_free(&t);
}

TEST(span_and_rate_follow_the_closed_ticks)
{
	struct xpu_ticks t;
	REQUIRE(xpu_ticks_init(&t, 2) == 0);
	int full;
	xpu_ticks_close(&t, 1000000000ULL, &full);
	xpu_ticks_close(&t, 2000000000ULL, &full);
	xpu_ticks_close(&t, 3000000000ULL, &full);
	CHECK_INT(xpu_win_span(&t, XPU_WIN_RECENT), ==, 5000000000LL);
	CHECK_INT(xpu_win_span(&t, XPU_WIN_ALL), ==, 6000000000LL);
	CHECK(xpu_win_per_s(10, 2000000000ULL) == 5.0);
	CHECK(xpu_win_per_s(10, 0) == 0.0);
	xpu_ticks_free(&t);
}

TEST(a_maximum_is_the_largest_of_the_window_s_ticks_or_of_all)
{
	struct xpu_ticks t;
	struct xpu_win_max x;
	REQUIRE(xpu_ticks_init(&t, W) == 0 && xpu_win_max_init(&x, W) == 0);
	static const uint64_t v[] = { 50, 7, 9, 3, 8 };
	int full;
	for (int i = 0; i < 5; i++) {
		xpu_win_max_add(&x, v[i]);
		xpu_win_max_add(&x, 1);
		xpu_win_max_close(&x, xpu_ticks_close(&t, 1, &full));
	}
	CHECK_INT(xpu_win_max_get(&x, XPU_WIN_RECENT, W), ==, 9);	/* 9, 3, 8 */
	CHECK_INT(xpu_win_max_get(&x, XPU_WIN_ALL, W), ==, 50);
	xpu_win_max_free(&x);
	xpu_ticks_free(&t);
}

/* The bucket of quantile q, or -1 when the window holds nothing. */
static long quantile(const struct xpu_win_hist *h, enum xpu_window w, double q)
{
	uint32_t b;
	return xpu_win_hist_quantile(h, w, q, &b) ? (long)b : -1;
}

static void close_hist(struct xpu_ticks *t, struct xpu_win_hist *h)
{
	int full;
	uint32_t slot = xpu_ticks_close(t, 1, &full);
	xpu_win_hist_close(h, slot, full);
}

TEST(a_histogram_s_quantiles_are_buckets_of_its_window_or_of_all)
{
	struct xpu_ticks t;
	struct xpu_win_hist h;
	REQUIRE(xpu_ticks_init(&t, W) == 0);
	xpu_win_hist_init(&h, W, 16);
	CHECK_INT(quantile(&h, XPU_WIN_ALL, 0.5), ==, -1);
	REQUIRE(xpu_win_hist_add(&h, 12, 1200, 90) == 0);
	REQUIRE(xpu_win_hist_add(&h, 15, 1500, 10) == 0);
	CHECK_INT(quantile(&h, XPU_WIN_RECENT, 0.5), ==, -1);	/* still open */
	close_hist(&t, &h);
	REQUIRE(xpu_win_hist_add(&h, 2, 200, 300) == 0);
	close_hist(&t, &h);
	CHECK_INT(quantile(&h, XPU_WIN_RECENT, 0.5), ==, 2);
	CHECK_INT(quantile(&h, XPU_WIN_RECENT, 0.99), ==, 15);
	CHECK_INT(h.n_win, ==, 400);
	CHECK_INT(xpu_win_max_get(&h.max, XPU_WIN_RECENT, W), ==, 1500);
	close_hist(&t, &h);
	close_hist(&t, &h);	/* the first tick leaves the window */
	CHECK_INT(h.n_win, ==, 300);
	CHECK_INT(quantile(&h, XPU_WIN_RECENT, 0.99), ==, 2);
	CHECK_INT(quantile(&h, XPU_WIN_ALL, 0.99), ==, 15);
	CHECK_INT(h.n_all, ==, 400);
	xpu_win_hist_free(&h);
	xpu_ticks_free(&t);
}

TEST(an_idle_histogram_parks_its_since_start_buckets_and_comes_back_whole)
{
	struct xpu_ticks t;
	struct xpu_win_hist h;
	REQUIRE(xpu_ticks_init(&t, W) == 0);
	xpu_win_hist_init(&h, W, 16);
	REQUIRE(xpu_win_hist_add(&h, 4, 40, 3) == 0);
	REQUIRE(xpu_win_hist_add(&h, 9, 90, 1) == 0);
	for (int i = 0; i < W + 1; i++)
		close_hist(&t, &h);
	CHECK(h.open == NULL && h.win == NULL && h.all == NULL && h.ring == NULL && h.max.ring == NULL);
	CHECK_INT(h.parked.n, ==, 2);
	CHECK_INT(quantile(&h, XPU_WIN_RECENT, 0.5), ==, -1);
	CHECK_INT(quantile(&h, XPU_WIN_ALL, 0.5), ==, 4);
	CHECK_INT(quantile(&h, XPU_WIN_ALL, 0.99), ==, 9);
	CHECK_INT(xpu_win_max_get(&h.max, XPU_WIN_ALL, W), ==, 90);
	REQUIRE(xpu_win_hist_add(&h, 1, 10, 1) == 0);
	CHECK(h.all != NULL && h.parked.n == 0);
	CHECK_INT(h.all[4], ==, 3);
	CHECK_INT(h.all[9], ==, 1);
	close_hist(&t, &h);
	CHECK_INT(h.n_all, ==, 5);
	CHECK_INT(quantile(&h, XPU_WIN_ALL, 0.2), ==, 1);
	xpu_win_hist_free(&h);
	xpu_ticks_free(&t);
}
