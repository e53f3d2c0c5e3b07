/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel/user ABI of the NPU probes (bpf/npu.bpf.c <-> core/sources/source_npu.c).
 * Fixed-width fields only; no includes, no pointers.
 *
 * Two channels: ioctls on accel fds are counted in a hash map (one entry per
 * process, command and errno, with a latency histogram) that user space reads
 * each refresh; everything rarer (firmware messages, jobs, memory, power,
 * Level Zero calls) comes as one record per event through the ring.
 */
#ifndef XPU_BPF_NPU_H
#define XPU_BPF_NPU_H

#define XPU_NPU_COMM_LEN 16
#define XPU_NPU_STR_LEN 32
#define XPU_NPU_ACCEL_MAJOR 261		/* ACCEL_MAJOR: /dev/accel/accelN */

/* Latency histogram: log-linear, 8 sub-buckets per power of two, so a
 * bucket is at most 1/8 of its value wide.  Values below 8 ns have a bucket
 * each; everything from 2^41 ns (36 minutes) up shares the last one. */
#define XPU_NPU_HIST_SUB 8
#define XPU_NPU_HIST_BUCKETS 320

/* floor(log2(v)) for v > 0, without __builtin_clzll (clang 14's BPF
 * backend crashes on it). */
static inline __u32 xpu_npu_log2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1)
		r += 1;
	return r;
}

/* Shared by the BPF side (which fills histograms) and the model (which
 * re-buckets the representative durations it is given), so both agree. */
static inline __u32 xpu_npu_hist_bucket(__u64 ns)
{
	__u32 e, b;

	if (ns < XPU_NPU_HIST_SUB)
		return (__u32)ns;
	e = xpu_npu_log2(ns);	/* >= 3 */
	b = (e - 2) * XPU_NPU_HIST_SUB + (__u32)((ns >> (e - 3)) & (XPU_NPU_HIST_SUB - 1));
	return b < XPU_NPU_HIST_BUCKETS ? b : XPU_NPU_HIST_BUCKETS - 1;
}

/* The smallest duration that falls in bucket b. */
static inline __u64 xpu_npu_hist_lower(__u32 b)
{
	__u32 e;

	if (b < XPU_NPU_HIST_SUB)
		return b;
	e = b / XPU_NPU_HIST_SUB + 2;
	return (__u64)(XPU_NPU_HIST_SUB + b % XPU_NPU_HIST_SUB) << (e - 3);
}

/* ioctl counting: key of the `ioctls` hash map. */
struct xpu_npu_ioctl_key {
	__u32 pid;		/* thread group id */
	__u16 cmd;		/* (type << 8) | nr: drm_ioctl() dispatches on nr only */
	__u16 err;		/* errno of a failed call, 0 for success */
};

struct xpu_npu_ioctl_val {
	__u64 count;
	__u64 sum_ns;
	char comm[XPU_NPU_COMM_LEN];	/* group leader's name at the first call */
	__u64 hist[XPU_NPU_HIST_BUCKETS];
};

/* Driver function calls: one multi-kprobe link (on the stand-in, one
 * multi-uprobe link) on every ivpu_* function.  The attach cookie is the
 * function's index in user space's table, with the DRM ioctl it serves in
 * the high 32 bits for an ioctl handler.  Calls are counted in the `funcs`
 * hash map by process, function and where the thread was: no record per
 * call.  pid and ctx are 0 outside any known Level Zero call or ioctl. */
struct xpu_npu_fn_key {
	__u32 pid;
	__u32 fn;		/* index in user space's function table */
	__u32 ctx;		/* Level Zero API << 16 | ioctl command ((type << 8) | nr) */
	__u32 pad;
};

struct xpu_npu_fn_val {
	__u64 count;
	__u64 last_ns;		/* bpf_ktime_get_ns() of the latest call */
	char comm[XPU_NPU_COMM_LEN];	/* group leader's name at the first call */
};

/* Driver function latency, entry to return, one entry per function in
 * the `fn_lat` array (sized to the functions attached): the histogram of
 * the calls timed, and the returns that could not be timed (no entry seen
 * on that thread: a probe missed, or the entry was evicted from the
 * in-flight table, or a nested call of the same function took it). */
struct xpu_npu_fn_lat {
	__u64 untimed;
	__u64 hist[XPU_NPU_HIST_BUCKETS];
};

#define XPU_NPU_FN_COOKIE(index, cmd) ((__u64)(cmd) << 32 | (__u32)(index))

