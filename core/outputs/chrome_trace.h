/* SPDX-License-Identifier: GPL-2.0-only */
/* The Chrome trace JSON export (chrome://tracing, Perfetto, speedscope): the
 * recent GPU kernels on one track per device and stream, the launches on the
 * launching threads, and a flow arrow from each launch to its first kernel. */
#ifndef XPU_CHROME_TRACE_H
#define XPU_CHROME_TRACE_H

#include <stdio.h>

struct xpu_dict;
struct xpu_gpu_model;

/* Returns the number of events written, or -1 on a write error. */
long xpu_chrome_trace_write(FILE *f, const struct xpu_gpu_model *m, const struct xpu_dict *d);

#endif
