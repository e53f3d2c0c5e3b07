/* SPDX-License-Identifier: GPL-2.0-only */
/* GPU launch probes.
 *
 * gpu_site: a uprobe on xputop_launch_site() in libxputop_inject.so, called
 * by the library on the launching thread the first time a call site launches.
 * It captures the frame-pointer stack and, for DWARF unwinding in user space
 * (PyTorch's libraries have no frame pointers), the registers and the top of
 * the user stack.
 * gpu_launch: uprobes on the CUDA runtime/driver launch entry points, for
 * processes that run without the library ("launches only"); the bpf cookie
 * says which function fired.  A launch is counted per (thread, call site,
 * API) in a map; only the first launch of a key captures a stack.
 * gpu_wait and gpu_wait_end: uprobes on the entry of the "waiter" functions
 * (autograd's Engine::execute...) in which a thread of an injected process
 * waits while other threads launch on its behalf, and on the instruction
 * their calls return to: the entry is captured as a site is (the waiting
 * thread's stack), the return only timed.  Not a uretprobe: it replaces the
 * return address on the stack, and a C++ exception thrown through the
 * function (an error in backward()) then finds no unwind entry for it and
 * ends the program in std::terminate.
 * gpu_mmap and gpu_maps find the files to put those uprobes on: every
 * mapping of a file named libcudart.so* or libcuda.so*, made from now on (as
 * the dynamic loader maps it) or already there with code (an iterator over
 * every process's mappings, run once at start).
 * gpu_own: a task-clock perf event on each launching thread of an injected
 * process, so that a sample is a slice of that thread's CPU time.  It counts
 * whether the thread was in its own code or in CUDA's (the ranges user space
 * found in its maps), and whether the library was tracing then (its
 * xputop_tracing word): tracing slows CUDA's code, not the process's own, so
 * own time in and out of the slices scales what a slice saw (issue 25). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gpu.h"

char LICENSE[] SEC("license") = "GPL";

#define RING_BYTES (16 << 20)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);	/* 64 site captures of 256 KiB */
} gpu_events SEC(".maps");

/* Processes whose library is connected: their launches come through CUPTI,
 * so the launch-only probes leave them alone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} injected SEC(".maps");

/* Launches of injected processes counted while the sampled probes are on
 * (pid -> launches and traps since it was injected): their pace untraced by
 * CUPTI, which scales what CUPTI's slices saw (core/models/model_gpu.c), and
 * the probes' own traps, whose time the model takes off the probes'. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xpu_gpu_probed);
} probed_launches SEC(".maps");

/* Launch-only counts (gpu.h).  Grows as keys come: most processes have a
 * few hundred. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xpu_gpu_launch_key);
	__type(value, struct xpu_gpu_launch_count);
} launch_counts SEC(".maps");

/* Keys each process has in launch_counts; user space takes off those of
 * threads that exited. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} proc_sites SEC(".maps");

/* CUDA files reported already: each is probed once. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct xpu_gpu_file_key);
	__type(value, __u8);
} files_seen SEC(".maps");

__u64 dropped_sites = 0;	/* site records of injected processes (ring full) */
__u64 lost_stacks = 0;		/* new launch sites counted without a stack */
__u64 dropped_launches = 0;	/* launches not counted (the counts map full) */
__u64 dropped_files = 0;	/* CUDA files not reported (ring full) */
__u64 dropped_waits = 0;	/* waiter entries or returns not reported (ring full) */
__u64 dropped_nodes = 0;	/* node creations or runs not reported (ring over its share) */
/* XPU_GPU_PROBES_*, set by user space (core/sources/launch_probes.c):
 * paused around a sampled slice's attaching and detaching, where a probe
 * that fires is not counted.  Taking a uprobe out of a process waits for its
 * mmap lock, which CUDA's threads hold often: on an H200 a slice's probes
 * stayed in for 120 ms after its 10 ms, and the launches they counted there
 * made the estimates 5 times too high. */
