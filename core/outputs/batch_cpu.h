/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view in the headless front-ends: the "cpu", "cpu_functions",
 * "system" and "cpu_info" objects of each JSON snapshot and its lines in the
 * text snapshots (core/outputs/batch.c calls these). */
#ifndef XPU_BATCH_CPU_H
#define XPU_BATCH_CPU_H

#include <stdio.h>

struct xpu_json;
struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

void xpu_batch_cpu_json(struct xpu_json *j, const struct xpu_snapshot *s,
			const struct xpu_session *sess, const struct xpu_viewstate *vs);
void xpu_batch_cpu_text(FILE *f, const struct xpu_snapshot *s);

#endif
