/* SPDX-License-Identifier: GPL-2.0-only */
#include "htab.h"

#include <errno.h>
#include <stdlib.h>

#define TOMB UINT32_MAX

void xpu_htab_init(struct xpu_htab *h)
{
	h->hashes = NULL;
	h->ids = NULL;
	h->cap = h->used = h->tombs = 0;
}

void xpu_htab_free(struct xpu_htab *h)
{
	free(h->hashes);
	free(h->ids);
	xpu_htab_init(h);
}

uint32_t xpu_htab_find(const struct xpu_htab *h, uint64_t hash, xpu_htab_eq eq,
		       const void *ctx, const void *key)
{
	if (!h->cap)
		return UINT32_MAX;
	size_t mask = h->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		uint32_t slot = h->ids[i];
		if (slot == 0)
			return UINT32_MAX;
		if (slot != TOMB && h->hashes[i] == hash && eq(ctx, slot - 1, key))
			return slot - 1;
	}
}

static void insert(uint64_t *hashes, uint32_t *ids, size_t cap, uint64_t hash, uint32_t slot)
{
	size_t mask = cap - 1;
	size_t i = hash & mask;
	while (ids[i] != 0 && ids[i] != TOMB)
		i = (i + 1) & mask;
	hashes[i] = hash;
	ids[i] = slot;
}

static int rehash(struct xpu_htab *h, size_t cap)
{
	uint64_t *hashes = malloc(cap * sizeof(*hashes));
	uint32_t *ids = calloc(cap, sizeof(*ids));
	if (!hashes || !ids) {
		free(hashes);
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++)
		if (h->ids[i] != 0 && h->ids[i] != TOMB)
			insert(hashes, ids, cap, h->hashes[i], h->ids[i]);
	free(h->hashes);
	free(h->ids);
	h->hashes = hashes;
	h->ids = ids;
	h->cap = cap;
	h->tombs = 0;
	return 0;
}

int xpu_htab_put(struct xpu_htab *h, uint64_t hash, uint32_t id)
{
	/* Keep the load (live + deleted) under 3/4 so probes stay short. */
	if ((h->used + h->tombs + 1) * 4 > h->cap * 3) {
		size_t cap = h->cap ? h->cap : 16;
		while ((h->used + 1) * 2 > cap)
			cap *= 2;
		if (rehash(h, cap) < 0)
			return -ENOMEM;
	}
	insert(h->hashes, h->ids, h->cap, hash, id + 1);
	h->used++;
	return 0;
}

int xpu_htab_del(struct xpu_htab *h, uint64_t hash, uint32_t id)
{
	if (!h->cap)
		return -ENOENT;
	size_t mask = h->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		if (h->ids[i] == 0)
			return -ENOENT;
		if (h->ids[i] == id + 1 && h->hashes[i] == hash) {
			h->ids[i] = TOMB;
			h->used--;
			h->tombs++;
			return 0;
		}
	}
}

void xpu_htab_renumber(struct xpu_htab *h, const uint32_t *map)
{
	for (size_t i = 0; i < h->cap; i++) {
		uint32_t slot = h->ids[i];
		if (slot == 0 || slot == TOMB)
			continue;
		uint32_t to = map[slot - 1];
		if (to == UINT32_MAX) {
			/* A tombstone, not an empty slot: later keys may have probed past it. */
			h->ids[i] = TOMB;
			h->used--;
			h->tombs++;
		} else {
			h->ids[i] = to + 1;
		}
	}
}

uint64_t xpu_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return xpu_hash_u64(h);
}

uint64_t xpu_hash_u32s(const uint32_t *w, size_t n, uint64_t seed)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed ^ n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL + (h >> 29);
	return xpu_hash_u64(h);
}
