/* SPDX-License-Identifier: GPL-2.0-only */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "batch_view.h"
#include "folded.h"
#include "outfile.h"
#include "session.h"

int xpu_export_folded(struct xpu_session *sess, const char *dir, const char *what,
		      const struct xpu_export_part *parts, int nparts, char *path, size_t size, long *lines)
{
	struct xpu_outfile out;
	char stem[96];
	*lines = 0;
	if (xpu_outfile_open(&out, dir) < 0)
		return -1;
	for (int i = 0; i < nparts; i++) {
		long n = xpu_folded_write(out.f, &sess->dict, parts[i].stacks, &parts[i].sel);
		if (n < 0) {
			xpu_err("cannot write the %s export in %s: %s", what, out.dir,
				strerror(errno ? errno : EIO));
			xpu_outfile_abort(&out);
			return -1;
		}
		*lines += n;
	}
	xpu_outfile_stem(stem, sizeof(stem), what);
	return xpu_outfile_commit(&out, stem, "folded", path, size);
}

uint64_t *xpu_export_row_keys(const struct xpu_table *t, int pid_col, uint32_t *n)
{
	uint64_t *keys = malloc(((size_t)t->nrows + 1) * sizeof(uint64_t));
	if (!keys)
		return NULL;
	for (uint32_t r = 0; r < t->nrows; r++)
		keys[r] = pid_col < 0 ? t->keys[r] : (uint64_t)xpu_table_row(t, r)[pid_col].i;
	xpu_folded_sort_keys(keys, t->nrows);
	*n = t->nrows;
	return keys;
}

int xpu_export_view(struct xpu_session *sess, const struct xpu_snapshot *snap,
		    const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
#define XPU_VIEW_ENTRY(ID, name) [XPU_VIEW_##ID] = &xpu_batch_view_##name,
	static const struct xpu_batch_view *const views[XPU_VIEW_MAX] = { XPU_VIEW_LIST(XPU_VIEW_ENTRY) };
	if (vs->view >= XPU_VIEW_MAX || !views[vs->view]->export) {
		snprintf(msg, size, "nothing to export in this view yet");
		return 0;
	}
	return views[vs->view]->export(sess, snap, vs, dir, msg, size);
}