__u32 probes_state = XPU_GPU_PROBES_SLICE;
/* Hits counted (not paused), per CPU: what the traps cost, which decides
 * whether the probes may stay on throughout. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} probe_hits SEC(".maps");
/* What a trap costs is measured on xputop's own function with the cookie
 * XPU_GPU_API_CALIB (core/sources/launch_probes.c): the probe's hits by
 * calib_pid, through the lookups an injected process's take. */
__u32 calib_pid = 0;
__u64 calib_hits = 0;

static __always_inline void fill_hdr(struct xpu_gpu_rec_hdr *h, void *ctx, __u32 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	h->type = type;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->time_ns = bpf_ktime_get_ns();
	h->copied = 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	h->ulen = bpf_get_stack(ctx, h->ustack, sizeof(h->ustack), BPF_F_USER_STACK);
}

/* Copies the stack from sp up, page by page, so the copy stops cleanly at the
 * top of the stack (the first unmapped page) instead of failing whole. */
static __always_inline __u32 copy_stack(struct xpu_gpu_site *s, __u64 sp)
{
	__u32 first = 4096 - (sp & 4095);
	__u32 done;

	if (bpf_probe_read_user(s->stack, first & 4095 ? first & 4095 : 4096, (void *)sp) < 0)
		return 0;
	done = first;
	for (int i = 0; i < XPU_GPU_STACK_PAGES; i++) {
		if (done > XPU_GPU_STACK_COPY - 4096)
			break;
		if (bpf_probe_read_user(s->stack + (done & (XPU_GPU_STACK_COPY - 1)), 4096,
					(void *)(sp + done)) < 0)
			break;
		done += 4096;
	}
	return done;
}

/* The registers and the top of the stack, for DWARF unwinding. */
static __always_inline void capture(struct xpu_gpu_site *s, struct pt_regs *ctx)
{
	/* DWARF register numbers: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	s->regs[0] = ctx->ax;
	s->regs[1] = ctx->dx;
	s->regs[2] = ctx->cx;
	s->regs[3] = ctx->bx;
	s->regs[4] = ctx->si;
	s->regs[5] = ctx->di;
	s->regs[6] = ctx->bp;
	s->regs[7] = ctx->sp;
	s->regs[8] = ctx->r8;
	s->regs[9] = ctx->r9;
	s->regs[10] = ctx->r10;
	s->regs[11] = ctx->r11;
	s->regs[12] = ctx->r12;
	s->regs[13] = ctx->r13;
	s->regs[14] = ctx->r14;
	s->regs[15] = ctx->r15;
	s->regs[16] = ctx->ip;
	s->h.copied = copy_stack(s, ctx->sp);
}

SEC("uprobe")
int BPF_KPROBE(gpu_site, __u32 site, __u32 corr, __u32 cbid)
{
	struct xpu_gpu_site *s = bpf_ringbuf_reserve(&gpu_events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&dropped_sites, 1);
		return 0;
	}
	fill_hdr(&s->h, ctx, XPU_GPU_REC_SITE);
	s->h.site = site;
	s->h.corr = corr;
	s->h.api = cbid;
	capture(s, ctx);
	bpf_ringbuf_submit(s, 0);
	return 0;
}

/* The node probes' making sites.  A forward pass makes hundreds of nodes,
 * the same ones step after step: a node's making site is keyed by what
 * tells one making from another without a stack walk (libtorch keeps no
 * frame pointers, and the Python frames above it look alike for every
 * Python line of one function): the node's class (its vtable), the direct
 * caller, the stack pointer (the call's depth), and the making's place in
 * the thread's order since its process last entered a waiter (a step's
 * backward()).  A site's stack is captured the first time its key is
 * seen; later makings send the key alone.  The process's start time is in
 * the key too: a process that gets an ended one's pid sends its own. */
struct node_thread {
	__u32 epoch;		/* the process's waiter entries when the count began */
	__u32 ord;		/* makings since */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tid */
	__type(value, struct node_thread);
} node_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);		/* pid */
	__type(value, __u32);		/* waiter entries */
} node_epochs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);		/* a making site's key with its pid */
	__type(value, __u8);
} node_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);		/* pid */
	__type(value, __u32);		/* making sites captured */
} node_sites SEC(".maps");

