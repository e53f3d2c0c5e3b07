/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view in the headless front-ends: the "npu" object of each JSON
 * snapshot and its lines in the text snapshots (xpu_batch_view_npu). */
#ifndef XPU_BATCH_NPU_H
#define XPU_BATCH_NPU_H

#include <stdint.h>
#include <stdio.h>

struct xpu_json;
struct xpu_snapshot;

void xpu_batch_npu_json(struct xpu_json *j, const struct xpu_snapshot *s);
void xpu_batch_npu_text(FILE *f, const struct xpu_snapshot *s);

#endif
