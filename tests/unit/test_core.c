/* SPDX-License-Identifier: GPL-2.0-only */
/* The core data structures: dictionary, weighted stacks, flame trees, tables. */
#include "check.h"

#include "dict.h"
#include "flame.h"
#include "htab.h"
#include "stacks.h"
#include "table.h"

static uint32_t frame(struct xpu_dict *d, const char *name, uint32_t kind)
{
	return xpu_dict_frame(d, kind, xpu_dict_cstr(d, name), 0);
}

/* Interns a stack from names, root first. */
static uint32_t stack(struct xpu_dict *d, int n, const char **names)
{
	uint32_t f[16];
	for (int i = 0; i < n; i++)
		f[i] = frame(d, names[i], XPU_FRAME_USER);
	return xpu_dict_stack(d, f, (uint32_t)n);
}

TEST(dict_interns_each_string_once)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t a = xpu_dict_cstr(&d, "main");
	uint32_t b = xpu_dict_cstr(&d, "work");
	CHECK_INT(a, ==, 1);
	CHECK_INT(b, ==, 2);
	CHECK_INT(xpu_dict_cstr(&d, "main"), ==, a);
	CHECK_STR(xpu_dict_str_get(&d, b), "work");
	CHECK_STR(xpu_dict_str_get(&d, 99), "");
	for (int i = 0; i < 10000; i++) {
		char buf[32];
		snprintf(buf, sizeof(buf), "s%d", i);
		CHECK_INT(xpu_dict_cstr(&d, buf), ==, (uint32_t)i + 3);
	}
	CHECK_INT(xpu_dict_cstr(&d, "s1234"), ==, 1237);
	CHECK_STR(xpu_dict_str_get(&d, 1237), "s1234");
	xpu_dict_free(&d);
}

TEST(dict_strings_may_hold_any_bytes)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t a = xpu_dict_str(&d, "ab\0c", 4);
	uint32_t b = xpu_dict_str(&d, "ab", 2);
	CHECK(a != b);
	CHECK_INT(xpu_dict_str_len(&d, a), ==, 4);
	xpu_dict_free(&d);
}

TEST(dict_stacks_are_interned_by_content)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	const char *s1[] = { "main", "run", "spin" };
	const char *s2[] = { "main", "run" };
	uint32_t a = stack(&d, 3, s1), b = stack(&d, 2, s2), c = stack(&d, 3, s1);
	CHECK(a && b && a != b);
	CHECK_INT(a, ==, c);
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(&d, a, &n);
	CHECK_INT(n, ==, 3);
	CHECK_STR(xpu_dict_str_get(&d, xpu_dict_frame_get(&d, f[2])->name), "spin");
	uint32_t bad = 999;
	CHECK_INT(xpu_dict_stack(&d, &bad, 1), ==, 0);	/* unknown frame id */
	CHECK_INT(xpu_dict_stack(&d, NULL, 0), !=, 0);	/* the empty stack is valid */
	xpu_dict_free(&d);
}

TEST(unknown_frames_name_their_module)
{
	struct xpu_dict d;
	char buf[128];
	xpu_dict_init(&d);
	uint32_t f = xpu_dict_frame(&d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(&d, "[unknown]"),
				    xpu_dict_cstr(&d, "libfoo.so.1"));
	xpu_frame_text(&d, f, buf, sizeof(buf));
	CHECK_STR(buf, "[unknown] (libfoo.so.1)");
	xpu_dict_free(&d);
}

TEST(stacks_count_only_closed_ticks)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 3) == 0);
	xpu_stacks_add(&s, 10, 11, 1, 0, 5);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_RECENT), ==, 0);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, 0);
	xpu_stacks_tick(&s);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_RECENT), ==, 5);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, 5);
	xpu_stacks_free(&s);
}

