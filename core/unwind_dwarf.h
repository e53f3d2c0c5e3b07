/* DWARF unwinding of a user stack captured by BPF (registers + a copy of the
 * stack from rsp up), through the .eh_frame of the process's files, as
 * `perf --call-graph dwarf` does.  Needed where libraries have no frame
 * pointers (PyTorch's); JIT code without CFI falls back to the frame pointer.
 * Runs in xputop, once per new launch site, while the process still lives. */
#ifndef XPU_UNWIND_H
#define XPU_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define XPU_UNWIND_NREGS 17	/* DWARF x86-64 registers 0..16, 16 = rip */

/* Unwinds thread tid of pid from regs and the stack bytes copied from regs[7]
 * (rsp).  Writes up to max instruction pointers, leaf first (the first is the
 * interrupted instruction, the rest return addresses), and returns how many;
 * 0 when nothing could be unwound. */
int xpu_unwind(uint32_t pid, uint32_t tid, const uint64_t regs[XPU_UNWIND_NREGS],
	       const void *stack, size_t stack_len, uint64_t *ips, int max);

#endif
