#include "stacks.h"

#include "grow.h"
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
	s->window = window_ticks ? window_ticks : 1;
	s->ring = calloc(s->window, sizeof(*s->ring));
	return s->ring ? 0 : -ENOMEM;
}

void xpu_stacks_free(struct xpu_stacks *s)
{
	for (uint32_t i = 0; s->ring && i < s->window; i++)
		free(s->ring[i].v);
	free(s->ring);
	free(s->v);
	free(s->touched);
	xpu_htab_free(&s->idx);
	memset(s, 0, sizeof(*s));
}

int xpu_stacks_add(struct xpu_stacks *s, uint32_t pid, uint32_t tid, uint32_t stack,
		   uint32_t comm, uint64_t weight)
{
	struct key k = { pid, tid, stack };
	uint64_t h = key_hash(&k);
	uint32_t i = xpu_htab_find(&s->idx, h, entry_eq, s, &k);

	if (i == UINT32_MAX) {
		if (xpu_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
			return -ENOMEM;
		i = s->n;
		s->v[i] = (struct xpu_stack_entry){ .pid = pid, .tid = tid, .stack = stack };
		if (xpu_htab_put(&s->idx, h, i) < 0)
			return -ENOMEM;
		s->n++;
	}
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

/* Reuses the oldest bucket for the tick being closed. */
void xpu_stacks_tick(struct xpu_stacks *s)
{
	struct xpu_bucket *b = &s->ring[s->head];

	if (s->filled == s->window) {
		for (uint32_t j = 0; j < b->n; j++) {
			s->v[b->v[j].idx].recent -= b->v[j].w;
			s->sum_recent -= b->v[j].w;
		}
	} else {
		s->filled++;
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
	s->head = (s->head + 1) % s->window;
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
