/* SPDX-License-Identifier: GPL-2.0-only */
/* The views, one line each in XPU_VIEW_LIST, in the order of their tabs and
 * digit keys: X(ID, name) makes XPU_VIEW_<ID> of enum xpu_view, the
 * snapshot's part `name` (struct xpu_snap_<name>, snap_<name>.h) and the
 * descriptors each layer looks up by the view: xpu_snap_view_<name>
 * (core/session/snap_<name>.c), xpu_batch_view_<name>
 * (core/outputs/batch_<name>.c) and xpu_view_<name> (tui/view_<name>.c).
 * Adding a view is its files, its line here and its header's include, and
 * its line in core/outputs/batch.c's print order (docs/architecture.md). */
#ifndef XPU_VIEW_LIST_H
#define XPU_VIEW_LIST_H

#include "snap_cpu.h"
#include "snap_gpu.h"
#include "snap_npu.h"

#define XPU_VIEW_LIST(X)	\
	X(GPU, gpu)		\
	X(NPU, npu)		\
	X(CPU, cpu)		\
	/* a new view: its line above this one */

/* The view shown first, unless --view or the settings file names another. */
#define XPU_VIEW_DEFAULT XPU_VIEW_CPU

#endif
