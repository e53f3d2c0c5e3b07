/* SPDX-License-Identifier: GPL-2.0-only */
/* The flamegraph geometry: an icicle whose boxes nest, stay proportional to
 * their values and never leave the pane. */
#include "check.h"

#include "dict.h"
#include "flame.h"
#include "stacks.h"

#include "flame_layout.h"
#include "flame_view.h"

/* Builds a tree from random stacks over a small set of frames, so that
 * paths share prefixes and weights vary over several orders of magnitude. */
static void random_tree(struct xpu_flame *f, struct xpu_dict *d, unsigned seed, int nstacks)
{
	struct xpu_stacks st;
	char name[32];
	xpu_stacks_init(&st, 4);
	srand(seed);
	for (int i = 0; i < nstacks; i++) {
		uint32_t frames[16];
		int depth = 1 + rand() % 14;
		for (int k = 0; k < depth; k++) {
			snprintf(name, sizeof(name), "fn%d_%d", k, rand() % 3);
			frames[k] = xpu_dict_frame(d, (uint32_t)(rand() % XPU_FRAME_KIND_MAX),
						   xpu_dict_cstr(d, name), 0);
		}
		uint32_t stack = xpu_dict_stack(d, frames, (uint32_t)depth);
		uint64_t w = (uint64_t)1 << (rand() % 20);
		xpu_stacks_add(&st, 1 + (uint32_t)(rand() % 4), 1, stack, xpu_dict_cstr(d, "app"), w);
	}
	xpu_stacks_tick(&st);
	struct xpu_flame_opts o = { .window = XPU_WIN_ALL, .per_process = 1 };
	xpu_flame_init(f);
	xpu_flame_build(f, &st, d, &o);
	xpu_stacks_free(&st);
}

/* Where each node was placed (-1: not placed). */
static int place(const struct xpu_flame *f, int rows, int cols, struct xpu_tui_flame_box *b,
		 int *at)
{
	uint32_t n = xpu_tui_flame_layout(f, rows, cols, b, f->n);
	for (uint32_t i = 0; i < f->n; i++)
		at[i] = -1;
	for (uint32_t i = 0; i < n; i++)
		at[b[i].node] = (int)i;
	return (int)n;
}

/* Every geometric property at once; prints the first violation. */
static int bad_geometry(const struct xpu_flame *f, int rows, int cols)
{
	struct xpu_tui_flame_box b[f->n];
	int at[f->n];
	int n = place(f, rows, cols, b, at);
	double k = (double)cols / (double)f->nodes[0].value;

	for (int i = 0; i < n; i++) {
		const struct xpu_flame_node *node = &f->nodes[b[i].node];
		const char *why = NULL;
		if (b[i].col < 0 || b[i].width < 1 || b[i].col + b[i].width > cols || b[i].row < 0 ||
		    b[i].row >= rows)
			why = "outside the pane";
		else if ((uint32_t)b[i].row != node->depth)
			why = "row is not the depth";
		else if (b[i].width - (double)node->value * k <= -1 ||
			 b[i].width - (double)node->value * k >= 1)
			why = "width not proportional to value";
		else if (b[i].node) {
			int p = at[node->parent];
			if (p < 0 || p > i)
				why = "placed without its parent";
			else if (b[i].col < b[p].col || b[i].col + b[i].width > b[p].col + b[p].width)
				why = "outside its parent";
		}
		if (!why) {
			int sum = 0, last_end = -1;
			for (uint32_t c = node->first_child; c; c = f->nodes[c].next) {
				if (at[c] < 0)
					continue;
				sum += b[at[c]].width;
				if (b[at[c]].col < last_end)
					why = "children overlap or are out of order";
				last_end = b[at[c]].col + b[at[c]].width;
			}
			if (sum > b[i].width)
				why = "children wider than their parent";
		}
		if (why) {
			fprintf(stderr, "  %dx%d node %u: %s\n", cols, rows, b[i].node, why);
			return 1;
		}
	}
	return 0;
}

