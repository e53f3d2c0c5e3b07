/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel/user ABI of the GPU launch probes (bpf/gpu.bpf.c <-> core/sources/gpu_probes.c).
 * Fixed-width fields only; no includes, no pointers. */
#ifndef XPU_BPF_GPU_H
#define XPU_BPF_GPU_H

#define XPU_GPU_MAX_DEPTH 127
#define XPU_GPU_STACK_PAGES 63		/* whole pages copied above the first partial one */
#define XPU_GPU_STACK_COPY ((XPU_GPU_STACK_PAGES + 1) * 4096)
#define XPU_GPU_NREGS 17		/* DWARF x86-64 registers 0..16 (16 = rip) */
/* Launch-only probes: a launch API's index (the uprobe's cookie) below this
 * is a runtime function, at or above it a driver function. */
#define XPU_GPU_NRUNTIME 11
/* The cookies of the probes that measure what a trap costs (on xputop's
 * own function, core/sources/launch_probes.c): an injected process's hit,
 * and a launch-only one's (its call site hashed); no launch API's. */
#define XPU_GPU_API_CALIB 0xffffu
#define XPU_GPU_API_CALIB_LO 0xfffeu
/* Return addresses hashed into a launch's call site: the caller's, then up
 * to this many more along the frame-pointer chain. */
#define XPU_GPU_SITE_DEPTH 8
/* Call sites counted per process before its new sites are counted without
 * a stack (site 0): a frame-pointer walk through code that uses rbp for
 * data could otherwise make every launch look new. */
#define XPU_GPU_SITES_PER_PROC 8192
/* bpf/gpu.bpf.c's probes_state, written by core/sources/launch_probes.c:
 * counting in a sampled slice, paused (counting nothing: the probes going in
 * or out), or on throughout (the machine launches so little that the traps
 * of all its launches cost less than a budget: every launch counted, apart
 * from a slice's, in probed_launches' whole_* fields). */
enum { XPU_GPU_PROBES_SLICE = 0, XPU_GPU_PROBES_PAUSED = 1, XPU_GPU_PROBES_WHOLE = 2 };
#define XPU_GPU_NAME_LEN 32

enum xpu_gpu_rec_type {
	XPU_GPU_REC_SITE = 1,		/* first launch from a call site of an injected process */
	XPU_GPU_REC_LAUNCH_SITE = 2,	/* first launch from a (thread, call site, API) of a
					 * process without the library */
	XPU_GPU_REC_MAPPED = 3,		/* a process maps a CUDA runtime or driver file
					 * not reported before */
	XPU_GPU_REC_WAIT = 4,		/* a thread of an injected process enters a waiter
					 * function (struct xpu_gpu_site, api = its index) */
	XPU_GPU_REC_WAIT_END = 5,	/* it returned from one (struct xpu_gpu_wait_end) */
	XPU_GPU_REC_NODE = 6,		/* a thread of an injected process made an autograd
					 * node from a making site not seen before (struct
					 * xpu_gpu_site: site and corr are the node's address,
					 * low and high half; api the site's key) */
	XPU_GPU_REC_RUN = 7,		/* a thread began running a node (struct xpu_gpu_node_run);
					 * its return comes as a WAIT_END of waiter
					 * XPU_GPU_RUN_WAITER */
	XPU_GPU_REC_NODE_SEEN = 8,	/* a node made from a making site seen before
					 * (struct xpu_gpu_node_seen), or not captured */
};

/* Making sites counted per process before its new ones go without a stack
 * (key 0): a program that makes nodes without ever running backward() (a
 * forward with grad on, in a loop) would otherwise send a stack a node. */
#define XPU_GPU_NODE_SITES_PER_PROC 8192

/* The node probes' cookie: which argument holds the node (0-5: rdi rsi rdx
 * rcx r8 r9), plus XPU_GPU_NODE_DEREF when the argument points to it. */
#define XPU_GPU_NODE_DEREF 0x100
/* The WAIT_END cookie of a node run's return (above every waiter index). */
#define XPU_GPU_RUN_WAITER 0xffff

