/* SPDX-License-Identifier: GPL-2.0-only */
/* A sparkline: a rate's recent history in one line of eighth-blocks
 * (▁▂▃▄▅▆▇█), or ASCII levels outside UTF-8 locales.  The model keeps the
 * history; this only scales it to the line. */
#ifndef XPU_TUI_SPARKLINE_H
#define XPU_TUI_SPARKLINE_H

#include <stdint.h>

/* Levels for the newest min(n, w) values of v (oldest first): 0 for zero,
 * else 1-8 in eighths of the largest of them (*max).  Returns the count. */
int xpu_sparkline_levels(const double *v, uint32_t n, int w, uint8_t *levels, double *max);

/* Draws the newest values of v at (y, x), at most w columns wide, the newest
 * at the right end.  Returns the columns drawn. */
int xpu_sparkline_draw(int y, int x, int w, const double *v, uint32_t n);

#endif
