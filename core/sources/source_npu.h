/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU source: bpf/npu.bpf.c attached to whatever this machine offers
 * (syscall tracepoints for ioctls on accel fds; vpu:* tracepoints; ivpu_*
 * kprobes, or uprobes on a stand-in binary; dma_fence tracepoints as the job
 * fallback; uprobes on the Level Zero loader) plus sysfs busy time.  What is
 * missing is said in the NPU view's sources list; nothing missing is fatal. */
#ifndef XPU_SOURCE_NPU_H
#define XPU_SOURCE_NPU_H

#include <stdint.h>

struct xpu_session;
struct xpu_source;

struct xpu_npu_source_opts {
	const char *dev_path;		/* --npu-dev: count ioctls on this node too */
	const char *probe_binary;	/* --npu-probe-binary: ivpu_* probes as uprobes here */
	const char *sysfs_root;		/* --npu-sysfs: sysfs and /proc read under this root */
	const uint32_t *pids;		/* -p: ioctls and Level Zero calls of these only */
	uint32_t npids;
	int no_latency;			/* --npu-no-latency: driver functions counted, not timed */
};

/* Opens, loads and attaches what it can; the sources list and the NPU status
 * line say what is active.  Returns NULL (with the reason in the status line
 * and on the error channel) only when nothing at all could be set up. */
struct xpu_source *xpu_source_npu_new(struct xpu_session *s, const struct xpu_npu_source_opts *o);

/* The same in two steps (source_cpu.h says why).  The load finds what the
 * machine offers and loads the programs, attaching nothing; NULL when it
 * failed (said), with no status written.  The attach attaches what it can
 * and writes the NPU view's sources and status.  o's strings and pids must
 * outlive the source. */
struct xpu_source *xpu_source_npu_load(struct xpu_session *s, const struct xpu_npu_source_opts *o);
void xpu_source_npu_attach(struct xpu_source *src);

#endif
