/* SPDX-License-Identifier: GPL-2.0-only */
/* DWARF unwinding of a user stack captured by BPF (registers + a copy of the
 * stack from rsp up), through the .eh_frame of the process's files, as
 * `perf --call-graph dwarf` does.  Needed where libraries have no frame
 * pointers (PyTorch's); JIT code without CFI falls back to the frame pointer.
 * Runs in xputop, once per new launch site, while the process still lives,
 * on the service thread (core/util/service.h): never on the ingest path. */
#ifndef XPU_UNWIND_H
#define XPU_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define XPU_UNWIND_NREGS 17	/* DWARF x86-64 registers 0..16, 16 = rip */

/* An unwinder keeps the DWARF state (modules, their CFI) of the last few
 * processes it unwound, so the next site of a process costs the walk alone:
 * reading libtorch_cuda.so's CFI anew for every site would take far longer.
 * It is used by one thread at a time (the service thread). */
#define XPU_UNWIND_PROCS 8
/* A process's module list is read again after this long, and sooner (at
 * most this often) when a walk stops in code it does not know. */
#define XPU_UNWIND_REPORT_NS (30ULL * 1000000000ULL)
#define XPU_UNWIND_RETRY_NS (100ULL * 1000000ULL)

struct xpu_unwinder;
struct xpu_unwind_stats {
	uint64_t unwinds;	/* walks */
	uint64_t reports;	/* module lists read */
	uint64_t retries;	/* walks done again with a fresh module list */
};

struct xpu_unwinder *xpu_unwinder_new(void);
void xpu_unwinder_free(struct xpu_unwinder *u);
/* As xpu_unwind, with u's cached state. */
int xpu_unwinder_run(struct xpu_unwinder *u, uint32_t pid, uint32_t tid,
		     const uint64_t regs[XPU_UNWIND_NREGS], const void *stack, size_t stack_len,
		     uint64_t *ips, int max);
void xpu_unwinder_stats(const struct xpu_unwinder *u, struct xpu_unwind_stats *st);

/* Unwinds thread tid of pid from regs and the stack bytes copied from regs[7]
 * (rsp).  Writes up to max instruction pointers, leaf first (the first is the
 * interrupted instruction, the rest return addresses), and returns how many;
 * 0 when nothing could be unwound. */
int xpu_unwind(uint32_t pid, uint32_t tid, const uint64_t regs[XPU_UNWIND_NREGS],
	       const void *stack, size_t stack_len, uint64_t *ips, int max);

#endif