TEST(boxes_nest_stay_proportional_and_fit_the_pane)
{
	int bad = 0;
	for (unsigned seed = 1; seed <= 20 && !bad; seed++) {
		struct xpu_dict d;
		struct xpu_flame f;
		xpu_dict_init(&d);
		random_tree(&f, &d, seed, 200);
		REQUIRE(f.n > 1);
		for (int cols = 1; cols <= 250 && !bad; cols += (cols < 40 ? 1 : 7))
			for (int rows = 1; rows <= 20 && !bad; rows += 3)
				bad = bad_geometry(&f, rows, cols);
		xpu_flame_free(&f);
		xpu_dict_free(&d);
	}
	CHECK(!bad);
}

TEST(the_root_spans_the_top_row)
{
	struct xpu_dict d;
	struct xpu_flame f;
	struct xpu_tui_flame_box b[1];
	xpu_dict_init(&d);
	random_tree(&f, &d, 7, 50);
	CHECK_INT(xpu_tui_flame_layout(&f, 10, 80, b, 1), ==, 1);
	CHECK_INT(b[0].node, ==, 0);
	CHECK_INT(b[0].row, ==, 0);
	CHECK_INT(b[0].col, ==, 0);
	CHECK_INT(b[0].width, ==, 80);
	xpu_flame_free(&f);
	xpu_dict_free(&d);
}

TEST(a_node_is_drawn_exactly_when_it_is_a_column_wide_and_its_parent_is_drawn)
{
	int bad = 0;
	struct xpu_dict d;
	struct xpu_flame f;
	xpu_dict_init(&d);
	random_tree(&f, &d, 3, 300);
	for (int cols = 1; cols <= 250 && !bad; cols++) {
		struct xpu_tui_flame_box b[f.n];
		int at[f.n];
		place(&f, 12, cols, b, at);
		for (uint32_t i = 1; i < f.n && !bad; i++) {
			const struct xpu_flame_node *node = &f.nodes[i];
			int linked = node->first_child || node->next || f.nodes[node->parent].first_child == i;
			int want = linked && at[node->parent] >= 0 && node->depth < 12 &&
				   node->value * (uint64_t)cols >= f.nodes[0].value;
			if (want != (at[i] >= 0)) {
				fprintf(stderr, "  %d cols: node %u placed=%d want=%d\n", cols, i, at[i] >= 0,
					want);
				bad = 1;
			}
		}
	}
	CHECK(!bad);
	xpu_flame_free(&f);
	xpu_dict_free(&d);
}

/* A hand-made tree: root 100 = a 60 (a1 30, a2 29) + b 39 + c 1. */
static void small_tree(struct xpu_flame *f)
{
	static struct xpu_flame_node n[6];
	n[0] = (struct xpu_flame_node){ .first_child = 1, .value = 100 };
	n[1] = (struct xpu_flame_node){ .frame = 1, .parent = 0, .first_child = 4, .next = 2, .depth = 1, .value = 60 };
	n[2] = (struct xpu_flame_node){ .frame = 2, .parent = 0, .next = 3, .depth = 1, .value = 39 };
	n[3] = (struct xpu_flame_node){ .frame = 3, .parent = 0, .depth = 1, .value = 1 };
	n[4] = (struct xpu_flame_node){ .frame = 4, .parent = 1, .next = 5, .depth = 2, .value = 30 };
	n[5] = (struct xpu_flame_node){ .frame = 5, .parent = 1, .depth = 2, .value = 29 };
	*f = (struct xpu_flame){ .nodes = n, .n = 6, .cap = 6, .max_depth = 2, .total = 100 };
}

TEST(children_go_left_to_right_in_tree_order)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	uint32_t n = xpu_tui_flame_layout(&f, 3, 100, b, 6);
	REQUIRE(n == 6);
	CHECK_INT(b[1].node, ==, 1);
	CHECK_INT(b[1].col, ==, 0);
	CHECK_INT(b[1].width, ==, 60);
	CHECK_INT(b[2].node, ==, 2);
	CHECK_INT(b[2].col, ==, 60);
	CHECK_INT(b[2].width, ==, 39);
	CHECK_INT(b[3].col, ==, 99);
	CHECK_INT(b[3].width, ==, 1);
	CHECK_INT(b[4].col, ==, 0);
	CHECK_INT(b[5].col, ==, 30);
	CHECK_INT(b[5].width, ==, 29);
}

