/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU source: CUDA processes running libxputop_inject.so connect to a
 * socket xputop owns and stream CUPTI kernel, memcpy and launch records; BPF
 * captures the CPU stack of each new launch call site; processes without the
 * library are seen through uprobes on the CUDA launch functions. */
#ifndef XPU_SOURCE_GPU_H
#define XPU_SOURCE_GPU_H

#include <stdint.h>

struct xpu_gpu_probes;
struct xpu_gpu_waiter;
struct xpu_gpu_nodes;
struct xpu_service;
struct xpu_session;
struct xpu_source;
struct xpu_symbolizer;

/* The socket path, XPU_WIRE_SOCKET unless XPUTOP_SOCKET overrides it. */
const char *xpu_gpu_socket_path(void);

/* Listens for injected processes and loads the launch probes; call sites
 * are unwound on svc.  Never fails the session: what cannot start is
 * reported in the GPU view's status.  Returns NULL only when out of memory.
 *
 * A launch goes down the stream at once, with its call site's stack: the
 * site's frames, or while the site is still being captured and unwound a
 * pending frame "[unwinding call site N]" that is expanded in place (dict.h)
 * when its frames come.  So a kernel always finds its launch, and nothing
 * waits on the unwinding. */
struct xpu_gpu_source_opts {
	const char *inject_lib;
	int no_stacks;		/* --gpu-no-stacks */
	int no_bpf;		/* no kernel BTF: no launch probes */
	/* This xputop holds the collector lock, so an xputop still answering
	 * on the socket is one dying (killed a moment ago): its socket is
	 * replaced at once rather than waited for. */
	int locked;
	/* Launch probes loaded already (xpu_gpu_probes_load()), handed over;
	 * NULL: loaded here. */
	struct xpu_gpu_probes *probes;
	/* The waiter functions (gpu_stitch.h): launches made while a thread
	 * waits in one are shown under its stack. */
	const struct xpu_gpu_waiter *waiters;
	int nwaiters;
	/* The node probes (gpu_stitch.h), NULL: off. */
	const struct xpu_gpu_nodes *nodes;
	/* --gpu-own-hz: launching threads' own time sampled at this rate
	 * (gpu_own.h); 0: off. */
	uint32_t own_hz;
};

struct xpu_source *xpu_source_gpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      struct xpu_service *svc, const struct xpu_gpu_source_opts *o);

/* Stops the injection libraries of the processes no xputop watches any
 * more (xpu_session_watches(): the union of -p narrowed when a client left);
 * they come back and are left dormant. */
void xpu_source_gpu_narrow(struct xpu_source *src);

/* Lets the injected processes go and the socket with them (xputop is
 * quitting: another xputop may take over before it is gone). */
void xpu_source_gpu_close(struct xpu_source *src);

#endif
