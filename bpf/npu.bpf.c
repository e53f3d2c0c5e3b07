/* SPDX-License-Identifier: GPL-2.0-only */
/* Intel NPU (intel_vpu) telemetry.
 *
 * ioctls: the syscall tracepoints, counted only for fds whose inode is an
 * accel character device (major 261) or the node named with --npu-dev, into
 * the `ioctls` map with a latency histogram; no record per call.
 *
 * Driver internals: the ivpu_* programs are written with BPF_KPROBE so user
 * space can attach the same code as kprobes (a kernel that has them) or as
 * uprobes on a stand-in binary exporting functions with the driver's names and
 * signatures (tests).  Pointers they follow are read with probe_read_kernel
 * or probe_read_user accordingly (probe_user).  The vpu:* tracepoints (6.13+)
 * and dma_fence tracepoints (the generic job fallback) read their raw
 * tracepoint records at offsets user space checks against the format files
 * before it lets them load.  Level Zero calls are uprobes on the loader, the
 * API passed as the BPF cookie.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "npu.h"

char LICENSE[] SEC("license") = "GPL";

#define S_IFMT 0170000
#define S_IFCHR 0020000
#define ETIMEDOUT 110
#define JSM_QUERY_ENGINE_HB_DONE 0x2204

/* The ivpu programs run as uprobes on a stand-in: pointers are user memory. */
const volatile bool probe_user = false;
/* Also count ioctls on this device (kernel dev_t: major << 20 | minor); 0 = none. */
const volatile __u32 extra_rdev = 0;
/* Time every driver function from entry to return (the return program is
 * attached to all of them, not only the ioctl handlers). */
const volatile bool fn_latency = false;
/* dma_fence fallback: the driver name of NPU fences. */
const volatile char fence_driver[16] = "intel_vpu";

/* 4 MiB: about 30,000 records, 150 ms of a 200,000/s probe storm for
 * xputop to be late by on a busy machine before anything is lost. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

/* The reader is woken once this much waits, not for every record: a wakeup
 * per record costs the probed process more than the record itself, and a
 * storm of them keeps xputop switching in and out.  What is below it is
 * read at the next refresh, when xputop drains every ring anyway. */
#define WAKEUP_BYTES (256 << 10)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct xpu_npu_ioctl_key);
	__type(value, struct xpu_npu_ioctl_val);
} ioctls SEC(".maps");

struct ioctl_start {
	__u64 ts;
	__u32 cmd;
	__u32 pad;
};

/* In-flight calls by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ioctl_start);
} ioctl_starts SEC(".maps");

struct stash {
	__u64 ts;
	__u64 ptr;
};

/* ivpu_ipc_receive's reply buffer and Level Zero call starts, by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct stash);
} ipc_stash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stash);
} l0_stash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct xpu_npu_fn_key);
	__type(value, struct xpu_npu_fn_val);
} funcs SEC(".maps");

/* The ivpu ioctl handler each thread is in, by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} fn_ioctl SEC(".maps");

/* Driver function latency by function index; user space sets the size. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xpu_npu_fn_lat);
} fn_lat SEC(".maps");

struct fn_start_key {
	__u32 tid;
	__u32 fn;
};

/* In-flight driver function calls: (thread, function) -> entry time.  LRU:
 * an entry whose return never came (the thread died in it, a return probe
 * missed) is evicted rather than filling the table; a return that finds
 * nothing is counted as untimed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fn_start_key);
	__type(value, __u64);
} fn_starts SEC(".maps");

/* Lost on the way: ring full, ioctl map full, in-flight tables full. */
__u64 dropped_funcs = 0;
__u64 dropped_records = 0;
__u64 dropped_ioctls = 0;
__u64 dropped_starts = 0;
__u64 dropped_fn_starts = 0;	/* entry times not stored: returns then count as untimed */

static __always_inline int read_ptr_mem(void *dst, __u32 size, const void *src)
{
	return probe_user ? bpf_probe_read_user(dst, size, src) : bpf_probe_read_kernel(dst, size, src);
}

