/* SPDX-License-Identifier: GPL-2.0-only */
/* The pieces every view's headless output is made of (batch_fmt.h). */
#include "batch_fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dict.h"
#include "folded.h"
#include "grow.h"
#include "htab.h"
#include "json.h"
#include "snapshot.h"

void xpu_batch_wall_text(uint64_t ns, char *buf, size_t size, int iso)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	localtime_r(&t, &tm);
	if (!iso) {
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
		return;
	}
	char date[32], zone[8];
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(buf, size, "%s.%03u%.3s:%s", date, (unsigned)(ns / 1000000 % 1000), zone, zone + 3);
}

void xpu_batch_print_table(FILE *f, const struct xpu_table *t)
{
	char cell[256];
	for (uint32_t c = 0; c < t->ncols; c++) {
		const struct xpu_col *col = &t->cols[c];
		if (!xpu_col_shown(col))
			continue;
		fprintf(f, (col->flags & XPU_COL_LEFT) ? " %-*s" : " %*s", col->width, col->title);
	}
	fputc('\n', f);
	for (uint32_t r = 0; r < t->nrows; r++) {
		const struct xpu_cell *row = xpu_table_row(t, r);
		for (uint32_t c = 0; c < t->ncols; c++) {
			const struct xpu_col *col = &t->cols[c];
			if (!xpu_col_shown(col))
				continue;
			xpu_cell_format(col, &row[c], cell, sizeof(cell));
			fprintf(f, (col->flags & XPU_COL_LEFT) ? " %-*s" : " %*s", col->width, cell);
		}
		fputc('\n', f);
	}
}

/* A row's stacks are summed by what they hold, not by id: two ids come to
 * hold the same frames when a pending frame is expanded in place (dict.h),
 * and a top list that showed one path twice would hide a third. */
struct agg {
	uint32_t row, stack, comm;
	uint64_t weight;
};

struct top_ctx {
	const struct xpu_table *t;
	const struct xpu_dict *d;
	uint64_t *sorted;	/* row keys, sorted */
	uint32_t *row_of;	/* sorted position -> row */
	xpu_batch_key_fn key_of;
	void *ctx;
	struct agg *v;
	uint32_t n, cap;
	struct xpu_htab idx;	/* (row, comm, frames) -> v */
	int oom;
};

struct agg_key {
	uint32_t row, comm;
	const uint32_t *frames;
	uint32_t n;
};

static int agg_eq(const void *arg, uint32_t id, const void *key)
{
	const struct top_ctx *c = arg;
	const struct agg_key *k = key;
	const struct agg *a = &c->v[id];
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(c->d, a->stack, &n);
	return a->row == k->row && a->comm == k->comm && n == k->n && (!n || memcmp(f, k->frames, n * sizeof(*f)) == 0);
}