__u64 node_sites_lost = 0;	/* makings from new sites past a process's limit */

/* Mixes one return address into a call site's hash. */
static __always_inline __u64 mix(__u64 h, __u64 ret)
{
	h ^= ret;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* A waiter entered: the process's makings are counted anew. */
static __always_inline void node_epoch_next(__u32 pid)
{
	__u32 one = 1, *e = bpf_map_lookup_elem(&node_epochs, &pid);

	if (e)
		__sync_fetch_and_add(e, 1);
	else
		bpf_map_update_elem(&node_epochs, &pid, &one, BPF_ANY);
}

/* The making site's key (never 0), or 0 when it cannot be read. */
static __always_inline __u32 node_key(struct pt_regs *ctx, __u32 pid, __u32 tid, __u64 node)
{
	__u32 *e = bpf_map_lookup_elem(&node_epochs, &pid), epoch = e ? *e : 0;
	struct node_thread *t = bpf_map_lookup_elem(&node_threads, &tid), fresh = { epoch, 0 };
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 vtable = 0, caller = 0, h, start = BPF_CORE_READ(task, group_leader, start_time);

	if (!t) {
		bpf_map_update_elem(&node_threads, &tid, &fresh, BPF_ANY);
		if (!(t = bpf_map_lookup_elem(&node_threads, &tid)))
			return 0;
	}
	if (t->epoch != epoch) {
		t->epoch = epoch;
		t->ord = 0;
	}
	t->ord++;
	if (bpf_probe_read_user(&vtable, sizeof(vtable), (void *)node) < 0 ||
	    bpf_probe_read_user(&caller, sizeof(caller), (void *)ctx->sp) < 0)
		return 0;
	h = mix(mix(mix(mix(mix(0xcbf29ce484222325ULL, start), t->ord), vtable), caller), ctx->sp);
	return (__u32)(h ^ (h >> 32)) | 1;
}

/* The waiter probes fire in every process that maps the file; only the
 * injected ones (whose launches carry correlation ids) are reported. */
SEC("uprobe")
int gpu_wait(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct xpu_gpu_site *s;

	if (!bpf_map_lookup_elem(&injected, &pid))
		return 0;
	node_epoch_next(pid);
	/* A program calling a waiter thousands of times a second must not
	 * take the ring from the call sites, each captured only once: waits
	 * use its first half only. */
	if (bpf_ringbuf_query(&gpu_events, BPF_RB_AVAIL_DATA) > RING_BYTES / 2 ||
	    !(s = bpf_ringbuf_reserve(&gpu_events, sizeof(*s), 0))) {
		__sync_fetch_and_add(&dropped_waits, 1);
		return 0;
	}
	fill_hdr(&s->h, ctx, XPU_GPU_REC_WAIT);
	s->h.site = 0;
	s->h.corr = 0;
	s->h.api = (__u32)bpf_get_attach_cookie(ctx);
	capture(s, ctx);
	bpf_ringbuf_submit(s, 0);
	return 0;
}

/* At the instruction a waiter's call returns to: sp is the entry's + 8. */
SEC("uprobe")
int gpu_wait_end(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct xpu_gpu_wait_end e = { .type = XPU_GPU_REC_WAIT_END, .pid = id >> 32, .tid = (__u32)id };

	if (!bpf_map_lookup_elem(&injected, &e.pid))
		return 0;
	e.waiter = (__u32)bpf_get_attach_cookie(ctx);
	e.time_ns = bpf_ktime_get_ns();
	e.sp = ctx->sp;
	if (bpf_ringbuf_output(&gpu_events, &e, sizeof(e), 0) < 0)
		__sync_fetch_and_add(&dropped_waits, 1);
	return 0;
}

/* The node a node probe's function is given (its cookie says where). */
static __always_inline __u64 node_arg(struct pt_regs *ctx)
{
	__u64 c = bpf_get_attach_cookie(ctx), v;

	switch (c & 0xff) {
	case 0: v = ctx->di; break;
	case 1: v = ctx->si; break;
	case 2: v = ctx->dx; break;
	case 3: v = ctx->cx; break;
	case 4: v = ctx->r8; break;
	default: v = ctx->r9; break;
	}
	if ((c & XPU_GPU_NODE_DEREF) && bpf_probe_read_user(&v, sizeof(v), (void *)v) < 0)
		return 0;
	return v;
}

/* gpu_node: autograd's forward makes a node (set_gradient_edge).  A new
 * making site's stack is captured as a wait's is, in at most a quarter of
 * the ring (call sites and waits keep the rest); a known one sends its key. */
SEC("uprobe")
int gpu_node(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct xpu_gpu_node_seen r = { .type = XPU_GPU_REC_NODE_SEEN, .pid = id >> 32, .tid = (__u32)id };
	struct xpu_gpu_site *s;
	__u32 *count, one = 1;
	__u64 seen_key;
	__u8 yes = 1;

	if (!bpf_map_lookup_elem(&injected, &r.pid) || !(r.node = node_arg(ctx)))
		return 0;
	r.time_ns = bpf_ktime_get_ns();
	r.key = node_key(ctx, r.pid, r.tid, r.node);
	seen_key = (__u64)r.pid << 32 | r.key;
	if (r.key && !bpf_map_lookup_elem(&node_seen, &seen_key)) {
		count = bpf_map_lookup_elem(&node_sites, &r.pid);
		if (count && *count >= XPU_GPU_NODE_SITES_PER_PROC) {
			__sync_fetch_and_add(&node_sites_lost, 1);
			r.key = 0;
		} else if (bpf_ringbuf_query(&gpu_events, BPF_RB_AVAIL_DATA) > RING_BYTES / 4 ||
			   !(s = bpf_ringbuf_reserve(&gpu_events, sizeof(*s), 0))) {
			__sync_fetch_and_add(&dropped_nodes, 1);	/* the next making tries again */
			return 0;
		} else {
			fill_hdr(&s->h, ctx, XPU_GPU_REC_NODE);
			s->h.time_ns = r.time_ns;
			s->h.site = (__u32)r.node;
			s->h.corr = r.node >> 32;
			s->h.api = r.key;
			capture(s, ctx);
			bpf_ringbuf_submit(s, 0);
			bpf_map_update_elem(&node_seen, &seen_key, &yes, BPF_ANY);
			if (count)
				__sync_fetch_and_add(count, 1);
			else
				bpf_map_update_elem(&node_sites, &r.pid, &one, BPF_ANY);
			return 0;
		}
	}
	if (bpf_ringbuf_output(&gpu_events, &r, sizeof(r), 0) < 0)
		__sync_fetch_and_add(&dropped_nodes, 1);
	return 0;
}

/* gpu_node_run: the engine runs a node (evaluate_function); timed only. */
SEC("uprobe")
int gpu_node_run(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct xpu_gpu_node_run r = { .type = XPU_GPU_REC_RUN, .pid = id >> 32, .tid = (__u32)id };

	if (!bpf_map_lookup_elem(&injected, &r.pid) || !(r.node = node_arg(ctx)))
		return 0;
	r.time_ns = bpf_ktime_get_ns();
	r.sp = ctx->sp;
	if (bpf_probe_read_user(&r.ret, sizeof(r.ret), (void *)ctx->sp) < 0 ||
	    bpf_ringbuf_output(&gpu_events, &r, sizeof(r), 0) < 0)
		__sync_fetch_and_add(&dropped_nodes, 1);
	return 0;
}

/* The top of the launching thread's stack, read in one copy: the frames of
 * most call sites lie in its 1 KiB, and one copy costs less than a read a
 * frame (measured: 600 -> 360 ns a launch).  A uprobe program can be
 * preempted, and the one that runs next on the CPU then finds the window
 * busy and reads frame by frame. */
#define WINDOW_WORDS 128
struct window {
	__u64 busy;
	__u64 w[WINDOW_WORDS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct window);
} stack_window SEC(".maps");

/* The frame record (saved frame pointer, return address) at fp, from the
 * window where it lies in it.  Returns 0, or -1 when it cannot be read. */
static __always_inline int frame_at(const __u64 *w, __u64 sp, __u64 fp, __u64 frame[2])
{
	__u64 i = (fp - sp) / 8;

	if (w && i < WINDOW_WORDS - 1) {
		frame[0] = w[i & (WINDOW_WORDS - 1)];
		frame[1] = w[(i + 1) & (WINDOW_WORDS - 1)];
		return 0;
	}
	return bpf_probe_read_user(frame, 16, (void *)fp) < 0 ? -1 : 0;
}

/* This CPU's window, copied from sp, or NULL (in use by the program this
 * one preempted, or running past the top of the stack: then frames are read
 * one by one).  The window is the taker's whose add found it free (an add is
 * the only atomic every BPF target has); every taker adds -1 when done. */
static __always_inline struct window *window_take(__u64 sp)
{
	__u32 zero = 0;
	struct window *win = bpf_map_lookup_elem(&stack_window, &zero);

	if (!win)
		return NULL;
	__sync_fetch_and_add(&win->busy, 1);
	if (*(volatile __u64 *)&win->busy != 1 ||
	    bpf_probe_read_user(win->w, sizeof(win->w), (void *)sp) < 0) {
		__sync_fetch_and_add(&win->busy, -1);
		return NULL;
	}
	return win;
}

/* The call site: the caller's return address (at the stack pointer on entry)
 * and the return addresses of the frames above it.  A frame pointer is only
 * followed upwards within 64 MiB of the stack pointer, so code that keeps
 * data in rbp ends the walk instead of feeding it noise.  Never 0. */
static __always_inline __u64 site_hash(struct pt_regs *ctx, __u64 *ret0)
{
	__u64 sp = ctx->sp, fp = ctx->bp, prev = sp, h = 0xcbf29ce484222325ULL, frame[2];
	struct window *win = window_take(sp);
	const __u64 *w = win ? win->w : NULL;

	if (w)
		*ret0 = w[0];
	else if (bpf_probe_read_user(ret0, sizeof(*ret0), (void *)sp) < 0)
		return 1;
	h = mix(h, *ret0);
	for (int i = 0; i < XPU_GPU_SITE_DEPTH; i++) {
		if (fp <= prev || fp - prev > (64 << 20) || (fp & 7) || frame_at(w, sp, fp, frame) < 0)
			break;
		h = mix(h, frame[1]);
		prev = fp;
		fp = frame[0];
	}
	if (win)
		__sync_fetch_and_add(&win->busy, -1);
	return h | 1;
}

/* 1 for libcudart.so*, 2 for libcuda.so*, 0 for any other file; the name
 * (NUL-terminated) is left in name. */
static __always_inline int cuda_file(struct file *f, char *name)
{
	static const char rt[] = "libcudart.so", drv[] = "libcuda.so";
	int is_rt = 1, is_drv = 1;

	if (bpf_probe_read_kernel_str(name, XPU_GPU_NAME_LEN, BPF_CORE_READ(f, f_path.dentry, d_name.name)) < 0)
		return 0;
	for (int i = 0; i < sizeof(rt) - 1; i++)
		is_rt &= name[i] == rt[i];
	for (int i = 0; i < sizeof(drv) - 1; i++)
		is_drv &= name[i] == drv[i];
	return is_rt ? 1 : is_drv ? 2 : 0;
}

static long runtime_vma(struct task_struct *task, struct vm_area_struct *vma, void *found)
{
	char name[XPU_GPU_NAME_LEN];
	struct file *f = vma->vm_file;

	*(int *)found = f && cuda_file(f, name) == 1;
	return 0;
}

/* Whether the launch function was called from the CUDA runtime: a driver
 * launch made by a runtime launch, which is counted already. */
static __always_inline int called_by_runtime(__u64 ret0)
{
	int found = 0;

	bpf_find_vma(bpf_get_current_task_btf(), ret0, runtime_vma, &found, 0);
	return found;
}

/* Sends the stack of a new key.  Returns 0, or -1 when the ring is full. */
static __always_inline int send_site(struct pt_regs *ctx, const struct xpu_gpu_launch_key *k)
{
	struct xpu_gpu_launch_site *r = bpf_ringbuf_reserve(&gpu_events, sizeof(*r), 0);

	if (!r)
		return -1;
	fill_hdr(&r->h, ctx, XPU_GPU_REC_LAUNCH_SITE);
	r->h.site = 0;
	r->h.corr = 0;
	r->h.api = k->api;
	r->key = *k;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* Whether the process may have one more key with a stack of its own. */
static __always_inline int proc_room(__u32 pid)
{
	__u32 *n = bpf_map_lookup_elem(&proc_sites, &pid);

	return !n || *n < XPU_GPU_SITES_PER_PROC;
}

static __always_inline void proc_took(__u32 pid)
{
	__u32 one = 1, *n = bpf_map_lookup_elem(&proc_sites, &pid);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&proc_sites, &pid, &one, BPF_NOEXIST);
}

/* Counts a launch under k.  Returns 1 when k was made by it. */
static __always_inline int count(const struct xpu_gpu_launch_key *k, const struct xpu_gpu_launch_count *c)
{
	struct xpu_gpu_launch_count *old;

	if (bpf_map_update_elem(&launch_counts, k, c, BPF_NOEXIST) == 0)
		return 1;
	old = bpf_map_lookup_elem(&launch_counts, k);
	if (old)
		__sync_fetch_and_add(&old->calls, 1);
	else
		__sync_fetch_and_add(&dropped_launches, 1);
	return 0;
}

/* The first launch of a key: a nested driver launch is marked so (and needs
 * no stack); any other sends its stack, or, where the process has too many
 * keys or the ring is full, is counted under site 0 without one. */
static __always_inline void new_key(struct pt_regs *ctx, struct xpu_gpu_launch_key *k, __u64 ret0)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct xpu_gpu_launch_count c = { .calls = 1, .born = BPF_CORE_READ(task, group_leader, start_time) };

	bpf_get_current_comm(c.comm, sizeof(c.comm));
	if (k->api >= XPU_GPU_NRUNTIME && called_by_runtime(ret0)) {
		c.flags = XPU_GPU_LAUNCH_NESTED;
		count(k, &c);
		return;
	}
	if (!proc_room(k->pid) || send_site(ctx, k) < 0) {
		__sync_fetch_and_add(&lost_stacks, 1);
		k->site = 0;
	}
	if (count(k, &c) && k->site)
		proc_took(k->pid);
}

