/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's part of the snapshot: the NPU model's tables, sorted, and
 * what each NPU data source is doing. */
#include "snap_npu.h"

#include "session.h"
#include "snapshot.h"

/* Further table k (functions, clients, chains) by the --sort column where
 * it is one of its own, else by def; ties by then (-1: none). */
static void sort_more(struct xpu_table *t, int k, const struct xpu_viewstate *vs, int def, int then)
{
	int col = xpu_snap_more_col(xpu_snap_views[XPU_VIEW_NPU], k, vs->sort_col[XPU_VIEW_NPU]);
	if (col >= 0)
		xpu_table_sort_then(t, col, then, vs->reverse[XPU_VIEW_NPU]);
	else
		xpu_table_sort_then(t, def, then, 0);
}

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
	sort_more(&s->npu.model.funcs, 0, vs, XPU_NPU_FCOL_COUNT, XPU_NPU_FCOL_TOTAL);
	sort_more(&s->npu.model.clients, 1, vs, XPU_NPU_KCOL_TOTAL, -1);
	sort_more(&s->npu.model.chains, 2, vs, XPU_NPU_CCOL_TOTAL, XPU_NPU_CCOL_TOTAL);
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
