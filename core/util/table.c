/* SPDX-License-Identifier: GPL-2.0-only */
#include "table.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void xpu_table_init(struct xpu_table *t, const struct xpu_col *cols, uint32_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
	t->sort_col = -1;
}

void xpu_table_reset(struct xpu_table *t)
{
	t->nrows = 0;
	t->arena_len = 0;
}

void xpu_table_free(struct xpu_table *t)
{
	free(t->cells);
	free(t->keys);
	free(t->arena);
	xpu_table_init(t, t->cols, t->ncols);
}

struct xpu_cell *xpu_table_add(struct xpu_table *t, uint64_t key)
{
	if (t->nrows == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct xpu_cell *c = realloc(t->cells, (size_t)cap * t->ncols * sizeof(*c));
		if (!c)
			return NULL;
		t->cells = c;
		uint64_t *k = realloc(t->keys, (size_t)cap * sizeof(*k));
		if (!k)
			return NULL;
		t->keys = k;
		t->cap = cap;
	}
	struct xpu_cell *row = xpu_table_row(t, t->nrows);
	memset(row, 0, t->ncols * sizeof(*row));
	t->keys[t->nrows++] = key;
	return row;
}

/* The arena only grows between resets; strings are referenced by offset until
 * the table is complete, so growth may move them safely. */
const char *xpu_table_strdup(struct xpu_table *t, const char *s)
{
	size_t n = strlen(s) + 1;
	if (t->arena_len + n > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 4096;
		while (cap < t->arena_len + n)
			cap *= 2;
		char *a = realloc(t->arena, cap);
		if (!a)
			return "";
		/* Re-point cells that referred into the old arena. */
		if (a != t->arena && t->arena) {
			for (size_t i = 0; i < (size_t)t->nrows * t->ncols; i++) {
				const char *p = t->cells[i].s;
				uint8_t kind = t->cols[i % t->ncols].kind;
				if (kind == XPU_CELL_STR && p >= t->arena && p < t->arena + t->arena_len)
					t->cells[i].s = a + (p - t->arena);
			}
		}
		t->arena = a;
		t->arena_cap = cap;
	}
	char *p = t->arena + t->arena_len;
	memcpy(p, s, n);
	t->arena_len += n;
	return p;
}

static int cmp_cell(const struct xpu_col *c, const struct xpu_cell *a, const struct xpu_cell *b)
{
	if (a->na != b->na)
		return a->na ? 1 : -1;	/* unknown values last */
	switch (c->kind) {
	case XPU_CELL_STR:
		return strcasecmp(a->s ? a->s : "", b->s ? b->s : "");
	case XPU_CELL_PCT:
	case XPU_CELL_RATE:
	case XPU_CELL_ERR:
		return a->d < b->d ? 1 : a->d > b->d ? -1 : 0;
	default:
		return a->i < b->i ? 1 : a->i > b->i ? -1 : 0;
	}
}

struct sort_ctx { const struct xpu_table *t; int col, then, reverse; };

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t ra = *(const uint32_t *)pa, rb = *(const uint32_t *)pb;
	const struct xpu_cell *a = xpu_table_row(c->t, ra) + c->col;
	const struct xpu_cell *b = xpu_table_row(c->t, rb) + c->col;
	int r = cmp_cell(&c->t->cols[c->col], a, b);
	if (!r && c->then >= 0)
		r = cmp_cell(&c->t->cols[c->then], xpu_table_row(c->t, ra) + c->then,
			     xpu_table_row(c->t, rb) + c->then);
	if (c->reverse)
		r = -r;
	if (r)
		return r;
	/* Ties keep a stable, predictable order: by key. */
	return c->t->keys[ra] < c->t->keys[rb] ? -1 : c->t->keys[ra] > c->t->keys[rb];
}

