/* SPDX-License-Identifier: GPL-2.0-only */
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
	xpu_htab_init(&d->pend_idx);
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
	for (uint32_t i = 0; i < d->npend; i++) {
		free(d->pend[i].stacks);
		free(d->pend[i].exp);
	}
	free(d->pend);
	free(d->fstate);
	free(d->exp_log);
	xpu_htab_free(&d->pend_idx);
	memset(d, 0, sizeof(*d));
}

struct bytes { const char *s; size_t n; };

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct xpu_dict *d = ctx;
	const struct bytes *b = key;
	return d->strs[idx].len == b->n && memcmp(d->arena + d->strs[idx].off, b->s, b->n) == 0;
}

uint32_t xpu_dict_str_find(const struct xpu_dict *d, const char *s, size_t len)
{
	struct bytes key = { s, len };
	uint32_t idx = xpu_htab_find(&d->str_idx, xpu_hash_bytes(s, len, STR_SEED), str_eq, d, &key);
	return idx == UINT32_MAX ? 0 : idx + 1;
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

/* ---- pending frames ---- */

static int pend_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct xpu_dict *d = ctx;
	return d->pend[idx].frame == *(const uint32_t *)key;
}

static struct xpu_dict_pend *pend_of(const struct xpu_dict *d, uint32_t frame)
{
	uint32_t i = xpu_htab_find(&d->pend_idx, xpu_hash_u64(frame), pend_eq, d, &frame);
	return i == UINT32_MAX ? NULL : &d->pend[i];
}

/* Frames with every expanded frame replaced by its expansion.  Expansions
 * may hold frames expanded later, hence the recursion (bounded: a frame's
 * expansion only ever holds frames older than its expansion).  Past
 * XPU_DICT_MAX_DEPTH the root end is cut, as the leaf end says the most, so
 * the walk goes from the leaf end and stops once the stack is full.  Nested
 * expansions could still make it visit a frame for every path through them
 * (a recording's expansions are whatever its writer chose: 512 frames that
 * each expand to 512 ... is 512^8 visits), so it also stops after
 * SUBST_VISITS frames, which an honest stack never nears; what it had by then
 * is the leaf end. */
#define SUBST_VISITS (8 * XPU_DICT_MAX_DEPTH)

struct subst {
	uint32_t *out;	/* filled from the end: out[XPU_DICT_MAX_DEPTH - n ...] */
	uint32_t n, visits;
};

/* 0 once the stack is full or the visits are spent. */
static int subst_emit(const struct xpu_dict *d, struct subst *s, uint32_t f, int depth)
{
	const struct xpu_dict_pend *p;
	if (s->n >= XPU_DICT_MAX_DEPTH || s->visits >= SUBST_VISITS)
		return 0;
	s->visits++;
	if (depth <= 8 && xpu_dict_frame_state(d, f) == XPU_FRAME_EXPANDED && (p = pend_of(d, f))) {
		for (uint32_t i = p->nexp; i-- > 0;)
			if (!subst_emit(d, s, p->exp[i], depth + 1))
				return 0;
		return 1;
	}
	s->out[XPU_DICT_MAX_DEPTH - ++s->n] = f;
	return 1;
}

static uint32_t substitute(const struct xpu_dict *d, const uint32_t *in, uint32_t n, uint32_t *out)
{
	uint32_t tmp[XPU_DICT_MAX_DEPTH];
	struct subst s = { tmp, 0, 0 };
	for (uint32_t i = n; i-- > 0;)
		if (!subst_emit(d, &s, in[i], 0))
			break;
	memcpy(out, tmp + XPU_DICT_MAX_DEPTH - s.n, s.n * sizeof(uint32_t));
	return s.n;
}

static int has_state(const struct xpu_dict *d, const uint32_t *v, uint32_t n, int state)
{
	for (uint32_t i = 0; i < n; i++)
		if (xpu_dict_frame_state(d, v[i]) == state)
			return 1;
	return 0;
}

static int contains(const uint32_t *v, uint32_t n, uint32_t f)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == f)
			return 1;
	return 0;
}

/* Remembers that stack id holds the pending frames of v that are not in
 * `except` (frames it was registered with already). */
static void register_pending(struct xpu_dict *d, uint32_t id, const uint32_t *v, uint32_t n,
			     const uint32_t *except, uint32_t nexcept)
{
	for (uint32_t i = 0; i < n; i++) {
		struct xpu_dict_pend *p;
		if (xpu_dict_frame_state(d, v[i]) != XPU_FRAME_PENDING || contains(v, i, v[i]) ||
		    contains(except, nexcept, v[i]) || !(p = pend_of(d, v[i])))
			continue;
		if (xpu_grow((void **)&p->stacks, &p->cap, p->nstacks + 1, sizeof(uint32_t)) == 0)
			p->stacks[p->nstacks++] = id;
	}
}

uint32_t xpu_dict_frame_pending(struct xpu_dict *d, uint32_t kind, uint32_t name, uint32_t module)
{
	struct xpu_frame f = { .name = name, .module = module, .kind = kind };
	if (kind >= XPU_FRAME_KIND_MAX || name > d->nstr || module > d->nstr ||
	    xpu_grow((void **)&d->frames, &d->frame_cap, d->nframes + 1, sizeof(f)) ||
	    xpu_grow((void **)&d->pend, &d->pend_cap, d->npend + 1, sizeof(*d->pend)))
		return 0;
	uint32_t id = d->nframes + 1, old = d->fstate_cap;
	if (id > d->fstate_cap) {
		if (xpu_grow((void **)&d->fstate, &d->fstate_cap, id, 1))
			return 0;
		memset(d->fstate + old, XPU_FRAME_PLAIN, d->fstate_cap - old);
	}
	if (xpu_htab_put(&d->pend_idx, xpu_hash_u64(id), d->npend) < 0)
		return 0;
	d->pend[d->npend++] = (struct xpu_dict_pend){ .frame = id };
	d->frames[d->nframes++] = f;
	d->fstate[id - 1] = XPU_FRAME_PENDING;
	d->pending_now++;
	return id;
}

