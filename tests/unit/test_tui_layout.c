/* SPDX-License-Identifier: GPL-2.0-only */
/* The screen layout: every rectangle fits, none overlaps, at every size; and
 * the room the GPU view asks for above its table. */
#include "check.h"

#include "layout.h"
#include "view_gpu.h"

#define MAX_ROWS 80
#define MAX_COLS 250

static const struct xpu_layout_opts combos[] = {
	{ .table = 1, .flame = 1, .text = 1 }, { .table = 1, .flame = 0, .text = 1 },
	{ .table = 1, .flame = 1, .text = 0 }, { .table = 1, .flame = 0, .text = 0 },
	{ .table = 1, .flame = 1, .text = 3 }, { .table = 0, .flame = 0, .text = 0 },
	{ .table = 0, .flame = 1, .text = 1 }, { .table = 0, .flame = 0, .text = 5 },
	{ .table = 1, .flame = 1, .text = 1, .help = 1 },
	{ .table = 0, .flame = 0, .text = 0, .help = 1 },
	{ .table = 1, .flame = 1, .text = 9, .alerts = 1 }, { .table = 0, .flame = 0, .text = 0, .alerts = 1 },
	{ .table = 1, .flame = 1, .text = 1, .help = 1, .alerts = 1 },
	{ .table = 1, .flame = 1, .text = 2, .meters = 4 }, { .table = 1, .flame = 0, .text = 1, .meters = 64 },
	{ .table = 0, .flame = 0, .text = 0, .meters = 3, .alerts = 1 },
	{ .table = 1, .flame = 1, .text = 7, .text_min = 5, .table_want = 4, .flame_want = 11 },
	{ .table = 1, .flame = 1, .text = 20, .text_min = 5, .table_want = 30, .flame_want = 40, .alerts = 1 },
	{ .table = 1, .flame = 1, .text = 7, .text_min = 5, .table_want = 2, .flame_want = 3 },
	{ .table = 1, .flame = 1, .text = 2, .side = 40 }, { .table = 1, .flame = 1, .text = 2, .side = 40, .side_only = 1 },
	{ .table = 1, .flame = 1, .text = 1, .side = 300, .meters = 2, .alerts = 1 },
};
#define NCOMBOS (int)(sizeof(combos) / sizeof(combos[0]))

static int shown(const struct xpu_rect *r)
{
	return r->h > 0 && r->w > 0;
}

static int overlap(const struct xpu_rect *a, const struct xpu_rect *b)
{
	return a->y < b->y + b->h && b->y < a->y + a->h && a->x < b->x + b->w && b->x < a->x + a->w;
}

/* Checks one layout; prints and returns 1 on the first problem. */
static int bad_layout(const struct xpu_layout *l, int rows, int cols, int combo)
{
	const struct xpu_rect *r[XPU_LAYOUT_NRECTS];
	xpu_layout_rects(l, r);
	for (int i = 0; i < XPU_LAYOUT_NRECTS; i++) {
		if (!shown(r[i])) {
			if (r[i]->h || r[i]->w || r[i]->y || r[i]->x)
				goto bad;
			continue;
		}
		if (r[i]->y < 0 || r[i]->x < 0 || r[i]->y + r[i]->h > rows || r[i]->x + r[i]->w > cols)
			goto bad;
		for (int j = 0; j < i; j++)
			if (shown(r[j]) && overlap(r[i], r[j]))
				goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "  bad layout at %dx%d, options #%d\n", cols, rows, combo);
	return 1;
}

TEST(every_size_fits_the_screen_without_overlap)
{
	struct xpu_layout l;
	int bad = 0;
	for (int rows = 1; rows <= MAX_ROWS && !bad; rows++)
		for (int cols = 1; cols <= MAX_COLS && !bad; cols++)
			for (int c = 0; c < NCOMBOS && !bad; c++) {
				xpu_layout_compute(&l, rows, cols, &combos[c]);
				bad = bad_layout(&l, rows, cols, c);
			}
	CHECK(!bad);
}

TEST(every_row_is_given_to_something)
{
	struct xpu_layout l;
	int bad = 0;
	for (int rows = XPU_LAYOUT_MIN_ROWS; rows <= MAX_ROWS && !bad; rows++)
		for (int c = 0; c < NCOMBOS && !bad; c++) {
			const struct xpu_rect *r[XPU_LAYOUT_NRECTS];
			int sum = 0;
			xpu_layout_compute(&l, rows, 80, &combos[c]);
			xpu_layout_rects(&l, r);
			for (int i = 0; i < XPU_LAYOUT_NRECTS; i++)
				sum += r[i]->x == 0 ? r[i]->h : 0;	/* a side pane shares its rows */
			if (sum != rows) {
				fprintf(stderr, "  %d of %d rows used at options #%d\n", sum, rows, c);
				bad = 1;
			}
		}
	CHECK(!bad);
}

