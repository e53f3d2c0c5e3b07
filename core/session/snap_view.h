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
	char text[640];		/* one line: what is active, or what is missing and how to fix it */
};

struct xpu_snap_view {
	const char *name;	/* "cpu": --view, the settings file's sort-cpu and reverse-cpu */
	/* The columns that sort it (--sort, sort-<name> =, by their JSON key):
	 * its table's, then, numbered after them, a second table's (none: 0). */
	const struct xpu_col *cols;
	uint32_t ncols;
	const struct xpu_col *more_cols;
	uint32_t nmore_cols;
	/* Sets up and frees its part of the snapshot (optional). */
	void (*init)(struct xpu_snapshot *s);
	void (*free)(struct xpu_snapshot *s);
	/* Fills its part from the session's models for these choices; 0 or -1. */
	int (*build)(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs);
};

#endif
