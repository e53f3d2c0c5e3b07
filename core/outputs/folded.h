/* SPDX-License-Identifier: GPL-2.0-only */
/* The folded stack format that FlameGraph's flamegraph.pl, speedscope and
 * most flamegraph tools read: one line per stack, frames root to leaf joined by
 * ';', a space, an integer count.  Kernel frames end in _[k], JIT frames in
 * _[j], GPU kernels in _[g]; ';' inside a name becomes ':' and control
 * characters become '?', so every line parses. */
#ifndef XPU_FOLDED_H
#define XPU_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

struct xpu_dict;

struct xpu_folded_sel {
	enum xpu_window window;
	const uint64_t *keys;	/* pids (or tids with by_tid) to include, sorted
				 * (xpu_folded_sort_keys); NULL = all */
	uint32_t nkeys;
	int by_tid;
	uint64_t multiplier;	/* count = weight * multiplier / divisor (0 = 1): */
	uint64_t divisor;	/* ns -> us is 1/1000; CPU samples -> us at 99 Hz is 10101/1 */
};

/* Sorts keys for xpu_folded_sel.keys. */
void xpu_folded_sort_keys(uint64_t *keys, uint32_t n);

/* One frame's folded text.  Returns the length written. */
size_t xpu_folded_frame(const struct xpu_dict *d, uint32_t frame, char *buf, size_t size);
/* Writes the selected stacks, "comm;frame;...;leaf count", merged and sorted.
 * Returns the number of lines, or -1 on a write error. */
long xpu_folded_write(FILE *f, const struct xpu_dict *d, const struct xpu_stacks *s,
		      const struct xpu_folded_sel *sel);

#endif
