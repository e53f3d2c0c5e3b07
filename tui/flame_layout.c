/* SPDX-License-Identifier: GPL-2.0-only */
#include "flame_layout.h"

#include <stdlib.h>

/* Offsets are mapped to columns from the root, not from the parent, so
 * rounding never accumulates: a node's extent is [floor(start * k),
 * floor((start + value) * k)) with k = cols / total, which nests inside its
 * parent's and never overlaps its siblings'. */
static int to_col(uint64_t v, int cols, uint64_t total)
{
	return (int)((unsigned __int128)v * (unsigned)cols / total);
}

static int wide_enough(uint64_t value, int cols, uint64_t total)
{
	return (unsigned __int128)value * (unsigned)cols >= total;
}

uint32_t xpu_tui_flame_layout(const struct xpu_flame *f, int rows, int cols,
			  struct xpu_tui_flame_box *out, uint32_t max)
{
	return xpu_tui_flame_layout_zoom(f, 0, rows, cols, out, max);
}

uint32_t xpu_tui_flame_layout_zoom(const struct xpu_flame *f, uint32_t root, int rows, int cols,
			       struct xpu_tui_flame_box *out, uint32_t max)
{
	uint32_t n = 0;

	if (!f->n || rows <= 0 || cols <= 0 || !max)
		return 0;
	if (root >= f->n)
		root = 0;
	uint64_t total = f->nodes[root].value;
	if (!total)
		return 0;
	/* The nearest ancestors, so that it shows where the zoomed frame sits and
	 * a click on one zooms back out to it. */
	int above = 0;
	for (uint32_t a = root; a && above < rows / 3 && (uint32_t)above + 1 < max; a = f->nodes[a].parent)
		above++;
	uint32_t u = root;
	for (int i = above - 1; i >= 0; i--) {
		u = f->nodes[u].parent;
		out[i] = (struct xpu_tui_flame_box){ .node = u, .row = i, .col = 0, .width = cols };
	}
	n = (uint32_t)above;
	out[n++] = (struct xpu_tui_flame_box){ .node = root, .row = above, .col = 0, .width = cols };
	/* out[] is its own queue: each placed box places its children. */
	for (uint32_t q = (uint32_t)above; q < n; q++) {
		struct xpu_tui_flame_box parent = out[q];
		if (parent.row + 1 >= rows)
			continue;
		uint64_t start = parent.start;
		for (uint32_t c = f->nodes[parent.node].first_child; c && c < f->n;
		     c = f->nodes[c].next) {
			uint64_t v = f->nodes[c].value;
			int col = to_col(start, cols, total);
			int end = to_col(start + v, cols, total);
			if (end > parent.col + parent.width)
				end = parent.col + parent.width;
			if (wide_enough(v, cols, total) && end > col && n < max)
				out[n++] = (struct xpu_tui_flame_box){
					.node = c, .row = parent.row + 1, .col = col,
					.width = end - col, .start = start,
				};
			start += v;
		}
	}
	return n;
}

uint32_t xpu_tui_flame_hit(const struct xpu_flame *f, uint32_t root, int rows, int cols, int row,
		       int col)
{
	uint32_t hit = XPU_FLAME_NONE;
	if (!f->n || row < 0 || row >= rows || col < 0 || col >= cols)
		return hit;
	struct xpu_tui_flame_box *b = malloc((size_t)f->n * sizeof(*b));
	if (!b)
		return hit;
	uint32_t n = xpu_tui_flame_layout_zoom(f, root, rows, cols, b, f->n);
	for (uint32_t i = 0; i < n; i++)
		if (b[i].row == row && col >= b[i].col && col < b[i].col + b[i].width) {
			hit = b[i].node;
			break;
		}
	free(b);
	return hit;
}

uint32_t xpu_tui_flame_zoom_node(const struct xpu_flame *f, const struct xpu_tui_flame_zoom *z)
{
	uint32_t node = 0;
	if (!f->n)
		return 0;
	for (uint32_t i = 0; i < z->n && i < XPU_FLAME_ZOOM_MAX; i++) {
		uint32_t c = f->nodes[node].first_child;
		while (c && c < f->n &&
		       (f->nodes[c].frame != z->path[i].frame || f->nodes[c].label != z->path[i].label))
			c = f->nodes[c].next;
		if (!c || c >= f->n)
			break;
		node = c;
	}
	return node;
}

void xpu_tui_flame_zoom_set(struct xpu_tui_flame_zoom *z, const struct xpu_flame *f, uint32_t node)
{
	uint32_t depth = 0;
	z->n = 0;
	if (node >= f->n)
		return;
	for (uint32_t u = node; u; u = f->nodes[u].parent)
		depth++;
	/* Deeper than a path can hold: the deepest ancestor it can. */
	while (depth > XPU_FLAME_ZOOM_MAX) {
		node = f->nodes[node].parent;
		depth--;
	}
	z->n = depth;
	for (uint32_t u = node; u; u = f->nodes[u].parent) {
		depth--;
		z->path[depth].frame = f->nodes[u].frame;
		z->path[depth].label = f->nodes[u].label;
	}
}
