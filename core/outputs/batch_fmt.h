/* SPDX-License-Identifier: GPL-2.0-only */
/* The pieces every view's headless output is made of: tables as aligned text
 * and as JSON members, wall times, source states and each row's heaviest
 * stacks.  batch.c and the per-view batch_*.c files use them; they include
 * this, never batch.h, so that the views are not a circle with the front-end
 * that calls them. */
#ifndef XPU_BATCH_FMT_H
#define XPU_BATCH_FMT_H

#include <stdint.h>
#include <stdio.h>

struct xpu_json;
struct xpu_table;

/* A CLOCK_REALTIME time as local "YYYY-MM-DD HH:MM:SS", or ISO 8601 with
 * milliseconds and the zone when iso is set. */
void xpu_batch_wall_text(uint64_t ns, char *buf, size_t size, int iso);
/* "off", "active", "waiting" or "failed" (an enum xpu_src_state). */
const char *xpu_batch_state_name(int state);
/* A table's headings and rows as aligned text. */
void xpu_batch_print_table(FILE *f, const struct xpu_table *t);
/* Row r's shown cells as JSON members named by the columns' keys. */
void xpu_batch_json_cells(struct xpu_json *j, const struct xpu_table *t, uint32_t r);

/* The heaviest stacks of each row of a table, found in one pass over all
 * stacks: key_of says which row (by row key) a stack belongs to, 0 = none.
 * Stacks holding the same frames (ids that came to hold the same path when
 * a pending frame was expanded) are summed as one, listed by the first id. */
#define XPU_BATCH_TOP 5
struct xpu_dict;
struct xpu_stack_entry;
struct xpu_stacks;
struct xpu_batch_top {
	uint32_t stack[XPU_BATCH_TOP];
	uint32_t comm[XPU_BATCH_TOP];
	uint64_t weight[XPU_BATCH_TOP];
};
typedef uint64_t (*xpu_batch_key_fn)(const struct xpu_stack_entry *e, void *ctx);
/* One entry per table row (free() it), or NULL when out of memory. */
struct xpu_batch_top *xpu_batch_top_stacks(const struct xpu_table *t, const struct xpu_stacks *st,
					   const struct xpu_dict *d, int window, xpu_batch_key_fn key_of,
					   void *ctx);
/* "frames": [comm, frame, ..., leaf] of a stack, in folded frame text. */
void xpu_batch_json_frames(struct xpu_json *j, const struct xpu_dict *d, uint32_t comm,
			   uint32_t stack);

#endif