static int permute(struct xpu_table *t, const uint32_t *order, uint32_t n)
{
	if (!n) {
		t->nrows = 0;
		return 0;
	}
	struct xpu_cell *cells = malloc(((size_t)n * t->ncols + 1) * sizeof(*cells));
	uint64_t *keys = malloc(((size_t)n + 1) * sizeof(*keys));
	if (!cells || !keys) {
		free(cells);
		free(keys);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(cells + (size_t)i * t->ncols, xpu_table_row(t, order[i]),
		       t->ncols * sizeof(*cells));
		keys[i] = t->keys[order[i]];
	}
	memcpy(t->cells, cells, (size_t)n * t->ncols * sizeof(*cells));
	memcpy(t->keys, keys, (size_t)n * sizeof(*keys));
	t->nrows = n;
	free(cells);
	free(keys);
	return 0;
}

void xpu_table_sort(struct xpu_table *t, int col, int reverse)
{
	xpu_table_sort_then(t, col, -1, reverse);
}

void xpu_table_sort_then(struct xpu_table *t, int col, int then, int reverse)
{
	if (col < 0 || (uint32_t)col >= t->ncols)
		return;
	if ((uint32_t)then >= t->ncols)
		then = -1;
	t->sort_col = col;
	t->reverse = reverse;
	uint32_t *order = malloc(((size_t)t->nrows + 1) * sizeof(uint32_t));
	if (!order)
		return;
	for (uint32_t i = 0; i < t->nrows; i++)
		order[i] = i;
	struct sort_ctx c = { t, col, then, reverse };
	qsort_r(order, t->nrows, sizeof(uint32_t), cmp_rows, &c);
	permute(t, order, t->nrows);
	free(order);
}

static int row_matches(const struct xpu_table *t, uint32_t r, const char *needle, int numeric,
		       long long num)
{
	const struct xpu_cell *row = xpu_table_row(t, r);
	for (uint32_t c = 0; c < t->ncols; c++) {
		if (row[c].na)
			continue;
		if (t->cols[c].kind == XPU_CELL_STR && row[c].s && strcasestr(row[c].s, needle))
			return 1;
		if (numeric && t->cols[c].kind == XPU_CELL_INT && row[c].i == num)
			return 1;
	}
	return 0;
}

void xpu_table_filter(struct xpu_table *t, const char *needle)
{
	if (!needle || !*needle)
		return;
	char *end;
	long long num = strtoll(needle, &end, 10);
	int numeric = *end == '\0';
	uint32_t *keep = malloc(((size_t)t->nrows + 1) * sizeof(uint32_t));
	uint32_t n = 0;
	if (!keep)
		return;
	for (uint32_t r = 0; r < t->nrows; r++)
		if (row_matches(t, r, needle, numeric, num))
			keep[n++] = r;
	permute(t, keep, n);
	free(keep);
}

void xpu_table_filter_col(struct xpu_table *t, int col, const char *text)
{
	if (!text || !*text || (uint32_t)col >= t->ncols || t->cols[col].kind != XPU_CELL_STR)
		return;
	uint32_t *keep = malloc(((size_t)t->nrows + 1) * sizeof(uint32_t));
	uint32_t n = 0;
	if (!keep)
		return;
	for (uint32_t r = 0; r < t->nrows; r++) {
		const struct xpu_cell *c = &xpu_table_row(t, r)[col];
		if (!c->na && c->s && !strcmp(c->s, text))
			keep[n++] = r;
	}
	permute(t, keep, n);
	free(keep);
}

int xpu_table_keep_row(const struct xpu_table *t, uint64_t key, int row, int follow, int *lost)
{
	*lost = 0;
	if (!t->nrows)
		return -1;
	if (follow && key) {
		int r = xpu_table_find(t, key);
		if (r >= 0)
			return r;
		*lost = 1;
	}
	if (row < 0)
		return 0;
	return row < (int)t->nrows ? row : (int)t->nrows - 1;
}

int xpu_table_find(const struct xpu_table *t, uint64_t key)
{
	for (uint32_t r = 0; r < t->nrows; r++)
		if (t->keys[r] == key)
			return (int)r;
	return -1;
}

/* Scales a duration to the largest unit below it: "850ns", "12.5us",
 * "2.00ms", "3.14s". */
