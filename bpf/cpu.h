/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel/user ABI of the CPU sampler (bpf/cpu.bpf.c <-> core/sources/source_cpu.c).
 * Fixed-width fields only; no includes, no pointers. */
#ifndef XPU_BPF_CPU_H
#define XPU_BPF_CPU_H

#define XPU_CPU_MAX_DEPTH 127	/* PERF_MAX_STACK_DEPTH */
#define XPU_COMM_LEN 16

enum xpu_cpu_rec_type {
	XPU_CPU_REC_SAMPLE = 1,
	XPU_CPU_REC_EXEC = 2,
	XPU_CPU_REC_EXIT = 3,
};

struct xpu_cpu_sample {
	__u32 type;		/* XPU_CPU_REC_SAMPLE */
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u32 uid;
	__u32 cpu;
	__s32 ulen;		/* bytes of user stack, or -errno */
	__s32 klen;		/* bytes of kernel stack, or -errno */
	__u32 pad;
	__u64 time_ns;		/* bpf_ktime_get_ns() */
	char comm[XPU_COMM_LEN];	/* group leader's name */
	char tcomm[XPU_COMM_LEN];	/* thread's name */
	__u64 ustack[XPU_CPU_MAX_DEPTH];	/* leaf first */
	__u64 kstack[XPU_CPU_MAX_DEPTH];
};

/* exec and exit of a thread group (exit: group leader only). */
struct xpu_cpu_proc {
	__u32 type;		/* XPU_CPU_REC_EXEC or XPU_CPU_REC_EXIT */
	__u32 pid;
	__u64 time_ns;
	char comm[XPU_COMM_LEN];
};

_Static_assert(sizeof(struct xpu_cpu_sample) == 72 + 2 * 8 * XPU_CPU_MAX_DEPTH, "cpu sample ABI");
_Static_assert(sizeof(struct xpu_cpu_proc) == 32, "cpu proc ABI");

#endif
