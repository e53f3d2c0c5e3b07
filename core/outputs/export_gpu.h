/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view's export (xpu_batch_view_gpu's). */
#ifndef XPU_EXPORT_GPU_H
#define XPU_EXPORT_GPU_H

#include <stddef.h>

struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

int xpu_export_gpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		   const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);

#endif