static __always_inline int read_ptr_str(void *dst, __u32 size, const void *src)
{
	return probe_user ? bpf_probe_read_user_str(dst, size, src)
			  : bpf_probe_read_kernel_str(dst, size, src);
}

static __always_inline void leader_comm(char *comm)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	if (!leader || bpf_core_read_str(comm, XPU_NPU_COMM_LEN, &leader->comm) < 0)
		bpf_get_current_comm(comm, XPU_NPU_COMM_LEN);
}

static __always_inline struct xpu_npu_rec *rec_new(__u32 type)
{
	struct xpu_npu_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	__u64 id;

	if (!r) {
		__sync_fetch_and_add(&dropped_records, 1);
		return NULL;
	}
	__builtin_memset(r, 0, sizeof(*r));
	id = bpf_get_current_pid_tgid();
	r->type = type;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->time_ns = bpf_ktime_get_ns();
	leader_comm(r->comm);
	return r;
}

static __always_inline void rec_submit(struct xpu_npu_rec *r)
{
	__u64 waiting = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(r, waiting >= WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* ---- ioctls on accel fds ---- */

static __always_inline bool npu_fd(unsigned int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	struct inode *inode;
	__u32 rdev;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_core_read(&file, sizeof(file), &fds[fd]) || !file)
		return false;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFCHR)
		return false;
	rdev = BPF_CORE_READ(inode, i_rdev);
	return (rdev >> 20) == XPU_NPU_ACCEL_MAJOR || (extra_rdev && rdev == extra_rdev);
}

SEC("tracepoint/syscalls/sys_enter_ioctl")
int npu_ioctl_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct ioctl_start st = {};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!npu_fd((unsigned int)ctx->args[0]))
		return 0;
	st.cmd = (__u32)ctx->args[1];
	st.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&ioctl_starts, &tid, &st, BPF_ANY))
		__sync_fetch_and_add(&dropped_starts, 1);
	return 0;
}

static __always_inline struct xpu_npu_ioctl_val *ioctl_val(struct xpu_npu_ioctl_key *k)
{
	static const struct xpu_npu_ioctl_val zero;
	struct xpu_npu_ioctl_val *v = bpf_map_lookup_elem(&ioctls, k);

	if (v)
		return v;
	/* A full map, or another CPU adding the same key: look again either way. */
	bpf_map_update_elem(&ioctls, k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&ioctls, k);
	if (v && !v->comm[0])
		leader_comm(v->comm);
	return v;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int npu_ioctl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct ioctl_start *st = bpf_map_lookup_elem(&ioctl_starts, &tid);
	struct xpu_npu_ioctl_key k = {};
	struct xpu_npu_ioctl_val *v;
	__u64 dur;
	long ret = ctx->ret;
	__u32 b;

	if (!st)
		return 0;
	dur = bpf_ktime_get_ns() - st->ts;
	k.pid = id >> 32;
	k.cmd = (__u16)(st->cmd & 0xffff);
	k.err = ret < 0 && ret > -4096 ? (__u16)-ret : 0;
	bpf_map_delete_elem(&ioctl_starts, &tid);
	v = ioctl_val(&k);
	if (!v) {
		__sync_fetch_and_add(&dropped_ioctls, 1);
		return 0;
	}
	b = xpu_npu_hist_bucket(dur);
	if (b >= XPU_NPU_HIST_BUCKETS)	/* for the verifier; the function caps it */
		return 0;
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->sum_ns, dur);
	__sync_fetch_and_add(&v->hist[b], 1);
	return 0;
}

/* ---- firmware IPC ---- */

SEC("kprobe")
int BPF_KPROBE(npu_ipc_send, void *vdev, void *cons, void *req)
{
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_IPC_TX);
	__u32 type = 0;

	if (!r)
		return 0;
	read_ptr_mem(&type, sizeof(type), req + 8);
	r->code = type;
	rec_submit(r);
	return 0;
}