static int format_ns(char *buf, size_t size, int64_t ns)
{
	double v = (double)ns;
	if (ns < 1000)
		return snprintf(buf, size, "%" PRId64 "ns", ns);
	if (ns < 1000000)
		return snprintf(buf, size, "%.1fus", v / 1e3);
	if (ns < 1000000000)
		return snprintf(buf, size, "%.2fms", v / 1e6);
	return snprintf(buf, size, "%.2fs", v / 1e9);
}

static int format_bytes(char *buf, size_t size, int64_t b)
{
	static const char *unit[] = { "B", "K", "M", "G", "T" };
	double v = (double)b;
	int u = 0;
	while (v >= 10240 && u < 4) {
		v /= 1024;
		u++;
	}
	return u ? snprintf(buf, size, "%.1f%s", v, unit[u]) : snprintf(buf, size, "%" PRId64 "B", b);
}

/* htop's TIME+: minutes:seconds.hundredths under an hour, then
 * hours h minutes:seconds. */
static int format_cputime(char *buf, size_t size, int64_t ns)
{
	uint64_t cs = ns > 0 ? (uint64_t)ns / 10000000 : 0, s = cs / 100;
	if (s < 3600)
		return snprintf(buf, size, "%" PRIu64 ":%02" PRIu64 ".%02" PRIu64, s / 60, s % 60, cs % 100);
	return snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 ":%02" PRIu64, s / 3600, s / 60 % 60, s % 60);
}

