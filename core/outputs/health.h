/* SPDX-License-Identifier: GPL-2.0-only */
/* /healthz's text: one line a source, "NAME STATE: what it does or why not",
 * as the views' status lines say it.  Collection has failed when one of them
 * has (a source that could not start, or died); the server says "stalled"
 * on its own when refreshes stop (prom_http.h). */
#ifndef XPU_HEALTH_H
#define XPU_HEALTH_H

#include <stddef.h>

struct xpu_session;

/* Writes the lines into out (cut at size); returns 1 when a source failed,
 * else 0. */
int xpu_health_text(const struct xpu_session *s, char *out, size_t size);

#endif
