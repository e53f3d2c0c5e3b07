#include "flame_layout.h"

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

uint32_t xpu_flame_layout(const struct xpu_flame *f, int rows, int cols,
			  struct xpu_flame_box *out, uint32_t max)
{
	uint32_t n = 0;

	if (!f->n || rows <= 0 || cols <= 0 || !max)
		return 0;
	uint64_t total = f->nodes[0].value;
	if (!total)
		return 0;
	out[n++] = (struct xpu_flame_box){ .node = 0, .row = 0, .col = 0, .width = cols };
	/* out[] is its own queue: each placed box places its children. */
	for (uint32_t q = 0; q < n; q++) {
		struct xpu_flame_box parent = out[q];
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
				out[n++] = (struct xpu_flame_box){
					.node = c, .row = parent.row + 1, .col = col,
					.width = end - col, .start = start,
				};
			start += v;
		}
	}
	return n;
}
