/* SPDX-License-Identifier: GPL-2.0-only */
/* The launching threads' own CPU time (issue 25).  Tracing a slice slows
 * CUDA's code on a launching thread (CUPTI's callbacks run in it), not the
 * process's own code, so the launches a slice saw scale by the thread's own
 * time out of the slices over its own time in them better than by wall time.
 * Each launching thread of an injected process gets a task-clock perf event
 * that runs bpf/gpu.bpf.c's gpu_own: a sample counts as the process's own or
 * CUDA's by where the thread's user-mode pc was, and as in a slice or out of
 * one by the library's xputop_tracing word.  The counts are cumulative since
 * the process was first watched; the GPU source sends them each refresh as
 * an XPU_EV_GPU_OWN event. */
#ifndef XPU_GPU_OWN_H
#define XPU_GPU_OWN_H

#include <stdint.h>

#include "event.h"

struct bpf_program;
struct xpu_gpu_own;

/* Processes and threads of each watched at most: a launching thread past
 * its process's limit is not sampled, and the process counts as full. */
#define XPU_GPU_OWN_PROCS 64
#define XPU_GPU_OWN_THREADS 64

struct xpu_gpu_own_stats {
	uint32_t procs;		/* processes watched */
	uint32_t threads;	/* threads sampled now */
	uint32_t procs_full;	/* processes with more launching threads than sampled */
	uint64_t procs_over;	/* watches of processes past XPU_GPU_OWN_PROCS refused */
	uint64_t open_failed;	/* perf events the kernel refused (last errno in err) */
	uint64_t attach_failed;	/* events the program could not be attached to */
	uint64_t not_own;	/* threads named that are not the process's own: not sampled */
	uint64_t no_flag;	/* processes whose library's xputop_tracing was not found */
	uint64_t ranges_over;	/* CUDA code mappings past XPU_GPU_OWN_RANGES, left out */
	uint64_t unread;	/* samples whose flag could not be read, not counted */
	int err;
};

struct xpu_service;

/* The sampler over the GPU probes' program and maps
 * (xpu_gpu_probes_own_parts()), each thread at hz.  A process's maps and
 * its library's flag are read on svc's thread (NULL: in the tick), the
 * result applied, and its new threads' events opened, when the job's done()
 * runs (xpu_service_poll()).  NULL when out of memory. */
struct xpu_gpu_own *xpu_gpu_own_new(struct bpf_program *prog, int config_fd, int counts_fd, uint32_t hz,
				    struct xpu_service *svc);
void xpu_gpu_own_free(struct xpu_gpu_own *o);
/* A launch of tid in process pid came: its thread is sampled from the next
 * tick on.  Cheap and idempotent (called on the ingest path for every
 * launch record): reading maps and opening events wait for the tick. */
void xpu_gpu_own_watch(struct xpu_gpu_own *o, uint32_t pid, uint32_t tid);
/* The process left: its events are closed, its counts dropped. */
void xpu_gpu_own_forget(struct xpu_gpu_own *o, uint32_t pid);
/* Once per refresh: has the flag and CUDA's code of new processes found and
 * the new threads' events opened (a job on the service thread, one a
 * process at a time, attached when it is done), the ranges read again (at
 * most once a second a process, sooner when a thread came), and closes
 * exited threads' events. */
void xpu_gpu_own_tick(struct xpu_gpu_own *o, uint64_t now);
/* The counts of pid so far (hz and threads filled).  Returns 0, or -1 when
 * it is not sampled (yet). */
int xpu_gpu_own_read(const struct xpu_gpu_own *o, uint32_t pid, struct xpu_ev_gpu_own *out);
/* fn for every process sampled, with its counts. */
void xpu_gpu_own_each(const struct xpu_gpu_own *o, void (*fn)(void *arg, uint32_t pid,
							       const struct xpu_ev_gpu_own *g), void *arg);
void xpu_gpu_own_stats(const struct xpu_gpu_own *o, struct xpu_gpu_own_stats *st);

#endif