static __always_inline int simple(__u32 type, __u32 code, __u64 arg, __u32 aux)
{
	struct xpu_npu_rec *r = rec_new(type);

	if (!r)
		return 0;
	r->code = code;
	r->arg = arg;
	r->aux = aux;
	rec_submit(r);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(npu_ipc_tx_set, void *vdev)
{
	return simple(XPU_NPU_REC_IPC_TX_RAW, 0, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_ipc_rx_addr_get, void *vdev)
{
	return simple(XPU_NPU_REC_IPC_RX_RAW, 0, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_ipc_receive, void *vdev, void *cons, void *ipc_buf, void *jsm_msg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stash s = { .ts = bpf_ktime_get_ns(), .ptr = (__u64)jsm_msg };

	bpf_map_update_elem(&ipc_stash, &tid, &s, BPF_ANY);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(npu_ipc_receive_ret, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stash *s = bpf_map_lookup_elem(&ipc_stash, &tid);
	struct xpu_npu_rec *r;
	__u64 ptr, ts;
	__u32 type = 0;

	if (!s)
		return 0;
	ptr = s->ptr;
	ts = s->ts;
	bpf_map_delete_elem(&ipc_stash, &tid);
	r = rec_new(XPU_NPU_REC_IPC_REPLY);
	if (!r)
		return 0;
	r->result = ret;
	r->dur_ns = r->time_ns - ts;
	if (ret == 0 && ptr) {
		read_ptr_mem(&type, sizeof(type), (void *)ptr + 8);
		r->code = type;
		/* vpu_ipc_msg_payload_query_engine_hb_done: engine, reserved, u64 heartbeat */
		if (type == JSM_QUERY_ENGINE_HB_DONE)
			read_ptr_mem(&r->arg, sizeof(r->arg), (void *)ptr + 40);
	}
	rec_submit(r);
	return 0;
}

/* ---- jobs ---- */

SEC("kprobe")
int BPF_KPROBE(npu_db_set, void *vdev, __u32 db_id)
{
	return simple(XPU_NPU_REC_JOB_SUBMIT, 0, 0, db_id);
}

/* Kernels without ivpu_hw_ip_db_set (before 6.11): a submit ioctl that
 * succeeded is a job. */
SEC("kretprobe")
int BPF_KRETPROBE(npu_submit_ret, int ret)
{
	return ret ? 0 : simple(XPU_NPU_REC_JOB_SUBMIT, 0, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_job_done, void *vdev, void *hdr, void *msg)
{
	/* vpu_ipc_msg_payload_job_done at msg + 32 */
	__u32 p[4] = {};	/* engine_idx, db_idx, job_id, job_status */
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_JOB_DONE);

	if (!r)
		return 0;
	read_ptr_mem(p, sizeof(p), msg + 32);
	r->code = p[0];
	r->aux = p[1];
	r->arg = p[2];
	r->result = (__s32)p[3];
	rec_submit(r);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(npu_jobs_abort_all, void *vdev)
{
	return simple(XPU_NPU_REC_JOB_ABORT, XPU_NPU_ABORT_ALL, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_cmdq_abort_all, void *vdev)
{
	return simple(XPU_NPU_REC_JOB_ABORT, XPU_NPU_ABORT_CMDQ, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_engine_error, void *vdev)
{
	return simple(XPU_NPU_REC_JOB_ABORT, XPU_NPU_ABORT_ENGINE_ERROR, 0, 0);
}

/* ---- power and recovery ---- */

SEC("kprobe")
int BPF_KPROBE(npu_recovery, void *vdev, const char *reason)
{
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_RECOVERY);

	if (!r)
		return 0;
	if (reason)
		read_ptr_str(r->str, sizeof(r->str), reason);
	rec_submit(r);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(npu_pm_suspend, void *dev)
{
	return simple(XPU_NPU_REC_PM, XPU_NPU_PMREC_SUSPEND, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_pm_resume, void *dev)
{
	return simple(XPU_NPU_REC_PM, XPU_NPU_PMREC_RESUME, 0, 0);
}

/* ---- memory ---- */

SEC("kprobe")
int BPF_KPROBE(npu_bo_create, void *drm, __u64 size)
{
	return simple(XPU_NPU_REC_MEM, XPU_NPU_MEMREC_BO_CREATE, size, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_bo_bind, void *bo)
{
	return simple(XPU_NPU_REC_MEM, XPU_NPU_MEMREC_BIND, 0, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_mmu_map, void *vdev, void *ctx_, __u64 vpu_addr, void *sgt)
{
	return simple(XPU_NPU_REC_MEM, XPU_NPU_MEMREC_MAP, vpu_addr, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_mmu_unmap, void *vdev, void *ctx_, __u64 vpu_addr, void *sgt)
{
	return simple(XPU_NPU_REC_MEM, XPU_NPU_MEMREC_UNMAP, vpu_addr, 0);
}

SEC("kprobe")
int BPF_KPROBE(npu_mmu_fault, void *vdev)
{
	return simple(XPU_NPU_REC_MEM, XPU_NPU_MEMREC_FAULT, 0, 0);
}

/* ---- vpu:* tracepoints (6.13+); layouts checked by user space ---- */

struct vpu_job_args {
	__u64 common;
	__u64 event;		/* const char * */
	__u32 ctx_id, engine_id, job_id;
};

struct vpu_jsm_args {
	__u64 common;
	__u64 event;		/* const char *: "[tx]" / "[rx]" */
	__u64 type;		/* const char * */
	__u32 status, request_id, result;
};

struct vpu_pm_args {
	__u64 common;
	__u64 event;
};

SEC("tracepoint/vpu/job")
int npu_tp_job(struct vpu_job_args *a)
{
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_TP_JOB);

	if (!r)
		return 0;
	bpf_probe_read_kernel_str(r->str, sizeof(r->str), (void *)a->event);
	r->aux = a->ctx_id;
	r->code = a->engine_id;
	r->arg = a->job_id;
	rec_submit(r);
	return 0;
}

SEC("tracepoint/vpu/jsm")
int npu_tp_jsm(struct vpu_jsm_args *a)
{
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_TP_JSM);

	if (!r)
		return 0;
	bpf_probe_read_kernel_str(r->str, sizeof(r->str), (void *)a->event);
	bpf_probe_read_kernel_str(r->str2, sizeof(r->str2), (void *)a->type);
	r->result = (__s32)a->status;
	r->aux = a->request_id;
	rec_submit(r);
	return 0;
}

SEC("tracepoint/vpu/pm")
int npu_tp_pm(struct vpu_pm_args *a)
{
	struct xpu_npu_rec *r = rec_new(XPU_NPU_REC_TP_PM);

	if (!r)
		return 0;
	bpf_probe_read_kernel_str(r->str, sizeof(r->str), (void *)a->event);
	rec_submit(r);
	return 0;
}

/* ---- dma_fence fallback: one fence per job ---- */

struct fence_args {
	__u64 common;
	__u32 driver;		/* __data_loc: offset | length << 16 */
	__u32 timeline;
	__u32 context;
	__u32 seqno;
};

static __always_inline int fence(void *ctx, __u32 type)
{
	struct fence_args *a = ctx;
	char name[16] = {};
	__u32 loc = a->driver;

	bpf_probe_read_kernel_str(name, sizeof(name), ctx + (loc & 0xffff));
	for (int i = 0; i < (int)sizeof(name); i++) {
		if (name[i] != fence_driver[i])
			return 0;
		if (!name[i])
			break;
	}
	return simple(type, 0, a->seqno, a->context);
}

SEC("tracepoint/dma_fence/dma_fence_init")
int npu_fence_init(void *ctx)
{
	return fence(ctx, XPU_NPU_REC_FENCE_INIT);
}

SEC("tracepoint/dma_fence/dma_fence_signaled")
int npu_fence_signaled(void *ctx)
{
	return fence(ctx, XPU_NPU_REC_FENCE_SIGNAL);
}

/* ---- every ivpu_* function: one multi link, the cookie says which ---- */

/* The ioctl a thread is in: the handler it entered, else the syscall the
 * tracepoints saw it enter on an accel fd. */
static __always_inline __u32 thread_ioctl(__u32 tid, __u32 handler)
{
	struct ioctl_start *st;
	__u32 *cmd;

	if (handler) {
		bpf_map_update_elem(&fn_ioctl, &tid, &handler, BPF_ANY);
		return handler;
	}
	cmd = bpf_map_lookup_elem(&fn_ioctl, &tid);
	if (cmd)
		return *cmd;
	st = bpf_map_lookup_elem(&ioctl_starts, &tid);
	return st ? st->cmd & 0xffff : 0;
}

SEC("kprobe.multi")
int npu_func(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct xpu_npu_fn_key k = { .fn = (__u32)cookie };
	struct xpu_npu_fn_val *v, zero = {};
	struct stash *l0 = bpf_map_lookup_elem(&l0_stash, &tid);

	k.ctx = (l0 ? (__u32)l0->ptr << 16 : 0) | (thread_ioctl(tid, (__u32)(cookie >> 32)) & 0xffff);
	k.pid = k.ctx ? id >> 32 : 0;	/* outside a call, current is whoever ran */
	v = bpf_map_lookup_elem(&funcs, &k);
	if (!v) {
		if (k.pid)
			leader_comm(zero.comm);
		bpf_map_update_elem(&funcs, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&funcs, &k);
		if (!v) {
			__sync_fetch_and_add(&dropped_funcs, 1);
			return 0;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	v->last_ns = bpf_ktime_get_ns();	/* racing CPUs: one of their times, either will do */
	if (fn_latency) {
		/* Last, so the entry's own bookkeeping is not in the latency.  A
		 * nested call of the same function on the thread restarts the
		 * clock: the outer return then counts as untimed, never as short. */
		struct fn_start_key sk = { .tid = tid, .fn = k.fn };
		__u64 ts = bpf_ktime_get_ns();

		if (bpf_map_update_elem(&fn_starts, &sk, &ts, BPF_ANY))
			__sync_fetch_and_add(&dropped_fn_starts, 1);
	}
	return 0;
}

static __always_inline void fn_time(__u32 tid, __u32 fn)
{
	struct fn_start_key sk = { .tid = tid, .fn = fn };
	__u64 now = bpf_ktime_get_ns(), *ts = bpf_map_lookup_elem(&fn_starts, &sk);
	struct xpu_npu_fn_lat *l = bpf_map_lookup_elem(&fn_lat, &fn);
	__u64 dur;
	__u32 b;

	if (!l)
		return;
	if (!ts) {
		__sync_fetch_and_add(&l->untimed, 1);
		return;
	}
	dur = now > *ts ? now - *ts : 0;
	bpf_map_delete_elem(&fn_starts, &sk);
	b = xpu_npu_hist_bucket(dur);
	if (b >= XPU_NPU_HIST_BUCKETS)	/* for the verifier; the function caps it */
		return;
	__sync_fetch_and_add(&l->hist[b], 1);
}

/* On every function's return with fn_latency, else on the ioctl handlers'
 * only: the thread leaves its ioctl, and the call is timed. */
SEC("kprobe.multi")
int npu_func_ret(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (cookie >> 32)
		bpf_map_delete_elem(&fn_ioctl, &tid);
	if (fn_latency)
		fn_time(tid, (__u32)cookie);
	return 0;
}

/* ---- Level Zero: the API is the attach cookie ---- */

SEC("uprobe")
int BPF_KPROBE(npu_l0_enter)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stash s = { .ts = bpf_ktime_get_ns(), .ptr = bpf_get_attach_cookie(ctx) };

	bpf_map_update_elem(&l0_stash, &tid, &s, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(npu_l0_exit, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stash *s = bpf_map_lookup_elem(&l0_stash, &tid);
	struct xpu_npu_rec *r;
	__u64 ts, api;

	if (!s)
		return 0;
	ts = s->ts;
	api = s->ptr;
	bpf_map_delete_elem(&l0_stash, &tid);
	r = rec_new(XPU_NPU_REC_L0);
	if (!r)
		return 0;
	r->code = (__u32)api;
	r->result = ret;
	r->dur_ns = r->time_ns - ts;
	rec_submit(r);
	return 0;
}
