/* The BPF half of the GPU source (bpf/gpu.bpf.c): the uprobe on the
 * injection library's xputop_launch_site() that captures each new call site's
 * stack, and the launch-only uprobes on every loaded copy of the CUDA runtime
 * and driver for processes running without the library. */
#ifndef XPU_GPU_PROBES_H
#define XPU_GPU_PROBES_H

#include <stdint.h>

struct xpu_dict;
struct xpu_service;
struct xpu_symbolizer;
struct xpu_gpu_probes;

struct xpu_gpu_probe_sink {
	/* A call site's CPU frames (root first, launch machinery trimmed),
	 * unwound on the service thread: it may come after the site's launches. */
	void (*site)(void *arg, uint32_t pid, uint32_t site, const uint32_t *frames, uint32_t n);
	/* A launch seen by the launch-only probes: stack includes the API frame. */
	void (*launch)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint32_t comm,
		       uint32_t api, uint32_t stack);
	void *arg;
};

struct xpu_gpu_probe_stats {
	uint64_t sites;			/* site stacks captured */
	uint64_t sites_dwarf;		/* of which unwound with DWARF */
	uint64_t sites_fp_only;		/* frame pointers only: too many unwinds waited */
	uint32_t sites_unwinding;	/* waiting for the service thread now */
	uint64_t launches;		/* launch-only records */
	uint64_t dropped;		/* ring full, in BPF */
	uint64_t bad;			/* records that failed the size check */
	uint32_t marker_files;		/* library copies with the site probe */
	uint32_t runtime_files;		/* CUDA runtime/driver copies with launch probes */
};

/* Loads the BPF programs.  Sites are unwound on svc (NULL: inline).
 * Returns NULL with the reason reported. */
struct xpu_gpu_probes *xpu_gpu_probes_new(struct xpu_symbolizer *sym, struct xpu_dict *d,
					  struct xpu_service *svc, const struct xpu_gpu_probe_sink *sink);
void xpu_gpu_probes_free(struct xpu_gpu_probes *p);
int xpu_gpu_probes_fd(struct xpu_gpu_probes *p);
int xpu_gpu_probes_drain(struct xpu_gpu_probes *p);
/* A process connected: probe the library copy it has mapped (once per file)
 * and leave its launches to CUPTI.  Returns 0 or -1 (reported). */
int xpu_gpu_probes_injected(struct xpu_gpu_probes *p, uint32_t pid);
void xpu_gpu_probes_left(struct xpu_gpu_probes *p, uint32_t pid);
/* Looks for CUDA runtime/driver copies mapped by pid and probes their launch
 * entry points (once per file). */
void xpu_gpu_probes_scan(struct xpu_gpu_probes *p, uint32_t pid);
void xpu_gpu_probes_stats(const struct xpu_gpu_probes *p, struct xpu_gpu_probe_stats *st);

#endif
