/* SPDX-License-Identifier: GPL-2.0-only */
/* The outputs' half of a view: its lines of a text snapshot, its objects of
 * a JSON one and its export (the `s` key, --export).  Each view defines
 * xpu_batch_view_<name> in core/outputs/batch_<name>.c; batch.c lists them
 * in the order they are printed.  The core half is struct xpu_snap_view
 * (core/session/snap_view.h), the TUI's struct xpu_view_desc. */
#ifndef XPU_BATCH_VIEW_H
#define XPU_BATCH_VIEW_H

#include <stddef.h>
#include <stdio.h>

#include "snapshot.h"

struct xpu_json;
struct xpu_session;

struct xpu_batch_view {
	enum xpu_view view;
	void (*text)(FILE *f, const struct xpu_snapshot *s);
	/* Its members of the snapshot's JSON object. */
	void (*json)(struct xpu_json *j, const struct xpu_snapshot *s, const struct xpu_session *sess,
		     const struct xpu_viewstate *vs);
	/* Optional: writes the files of what it shows into dir and says so in
	 * msg; returns how many, 0 with msg saying why none, or -1. */
	int (*export)(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);
};

#define XPU_BATCH_VIEW_DECL(ID, name) extern const struct xpu_batch_view xpu_batch_view_##name;
XPU_VIEW_LIST(XPU_BATCH_VIEW_DECL)
#undef XPU_BATCH_VIEW_DECL

#endif
