/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view's export (xpu_batch_view_cpu's). */
#ifndef XPU_EXPORT_CPU_H
#define XPU_EXPORT_CPU_H

#include <stddef.h>

struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

int xpu_export_cpu(struct xpu_session *sess, const struct xpu_snapshot *snap,
		   const struct xpu_viewstate *vs, const char *dir, char *msg, size_t size);

#endif
