/* SPDX-License-Identifier: GPL-2.0-only */
#include "source_npu.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "err.h"
#include "func_offsets.h"
#include "grow.h"
#include "htab.h"
#include "model_npu.h"
#include "npu.h"
#include "npu_sysfs.h"
#include "npu.skel.h"
#include "readfile.h"
#include "session.h"
#include "source.h"
#include "source_npu_fn.h"
#include "symtab.h"
#include "symbolize.h"
#include "sys.h"
#include "uprobe_multi.h"

#define TRACEFS "/sys/kernel/tracing"
#define BUSY_EVERY_NS 1000000000ULL	/* frequent reads of busy time disturb submission */
#define PRUNE_EVERY 16			/* ticks between looks for exited processes */
#define MAX_LINKS 64

/* The ivpu_* functions and the program that probes each. */
enum group { G_IPC, G_JOBS, G_POWER, G_MEMORY, G_NGROUPS };
static const char *const group_names[G_NGROUPS] = { "IPC", "jobs", "power", "memory" };

enum probe_id {
	P_IPC_SEND, P_IPC_RECV, P_IPC_RECV_RET, P_TX_SET, P_RX_ADDR, P_DB_SET, P_JOB_DONE,
	P_ABORT_ALL, P_CMDQ_ABORT, P_ENGINE_ERROR, P_RECOVERY, P_SUSPEND, P_RESUME, P_BO_CREATE,
	P_BO_BIND, P_BO_PIN, P_MMU_MAP, P_MMU_UNMAP, P_MMU_FAULT, P_SUBMIT, P_CMDQ_SUBMIT, P_NPROBES
};

static const struct probe {
	const char *func;	/* the driver's function */
	const char *prog;	/* BPF program in npu.bpf.c */
	int ret;
	enum group group;
} probes[P_NPROBES] = {
	[P_IPC_SEND] = { "ivpu_ipc_send", "npu_ipc_send", 0, G_IPC },
	[P_IPC_RECV] = { "ivpu_ipc_receive", "npu_ipc_receive", 0, G_IPC },
	[P_IPC_RECV_RET] = { "ivpu_ipc_receive", "npu_ipc_receive_ret", 1, G_IPC },
	[P_TX_SET] = { "ivpu_hw_ip_ipc_tx_set", "npu_ipc_tx_set", 0, G_IPC },
	[P_RX_ADDR] = { "ivpu_hw_ip_ipc_rx_addr_get", "npu_ipc_rx_addr_get", 0, G_IPC },
	[P_DB_SET] = { "ivpu_hw_ip_db_set", "npu_db_set", 0, G_JOBS },
	[P_JOB_DONE] = { "ivpu_job_done_callback", "npu_job_done", 0, G_JOBS },
	[P_ABORT_ALL] = { "ivpu_jobs_abort_all", "npu_jobs_abort_all", 0, G_JOBS },
	[P_CMDQ_ABORT] = { "ivpu_cmdq_abort_all_jobs", "npu_cmdq_abort_all", 0, G_JOBS },
	[P_ENGINE_ERROR] = { "ivpu_job_handle_engine_error", "npu_engine_error", 0, G_JOBS },
	[P_RECOVERY] = { "ivpu_pm_trigger_recovery", "npu_recovery", 0, G_POWER },
	[P_SUSPEND] = { "ivpu_pm_runtime_suspend_cb", "npu_pm_suspend", 0, G_POWER },
	[P_RESUME] = { "ivpu_pm_runtime_resume_cb", "npu_pm_resume", 0, G_POWER },
	[P_BO_CREATE] = { "ivpu_gem_create_object", "npu_bo_create", 0, G_MEMORY },
	[P_BO_BIND] = { "ivpu_bo_bind", "npu_bo_bind", 0, G_MEMORY },
	[P_BO_PIN] = { "ivpu_bo_pin", "npu_bo_bind", 0, G_MEMORY },
	[P_MMU_MAP] = { "ivpu_mmu_context_map_sgt", "npu_mmu_map", 0, G_MEMORY },
	[P_MMU_UNMAP] = { "ivpu_mmu_context_unmap_sgt", "npu_mmu_unmap", 0, G_MEMORY },
	[P_MMU_FAULT] = { "ivpu_mmu_irq_evtq_handler", "npu_mmu_fault", 0, G_MEMORY },
	[P_SUBMIT] = { "ivpu_submit_ioctl", "npu_submit_ret", 1, G_JOBS },
	[P_CMDQ_SUBMIT] = { "ivpu_cmdq_submit_ioctl", "npu_submit_ret", 1, G_JOBS },
};

static const struct { const char *func; uint32_t api; } l0_apis[] = {
	{ "zeCommandQueueExecuteCommandLists", XPU_NPU_L0_EXECUTE },
	{ "zeCommandQueueSynchronize", XPU_NPU_L0_QUEUE_SYNC },
	{ "zeFenceHostSynchronize", XPU_NPU_L0_FENCE_SYNC },
	{ "zeEventHostSynchronize", XPU_NPU_L0_EVENT_SYNC },
	{ "zeMemAllocHost", XPU_NPU_L0_ALLOC_HOST },
	{ "zeMemAllocDevice", XPU_NPU_L0_ALLOC_DEVICE },
	{ "zeMemAllocShared", XPU_NPU_L0_ALLOC_SHARED },
};
#define NL0 (sizeof(l0_apis) / sizeof(l0_apis[0]))

enum { TP_JOB, TP_JSM, TP_PM, TP_FENCE_INIT, TP_FENCE_SIGNAL, NTPS };

/* The last counts read from one `ioctls` map entry. */
struct ioctl_prev {
	struct xpu_npu_ioctl_key key;
	uint64_t count;
	uint64_t hist[XPU_NPU_HIST_BUCKETS];
};

struct plan {
	int accel;		/* an NPU to watch: accel devices, intel_vpu, or --npu-dev */
	int ioctls;		/* and tracefs there: the syscall tracepoints can attach */
	int kprobes;		/* the kernel can kprobe */
	int vpu_loaded;
	const char *binary;	/* --npu-probe-binary made absolute (binary_path) */
	char binary_path[PATH_MAX];
	char ze[256];
	int have_ze;
	uint32_t rdev;		/* --npu-dev as a kernel dev_t */
};

struct npu_source {
	struct xpu_source base;
	struct npu_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *links[MAX_LINKS];
	int nlinks;
	struct xpu_session *sess;
	const uint32_t *pids;
	uint32_t npids;