TEST(frames_narrower_than_a_column_are_left_out)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	uint32_t n = xpu_tui_flame_layout(&f, 3, 50, b, 6);
	for (uint32_t i = 0; i < n; i++)
		CHECK(b[i].node != 3);	/* 1% of 50 columns is half a column */
	CHECK_INT(n, ==, 5);
}

TEST(levels_below_the_pane_are_left_out)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	CHECK_INT(xpu_tui_flame_layout(&f, 2, 100, b, 6), ==, 4);
	CHECK_INT(xpu_tui_flame_layout(&f, 1, 100, b, 6), ==, 1);
	CHECK_INT(xpu_tui_flame_layout(&f, 0, 100, b, 6), ==, 0);
}

TEST(an_empty_tree_draws_nothing)
{
	struct xpu_flame_node root = { 0 };
	struct xpu_flame f = { .nodes = &root, .n = 1, .cap = 1 };
	struct xpu_tui_flame_box b[1];
	CHECK_INT(xpu_tui_flame_layout(&f, 10, 80, b, 1), ==, 0);
	f.n = 0;
	CHECK_INT(xpu_tui_flame_layout(&f, 10, 80, b, 1), ==, 0);
}

TEST(huge_weights_do_not_overflow)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	uint64_t scale = UINT64_MAX / 128;
	for (uint32_t i = 0; i < f.n; i++)
		f.nodes[i].value *= scale;
	REQUIRE(xpu_tui_flame_layout(&f, 3, 100, b, 6) == 6);
	CHECK_INT(b[2].col, ==, 60);
	CHECK_INT(b[2].width, ==, 39);
}

TEST(frames_are_coloured_by_kind_and_labels_as_info)
{
	struct xpu_dict d;
	struct xpu_flame f;
	struct xpu_flame_node n[3];
	char text[64];
	xpu_dict_init(&d);
	uint32_t k = xpu_dict_frame(&d, XPU_FRAME_KERNEL, xpu_dict_cstr(&d, "vfs_read"), 0);
	n[0] = (struct xpu_flame_node){ .first_child = 1, .value = 2 };
	n[1] = (struct xpu_flame_node){ .label = xpu_dict_cstr(&d, "python3"), .first_child = 2,
					.depth = 1, .value = 2 };
	n[2] = (struct xpu_flame_node){ .frame = k, .parent = 1, .depth = 2, .value = 2 };
	f = (struct xpu_flame){ .nodes = n, .n = 3, .cap = 3, .max_depth = 2, .total = 2 };
	CHECK_INT(xpu_tui_flame_role(&f, &d, 0), ==, XPU_ROLE_FLAME_INFO);
	CHECK_INT(xpu_tui_flame_role(&f, &d, 1), ==, XPU_ROLE_FLAME_INFO);
	CHECK_INT(xpu_tui_flame_role(&f, &d, 2), ==, XPU_ROLE_FLAME_KERNEL);
	xpu_tui_flame_text(&f, &d, 0, text, sizeof(text));
	CHECK_STR(text, "all");
	xpu_tui_flame_text(&f, &d, 1, text, sizeof(text));
	CHECK_STR(text, "python3");
	xpu_tui_flame_text(&f, &d, 2, text, sizeof(text));
	CHECK_STR(text, "vfs_read");
	xpu_dict_free(&d);
}

