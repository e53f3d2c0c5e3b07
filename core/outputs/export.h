/* SPDX-License-Identifier: GPL-2.0-only */
/* Snapshot exports of the current view (the `s` key and --export). */
#ifndef XPU_EXPORT_H
#define XPU_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "folded.h"

struct xpu_session;
struct xpu_stacks;
struct xpu_table;
struct xpu_snapshot;
struct xpu_viewstate;

/* Writes the view's export files into dir (NULL = current directory) and
 * describes what was written in msg (paths), for the status line.
 * Returns the number of files written, or -1 (reported). */
int xpu_export_view(struct xpu_session *sess, const struct xpu_snapshot *snap,
		    const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);

/* For the views' exports (export_<view>.c): one folded file named after
 * what, from one or more stack sets each with its selection; the path
 * written and its line count come back.  Returns 0 or -1 (reported). */
struct xpu_export_part {
	const struct xpu_stacks *stacks;
	struct xpu_folded_sel sel;
};
int xpu_export_folded(struct xpu_session *sess, const char *dir, const char *what,
		      const struct xpu_export_part *parts, int nparts, char *path, size_t size, long *lines);
/* The sorted keys of a table's rows, or with pid_col >= 0 the pids in that
 * column; malloc'd, *n of them. */
uint64_t *xpu_export_row_keys(const struct xpu_table *t, int pid_col, uint32_t *n);

#endif