	int have[P_NPROBES];	/* function present where the probes go */
	int use[P_NPROBES];	/* chosen and attached */
	int tp[NTPS];		/* tracepoint present with the layout the program reads */
	int tp_used[NTPS];
	int rx_counted_raw;	/* every received message comes from ivpu_hw_ip_ipc_rx_addr_get */
	int submit_ioctl;	/* jobs are submit ioctls: they carry no doorbell */

	struct ioctl_prev *prev;
	uint32_t nprev, capprev;
	struct xpu_htab prev_idx;
	uint64_t ticks;

	struct xpu_npu_sysfs *sysfs;	/* busy, memory, frequency, power, fdinfo, uevents */

	uint64_t seen_drops, bad_records;

	struct xpu_npu_fns *fns;	/* every ivpu_* function, counted in `funcs` */
	int fns_attached;
	int fns_multi;		/* the stand-in's functions as uprobe_multi links */
	int l0_multi;		/* the Level Zero entry points as uprobe_multi links */
	int l0_fds[4];		/* those links (entries, returns; the library's, the stand-in's) */
	int nl0_fds;
	char fns_why[200];		/* why they are not */
	uint32_t tp_names[3];		/* dict strings "vpu:job", "vpu:jsm", "vpu:pm" */
	int nl0_binary;			/* Level Zero entry points probed in --npu-probe-binary */
	struct plan plan;		/* what the load found this machine offers */
	struct xpu_npu_source_opts opts;
};

/* ---- records -> events ---- */

static int wanted(const struct npu_source *n, uint32_t pid)
{
	if (!n->npids)
		return 1;
	for (uint32_t i = 0; i < n->npids; i++)
		if (n->pids[i] == pid)
			return 1;
	return 0;
}

static uint32_t str_id(struct xpu_session *s, const char *p, size_t max)
{
	size_t len = strnlen(p, max);
	return len ? xpu_dict_str(&s->dict, p, len) : 0;
}

/* id: the job id a completion reported (0: none). */
static void emit_id(struct npu_source *n, const struct xpu_npu_rec *r, uint16_t type, uint32_t code,
		    uint32_t aux, uint32_t id)
{
	struct xpu_event ev = {
		.type = type, .source = XPU_SRC_NPU, .pid = r->pid, .tid = r->tid, .time = r->time_ns,
	};
	ev.npu.code = code;
	ev.npu.aux = aux;
	ev.npu.result = r->result;
	ev.npu.arg = r->arg;
	ev.npu.dur_ns = r->dur_ns;
	ev.npu.count = 1;
	ev.npu.comm = str_id(n->sess, r->comm, sizeof(r->comm));
	ev.npu.id = id;
	xpu_session_emit(n->sess, &ev);
}

static void emit(struct npu_source *n, const struct xpu_npu_rec *r, uint16_t type, uint32_t code,
		 uint32_t aux)
{
	emit_id(n, r, type, code, aux, 0);
}

/* A received message counts in the rates unless a lower-level counter
 * already sees every received message. */
static uint32_t rx_flags(const struct npu_source *n, int ok)
{
	return XPU_NPU_IPC_RX | (!n->rx_counted_raw && ok ? XPU_NPU_IPC_MSG : 0);
}

/* A synchronous reply, or a receive that timed out.  Where vpu:jsm already
 * reports the reply by type, only the timeout and the heartbeat are news. */
static void on_reply(struct npu_source *n, const struct xpu_npu_rec *r)
{
	int typed_elsewhere = n->tp_used[TP_JSM];
	uint32_t aux = typed_elsewhere ? XPU_NPU_IPC_RX : rx_flags(n, r->result == 0);
	if (r->result == 0 && r->code == 0x2204)
		aux |= XPU_NPU_IPC_HB;
	emit(n, r, XPU_EV_NPU_IPC, typed_elsewhere ? 0 : r->code, aux);
}

static void on_job_done(struct npu_source *n, const struct xpu_npu_rec *r)
{
	struct xpu_npu_rec done = *r;
	emit(n, r, XPU_EV_NPU_IPC, 0x2100, rx_flags(n, 1));	/* a JOB_DONE message arrived */
	/* Doorbell submissions carry no job id: completions match the queue's
	 * oldest job; submit ioctls carry no doorbell either. */
	done.arg = 0;
	if (n->submit_ioctl)
		done.aux = 0;
	emit_id(n, &done, XPU_EV_NPU_JOB, XPU_NPU_JOB_DONE, done.aux, (uint32_t)r->arg);
}

static void on_tp_job(struct npu_source *n, const struct xpu_npu_rec *r)
{
	if (strcmp(r->str, "submit") == 0)
		emit(n, r, XPU_EV_NPU_JOB, XPU_NPU_JOB_SUBMIT, r->aux);
	else if (strcmp(r->str, "done") == 0)
		emit_id(n, r, XPU_EV_NPU_JOB, XPU_NPU_JOB_DONE, r->aux, (uint32_t)r->arg);
}

static void on_tp_jsm(struct npu_source *n, const struct xpu_npu_rec *r)
{
	char type[XPU_NPU_STR_LEN + 1] = "";
	memcpy(type, r->str2, sizeof(r->str2));
	uint32_t code = xpu_npu_msg_type(type);
	if (strncmp(r->str, "[tx]", 4) == 0)
		emit(n, r, XPU_EV_NPU_IPC, code, XPU_NPU_IPC_TX | XPU_NPU_IPC_MSG);
	else if (strncmp(r->str, "[rx]", 4) == 0)
		emit(n, r, XPU_EV_NPU_IPC, code, rx_flags(n, 1));
}

static void on_tp_pm(struct npu_source *n, const struct xpu_npu_rec *r)
{
	char ev[XPU_NPU_STR_LEN + 1] = "";
	memcpy(ev, r->str, sizeof(r->str));
	int done = strstr(ev, "done") != NULL;
	uint32_t code = done ? XPU_NPU_PM_OTHER
		      : strstr(ev, "resume") ? XPU_NPU_PM_RESUME
		      : strstr(ev, "suspend") ? XPU_NPU_PM_SUSPEND : XPU_NPU_PM_OTHER;
	emit(n, r, XPU_EV_NPU_PM, code, code == XPU_NPU_PM_OTHER ? str_id(n->sess, ev, sizeof(ev)) : 0);
}

/* A vpu:* tracepoint hit counts as a call in the driver functions table. */
static void tp_row(struct npu_source *n, const struct xpu_npu_rec *r, int i, const char *name)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_FUNC, .source = XPU_SRC_NPU, .time = r->time_ns };
	if (!n->tp_names[i])
		n->tp_names[i] = xpu_dict_cstr(&n->sess->dict, name);
	ev.npu.code = n->tp_names[i];
	ev.npu.count = 1;
	xpu_session_emit(n->sess, &ev);
}

