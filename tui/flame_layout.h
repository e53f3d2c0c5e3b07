/* SPDX-License-Identifier: GPL-2.0-only */
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

struct xpu_tui_flame_box {
	uint32_t node;		/* index into f->nodes */
	int row, col, width;	/* within the pane; row = depth */
	uint64_t start;		/* value of everything left of it, in root units */
};

/* Fills out[] (room for `max` boxes; f->n always suffices) in breadth-first
 * order, parents before children, and returns how many were placed. */
uint32_t xpu_tui_flame_layout(const struct xpu_flame *f, int rows, int cols,
			  struct xpu_tui_flame_box *out, uint32_t max);

/* The same zoomed onto node `root`: root spans the pane at the row under its
 * nearest ancestors (full width, at most a third of the rows), and what is
 * above it is laid out in proportion to root's value.  root 0 is no zoom. */
uint32_t xpu_tui_flame_layout_zoom(const struct xpu_flame *f, uint32_t root, int rows, int cols,
			       struct xpu_tui_flame_box *out, uint32_t max);

#define XPU_FLAME_NONE UINT32_MAX

/* The node drawn at (row, col) of an icicle of rows x cols zoomed onto root
 * (the same layout as drawing uses), or XPU_FLAME_NONE. */
uint32_t xpu_tui_flame_hit(const struct xpu_flame *f, uint32_t root, int rows, int cols, int row,
		       int col);

/* A zoom, kept as the path of frames from the root, so that it survives the
 * tree being rebuilt every refresh (node numbers do not). */
#define XPU_FLAME_ZOOM_MAX 128
struct xpu_tui_flame_zoom {
	uint32_t n;
	struct { uint32_t frame, label; } path[XPU_FLAME_ZOOM_MAX];
};

/* The node the zoom designates in f: the deepest one its path reaches
 * (0, the root, when the tree has none of it). */
uint32_t xpu_tui_flame_zoom_node(const struct xpu_flame *f, const struct xpu_tui_flame_zoom *z);
/* Zooms onto `node` of f (0: zooms out altogether). */
void xpu_tui_flame_zoom_set(struct xpu_tui_flame_zoom *z, const struct xpu_flame *f, uint32_t node);

#endif
