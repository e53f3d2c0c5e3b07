#include "dict.h"

#include "grow.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_SEED 0x5354
#define FRAME_SEED 0x4652
#define STACK_SEED 0x5354434b

static int grow_sz(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

void xpu_dict_init(struct xpu_dict *d)
{
	memset(d, 0, sizeof(*d));
	xpu_htab_init(&d->str_idx);
	xpu_htab_init(&d->frame_idx);
	xpu_htab_init(&d->stack_idx);
}

void xpu_dict_free(struct xpu_dict *d)
{
	free(d->arena);
	free(d->strs);
	xpu_htab_free(&d->str_idx);
	free(d->frames);
	xpu_htab_free(&d->frame_idx);
	free(d->stack_arena);
	free(d->stacks);
	xpu_htab_free(&d->stack_idx);
	free(d->stack_free);
	free(d->marks);
	memset(d, 0, sizeof(*d));
}

struct bytes { const char *s; size_t n; };

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct xpu_dict *d = ctx;
	const struct bytes *b = key;
	return d->strs[idx].len == b->n && memcmp(d->arena + d->strs[idx].off, b->s, b->n) == 0;
}

uint32_t xpu_dict_str(struct xpu_dict *d, const char *s, size_t len)
{
	struct bytes key = { s, len };
	if (len >= UINT32_MAX)
		return 0;
	uint64_t h = xpu_hash_bytes(s, len, STR_SEED);
	uint32_t idx = xpu_htab_find(&d->str_idx, h, str_eq, d, &key);
	if (idx != UINT32_MAX)
		return idx + 1;
	if (d->arena_len + len + 1 > UINT32_MAX ||
	    grow_sz((void **)&d->arena, &d->arena_cap, d->arena_len + len + 1, 1) ||
	    xpu_grow((void **)&d->strs, &d->str_cap, d->nstr + 1, sizeof(struct xpu_span)))
		return 0;
	memcpy(d->arena + d->arena_len, s, len);
	d->arena[d->arena_len + len] = '\0';
	d->strs[d->nstr] = (struct xpu_span){ (uint32_t)d->arena_len, (uint32_t)len };
	if (xpu_htab_put(&d->str_idx, h, d->nstr) < 0)
		return 0;
	d->arena_len += len + 1;
	return ++d->nstr;
}

const char *xpu_dict_str_get(const struct xpu_dict *d, uint32_t id)
{
	if (id == 0 || id > d->nstr)
		return "";
	return d->arena + d->strs[id - 1].off;
}

uint32_t xpu_dict_str_len(const struct xpu_dict *d, uint32_t id)
{
	if (id == 0 || id > d->nstr)
		return 0;
	return d->strs[id - 1].len;
}

static int frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct xpu_dict *d = ctx;
	const struct xpu_frame *f = key;
	const struct xpu_frame *g = &d->frames[idx];
	return f->name == g->name && f->module == g->module && f->kind == g->kind;
}

uint32_t xpu_dict_frame(struct xpu_dict *d, uint32_t kind, uint32_t name, uint32_t module)
{
	struct xpu_frame f = { .name = name, .module = module, .kind = kind };
	if (kind >= XPU_FRAME_KIND_MAX || name > d->nstr || module > d->nstr)
		return 0;
	uint64_t h = xpu_hash_u32s(&f.name, 3, FRAME_SEED);
	uint32_t idx = xpu_htab_find(&d->frame_idx, h, frame_eq, d, &f);
	if (idx != UINT32_MAX)
		return idx + 1;
	if (xpu_grow((void **)&d->frames, &d->frame_cap, d->nframes + 1, sizeof(f)))
		return 0;
	d->frames[d->nframes] = f;
	if (xpu_htab_put(&d->frame_idx, h, d->nframes) < 0)
		return 0;
	return ++d->nframes;
}

const struct xpu_frame *xpu_dict_frame_get(const struct xpu_dict *d, uint32_t id)
{
	if (id == 0 || id > d->nframes)
		return NULL;
	return &d->frames[id - 1];
}

struct idlist { const uint32_t *v; uint32_t n; };

static int stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct xpu_dict *d = ctx;
	const struct idlist *l = key;
	return d->stacks[idx].len == l->n &&
	       memcmp(d->stack_arena + d->stacks[idx].off, l->v, l->n * sizeof(uint32_t)) == 0;
}