static void on_rec(struct npu_source *n, const struct xpu_npu_rec *r)
{
	switch (r->type) {
	case XPU_NPU_REC_IPC_TX:
		return emit(n, r, XPU_EV_NPU_IPC, r->code, XPU_NPU_IPC_TX | XPU_NPU_IPC_MSG);
	case XPU_NPU_REC_IPC_TX_RAW:
		return emit(n, r, XPU_EV_NPU_IPC, 0, XPU_NPU_IPC_TX | XPU_NPU_IPC_MSG);
	case XPU_NPU_REC_IPC_RX_RAW:
		return emit(n, r, XPU_EV_NPU_IPC, 0, XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG);
	case XPU_NPU_REC_IPC_REPLY:
		return on_reply(n, r);
	case XPU_NPU_REC_JOB_SUBMIT:
		return emit(n, r, XPU_EV_NPU_JOB, XPU_NPU_JOB_SUBMIT, r->aux);
	case XPU_NPU_REC_JOB_DONE:
		return on_job_done(n, r);
	case XPU_NPU_REC_JOB_ABORT: {
		struct xpu_npu_rec a = *r;
		a.result = (int32_t)r->code;
		return emit(n, &a, XPU_EV_NPU_JOB, XPU_NPU_JOB_ABORT, 0);
	}
	case XPU_NPU_REC_RECOVERY:
		return emit(n, r, XPU_EV_NPU_PM, XPU_NPU_PM_RECOVERY, str_id(n->sess, r->str, sizeof(r->str)));
	case XPU_NPU_REC_PM:
		return emit(n, r, XPU_EV_NPU_PM,
			    r->code == XPU_NPU_PMREC_SUSPEND ? XPU_NPU_PM_SUSPEND : XPU_NPU_PM_RESUME, 0);
	case XPU_NPU_REC_MEM:
		return emit(n, r, XPU_EV_NPU_MEM, r->code, 0);
	case XPU_NPU_REC_FENCE_INIT:
		return emit(n, r, XPU_EV_NPU_JOB, XPU_NPU_JOB_SUBMIT, r->aux);
	case XPU_NPU_REC_FENCE_SIGNAL:
		return emit(n, r, XPU_EV_NPU_JOB, XPU_NPU_JOB_DONE, r->aux);
	case XPU_NPU_REC_TP_JOB:
		tp_row(n, r, 0, "vpu:job");
		return on_tp_job(n, r);
	case XPU_NPU_REC_TP_JSM:
		tp_row(n, r, 1, "vpu:jsm");
		return on_tp_jsm(n, r);
	case XPU_NPU_REC_TP_PM:
		tp_row(n, r, 2, "vpu:pm");
		return on_tp_pm(n, r);
	case XPU_NPU_REC_L0:
		if (wanted(n, r->pid))
			emit(n, r, XPU_EV_NPU_L0, r->code, 0);
		return;
	default:
		n->bad_records++;
	}
}

/* Every record is checked for size and type before it is read. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct npu_source *n = ctx;
	struct xpu_npu_rec r;

	if (size < sizeof(r)) {
		n->bad_records++;
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	if (r.type == 0 || r.type >= XPU_NPU_REC_TYPE_MAX) {
		n->bad_records++;
		return 0;
	}
	r.comm[sizeof(r.comm) - 1] = '\0';
	r.str[sizeof(r.str) - 1] = '\0';
	r.str2[sizeof(r.str2) - 1] = '\0';
	on_rec(n, &r);
	return 0;
}

/* ---- ioctl counts: map deltas -> aggregated events ---- */

static int prev_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct npu_source *n = ctx;
	return memcmp(&n->prev[i].key, k, sizeof(struct xpu_npu_ioctl_key)) == 0;
}

static uint64_t key_hash(const struct xpu_npu_ioctl_key *k)
{
	return xpu_hash_u64((uint64_t)k->pid << 32 | (uint64_t)k->cmd << 16 | k->err);
}

static struct ioctl_prev *prev_get(struct npu_source *n, const struct xpu_npu_ioctl_key *k)
{
	uint64_t h = key_hash(k);
	uint32_t i = xpu_htab_find(&n->prev_idx, h, prev_eq, n, k);
	if (i != UINT32_MAX)
		return &n->prev[i];
	if (xpu_grow((void **)&n->prev, &n->capprev, n->nprev + 1, sizeof(*n->prev)))
		return NULL;
	struct ioctl_prev *p = &n->prev[n->nprev];
	memset(p, 0, sizeof(*p));
	p->key = *k;
	if (xpu_htab_put(&n->prev_idx, h, n->nprev) < 0)
		return NULL;
	n->nprev++;
	return p;
}

static void prev_forget(struct npu_source *n, const struct xpu_npu_ioctl_key *k)
{
	uint64_t h = key_hash(k);
	uint32_t i = xpu_htab_find(&n->prev_idx, h, prev_eq, n, k), last = n->nprev - 1;
	if (i == UINT32_MAX)
		return;
	xpu_htab_del(&n->prev_idx, h, i);
	if (i != last) {
		uint64_t hl = key_hash(&n->prev[last].key);
		xpu_htab_del(&n->prev_idx, hl, last);
		n->prev[i] = n->prev[last];
		xpu_htab_put(&n->prev_idx, hl, i);
	}
	n->nprev--;
}

static void emit_ioctl_deltas(struct npu_source *n, const struct xpu_npu_ioctl_key *k,
			      const struct xpu_npu_ioctl_val *v, struct ioctl_prev *p, uint64_t now)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_IOCTL, .source = XPU_SRC_NPU, .pid = k->pid, .time = now };
	ev.npu.code = k->cmd;
	ev.npu.result = -(int32_t)k->err;
	ev.npu.comm = str_id(n->sess, v->comm, sizeof(v->comm));
	for (uint32_t b = 0; b < XPU_NPU_HIST_BUCKETS; b++) {
		uint64_t d = v->hist[b] - p->hist[b];
		if (!d || v->hist[b] < p->hist[b])
			continue;
		p->hist[b] = v->hist[b];
		ev.npu.dur_ns = xpu_npu_hist_lower(b);
		while (d) {	/* a count field is 32 bits wide */
			ev.npu.count = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
			d -= ev.npu.count;
			xpu_session_emit(n->sess, &ev);
		}
	}
	p->count = v->count;
}