TEST(below_the_minimum_only_the_too_small_notice_is_shown)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, XPU_LAYOUT_MIN_ROWS - 1, 200, &combos[0]);
	CHECK(l.too_small);
	CHECK_INT(l.small.h, ==, XPU_LAYOUT_MIN_ROWS - 1);
	CHECK_INT(l.small.w, ==, 200);
	CHECK(!shown(&l.header) && !shown(&l.table) && !shown(&l.status));
	xpu_layout_compute(&l, 50, XPU_LAYOUT_MIN_COLS - 1, &combos[0]);
	CHECK(l.too_small);
	xpu_layout_compute(&l, XPU_LAYOUT_MIN_ROWS, XPU_LAYOUT_MIN_COLS, &combos[0]);
	CHECK(!l.too_small);
	CHECK(shown(&l.header) && shown(&l.tabs) && shown(&l.table) && shown(&l.status));
}

TEST(a_standard_terminal_shows_table_flame_hints_and_status)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, 24, 80, &combos[0]);
	CHECK_INT(l.header.y, ==, 0);
	CHECK_INT(l.tabs.y, ==, 1);
	CHECK_INT(l.text.h, ==, 1);
	CHECK_INT(l.table.h, >=, 1 + XPU_LAYOUT_TABLE_MIN);
	CHECK_INT(l.flame.h, >=, 1 + XPU_LAYOUT_FLAME_MIN);
	CHECK_INT(l.table.y, <, l.flame.y);
	CHECK_INT(l.hints.y, ==, 22);
	CHECK_INT(l.status.y, ==, 23);
	CHECK_INT(l.table.w, ==, 80);
}

/* 1's meters go under the header, above the tabs, and never take the
 * table's minimum. */
TEST(cpu_meters_sit_under_the_header_and_leave_the_table_its_minimum)
{
	struct xpu_layout l;
	struct xpu_layout_opts o = { .table = 1, .flame = 1, .text = 1, .meters = 2 };
	xpu_layout_compute(&l, 24, 80, &o);
	CHECK_INT(l.meters.y, ==, 1);
	CHECK_INT(l.meters.h, ==, 2);
	CHECK_INT(l.tabs.y, ==, 3);
	o.meters = 100;
	xpu_layout_compute(&l, 24, 80, &o);
	CHECK_INT(l.table.h, >=, 1 + XPU_LAYOUT_TABLE_MIN);
	CHECK_INT(l.meters.h, ==, 24 - 3 - 1 - 1 - XPU_LAYOUT_TABLE_MIN);
}

TEST(small_terminals_drop_the_flame_before_the_hints)
{
	struct xpu_layout l;
	int flame_from = 0, hints_from = 0;
	for (int rows = MAX_ROWS; rows >= 1; rows--) {
		xpu_layout_compute(&l, rows, 100, &combos[0]);
		if (shown(&l.flame))
			flame_from = rows;
		if (shown(&l.hints))
			hints_from = rows;
		if (shown(&l.flame))
			CHECK(shown(&l.hints));
	}
	CHECK_INT(flame_from, >, hints_from);
	CHECK_INT(hints_from, ==, XPU_LAYOUT_HINT_ROWS);
}

TEST(the_flame_pane_never_squeezes_the_table_below_its_minimum)
{
	struct xpu_layout l;
	for (int rows = 1; rows <= MAX_ROWS; rows++) {
		xpu_layout_compute(&l, rows, 100, &combos[0]);
		if (!shown(&l.flame))
			continue;
		CHECK_INT(l.table.h, >=, 1 + XPU_LAYOUT_TABLE_MIN);
		CHECK_INT(l.flame.h, >=, 1 + XPU_LAYOUT_FLAME_MIN);
	}
}

/* The NPU view at 80x24 (issue 27): five lines of text, the calls table's
 * three rows, then the driver functions and alert log (flame_want). */
