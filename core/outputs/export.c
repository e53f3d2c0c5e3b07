/* SPDX-License-Identifier: GPL-2.0-only */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "chrome_trace.h"
#include "err.h"
#include "export_npu.h"
#include "folded.h"
#include "outfile.h"
#include "session.h"
#include "snapshot.h"

/* Writes one folded file from one or two stack sets; returns 0 or -1. */
struct part {
	const struct xpu_stacks *stacks;
	struct xpu_folded_sel sel;
};

static int write_folded(struct xpu_session *sess, const char *dir, const char *what,
			const struct part *parts, int nparts, char *path, size_t size, long *lines)
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

/* The sorted keys of a table's rows (or, for the GPU table, of its pids). */
static uint64_t *row_keys(const struct xpu_table *t, int pid_col, uint32_t *n)
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

/* The rows the user sees decide which stacks are exported. */
static int export_cpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
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
	uint64_t *keys = row_keys(&snap->cpu.rows, -1, &n);
	if (!keys)
		return -1;
	struct part p = { &sess->cpu.stacks,
			  { .window = vs->window, .keys = keys, .nkeys = n, .by_tid = vs->threads } };
	int rc = write_folded(sess, dir, "cpu", &p, 1, path, sizeof(path), &lines);
	free(keys);
	if (rc < 0)
		return -1;
	snprintf(msg, size, "exported %ld stacks to %s", lines, path);
	return 1;
}

static int export_trace(struct xpu_session *sess, const char *dir, char *path, size_t size)
{
	struct xpu_outfile out;
	char stem[96];
	if (xpu_outfile_open(&out, dir) < 0)
		return -1;
	if (xpu_chrome_trace_write(out.f, &sess->gpu, &sess->dict) < 0) {
		xpu_err("cannot write the GPU trace export in %s: %s", out.dir, strerror(errno ? errno : EIO));
		xpu_outfile_abort(&out);
		return -1;
	}
	xpu_outfile_stem(stem, sizeof(stem), "gpu");
	return xpu_outfile_commit(&out, stem, "trace.json", path, size);
}

/* Three files: CPU->GPU stacks in microseconds of GPU time; the same with the
 * processes' CPU samples (in microseconds of CPU time) merged in; the recent
 * kernels and launches as a Chrome trace. */
static int export_gpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	char gpu[4200], merged[4200], trace[4200];
	long lines, mlines;
	uint32_t n;
	if (!snap->gpu.rows.nrows && !sess->gpu.launch_stacks.sum_total) {
		snprintf(msg, size, "nothing to export: the GPU view has no rows (its source line says why)");
		return 0;
	}
	uint64_t *pids = row_keys(&snap->gpu.rows, XPU_GPU_COL_PID, &n);
	if (!pids)
		return -1;
	int launches = snap->gpu.flame_launches;
	struct part parts[2] = {
		{ launches ? &sess->gpu.launch_stacks : &sess->gpu.stacks,
		  { .window = vs->window, .keys = launches ? NULL : pids, .nkeys = n,
		    .divisor = launches ? 1 : 1000 } },
		{ &sess->cpu.stacks,
		  { .window = vs->window, .keys = pids, .nkeys = n, .multiplier = 1000000,
		    .divisor = sess->cfg.sample_hz ? sess->cfg.sample_hz : 1 } },
	};
	int rc = write_folded(sess, dir, launches ? "gpu-launches" : "gpu", parts, 1, gpu, sizeof(gpu),
			      &lines);
	if (rc == 0 && !launches)
		rc = write_folded(sess, dir, "gpu-merged", parts, 2, merged, sizeof(merged), &mlines);
	free(pids);
	if (rc < 0 || export_trace(sess, dir, trace, sizeof(trace)) < 0)
		return -1;
	if (launches)
		snprintf(msg, size, "exported %ld launch stacks to %s and the trace to %s", lines, gpu, trace);
	else
		snprintf(msg, size, "exported %ld stacks to %s, merged with CPU samples to %s, trace to %s",
			 lines, gpu, merged, trace);
	return launches ? 2 : 3;
}

static int export_npu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	return xpu_export_npu(sess, snap, dir, msg, size);
}

/* Each view's export: the files of what it shows, or 0 with msg saying why
 * there are none. */
typedef int exporter(struct xpu_session *sess, const struct xpu_snapshot *snap,
		     const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);
static exporter *const exporters[XPU_VIEW_MAX] = {
	[XPU_VIEW_GPU] = export_gpu, [XPU_VIEW_NPU] = export_npu, [XPU_VIEW_CPU] = export_cpu,
};

int xpu_export_view(struct xpu_session *sess, const struct xpu_snapshot *snap,
		    const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	if (vs->view >= XPU_VIEW_MAX || !exporters[vs->view]) {
		snprintf(msg, size, "nothing to export in this view yet");
		return 0;
	}
	return exporters[vs->view](sess, snap, vs, dir, msg, size);
}