static void read_ioctls(struct npu_source *n, uint64_t now)
{
	int fd = bpf_map__fd(n->skel->maps.ioctls);
	struct xpu_npu_ioctl_key k, next, *cur = NULL;
	struct xpu_npu_ioctl_val v;
	int prune = ++n->ticks % PRUNE_EVERY == 0;

	while (bpf_map_get_next_key(fd, cur, &next) == 0) {
		k = next;
		cur = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) < 0)
			continue;
		v.comm[sizeof(v.comm) - 1] = '\0';
		struct ioctl_prev *p = prev_get(n, &k);
		if (!p)
			continue;
		/* The buckets, not the count: the copy may hold a call counted but
		 * not yet in its bucket. */
		if (wanted(n, k.pid))
			emit_ioctl_deltas(n, &k, &v, p, now);
		/* An exited process adds nothing more: give its entries back. */
		if (prune && kill((pid_t)k.pid, 0) < 0 && errno == ESRCH) {
			bpf_map_delete_elem(fd, &k);
			prev_forget(n, &k);
		}
	}
}

/* ---- the source interface ---- */

static int npu_fd(struct xpu_source *src)
{
	struct npu_source *n = (struct npu_source *)src;
	return n->ring ? ring_buffer__epoll_fd(n->ring) : -1;
}

static int npu_drain(struct xpu_source *src, struct xpu_session *s)
{
	struct npu_source *n = (struct npu_source *)src;
	int r = n->ring ? ring_buffer__consume(n->ring) : 0;
	return r == -EINTR ? 0 : r;
}

/* Runs of the NPU programs the kernel skipped because another BPF program
 * was running on that CPU (a kprobe firing inside one, the multi-kprobe
 * link's programs above all): each a probe hit lost, counted as a drop. */
static uint64_t recursion_misses(const struct npu_source *n)
{
	struct bpf_program *p;
	uint64_t misses = 0;
	bpf_object__for_each_program(p, n->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			misses += info.recursion_misses;
	}
	return misses;
}

static void npu_tick(struct xpu_source *src, struct xpu_session *s)
{
	struct npu_source *n = (struct npu_source *)src;
	uint64_t now = xpu_now_mono();
	struct npu_bpf__bss *b = n->skel->bss;

	read_ioctls(n, now);
	if (n->fns_attached) {
		xpu_npu_fns_read(n->fns, bpf_map__fd(n->skel->maps.funcs), s, now);
		xpu_npu_fns_read_lat(n->fns, bpf_map__fd(n->skel->maps.fn_lat), s, now);
	}
	xpu_npu_sysfs_read(n->sysfs, s, now);
	xpu_npu_sysfs_uevents(n->sysfs, s, now, !n->use[P_RECOVERY]);
	xpu_session_drops(s, XPU_SRC_NPU,
			  b->dropped_records + b->dropped_ioctls + b->dropped_starts + b->dropped_funcs +
				  b->dropped_fn_starts + n->bad_records + recursion_misses(n),
			  &n->seen_drops);
}

static void npu_destroy(struct xpu_source *src)
{
	struct npu_source *n = (struct npu_source *)src;
	for (int i = 0; i < n->nlinks; i++)
		bpf_link__destroy(n->links[i]);
	for (int i = 0; i < n->nl0_fds; i++)
		close(n->l0_fds[i]);
	xpu_npu_fns_free(n->fns);
	xpu_npu_sysfs_free(n->sysfs);
	ring_buffer__free(n->ring);
	npu_bpf__destroy(n->skel);
	xpu_htab_free(&n->prev_idx);
	free(n->prev);
	free(n);
}

/* ---- what this machine offers ---- */

/* Checks a tracepoint's format file for the fields the program reads. */
static int tp_layout(const char *event, const char *const *names, const int *offs, int nf)
{
	char path[160], *text = NULL;
	size_t len;
	int found = 0;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/format", event);
	if (xpu_read_path(path, 65536, &text, &len) < 0)
		return 0;
	for (int i = 0; i < nf; i++) {
		char want[64];
		const char *p = text;
		int off = -1;
		snprintf(want, sizeof(want), " %s;", names[i]);
		while ((p = strstr(p, want)) != NULL) {
			const char *o = strstr(p, "offset:");
			if (o && sscanf(o, "offset:%d;", &off) == 1)
				break;
			p++;
		}
		found += off == offs[i];
	}
	free(text);
	return found == nf;
}

static void find_tracepoints(struct npu_source *n)
{
	static const char *const job[] = { "event", "ctx_id", "engine_id", "job_id" };
	static const int job_off[] = { 8, 16, 20, 24 };
	static const char *const jsm[] = { "event", "type", "status", "request_id", "result" };
	static const int jsm_off[] = { 8, 16, 24, 28, 32 };
	static const char *const pm[] = { "event" };
	static const int pm_off[] = { 8 };
	static const char *const fence[] = { "driver", "timeline", "context", "seqno" };
	static const int fence_off[] = { 8, 12, 16, 20 };

	n->tp[TP_JOB] = tp_layout("vpu/job", job, job_off, 4);
	n->tp[TP_JSM] = tp_layout("vpu/jsm", jsm, jsm_off, 5);
	n->tp[TP_PM] = tp_layout("vpu/pm", pm, pm_off, 1);
	n->tp[TP_FENCE_INIT] = tp_layout("dma_fence/dma_fence_init", fence, fence_off, 4);
	n->tp[TP_FENCE_SIGNAL] = tp_layout("dma_fence/dma_fence_signaled", fence, fence_off, 4);
}

static int kprobes_available(void)
{
	return access("/sys/bus/event_source/devices/kprobe", F_OK) == 0 ||
	       access(TRACEFS "/kprobe_events", F_OK) == 0;
}

/* Functions the kernel can kprobe: listed in available_filter_functions
 * (or, where that cannot be read, assumed, and attaching will tell). */
/* Whether text holds name as a whole line's first word ("name [module]"). */
static int listed(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = text; (p = strstr(p, name)) != NULL; p += len)
		if ((p == text || p[-1] == '\n') && (p[len] == ' ' || p[len] == '\n' || !p[len]))
			return 1;
	return 0;
}

static void find_kernel_functions(struct npu_source *n)
{
	char *text = NULL;
	size_t len;
	int readable = xpu_read_path(TRACEFS "/available_filter_functions", 64 << 20, &text, &len) >= 0;
	for (int i = 0; i < P_NPROBES; i++)
		n->have[i] = !readable || listed(text, probes[i].func);
	free(text);
}

static int find_binary_functions(struct npu_source *n, const char *path)
{
	char err[256];
	struct xpu_elf *e = xpu_elf_load(path, err, sizeof(err));
	if (!e) {
		xpu_err("--npu-probe-binary: %s", err);
		return -1;
	}
	char name[256];
	for (uint32_t s = 0; s < xpu_elf_nsyms(e); s++) {
		if (!xpu_elf_sym_name(e, s, name, sizeof(name)))
			continue;
		for (int i = 0; i < P_NPROBES; i++)
			if (strcmp(name, probes[i].func) == 0)
				n->have[i] = 1;
	}
	xpu_elf_free(e);
	return 0;
}

