/* SPDX-License-Identifier: GPL-2.0-only */
/* The pauses in tracing (inject/gaps.c): a graph kernel launched before
 * tracing stopped whose record ends after it stopped carries a later
 * flush's time as its end (what CUPTI did on the H200) and is told apart;
 * records that ended before the pause, launches made after it, and
 * launches older than the pauses kept are judged as they should be. */
#include "check.h"

#include "inject.h"

#define MS 1000000ULL

/* A pause after launch last_corr whose kernel activity went off at now at
 * once (the library's pauses before activity was kept on after a slice). */
static void gaps_off(struct xpu_gaps *g, uint64_t now, uint32_t last_corr)
{
	xpu_gaps_pause(g, last_corr);
	xpu_gaps_activity_off(g, now);
}

TEST(nothing_is_cut_before_the_first_pause)
{
	struct xpu_gaps g = { 0 };
	CHECK_INT(xpu_gaps_cut(&g, 5, 900 * MS), ==, 0);
}

TEST(a_graph_launch_in_flight_when_tracing_stopped_is_cut)
{
	struct xpu_gaps g = { 0 };
	/* slice 1: launches 1..100, off at 10 ms */
	gaps_off(&g, 10 * MS, 100);
	/* launch 100 started at 9.9 ms; CUPTI gave its kernels the end of the
	 * flush 20 ms later */
	CHECK_INT(xpu_gaps_cut(&g, 100, 30 * MS), ==, 1);
	CHECK_INT(xpu_gaps_cut(&g, 40, 10 * MS + 1), ==, 1);
	/* launches of the first slice that ended before the switch */
	CHECK_INT(xpu_gaps_cut(&g, 99, 10 * MS), ==, 0);
	CHECK_INT(xpu_gaps_cut(&g, 1, 2 * MS), ==, 0);
	/* launches made after the pause, whatever their ends */
	CHECK_INT(xpu_gaps_cut(&g, 101, 305 * MS), ==, 0);
	CHECK_INT(xpu_gaps_cut(&g, 250, 900 * MS), ==, 0);
}

TEST(each_launch_is_judged_by_the_first_pause_after_it)
{
	struct xpu_gaps g = { 0 };
	gaps_off(&g, 10 * MS, 100);
	gaps_off(&g, 310 * MS, 180);
	/* launch 150 (second slice) ending at 300 ms: before the second pause,
	 * though long after the first */
	CHECK_INT(xpu_gaps_cut(&g, 150, 300 * MS), ==, 0);
	CHECK_INT(xpu_gaps_cut(&g, 150, 311 * MS), ==, 1);
	CHECK_INT(xpu_gaps_cut(&g, 180, 311 * MS), ==, 1);
	CHECK_INT(xpu_gaps_cut(&g, 181, 311 * MS), ==, 0);
}

TEST(a_launch_older_than_every_pause_kept_is_judged_by_the_oldest)
{
	struct xpu_gaps g = { 0 };
	for (uint32_t i = 0; i < 3 * XPU_GAPS; i++)
		gaps_off(&g, (1000 * i + 10) * MS, 100 * (i + 1));
	/* launch 1 is older than the 16 pauses kept: the oldest kept began at
	 * 32.01 s */
	CHECK_INT(xpu_gaps_cut(&g, 1, 32010 * MS), ==, 0);
	CHECK_INT(xpu_gaps_cut(&g, 1, 32011 * MS), ==, 1);
}

TEST(correlation_ids_are_compared_across_their_wrap)
{
	struct xpu_gaps g = { 0 };
	gaps_off(&g, 10 * MS, 5);	/* the ids wrapped: 5 comes after 0xfffffff0 */
	CHECK_INT(xpu_gaps_cut(&g, 0xfffffff0u, 11 * MS), ==, 1);
	CHECK_INT(xpu_gaps_cut(&g, 6, 11 * MS), ==, 0);
}

TEST(a_new_monitor_starts_with_no_pauses)
{
	struct xpu_gaps g = { 0 };
	gaps_off(&g, 10 * MS, 100);
	xpu_gaps_reset(&g);
	CHECK_INT(xpu_gaps_cut(&g, 100, 301 * MS), ==, 0);
}

/* A slice's kernels are awaited with activity still on: launches made then
 * (after the slice's last, before the next slice's first) are left out. */
TEST(launches_made_in_a_pause_are_outside_whatever_activity_recorded)
{
	struct xpu_gaps g = { 0 };
	CHECK_INT(xpu_gaps_outside(&g, 50), ==, 0);
	xpu_gaps_pause(&g, 100);	/* slice 1: launches up to 100 */
	CHECK_INT(xpu_gaps_outside(&g, 100), ==, 0);
	CHECK_INT(xpu_gaps_outside(&g, 101), ==, 1);
	CHECK_INT(xpu_gaps_outside(&g, 5000), ==, 1);	/* the pause is still open */
	/* activity still on: nothing of slice 1 is cut yet, however late */
	CHECK_INT(xpu_gaps_cut(&g, 100, 900 * MS), ==, 0);
	xpu_gaps_activity_off(&g, 30 * MS);
	CHECK_INT(xpu_gaps_cut(&g, 100, 31 * MS), ==, 1);
	CHECK_INT(xpu_gaps_cut(&g, 100, 29 * MS), ==, 0);
	xpu_gaps_resume(&g, 180);	/* slice 2 from launch 181 */
	CHECK_INT(xpu_gaps_outside(&g, 180), ==, 1);
	CHECK_INT(xpu_gaps_outside(&g, 181), ==, 0);
	CHECK_INT(xpu_gaps_outside(&g, 99), ==, 0);
}

TEST(a_pause_with_no_launch_seen_holds_none)
{
	struct xpu_gaps g = { 0 };
	xpu_gaps_pause(&g, 100);
	xpu_gaps_resume(&g, 100);	/* detached meanwhile: no launch seen */
	CHECK_INT(xpu_gaps_outside(&g, 101), ==, 0);
	CHECK_INT(xpu_gaps_outside(&g, 100), ==, 0);
}

/* A slice that begins before the last one's kernels have run keeps activity
 * on: a graph kernel of the first is judged by the next time it went off. */
TEST(a_graph_kernel_is_cut_only_where_activity_went_off)
{
	struct xpu_gaps g = { 0 };
	xpu_gaps_pause(&g, 100);
	xpu_gaps_resume(&g, 150);
	xpu_gaps_pause(&g, 200);
	xpu_gaps_activity_off(&g, 600 * MS);
	CHECK_INT(xpu_gaps_cut(&g, 90, 400 * MS), ==, 0);
	CHECK_INT(xpu_gaps_cut(&g, 90, 601 * MS), ==, 1);
	CHECK_INT(xpu_gaps_outside(&g, 120), ==, 1);
	CHECK_INT(xpu_gaps_outside(&g, 160), ==, 0);
	CHECK_INT(xpu_gaps_outside(&g, 201), ==, 1);
}