TEST(panes_with_wants_take_rows_in_order_of_need)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, 24, 80, &combos[16]);
	CHECK_INT(l.text.h, ==, 5);
	CHECK_INT(l.table.h, ==, 4);
	CHECK_INT(l.flame.h, ==, 20 - 5 - 4);
	/* rows to spare go to the text up to what it wants, then to the flame */
	xpu_layout_compute(&l, 48, 160, &combos[16]);
	CHECK_INT(l.text.h, ==, 7);
	CHECK_INT(l.table.h, ==, 4);
	CHECK_INT(l.flame.h, ==, 44 - 7 - 4);
	/* short of rows, the flame's want comes before the table's */
	xpu_layout_compute(&l, 30, 80, &combos[17]);
	CHECK_INT(l.text.h, ==, 5);
	CHECK_INT(l.table.h, ==, 1 + XPU_LAYOUT_TABLE_MIN);
	CHECK_INT(l.flame.h, ==, 30 - 5 - 5 - 5);
	/* a table wanting less than the minimum gets what it wants */
	xpu_layout_compute(&l, 24, 80, &combos[18]);
	CHECK_INT(l.table.h, ==, 2);
	CHECK_INT(l.text.h, ==, 7);
	CHECK_INT(l.flame.h, ==, 20 - 7 - 2);
}

/* The CPU view's hottest functions (o) at 80x24: right of the flamegraph,
 * on its rows; in its place without it or where the flamegraph would be
 * too narrow beside it. */
TEST(the_side_pane_sits_right_of_the_flame_pane_or_in_its_place)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, 24, 80, &combos[19]);
	CHECK_INT(l.side.w, ==, 40);
	CHECK_INT(l.flame.w, ==, 40);
	CHECK_INT(l.side.x, ==, 40);
	CHECK_INT(l.side.y, ==, l.flame.y);
	CHECK_INT(l.side.h, ==, l.flame.h);
	CHECK_INT(l.side.h, >=, 1 + XPU_LAYOUT_FLAME_MIN);
	xpu_layout_compute(&l, 24, 80, &combos[20]);
	CHECK(!shown(&l.flame));
	CHECK_INT(l.side.x, ==, 0);
	CHECK_INT(l.side.w, ==, 80);
	CHECK_INT(l.side.h, >=, 1 + XPU_LAYOUT_FLAME_MIN);
	xpu_layout_compute(&l, 24, 40 + XPU_LAYOUT_FLAME_MIN_COLS - 1, &combos[19]);
	CHECK(!shown(&l.flame));
	CHECK_INT(l.side.w, ==, 40 + XPU_LAYOUT_FLAME_MIN_COLS - 1);
	/* no room for the lower pane: no side pane either */
	xpu_layout_compute(&l, 10, 80, &combos[19]);
	CHECK(!shown(&l.flame) && !shown(&l.side));
}

TEST(a_view_without_a_table_fills_its_area_with_text)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, 40, 120, &combos[5]);
	CHECK(!shown(&l.table) && !shown(&l.flame));
	CHECK_INT(l.text.y, ==, 2);
	CHECK_INT(l.text.h, ==, 40 - 4);
}

TEST(help_replaces_the_view_area)
{
	struct xpu_layout l;
	xpu_layout_compute(&l, 40, 120, &combos[8]);
	CHECK(!shown(&l.table) && !shown(&l.flame) && !shown(&l.text));
	CHECK_INT(l.help.y, ==, 2);
	CHECK_INT(l.help.h, ==, 40 - 4);
	CHECK(shown(&l.header) && shown(&l.hints) && shown(&l.status));
}

TEST(the_text_area_gives_way_to_the_table)
{
	struct xpu_layout l;
	const struct xpu_layout_opts o = { .table = 1, .text = 30 };
	xpu_layout_compute(&l, 24, 80, &o);
	CHECK_INT(l.table.h, >=, 1 + XPU_LAYOUT_TABLE_MIN);
	CHECK_INT(l.text.h + l.table.h, ==, 24 - 4);
}

TEST(the_gpu_summary_makes_room_for_the_selected_kernels_full_name_up_to_three_lines)
{
	static char longest[3001];
	struct xpu_snapshot s;
	memset(&s, 0, sizeof(s));
	s.gpu.ndevices = 1;
	s.gpu.nprocs = 1;
	int base = 1 + 1 + 1 + 1;	/* status, device, process, stack coverage */
	CHECK_INT(xpu_view_gpu_text_rows(&s, 120), ==, base);
	s.gpu.selected = "matmul_kernel(float*, float*, float*, int)";
	CHECK_INT(xpu_view_gpu_text_rows(&s, 120), ==, base + 1);
	s.gpu.selected = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, "
			 "std::array<char*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)";
	CHECK_INT(xpu_view_gpu_text_rows(&s, 120), ==, base + 2);
	CHECK_INT(xpu_view_gpu_text_rows(&s, 200), ==, base + 1);
	CHECK_INT(xpu_view_gpu_text_rows(&s, 40), ==, base + 3);
	memset(longest, 'x', sizeof(longest) - 1);
	s.gpu.selected = longest;
	CHECK_INT(xpu_view_gpu_text_rows(&s, 250), ==, base + 3);
}
