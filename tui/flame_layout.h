/* Where each flamegraph node goes: a pure function of the tree and the pane.
 *
 * Icicle layout: the root spans the top row, one row per depth below it;
 * a node's columns are proportional to its value relative to the root's and
 * children sit left to right in the tree's order (heaviest first).  Nodes
 * narrower than one column are left out, and so is everything above them.
 * Knows nothing about CPUs or GPUs: any struct xpu_flame will do.
 */
#ifndef XPU_TUI_FLAME_LAYOUT_H
#define XPU_TUI_FLAME_LAYOUT_H

#include <stdint.h>

#include "flame.h"

struct xpu_flame_box {
	uint32_t node;		/* index into f->nodes */
	int row, col, width;	/* within the pane; row = depth */
	uint64_t start;		/* value of everything left of it, in root units */
};

/* Fills out[] (room for `max` boxes; f->n always suffices) in breadth-first
 * order, parents before children, and returns how many were placed. */
uint32_t xpu_flame_layout(const struct xpu_flame *f, int rows, int cols,
			  struct xpu_flame_box *out, uint32_t max);

#endif
