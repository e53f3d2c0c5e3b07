/* SPDX-License-Identifier: GPL-2.0-only */
/* A table of typed cells: how every view hands its rows to the front-ends.
 *
 * Models fill values; the TUI's table widget, the batch printer and the JSON
 * writer format them.  Sorting and filtering live here so every front-end
 * shows rows in the same order.
 */
#ifndef XPU_TABLE_H
#define XPU_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum xpu_cell_kind {
	XPU_CELL_INT = 0,	/* integer count */
	XPU_CELL_PCT = 1,	/* percentage, double */
	XPU_CELL_STR = 2,	/* text */
	XPU_CELL_NS = 3,	/* duration in nanoseconds, shown scaled */
	XPU_CELL_RATE = 4,	/* per second, double */
	XPU_CELL_BYTES = 5,	/* size in bytes, shown scaled */
	XPU_CELL_CPUTIME = 6,	/* CPU time in nanoseconds, shown as htop's TIME+ */
	XPU_CELL_ERR = 7,	/* an estimate's uncertainty, percent, double: "+-4%", blank when 0
				 * (exact), "?" when unknown (na) */
};

enum {
	XPU_COL_LEFT = 1,	/* left-aligned (text) */
	XPU_COL_FLEX = 2,	/* takes the remaining width (last text column) */
	XPU_COL_HIDDEN = 4,	/* not shown (a column this table variant lacks) */
	XPU_COL_JSON_ONLY = 8,	/* in JSON, not on screen or in text output */
	XPU_COL_SPARE = 16,	/* on screen where there is room: dropped before any other
				 * column where the terminal is narrow (htop's NI, VIRT, MEM%) */
};

struct xpu_col {
	const char *title;	/* column heading */
	const char *key;	/* JSON key */
	uint8_t kind;		/* enum xpu_cell_kind */
	uint8_t width;		/* minimum width on screen */
	uint8_t flags;
};

struct xpu_cell {
	union {
		int64_t i;
		double d;
		const char *s;	/* owned by the dict or the table's arena */
	};
	uint8_t na;		/* value unknown: shown as "N/A", JSON null */
};

struct xpu_table {
	const struct xpu_col *cols;
	uint32_t ncols;
	uint32_t nrows, cap;
	struct xpu_cell *cells;	/* nrows * ncols */
	uint64_t *keys;		/* one per row: what a selection follows (pid, tid, ...) */
	int sort_col;
	int reverse;
	char *arena;		/* text owned by the table */
	size_t arena_len, arena_cap;
};

/* Whether a column is drawn on screen and in text output. */
static inline int xpu_col_shown(const struct xpu_col *c)
{
	return !(c->flags & (XPU_COL_HIDDEN | XPU_COL_JSON_ONLY));
}

void xpu_table_init(struct xpu_table *t, const struct xpu_col *cols, uint32_t ncols);
void xpu_table_reset(struct xpu_table *t);	/* drops rows, keeps columns */
void xpu_table_free(struct xpu_table *t);
/* Appends a row and returns its cells (zeroed), or NULL when out of memory. */
struct xpu_cell *xpu_table_add(struct xpu_table *t, uint64_t key);
static inline struct xpu_cell *xpu_table_row(const struct xpu_table *t, uint32_t r)
{
	return &t->cells[(size_t)r * t->ncols];
}
/* Copies text into the table's arena; returns a pointer valid until reset. */
const char *xpu_table_strdup(struct xpu_table *t, const char *s);
/* Sorts rows by column (numbers descending, text ascending; reverse flips). */
void xpu_table_sort(struct xpu_table *t, int col, int reverse);
/* The same, rows that tie on col ordered by then (-1: none). */
void xpu_table_sort_then(struct xpu_table *t, int col, int then, int reverse);
/* Keeps rows where a text cell contains `needle` (case-insensitive) or an
 * integer cell equals it.  An empty needle keeps every row. */
void xpu_table_filter(struct xpu_table *t, const char *needle);
/* htop's tree: each row under the row whose key its parent_col holds
 * (siblings in the order the rows had), rows without a parent in the table
 * as roots; label_col's text is prefixed "|- ", "`- " and "|  " by depth.
 * 0, or -1 out of memory (the rows as they were). */
int xpu_table_tree(struct xpu_table *t, int parent_col, int label_col);
/* Keeps rows whose text cell col is exactly text (htop's u); an empty text
 * keeps every row. */
void xpu_table_filter_col(struct xpu_table *t, int col, const char *text);
/* Index of the row with this key, or -1. */
int xpu_table_find(const struct xpu_table *t, uint64_t key);
/* The row selected once the table is rebuilt: the one at the same position
 * row (clamped), as htop keeps its cursor while rows re-sort; when
 * following, the row of key, or, where key is gone, the same position with
 * *lost set.  -1 for an empty table. */
int xpu_table_keep_row(const struct xpu_table *t, uint64_t key, int row, int follow, int *lost);
/* Formats one cell for text output into buf (width is a hint for scaling). */
size_t xpu_cell_format(const struct xpu_col *col, const struct xpu_cell *c, char *buf,
		       size_t size);

#endif
