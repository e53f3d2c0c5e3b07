/* SPDX-License-Identifier: GPL-2.0-only */
/* What the parts of the NPU model share: model_npu.c (events, tick,
 * snapshot) calls the others; model_npu_ipc.c (firmware messages),
 * model_npu_jobs.c (jobs) and model_npu_rules.c (alert rules, the TDR) call
 * only model_npu_calls.c (the call rows and their latencies), which calls
 * none of them.  No one else includes this. */
#ifndef XPU_MODEL_NPU_INT_H
#define XPU_MODEL_NPU_INT_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "model_npu.h"
#include "npu.h"

#define MS 1000000ULL
#define XPU_NPU_NR_BO_WAIT 0x46	/* DRM_IOCTL_IVPU_BO_WAIT's nr */

/* The call rows (model_npu_calls.c). */
/* The (pid, kind, code) row, made when new; UINT32_MAX when out of memory. */
uint32_t xpu_npu_call_get(struct xpu_npu_model *m, uint32_t pid, uint32_t kind, uint32_t code,
			  uint32_t comm);
void xpu_npu_call_free(struct xpu_npu_call *c);
/* Ages out idle rows past max_calls (trim.h). */
void xpu_npu_calls_trim(struct xpu_npu_model *m);
/* The median and p99 of a latency histogram over window w, each the middle
 * of its bucket; 0 when it holds nothing there. */
int xpu_npu_lat_quantiles(const struct xpu_win_hist *l, enum xpu_window w, uint64_t *p50,
			  uint64_t *p99);
static inline int xpu_npu_lat_add(struct xpu_win_hist *l, uint64_t ns, uint64_t n)
{
	return xpu_win_hist_add(l, xpu_npu_hist_bucket(ns), ns, n);
}

/* IPC (model_npu_ipc.c). */
void xpu_npu_on_ipc(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n);
void xpu_npu_snap_ipc(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w);

/* Jobs (model_npu_jobs.c). */
int xpu_npu_on_job(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n);
void xpu_npu_snap_jobs(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w);

/* Forgets the jobs whose process exited a TDR ago (xpu_npu_model_exit). */
void xpu_npu_jobs_expire(struct xpu_npu_model *m, uint64_t now);
/* A BO_WAIT of pid, counted for the oldest outstanding job. */
void xpu_npu_on_wait(struct xpu_npu_model *m, uint32_t pid, uint64_t now, uint64_t n);
/* Notes what came after the stall (once, while it is active). */
void xpu_npu_stall_after(struct xpu_npu_model *m, uint32_t after, uint64_t now, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "8.4 s", "500 ms", "40 us" */
void xpu_npu_fmt_dur(char *buf, size_t size, uint64_t ns);

/* The alert rules, run at the end of each tick (model_npu_rules.c). */
void xpu_npu_rule_rate(struct xpu_npu_model *m, uint64_t now, uint64_t interval_ns);
void xpu_npu_rule_silence(struct xpu_npu_model *m, uint64_t now);
void xpu_npu_rule_stall(struct xpu_npu_model *m, uint64_t now);
void xpu_npu_rule_map_pages(struct xpu_npu_model *m, uint64_t now);

#endif