TEST(stacks_age_out_of_the_window_but_stay_since_start)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 3) == 0);
	xpu_stacks_add(&s, 10, 10, 1, 0, 7);	/* tick 1 */
	xpu_stacks_tick(&s);
	xpu_stacks_add(&s, 10, 10, 2, 0, 1);	/* tick 2 */
	xpu_stacks_tick(&s);
	xpu_stacks_tick(&s);			/* tick 3: nothing */
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_RECENT), ==, 8);
	xpu_stacks_tick(&s);			/* tick 4: tick 1 leaves the window */
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_RECENT), ==, 1);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, 8);
	xpu_stacks_tick(&s);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_RECENT), ==, 0);
	CHECK_INT(s.v[0].recent, ==, 0);
	CHECK_INT(s.v[0].total, ==, 7);
	xpu_stacks_free(&s);
}

/* Weight in window w for (pid, tid, stack), or -1 when there is no entry. */
static long long entry_weight(const struct xpu_stacks *s, uint32_t pid, uint32_t tid, uint32_t stack,
			      enum xpu_window w)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].tid == tid && s->v[i].stack == stack)
			return (long long)xpu_stack_weight(&s->v[i], w);
	return -1;
}

TEST(stacks_age_out_the_lightest_old_entries_past_max_and_keep_their_weight)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 2) == 0);
	s.max = 8;
	s.aged_stack = 999;
	/* Ten old stacks of pid 5 weighing 1..10, out of the window. */
	for (uint32_t k = 1; k <= 10; k++)
		xpu_stacks_add(&s, 5, 6, 100 + k, 0, k);
	xpu_stacks_tick(&s);		/* 10 entries > 8: nothing is old yet */
	CHECK_INT(s.n, ==, 10);
	xpu_stacks_add(&s, 7, 7, 200, 0, 3);	/* pid 7: in the window from now */
	xpu_stacks_tick(&s);
	xpu_stacks_tick(&s);		/* pid 5's entries leave the window */
	/* Kept: pid 7 (in the window) + the 5 heaviest old ones = 6 (3/4 of 8),
	 * plus pid 5's aged-out entry with the weight of stacks 101..105. */
	CHECK_INT(s.n, ==, 7);
	CHECK_INT(s.aged_out, ==, 5);
	CHECK_INT(entry_weight(&s, 7, 7, 200, XPU_WIN_RECENT), ==, 3);
	CHECK_INT(entry_weight(&s, 5, 6, 110, XPU_WIN_ALL), ==, 10);
	CHECK_INT(entry_weight(&s, 5, 6, 106, XPU_WIN_ALL), ==, 6);
	CHECK_INT(entry_weight(&s, 5, 6, 105, XPU_WIN_ALL), ==, -1);
	CHECK_INT(entry_weight(&s, 5, 0, 999, XPU_WIN_ALL), ==, 1 + 2 + 3 + 4 + 5);
	uint64_t all = 0;
	for (uint32_t i = 0; i < s.n; i++)
		all += s.v[i].total;
	CHECK_INT(all, ==, 55 + 3);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, 55 + 3);
	/* The index was rebuilt: adding to a kept entry finds it. */
	xpu_stacks_add(&s, 5, 6, 110, 0, 1);
	xpu_stacks_tick(&s);
	CHECK_INT(entry_weight(&s, 5, 6, 110, XPU_WIN_ALL), ==, 11);
	CHECK_INT(entry_weight(&s, 5, 6, 110, XPU_WIN_RECENT), ==, 1);
	xpu_stacks_free(&s);
}

TEST(stacks_stay_bounded_under_a_stream_of_new_stacks)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 3) == 0);
	s.max = 1000;
	s.aged_stack = 1;
	uint64_t sent = 0;
	/* 300 ticks of 200 new stacks each from ever new processes (the
	 * window of 3 ticks holds 600 entries, which must all stay). */
	for (uint32_t t = 0; t < 300; t++) {
		for (uint32_t k = 0; k < 200; k++) {
			xpu_stacks_add(&s, 100 + t, 100 + t, 2 + t * 200 + k, 0, 1 + k % 7);
			sent += 1 + k % 7;
		}
		xpu_stacks_tick(&s);
		CHECK(s.n <= s.max + 1);
	}
	for (int t = 0; t < 3; t++)
		xpu_stacks_tick(&s);
	uint64_t all = 0;
	for (uint32_t i = 0; i < s.n; i++)
		all += s.v[i].total;
	CHECK_INT(all, ==, sent);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, sent);
	CHECK_INT(s.n, <=, s.max + 1);
	CHECK(entry_weight(&s, 0, 0, 1, XPU_WIN_ALL) > 0);	/* the catch-all */
	xpu_stacks_free(&s);
}

