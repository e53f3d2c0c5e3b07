/* SPDX-License-Identifier: GPL-2.0-only */
/* Headless front-ends: text snapshots like `top -b`, and NDJSON. */
#ifndef XPU_BATCH_H
#define XPU_BATCH_H

#include <stdint.h>
#include <stdio.h>

struct xpu_session;
struct xpu_snapshot;
struct xpu_viewstate;

void xpu_batch_text(FILE *f, const struct xpu_snapshot *s);
/* One JSON object on one line. */
void xpu_batch_json(FILE *f, const struct xpu_snapshot *s, const struct xpu_session *sess,
		    const struct xpu_viewstate *vs);

#endif