/* A launch of an injected process, or, while the probes are on throughout,
 * of any: counted as the launch-only ones are (a driver launch the runtime
 * made is the runtime launch's), under its pid, in a sampled slice's fields
 * or the whole's; every probe's hit is a trap, counted too. */
static __always_inline void count_probed(struct pt_regs *ctx, __u32 pid, __u32 api, int whole)
{
	struct xpu_gpu_probed one = { 0 }, *n;
	__u64 ret0 = 0, launch = 1;

	if (api >= XPU_GPU_NRUNTIME && (bpf_probe_read_user(&ret0, sizeof(ret0), (void *)ctx->sp) < 0 ||
					 called_by_runtime(ret0)))
		launch = 0;
	n = bpf_map_lookup_elem(&probed_launches, &pid);
	if (n && whole) {
		if (launch)
			__sync_fetch_and_add(&n->whole_launches, 1);
		__sync_fetch_and_add(&n->whole_traps, 1);
	} else if (n) {
		if (launch)
			__sync_fetch_and_add(&n->launches, 1);
		__sync_fetch_and_add(&n->traps, 1);
	} else {
		if (whole) {
			one.whole_launches = launch;
			one.whole_traps = 1;
		} else {
			one.launches = launch;
			one.traps = 1;
		}
		if (bpf_map_update_elem(&probed_launches, &pid, &one, BPF_NOEXIST))
			__sync_fetch_and_add(&dropped_launches, 1);
	}
}

