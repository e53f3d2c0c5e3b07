/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU devices (NVML) in the headless front-ends: the "gpu_devices"
 * object of each JSON snapshot and its lines in the text snapshots. */
#ifndef XPU_BATCH_GPUDEV_H
#define XPU_BATCH_GPUDEV_H

#include <stdint.h>
#include <stdio.h>

struct xpu_json;
struct xpu_snapshot;

void xpu_batch_gpudev_json(struct xpu_json *j, const struct xpu_snapshot *s);
void xpu_batch_gpudev_text(FILE *f, const struct xpu_snapshot *s);

#endif
