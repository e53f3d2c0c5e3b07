/* SPDX-License-Identifier: GPL-2.0-only */
#include "symtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void xpu_symtab_init(struct xpu_symtab *t)
{
	memset(t, 0, sizeof(*t));
}

void xpu_symtab_free(struct xpu_symtab *t)
{
	free(t->v);
	free(t->names);
	xpu_symtab_init(t);
}

static int reserve(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : first;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int xpu_symtab_add(struct xpu_symtab *t, uint64_t start, uint64_t size, const char *name,
		   size_t len, uint32_t aux, uint32_t rank)
{
	/* Indexes and name offsets are 32-bit: larger tables are refused. */
	if (t->n >= UINT32_MAX - 1 || t->names_len + len + 1 > UINT32_MAX ||
	    reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) ||
	    reserve((void **)&t->names, &t->names_cap, t->names_len + len + 1, 1, 4096))
		return -ENOMEM;
	memcpy(t->names + t->names_len, name, len);
	t->names[t->names_len + len] = '\0';
	t->v[t->n++] = (struct xpu_sym){
		.start = start,
		.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
		.name = (uint32_t)t->names_len,
		.aux = aux,
		.rank = rank,
	};
	t->names_len += len + 1;
	return 0;
}

int xpu_symtab_add_ref(struct xpu_symtab *t, uint64_t start, uint64_t size, uint32_t name,
		       uint32_t rank)
{
	if (t->n >= UINT32_MAX - 1 || reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256))
		return -ENOMEM;
	t->v[t->n++] = (struct xpu_sym){
		.start = start,
		.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
		.name = name,
		.rank = rank,
	};
	return 0;
}

void xpu_symtab_shrink(struct xpu_symtab *t)
{
	if (t->cap > t->n && t->n) {
		struct xpu_sym *v = realloc(t->v, t->n * sizeof(*t->v));
		if (v) {
			t->v = v;
			t->cap = t->n;
		}
	}
}

static int cmp_sym(const void *a, const void *b, void *names)
{
	const struct xpu_sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return strcmp((const char *)names + x->name, (const char *)names + y->name);
}

int xpu_symtab_sorted_unique(const struct xpu_symtab *t)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i - 1].start >= t->v[i].start)
			return 0;
	return 1;
}

void xpu_symtab_finish(struct xpu_symtab *t)
{
	/* Symbol tables usually arrive sorted (kallsyms, most linkers): skip
	 * the n log n work then. */
	if (xpu_symtab_sorted_unique(t))
		return;
	qsort_r(t->v, t->n, sizeof(*t->v), cmp_sym, t->names);
	size_t out = 0;
	for (size_t i = 0; i < t->n; i++)
		if (out == 0 || t->v[out - 1].start != t->v[i].start)
			t->v[out++] = t->v[i];
	t->n = out;
}

uint32_t xpu_symtab_find(const struct xpu_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return UINT32_MAX;
	const struct xpu_sym *s = &t->v[lo - 1];
	if (s->size && addr - s->start >= s->size)
		return UINT32_MAX;
	return (uint32_t)(lo - 1);
}

uint32_t xpu_symtab_name_rank(const char *name, size_t len, uint32_t prio)
{
	uint32_t us = 0;
	while (us < len && us < 3 && name[us] == '_')
		us++;
	uint32_t shortness = len >= 0xfff ? 0 : 0xfff - (uint32_t)len;
	return prio << 16 | (3 - us) << 12 | shortness;
}