TEST(stacks_of_exited_processes_merge_by_name_once_idle)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 2) == 0);
	/* Two runs of make (same name 40, same stack 7), one cc (name 41). */
	xpu_stacks_add(&s, 10, 10, 7, 40, 3);
	xpu_stacks_add(&s, 10, 12, 8, 40, 1);
	xpu_stacks_add(&s, 11, 11, 7, 40, 4);
	xpu_stacks_add(&s, 12, 12, 9, 41, 5);
	xpu_stacks_tick(&s);
	xpu_stacks_retire(&s, 10);
	xpu_stacks_retire(&s, 11);
	xpu_stacks_retire(&s, 11);	/* twice: no harm */
	xpu_stacks_retire(&s, 99);	/* never sampled */
	xpu_stacks_add(&s, 11, 11, 7, 40, 2);	/* weight after the exit report */
	xpu_stacks_tick(&s);
	/* Weight in the window: nothing merges yet. */
	CHECK_INT(s.n, ==, 4);
	CHECK_INT(s.merged, ==, 0);
	CHECK_INT(entry_weight(&s, 10, 10, 7, XPU_WIN_RECENT), ==, 3);
	xpu_stacks_tick(&s);	/* pid 10 leaves the window, 11 not yet */
	CHECK_INT(s.merged, ==, 2);
	CHECK_INT(entry_weight(&s, 0, 40, 7, XPU_WIN_ALL), ==, 3);
	CHECK_INT(entry_weight(&s, 0, 40, 8, XPU_WIN_ALL), ==, 1);
	CHECK_INT(entry_weight(&s, 11, 11, 7, XPU_WIN_RECENT), ==, 2);
	xpu_stacks_tick(&s);
	CHECK_INT(entry_weight(&s, 0, 40, 7, XPU_WIN_ALL), ==, 9);	/* 3 + 4 + 2 */
	CHECK_INT(entry_weight(&s, 12, 12, 9, XPU_WIN_ALL), ==, 5);	/* alive: its own */
	CHECK_INT(s.n, ==, 3);
	CHECK_INT(s.nretired, ==, 0);
	CHECK_INT(xpu_stacks_sum(&s, XPU_WIN_ALL), ==, 15);
	/* A later run of make has its own entry again until it exits. */
	xpu_stacks_add(&s, 13, 13, 7, 40, 1);
	xpu_stacks_tick(&s);
	CHECK_INT(entry_weight(&s, 13, 13, 7, XPU_WIN_ALL), ==, 1);
	CHECK_INT(entry_weight(&s, 0, 40, 7, XPU_WIN_ALL), ==, 9);
	xpu_stacks_free(&s);
}

/* The stacks' index after merges: each entry is still found where it now
 * sits (a sample for it adds to it, no new entry), on a table big enough
 * that ids move by thousands. */
TEST(stacks_index_follows_entries_moved_by_a_merge)
{
	struct xpu_stacks s;
	REQUIRE(xpu_stacks_init(&s, 1) == 0);
	for (uint32_t pid = 1; pid <= 400; pid++)
		for (uint32_t k = 0; k < 20; k++)
			xpu_stacks_add(&s, pid, pid, 1000 + k, 7, 1);
	xpu_stacks_tick(&s);
	for (uint32_t pid = 1; pid <= 400; pid += 2)
		xpu_stacks_retire(&s, pid);	/* half the processes exit */
	xpu_stacks_tick(&s);			/* out of the window: they merge */
	CHECK_INT(s.merged, ==, 200 * 20);
	uint32_t n = s.n;
	CHECK_INT(n, ==, 200 * 20 + 20);	/* the living, and 20 merged by name */
	for (uint32_t pid = 2; pid <= 400; pid += 2)
		for (uint32_t k = 0; k < 20; k++)
			xpu_stacks_add(&s, pid, pid, 1000 + k, 7, 2);
	for (uint32_t k = 0; k < 20; k++)
		xpu_stacks_add(&s, 0, 7, 1000 + k, 7, 5);	/* the merged entries, keyed (0, name) */
	xpu_stacks_tick(&s);
	CHECK_INT(s.n, ==, n);
	CHECK_INT(entry_weight(&s, 400, 400, 1019, XPU_WIN_ALL), ==, 3);
	CHECK_INT(entry_weight(&s, 2, 2, 1000, XPU_WIN_ALL), ==, 3);
	CHECK_INT(entry_weight(&s, 0, 7, 1005, XPU_WIN_ALL), ==, 200 + 5);
	xpu_stacks_free(&s);
}