static __always_inline void count_hit(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&probe_hits, &zero);

	if (n)
		*n += 1;
}

/* The calibration's hit: the lookups count_probed makes, on keys no
 * process has. */
static __always_inline void count_calib(__u32 pid)
{
	__u32 none = 0;

	if (pid != calib_pid || bpf_map_lookup_elem(&injected, &none) ||
	    bpf_map_lookup_elem(&probed_launches, &none))
		return;
	__sync_fetch_and_add(&calib_hits, 1);
}

SEC("uprobe")
int gpu_launch(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ret0 = 0;
	struct xpu_gpu_launch_key k = { .pid = id >> 32, .tid = (__u32)id };
	struct xpu_gpu_launch_count *c;
	__u32 state;

	/* The calibration's probe counts while a slice's probes go in or out
	 * (it runs on a thread of its own, beside them). */
	k.api = (__u32)bpf_get_attach_cookie(ctx);
	if (k.api == XPU_GPU_API_CALIB) {
		count_calib(k.pid);
		return 0;
	}
	state = probes_state;
	if (state == XPU_GPU_PROBES_PAUSED && k.api != XPU_GPU_API_CALIB_LO)
		return 0;
	if (k.api != XPU_GPU_API_CALIB_LO)
		count_hit();
	if (bpf_map_lookup_elem(&injected, &k.pid)) {
		count_probed(ctx, k.pid, k.api, state == XPU_GPU_PROBES_WHOLE);
		return 0;
	}
	/* A launch-only process's whole count, beside its call sites' */
	if (state == XPU_GPU_PROBES_WHOLE && k.api != XPU_GPU_API_CALIB_LO)
		count_probed(ctx, k.pid, k.api, 1);
	k.site = site_hash(ctx, &ret0);
	c = bpf_map_lookup_elem(&launch_counts, &k);
	/* The launch-only one's calibration: its hash and lookup, no count. */
	if (k.api == XPU_GPU_API_CALIB_LO) {
		if (k.pid == calib_pid && !c)
			__sync_fetch_and_add(&calib_hits, 1);
		return 0;
	}
	if (c) {
		__sync_fetch_and_add(&c->calls, 1);
		return 0;
	}
	new_key(ctx, &k, ret0);
	return 0;
}