/* One counter per kind of thing: where two probes would count the same
 * message or job twice, only the better one is used. */
static void choose(struct npu_source *n)
{
	memcpy(n->use, n->have, sizeof(n->use));
	if (n->tp[TP_JSM] || n->use[P_IPC_SEND])
		n->use[P_TX_SET] = 0;
	if (n->tp[TP_JSM])
		n->use[P_IPC_SEND] = 0;
	n->use[P_IPC_RECV] = n->use[P_IPC_RECV_RET] = n->have[P_IPC_RECV] && n->have[P_IPC_RECV_RET];
	/* A job is a doorbell, or where the kernel has none (before 6.11) a
	 * submit ioctl that succeeded; either needs the completion. */
	if (n->use[P_DB_SET])
		n->use[P_SUBMIT] = n->use[P_CMDQ_SUBMIT] = 0;
	int submits = n->use[P_DB_SET] || n->use[P_SUBMIT] || n->use[P_CMDQ_SUBMIT];
	if (n->tp[TP_JOB] || !submits || !n->use[P_JOB_DONE])
		n->use[P_DB_SET] = n->use[P_SUBMIT] = n->use[P_CMDQ_SUBMIT] = n->use[P_JOB_DONE] = 0;
	n->submit_ioctl = n->use[P_SUBMIT] || n->use[P_CMDQ_SUBMIT];
	if (n->tp[TP_PM])
		n->use[P_SUSPEND] = n->use[P_RESUME] = 0;
	n->rx_counted_raw = n->use[P_RX_ADDR];
	n->tp_used[TP_JOB] = n->tp[TP_JOB];
	n->tp_used[TP_JSM] = n->tp[TP_JSM];
	n->tp_used[TP_PM] = n->tp[TP_PM];
	/* The generic fallback, only when nothing better sees jobs. */
	int jobs = n->tp[TP_JOB] || n->use[P_JOB_DONE];
	n->tp_used[TP_FENCE_INIT] = n->tp_used[TP_FENCE_SIGNAL] =
		!jobs && n->tp[TP_FENCE_INIT] && n->tp[TP_FENCE_SIGNAL];
}

static struct bpf_program *prog(struct npu_source *n, const char *name)
{
	return bpf_object__find_program_by_name(n->skel->obj, name);
}

static void set_autoload(struct npu_source *n, int ioctls, int l0)
{
	struct npu_bpf *k = n->skel;
	struct bpf_program *pr;

	bpf_object__for_each_program(pr, n->skel->obj)
		bpf_program__set_autoload(pr, false);
	for (int i = 0; i < P_NPROBES; i++)
		if (n->use[i])
			bpf_program__set_autoload(prog(n, probes[i].prog), true);
	bpf_program__set_autoload(k->progs.npu_tp_job, n->tp_used[TP_JOB]);
	bpf_program__set_autoload(k->progs.npu_tp_jsm, n->tp_used[TP_JSM]);
	bpf_program__set_autoload(k->progs.npu_tp_pm, n->tp_used[TP_PM]);
	bpf_program__set_autoload(k->progs.npu_fence_init, n->tp_used[TP_FENCE_INIT]);
	bpf_program__set_autoload(k->progs.npu_fence_signaled, n->tp_used[TP_FENCE_SIGNAL]);
	bpf_program__set_autoload(k->progs.npu_ioctl_enter, ioctls);
	bpf_program__set_autoload(k->progs.npu_ioctl_exit, ioctls);
	bpf_program__set_autoload(k->progs.npu_l0_enter, l0);
	bpf_program__set_autoload(k->progs.npu_l0_exit, l0);
	int fns = xpu_npu_fns_count(n->fns) > 0;
	bpf_program__set_autoload(k->progs.npu_func, fns);
	bpf_program__set_autoload(k->progs.npu_func_ret, fns);
}

static int keep(struct npu_source *n, struct bpf_link *l)
{
	if (!l)
		return -1;
	if (n->nlinks == MAX_LINKS) {
		bpf_link__destroy(l);
		return -1;
	}
	n->links[n->nlinks++] = l;
	return 0;
}

static struct bpf_link *attach_probe(struct npu_source *n, int i, const char *binary)
{
	struct bpf_program *p = prog(n, probes[i].prog);
	if (binary) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = probes[i].func, .retprobe = probes[i].ret);
		return bpf_program__attach_uprobe_opts(p, -1, binary, 0, &uo);
	}
	LIBBPF_OPTS(bpf_kprobe_opts, ko, .retprobe = probes[i].ret);
	return bpf_program__attach_kprobe_opts(p, probes[i].func, &ko);
}

static void list_add(char *list, size_t size, const char *name)
{
	size_t used = strlen(list);
	if (used + 1 < size && !strstr(list, name))
		snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

/* Attaches the chosen ivpu probes; returns how many attached.  `missing`
 * names the functions not found, `failed` those found that would not attach. */
static int attach_probes(struct npu_source *n, const char *binary, char *missing, char *failed,
			 size_t size)
{
	int ok = 0;
	missing[0] = failed[0] = '\0';
	for (int i = 0; i < P_NPROBES; i++) {
		if (!n->have[i])
			list_add(missing, size, probes[i].func);
		if (!n->use[i])
			continue;
		if (keep(n, attach_probe(n, i, binary)) < 0) {
			xpu_debug("cannot attach %s to %s: %s", probes[i].prog, probes[i].func, strerror(errno));
			list_add(failed, size, probes[i].func);
			n->use[i] = 0;
			continue;
		}
		ok++;
	}
	return ok;
}

static int attach_tp(struct npu_source *n, int which, struct bpf_program *p)
{
	if (n->tp_used[which] && keep(n, bpf_program__attach(p)) < 0) {
		xpu_debug("cannot attach %s: %s", bpf_program__name(p), strerror(errno));
		n->tp_used[which] = 0;
	}
	return n->tp_used[which];
}

static const char *find_ze_loader(char *buf, size_t size)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
		"/usr/local/lib", "/lib/x86_64-linux-gnu", "/lib64",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, size, "%s/libze_loader.so.1", dirs[i]);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

/* The entry points as two uprobe_multi links (Linux 6.6): each uprobe
 * going in or out waits for RCU grace periods, and a link of all of them
 * waits once (14 links one by one took 190-710 ms to attach beside a
 * dying collector's or other suites' probes, where an xputop taking over
 * must be quick; and as long again to go).  Returns how many functions,
 * 0 where the links would not attach (the programs, loaded for such links,
 * attach no other way). */