static int top_one(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct top_ctx *c = arg;
	uint64_t key = c->key_of(e, c->ctx);
	uint32_t lo = 0, hi = c->t->nrows;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (c->sorted[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!key || lo == c->t->nrows || c->sorted[lo] != key)
		return 0;
	struct agg_key k = { .row = c->row_of[lo], .comm = e->comm };
	k.frames = xpu_dict_stack_get(c->d, e->stack, &k.n);
	uint64_t h = xpu_hash_u32s(k.frames, k.n, (uint64_t)k.row << 32 | k.comm);
	uint32_t id = xpu_htab_find(&c->idx, h, agg_eq, c, &k);
	if (id != UINT32_MAX) {
		c->v[id].weight += weight;
		return 0;
	}
	if (xpu_grow((void **)&c->v, &c->cap, (size_t)c->n + 1, sizeof(*c->v)) < 0 ||
	    xpu_htab_put(&c->idx, h, c->n) < 0) {
		c->oom = 1;
		return 0;
	}
	c->v[c->n++] = (struct agg){ k.row, e->stack, e->comm, weight };
	return 0;
}

static void keep_top(struct xpu_batch_top *t, const struct agg *a)
{
	for (int i = 0; i < XPU_BATCH_TOP; i++) {
		if (a->weight > t->weight[i] || (a->weight == t->weight[i] && t->stack[i] == 0)) {
			size_t rest = XPU_BATCH_TOP - 1 - i;
			memmove(&t->weight[i + 1], &t->weight[i], rest * sizeof(uint64_t));
			memmove(&t->stack[i + 1], &t->stack[i], rest * sizeof(uint32_t));
			memmove(&t->comm[i + 1], &t->comm[i], rest * sizeof(uint32_t));
			t->weight[i] = a->weight;
			t->stack[i] = a->stack;
			t->comm[i] = a->comm;
			return;
		}
	}
}

static int by_key(const void *a, const void *b, void *arg)
{
	const uint64_t *keys = arg;
	uint64_t x = keys[*(const uint32_t *)a], y = keys[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

struct xpu_batch_top *xpu_batch_top_stacks(const struct xpu_table *t, const struct xpu_stacks *st,
					   const struct xpu_dict *d, int window, xpu_batch_key_fn key_of,
					   void *ctx)
{
	struct top_ctx c = { .t = t, .d = d, .key_of = key_of, .ctx = ctx };
	struct xpu_batch_top *tops;
	uint32_t n = t->nrows;
	xpu_htab_init(&c.idx);
	tops = calloc(n + 1, sizeof(*tops));
	c.sorted = malloc((n + 1) * sizeof(uint64_t));
	c.row_of = malloc((n + 1) * sizeof(uint32_t));
	if (tops && c.sorted && c.row_of) {
		for (uint32_t i = 0; i < n; i++)
			c.row_of[i] = i;
		qsort_r(c.row_of, n, sizeof(uint32_t), by_key, t->keys);
		for (uint32_t i = 0; i < n; i++)
			c.sorted[i] = t->keys[c.row_of[i]];
		xpu_stacks_each(st, (enum xpu_window)window, 0, 0, top_one, &c);
		for (uint32_t i = 0; i < c.n; i++)
			keep_top(&tops[c.v[i].row], &c.v[i]);
	}
	if (c.oom) {
		free(tops);
		tops = NULL;
	}
	free(c.sorted);
	free(c.row_of);
	free(c.v);
	xpu_htab_free(&c.idx);
	return tops;
}

void xpu_batch_json_frames(struct xpu_json *j, const struct xpu_dict *d, uint32_t comm,
			   uint32_t stack)
{
	char frame[1100];
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(d, stack, &n);
	xpu_json_arr(j, "frames");
	xpu_json_str(j, NULL, xpu_dict_str_get(d, comm));
	for (uint32_t i = 0; i < n; i++) {
		xpu_folded_frame(d, frames[i], frame, sizeof(frame));
		xpu_json_str(j, NULL, frame);
	}
	xpu_json_end(j, ']');
}

void xpu_batch_json_cells(struct xpu_json *j, const struct xpu_table *t, uint32_t r)
{
	const struct xpu_cell *row = xpu_table_row(t, r);
	for (uint32_t c = 0; c < t->ncols; c++) {
		const struct xpu_col *col = &t->cols[c];
		if (col->flags & XPU_COL_HIDDEN)
			continue;
		if (row[c].na)
			xpu_json_null(j, col->key);
		else if (col->kind == XPU_CELL_STR)
			xpu_json_str(j, col->key, row[c].s);
		else if (col->kind == XPU_CELL_PCT || col->kind == XPU_CELL_RATE || col->kind == XPU_CELL_ERR)
			xpu_json_num(j, col->key, row[c].d);
		else
			xpu_json_int(j, col->key, row[c].i);
	}
}

const char *xpu_batch_state_name(int st)
{
	static const char *names[] = { "off", "active", "waiting", "failed" };
	return st >= 0 && st <= XPU_SRC_FAILED ? names[st] : "off";
}
