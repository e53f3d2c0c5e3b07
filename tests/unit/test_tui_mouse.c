/* SPDX-License-Identifier: GPL-2.0-only */
/* Clicks and the wheel, resolved against a layout like the screen's: they
 * change the choices the way the keys do, and never draw, so they are tested
 * without a terminal. */
#include "check.h"

#include "bars.h"
#include "draw.h"
#include "keys.h"
#include "layout.h"
#include "mouse.h"
#include "tui.h"
#include "views.h"

static const struct xpu_col cols[] = {
	{ "PID", "pid", XPU_CELL_INT, 7, 0 },
	{ "CPU%", "cpu", XPU_CELL_PCT, 6, 0 },
	{ "COMMAND", "comm", XPU_CELL_STR, 10, XPU_COL_LEFT | XPU_COL_FLEX },
};

/* root 100 = a 60 (a1 30, a2 29) + b 39 + c 1 */
static struct xpu_flame_node nodes[6] = {
	{ .first_child = 1, .value = 100 },
	{ .frame = 1, .parent = 0, .first_child = 4, .next = 2, .depth = 1, .value = 60 },
	{ .frame = 2, .parent = 0, .next = 3, .depth = 1, .value = 39 },
	{ .frame = 3, .parent = 0, .depth = 1, .value = 1 },
	{ .frame = 4, .parent = 1, .next = 5, .depth = 2, .value = 30 },
	{ .frame = 5, .parent = 1, .depth = 2, .value = 29 },
};

static struct xpu_snapshot snap;
static struct xpu_viewstate vs;
static struct xpu_ui ui;
static struct xpu_layout l;

/* A 100x30 screen in the CPU view: `n` rows keyed 101, 102, ... and a flame. */
static void setup(int n)
{
	struct xpu_layout_opts o;
	xpu_table_free(&snap.cpu.rows);
	memset(&snap, 0, sizeof(snap));
	memset(&ui, 0, sizeof(ui));
	xpu_viewstate_init(&vs);
	xpu_table_init(&snap.cpu.rows, cols, 3);
	for (int i = 0; i < n; i++) {
		struct xpu_cell *c = xpu_table_add(&snap.cpu.rows, 101 + (uint64_t)i);
		c[0].i = 101 + i;
		c[1].d = 100.0 - i;
		c[2].s = "proc";
	}
	snap.cpu.rows.sort_col = 1;
	snap.cpu.flame = (struct xpu_flame){ .nodes = nodes, .n = 6, .cap = 6, .max_depth = 2,
					     .total = 100 };
	xpu_view_layout_opts(&snap, &vs, &ui, 100, &o);
	xpu_layout_compute(&l, 30, 100, &o);
}

static int click(int y, int x)
{
	return xpu_mouse_handle(&ui, &l, &snap, &vs, y, x, XPU_MOUSE_CLICK);
}

TEST(a_click_on_a_tab_switches_to_its_view)
{
	setup(3);
	REQUIRE(l.tabs.h == 1);
	/* " GPU | NPU | CPU " from the second column */
	CHECK_INT(click(l.tabs.y, 3), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_GPU);
	CHECK_INT(click(l.tabs.y, 7), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_NPU);
	CHECK_INT(click(l.tabs.y, 17), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
	CHECK_INT(click(l.tabs.y, 17), ==, XPU_REACT_NONE);	/* already there */
	CHECK_INT(click(l.tabs.y, 6), ==, XPU_REACT_NONE);	/* the separator */
	CHECK_INT(click(l.tabs.y, 0), ==, XPU_REACT_NONE);
	CHECK_INT(click(l.tabs.y, 60), ==, XPU_REACT_NONE);	/* the modes at the right */
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
}

TEST(a_tab_is_hit_exactly_where_it_is_drawn)
{
	struct xpu_rect r = { 1, 0, 1, 100 };
	int want[20];
	for (int x = 0; x < 20; x++)
		want[x] = x >= 1 && x <= 5 ? 0 : x >= 7 && x <= 11 ? 1 : x >= 13 && x <= 17 ? 2 : -1;
	for (int x = 0; x < 20; x++)
		CHECK_INT(xpu_tabs_hit(&r, x), ==, want[x]);
	struct xpu_rect narrow = { 1, 0, 1, 9 };
	CHECK_INT(xpu_tabs_hit(&narrow, 8), ==, 1);
	CHECK_INT(xpu_tabs_hit(&narrow, 9), ==, -1);	/* off the screen */
}

TEST(a_click_on_a_row_selects_it)
{
	setup(20);
	REQUIRE(l.table.h > 4);
	CHECK_INT(click(l.table.y + 3, 20), ==, XPU_REACT_REBUILD);	/* the third row */
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 103);
	CHECK_INT(click(l.table.y + 3, 20), ==, XPU_REACT_NONE);
	ui.top[XPU_VIEW_CPU] = 10;	/* scrolled: the first row shown is the eleventh */
	CHECK_INT(click(l.table.y + 1, 90), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 111);
}

