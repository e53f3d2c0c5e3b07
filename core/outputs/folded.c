/* SPDX-License-Identifier: GPL-2.0-only */
#include "folded.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "grow.h"
#include "htab.h"

static const char *suffix(uint32_t kind)
{
	switch (kind) {
	case XPU_FRAME_KERNEL:
		return "_[k]";
	case XPU_FRAME_JIT:
		return "_[j]";
	case XPU_FRAME_GPU:
		return "_[g]";
	default:
		return "";
	}
}

/* Copies text, making it safe inside a folded line. */
static size_t put_clean(char *buf, size_t size, size_t at, const char *s)
{
	for (; *s && at + 1 < size; s++) {
		unsigned char c = (unsigned char)*s;
		buf[at++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[at] = '\0';
	return at;
}

size_t xpu_folded_frame(const struct xpu_dict *d, uint32_t frame, char *buf, size_t size)
{
	char text[1024];
	const struct xpu_frame *f = xpu_dict_frame_get(d, frame);
	if (!size)
		return 0;
	xpu_frame_text(d, frame, text, sizeof(text));
	size_t n = put_clean(buf, size, 0, text[0] ? text : "[unknown]");
	return put_clean(buf, size, n, f ? suffix(f->kind) : "");
}

struct line {
	uint32_t comm, stack;
	uint64_t weight;
	char *text;
};

struct collect {
	const struct xpu_folded_sel *sel;
	struct line *v;
	uint32_t n, cap;
	struct xpu_htab idx;
	int oom;
};

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void xpu_folded_sort_keys(uint64_t *keys, uint32_t n)
{
	if (n)
		qsort(keys, n, sizeof(*keys), key_cmp);
}

static int line_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct collect *c = ctx;
	const struct line *l = k;
	return c->v[i].comm == l->comm && c->v[i].stack == l->stack;
}

static int collect_one(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct collect *c = arg;
	const struct xpu_folded_sel *sel = c->sel;
	if (sel->keys) {
		uint64_t k = sel->by_tid ? e->tid : e->pid;
		if (!bsearch(&k, sel->keys, sel->nkeys, sizeof(k), key_cmp))
			return 0;
	}
	struct line l = { e->comm, e->stack, weight, NULL };
	uint64_t h = xpu_hash_u32s(&l.comm, 2, 0xf01d);
	uint32_t i = xpu_htab_find(&c->idx, h, line_eq, c, &l);
	if (i != UINT32_MAX) {
		c->v[i].weight += weight;
		return 0;
	}
	if (xpu_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		goto oom;
	c->v[c->n] = l;
	if (xpu_htab_put(&c->idx, h, c->n) < 0)
		goto oom;
	c->n++;
	return 0;
oom:
	c->oom = 1;
	return -1;
}

/* flamegraph.pl reads "a;b NAME 12 34" as a differential line (two counts),
 * so a leaf frame that ends in a space and a number has '_' for that space. */
static void guard_leaf(char *buf, size_t at)
{
	size_t i = at;
	while (i > 0 && isdigit((unsigned char)buf[i - 1]))
		i--;
	if (i > 0 && buf[i - 1] == '.') {
		size_t j = i - 1;
		while (j > 0 && isdigit((unsigned char)buf[j - 1]))
			j--;
		if (j < i - 1)
			i = j;
	}
	if (i > 0 && i < at && isdigit((unsigned char)buf[i]) && buf[i - 1] == ' ')
		buf[i - 1] = '_';
}

static char *render(const struct xpu_dict *d, const struct line *l)
{
	size_t size = 4096, at;
	char *buf = malloc(size);
	if (!buf)
		return NULL;
	const char *comm = xpu_dict_str_get(d, l->comm);
	at = put_clean(buf, size, 0, *comm ? comm : "[unknown]");
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(d, l->stack, &n);
	for (uint32_t i = 0; i < n; i++) {
		char frame[1100];
		size_t len = xpu_folded_frame(d, frames[i], frame, sizeof(frame));
		if (at + len + 2 > size) {
			char *p = realloc(buf, size = (at + len + 2) * 2);
			if (!p) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
		buf[at++] = ';';
		memcpy(buf + at, frame, len + 1);
		at += len;
	}
	guard_leaf(buf, at);
	return buf;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

long xpu_folded_write(FILE *f, const struct xpu_dict *d, const struct xpu_stacks *s,
		      const struct xpu_folded_sel *sel)
{
	struct collect c = { .sel = sel };
	uint64_t div = sel->divisor ? sel->divisor : 1, mul = sel->multiplier ? sel->multiplier : 1;
	long lines = 0;

	xpu_htab_init(&c.idx);
	xpu_stacks_each(s, sel->window, 0, 0, collect_one, &c);
	xpu_htab_free(&c.idx);
	for (uint32_t i = 0; i < c.n && !c.oom; i++)
		if (!(c.v[i].text = render(d, &c.v[i])))
			c.oom = 1;
	if (!c.oom && c.n)
		qsort(c.v, c.n, sizeof(*c.v), by_text);
	for (uint32_t i = 0; i < c.n && !c.oom; i++) {
		uint64_t count = (c.v[i].weight * mul + div / 2) / div;
		if (!count)
			continue;
		if (fprintf(f, "%s %llu\n", c.v[i].text, (unsigned long long)count) < 0)
			c.oom = 1;
		lines++;
	}
	for (uint32_t i = 0; i < c.n; i++)
		free(c.v[i].text);
	free(c.v);
	return c.oom ? -1 : lines;
}
