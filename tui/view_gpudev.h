/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU device panel at the top of the GPU view, read at a glance as in
 * nvtop: per NVIDIA GPU, gauges of utilization and memory, then power,
 * temperature, clocks and PCIe / NVLink traffic, then the processes on it
 * with their GPU memory and SM share.  Fields the driver does not give say
 * N/A. */
#ifndef XPU_TUI_VIEW_GPUDEV_H
#define XPU_TUI_VIEW_GPUDEV_H

#include "layout.h"
#include "snapshot.h"

/* Process lines shown under each device at most (then "+N more"). */
#define XPU_VIEW_GPUDEV_PROCS 4

/* Rows the panel would like (0: nothing to say). */
int xpu_view_gpudev_rows(const struct xpu_snapshot *s);
/* Whether the panel is worth a GPU view on its own: devices, or NVML failing. */
int xpu_view_gpudev_has_data(const struct xpu_snapshot *s);
/* Draws into r, dropping process lines, then second lines, when r is short.
 * Returns the rows used. */
int xpu_view_gpudev_draw(const struct xpu_rect *r, const struct xpu_snapshot *s);

#endif