TEST(a_click_below_the_last_row_selects_nothing)
{
	setup(2);
	CHECK_INT(click(l.table.y + 3, 20), ==, XPU_REACT_NONE);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 0);
}

TEST(a_click_on_a_heading_sorts_by_it_and_again_reverses)
{
	setup(3);
	/* PID takes columns 0-6, then a space, CPU% 8-13, COMMAND from 15. */
	CHECK_INT(click(l.table.y, 3), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 0);
	CHECK_INT(vs.reverse[XPU_VIEW_CPU], ==, 0);
	CHECK_INT(click(l.table.y, 50), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 2);
	CHECK_INT(click(l.table.y, 7), ==, XPU_REACT_NONE);	/* between columns */
	CHECK_INT(click(l.table.y, 10), ==, XPU_REACT_REBUILD);	/* the sort column: reverse */
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 2);
	CHECK_INT(vs.reverse[XPU_VIEW_CPU], ==, 1);
}

TEST(the_wheel_moves_the_selection_three_rows)
{
	setup(20);
	CHECK_INT(xpu_mouse_handle(&ui, &l, &snap, &vs, 0, 0, XPU_MOUSE_WHEEL_DOWN), ==,
		  XPU_REACT_REBUILD);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 104);
	xpu_mouse_handle(&ui, &l, &snap, &vs, 20, 50, XPU_MOUSE_WHEEL_DOWN);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 107);
	xpu_mouse_handle(&ui, &l, &snap, &vs, 20, 50, XPU_MOUSE_WHEEL_UP);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 104);
	xpu_mouse_handle(&ui, &l, &snap, &vs, 20, 50, XPU_MOUSE_WHEEL_UP);
	xpu_mouse_handle(&ui, &l, &snap, &vs, 20, 50, XPU_MOUSE_WHEEL_UP);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 101);
}

TEST(a_click_on_a_frame_zooms_onto_it_and_on_the_title_zooms_out)
{
	setup(3);
	REQUIRE(l.flame.h > 3);
	int y0 = l.flame.y + 1;	/* the first level, under the title */
	CHECK_INT(click(y0 + 1, 10), ==, XPU_REACT_REDRAW);	/* a: 60 of 100 columns */
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 1);
	/* Now a spans the pane under its parent: a2 is on the right half. */
	CHECK_INT(click(y0 + 2, 70), ==, XPU_REACT_REDRAW);
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 5);
	CHECK_INT(click(l.flame.y, 5), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.zoom[XPU_VIEW_CPU].n, ==, 0);
	CHECK_INT(click(y0 + 2, 80), ==, XPU_REACT_NONE);	/* nothing above b */
	CHECK_INT(ui.zoom[XPU_VIEW_GPU].n, ==, 0);
}

TEST(enter_stops_where_a_frames_own_time_outweighs_its_callees)
{
	/* root 600 = hot 550 (x 5, y 1) + cold 50: hot's own time is 544. */
	static struct xpu_flame_node n[5] = {
		{ .first_child = 1, .value = 600 },
		{ .frame = 1, .parent = 0, .first_child = 3, .next = 2, .depth = 1, .value = 550 },
		{ .frame = 2, .parent = 0, .depth = 1, .value = 50 },
		{ .frame = 3, .parent = 1, .next = 4, .depth = 2, .value = 5 },
		{ .frame = 4, .parent = 1, .depth = 2, .value = 1 },
	};
	setup(3);
	snap.cpu.flame = (struct xpu_flame){ .nodes = n, .n = 5, .cap = 5, .max_depth = 2, .total = 600 };
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, '\n'), ==, XPU_REACT_REDRAW);
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 1);
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, '\n'), ==, XPU_REACT_REDRAW);	/* says why */
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 1);
}

TEST(zoom_keys_step_out_and_in_along_the_heaviest_frame)
{
	setup(3);
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, 'z'), ==, XPU_REACT_NONE);	/* not zoomed */
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, '\n'), ==, XPU_REACT_REDRAW);
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 1);
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, KEY_ENTER), ==, XPU_REACT_REDRAW);
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 4);
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, '\n'), ==, XPU_REACT_NONE);	/* a leaf */
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, KEY_BACKSPACE), ==, XPU_REACT_REDRAW);
	CHECK_INT(xpu_tui_flame_zoom_node(&snap.cpu.flame, &ui.zoom[XPU_VIEW_CPU]), ==, 1);
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, 'z'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.zoom[XPU_VIEW_CPU].n, ==, 0);
	vs.flame = 0;	/* with the pane hidden the keys do nothing */
	CHECK_INT(xpu_keys_handle(&ui, &snap, &vs, '\n'), ==, XPU_REACT_NONE);
}

TEST(a_click_while_the_help_is_open_only_closes_it)
{
	setup(3);
	ui.help = 1;
	CHECK_INT(click(l.tabs.y, 3), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.help, ==, 0);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
}

TEST(a_terminal_too_small_takes_no_clicks)
{
	struct xpu_layout_opts o = { .table = 1 };
	setup(3);
	xpu_layout_compute(&l, 4, 20, &o);
	CHECK_INT(click(1, 3), ==, XPU_REACT_NONE);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
}
