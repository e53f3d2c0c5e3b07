/* SPDX-License-Identifier: GPL-2.0-only */
/* The Chrome trace JSON export (chrome://tracing, Perfetto, speedscope): the
 * recent GPU kernels on one track per device and stream, the launches on the
 * launching threads, and a flow arrow from each launch to its first kernel. */
#ifndef XPU_CHROME_TRACE_H
#define XPU_CHROME_TRACE_H

#include <stdint.h>
#include <stdio.h>

struct xpu_dict;
struct xpu_gpu_model;
struct xpu_json;

/* A metadata event naming a process (what: "process_name", tid 0) or a
 * track ("thread_name"); the NPU jobs' trace (npu_trace.c) names its too. */
void xpu_chrome_trace_meta(struct xpu_json *j, const char *what, uint32_t pid, uint64_t tid,
			   const char *name);

/* Returns the number of events written, or -1 on a write error. */
long xpu_chrome_trace_write(FILE *f, const struct xpu_gpu_model *m, const struct xpu_dict *d);

#endif
