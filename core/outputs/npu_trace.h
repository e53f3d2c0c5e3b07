/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU jobs as a Chrome trace JSON (Perfetto, chrome://tracing,
 * speedscope): each job a slice from its submit to its completion or abort
 * (outstanding ones to the newest time seen), in its process, on a track per
 * queue (doorbell or context); the NPU alerts as instant events. */
#ifndef XPU_NPU_TRACE_H
#define XPU_NPU_TRACE_H

#include <stdio.h>

struct xpu_dict;
struct xpu_npu_model;
struct xpu_snapshot;

/* Returns the number of job slices written (0: no jobs, nothing written),
 * or -1 on a write error or with memory out (errno says which). */
long xpu_npu_trace_write(FILE *f, const struct xpu_npu_model *m, const struct xpu_dict *d,
			 const struct xpu_snapshot *s);

#endif
