/* SPDX-License-Identifier: GPL-2.0-only */
/* A bounded address -> frame id cache: the hot path of symbolization, one hash
 * probe per warm address.  Entries live in a ring; when it is full the oldest
 * entry gives its slot to the newest (FIFO), so memory stays bounded without
 * the burst of misses that clearing everything would cause.
 */
#ifndef XPU_ADDRCACHE_H
#define XPU_ADDRCACHE_H

#include <stdint.h>

#include "htab.h"

struct xpu_addrcache_ent {
	uint64_t addr;
	uint32_t frame;
};

struct xpu_addrcache {
	struct xpu_addrcache_ent *ring;
	uint32_t n, cap, max, next;	/* next: the slot the next eviction reuses */
	struct xpu_htab idx;
};

void xpu_addrcache_init(struct xpu_addrcache *c, uint32_t max);
/* Empties the cache and releases its memory; it stays usable. */
void xpu_addrcache_clear(struct xpu_addrcache *c);
/* The frame cached for addr, or 0. */
uint32_t xpu_addrcache_get(const struct xpu_addrcache *c, uint64_t addr);
/* Caches addr -> frame (addr must be absent); a failure only loses the entry. */
void xpu_addrcache_put(struct xpu_addrcache *c, uint64_t addr, uint32_t frame);

#endif