static int attach_l0_multi(struct npu_source *n, const char *lib)
{
	const char *names[NL0];
	uint64_t offs[NL0], o[NL0], c[NL0];
	uint32_t k = 0;
	for (size_t i = 0; i < NL0; i++)
		names[i] = l0_apis[i].func;
	if (n->nl0_fds + 2 > (int)(sizeof(n->l0_fds) / sizeof(n->l0_fds[0])) ||
	    xpu_func_offsets(lib, names, NL0, offs) <= 0)
		return 0;
	for (size_t i = 0; i < NL0; i++)
		if (offs[i]) {
			o[k] = offs[i];
			c[k++] = l0_apis[i].api;
		}
	int in = xpu_uprobe_multi_attach(bpf_program__fd(n->skel->progs.npu_l0_enter), lib, o, c, k, 0);
	if (in < 0)
		return 0;
	int out = xpu_uprobe_multi_attach(bpf_program__fd(n->skel->progs.npu_l0_exit), lib, o, c, k, 1);
	if (out < 0) {
		close(in);
		return 0;
	}
	n->l0_fds[n->nl0_fds++] = in;
	n->l0_fds[n->nl0_fds++] = out;
	return (int)k;
}

static int attach_l0(struct npu_source *n, const char *lib)
{
	int ok = 0;
	if (n->l0_multi)
		return attach_l0_multi(n, lib);
	for (size_t i = 0; i < NL0; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, in, .func_name = l0_apis[i].func, .bpf_cookie = l0_apis[i].api);
		LIBBPF_OPTS(bpf_uprobe_opts, out, .func_name = l0_apis[i].func, .retprobe = true);
		if (keep(n, bpf_program__attach_uprobe_opts(n->skel->progs.npu_l0_enter, -1, lib, 0, &in)) < 0)
			continue;
		if (keep(n, bpf_program__attach_uprobe_opts(n->skel->progs.npu_l0_exit, -1, lib, 0, &out)) == 0)
			ok++;
	}
	return ok;
}

/* ---- set-up: decide, load, attach, then tell ---- */


static int resolve_dev(const char *path, uint32_t *rdev)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		xpu_err("--npu-dev %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		xpu_err("--npu-dev %s: not a character device", path);
		return -1;
	}
	*rdev = major(st.st_rdev) << 20 | minor(st.st_rdev);
	return 0;
}

static void tell_ioctls(struct npu_source *n, const struct plan *p, const struct xpu_npu_source_opts *o)
{
	struct xpu_npu_model *m = &n->sess->npu;
	if (!p->accel) {
		xpu_npu_model_source(m, "ioctls", XPU_SRC_OFF,
				     "no accel device here (/dev/accel/accel*): ioctls are not traced "
				     "(--npu-dev PATH watches another node)");
		return;
	}
	if (!p->ioctls) {
		xpu_npu_model_source(m, "ioctls", XPU_SRC_FAILED,
				     "tracefs is not mounted and could not be: mount -t tracefs nodev " TRACEFS);
		return;
	}
	if (o->dev_path)
		xpu_npu_model_source(m, "ioctls", XPU_SRC_ACTIVE,
				     "syscall tracepoints; fds of accel devices (major %d) and %s (%u:%u)",
				     XPU_NPU_ACCEL_MAJOR, o->dev_path, p->rdev >> 20, p->rdev & 0xfffff);
	else
		xpu_npu_model_source(m, "ioctls", XPU_SRC_ACTIVE,
				     "syscall tracepoints; fds of accel devices (major %d)", XPU_NPU_ACCEL_MAJOR);
}

/* A return probe of the function the probe before it enters. */
static int same_function(int i)
{
	return i > 0 && strcmp(probes[i - 1].func, probes[i].func) == 0;
}

static void tell_group(struct npu_source *n, enum group g, const char *extra, const char *none)
{
	char list[200];
	size_t used = 0;
	list[0] = '\0';
	for (int i = 0; i < P_NPROBES; i++)
		if (n->use[i] && probes[i].group == g && !same_function(i) && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
						 probes[i].func);
	if (extra && used < sizeof(list))
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? "; " : "", extra);
	xpu_npu_model_source(&n->sess->npu, group_names[g], used ? XPU_SRC_ACTIVE : XPU_SRC_OFF, "%s",
			     used ? list : none);
}

static void attach_fns(struct npu_source *n, const struct plan *p)
{
	size_t count = xpu_npu_fns_count(n->fns);
	if (!count)
		return;
	int rc = xpu_npu_fns_attach(n->fns, n->skel->progs.npu_func, n->skel->progs.npu_func_ret, p->binary,
				    n->fns_multi, !n->opts.no_latency);
	if (rc < 0) {
		snprintf(n->fns_why, sizeof(n->fns_why), "%s %zu ivpu_* functions refused: %s",
			 p->binary ? "uprobes on" : "one multi-kprobe link on", count, strerror(-rc));
		return;
	}
	n->fns_attached = 1;
}

/* The "function latency" line: what times the driver functions. */
static void tell_lat(struct npu_source *n, const struct plan *p)
{
	struct xpu_npu_model *m = &n->sess->npu;
	size_t count = xpu_npu_fns_count(n->fns);
	if (n->fns_attached && !n->opts.no_latency)
		xpu_npu_model_source(m, "function latency", XPU_SRC_ACTIVE,
				     "%s on the returns of %zu ivpu_* functions, entry to return per thread",
				     p->binary ? "uretprobes" : "kretprobes", count);
	else if (n->fns_attached)
		xpu_npu_model_source(m, "function latency", XPU_SRC_OFF, "--npu-no-latency: calls counted, not timed");
	else
		xpu_npu_model_source(m, "function latency", XPU_SRC_OFF, "no driver function is probed");
}