static int append_stack(struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	if (d->stack_arena_len + n >= UINT32_MAX ||
	    grow_sz((void **)&d->stack_arena, &d->stack_arena_cap, d->stack_arena_len + n, sizeof(uint32_t)))
		return -1;
	if (n)
		memcpy(d->stack_arena + d->stack_arena_len, frames, n * sizeof(uint32_t));
	return 0;
}

/* Stack id gets its pending frame's expansion; its old frames stay in the
 * arena until the next sweep packs it. */
static void rewrite(struct xpu_dict *d, uint32_t id, uint32_t frame)
{
	uint32_t old[XPU_DICT_MAX_DEPTH], new[XPU_DICT_MAX_DEPTH], n;
	const uint32_t *cur = xpu_dict_stack_get(d, id, &n);
	if (!cur || !contains(cur, n, frame))
		return;
	memcpy(old, cur, n * sizeof(uint32_t));
	uint32_t m = substitute(d, old, n, new);
	if (append_stack(d, new, m) < 0)
		return;
	xpu_htab_del(&d->stack_idx, xpu_hash_u32s(old, n, STACK_SEED), id - 1);
	d->stacks[id - 1] = (struct xpu_span){ (uint32_t)d->stack_arena_len, m };
	d->stack_arena_len += m;
	struct idlist key = { new, m };
	uint64_t h = xpu_hash_u32s(new, m, STACK_SEED);
	if (xpu_htab_find(&d->stack_idx, h, stack_eq, d, &key) == UINT32_MAX)
		xpu_htab_put(&d->stack_idx, h, id - 1);
	register_pending(d, id, new, m, old, n);
	d->stacks_rewritten++;
}

int xpu_dict_frame_expand(struct xpu_dict *d, uint32_t frame, const uint32_t *frames, uint32_t n)
{
	struct xpu_dict_pend *p = pend_of(d, frame);
	if (!p || xpu_dict_frame_state(d, frame) != XPU_FRAME_PENDING || n > XPU_DICT_MAX_DEPTH)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (frames[i] == 0 || frames[i] > d->nframes || frames[i] == frame)
			return -EINVAL;
	uint32_t *exp = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!exp || xpu_grow((void **)&d->exp_log, &d->exp_cap, d->nexp + 1, sizeof(uint32_t))) {
		free(exp);
		return -ENOMEM;
	}
	memcpy(exp, frames, n * sizeof(uint32_t));
	p->exp = exp;
	p->nexp = n;
	d->fstate[frame - 1] = XPU_FRAME_EXPANDED;
	d->pending_now--;
	d->exp_log[d->nexp++] = frame;
	uint32_t *stacks = p->stacks, nstacks = p->nstacks;
	p->stacks = NULL;
	p->nstacks = p->cap = 0;
	for (uint32_t i = 0; i < nstacks; i++)
		rewrite(d, stacks[i], frame);
	free(stacks);
	return 0;
}

uint32_t xpu_dict_resolve(const struct xpu_dict *d, const uint32_t *frames, uint32_t n, uint32_t *out)
{
	return substitute(d, frames, n, out);
}

const uint32_t *xpu_dict_frame_expansion(const struct xpu_dict *d, uint32_t id, uint32_t *n)
{
	const struct xpu_dict_pend *p;
	*n = 0;
	if (xpu_dict_frame_state(d, id) != XPU_FRAME_EXPANDED || !(p = pend_of(d, id)))
		return NULL;
	*n = p->nexp;
	return p->exp;
}

/* ---- stacks ---- */

uint32_t xpu_dict_stack(struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	uint32_t buf[XPU_DICT_MAX_DEPTH];
	if (n > XPU_DICT_MAX_DEPTH || d->marks)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (frames[i] == 0 || frames[i] > d->nframes)
			return 0;
	if (d->npend && has_state(d, frames, n, XPU_FRAME_EXPANDED)) {
		n = substitute(d, frames, n, buf);
		frames = buf;
	}
	struct idlist key = { frames, n };
	uint64_t h = xpu_hash_u32s(frames, n, STACK_SEED);
	uint32_t idx = xpu_htab_find(&d->stack_idx, h, stack_eq, d, &key);
	if (idx != UINT32_MAX)
		return idx + 1;
	if (append_stack(d, frames, n) < 0)
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
	d->stacks[idx] = (struct xpu_span){ (uint32_t)d->stack_arena_len, n };
	d->stack_arena_len += n;
	if (reuse)
		d->nfree--;
	else
		d->nstacks++;
	if (d->pending_now)
		register_pending(d, idx + 1, frames, n, NULL, 0);
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

/* Pending frames forget the stacks a sweep freed (their ids will be reused). */
static void prune_pending(struct xpu_dict *d)
{
	for (uint32_t i = 0; i < d->npend; i++) {
		struct xpu_dict_pend *p = &d->pend[i];
		uint32_t k = 0;
		for (uint32_t j = 0; j < p->nstacks; j++)
			if (xpu_dict_stack_marked(d, p->stacks[j]))
				p->stacks[k++] = p->stacks[j];
		p->nstacks = k;
	}
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
	prune_pending(d);
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
	else if (xpu_dict_frame_state(d, frame) != XPU_FRAME_PLAIN)	/* "libfoo.so+0x1a2b" */
		n = snprintf(buf, size, "%s", xpu_dict_str_get(d, f->name));
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
