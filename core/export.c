#include "export.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "folded.h"
#include "outfile.h"
#include "session.h"
#include "snapshot.h"

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The rows the user sees decide which stacks are exported. */
static int export_cpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	struct xpu_outfile out;
	char stem[96], path[4200];
	uint64_t *keys = malloc(((size_t)snap->cpu.nrows + 1) * sizeof(uint64_t));
	if (!keys)
		return -1;
	memcpy(keys, snap->cpu.keys, (size_t)snap->cpu.nrows * sizeof(uint64_t));
	qsort(keys, snap->cpu.nrows, sizeof(uint64_t), key_cmp);
	struct xpu_folded_sel sel = {
		.window = vs->window, .keys = keys, .nkeys = snap->cpu.nrows, .by_tid = vs->threads,
	};
	if (xpu_outfile_open(&out, dir) < 0) {
		free(keys);
		return -1;
	}
	long lines = xpu_folded_write(out.f, &sess->dict, &sess->cpu.stacks, &sel);
	free(keys);
	if (lines < 0) {
		xpu_err("cannot write the CPU export");
		xpu_outfile_abort(&out);
		return -1;
	}
	xpu_outfile_stem(stem, sizeof(stem), "cpu");
	if (xpu_outfile_commit(&out, stem, "folded", path, sizeof(path)) < 0)
		return -1;
	snprintf(msg, size, "exported %ld stacks to %s", lines, path);
	return 1;
}

int xpu_export_view(struct xpu_session *sess, const struct xpu_snapshot *snap,
		    const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	switch (vs->view) {
	case XPU_VIEW_CPU:
		return export_cpu(sess, snap, vs, dir, msg, size);
	default:
		snprintf(msg, size, "nothing to export in this view yet");
		return 0;
	}
}