/* The "driver functions" line: what feeds the functions table. */
static void tell_fns(struct npu_source *n, const struct plan *p)
{
	struct xpu_npu_model *m = &n->sess->npu;
	const char *tps = n->tp_used[TP_JOB] || n->tp_used[TP_JSM] || n->tp_used[TP_PM]
				  ? "; vpu:* tracepoints as rows" : "";
	size_t count = xpu_npu_fns_count(n->fns);
	if (n->fns_attached && p->binary && n->fns_multi)
		xpu_npu_model_source(m, "driver functions", XPU_SRC_ACTIVE,
				     "uprobes on %zu ivpu_* functions of %s (the multi-kprobe program, "
				     "as one uprobe_multi link)%s", count, p->binary, tps);
	else if (n->fns_attached && p->binary)
		xpu_npu_model_source(m, "driver functions", XPU_SRC_ACTIVE,
				     "uprobes on %zu ivpu_* functions of %s (the multi-kprobe program, "
				     "a link each: no uprobe_multi links before Linux 6.6, or XPUTOP_NO_UPROBE_MULTI)%s", count, p->binary, tps);
	else if (n->fns_attached)
		xpu_npu_model_source(m, "driver functions", XPU_SRC_ACTIVE,
				     "one multi-kprobe link on %zu ivpu_* functions of intel_vpu%s", count, tps);
	else if (n->fns_why[0])
		xpu_npu_model_source(m, "driver functions", XPU_SRC_FAILED, "%s%s", n->fns_why, tps);
	else if (n->fns)
		xpu_npu_model_source(m, "driver functions", XPU_SRC_OFF, "no ivpu_* function found%s", tps);
	else if (tps[0])
		xpu_npu_model_source(m, "driver functions", XPU_SRC_ACTIVE, "vpu:* tracepoints as rows only");
	else
		xpu_npu_model_source(m, "driver functions", XPU_SRC_OFF, "%s",
				     !p->kprobes ? "this kernel has no kprobes: no ivpu_* function is counted"
						 : "intel_vpu is not loaded");
}

static void tell(struct npu_source *n, const struct plan *p, const struct xpu_npu_source_opts *o,
		 int nprobes, const char *missing, const char *failed, int nl0)
{
	struct xpu_npu_model *m = &n->sess->npu;
	int vpu = n->tp_used[TP_JOB] + n->tp_used[TP_JSM] + n->tp_used[TP_PM];

	tell_ioctls(n, p, o);
	if (vpu)
		xpu_npu_model_source(m, "vpu tracepoints", XPU_SRC_ACTIVE, "%s%s%s",
				     n->tp_used[TP_JOB] ? "vpu:job " : "", n->tp_used[TP_JSM] ? "vpu:jsm " : "",
				     n->tp_used[TP_PM] ? "vpu:pm" : "");
	else
		xpu_npu_model_source(m, "vpu tracepoints", XPU_SRC_OFF,
				     "vpu:job, vpu:jsm, vpu:pm not found (intel_vpu on 6.13+ has them)");
	if (p->binary)
		xpu_npu_model_source(m, "ivpu probes", nprobes ? XPU_SRC_ACTIVE : XPU_SRC_FAILED,
				     "uprobes on %s: %d attached%s%s%s%s", p->binary, nprobes,
				     missing[0] ? "; not in it: " : "", missing,
				     failed[0] ? "; cannot attach: " : "", failed);
	else if (!p->kprobes)
		xpu_npu_model_source(m, "ivpu probes", XPU_SRC_OFF, "this kernel has no kprobes");
	else if (!p->vpu_loaded)
		xpu_npu_model_source(m, "ivpu probes", XPU_SRC_OFF, "kprobes available; intel_vpu is not loaded");
	else
		xpu_npu_model_source(m, "ivpu probes", nprobes ? XPU_SRC_ACTIVE : XPU_SRC_FAILED,
				     "kprobes: %d attached%s%s%s%s", nprobes, missing[0] ? "; not found: " : "",
				     missing, failed[0] ? "; cannot attach: " : "", failed);
	const char *none = p->accel || p->binary
				   ? "no source on this kernel (needs vpu:* tracepoints or ivpu kprobes)"
				   : "no NPU on this machine (no intel_vpu, no /dev/accel)";
	tell_group(n, G_IPC, n->tp_used[TP_JSM] ? "vpu:jsm" : NULL, none);
	tell_group(n, G_JOBS, n->tp_used[TP_JOB] ? "vpu:job"
			      : n->tp_used[TP_FENCE_INIT] ? "fallback: dma_fence tracepoints (intel_vpu fences)"
			      : NULL, none);
	tell_group(n, G_POWER, n->tp_used[TP_PM] ? "vpu:pm" : NULL, none);
	tell_group(n, G_MEMORY, NULL, none);
	if (nl0 || n->nl0_binary)
		xpu_npu_model_source(m, "Level Zero", XPU_SRC_ACTIVE, "uprobes on %s (%d APIs)%s%s%s",
				     nl0 ? p->ze : "", nl0, n->nl0_binary ? "; and on " : "",
				     n->nl0_binary ? p->binary : "", n->nl0_binary ? " (the stand-in's)" : "");
	else
		xpu_npu_model_source(m, "Level Zero", XPU_SRC_OFF, p->have_ze ? "cannot attach to %s"
							 : "no libze_loader.so.1 found%s", p->have_ze ? p->ze : "");
	tell_fns(n, p);
	tell_lat(n, p);
	xpu_npu_sysfs_tell(n->sysfs, m);
}

static void emit_tdr(struct npu_source *n)
{
	char *text = NULL;
	size_t len;
	if (xpu_read_path("/sys/module/intel_vpu/parameters/tdr_timeout_ms", 64, &text, &len) < 0)
		return;
	unsigned long ms = strtoul(text, NULL, 10);
	free(text);
	if (!ms)	/* 0: the driver's own default for the platform */
		return;
	struct xpu_event ev = { .type = XPU_EV_NPU_PM, .source = XPU_SRC_NPU, .time = xpu_now_mono() };
	ev.npu.code = XPU_NPU_PM_TDR;
	ev.npu.arg = ms;
	ev.npu.count = 1;
	xpu_session_emit(n->sess, &ev);
}

static int accel_device_present(void)
{
	glob_t g;
	int found = glob("/dev/accel/accel*", 0, NULL, &g) == 0;
	if (found)
		globfree(&g);
	return found;
}

static int plan(struct npu_source *n, const struct xpu_npu_source_opts *o, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	/* Made absolute: a relative path attached and counted nothing (the
	 * probes and the function table must name the same file). */
	if (o->probe_binary) {
		if (!realpath(o->probe_binary, p->binary_path)) {
			xpu_err("--npu-probe-binary %s: %s", o->probe_binary, strerror(errno));
			return -1;
		}
		p->binary = p->binary_path;
	}
	if (o->dev_path && resolve_dev(o->dev_path, &p->rdev) < 0)
		return -1;
	p->kprobes = kprobes_available();
	p->vpu_loaded = access("/sys/module/intel_vpu", F_OK) == 0;
	/* The ioctl tracepoints run for every ioctl on the machine: only worth
	 * their cost (and mounting tracefs) where there is an NPU to watch. */
	p->accel = o->dev_path || p->vpu_loaded || accel_device_present();
	p->ioctls = p->accel && xpu_sys_tracefs() == 0;
	if (p->ioctls)
		find_tracepoints(n);
	if (p->binary) {
		if (find_binary_functions(n, p->binary) < 0)
			return -1;
	} else if (p->kprobes && p->vpu_loaded) {
		find_kernel_functions(n);
	}
	choose(n);
	if (p->binary || (p->kprobes && p->vpu_loaded))
		n->fns = xpu_npu_fns_find(p->binary, n->fns_why, sizeof(n->fns_why));
	p->have_ze = find_ze_loader(p->ze, sizeof(p->ze)) != NULL;
	n->sysfs = xpu_npu_sysfs_open(o->sysfs_root);
	if (!n->sysfs) {
		xpu_err("out of memory");
		return -1;
	}
	return 0;
}

