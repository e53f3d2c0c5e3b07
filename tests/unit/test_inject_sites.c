/* SPDX-License-Identifier: GPL-2.0-only */
/* Call sites in the injection library: one site per distinct stack, found
 * again without a new capture, told apart even where frame pointers fail. */
#include "check.h"

#include "inject.h"

static volatile int sink;
/* Loop counts the compiler cannot see, so a loop stays one call site
 * instead of being unrolled into several. */
static volatile int three = 3, hundred = 100;

__attribute__((noinline)) static uint32_t launch_from_a(void)
{
	uint32_t s = xpu_sites_current(1, 211);
	sink++;
	return s;
}

__attribute__((noinline)) static uint32_t launch_from_b(void)
{
	uint32_t s = xpu_sites_current(1, 211);
	sink++;
	return s;
}

TEST(the_same_call_site_is_one_site)
{
	uint32_t first = 0;
	for (int i = 0; i < hundred; i++) {
		uint32_t s = launch_from_a();
		if (!first)
			first = s;
		CHECK_INT(s, ==, first);
	}
	CHECK(first != 0);
}

TEST(different_callers_are_different_sites)
{
	uint32_t a = launch_from_a(), b = launch_from_b();
	CHECK(a != 0 && b != 0);
	CHECK(a != b);
}

/* Two paths that differ only above a function without frame pointers: the
 * frame-pointer walk sees the same frames, the signature does not. */
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer"), optimize("no-optimize-sibling-calls")))

NOFP static uint32_t nofp_launch(void)
{
	volatile char pad[32];
	pad[0] = 1;
	uint32_t s = xpu_sites_current(2, 211);
	sink += pad[0];
	return s;
}

NOFP static uint32_t nofp_path_one(void)
{
	volatile long pad[4];
	pad[0] = 1;
	uint32_t s = nofp_launch();
	sink += (int)pad[0];
	return s;
}

NOFP static uint32_t nofp_path_two(void)
{
	volatile long pad[4];
	pad[0] = 2;
	uint32_t s = nofp_launch();
	sink += (int)pad[0];
	return s;
}

TEST(paths_frame_pointers_cannot_see_are_told_apart)
{
	uint32_t one = 0, two = 0;
	for (int i = 0; i < three; i++) {	/* each call below is one call site */
		uint32_t a = nofp_path_one(), b = nofp_path_two();
		CHECK(a != 0 && b != 0);
		CHECK(a != b);
		if (i) {
			CHECK_INT(a, ==, one);
			CHECK_INT(b, ==, two);
		}
		one = a;
		two = b;
	}
}

/* One loop, one call site: only the first pass may add a site. */
__attribute__((noinline)) static void launch_n_times(int n, uint64_t *counts)
{
	for (int i = 0; i < n; i++) {
		launch_from_a();
		counts[i] = xpu_sites_count();
	}
}

TEST(a_known_site_adds_no_site)
{
	uint64_t counts[3];
	launch_n_times(three, counts);
	CHECK_INT(counts[1], ==, counts[0]);
	CHECK_INT(counts[2], ==, counts[0]);
}
