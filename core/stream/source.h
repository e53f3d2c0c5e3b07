/* SPDX-License-Identifier: GPL-2.0-only */
/* A source turns one producer's raw records (a BPF ring, the injection
 * channel, sysfs) into events on the session's stream.  The main loop polls
 * each source's descriptor and calls drain when it is readable, and calls
 * tick just before each refresh tick (to flush counters such as drops). */
#ifndef XPU_SOURCE_H
#define XPU_SOURCE_H

struct xpu_session;

struct xpu_source {
	const char *name;
	/* Descriptor to poll for input, or -1. */
	int (*fd)(struct xpu_source *src);
	/* Consumes what is available; returns records handled or -errno. */
	int (*drain)(struct xpu_source *src, struct xpu_session *s);
	/* Before a tick: emit counters, check health.  May be NULL. */
	void (*tick)(struct xpu_source *src, struct xpu_session *s);
	void (*destroy)(struct xpu_source *src);
};

static inline void xpu_source_destroy(struct xpu_source *src)
{
	if (src)
		src->destroy(src);
}

#endif
