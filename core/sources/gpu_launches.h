/* SPDX-License-Identifier: GPL-2.0-only */
/* Launch-only counting, user side.  The BPF launch probe counts launches per
 * (thread, call site, API) in its launch_counts map (bpf/gpu.h) and sends a
 * key's stack once, with its first launch.  Each refresh this reads the
 * counts and hands on what each key grew by, with the key's stack, so launch
 * totals are exact and stacks weighted by them; keys of threads that exited
 * are read a last time and taken out of the map. */
#ifndef XPU_GPU_LAUNCHES_H
#define XPU_GPU_LAUNCHES_H

#include <stdint.h>

struct xpu_dict;
struct xpu_gpu_launch_key;
struct xpu_gpu_launches;

/* calls launches from key k since the last one; stack 0 = no stack (the
 * launches were counted without one, or it never came).  nested: they are
 * driver launches the runtime made, each a runtime launch's already (a
 * probe's hit all the same).  born: when the key's process started
 * (CLOCK_MONOTONIC ns), with the key's first launches handed on; 0 after. */
typedef void (*xpu_gpu_launches_fn)(void *arg, const struct xpu_gpu_launch_key *k, uint32_t comm,
				    uint32_t stack, uint64_t calls, int nested, uint64_t born);

struct xpu_gpu_launches_stats {
	uint64_t keys;		/* keys being counted */
	uint64_t stacks_lost;	/* sited keys whose stack never came */
	uint64_t retired;	/* keys of exited threads taken out */
};

/* counts_fd: the launch_counts map; procs_fd: proc_sites (keys per process). */
struct xpu_gpu_launches *xpu_gpu_launches_new(struct xpu_dict *d, int counts_fd, int procs_fd);
void xpu_gpu_launches_free(struct xpu_gpu_launches *l);
/* The stack (root first, API frame last) that key k's first launch sent. */
void xpu_gpu_launches_stack(struct xpu_gpu_launches *l, const struct xpu_gpu_launch_key *k,
			    uint32_t stack);
/* Reads the counts and calls fn for each key that grew.  Returns 0, or -1
 * when the map could not be read. */
int xpu_gpu_launches_collect(struct xpu_gpu_launches *l, uint64_t now, xpu_gpu_launches_fn fn,
			     void *arg);
void xpu_gpu_launches_mark(const struct xpu_gpu_launches *l, struct xpu_dict *d);
void xpu_gpu_launches_stats(const struct xpu_gpu_launches *l, struct xpu_gpu_launches_stats *st);

#endif