/* Reports a CUDA file once (until user space forgets it). */
static __always_inline void report_file(struct file *f, __u32 pid)
{
	struct xpu_gpu_mapped m = { .type = XPU_GPU_REC_MAPPED, .pid = pid, .time_ns = bpf_ktime_get_ns() };
	__u8 one = 1;

	if (!cuda_file(f, m.name))
		return;
	m.file.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	m.file.ino = BPF_CORE_READ(f, f_inode, i_ino);
	if (bpf_map_update_elem(&files_seen, &m.file, &one, BPF_NOEXIST))
		return;
	if (bpf_ringbuf_output(&gpu_events, &m, sizeof(m), 0) < 0) {
		__sync_fetch_and_add(&dropped_files, 1);
		bpf_map_delete_elem(&files_seen, &m.file);
	}
}

#define NR_MMAP 9	/* x86-64 */

/* The dynamic loader maps each library's code with mmap() from the
 * library's fd, at exec and at dlopen alike, and mmap() takes the mmap lock
 * for writing.  A syscall tracepoint would put every syscall of every
 * process on the kernel's slower path (50 ns a call, measured); this hook
 * costs only the mmap lock's acquisitions, most turned away at once (a read
 * lock, another syscall, no fd).  The fd is the mmap's fifth argument (r8). */
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(gpu_mmap, struct mm_struct *mm, bool write, bool success)
{
	struct task_struct *t;
	struct pt_regs *regs;
	struct fdtable *fdt;
	struct file *f = NULL;
	int fd;

	if (!write || !success)
		return 0;
	t = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (regs->orig_ax != NR_MMAP || (fd = (int)regs->r8) < 0)
		return 0;
	fdt = t->files->fdt;
	if (fd >= fdt->max_fds || bpf_probe_read_kernel(&f, sizeof(f), fdt->fd + fd) < 0 || !f)
		return 0;
	report_file(f, t->tgid);
	return 0;
}

