/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's export: core/outputs/export_npu.c. */
#ifndef XPU_EXPORT_NPU_H
#define XPU_EXPORT_NPU_H

#include <stddef.h>

struct xpu_session;
struct xpu_snapshot;

/* Writes the driver function stacks and the alert log into dir; returns the
 * number of files written (2) with what was written in msg, or -1 (reported). */
int xpu_export_npu(struct xpu_session *sess, const struct xpu_snapshot *snap, const char *dir, char *msg,
		   size_t size);

#endif