static int id_is(const void *ctx, uint32_t id, const void *key)
{
	return id == *(const uint32_t *)key;
}

TEST(htab_renumber_moves_and_removes_ids_in_place)
{
	struct xpu_htab h;
	xpu_htab_init(&h);
	enum { N = 5000 };
	static uint32_t map[N];
	for (uint32_t i = 0; i < N; i++)
		REQUIRE(xpu_htab_put(&h, xpu_hash_u64(i), i) == 0);
	/* Drop every third; the rest close ranks, as an array compacted. */
	uint32_t next = 0;
	for (uint32_t i = 0; i < N; i++)
		map[i] = i % 3 == 0 ? UINT32_MAX : next++;
	xpu_htab_renumber(&h, map);
	CHECK_INT(h.used, ==, next);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t want = map[i];
		uint32_t got = xpu_htab_find(&h, xpu_hash_u64(i), id_is, NULL, &want);
		if (want == UINT32_MAX)
			CHECK_INT(got, ==, UINT32_MAX);
		else
			CHECK_INT(got, ==, want);
	}
	/* Puts after it rehash past the removed slots and lose nothing. */
	for (uint32_t i = N; i < 3 * N; i++)
		REQUIRE(xpu_htab_put(&h, xpu_hash_u64(i), next + (i - N)) == 0);
	uint32_t want = map[N - 1];
	CHECK_INT(xpu_htab_find(&h, xpu_hash_u64(N - 1), id_is, NULL, &want), ==, want);
	want = next + 2 * N - 1;
	CHECK_INT(xpu_htab_find(&h, xpu_hash_u64(3 * N - 1), id_is, NULL, &want), ==, want);
	CHECK_INT(h.used, ==, next + 2 * N);
	xpu_htab_free(&h);
}

static int sum_fn(void *arg, const struct xpu_stack_entry *e, uint64_t w)
{
	*(uint64_t *)arg += w;
	return 0;
}

TEST(stacks_each_filters_by_pid_and_tid)
{
	struct xpu_stacks s;
	uint64_t sum = 0;
	REQUIRE(xpu_stacks_init(&s, 2) == 0);
	xpu_stacks_add(&s, 10, 10, 1, 0, 1);
	xpu_stacks_add(&s, 10, 12, 1, 0, 2);
	xpu_stacks_add(&s, 20, 20, 1, 0, 4);
	xpu_stacks_add(&s, 10, 12, 1, 0, 8);	/* same entry again */
	xpu_stacks_tick(&s);
	CHECK_INT(s.n, ==, 3);
	xpu_stacks_each(&s, XPU_WIN_RECENT, 10, 0, sum_fn, &sum);
	CHECK_INT(sum, ==, 11);
	sum = 0;
	xpu_stacks_each(&s, XPU_WIN_RECENT, 10, 12, sum_fn, &sum);
	CHECK_INT(sum, ==, 10);
	xpu_stacks_free(&s);
}

static const struct xpu_flame_node *find_child(const struct xpu_flame *f, uint32_t parent,
					       const struct xpu_dict *d, const char *name)
{
	for (uint32_t c = f->nodes[parent].first_child; c; c = f->nodes[c].next) {
		const struct xpu_frame *fr = xpu_dict_frame_get(d, f->nodes[c].frame);
		if (fr && strcmp(xpu_dict_str_get(d, fr->name), name) == 0)
			return &f->nodes[c];
	}
	return NULL;
}