TEST(a_zoomed_frame_spans_the_pane_under_its_nearest_ancestors)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	uint32_t n = xpu_tui_flame_layout_zoom(&f, 1, 6, 100, b, 6);
	REQUIRE(n == 4);
	CHECK_INT(b[0].node, ==, 0);	/* the ancestor, full width */
	CHECK_INT(b[0].row, ==, 0);
	CHECK_INT(b[0].width, ==, 100);
	CHECK_INT(b[1].node, ==, 1);	/* the zoomed frame, full width */
	CHECK_INT(b[1].row, ==, 1);
	CHECK_INT(b[1].col, ==, 0);
	CHECK_INT(b[1].width, ==, 100);
	CHECK_INT(b[2].node, ==, 4);	/* 30 of 60 */
	CHECK_INT(b[2].row, ==, 2);
	CHECK_INT(b[2].col, ==, 0);
	CHECK_INT(b[2].width, ==, 50);
	CHECK_INT(b[3].node, ==, 5);	/* 29 of 60 */
	CHECK_INT(b[3].col, ==, 50);
	CHECK_INT(b[3].width, ==, 48);
	/* Siblings of the zoomed frame are not drawn. */
	for (uint32_t i = 0; i < n; i++)
		CHECK(b[i].node != 2 && b[i].node != 3);
}

TEST(ancestors_take_at_most_a_third_of_the_rows)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	CHECK_INT(xpu_tui_flame_layout_zoom(&f, 4, 3, 100, b, 6), ==, 2);	/* one ancestor: a */
	CHECK_INT(b[0].node, ==, 1);
	CHECK_INT(b[1].node, ==, 4);
	CHECK_INT(b[1].row, ==, 1);
	CHECK_INT(xpu_tui_flame_layout_zoom(&f, 4, 2, 100, b, 6), ==, 1);	/* no room for one */
	CHECK_INT(b[0].node, ==, 4);
	CHECK_INT(b[0].row, ==, 0);
}

/* Zoomed onto any node of random trees: what is above it nests inside it in
 * proportion to its value, and what is below it is its own ancestry. */
TEST(zoomed_boxes_nest_and_stay_proportional_to_the_zoomed_frame)
{
	int bad = 0;
	struct xpu_dict d;
	struct xpu_flame f;
	xpu_dict_init(&d);
	random_tree(&f, &d, 11, 200);
	for (uint32_t root = 0; root < f.n && !bad; root++) {
		struct xpu_tui_flame_box b[f.n];
		int rows = 12, cols = 97;
		uint32_t n = xpu_tui_flame_layout_zoom(&f, root, rows, cols, b, f.n);
		double k = (double)cols / (double)f.nodes[root].value;
		int zrow = -1;
		for (uint32_t i = 0; i < n && !bad; i++) {
			const struct xpu_flame_node *node = &f.nodes[b[i].node];
			if (b[i].node == root)
				zrow = b[i].row;
			if (b[i].col < 0 || b[i].col + b[i].width > cols || b[i].row >= rows)
				bad = 1;
			else if (zrow < 0 && b[i].width != cols)
				bad = 2;	/* an ancestor */
			else if (zrow >= 0 && b[i].node != root &&
				 (b[i].width - (double)node->value * k <= -1 ||
				  b[i].width - (double)node->value * k >= 1))
				bad = 3;
			else if (zrow >= 0 && b[i].row != zrow + (int)(node->depth - f.nodes[root].depth))
				bad = 4;
			if (bad)
				fprintf(stderr, "  root %u box %u (node %u): rule %d\n", root, i, b[i].node, bad);
		}
		if (!bad && zrow < 0 && n)
			bad = 5, fprintf(stderr, "  root %u not placed\n", root);
	}
	CHECK(!bad);
	xpu_flame_free(&f);
	xpu_dict_free(&d);
}

