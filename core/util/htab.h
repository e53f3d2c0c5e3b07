/* SPDX-License-Identifier: GPL-2.0-only */
/* An open-addressing index from a 64-bit hash to small integer ids.
 *
 * The table stores only (hash, id) pairs; the objects themselves live in the
 * caller's arrays and the caller's equality callback decides a match.  One
 * mechanism serves the string, frame and stack dictionaries and every
 * per-process table.
 */
#ifndef XPU_HTAB_H
#define XPU_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct xpu_htab {
	uint64_t *hashes;
	uint32_t *ids;		/* id + 1; 0 = empty slot, UINT32_MAX = deleted */
	size_t cap;		/* power of two */
	size_t used;		/* live entries */
	size_t tombs;		/* deleted slots */
};

/* Returns nonzero when object `id` is the one described by `key`. */
typedef int (*xpu_htab_eq)(const void *ctx, uint32_t id, const void *key);

void xpu_htab_init(struct xpu_htab *h);
void xpu_htab_free(struct xpu_htab *h);
/* Finds an id equal to key, or returns UINT32_MAX. */
uint32_t xpu_htab_find(const struct xpu_htab *h, uint64_t hash, xpu_htab_eq eq,
		       const void *ctx, const void *key);
/* Adds id under hash (the caller checked it is absent). Returns -ENOMEM on failure. */
int xpu_htab_put(struct xpu_htab *h, uint64_t hash, uint32_t id);
/* Removes id stored under hash. Returns 0, or -ENOENT. */
int xpu_htab_del(struct xpu_htab *h, uint64_t hash, uint32_t id);
/* Gives each stored id the number map[id] (UINT32_MAX: removes it), for an
 * index over an array that was compacted: one pass over the slots in order,
 * no hashing, the hashes kept.  map covers every id stored. */
void xpu_htab_renumber(struct xpu_htab *h, const uint32_t *map);

/* Hashes used with the table: FNV-1a over bytes, a word-at-a-time hash for
 * id arrays, and a mixer for integers. */
uint64_t xpu_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t xpu_hash_u32s(const uint32_t *w, size_t n, uint64_t seed);
static inline uint64_t xpu_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