#define VM_EXEC 0x4

SEC("iter/task_vma")
int gpu_maps(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;

	if (!vma || !task || !(vma->vm_flags & VM_EXEC) || !vma->vm_file)
		return 0;
	report_file(vma->vm_file, task->tgid);
	return 0;
}

/* Per process, written by user space (gpu.h); at most as many processes as
 * connections the GPU socket takes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct xpu_gpu_own_config);
} own_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct xpu_gpu_own_counts);
} own_counts SEC(".maps");

/* The pc the thread runs in user mode, or ran at when it entered the
 * kernel: a system call made by CUDA's code (an ioctl to the driver) is
 * CUDA's time, one made by the program is the program's. */
static __always_inline __u64 user_pc(struct bpf_perf_event_data *ctx)
{
	/* A whole word: the verifier takes only 8-byte reads of the regs,
	 * and this kernel's pt_regs has cs as a 2-byte field of a union. */
	__u64 cs = *(volatile __u64 *)((void *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));
	struct pt_regs *regs;

	if ((cs & 3) == 3)
		return ctx->regs.ip;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return regs ? BPF_CORE_READ(regs, ip) : 0;
}

SEC("perf_event")
int gpu_own(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct xpu_gpu_own_config *c = bpf_map_lookup_elem(&own_config, &pid);
	struct xpu_gpu_own_counts *n = bpf_map_lookup_elem(&own_counts, &pid);
	__u32 flag, cls = 0;	/* 0 own, 1 CUDA's, 2 shared */
	__u64 pc;

	if (!c || !n)
		return 0;
	/* Only this process's own memory is read, at the address user space
	 * found in the library's file; a fault reading it is counted, never
	 * taken for either state. */
	if (bpf_probe_read_user(&flag, sizeof(flag), (void *)c->flag) < 0) {
		__sync_fetch_and_add(&n->unread, 1);
		return 0;
	}
	/* 2: the library traces throughout, where what it sees is counted as
	 * it is and nothing is scaled by own time (model_gpu.c): neither side. */
	if (flag > 1)
		return 0;
	pc = user_pc(ctx);
	for (__u32 i = 0; i < XPU_GPU_OWN_RANGES; i++) {
		if (i >= c->nranges)
			break;
		if (pc >= c->lo[i] && pc < c->hi[i]) {
			cls = i < c->ncuda ? 1 : 2;
			break;
		}
	}
	if (cls == 1)
		__sync_fetch_and_add(&n->cuda[flag ? 1 : 0], 1);
	else if (cls == 2)
		__sync_fetch_and_add(&n->shared[flag ? 1 : 0], 1);
	else
		__sync_fetch_and_add(&n->own[flag ? 1 : 0], 1);
	return 0;
}
