/* SPDX-License-Identifier: GPL-2.0-only */
/* The alert log of every view in the headless front-ends: the "alerts"
 * array of each JSON snapshot and the ALERTS lines of the text ones. */
#ifndef XPU_BATCH_ALERTS_H
#define XPU_BATCH_ALERTS_H

#include <stdint.h>
#include <stdio.h>

struct xpu_json;
struct xpu_snapshot;

void xpu_batch_alerts_json(struct xpu_json *j, const struct xpu_snapshot *s);
/* One alert of the log (index i, oldest first) as a JSON object. */
void xpu_batch_alert_json(struct xpu_json *j, const struct xpu_snapshot *s, uint32_t i);
void xpu_batch_alerts_text(FILE *f, const struct xpu_snapshot *s);

#endif
