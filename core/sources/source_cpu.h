/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU source: perf cpu-clock sampling on every online CPU with user and
 * kernel stacks captured in BPF (bpf/cpu.bpf.c), symbolized on arrival. */
#ifndef XPU_SOURCE_CPU_H
#define XPU_SOURCE_CPU_H

#include <stdint.h>

struct xpu_session;
struct xpu_source;
struct xpu_symbolizer;

struct xpu_cpu_source_opts {
	uint32_t hz;
	const uint32_t *pids;	/* sample only these processes; NULL = all */
	uint32_t npids;
	int follow_forks;	/* and the processes they start */
	uint32_t ncpus;		/* CPUs the ring is sized for; 0: the session's */
};

/* Loads and attaches the sampler.  Returns NULL with the reason reported. */
struct xpu_source *xpu_source_cpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      const struct xpu_cpu_source_opts *o);

/* The same in two steps, for an xputop that reads another's stream and
 * keeps its own probes ready to take over (core/sources/share.h): the load (the
 * verifier, the slow part) samples nothing and costs the machine nothing
 * but the ring's memory; the attach starts sampling.  A source whose attach
 * failed (said why) is only good for xpu_source_destroy(). */
struct xpu_source *xpu_source_cpu_load(struct xpu_session *s, struct xpu_symbolizer *sym,
				       const struct xpu_cpu_source_opts *o);
int xpu_source_cpu_attach(struct xpu_source *src);

/* Samples o's processes (all if none) at o->hz from now on: the perf
 * events are opened again if the rate changed.  0, or -1 (said why) when
 * the new rate could not be had: it samples at the old one. */
int xpu_source_cpu_retune(struct xpu_source *src, const struct xpu_cpu_source_opts *o);
/* The rate it samples at. */
uint32_t xpu_source_cpu_hz(const struct xpu_source *src);

#endif