/* Header of the two stack records. */
struct xpu_gpu_rec_hdr {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 site;		/* SITE: the library's site id; LAUNCH_SITE: 0 */
	__u32 corr;		/* SITE: CUPTI correlation id */
	__u32 api;		/* SITE: CUPTI cbid; LAUNCH_SITE: index of the probed function */
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

/* Launch-only counting: the key and value of the launch_counts map.  A
 * launch from a known key is one atomic add; a new key sends its stack once
 * (LAUNCH_SITE) and user space reads the counts each refresh. */
struct xpu_gpu_launch_key {
	__u32 pid;
	__u32 tid;
	__u64 site;		/* hash of the return addresses; 0 = counted without a stack */
	__u32 api;		/* index of the probed function */
	__u32 pad;
};

enum { XPU_GPU_LAUNCH_NESTED = 1 };	/* a driver launch the runtime made: already counted */

struct xpu_gpu_launch_count {
	__u64 calls;
	__u32 flags;		/* XPU_GPU_LAUNCH_* */
	__u32 pad;
	char comm[16];		/* the process's name when the key was made */
	__u64 born;		/* when the process started (its leader's start_time,
				 * CLOCK_MONOTONIC ns), as the key was made */
};

/* probed_launches' value: an injected process's launches the probes
 * counted in sampled slices, and their hits (a driver launch the runtime
 * made is a hit, not a launch); and any process's, injected or not, while
 * the probes were on throughout (XPU_GPU_PROBES_WHOLE). */
struct xpu_gpu_probed {
	__u64 launches;
	__u64 traps;
	__u64 whole_launches;
	__u64 whole_traps;
};

struct xpu_gpu_launch_site {
	struct xpu_gpu_rec_hdr h;
	struct xpu_gpu_launch_key key;
};

/* Key of files_seen: a CUDA file is reported once per (device, inode) until
 * user space forgets it. */
struct xpu_gpu_file_key {
	__u64 dev;		/* the kernel's dev_t of the file's superblock */
	__u64 ino;
};

/* A CUDA file reported; user space reads the process's maps to find and
 * probe it. */
struct xpu_gpu_mapped {
	__u32 type;
	__u32 pid;
	struct xpu_gpu_file_key file;
	__u64 time_ns;			/* when it was reported (mapped, or found at start) */
	char name[XPU_GPU_NAME_LEN];	/* the file's name, for messages */
};

/* A waiter function returned (a uprobe on the instruction its call returns
 * to, the return address its WAIT record's stack copy starts with).  sp: the
 * stack pointer after the return, above the entry's (regs[7] of its WAIT
 * record) by the return address: the waits whose entry sp lies below it are
 * over, those left by an exception included. */
struct xpu_gpu_wait_end {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 waiter;		/* index of the waiter function (the uprobe's cookie) */
	__u64 time_ns;
	__u64 sp;
};

/* A node run began: ret is the return address at sp, where the run ends. */
struct xpu_gpu_node_run {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 pad;
	__u64 time_ns;
	__u64 sp;
	__u64 node;
	__u64 ret;
};

/* A node made from a known making site: key is the site's (the api of the
 * NODE record that brought its stack), 0 when its stack was not captured. */
struct xpu_gpu_node_seen {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 key;
	__u64 time_ns;
	__u64 node;
};

_Static_assert(sizeof(struct xpu_gpu_wait_end) == 32, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_node_seen) == 32, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_node_run) == 48, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_rec_hdr) == 56 + 8 * XPU_GPU_MAX_DEPTH, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_site) ==
	       sizeof(struct xpu_gpu_rec_hdr) + 8 * XPU_GPU_NREGS + XPU_GPU_STACK_COPY, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_launch_key) == 24, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_launch_count) == 40, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_launch_site) == sizeof(struct xpu_gpu_rec_hdr) + 24, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_file_key) == 16, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_mapped) == 32 + XPU_GPU_NAME_LEN, "gpu ABI");

/* The launching threads' own CPU time (gpu_own, issue 25).  user space
 * writes a process's config when it watches its first thread; the program
 * counts each sample of its threads into its counts, which user space made
 * (zeroed) beside the config.  Ranges [0, ncuda) are CUDA's code, [ncuda,
 * nranges) code both sides call (libc, the loader, libstdc++, the vDSO:
 * CUPTI's locks, allocations and clock reads run there), counted apart;
 * ranges past nranges are ignored. */
#define XPU_GPU_OWN_RANGES 24
struct xpu_gpu_own_config {
	__u64 flag;		/* address of the library's xputop_tracing word */
	__u32 nranges;
	__u32 ncuda;
	__u64 lo[XPU_GPU_OWN_RANGES];	/* [lo, hi) */
	__u64 hi[XPU_GPU_OWN_RANGES];
};

/* [0]: the flag read 0 (not tracing), [1]: it read non-zero. */
struct xpu_gpu_own_counts {
	__u64 own[2];		/* the user-mode pc in the process's own code */
	__u64 cuda[2];		/* in one of the CUDA ranges */
	__u64 unread;		/* the flag could not be read: not counted above */
	__u64 shared[2];	/* in code both call (libc, ...): neither own nor CUDA's */
};

_Static_assert(sizeof(struct xpu_gpu_own_config) == 16 + 16 * XPU_GPU_OWN_RANGES, "gpu ABI");
_Static_assert(sizeof(struct xpu_gpu_own_counts) == 56, "gpu ABI");

#endif