struct xpu_source *xpu_source_npu_load(struct xpu_session *s, const struct xpu_npu_source_opts *o)
{
	struct npu_source *n = calloc(1, sizeof(*n));
	int err;

	if (!n)
		return NULL;
	n->base = (struct xpu_source){ "npu", npu_fd, npu_drain, npu_tick, npu_destroy };
	n->sess = s;
	n->opts = *o;
	n->pids = o->pids;
	n->npids = o->npids;
	xpu_htab_init(&n->prev_idx);
	struct plan *p = &n->plan;
	if (plan(n, o, p) < 0)
		goto fail;
	/* The stand-in's functions take the multi-kprobe programs as
	 * uprobe_multi ones (Linux 6.6), else as plain uprobes. */
	n->fns_multi = p->binary != NULL && xpu_uprobe_multi_allowed();
	n->l0_multi = xpu_uprobe_multi_allowed();
	for (;;) {
		npu_bpf__destroy(n->skel);
		n->skel = npu_bpf__open();
		if (!n->skel) {
			xpu_err("cannot open the NPU BPF object: %s", xpu_sys_bpf_hint(errno));
			goto fail;
		}
		n->skel->rodata->probe_user = p->binary != NULL;
		if (p->binary) {
			enum bpf_attach_type t = (enum bpf_attach_type)(n->fns_multi ? XPU_BPF_TRACE_UPROBE_MULTI : 0);
			bpf_program__set_expected_attach_type(n->skel->progs.npu_func, t);
			bpf_program__set_expected_attach_type(n->skel->progs.npu_func_ret, t);
		}
		enum bpf_attach_type l0 = (enum bpf_attach_type)(n->l0_multi ? XPU_BPF_TRACE_UPROBE_MULTI : 0);
		bpf_program__set_expected_attach_type(n->skel->progs.npu_l0_enter, l0);
		bpf_program__set_expected_attach_type(n->skel->progs.npu_l0_exit, l0);
		n->skel->rodata->extra_rdev = p->rdev;
		n->skel->rodata->fn_latency = !o->no_latency;
		/* One latency histogram per function found, none past them. */
		size_t nfns = xpu_npu_fns_count(n->fns);
		bpf_map__set_max_entries(n->skel->maps.fn_lat, nfns ? (uint32_t)nfns : 1);
		set_autoload(n, p->ioctls, p->have_ze || p->binary);
		err = npu_bpf__load(n->skel);
		if (!err || !(n->fns_multi || n->l0_multi))
			break;
		n->fns_multi = n->l0_multi = 0;
	}
	if (err) {
		xpu_err("cannot load the NPU BPF programs: %s", xpu_sys_bpf_hint(err));
		goto fail;
	}
	n->ring = ring_buffer__new(bpf_map__fd(n->skel->maps.events), on_record, n, NULL);
	if (!n->ring) {
		xpu_err("cannot set up the NPU ring buffer: %s", xpu_sys_bpf_hint(errno));
		goto fail;
	}
	return &n->base;
fail:
	npu_destroy(&n->base);
	return NULL;
}

void xpu_source_npu_attach(struct xpu_source *src)
{
	struct npu_source *n = (struct npu_source *)src;
	struct xpu_session *s = n->sess;
	const struct xpu_npu_source_opts *o = &n->opts;
	struct plan *p = &n->plan;
	char missing[400], failed[400];
	int nprobes, nl0 = 0;
	if (p->ioctls && (keep(n, bpf_program__attach(n->skel->progs.npu_ioctl_enter)) < 0 ||
			 keep(n, bpf_program__attach(n->skel->progs.npu_ioctl_exit)) < 0)) {
		xpu_warn("cannot attach the ioctl tracepoints: %s", xpu_sys_bpf_hint(errno));
		p->ioctls = 0;
	}
	nprobes = attach_probes(n, p->binary, missing, failed, sizeof(missing));
	attach_tp(n, TP_JOB, n->skel->progs.npu_tp_job);
	attach_tp(n, TP_JSM, n->skel->progs.npu_tp_jsm);
	attach_tp(n, TP_PM, n->skel->progs.npu_tp_pm);
	if (!attach_tp(n, TP_FENCE_INIT, n->skel->progs.npu_fence_init) ||
	    !attach_tp(n, TP_FENCE_SIGNAL, n->skel->progs.npu_fence_signaled))
		n->tp_used[TP_FENCE_INIT] = n->tp_used[TP_FENCE_SIGNAL] = 0;
	if (p->have_ze)
		nl0 = attach_l0(n, p->ze);
	if (p->binary)	/* a stand-in may play the user-space driver's entry points too */
		n->nl0_binary = attach_l0(n, p->binary);
	attach_fns(n, p);
	tell(n, p, o, nprobes, missing, failed, nl0);
	/* With no NPU the view says so first, and is not "active". */
	int no_npu = !p->accel && !p->binary;
	xpu_session_status(s, XPU_SRC_NPU, no_npu ? XPU_SRC_OFF : XPU_SRC_ACTIVE, "%s%s%s%s%s",
			   no_npu ? "no NPU on this machine (no intel_vpu, no /dev/accel); " : "",
			   p->ioctls ? "ioctls on accel fds" : "no ioctl tracing",
			   nprobes ? (p->binary ? "; ivpu_* uprobes" : "; ivpu_* kprobes") : "",
			   n->tp_used[TP_FENCE_INIT] ? "; dma_fence job fallback" : "",
			   nl0 || n->nl0_binary ? "; Level Zero calls" : "");
	emit_tdr(n);
}

struct xpu_source *xpu_source_npu_new(struct xpu_session *s, const struct xpu_npu_source_opts *o)
{
	struct xpu_source *src = xpu_source_npu_load(s, o);
	if (!src) {
		xpu_session_status(s, XPU_SRC_NPU, XPU_SRC_FAILED, "the NPU probes could not be set up (see -v)");
		return NULL;
	}
	xpu_source_npu_attach(src);
	return src;
}
