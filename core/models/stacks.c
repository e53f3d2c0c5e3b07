/* SPDX-License-Identifier: GPL-2.0-only */
#include "stacks.h"

#include "dict.h"

#include "grow.h"
#include "trim.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One closed tick: which entries got how much weight. */
struct xpu_bucket {
	struct { uint32_t idx; uint64_t w; } *v;
	uint32_t n, cap;
};

struct key { uint32_t pid, tid, stack; };

static int entry_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_stacks *s = ctx;
	const struct key *key = k;
	const struct xpu_stack_entry *e = &s->v[i];
	return e->pid == key->pid && e->tid == key->tid && e->stack == key->stack;
}

static uint64_t key_hash(const struct key *k)
{
	return xpu_hash_u32s(&k->pid, 3, 0x57ac);
}

int xpu_stacks_init(struct xpu_stacks *s, uint32_t window_ticks)
{
	memset(s, 0, sizeof(*s));
	xpu_htab_init(&s->idx);
	s->max = XPU_STACKS_MAX;
	if (xpu_ticks_init(&s->ticks, window_ticks) < 0)
		return -ENOMEM;
	s->ring = calloc(s->ticks.window, sizeof(*s->ring));
	return s->ring ? 0 : -ENOMEM;
}

void xpu_stacks_free(struct xpu_stacks *s)
{
	for (uint32_t i = 0; s->ring && i < s->ticks.window; i++)
		free(s->ring[i].v);
	free(s->ring);
	xpu_ticks_free(&s->ticks);
	free(s->v);
	free(s->touched);
	free(s->retired);
	xpu_htab_free(&s->idx);
	memset(s, 0, sizeof(*s));
}

/* The entry for (pid, tid, stack), created empty if absent; UINT32_MAX when
 * out of memory. */
static uint32_t entry_get(struct xpu_stacks *s, uint32_t pid, uint32_t tid, uint32_t stack)
{
	struct key k = { pid, tid, stack };
	uint64_t h = key_hash(&k);
	uint32_t i = xpu_htab_find(&s->idx, h, entry_eq, s, &k);

	if (i != UINT32_MAX)
		return i;
	if (xpu_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return UINT32_MAX;
	i = s->n;
	s->v[i] = (struct xpu_stack_entry){ .pid = pid, .tid = tid, .stack = stack };
	if (xpu_htab_put(&s->idx, h, i) < 0)
		return UINT32_MAX;
	s->n++;
	return i;
}

int xpu_stacks_add(struct xpu_stacks *s, uint32_t pid, uint32_t tid, uint32_t stack,
		   uint32_t comm, uint64_t weight)
{
	if (!weight)
		return 0;
	uint32_t i = entry_get(s, pid, tid, stack);
	if (i == UINT32_MAX)
		return -ENOMEM;
	struct xpu_stack_entry *e = &s->v[i];
	if (!e->open) {
		if (xpu_grow((void **)&s->touched, &s->touched_cap, s->ntouched + 1, sizeof(uint32_t)))
			return -ENOMEM;
		s->touched[s->ntouched++] = i;
	}
	e->open += weight;
	if (comm)
		e->comm = comm;
	return 0;
}

/* An entry may age out when nothing of it is in the window or the open
 * bucket; the catch-all (pid 0, aged_stack) never does. */
static int evictable(const struct xpu_stacks *s, const struct xpu_stack_entry *e)
{
	return !e->open && !e->recent && !(e->pid == 0 && e->stack == s->aged_stack && s->aged_stack);
}

/* Moves weight w of an evicted entry to its process's aged-out entry, or to
 * the catch-all when that would not fit under max. */
static void fold_aged(struct xpu_stacks *s, uint32_t pid, uint32_t comm, uint64_t w)
{
	if (!s->aged_stack || !w)
		return;
	uint32_t i = UINT32_MAX;
	struct key k = { pid, 0, s->aged_stack };
	if (pid)
		i = xpu_htab_find(&s->idx, key_hash(&k), entry_eq, s, &k);
	if (i == UINT32_MAX && pid && s->n < s->max)
		i = entry_get(s, pid, 0, s->aged_stack);
	if (i == UINT32_MAX) {
		i = entry_get(s, 0, 0, s->aged_stack);
		comm = 0;
	}
	if (i == UINT32_MAX)
		return;
	s->v[i].total += w;
	if (comm)
		s->v[i].comm = comm;
}

/* Removes the entries marked in go[] (none has weight in the window or the
 * open bucket), keeping the others in order, and renumbers the index. */
static int remove_entries(struct xpu_stacks *s, const uint8_t *go)
{
	uint32_t *remap = malloc((size_t)s->n * sizeof(*remap));
	if (!remap)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		remap[i] = go[i] ? UINT32_MAX : n;
		if (!go[i])
			s->v[n++] = s->v[i];
	}
	s->n = n;
	for (uint32_t b = 0; b < s->ticks.window; b++)
		for (uint32_t j = 0; j < s->ring[b].n; j++)
			s->ring[b].v[j].idx = remap[s->ring[b].v[j].idx];
	/* The index follows the moves in place: rebuilding it (a hash and a
	 * random insert per entry, up to XPU_STACKS_MAX of them, at every tick
	 * where an exited process's entries merge) took a third of a replay's
	 * time (bench/RESULTS.md). */
	xpu_htab_renumber(&s->idx, remap);
	free(remap);
	return 0;
}

/* Ages entries out (see stacks.h).  Runs right after a tick closed, so the
 * touched list is empty and every bucket refers only to entries with weight
 * in the window, which all stay. */