size_t xpu_cell_format(const struct xpu_col *col, const struct xpu_cell *c, char *buf, size_t size)
{
	int n;
	if (!size)
		return 0;
	if (c->na)
		n = snprintf(buf, size, col->kind == XPU_CELL_ERR ? "?" : "N/A");
	else
		switch (col->kind) {
		case XPU_CELL_STR:
			n = snprintf(buf, size, "%s", c->s ? c->s : "");
			break;
		case XPU_CELL_PCT:
			n = snprintf(buf, size, "%.1f", c->d);
			break;
		case XPU_CELL_RATE:
			n = snprintf(buf, size, c->d < 100 ? "%.1f" : "%.0f", c->d);
			break;
		case XPU_CELL_NS:
			n = format_ns(buf, size, c->i);
			break;
		case XPU_CELL_BYTES:
			n = format_bytes(buf, size, c->i);
			break;
		case XPU_CELL_CPUTIME:
			n = format_cputime(buf, size, c->i);
			break;
		case XPU_CELL_ERR:
			n = c->d > 0 ? snprintf(buf, size, "+-%.0f%%", c->d) : snprintf(buf, size, "%s", "");
			break;
		default:
			n = snprintf(buf, size, "%" PRId64, c->i);
		}
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/* A row's place in the tree: its parent's row (-1: a root), its first child
 * and next sibling, in the order the rows had (the sort). */
struct tree_node {
	int parent, first, last, next;
};

struct key_row {
	uint64_t key;
	uint32_t row;
};

static int by_key(const void *a, const void *b)
{
	const struct key_row *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int row_of(const struct key_row *kr, uint32_t n, uint64_t key)
{
	struct key_row k = { key, 0 };
	const struct key_row *f = bsearch(&k, kr, n, sizeof(*kr), by_key);
	return f ? (int)f->row : -1;
}

#define TREE_DEPTH 24	/* deeper rows are drawn at this depth */

/* Walks the subtree of row r: its rows into order[], their prefixes into
 * pre (TREE_DEPTH * 3 + 4 bytes a row).  cont: what the ancestors put before
 * a row at this depth ("|  " or "   " each). */
static void walk(const struct tree_node *nd, int r, char *cont, int depth, uint32_t *order, uint32_t *n,
		 char *pre, uint8_t *seen)
{
	/* Iterative over siblings, recursive over depth (at most TREE_DEPTH
	 * levels on the stack: deeper ones are drawn at that depth). */
	for (; r >= 0; r = nd[r].next) {
		if (seen[r])
			continue;
		seen[r] = 1;
		int is_last = nd[r].next < 0;
		char *p = pre + (size_t)*n * (TREE_DEPTH * 3 + 4);
		int d = depth < TREE_DEPTH ? depth : TREE_DEPTH;
		if (depth > 0)
			snprintf(p, TREE_DEPTH * 3 + 4, "%.*s%s", (d - 1) * 3, cont, is_last ? "`- " : "|- ");
		else
			p[0] = '\0';
		order[(*n)++] = (uint32_t)r;
		if (nd[r].first >= 0) {
			if (depth > 0 && depth < TREE_DEPTH)
				memcpy(cont + (d - 1) * 3, is_last ? "   " : "|  ", 3);
			walk(nd, nd[r].first, cont, depth + 1, order, n, pre, seen);
		}
	}
}

int xpu_table_tree(struct xpu_table *t, int parent_col, int label_col)
{
	uint32_t n = t->nrows, k = 0;
	if (n < 2 || (uint32_t)parent_col >= t->ncols || (uint32_t)label_col >= t->ncols)
		return 0;
	struct key_row *kr = malloc(n * sizeof(*kr));
	struct tree_node *nd = malloc(n * sizeof(*nd));
	uint32_t *order = malloc(n * sizeof(*order));
	uint8_t *seen = calloc(n, 1);
	char *pre = malloc((size_t)n * (TREE_DEPTH * 3 + 4));
	struct xpu_cell *cells = malloc((size_t)t->cap * t->ncols * sizeof(*cells));
	uint64_t *keys = malloc((size_t)t->cap * sizeof(*keys));
	char cont[TREE_DEPTH * 3 + 1];
	int rc = -1;

	if (!kr || !nd || !order || !seen || !pre || !cells || !keys)
		goto out;
	for (uint32_t r = 0; r < n; r++)
		kr[r] = (struct key_row){ t->keys[r], r };
	qsort(kr, n, sizeof(*kr), by_key);
	for (uint32_t r = 0; r < n; r++)
		nd[r] = (struct tree_node){ -1, -1, -1, -1 };
	for (uint32_t r = 0; r < n; r++) {
		const struct xpu_cell *c = &xpu_table_row(t, r)[parent_col];
		int p = c->na ? -1 : row_of(kr, n, (uint64_t)c->i);
		if (p < 0 || p == (int)r)
			continue;
		nd[r].parent = p;
		if (nd[p].last >= 0)
			nd[nd[p].last].next = (int)r;
		else
			nd[p].first = (int)r;
		nd[p].last = (int)r;
	}
	/* Roots in the sorted order; then what a cycle (a damaged recording)
	 * left unreached, each as a root. */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t r = 0; r < n; r++) {
			if (seen[r] || (pass == 0 && nd[r].parent >= 0))
				continue;
			int save = nd[r].next;
			nd[r].next = -1;	/* r alone, not its siblings */
			memset(cont, ' ', sizeof(cont));
			walk(nd, (int)r, cont, 0, order, &k, pre, seen);
			nd[r].next = save;
		}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&cells[(size_t)i * t->ncols], xpu_table_row(t, order[i]), t->ncols * sizeof(*cells));
		keys[i] = t->keys[order[i]];
	}
	free(t->cells);
	free(t->keys);
	t->cells = cells;
	t->keys = keys;
	cells = NULL;
	keys = NULL;
	/* order[i]'s prefix went to pre's i-th place */
	for (uint32_t i = 0; i < n; i++) {
		const char *p = pre + (size_t)i * (TREE_DEPTH * 3 + 4);
		struct xpu_cell *c = &xpu_table_row(t, i)[label_col];
		if (!p[0] || c->na || !c->s)
			continue;
		char buf[TREE_DEPTH * 3 + 4 + 512];
		snprintf(buf, sizeof(buf), "%s%s", p, c->s);
		c->s = xpu_table_strdup(t, buf);
	}
	rc = 0;
out:
	free(kr);
	free(nd);
	free(order);
	free(seen);
	free(pre);
	free(cells);
	free(keys);
	return rc;
}