uint32_t xpu_dict_stack(struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	struct idlist key = { frames, n };
	if (n > XPU_DICT_MAX_DEPTH || d->marks)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (frames[i] == 0 || frames[i] > d->nframes)
			return 0;
	uint64_t h = xpu_hash_u32s(frames, n, STACK_SEED);
	uint32_t idx = xpu_htab_find(&d->stack_idx, h, stack_eq, d, &key);
	if (idx != UINT32_MAX)
		return idx + 1;
	if (d->stack_arena_len + n >= UINT32_MAX ||
	    grow_sz((void **)&d->stack_arena, &d->stack_arena_cap, d->stack_arena_len + n,
		    sizeof(uint32_t)))
		return 0;
	int reuse = d->nfree > 0;	/* a freed id, the lowest (dict.h) */
	if (reuse)
		idx = d->stack_free[d->nfree - 1];
	else if (xpu_grow((void **)&d->stacks, &d->stack_cap, d->nstacks + 1, sizeof(struct xpu_span)))
		return 0;
	else
		idx = d->nstacks;
	if (xpu_htab_put(&d->stack_idx, h, idx) < 0)
		return 0;
	if (n)
		memcpy(d->stack_arena + d->stack_arena_len, frames, n * sizeof(uint32_t));
	d->stacks[idx] = (struct xpu_span){ (uint32_t)d->stack_arena_len, n };
	d->stack_arena_len += n;
	if (reuse)
		d->nfree--;
	else
		d->nstacks++;
	return idx + 1;
}

const uint32_t *xpu_dict_stack_get(const struct xpu_dict *d, uint32_t id, uint32_t *n)
{
	if (!xpu_dict_stack_valid(d, id)) {
		*n = 0;
		return NULL;
	}
	*n = d->stacks[id - 1].len;
	return d->stack_arena + d->stacks[id - 1].off;
}

int xpu_dict_sweep_begin(struct xpu_dict *d)
{
	free(d->marks);
	d->marks = calloc((size_t)d->nstacks / 64 + 1, sizeof(uint64_t));
	return d->marks ? 0 : -ENOMEM;
}

uint32_t xpu_dict_sweep_end(struct xpu_dict *d, void (*freed)(void *arg, uint32_t id), void *arg)
{
	uint32_t nfreed = 0;
	uint32_t *arena = NULL;
	if (!d->marks)
		return 0;
	/* Room for every id that may be freed, before anything changes. */
	if (xpu_grow((void **)&d->stack_free, &d->free_cap, d->nstacks, sizeof(uint32_t)))
		goto out;
	/* The survivors go to a new arena of their size and a quarter: a reused
	 * id's frames may lie anywhere in the old one. */
	size_t len = 0, cap = 0;
	for (uint32_t i = 0; i < d->nstacks; i++)
		if (d->stacks[i].off != XPU_DICT_FREE && (d->marks[i / 64] >> (i % 64) & 1))
			cap += d->stacks[i].len;
	cap += cap / 4 + 1024;	/* room to grow before the next doubling */
	if (!(arena = malloc(cap * sizeof(uint32_t))))
		goto out;
	for (uint32_t i = 0; i < d->nstacks; i++) {
		struct xpu_span *sp = &d->stacks[i];
		if (sp->off == XPU_DICT_FREE)
			continue;
		if (!(d->marks[i / 64] >> (i % 64) & 1)) {
			if (freed)
				freed(arg, i + 1);
			xpu_htab_del(&d->stack_idx,
				     xpu_hash_u32s(d->stack_arena + sp->off, sp->len, STACK_SEED), i);
			sp->off = XPU_DICT_FREE;
			sp->len = 0;
			nfreed++;
			continue;
		}
		if (sp->len)
			memcpy(arena + len, d->stack_arena + sp->off, sp->len * sizeof(uint32_t));
		sp->off = (uint32_t)len;
		len += sp->len;
	}
	free(d->stack_arena);
	d->stack_arena = arena;
	d->stack_arena_cap = cap;
	d->stack_arena_len = len;
	/* Free ids are handed out lowest first, so the id space stays dense. */
	d->nfree = 0;
	for (uint32_t i = d->nstacks; i-- > 0;)
		if (d->stacks[i].off == XPU_DICT_FREE)
			d->stack_free[d->nfree++] = i;
	d->stacks_swept += nfreed;
	d->sweeps++;
out:
	free(d->marks);
	d->marks = NULL;
	return nfreed;
}

size_t xpu_frame_text(const struct xpu_dict *d, uint32_t frame, char *buf, size_t size)
{
	const struct xpu_frame *f = xpu_dict_frame_get(d, frame);
	int n;
	if (!size)
		return 0;
	if (!f)
		n = snprintf(buf, size, "[unknown]");
	else if (f->kind == XPU_FRAME_UNKNOWN && f->module)
		n = snprintf(buf, size, "[unknown] (%s)", xpu_dict_str_get(d, f->module));
	else if (f->kind == XPU_FRAME_UNKNOWN)
		n = snprintf(buf, size, "[unknown]");
	else
		n = snprintf(buf, size, "%s", xpu_dict_str_get(d, f->name));
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}
