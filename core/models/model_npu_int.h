/* SPDX-License-Identifier: GPL-2.0-only */
/* What the parts of the NPU model share: model_npu.c (counters, latency
 * histograms, call rows, events, tick, snapshot), model_npu_ipc.c,
 * model_npu_jobs.c and model_npu_rules.c.  No one else includes this. */
#ifndef XPU_MODEL_NPU_INT_H
#define XPU_MODEL_NPU_INT_H

#include <stdint.h>

#include "model_npu.h"

#define MS 1000000ULL

/* Counters and latency histograms over ticks (model_npu.c). */
int xpu_npu_ctr_init(struct xpu_npu_ctr *c, uint32_t window);
uint64_t xpu_npu_ctr_get(const struct xpu_npu_ctr *c, enum xpu_window w);
int xpu_npu_lat_add(struct xpu_npu_lat *l, uint32_t window, uint64_t ns, uint64_t n);
int xpu_npu_lat_quantiles(const struct xpu_npu_lat *l, enum xpu_window w, uint64_t *p50,
			  uint64_t *p99);
/* The (pid, kind, code) row, made when new (model_npu.c). */
uint32_t xpu_npu_call_get(struct xpu_npu_model *m, uint32_t pid, uint32_t kind, uint32_t code,
			  uint32_t comm);
/* n events over ns as a rate a second, 0 over no time. */
double xpu_npu_per_s(uint64_t n, uint64_t ns);

/* IPC (model_npu_ipc.c). */
void xpu_npu_on_ipc(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n);
void xpu_npu_snap_ipc(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w);

/* Jobs (model_npu_jobs.c). */
int xpu_npu_on_job(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n);
void xpu_npu_snap_jobs(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w);

/* The alert rules, run at the end of each tick (model_npu_rules.c). */
void xpu_npu_rule_rate(struct xpu_npu_model *m, uint64_t now, uint64_t interval_ns);
void xpu_npu_rule_silence(struct xpu_npu_model *m, uint64_t now);
void xpu_npu_rule_stall(struct xpu_npu_model *m, uint64_t now);

#endif