TEST(flame_merges_common_prefixes_and_orders_heaviest_first)
{
	struct xpu_dict d;
	struct xpu_stacks s;
	struct xpu_flame f;
	xpu_dict_init(&d);
	REQUIRE(xpu_stacks_init(&s, 4) == 0);
	const char *a[] = { "main", "parse" }, *b[] = { "main", "compute", "mul" },
		   *c[] = { "main", "compute", "add" };
	xpu_stacks_add(&s, 1, 1, stack(&d, 2, a), 0, 10);
	xpu_stacks_add(&s, 1, 1, stack(&d, 3, b), 0, 30);
	xpu_stacks_add(&s, 1, 2, stack(&d, 3, c), 0, 20);
	xpu_stacks_add(&s, 2, 2, stack(&d, 2, a), 0, 1000);	/* another process */
	xpu_stacks_tick(&s);
	xpu_flame_init(&f);
	struct xpu_flame_opts o = { .window = XPU_WIN_RECENT, .pid = 1 };
	REQUIRE(xpu_flame_build(&f, &s, &d, &o) == 0);
	CHECK_INT(f.total, ==, 60);
	CHECK_INT(f.max_depth, ==, 3);
	const struct xpu_flame_node *m = find_child(&f, 0, &d, "main");
	REQUIRE(m);
	CHECK_INT(m->value, ==, 60);
	uint32_t mi = (uint32_t)(m - f.nodes);
	const struct xpu_flame_node *first = &f.nodes[f.nodes[mi].first_child];
	CHECK_INT(first->value, ==, 50);	/* compute (30 + 20) before parse (10) */
	CHECK(find_child(&f, mi, &d, "parse") && find_child(&f, mi, &d, "parse")->value == 10);
	xpu_flame_free(&f);
	xpu_stacks_free(&s);
	xpu_dict_free(&d);
}

TEST(flame_drops_frames_below_the_minimum_share)
{
	struct xpu_dict d;
	struct xpu_stacks s;
	struct xpu_flame f;
	xpu_dict_init(&d);
	REQUIRE(xpu_stacks_init(&s, 1) == 0);
	const char *big[] = { "main", "hot" }, *tiny[] = { "main", "cold" };
	xpu_stacks_add(&s, 1, 1, stack(&d, 2, big), 0, 999);
	xpu_stacks_add(&s, 1, 1, stack(&d, 2, tiny), 0, 1);
	xpu_stacks_tick(&s);
	xpu_flame_init(&f);
	struct xpu_flame_opts o = { .window = XPU_WIN_ALL, .min_frac = 0.01 };
	REQUIRE(xpu_flame_build(&f, &s, &d, &o) == 0);
	const struct xpu_flame_node *m = find_child(&f, 0, &d, "main");
	REQUIRE(m);
	CHECK(find_child(&f, (uint32_t)(m - f.nodes), &d, "hot") != NULL);
	CHECK(find_child(&f, (uint32_t)(m - f.nodes), &d, "cold") == NULL);
	CHECK_INT(m->value, ==, 1000);	/* the parent still counts it */
	xpu_flame_free(&f);
	xpu_stacks_free(&s);
	xpu_dict_free(&d);
}

TEST(flame_can_group_by_process_name)
{
	struct xpu_dict d;
	struct xpu_stacks s;
	struct xpu_flame f;
	xpu_dict_init(&d);
	REQUIRE(xpu_stacks_init(&s, 1) == 0);
	const char *a[] = { "main" };
	uint32_t st = stack(&d, 1, a);
	xpu_stacks_add(&s, 1, 1, st, xpu_dict_cstr(&d, "python"), 3);
	xpu_stacks_add(&s, 2, 2, st, xpu_dict_cstr(&d, "python"), 4);
	xpu_stacks_add(&s, 3, 3, st, xpu_dict_cstr(&d, "bench"), 5);
	xpu_stacks_tick(&s);
	xpu_flame_init(&f);
	struct xpu_flame_opts o = { .window = XPU_WIN_ALL, .per_process = 1 };
	REQUIRE(xpu_flame_build(&f, &s, &d, &o) == 0);
	uint32_t c = f.nodes[0].first_child;
	REQUIRE(c);
	CHECK_STR(xpu_dict_str_get(&d, f.nodes[c].label), "python");
	CHECK_INT(f.nodes[c].value, ==, 7);
	xpu_flame_free(&f);
	xpu_stacks_free(&s);
	xpu_dict_free(&d);
}