TEST(a_cell_hits_the_frame_drawn_there)
{
	struct xpu_flame f;
	struct xpu_tui_flame_box b[6];
	small_tree(&f);
	uint32_t n = xpu_tui_flame_layout_zoom(&f, 0, 3, 50, b, 6);
	for (uint32_t i = 0; i < n; i++) {
		CHECK_INT(xpu_tui_flame_hit(&f, 0, 3, 50, b[i].row, b[i].col), ==, b[i].node);
		CHECK_INT(xpu_tui_flame_hit(&f, 0, 3, 50, b[i].row, b[i].col + b[i].width - 1), ==,
			  b[i].node);
	}
	CHECK_INT(xpu_tui_flame_hit(&f, 0, 3, 50, 1, 49), ==, XPU_FLAME_NONE);	/* c: too narrow */
	CHECK_INT(xpu_tui_flame_hit(&f, 0, 3, 50, 2, 45), ==, XPU_FLAME_NONE);	/* above b: nothing */
	CHECK_INT(xpu_tui_flame_hit(&f, 0, 3, 50, 3, 0), ==, XPU_FLAME_NONE);	/* below the pane */
	CHECK_INT(xpu_tui_flame_hit(&f, 1, 6, 100, 2, 70), ==, 5);	/* zoomed onto a: a2 */
	CHECK_INT(xpu_tui_flame_hit(&f, 1, 6, 100, 0, 70), ==, 0);	/* its ancestor */
}

TEST(a_zoom_follows_its_frames_into_a_rebuilt_tree)
{
	struct xpu_dict d;
	struct xpu_flame f, g;
	struct xpu_tui_flame_zoom z;
	xpu_dict_init(&d);
	random_tree(&f, &d, 5, 200);
	random_tree(&g, &d, 5, 200);	/* the same stacks: node numbers may not be relied on */
	for (uint32_t node = 0; node < f.n; node++) {
		xpu_tui_flame_zoom_set(&z, &f, node);
		CHECK_INT(z.n, ==, f.nodes[node].depth);
		uint32_t in_g = xpu_tui_flame_zoom_node(&g, &z);
		/* The same chain of frames from the root. */
		for (uint32_t a = node, b = in_g;; a = f.nodes[a].parent, b = g.nodes[b].parent) {
			CHECK_INT(f.nodes[a].frame, ==, g.nodes[b].frame);
			CHECK_INT(f.nodes[a].label, ==, g.nodes[b].label);
			if (!a || !b) {
				CHECK_INT(a, ==, b);
				break;
			}
		}
	}
	xpu_tui_flame_zoom_set(&z, &f, 0);
	CHECK_INT(z.n, ==, 0);
	CHECK_INT(xpu_tui_flame_zoom_node(&g, &z), ==, 0);
	xpu_flame_free(&f);
	xpu_flame_free(&g);
	xpu_dict_free(&d);
}

TEST(a_zoom_whose_frames_are_gone_stops_at_the_deepest_one_left)
{
	struct xpu_flame f;
	struct xpu_tui_flame_zoom z;
	small_tree(&f);
	xpu_tui_flame_zoom_set(&z, &f, 5);	/* root > a > a2 */
	CHECK_INT(z.n, ==, 2);
	CHECK_INT(xpu_tui_flame_zoom_node(&f, &z), ==, 5);
	z.path[1].frame = 99;	/* a2 is gone from the tree */
	CHECK_INT(xpu_tui_flame_zoom_node(&f, &z), ==, 1);
	z.path[0].frame = 98;	/* and so is a */
	CHECK_INT(xpu_tui_flame_zoom_node(&f, &z), ==, 0);
}

TEST(a_zoom_deeper_than_a_path_holds_keeps_the_deepest_ancestor_it_can)
{
	static struct xpu_flame_node n[300];
	struct xpu_flame f = { .nodes = n, .n = 300, .cap = 300, .max_depth = 299, .total = 1 };
	struct xpu_tui_flame_zoom z;
	for (uint32_t i = 0; i < 300; i++)
		n[i] = (struct xpu_flame_node){ .frame = i, .parent = i ? i - 1 : 0,
						.first_child = i + 1 < 300 ? i + 1 : 0, .depth = i, .value = 1 };
	xpu_tui_flame_zoom_set(&z, &f, 299);
	CHECK_INT(z.n, ==, XPU_FLAME_ZOOM_MAX);
	CHECK_INT(xpu_tui_flame_zoom_node(&f, &z), ==, XPU_FLAME_ZOOM_MAX);
}
