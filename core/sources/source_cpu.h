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
};

/* Loads and attaches the sampler.  Returns NULL with the reason reported. */
struct xpu_source *xpu_source_cpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      const struct xpu_cpu_source_opts *o);

#endif
