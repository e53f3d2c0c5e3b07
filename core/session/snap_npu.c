/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's part of the snapshot: the NPU model's tables, sorted, and
 * what each NPU data source is doing. */
#include "snap_npu.h"

#include "session.h"
#include "snapshot.h"

extern const struct xpu_snap_view xpu_snap_view_npu;

static int build(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	s->npu.status = sess->status[XPU_SRC_NPU];
	s->npu.sources = sess->npu.sources;
	if (xpu_npu_model_snapshot(&sess->npu, &sess->dict, &s->npu.model, vs->window) < 0)
		return -1;
	xpu_snapshot_arrange(s, &s->npu.model.calls, vs, XPU_VIEW_NPU, XPU_NPU_COL_RATE);
	/* A column of the driver functions' table chosen with -s sorts it;
	 * by default it is by the window's count, and where that ties (nothing
	 * in the window at the end of a replay) by the count since the start:
	 * a table sorted by zeros would leave the busiest function anywhere. */
	int col = vs->sort_col[XPU_VIEW_NPU], rev = vs->reverse[XPU_VIEW_NPU];
	int fcol = xpu_snap_more_col(&xpu_snap_view_npu, 0, col);
	if (fcol >= 0)
		xpu_table_sort_then(&s->npu.model.funcs, fcol, XPU_NPU_FCOL_TOTAL, rev);
	else
		xpu_table_sort_then(&s->npu.model.funcs, XPU_NPU_FCOL_COUNT, XPU_NPU_FCOL_TOTAL, 0);
	int kcol = xpu_snap_more_col(&xpu_snap_view_npu, 1, col);
	xpu_table_sort(&s->npu.model.clients, kcol >= 0 ? kcol : XPU_NPU_KCOL_TOTAL, kcol >= 0 && rev);
	int ccol = xpu_snap_more_col(&xpu_snap_view_npu, 2, col);
	if (ccol >= 0)
		xpu_table_sort_then(&s->npu.model.chains, ccol, XPU_NPU_CCOL_TOTAL, rev);
	else
		xpu_table_sort(&s->npu.model.chains, XPU_NPU_CCOL_TOTAL, 0);
	return 0;
}

static void init(struct xpu_snapshot *s)
{
	xpu_npu_snap_init(&s->npu.model);
}

static void release(struct xpu_snapshot *s)
{
	xpu_npu_snap_free(&s->npu.model);
}

/* Its driver functions', clients' and chains' tables sort too: --sort
 * function, --sort resident_bytes, --sort ioctl. */
const struct xpu_snap_view xpu_snap_view_npu = {
	.name = "npu",
	.cols = xpu_npu_cols,
	.ncols = XPU_NPU_NCOLS,
	.more = { { xpu_npu_fcols, XPU_NPU_NFCOLS }, { xpu_npu_kcols, XPU_NPU_NKCOLS },
		  { xpu_npu_ccols, XPU_NPU_NCCOLS } },
	.init = init,
	.free = release,
	.build = build,
};
