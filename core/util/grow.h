/* SPDX-License-Identifier: GPL-2.0-only */
/* Growing arrays: one helper instead of a realloc dance in every file. */
#ifndef XPU_GROW_H
#define XPU_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes *p hold at least `need` elements of `elem` bytes, doubling the
 * capacity (from 64).  Returns 0, or -ENOMEM with *p and *cap unchanged. */
int xpu_grow(void **p, uint32_t *cap, size_t need, size_t elem);

#endif
