/* SPDX-License-Identifier: GPL-2.0-only */
#include "addrcache.h"

#include <stdlib.h>

void xpu_addrcache_init(struct xpu_addrcache *c, uint32_t max)
{
	c->ring = NULL;
	c->n = c->cap = c->next = 0;
	c->max = max;
	xpu_htab_init(&c->idx);
}

void xpu_addrcache_clear(struct xpu_addrcache *c)
{
	free(c->ring);
	xpu_htab_free(&c->idx);
	xpu_addrcache_init(c, c->max);
}

static int addr_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_addrcache *c = ctx;
	return c->ring[id].addr == *(const uint64_t *)key;
}

uint32_t xpu_addrcache_get(const struct xpu_addrcache *c, uint64_t addr)
{
	uint32_t i = xpu_htab_find(&c->idx, xpu_hash_u64(addr), addr_eq, c, &addr);
	return i == UINT32_MAX ? 0 : c->ring[i].frame;
}

/* The ring grows by doubling up to max, so small processes stay small. */
static int grow(struct xpu_addrcache *c)
{
	uint32_t cap = c->cap ? c->cap * 2 : 64;
	if (cap > c->max)
		cap = c->max;
	struct xpu_addrcache_ent *r = realloc(c->ring, cap * sizeof(*r));
	if (!r)
		return -1;
	c->ring = r;
	c->cap = cap;
	return 0;
}

void xpu_addrcache_put(struct xpu_addrcache *c, uint64_t addr, uint32_t frame)
{
	uint32_t slot;
	if (!c->max)
		return;
	if (c->n == c->cap && c->cap < c->max && grow(c) < 0)
		return;
	if (c->n < c->cap) {
		slot = c->n++;
	} else {
		slot = c->next;
		c->next = (c->next + 1) % c->cap;
		xpu_htab_del(&c->idx, xpu_hash_u64(c->ring[slot].addr), slot);
	}
	c->ring[slot] = (struct xpu_addrcache_ent){ addr, frame };
	/* Out of memory leaves the slot unindexed: a lost entry, nothing worse. */
	xpu_htab_put(&c->idx, xpu_hash_u64(addr), slot);
}
