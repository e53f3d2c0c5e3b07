/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU device source: a thread polls NVML (core/sources/nvml.h) about once a
 * second and hands each complete poll to the ingest path, which turns it
 * into XPU_EV_GPU_DEV* events.  NVML calls take milliseconds and can hang
 * on a failing GPU: none of them runs on the ingest path, so no snapshot
 * ever waits for the driver. */
#ifndef XPU_SOURCE_NVML_H
#define XPU_SOURCE_NVML_H

#include <stdint.h>

#include "nvml.h"

struct xpu_dict;
struct xpu_event;
struct xpu_session;
struct xpu_source;

/* The library to load: XPUTOP_NVML's path, NULL for the driver's own, or
 * "off" (the device view is then off). */
const char *xpu_nvml_lib_path(void);

/* Starts the poller on the library at path (NULL: the driver's).  It polls
 * every period_ns (at least a second).  Never fails the session: what goes
 * wrong is said in the device view's status.  NULL only when out of memory. */
struct xpu_source *xpu_source_nvml_new(struct xpu_session *s, const char *path, uint64_t period_ns);

/* One poll's events, in order: for each device DEV, LINK, then its PROCs.
 * Strings are interned in d, bounded by their buffers; a value out of range
 * is left out (its field shows N/A) and counted in *refused. */
typedef void (*xpu_nvml_sink)(void *ctx, const struct xpu_event *ev);
void xpu_nvml_events(const struct xpu_nvml_sample *smp, struct xpu_dict *d, xpu_nvml_sink sink,
		     void *ctx, uint64_t *refused);

#endif
