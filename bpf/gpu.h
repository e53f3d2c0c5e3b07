/* Kernel/user ABI of the GPU launch probes (bpf/gpu.bpf.c <-> core/source_gpu.c).
 * Fixed-width fields only; no includes, no pointers. */
#ifndef XPU_BPF_GPU_H
#define XPU_BPF_GPU_H

#define XPU_GPU_MAX_DEPTH 127
#define XPU_GPU_STACK_PAGES 63		/* whole pages copied above the first partial one */
#define XPU_GPU_STACK_COPY ((XPU_GPU_STACK_PAGES + 1) * 4096)
#define XPU_GPU_NREGS 17		/* DWARF x86-64 registers 0..16 (16 = rip) */

enum xpu_gpu_rec_type {
	XPU_GPU_REC_SITE = 1,		/* first launch from a call site of an injected process */
	XPU_GPU_REC_LAUNCH = 2,		/* a launch API call in a process without the library */
};

/* Header shared by both records. */
struct xpu_gpu_rec_hdr {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 site;		/* SITE: the library's site id; LAUNCH: 0 */
	__u32 corr;		/* SITE: CUPTI correlation id */
	__u32 api;		/* SITE: CUPTI cbid; LAUNCH: index of the probed function */
	__u64 time_ns;
	__s32 ulen;		/* bytes of ustack (frame-pointer walk), or -errno */
	__u32 copied;		/* SITE: bytes of stack copied from regs[7] (rsp) up */
	char comm[16];
	__u64 ustack[XPU_GPU_MAX_DEPTH];	/* leaf first */
};

struct xpu_gpu_site {
	struct xpu_gpu_rec_hdr h;
	__u64 regs[XPU_GPU_NREGS];	/* for DWARF unwinding in user space */
	__u8 stack[XPU_GPU_STACK_COPY];
};

_Static_assert(sizeof(struct xpu_gpu_rec_hdr) == 56 + 8 * XPU_GPU_MAX_DEPTH, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_site) ==
	       sizeof(struct xpu_gpu_rec_hdr) + 8 * XPU_GPU_NREGS + XPU_GPU_STACK_COPY, "gpu ABI");

#endif
