/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view's export (`s`): its stacks folded, merged with the CPU
 * samples, and the recent kernels as a Chrome trace. */
#include "export_gpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_trace.h"
#include "err.h"
#include "export.h"
#include "outfile.h"
#include "session.h"
#include "snapshot.h"

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
int xpu_export_gpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		      const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size)
{
	char gpu[4200], merged[4200], trace[4200];
	long lines, mlines;
	uint32_t n;
	if (!snap->gpu.rows.nrows && !sess->gpu.launch_stacks.sum_total) {
		snprintf(msg, size, "nothing to export: the GPU view has no rows (its source line says why)");
		return 0;
	}
	uint64_t *pids = xpu_export_row_keys(&snap->gpu.rows, XPU_GPU_COL_PID, &n);
	if (!pids)
		return -1;
	int launches = snap->gpu.flame_launches;
	struct xpu_export_part parts[2] = {
		{ launches ? &sess->gpu.launch_stacks : &sess->gpu.stacks,
		  { .window = vs->window, .keys = launches ? NULL : pids, .nkeys = n,
		    .divisor = launches ? 1 : 1000 } },
		{ &sess->cpu.stacks,
		  { .window = vs->window, .keys = pids, .nkeys = n, .multiplier = 1000000,
		    .divisor = sess->cfg.sample_hz ? sess->cfg.sample_hz : 1 } },
	};
	int rc = xpu_export_folded(sess, dir, launches ? "gpu-launches" : "gpu", parts, 1, gpu, sizeof(gpu),
			      &lines);
	if (rc == 0 && !launches)
		rc = xpu_export_folded(sess, dir, "gpu-merged", parts, 2, merged, sizeof(merged), &mlines);
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

