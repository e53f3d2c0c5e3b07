/* SPDX-License-Identifier: GPL-2.0-only */
/* A flamegraph tree built from weighted stacks.
 *
 * The tree is what the flamegraph widget draws and what the tests inspect:
 * node 0 is the root (its value is the total), children are linked as a list
 * sorted by weight, heaviest first.  Nodes whose weight is below `min_frac` of
 * the total are folded into their parent, so a tree stays small whatever the
 * number of stacks behind it.
 */
#ifndef XPU_FLAME_H
#define XPU_FLAME_H

#include <stdint.h>

#include "stacks.h"

struct xpu_dict;

struct xpu_flame_node {
	uint32_t frame;		/* dict frame id; 0 for the root */
	uint32_t label;		/* dict string shown instead of the frame (root, comm), or 0 */
	uint32_t parent;	/* node index (the root is its own parent) */
	uint32_t first_child;	/* node index, 0 = none */
	uint32_t next;		/* next sibling, 0 = none */
	uint32_t depth;
	uint64_t value;		/* weight of this node and everything above it */
};

struct xpu_flame {
	struct xpu_flame_node *nodes;
	uint32_t n, cap;
	uint32_t max_depth;
	uint64_t total;
};

struct xpu_flame_opts {
	enum xpu_window window;
	uint32_t pid, tid;	/* 0 = all */
	double min_frac;	/* drop nodes lighter than this share of the total */
	uint32_t root_label;	/* dict string for the root, 0 = "all" */
	int per_process;	/* add a level of process names under the root */
};

void xpu_flame_init(struct xpu_flame *f);
void xpu_flame_free(struct xpu_flame *f);
/* Rebuilds f from the stacks matching opts.  Returns 0 or -ENOMEM. */
int xpu_flame_build(struct xpu_flame *f, const struct xpu_stacks *s, struct xpu_dict *d,
		    const struct xpu_flame_opts *opts);

#endif
