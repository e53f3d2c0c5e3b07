/* SPDX-License-Identifier: GPL-2.0-only */
/* Snapshot exports of the current view (the `s` key and --export). */
#ifndef XPU_EXPORT_H
#define XPU_EXPORT_H

#include <stddef.h>

struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

/* Writes the view's export files into dir (NULL = current directory) and
 * describes what was written in msg (paths), for the status line.
 * Returns the number of files written, or -1 (reported). */
int xpu_export_view(struct xpu_session *sess, const struct xpu_snapshot *snap,
		    const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);

#endif