static void trim(struct xpu_stacks *s)
{
	uint32_t nkeep = 0, ncand = 0;
	struct gone { uint32_t pid, comm; uint64_t w; } *gone = NULL;
	uint64_t *w = malloc((size_t)s->n * sizeof(*w));
	uint8_t *go = calloc(s->n ? s->n : 1, 1);
	struct xpu_trim plan;

	if (!w || !go)
		goto out;
	for (uint32_t i = 0; i < s->n; i++) {
		if (evictable(s, &s->v[i]))
			w[ncand++] = s->v[i].total;
		else
			nkeep++;
	}
	if (!xpu_trim_plan(s->max, nkeep, w, ncand, &plan))
		goto out;
	gone = malloc((size_t)ncand * sizeof(*gone));
	if (!gone)
		goto out;
	uint32_t ngone = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		struct xpu_stack_entry *e = &s->v[i];
		if (!evictable(s, e) || xpu_trim_keeps(&plan, e->total))
			continue;
		go[i] = 1;
		/* A process's own aged-out entry goes to the catch-all. */
		int aged = s->aged_stack && e->stack == s->aged_stack;
		gone[ngone++] = (struct gone){ aged ? 0 : e->pid, aged ? 0 : e->comm, e->total };
	}
	if (remove_entries(s, go) < 0)
		goto out;
	s->aged_out += ngone;
	for (uint32_t j = 0; j < ngone; j++)
		fold_aged(s, gone[j].pid, gone[j].comm, gone[j].w);
out:
	free(gone);
	free(w);
	free(go);
}

void xpu_stacks_retire(struct xpu_stacks *s, uint32_t pid)
{
	if (pid && xpu_grow((void **)&s->retired, &s->retired_cap, s->nretired + 1, sizeof(uint32_t)) == 0)
		s->retired[s->nretired++] = pid;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Merges the idle entries of exited processes into entries keyed by process
 * name (stacks.h).  A pid stays retired while it still has weight in the
 * window. */
static void merge_retired(struct xpu_stacks *s)
{
	struct merge { uint32_t comm, stack; uint64_t w; } *m = NULL;
	uint8_t *go = calloc(s->n ? s->n : 1, 1), *busy = calloc(s->nretired, 1);
	uint32_t nm = 0, nr = 0;

	if (!go || !busy)
		goto out;
	qsort(s->retired, s->nretired, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < s->n; i++) {
		struct xpu_stack_entry *e = &s->v[i];
		uint32_t *r = e->pid ? bsearch(&e->pid, s->retired, s->nretired, sizeof(uint32_t), cmp_u32) : NULL;
		if (!r)
			continue;
		if (!evictable(s, e))
			busy[r - s->retired] = 1;
		else
			go[i] = 1, nm++;
	}
	if (nm) {
		if (!(m = malloc((size_t)nm * sizeof(*m))))
			goto out;
		nm = 0;
		for (uint32_t i = 0; i < s->n; i++)
			if (go[i])
				m[nm++] = (struct merge){ s->v[i].comm, s->v[i].stack, s->v[i].total };
		if (remove_entries(s, go) < 0)
			goto out;
		for (uint32_t j = 0; j < nm; j++) {
			uint32_t i = entry_get(s, 0, m[j].comm, m[j].stack);
			if (i == UINT32_MAX)
				i = entry_get(s, 0, 0, s->aged_stack);
			if (i == UINT32_MAX)
				continue;
			s->v[i].total += m[j].w;
			s->v[i].comm = m[j].comm;
		}
		s->merged += nm;
	}
	/* Keep the pids with weight still in the window; duplicates go. */
	for (uint32_t k = 0; k < s->nretired; k++)
		if (busy[k] && (nr == 0 || s->retired[nr - 1] != s->retired[k]))
			s->retired[nr++] = s->retired[k];
	s->nretired = nr;
out:
	free(m);
	free(go);
	free(busy);
}

/* Reuses the oldest bucket for the tick being closed: the entries' sparse
 * counterpart of a ring of window.h's counts. */
void xpu_stacks_tick(struct xpu_stacks *s)
{
	int full;
	struct xpu_bucket *b = &s->ring[xpu_ticks_close(&s->ticks, 0, &full)];

	if (full) {
		for (uint32_t j = 0; j < b->n; j++) {
			s->v[b->v[j].idx].recent -= b->v[j].w;
			s->sum_recent -= b->v[j].w;
		}
	}
	b->n = 0;
	xpu_grow((void **)&b->v, &b->cap, s->ntouched, sizeof(*b->v));
	for (uint32_t j = 0; j < s->ntouched; j++) {
		struct xpu_stack_entry *e = &s->v[s->touched[j]];
		uint64_t w = e->open;
		e->open = 0;
		e->total += w;
		s->sum_total += w;
		/* Without room to remember it, weight counts only since the start. */
		if (b->n < b->cap) {
			b->v[b->n].idx = s->touched[j];
			b->v[b->n++].w = w;
			e->recent += w;
			s->sum_recent += w;
		}
	}
	s->ntouched = 0;
	if (s->nretired)
		merge_retired(s);
	if (s->max && s->n > s->max)
		trim(s);
}

int xpu_stacks_each(const struct xpu_stacks *s, enum xpu_window w, uint32_t pid, uint32_t tid,
		    xpu_stacks_fn fn, void *arg)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct xpu_stack_entry *e = &s->v[i];
		uint64_t weight = xpu_stack_weight(e, w);
		if (!weight || (pid && e->pid != pid) || (tid && e->tid != tid))
			continue;
		int r = fn(arg, e, weight);
		if (r)
			return r;
	}
	return 0;
}

void xpu_stacks_mark(const struct xpu_stacks *s, struct xpu_dict *d)
{
	xpu_dict_mark_stack(d, s->aged_stack);
	for (uint32_t i = 0; i < s->n; i++)
		xpu_dict_mark_stack(d, s->v[i].stack);
}
