/* SPDX-License-Identifier: GPL-2.0-only */
/* The wire format between libxputop_inject.so (inside CUDA programs) and
 * xputop, over the SOCK_SEQPACKET socket XPU_WIRE_SOCKET.
 *
 * Every message is one packet: a struct xpu_wire_msg header followed by
 * records, each a struct xpu_wire_rec header and a body of the size the type
 * fixes (NAME: header + the name bytes).  All integers are little-endian,
 * fixed width.  xputop treats everything here as untrusted: each packet and
 * record is length-checked, unknown types are counted and skipped, and a
 * connection's records always belong to the process its peer credentials name.
 *
 * Conversation: the library connects and sends HELLO; xputop answers START
 * (with the tracing mode); the library enables CUPTI (all the time, or in
 * slices) and streams batches until the socket closes (or xputop sends
 * STOP), then goes dormant again.  MODE switches the mode at any time.
 */
#ifndef XPU_INJECT_WIRE_H
#define XPU_INJECT_WIRE_H

#include <stdint.h>

#define XPU_WIRE_SOCKET "/run/xputop/gpu.sock"
#define XPU_WIRE_MAGIC 0x57555058u	/* "XPUW" */
#define XPU_WIRE_VERSION 2
#define XPU_WIRE_MAX_MSG 65536		/* largest packet either side sends */
#define XPU_WIRE_MAX_NAME 4096		/* longest kernel or API name sent */
#define XPU_WIRE_MAX_CBID 2048		/* callback ids above this are not named */

enum xpu_wire_type {
	/* library -> xputop */
	XPU_WIRE_HELLO = 1,
	XPU_WIRE_NAME = 2,	/* a kernel name and the id later records use */
	XPU_WIRE_KERNEL = 3,
	XPU_WIRE_MEMCPY = 4,
	XPU_WIRE_MEMSET = 5,
	XPU_WIRE_LAUNCH = 6,
	XPU_WIRE_STATUS = 7,
	XPU_WIRE_API = 8,	/* the name of a launch API callback id */
	XPU_WIRE_SLICE = 9,	/* a span of time the library traced */
	XPU_WIRE_WHOLE = 10,	/* a span it traced throughout (struct xpu_wire_slice) */
	/* xputop -> library */
	XPU_WIRE_START = 16,
	XPU_WIRE_STOP = 17,
	XPU_WIRE_MODE = 18,	/* switch between exact and sampled tracing */
};

struct xpu_wire_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t nrecs;
	uint32_t len;		/* bytes of the whole packet, this header included */
	uint32_t seq;		/* packets sent on this connection before this one */
};

struct xpu_wire_rec {
	uint16_t type;
	uint16_t len;		/* bytes of the body that follows */
};

/* XPU_WIRE_STATE_IDS_STUCK: CUPTI gave every API call one correlation id
 * and the library could not detach it to start afresh (CUDA graphs seen, or
 * XPUTOP_CUPTI_DETACH=0): nothing is traced until the process restarts
 * (inject/cupti.c).  While a detach is under way it is said too, for a
 * moment. */
enum {
	XPU_WIRE_STATE_OK = 0,
	XPU_WIRE_STATE_OTHER_SUBSCRIBER = 1,
	XPU_WIRE_STATE_CUPTI_ERROR = 2,
	XPU_WIRE_STATE_IDS_STUCK = 3,
};
#define XPU_WIRE_DETACH_OFF 0x80000000u	/* xpu_wire_status.detach */

struct xpu_wire_hello {
	uint32_t pid;		/* must equal the peer's credentials */
	uint32_t cupti_version;
	uint32_t cuda_version;	/* driver API version, 0 if unknown */
	uint32_t flags;
	char comm[16];
};

/* Launch API names (cudaLaunchKernel, ...), sent once per callback id. */
struct xpu_wire_api {
	uint32_t domain;	/* CUPTI callback domain */
	uint32_t cbid;
	/* followed by the name's bytes, no NUL: body len - 8 bytes */
};

/* Kernel names are sent once per process and referred to by id. */
struct xpu_wire_name {
	uint32_t id;		/* 1, 2, 3, ... in order */
	uint32_t pad;
	/* followed by the name's bytes, no NUL: body len - 8 bytes */
};

struct xpu_wire_kernel {
	uint64_t start, end;	/* CLOCK_MONOTONIC ns */
	uint32_t corr;
	uint32_t name;		/* NAME id */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t graph;		/* graph id, 0 if not launched as part of a graph */
};

