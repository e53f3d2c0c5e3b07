/* SPDX-License-Identifier: GPL-2.0-only */
/* The core half of a view: what its part of the snapshot is made of, and
 * its descriptor, struct xpu_snap_view, defined in core/session/snap_<name>.c
 * and registered in view_list.h.  The outputs' half is struct
 * xpu_batch_view (core/outputs/batch.h), the TUI's struct xpu_view_desc
 * (tui/views.h); all three know the view by its enum xpu_view. */
#ifndef XPU_SNAP_VIEW_H
#define XPU_SNAP_VIEW_H

#include <stdint.h>

#include "table.h"

struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

/* Whether a data source is delivering, and if not, what the user can do. */
enum xpu_src_state { XPU_SRC_OFF = 0, XPU_SRC_ACTIVE = 1, XPU_SRC_WAITING = 2, XPU_SRC_FAILED = 3 };

struct xpu_src_status {
	enum xpu_src_state state;
	char text[1024];	/* one line: what is active, or what is missing and how to fix it */
};

/* A view's further table, sorted by --sort too. */
struct xpu_col_set {
	const struct xpu_col *cols;
	uint32_t n;
};

#define XPU_SNAP_MORE_MAX 4

struct xpu_snap_view {
	const char *name;	/* "cpu": --view, the settings file's sort-cpu and reverse-cpu */
	/* The columns that sort it (--sort, sort-<name> =, by their JSON key):
	 * its table's, then, numbered after them, each further table's in turn
	 * (the NPU's driver functions, clients, chains); a key two tables have
	 * sorts the first that has it. */
	const struct xpu_col *cols;
	uint32_t ncols;
	struct xpu_col_set more[XPU_SNAP_MORE_MAX];
	/* Sets up and frees its part of the snapshot (optional). */
	void (*init)(struct xpu_snapshot *s);
	void (*free)(struct xpu_snapshot *s);
	/* Fills its part from the session's models for these choices; 0 or -1. */
	int (*build)(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs);
};

/* The column of further table k (0: the first after the view's own) that
 * the sort column sort_col (as --sort numbers them) names, or -1. */
int xpu_snap_more_col(const struct xpu_snap_view *d, int k, int sort_col);

#endif