static const struct xpu_col cols[] = {
	{ "PID", "pid", XPU_CELL_INT, 6, 0 },
	{ "%CPU", "cpu", XPU_CELL_PCT, 6, 0 },
	{ "COMMAND", "comm", XPU_CELL_STR, 10, XPU_COL_LEFT },
};

static void fill(struct xpu_table *t)
{
	const char *names[] = { "yes", "bash", "Xorg", "python3" };
	double pct[] = { 99.0, 0.5, 3.0, 3.0 };
	for (int i = 0; i < 4; i++) {
		struct xpu_cell *c = xpu_table_add(t, 100 + i);
		c[0].i = 100 + i;
		c[1].d = pct[i];
		c[2].s = xpu_table_strdup(t, names[i]);
	}
}

TEST(table_sorts_numbers_descending_with_stable_ties)
{
	struct xpu_table t;
	xpu_table_init(&t, cols, 3);
	fill(&t);
	xpu_table_sort(&t, 1, 0);
	CHECK_INT(t.keys[0], ==, 100);
	CHECK_INT(t.keys[1], ==, 102);	/* tie at 3.0: lower key first */
	CHECK_INT(t.keys[2], ==, 103);
	CHECK_INT(t.keys[3], ==, 101);
	xpu_table_sort(&t, 1, 1);
	CHECK_INT(t.keys[0], ==, 101);
	xpu_table_free(&t);
}

/* htop's cursor (issue 28): the selection keeps its place while the rows
 * re-sort; following (F) keeps its row instead, until the row is gone. */
TEST(table_selection_keeps_its_place_unless_it_follows_its_row)
{
	struct xpu_table t;
	int lost;
	xpu_table_init(&t, cols, 3);
	fill(&t);
	xpu_table_sort(&t, 1, 0);	/* yes 100 on top */
	CHECK_INT(xpu_table_keep_row(&t, 100, 0, 0, &lost), ==, 0);
	/* yes exits: a refresh later it is 0.0% and sorts last */
	xpu_table_row(&t, 0)[1].d = 0;
	xpu_table_sort(&t, 1, 0);
	CHECK_INT(t.keys[3], ==, 100);
	CHECK_INT(xpu_table_keep_row(&t, 100, 0, 0, &lost), ==, 0);	/* the cursor stays on top */
	CHECK_INT(lost, ==, 0);
	CHECK_INT(xpu_table_keep_row(&t, 100, 0, 1, &lost), ==, 3);	/* F: it goes with yes */
	CHECK_INT(xpu_table_keep_row(&t, 999, 2, 1, &lost), ==, 2);	/* followed row gone: place kept */
	CHECK_INT(lost, ==, 1);
	CHECK_INT(xpu_table_keep_row(&t, 0, 9, 0, &lost), ==, 3);	/* past the end: the last row */
	xpu_table_free(&t);
	xpu_table_init(&t, cols, 3);
	CHECK_INT(xpu_table_keep_row(&t, 100, 0, 1, &lost), ==, -1);
	xpu_table_free(&t);
}

TEST(table_sorts_text_ascending_ignoring_case)
{
	struct xpu_table t;
	xpu_table_init(&t, cols, 3);
	fill(&t);
	xpu_table_sort(&t, 2, 0);
	CHECK_STR(xpu_table_row(&t, 0)[2].s, "bash");
	CHECK_STR(xpu_table_row(&t, 3)[2].s, "yes");
	xpu_table_free(&t);
}

