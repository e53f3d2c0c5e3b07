/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's part of the snapshot (snap->npu), built by snap_npu.c. */
#ifndef XPU_SNAP_NPU_H
#define XPU_SNAP_NPU_H

#include "model_npu.h"
#include "snap_view.h"

struct xpu_snap_npu {
	struct xpu_src_status status;
	struct xpu_npu_snap model;	/* the NPU model's: the calls table sorted and filtered */
	struct xpu_npu_srcinfo sources;	/* what each NPU data source is doing */
};

#endif
