/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view's export (`s`): the stacks of the rows shown, folded. */
#include "export_cpu.h"

#include <stdio.h>
#include <stdlib.h>

#include "export.h"
#include "session.h"
#include "snapshot.h"

/* The rows the user sees decide which stacks are exported. */
int xpu_export_cpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	char path[4200];
	long lines;
	uint32_t n;
	/* An empty file would only puzzle flamegraph.pl ("No stack counts found"). */
	if (!snap->cpu.rows.nrows) {
		snprintf(msg, size, "nothing to export: the CPU view has no rows");
		return 0;
	}
	uint64_t *keys = xpu_export_row_keys(&snap->cpu.rows, -1, &n);
	if (!keys)
		return -1;
	struct xpu_export_part p = { &sess->cpu.stacks,
			  { .window = vs->window, .keys = keys, .nkeys = n, .by_tid = vs->threads } };
	int rc = xpu_export_folded(sess, dir, "cpu", &p, 1, path, sizeof(path), &lines);
	free(keys);
	if (rc < 0)
		return -1;
	snprintf(msg, size, "exported %ld stacks to %s", lines, path);
	return 1;
}