TEST(table_filter_matches_text_or_exact_numbers)
{
	struct xpu_table t;
	xpu_table_init(&t, cols, 3);
	fill(&t);
	xpu_table_filter(&t, "PY");
	CHECK_INT(t.nrows, ==, 1);
	CHECK_INT(t.keys[0], ==, 103);
	xpu_table_reset(&t);
	fill(&t);
	xpu_table_filter(&t, "101");
	CHECK_INT(t.nrows, ==, 1);
	CHECK_INT(t.keys[0], ==, 101);
	xpu_table_reset(&t);
	fill(&t);
	xpu_table_filter(&t, "");
	CHECK_INT(t.nrows, ==, 4);
	xpu_table_free(&t);
}

TEST(table_text_survives_arena_growth)
{
	struct xpu_table t;
	char name[64];
	xpu_table_init(&t, cols, 3);
	for (int i = 0; i < 2000; i++) {
		struct xpu_cell *c = xpu_table_add(&t, i);
		snprintf(name, sizeof(name), "process-number-%d", i);
		c[2].s = xpu_table_strdup(&t, name);
	}
	CHECK_STR(xpu_table_row(&t, 7)[2].s, "process-number-7");
	CHECK_STR(xpu_table_row(&t, 1999)[2].s, "process-number-1999");
	xpu_table_free(&t);
}

TEST(cells_format_durations_sizes_and_unknowns)
{
	char buf[32];
	struct xpu_col ns = { "T", "t", XPU_CELL_NS, 8, 0 }, by = { "B", "b", XPU_CELL_BYTES, 8, 0 };
	struct xpu_cell c = { .i = 850 };
	xpu_cell_format(&ns, &c, buf, sizeof(buf));
	CHECK_STR(buf, "850ns");
	c.i = 12500;
	xpu_cell_format(&ns, &c, buf, sizeof(buf));
	CHECK_STR(buf, "12.5us");
	c.i = 2000000;
	xpu_cell_format(&ns, &c, buf, sizeof(buf));
	CHECK_STR(buf, "2.00ms");
	c.i = 3140000000LL;
	xpu_cell_format(&ns, &c, buf, sizeof(buf));
	CHECK_STR(buf, "3.14s");
	c.i = 3 << 20;
	xpu_cell_format(&by, &c, buf, sizeof(buf));
	CHECK_STR(buf, "3072.0K");
	c.na = 1;
	xpu_cell_format(&by, &c, buf, sizeof(buf));
	CHECK_STR(buf, "N/A");
}

/* htop's tree: rows under their parents, siblings in the sorted order,
 * orphans and a cycle's rows as roots, the label prefixed by depth. */
TEST(a_table_tree_puts_rows_under_their_parents)
{
	static const struct xpu_col tc[] = {
		{ "PID", "pid", XPU_CELL_INT, 5, 0 },
		{ "PPID", "ppid", XPU_CELL_INT, 5, 0 },
		{ "COMMAND", "comm", XPU_CELL_STR, 8, XPU_COL_LEFT },
	};
	/* pid, ppid, in sorted order: 30 under 10, 20 under 10, 40 under 30,
	 * 50 orphan, 60 and 70 each other's parent */
	static const int rows[][2] = { { 30, 10 }, { 50, 99 }, { 10, 1 }, { 40, 30 }, { 20, 10 },
				       { 60, 70 }, { 70, 60 } };
	static const char *want[][2] = { { "50", "x50" }, { "10", "x10" }, { "30", "|- x30" },
					 { "40", "|  `- x40" }, { "20", "`- x20" }, { "60", "x60" },
					 { "70", "`- x70" } };
	struct xpu_table t;
	xpu_table_init(&t, tc, 3);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char name[8];
		struct xpu_cell *c = xpu_table_add(&t, (uint64_t)rows[i][0]);
		c[0].i = rows[i][0];
		c[1].i = rows[i][1];
		snprintf(name, sizeof(name), "x%d", rows[i][0]);
		c[2].s = xpu_table_strdup(&t, name);
	}
	REQUIRE(xpu_table_tree(&t, 1, 2) == 0);
	REQUIRE(t.nrows == 7);
	for (uint32_t r = 0; r < t.nrows; r++) {
		CHECK_INT(t.keys[r], ==, (uint64_t)atoi(want[r][0]));
		CHECK_STR(xpu_table_row(&t, r)[2].s, want[r][1]);
	}
	xpu_table_free(&t);
}