struct xpu_wire_memcpy {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t corr;
	uint32_t device;
	uint32_t kind;		/* CUPTI memcpy kind (MEMSET: 0) */
	uint32_t stream;
};

/* One launch API call seen by the callback on the launching thread. */
struct xpu_wire_launch {
	uint64_t time;		/* CLOCK_MONOTONIC ns at the API entry */
	uint32_t corr;
	uint32_t tid;
	uint32_t site;		/* call site: its stack was captured by BPF when first seen */
	uint32_t cbid;		/* CUPTI callback id */
	uint32_t domain;	/* CUPTI callback domain: runtime or driver */
	uint32_t flags;		/* XPU_WIRE_LAUNCH_*; 0 from libraries before them */
};

/* The launch was made while the library traced throughout (XPU_WIRE_WHOLE):
 * it and its kernels are counted as they are, not a sample. */
#define XPU_WIRE_LAUNCH_WHOLE 1u

/* Sent about once a second and when the process exits, in a packet of its
 * own (so a full buffer cannot lose it).  Counters are cumulative since
 * this monitor connected: the last one received is the process's account. */
struct xpu_wire_status {
	uint64_t dropped;	/* records the library dropped (its buffer full), all types */
	uint64_t cupti_dropped;	/* activity records CUPTI reported dropped, and graph kernels
				 * whose end CUPTI took from a later flush (inject/gaps.c) */
	uint64_t launches;	/* launch callbacks */
	uint64_t sites;		/* call sites known */
	uint32_t state;		/* XPU_WIRE_STATE_* */
	uint32_t detach;	/* times CUPTI was detached between slices (low 31 bits);
				 * bit 31: it stays attached (XPU_WIRE_DETACH_OFF) */
	uint64_t kernels;	/* kernel records CUPTI delivered to the library */
	uint64_t kernels_dropped;	/* of which dropped (included in dropped) */
	uint64_t launches_dropped;	/* launch records dropped (included in dropped) */
	uint64_t traced_ns;	/* time tracing was on */
	uint64_t toggle_ns;	/* time spent switching CUPTI on and off */
	uint32_t toggles;	/* times it was switched on */
	uint32_t mode;		/* XPU_WIRE_MODE_* in force */
};

/* Tracing was on from start to end (CLOCK_MONOTONIC ns): every launch in
 * it went through the callbacks and every kernel it launched was timed.
 * Sampled mode sends one per slice, exact mode one about every flush, so
 * xputop knows what share of the time its figures cover.  XPU_WIRE_WHOLE
 * (the same body): sampled mode traced throughout, where the process
 * launched so little that tracing every launch cost at most whole_us a
 * second; sent at every flush while it lasts: what it saw there is counted
 * as it is, only the rest of the time is scaled by the slices. */
struct xpu_wire_slice {
	uint64_t start, end;
};

/* How the library traces: every kernel (exact), or slices of slice_ms in
 * every period_ms (sampled: CUPTI is off in between, and costs nothing).
 * Sampled, it traces throughout while its launches would cost CUPTI at
 * most whole_us a second (inject/sched.c; 0: never). */
struct xpu_wire_mode {
	uint32_t mode;		/* XPU_WIRE_MODE_* */
	uint32_t period_ms;	/* sampled: a slice in every period */
	uint32_t slice_ms;
	uint32_t whole_us;	/* sampled: the budget on throughout, us a second */
};

enum { XPU_WIRE_MODE_EXACT = 0, XPU_WIRE_MODE_SAMPLED = 1 };

struct xpu_wire_start {
	uint32_t flush_ms;	/* how often to flush CUPTI buffers */
	uint32_t flags;		/* XPU_WIRE_START_* */
	struct xpu_wire_mode mode;
};

enum {
	XPU_WIRE_START_MEMCPY = 1,	/* also memcpy and memset activity */
	XPU_WIRE_START_NO_SITES = 2,	/* no call sites: CUPTI alone (xputop --gpu-no-stacks) */
};

_Static_assert(sizeof(struct xpu_wire_msg) == 16, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_rec) == 4, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_hello) == 32, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_api) == 8, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_name) == 8, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_kernel) == 40, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_memcpy) == 40, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_launch) == 32, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_status) == 88, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_slice) == 16, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_mode) == 16, "wire ABI");
_Static_assert(sizeof(struct xpu_wire_start) == 24, "wire ABI");

#endif
