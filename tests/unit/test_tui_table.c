/* SPDX-License-Identifier: GPL-2.0-only */
/* The table widget's geometry: column widths and scrolling. */
#include "check.h"

#include "model_cpu.h"
#include "table_view.h"

static const struct xpu_col cols[] = {
	{ "PID", "pid", XPU_CELL_INT, 7, 0 },
	{ "CPU%", "cpu", XPU_CELL_PCT, 6, 0 },
	{ "HIDDEN", "h", XPU_CELL_INT, 9, XPU_COL_HIDDEN },
	{ "COMMAND", "comm", XPU_CELL_STR, 12, XPU_COL_LEFT | XPU_COL_FLEX },
	{ "SAMPLES", "samples", XPU_CELL_INT, 8, 0 },
};

TEST(the_flex_column_takes_the_rest)
{
	struct xpu_table t;
	int w[5];
	xpu_table_init(&t, cols, 5);
	CHECK_INT(xpu_tui_table_widths(&t, 100, w), ==, 100);
	CHECK_INT(w[0], ==, 7);
	CHECK_INT(w[1], ==, 6);
	CHECK_INT(w[2], ==, 0);
	CHECK_INT(w[4], ==, 8);
	CHECK_INT(w[3], ==, 100 - 7 - 6 - 8 - 3);
}

TEST(headings_get_room_for_the_sort_marker)
{
	static const struct xpu_col c[] = { { "SAMPLES", "s", XPU_CELL_INT, 3, 0 } };
	struct xpu_table t;
	int w[1];
	xpu_table_init(&t, c, 1);
	xpu_tui_table_widths(&t, 80, w);
	CHECK_INT(w[0], ==, 8);
}

TEST(narrow_screens_drop_columns_from_the_right_but_keep_the_flex_one)
{
	struct xpu_table t;
	int w[5];
	xpu_table_init(&t, cols, 5);
	CHECK_INT(xpu_tui_table_widths(&t, 30, w), <=, 30);
	CHECK_INT(w[4], ==, 0);
	CHECK_INT(w[3], >=, 12);
	CHECK_INT(w[0], ==, 7);
	for (int avail = 1; avail <= 120; avail++) {
		int used = xpu_tui_table_widths(&t, avail, w), sum = 0, n = 0;
		for (int i = 0; i < 5; i++) {
			CHECK_INT(w[i], >=, 0);
			sum += w[i];
			n += w[i] > 0;
		}
		CHECK_INT(used, <=, avail);
		CHECK_INT(sum + (n ? n - 1 : 0), ==, used);
	}
}

TEST(narrow_screens_drop_text_columns_before_numbers_and_keep_the_sort_column)
{
	/* The CPU view's columns at 40 columns (issue 19: USER stayed, %CPU went). */
	static const struct xpu_col c[] = {
		{ "PID", "pid", XPU_CELL_INT, 7, 0 },
		{ "USER", "user", XPU_CELL_STR, 9, XPU_COL_LEFT },
		{ "%CPU", "cpu_pct", XPU_CELL_PCT, 6, 0 },
		{ "AVG%", "avg_pct", XPU_CELL_PCT, 6, 0 },
		{ "SAMPLES", "samples", XPU_CELL_INT, 8, 0 },
		{ "COMMAND", "comm", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_FLEX },
	};
	struct xpu_table t;
	int w[6];
	xpu_table_init(&t, c, 6);
	t.sort_col = 2;
	CHECK_INT(xpu_tui_table_widths(&t, 38, w), <=, 38);
	CHECK_INT(w[1], ==, 0);		/* USER first */
	CHECK_INT(w[2], >, 0);		/* the sort column stays */
	CHECK_INT(w[0], >, 0);
	CHECK_INT(w[5], >, 0);
	t.sort_col = 4;			/* sorted by SAMPLES: it stays, AVG% goes */
	xpu_tui_table_widths(&t, 38, w);
	CHECK_INT(w[4], >, 0);
	CHECK_INT(w[1], ==, 0);
	xpu_table_free(&t);
}

TEST(at_40_columns_the_cpu_table_keeps_res_and_drops_user_and_state)
{
	struct xpu_table t;
	int w[XPU_CPU_NCOLS];
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	t.sort_col = XPU_CPU_COL_PCT;
	CHECK_INT(xpu_tui_table_widths(&t, 40, w), <=, 40);
	CHECK_INT(w[XPU_CPU_COL_USER], ==, 0);
	CHECK_INT(w[XPU_CPU_COL_STATE], ==, 0);
	CHECK_INT(w[XPU_CPU_COL_PID], >, 0);
	CHECK_INT(w[XPU_CPU_COL_RES], >, 0);
	CHECK_INT(w[XPU_CPU_COL_PCT], >, 0);
	CHECK_INT(w[XPU_CPU_COL_COMM], >, 0);
	t.sort_col = XPU_CPU_COL_TIME;	/* sorted by TIME+: it stays */
	xpu_tui_table_widths(&t, 40, w);
	CHECK_INT(w[XPU_CPU_COL_TIME], >, 0);
	CHECK_INT(xpu_tui_table_widths(&t, 80, w), <=, 80);	/* all but the spare ones at 80 */
	for (int i = 0; i < XPU_CPU_NCOLS; i++)
		if (xpu_col_shown(&xpu_cpu_cols[i]) && !(xpu_cpu_cols[i].flags & XPU_COL_SPARE))
			CHECK_INT(w[i], >, 0);
	CHECK_INT(xpu_tui_table_widths(&t, 120, w), <=, 120);	/* and htop's NI, VIRT, %MEM at 120 */
	for (int i = 0; i < XPU_CPU_NCOLS; i++)
		if (xpu_col_shown(&xpu_cpu_cols[i]))
			CHECK_INT(w[i], >, 0);
	xpu_table_free(&t);
}

TEST(scrolling_keeps_the_selection_visible)
{
	for (int n = 0; n < 40; n++)
		for (int vis = 1; vis < 15; vis++)
			for (int top = 0; top < 40; top++)
				for (int sel = 0; sel < n; sel++) {
					int t = xpu_tui_table_scroll(top, sel, n, vis);
					CHECK(t <= sel && sel < t + vis);
					CHECK(t >= 0);
					if (n >= vis)
						CHECK(t + vis <= n);	/* no blank rows below the last */
				}
}

TEST(scrolling_moves_as_little_as_possible)
{
	CHECK_INT(xpu_tui_table_scroll(5, 7, 100, 10), ==, 5);
	CHECK_INT(xpu_tui_table_scroll(5, 15, 100, 10), ==, 6);
	CHECK_INT(xpu_tui_table_scroll(5, 2, 100, 10), ==, 2);
}

TEST(the_selection_falls_back_to_the_first_row)
{
	static const struct xpu_col c[] = { { "PID", "pid", XPU_CELL_INT, 7, 0 } };
	struct xpu_table t;
	xpu_table_init(&t, c, 1);
	CHECK_INT(xpu_tui_table_selected_row(&t, 0), ==, -1);
	xpu_table_add(&t, 10);
	xpu_table_add(&t, 20);
	CHECK_INT(xpu_tui_table_selected_row(&t, 0), ==, 0);
	CHECK_INT(xpu_tui_table_selected_row(&t, 20), ==, 1);
	CHECK_INT(xpu_tui_table_selected_row(&t, 99), ==, 0);
	xpu_table_free(&t);
}