/* Ring records: one struct, the fields' meaning depends on the type. */
enum xpu_npu_rec_type {
	XPU_NPU_REC_IPC_TX = 1,		/* ivpu_ipc_send: code = message type */
	XPU_NPU_REC_IPC_TX_RAW = 2,	/* ivpu_hw_ip_ipc_tx_set: one message sent, type unknown */
	XPU_NPU_REC_IPC_RX_RAW = 3,	/* ivpu_hw_ip_ipc_rx_addr_get: one message received */
	XPU_NPU_REC_IPC_REPLY = 4,	/* ivpu_ipc_receive returned: code = type, result = return,
					 * arg = heartbeat (QUERY_ENGINE_HB_DONE), dur_ns = wait */
	XPU_NPU_REC_JOB_SUBMIT = 5,	/* ivpu_hw_ip_db_set: aux = doorbell */
	XPU_NPU_REC_JOB_DONE = 6,	/* ivpu_job_done_callback: aux = doorbell, arg = job id,
					 * result = job status, code = engine */
	XPU_NPU_REC_JOB_ABORT = 7,	/* code = XPU_NPU_ABORT_* */
	XPU_NPU_REC_RECOVERY = 8,	/* ivpu_pm_trigger_recovery: str = reason */
	XPU_NPU_REC_PM = 9,		/* code = XPU_NPU_PMREC_* */
	XPU_NPU_REC_MEM = 10,		/* code = XPU_NPU_MEMREC_*, arg = size or address */
	XPU_NPU_REC_FENCE_INIT = 11,	/* dma_fence_init of an intel_vpu fence: aux = context, arg = seqno */
	XPU_NPU_REC_FENCE_SIGNAL = 12,	/* dma_fence_signaled: same */
	XPU_NPU_REC_TP_JOB = 13,	/* vpu:job: str = event, aux = ctx, code = engine, arg = job id */
	XPU_NPU_REC_TP_JSM = 14,	/* vpu:jsm: str = "[tx]"/"[rx]", str2 = type name,
					 * result = status, aux = request id */
	XPU_NPU_REC_TP_PM = 15,		/* vpu:pm: str = event */
	XPU_NPU_REC_L0 = 16,		/* a Level Zero call returned: code = API, result, dur_ns */
	XPU_NPU_REC_TYPE_MAX
};

enum { XPU_NPU_ABORT_ALL = 1, XPU_NPU_ABORT_CMDQ = 2, XPU_NPU_ABORT_ENGINE_ERROR = 3 };
enum { XPU_NPU_PMREC_SUSPEND = 1, XPU_NPU_PMREC_RESUME = 2 };
enum {
	XPU_NPU_MEMREC_BO_CREATE = 1,
	XPU_NPU_MEMREC_BIND = 2,
	XPU_NPU_MEMREC_MAP = 3,
	XPU_NPU_MEMREC_UNMAP = 4,
	XPU_NPU_MEMREC_FAULT = 5,
};

struct xpu_npu_rec {
	__u32 type;		/* enum xpu_npu_rec_type */
	__u32 pid;		/* current thread group (0 in interrupt context) */
	__u32 tid;
	__u32 code;
	__s32 result;
	__u32 aux;
	__u64 time_ns;		/* bpf_ktime_get_ns() */
	__u64 arg;
	__u64 dur_ns;
	char comm[XPU_NPU_COMM_LEN];
	char str[XPU_NPU_STR_LEN];
	char str2[XPU_NPU_STR_LEN];
};

/* The Level Zero entry points, passed as the uprobe's BPF cookie. */
enum xpu_npu_l0_api {
	XPU_NPU_L0_EXECUTE = 1,		/* zeCommandQueueExecuteCommandLists */
	XPU_NPU_L0_QUEUE_SYNC = 2,	/* zeCommandQueueSynchronize */
	XPU_NPU_L0_FENCE_SYNC = 3,	/* zeFenceHostSynchronize */
	XPU_NPU_L0_EVENT_SYNC = 4,	/* zeEventHostSynchronize */
	XPU_NPU_L0_ALLOC_HOST = 5,	/* zeMemAllocHost */
	XPU_NPU_L0_ALLOC_DEVICE = 6,	/* zeMemAllocDevice */
	XPU_NPU_L0_ALLOC_SHARED = 7,	/* zeMemAllocShared */
	XPU_NPU_L0_API_MAX
};

_Static_assert(sizeof(struct xpu_npu_ioctl_key) == 8, "npu ioctl key ABI");
_Static_assert(sizeof(struct xpu_npu_ioctl_val) == 32 + 8 * XPU_NPU_HIST_BUCKETS, "npu ioctl value ABI");
_Static_assert(sizeof(struct xpu_npu_rec) == 128, "npu record ABI");
_Static_assert(sizeof(struct xpu_npu_fn_key) == 16, "npu function key ABI");
_Static_assert(sizeof(struct xpu_npu_fn_val) == 32, "npu function value ABI");
_Static_assert(sizeof(struct xpu_npu_fn_lat) == 8 + 8 * XPU_NPU_HIST_BUCKETS, "npu function latency ABI");

#endif
