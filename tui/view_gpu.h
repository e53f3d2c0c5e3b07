/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view: a summary of each device and process above the kernels
 * table, and the CPU -> launch API -> kernel flamegraph weighted by GPU time. */
#ifndef XPU_TUI_VIEW_GPU_H
#define XPU_TUI_VIEW_GPU_H

#include "snapshot.h"

/* Rows the summary would like in a text area cols wide. */
int xpu_view_gpu_text_rows(const struct xpu_snapshot *s, int cols);

#endif
