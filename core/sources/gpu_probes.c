/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_probes.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dict.h"
#include "err.h"
#include "gpu.h"
#include "gpu.skel.h"
#include "func_offsets.h"
#include "gpu_launches.h"
#include "gpu_stitch.h"
#include "readfile.h"
#include "launch_probes.h"
#include "rawstack.h"
#include "service.h"
#include "symbolize.h"
#include "sys.h"
#include "unwind_dwarf.h"
#include "uprobe_multi.h"

#define MAX_FILES 64
#define MAX_LINKS 512
/* Site stacks being unwound on the service thread at most (256 KiB each):
 * beyond, a site gets its frame-pointer stack at once. */
#define SITE_JOBS 64
/* Of which node making sites at most (the node probes): a forward pass
 * brings hundreds of new ones at once, and the launch call sites, captured
 * once each, must not fall back to their frame pointers behind them.  A
 * making site past it is left for a later making (its key forgotten in
 * BPF, so the next making of it captures again). */
#define NODE_JOBS (SITE_JOBS / 2)
/* CUDA files reported and not probed yet.  A report comes as the mapping is
 * made, so the process's maps may show it only a moment later: it is looked
 * for again at the next refreshes, this many times. */
#define DISCOVER_QUEUE 256
#define DISCOVER_TRIES 5
/* Reading maps and attaching probes per refresh stops after this long; the
 * rest waits for the next refresh. */
#define DISCOVER_BUDGET_NS 20000000ULL

/* The launch entry points probed for processes without the library. */
static const char *const runtime_fns[] = {
	"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
	"cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
	"cudaLaunchCooperativeKernel_ptsz", "cudaGraphLaunch", "cudaGraphLaunch_ptsz",
	"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunch",
};
static const char *const driver_fns[] = {
	"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
	"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch",
	"cuGraphLaunch_ptsz", "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync",
};
#define NRUNTIME (sizeof(runtime_fns) / sizeof(runtime_fns[0]))
#define NDRIVER (sizeof(driver_fns) / sizeof(driver_fns[0]))
_Static_assert(NRUNTIME == XPU_GPU_NRUNTIME, "bpf/gpu.h tells runtime from driver functions by index");

struct file_id { uint64_t dev, ino; };

/* Where a waiter's call returns to: a file offset, probed once. */
#define MAX_RETURNS 256
struct ret_site { struct file_id file; uint64_t off; };
struct looked { uint32_t pid; int on; uint64_t addr; };

/* A CUDA file a process mapped, as BPF reported it. */
struct mapped {
	uint32_t pid, tries;
	struct xpu_gpu_file_key file;	/* to forget it when it is not found */
};

#define THREAD_PROCS 64	/* injected processes whose launching threads' CPU time is kept */

struct xpu_gpu_probes {
	struct gpu_bpf *skel;
	struct ring_buffer *ring;
	struct xpu_symbolizer *sym;
	struct xpu_dict *dict;
	struct xpu_service *svc;
	struct xpu_unwinder *unwinder;	/* used on the service thread only */
	struct xpu_gpu_probe_sink sink;
	struct xpu_gpu_launches *launches;
	struct xpu_launch_probes *lp;	/* the launch-only uprobes, on a duty cycle */
	int multi;			/* gpu_launch loaded for uprobe_multi links */
	int no_own;			/* gpu_own did not load: no own-time sampling */
	struct bpf_link *links[MAX_LINKS];
	uint32_t nlinks;
	struct file_id marker[MAX_FILES], runtime[MAX_FILES];
	uint32_t nmarker, nruntime;
	uint32_t api_str[NRUNTIME + NDRIVER];
	uint32_t no_stack;	/* frame of launches counted without a stack */
	struct mapped queue[DISCOVER_QUEUE];
	uint32_t nqueue;
	struct xpu_gpu_waiter waiters[XPU_GPU_MAX_WAITERS];
	int nwaiters;
	struct file_id waited[MAX_FILES];	/* files whose waiters are probed */
	uint32_t nwaited;
	struct ret_site returns[MAX_RETURNS];	/* where waiters' calls return to, probed */
	uint32_t nreturns;
	struct looked looked[MAX_RETURNS];	/* return addresses looked up */
	uint32_t nlooked;
	uint64_t tokens;			/* waits and nodes reported so far */
	struct xpu_gpu_nodes nodes;		/* the node probes (gpu_stitch.h) */
	/* Injected processes' launches the probes counted (probed_launches),
	 * as last read, by pid; the next read into spare. */
	struct probed *probed, *spare;
	uint32_t nprobed;
	/* Launching threads of injected processes handed to lp for their CPU
	 * time, kept here so that a launch record takes no lock for a thread
	 * seen before: at most XPU_GPU_CPU_THREADS a process, whatever its library says
	 * (a tid it made up is one of them: not found in its /proc). */
	struct lthreads { uint32_t pid, n, tid[XPU_GPU_CPU_THREADS]; } lt[THREAD_PROCS];
	uint32_t nlt, last_pid, last_tid;
	struct xpu_gpu_probe_stats st;
	uint64_t began;		/* when they started: a launch-only process is watched from
				 * here at the earliest, */
	uint64_t files_from;	/* or from when the first CUDA file was reported, if later */
};

struct probed { uint32_t pid; struct xpu_gpu_probed n; };
#define MAX_PROBED 4096	/* probed_launches' max_entries */

/* Frames of the launch machinery (the library, CUPTI, the CUDA runtime and
 * driver) are cut from the leaf end: the stack ends at the caller's code and
 * the launch API frame that follows names the call. */
static int machinery(const struct xpu_dict *d, uint32_t frame)
{
	static const char *const prefixes[] = { "libxputop_inject", "libcupti.so", "libcudart.so",
						"libcuda.so" };
	const struct xpu_frame *f = xpu_dict_frame_get(d, frame);
	const char *mod = f ? xpu_dict_str_get(d, f->module) : "";
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(mod, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static uint32_t caller_frames(struct xpu_gpu_probes *p, uint32_t pid, const uint64_t *ips, int n,
			      uint32_t *frames)
{
	uint32_t k = xpu_rawstack_frames(p->sym, pid, ips, (uint32_t)n, NULL, 0, frames);
	while (k && machinery(p->dict, frames[k - 1]))
		k--;
	return k;
}

/* Whether a frame is an address in no known mapping ("[unknown]" without a
 * module). */
static int outside_maps(const struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct xpu_frame *f = xpu_dict_frame_get(d, frames[i]);
		if (f && f->kind == XPU_FRAME_UNKNOWN && !f->module)
			return 1;
	}
	return 0;
}

static int fp_depth(int32_t ulen)
{
	return ulen > 0 ? (ulen / 8 > XPU_GPU_MAX_DEPTH ? XPU_GPU_MAX_DEPTH : ulen / 8) : 0;
}

/* How far the DWARF walk goes: past the 127 frames of the kernel's
 * frame-pointer walk (cuDNN's launches in torch.compile'd training were
 * deeper, and lost their root: the training step), to what one stack can
 * symbolize. */
#define DWARF_DEPTH XPU_RAWSTACK_MAX_IPS

/* A site's capture, on its way through the service thread. */
struct site_job {
	struct xpu_service_job job;
	struct xpu_gpu_probes *p;
	uint32_t pid, tid, site;
	uint64_t token;				/* a wait's or a node making site's (site 0) */
	int node;				/* a node making site's */
	int nfp, ndw;
	uint64_t fp[XPU_GPU_MAX_DEPTH];		/* the frame-pointer walk BPF did */
	uint64_t regs[XPU_GPU_NREGS];
	uint32_t copied;
	uint8_t *stack;				/* the copy of the stack from rsp up */
	uint64_t ips[DWARF_DEPTH];		/* the DWARF walk */
};

/* Symbolizes the better of the two walks and hands the site its frames. */
static void site_frames(struct xpu_gpu_probes *p, struct site_job *j)
{
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	const uint64_t *use = j->fp;
	int n = j->nfp;
	/* The frame-pointer walk stops (or strays) in code built without frame
	 * pointers; DWARF follows the CFI and gets further. */
	if (j->ndw >= n && j->ndw > 0) {
		use = j->ips;
		n = j->ndw;
		p->st.sites_dwarf++;
	}
	uint32_t k = caller_frames(p, j->pid, use, n, frames);
	/* A site's stack is captured once, so a frame outside every mapping
	 * the symbolizer knows (its copy of the maps predates a dlopen, read
	 * less than the re-read interval ago) must not stay: read the maps
	 * again and symbolize once more. */
	if (outside_maps(p->dict, frames, k)) {
		xpu_sym_proc_exec(p->sym, j->pid);
		k = caller_frames(p, j->pid, use, n, frames);
	}
	if (j->token) {
		p->sink.wait_frames(p->sink.arg, j->token, frames, k);
		return;
	}
	p->st.sites++;
	p->sink.site(p->sink.arg, j->pid, j->site, frames, k);
}

static void site_work(struct xpu_service_job *job)
{
	struct site_job *j = (struct site_job *)job;
	j->ndw = xpu_unwinder_run(j->p->unwinder, j->pid, j->tid, j->regs, j->stack, j->copied, j->ips,
				  DWARF_DEPTH);
}

static void site_done(struct xpu_service_job *job)
{
	struct site_job *j = (struct site_job *)job;
	j->p->st.sites_unwinding--;
	j->p->st.nodes_unwinding -= (uint32_t)j->node;
	site_frames(j->p, j);
	free(j->stack);
	free(j);
}

/* A site's capture, a wait's (token > 0) or a node making site's (node). */
static void site_capture(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r, uint64_t token, int node)
{
	struct site_job *j = calloc(1, sizeof(*j));
	if (!j) {
		p->st.bad++;
		return;
	}
	*j = (struct site_job){ .job = { .work = site_work, .done = site_done }, .p = p,
				.pid = r->h.pid, .tid = r->h.tid, .site = r->h.site, .token = token,
				.node = node, .nfp = fp_depth(r->h.ulen) };
	memcpy(j->fp, r->h.ustack, (size_t)j->nfp * sizeof(uint64_t));
	memcpy(j->regs, r->regs, sizeof(j->regs));
	j->copied = r->h.copied <= XPU_GPU_STACK_COPY ? r->h.copied : 0;
	if (j->copied && p->st.sites_unwinding < SITE_JOBS && (j->stack = malloc(j->copied))) {
		memcpy(j->stack, r->stack, j->copied);
		p->st.sites_unwinding++;
		p->st.nodes_unwinding += (uint32_t)node;
		if (!p->svc) {
			site_work(&j->job);
			site_done(&j->job);
			return;
		}
		if (xpu_service_submit(p->svc, &j->job) == 0)
			return;
		p->st.sites_unwinding--;
		p->st.nodes_unwinding -= (uint32_t)node;
		free(j->stack);
		j->stack = NULL;
	}
	/* Too many unwinds wait already: the frame pointers will do. */
	p->st.sites_fp_only++;
	site_frames(p, j);
	free(j->stack);
	free(j);
}

static void on_site(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r, uint64_t token)
{
	site_capture(p, r, token, 0);
}

/* The first launch from a key of a process without the library: its stack,
 * with the launch API frame, becomes the key's stack. */
static void on_launch_site(struct xpu_gpu_probes *p, const struct xpu_gpu_launch_site *r)
{
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	const struct xpu_gpu_launch_key *k = &r->key;
	if (k->api >= NRUNTIME + NDRIVER || k->pid != r->h.pid || k->tid != r->h.tid || !k->site) {
		p->st.bad++;
		return;
	}
	uint32_t n = caller_frames(p, k->pid, (const uint64_t *)r->h.ustack, fp_depth(r->h.ulen), frames);
	frames[n++] = xpu_dict_frame(p->dict, XPU_FRAME_LAUNCH, p->api_str[k->api], 0);
	p->st.launch_stacks++;
	xpu_gpu_launches_stack(p->launches, k, xpu_dict_stack(p->dict, frames, n));
}

static void forget_file(struct xpu_gpu_probes *p, const struct xpu_gpu_file_key *f)
{
	bpf_map__delete_elem(p->skel->maps.files_seen, f, sizeof(*f), 0);
}

/* A process mapped a CUDA file: its maps are read at the next refresh. */
static void on_mapped(struct xpu_gpu_probes *p, const struct xpu_gpu_mapped *m)
{
	if (p->nqueue == DISCOVER_QUEUE) {
		p->st.files_dropped++;
		forget_file(p, &m->file);	/* so that its next mapping reports it again */
		return;
	}
	p->queue[p->nqueue++] = (struct mapped){ .pid = m->pid, .file = m->file };
	if (!p->files_from)
		p->files_from = m->time_ns;
}

static int probe_return(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r);

/* A thread entered a waiter: the wait starts now, its stack is unwound as
 * a site's is. */
static void on_wait(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r)
{
	if (r->h.api >= (uint32_t)p->nwaiters || !p->sink.wait_begin) {
		p->st.bad++;
		return;
	}
	uint64_t token = ++p->tokens;
	p->st.waits++;
	int seen = probe_return(p, r);
	p->st.waits_blind += !seen;
	p->sink.wait_begin(p->sink.arg, r->h.pid, r->h.tid, r->h.time_ns, r->regs[7], p->waiters[r->h.api].kind,
			   !seen, token);
	on_site(p, r, token);
}

static void on_wait_end(struct xpu_gpu_probes *p, const struct xpu_gpu_wait_end *e)
{
	if ((e->waiter >= (uint32_t)p->nwaiters && e->waiter != XPU_GPU_RUN_WAITER) || !p->sink.wait_end) {
		p->st.bad++;
		return;
	}
	p->sink.wait_end(p->sink.arg, e->pid, e->tid, e->time_ns, e->sp);
}

static struct looked *looked_find(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr);
static void looked_add(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr, int on);

/* A thread made an autograd node from a making site not seen before: the
 * site's stack is unwound as a wait's is. */
static void on_node(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r)
{
	uint64_t node = (uint64_t)r->h.corr << 32 | r->h.site;
	if (!p->sink.node_made || !node || !r->h.api) {
		p->st.bad++;
		return;
	}
	p->st.nodes++;
	if (p->st.nodes_unwinding >= NODE_JOBS || p->st.sites_unwinding >= SITE_JOBS || !r->h.copied) {
		/* Left for a later making of the site: its node keeps the
		 * waiter's stack. */
		uint64_t seen = (uint64_t)r->h.pid << 32 | r->h.api;
		bpf_map__delete_elem(p->skel->maps.node_seen, &seen, sizeof(seen), 0);
		p->st.node_sites_deferred++;
		p->sink.node_made(p->sink.arg, r->h.pid, r->h.tid, r->h.time_ns, node, 0, 0);
		return;
	}
	uint64_t token = ++p->tokens;
	p->st.node_sites++;
	p->sink.node_made(p->sink.arg, r->h.pid, r->h.tid, r->h.time_ns, node, r->h.api, token);
	site_capture(p, r, token, 1);
}

/* A node from a known making site (or one whose stack was not taken). */
static void on_node_seen(struct xpu_gpu_probes *p, const struct xpu_gpu_node_seen *r)
{
	if (!p->sink.node_made || !r->node) {
		p->st.bad++;
		return;
	}
	p->st.nodes++;
	p->sink.node_made(p->sink.arg, r->pid, r->tid, r->time_ns, r->node, r->key, 0);
}

static int probe_at(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr, uint32_t waiter);
static int still_inside(uint32_t pid, uint32_t tid, uint64_t entry_sp, uint64_t addr);

/* The engine began running a node: its end is seen where the call returns
 * to, probed the first time a run returns there (so that run is blind). */
static void on_run(struct xpu_gpu_probes *p, const struct xpu_gpu_node_run *r)
{
	if (!p->sink.node_run || !r->node) {
		p->st.bad++;
		return;
	}
	const struct looked *l = looked_find(p, r->pid, r->ret);
	int seen = l ? l->on : 0;
	if (!l) {
		int rc = probe_at(p, r->pid, r->ret, XPU_GPU_RUN_WAITER);
		looked_add(p, r->pid, r->ret, rc >= 0);
		seen = rc == 1 || (rc == 0 && still_inside(r->pid, r->tid, r->sp, r->ret));
	}
	p->st.runs++;
	p->st.runs_blind += !seen;
	p->sink.node_run(p->sink.arg, r->pid, r->tid, r->time_ns, r->sp, r->node, !seen);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct xpu_gpu_probes *p = ctx;
	uint32_t type;
	if (size < sizeof(type))
		goto bad;
	memcpy(&type, data, sizeof(type));
	if (type == XPU_GPU_REC_SITE && size >= sizeof(struct xpu_gpu_site))
		on_site(p, data, 0);
	else if (type == XPU_GPU_REC_WAIT && size >= sizeof(struct xpu_gpu_site))
		on_wait(p, data);
	else if (type == XPU_GPU_REC_WAIT_END && size >= sizeof(struct xpu_gpu_wait_end))
		on_wait_end(p, data);
	else if (type == XPU_GPU_REC_NODE && size >= sizeof(struct xpu_gpu_site))
		on_node(p, data);
	else if (type == XPU_GPU_REC_NODE_SEEN && size >= sizeof(struct xpu_gpu_node_seen))
		on_node_seen(p, data);
	else if (type == XPU_GPU_REC_RUN && size >= sizeof(struct xpu_gpu_node_run))
		on_run(p, data);
	else if (type == XPU_GPU_REC_LAUNCH_SITE && size >= sizeof(struct xpu_gpu_launch_site))
		on_launch_site(p, data);
	else if (type == XPU_GPU_REC_MAPPED && size >= sizeof(struct xpu_gpu_mapped))
		on_mapped(p, data);
	else
		goto bad;
	return 0;
bad:
	p->st.bad++;
	return 0;
}

static int keep(struct xpu_gpu_probes *p, struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (p->nlinks == MAX_LINKS) {
		bpf_link__destroy(l);
		return -ENOSPC;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

/* Runs the iterator over every process's mappings once: each CUDA file
 * already mapped is reported through the ring like a new mapping. */
static int report_mapped_now(struct xpu_gpu_probes *p)
{
	struct bpf_link *l = bpf_program__attach_iter(p->skel->progs.gpu_maps, NULL);
	char buf[64];
	int fd, err = 0;
	if (!l)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0)
		err = -errno;
	while (fd >= 0 && (err = (int)read(fd, buf, sizeof(buf))) > 0)
		;
	if (err < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	return err;
}

/* CUDA files mapped from now on are reported by the mapping hook, those
 * mapped already by one pass of the iterator (after the hook is on, so none
 * falls between the two). */
static void watch_mappings(struct xpu_gpu_probes *p)
{
	int err = keep(p, bpf_program__attach(p->skel->progs.gpu_mmap));
	if (err < 0)
		xpu_warn("cannot watch for CUDA libraries loaded from now on (tp_btf/mmap_lock_acquire_returned): %s",
			 xpu_sys_bpf_hint(err));
	else
		p->st.watching = 1;
	uint64_t t = xpu_now_mono();
	err = report_mapped_now(p);
	if (err < 0)
		xpu_warn("cannot look for CUDA libraries loaded already (task_vma iterator): %s",
			 xpu_sys_bpf_hint(err));
	else
		xpu_debug("looked for CUDA libraries in every process's mappings in %.1f ms",
			  (double)(xpu_now_mono() - t) / 1e6);
}

/* launch_only: 2 loads the launch probe as a uprobe_multi program (Linux
 * 6.6), 1 as a plain uprobe, 0 not at all. */
static int open_load(struct xpu_gpu_probes *p, int launch_only)
{
	gpu_bpf__destroy(p->skel);
	p->skel = gpu_bpf__open();
	if (!p->skel)
		return -errno;
	bpf_program__set_autoload(p->skel->progs.gpu_launch, launch_only > 0);
	bpf_program__set_autoload(p->skel->progs.gpu_mmap, launch_only > 0);
	bpf_program__set_autoload(p->skel->progs.gpu_maps, launch_only > 0);
	bpf_program__set_autoload(p->skel->progs.gpu_own, !p->no_own);
	if (launch_only == 2)
		bpf_program__set_expected_attach_type(p->skel->progs.gpu_launch,
						      (enum bpf_attach_type)XPU_BPF_TRACE_UPROBE_MULTI);
	return gpu_bpf__load(p->skel);
}

/* The launch-only programs need Linux 5.17 (bpf_find_vma, the task_vma
 * iterator, BTF tracepoints), and 6.6 to be turned on and off cheaply
 * (uprobe_multi links); where they do not load, the site probe of
 * injected processes still does. */
static int load_launch(struct xpu_gpu_probes *p)
{
	int err = xpu_uprobe_multi_allowed() ? open_load(p, 2) : -EOPNOTSUPP;
	if (err == 0) {
		p->multi = 1;
		return 0;
	}
	err = open_load(p, 1);
	if (err == 0)
		return 0;
	if (open_load(p, 0) < 0)
		return err;
	xpu_warn("processes without the xputop library will not be seen: the launch-only probes did not "
		 "load (%s)", xpu_sys_bpf_hint(err));
	p->st.no_launch_only = 1;
	return 0;
}

/* The own-time sampler (gpu_own.h) is a perf_event program reading the
 * task's user registers (Linux 5.15): where it does not load, the rest
 * loads without it and the GPU model scales slices by time alone. */
static int load(struct xpu_gpu_probes *p)
{
	int err = load_launch(p);
	if (err == 0 || p->no_own)
		return err;
	p->no_own = 1;
	if (load_launch(p) < 0)
		return err;
	xpu_warn("launching threads' own CPU time will not be sampled: its BPF program did not load (%s)",
		 xpu_sys_bpf_hint(err));
	return 0;
}

struct xpu_gpu_probes *xpu_gpu_probes_load(struct xpu_symbolizer *sym, struct xpu_dict *d,
					   struct xpu_service *svc)
{
	struct xpu_gpu_probes *p = calloc(1, sizeof(*p));
	int err;
	if (!p)
		return NULL;
	p->sym = sym;
	p->dict = d;
	p->svc = svc;
	if (!(p->unwinder = xpu_unwinder_new())) {
		free(p);
		return NULL;
	}
	err = load(p);
	if (err) {
		xpu_err("cannot load the GPU probes: %s", xpu_sys_bpf_hint(err));
		goto fail;
	}
	p->ring = ring_buffer__new(bpf_map__fd(p->skel->maps.gpu_events), on_record, p, NULL);
	if (!p->ring) {
		xpu_err("cannot set up the GPU probe ring buffer: %s", xpu_sys_bpf_hint(errno));
		goto fail;
	}
	return p;
fail:
	xpu_gpu_probes_free(p);
	return NULL;
}

/* The dictionary's strings are taken here, not at the load: a load kept
 * ready for a takeover may wait a long time, and nothing marks them meanwhile. */
int xpu_gpu_probes_start(struct xpu_gpu_probes *p, const struct xpu_gpu_probe_sink *sink)
{
	struct xpu_dict *d = p->dict;
	p->sink = *sink;
	p->began = xpu_now_mono();
	for (size_t i = 0; i < NRUNTIME; i++)
		p->api_str[i] = xpu_dict_cstr(d, runtime_fns[i]);
	for (size_t i = 0; i < NDRIVER; i++)
		p->api_str[NRUNTIME + i] = xpu_dict_cstr(d, driver_fns[i]);
	p->launches = xpu_gpu_launches_new(d, bpf_map__fd(p->skel->maps.launch_counts),
					   bpf_map__fd(p->skel->maps.proc_sites));
	if (!p->launches)
		return -1;
	p->no_stack = xpu_dict_frame(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[stack not captured]"), 0);
	if (!p->st.no_launch_only) {
		if (!(p->lp = xpu_launch_probes_new(p->skel->progs.gpu_launch, p->multi,
							   &p->skel->bss->probes_state,
							   bpf_map__fd(p->skel->maps.probe_hits), &p->skel->bss->calib_pid,
							   (volatile uint64_t *)&p->skel->bss->calib_hits)))
			return -1;
		watch_mappings(p);
	}
	return 0;
}

struct xpu_gpu_probes *xpu_gpu_probes_new(struct xpu_symbolizer *sym, struct xpu_dict *d,
					  struct xpu_service *svc, const struct xpu_gpu_probe_sink *sink)
{
	struct xpu_gpu_probes *p = xpu_gpu_probes_load(sym, d, svc);
	if (p && xpu_gpu_probes_start(p, sink) < 0) {
		xpu_gpu_probes_free(p);
		return NULL;
	}
	return p;
}

void xpu_gpu_probes_free(struct xpu_gpu_probes *p)
{
	if (!p)
		return;
	xpu_launch_probes_free(p->lp);
	free(p->probed);
	free(p->spare);
	for (uint32_t i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	xpu_gpu_launches_free(p->launches);
	ring_buffer__free(p->ring);
	gpu_bpf__destroy(p->skel);
	xpu_unwinder_free(p->unwinder);
	free(p);
}

int xpu_gpu_probes_fd(struct xpu_gpu_probes *p)
{
	return ring_buffer__epoll_fd(p->ring);
}

int xpu_gpu_probes_drain(struct xpu_gpu_probes *p)
{
	int n = ring_buffer__consume(p->ring);
	return n == -EINTR ? 0 : n;
}

static int known(const struct file_id *v, uint32_t n, struct file_id id)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].dev == id.dev && v[i].ino == id.ino)
			return 1;
	return 0;
}

static int attach(struct xpu_gpu_probes *p, struct bpf_program *prog, const char *path,
		  const char *fn, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = fn, .bpf_cookie = cookie);
	if (p->nlinks == MAX_LINKS)
		return -ENOSPC;
	return keep(p, bpf_program__attach_uprobe_opts(prog, -1, path, 0, &o));
}

/* The file as this process sees it, through its own root (containers). */
static void proc_path(char *buf, size_t size, uint32_t pid, const char *path)
{
	snprintf(buf, size, "/proc/%u/root%s", pid, path);
}

void xpu_gpu_probes_nodes(struct xpu_gpu_probes *p, const struct xpu_gpu_nodes *n)
{
	p->nodes = *n;
}

void xpu_gpu_probes_waiters(struct xpu_gpu_probes *p, const struct xpu_gpu_waiter *w, int n)
{
	p->nwaiters = n < XPU_GPU_MAX_WAITERS ? n : XPU_GPU_MAX_WAITERS;
	memcpy(p->waiters, w, (size_t)p->nwaiters * sizeof(*w));
}

/* The (process, return address) pairs looked up, and whether a probe is on
 * there: the older half is forgotten when full. */
static struct looked *looked_find(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr)
{
	for (uint32_t i = 0; i < p->nlooked; i++)
		if (p->looked[i].pid == pid && p->looked[i].addr == addr)
			return &p->looked[i];
	return NULL;
}

static void looked_add(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr, int on)
{
	if (p->nlooked == MAX_RETURNS) {
		p->nlooked -= MAX_RETURNS / 2;
		memmove(p->looked, p->looked + MAX_RETURNS / 2, p->nlooked * sizeof(p->looked[0]));
	}
	p->looked[p->nlooked++] = (struct looked){ pid, on, addr };
}

static int return_known(const struct xpu_gpu_probes *p, struct ret_site r)
{
	for (uint32_t i = 0; i < p->nreturns; i++)
		if (p->returns[i].file.dev == r.file.dev && p->returns[i].file.ino == r.file.ino &&
		    p->returns[i].off == r.off)
			return 1;
	return 0;
}

/* Probes the instruction at addr of pid's maps.  Returns 1 when a probe was
 * on there already, 0 when it is now, -1 when it cannot be. */
static int probe_at(struct xpu_gpu_probes *p, uint32_t pid, uint64_t addr, uint32_t waiter)
{
	struct xpu_maps maps;
	int rc = -1;
	if (xpu_maps_read(pid, &maps, NULL) < 0)
		return -1;
	for (size_t i = 0; i < maps.n; i++) {
		const struct xpu_map *m = &maps.v[i];
		if (addr < m->start || addr >= m->end)
			continue;
		struct ret_site rs = { { ((uint64_t)m->dev_major << 32) | m->dev_minor, m->inode },
				       addr - m->start + m->pgoff };
		char path[4200];
		if (m->perms[2] != 'x' || !*m->path)
			break;
		if (return_known(p, rs)) {
			rc = 1;
			break;
		}
		if (p->nreturns == MAX_RETURNS)
			break;
		proc_path(path, sizeof(path), pid, m->path);
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = waiter);
		int err = keep(p, bpf_program__attach_uprobe_opts(p->skel->progs.gpu_wait_end, -1, path, rs.off, &o));
		if (err < 0) {
			xpu_warn("cannot probe where a waiter returns to (%s+0x%llx): %s; launches made while it "
				 "waits from there are not stitched", m->path, (unsigned long long)rs.off,
				 xpu_sys_bpf_hint(err));
			break;
		}
		p->returns[p->nreturns++] = rs;
		rc = 0;
		break;
	}
	xpu_maps_free(&maps);
	return rc;
}

/* Whether thread tid is still inside the call whose return address addr
 * lies at entry_sp: stopped with its stack pointer below entry_sp (the
 * kernel's /proc/PID/task/TID/syscall reads "NR ARGS... SP PC", or "-1 SP
 * PC" outside a system call; "running" says nothing, and is read again
 * twice) and the return address still in its slot (a return and a call
 * from elsewhere would have written over it).  Called once the probe on
 * the return is on: such a wait's end will be seen. */
static int still_inside(uint32_t pid, uint32_t tid, uint64_t entry_sp, uint64_t addr)
{
	char path[64], *text = NULL;
	size_t len;
	uint64_t sp = 0, slot = 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	for (int tries = 0; tries < 3 && !sp; tries++) {
		if (tries)
			usleep(100);
		if (xpu_read_path(path, 512, &text, &len) < 0)
			return 0;
		char *last = strrchr(xpu_strip(text), ' '), *prev = NULL;
		if (last && last > text) {
			*last = '\0';
			prev = strrchr(text, ' ');
		}
		if (prev && strncmp(text, "running", 7) != 0)
			sp = strtoull(prev + 1, NULL, 16);
		free(text);
	}
	struct iovec local = { &slot, sizeof(slot) }, remote = { (void *)(uintptr_t)entry_sp, sizeof(slot) };
	return sp && sp < entry_sp && process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == sizeof(slot) &&
	       slot == addr;
}

/* The end of a wait is seen where the waiter's call returns to: the return
 * address at the entry's stack pointer, an instruction's start, probed the
 * first time a call returns there (by file and offset, so for every
 * process).  Returns 1 when its end will be seen: the probe was on before
 * this wait began, or is on now and the thread still inside the wait; a
 * wait whose end may go unseen (the probe came too late, or cannot be) is
 * not stitched under (gpu_waits.h). */
static int probe_return(struct xpu_gpu_probes *p, const struct xpu_gpu_site *r)
{
	uint64_t addr;
	if (r->h.copied < sizeof(addr) || r->h.copied > XPU_GPU_STACK_COPY)
		return 0;
	memcpy(&addr, r->stack, sizeof(addr));
	const struct looked *l = looked_find(p, r->h.pid, addr);
	if (l)
		return l->on;
	int rc = probe_at(p, r->h.pid, addr, r->h.api);
	looked_add(p, r->h.pid, addr, rc >= 0);
	return rc == 1 || (rc == 0 && still_inside(r->h.pid, r->h.tid, r->regs[7], addr));
}

/* An entry probe on each function of waiter i in the file (its return is
 * probed where its calls return to, as they come: probe_return()); returns
 * how many functions. */
static int probe_waiter(struct xpu_gpu_probes *p, const char *path, const char *shown, int i)
{
	const struct xpu_gpu_waiter *w = &p->waiters[i];
	uint64_t offs[8];
	int n = xpu_func_offsets_prefix(path, w->sym, !w->prefix, offs, 8), done = 0;
	for (int k = 0; k < n; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, in, .bpf_cookie = (uint64_t)i);
		int err = keep(p, bpf_program__attach_uprobe_opts(p->skel->progs.gpu_wait, -1, path, offs[k], &in));
		if (err < 0) {
			xpu_warn("cannot probe the waiter %s in %s: %s", w->sym, shown, xpu_sys_bpf_hint(err));
			break;
		}
		done++;
	}
	if (n > 0)
		xpu_debug("waiter %s%s: %d function%s probed in %s", w->sym, w->prefix ? "*" : "", done,
			  done == 1 ? "" : "s", shown);
	return done;
}

/* The node probe f (create or run) if the file is f's; returns how many
 * functions it went on. */
static int probe_node_fn(struct xpu_gpu_probes *p, const char *path, const char *shown,
			 const struct xpu_gpu_node_fn *f, struct bpf_program *prog)
{
	uint64_t off;
	if (!p->nodes.on || strncmp(xpu_base_name(shown), f->file, strlen(f->file)) != 0 ||
	    xpu_func_offsets_prefix(path, f->sym, 1, &off, 1) != 1)
		return 0;
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = (uint64_t)f->arg | (f->deref ? XPU_GPU_NODE_DEREF : 0));
	int err = keep(p, bpf_program__attach_uprobe_opts(prog, -1, path, off, &o));
	if (err < 0) {
		xpu_warn("cannot probe %s in %s: %s; backward kernels are not shown under their forward call",
			 f->sym, shown, xpu_sys_bpf_hint(err));
		return 0;
	}
	return 1;
}

static int node_file(const struct xpu_gpu_probes *p, const char *b)
{
	return p->nodes.on && (strncmp(b, p->nodes.create.file, strlen(p->nodes.create.file)) == 0 ||
			       strncmp(b, p->nodes.run.file, strlen(p->nodes.run.file)) == 0);
}

/* The waiter and node functions of the files pid maps with code, each file
 * once. */
static void probe_waiters(struct xpu_gpu_probes *p, uint32_t pid, const struct xpu_maps *maps)
{
	for (size_t i = 0; i < maps->n && (p->nwaiters || p->nodes.on); i++) {
		const struct xpu_map *m = &maps->v[i];
		struct file_id id = { ((uint64_t)m->dev_major << 32) | m->dev_minor, m->inode };
		const char *b = xpu_base_name(m->path);
		int match = node_file(p, b);
		for (int k = 0; k < p->nwaiters; k++)
			match |= strncmp(b, p->waiters[k].file, strlen(p->waiters[k].file)) == 0;
		if (!match || m->perms[2] != 'x' || known(p->waited, p->nwaited, id) || p->nwaited == MAX_FILES)
			continue;
		p->waited[p->nwaited++] = id;
		char path[4200];
		proc_path(path, sizeof(path), pid, m->path);
		for (int k = 0; k < p->nwaiters; k++)
			if (strncmp(b, p->waiters[k].file, strlen(p->waiters[k].file)) == 0)
				p->st.waiter_fns += (uint32_t)probe_waiter(p, path, m->path, k);
		p->st.node_fns += (uint32_t)probe_node_fn(p, path, m->path, &p->nodes.create, p->skel->progs.gpu_node);
		p->st.node_fns += (uint32_t)probe_node_fn(p, path, m->path, &p->nodes.run, p->skel->progs.gpu_node_run);
	}
}

int xpu_gpu_probes_injected(struct xpu_gpu_probes *p, uint32_t pid)
{
	struct xpu_maps maps;
	uint8_t one = 1;
	int rc = -1;
	bpf_map__update_elem(p->skel->maps.injected, &pid, sizeof(pid), &one, 1, BPF_ANY);
	if (p->lp && p->sink.cpu && p->nlt < THREAD_PROCS && xpu_launch_probes_watch(p->lp, pid) == 0) {
		uint32_t i = 0;
		while (i < p->nlt && p->lt[i].pid != pid)
			i++;
		p->lt[i] = (struct lthreads){ .pid = pid };
		p->nlt += i == p->nlt;
		if (p->last_pid == pid)
			p->last_pid = p->last_tid = 0;
	} else if (p->lp && p->sink.cpu) {
		xpu_debug("GPU process %u: its CPU time cannot be kept: the probes' count scales by time", pid);
	}
	if (xpu_maps_read(pid, &maps, NULL) < 0) {
		xpu_warn("cannot read the maps of GPU process %u: its launch stacks will be missing", pid);
		return -1;
	}
	for (size_t i = 0; i < maps.n; i++) {
		const struct xpu_map *m = &maps.v[i];
		struct file_id id = { ((uint64_t)m->dev_major << 32) | m->dev_minor, m->inode };
		if (!strstr(xpu_base_name(m->path), "libxputop_inject") || m->perms[2] != 'x')
			continue;
		if (known(p->marker, p->nmarker, id)) {
			rc = 0;
			break;
		}
		char path[4200];
		proc_path(path, sizeof(path), pid, m->path);
		int err = attach(p, p->skel->progs.gpu_site, path, "xputop_launch_site", 0);
		if (err < 0) {
			xpu_err("cannot probe %s:xputop_launch_site: %s", m->path, xpu_sys_bpf_hint(err));
			break;
		}
		if (p->nmarker < MAX_FILES)
			p->marker[p->nmarker++] = id;
		p->st.marker_files = p->nmarker;
		rc = 0;
		break;
	}
	probe_waiters(p, pid, &maps);
	xpu_maps_free(&maps);
	if (rc < 0)
		xpu_warn("GPU process %u: no libxputop_inject library with code in its maps, so its launch "
			 "stacks cannot be captured", pid);
	return rc;
}

void xpu_gpu_probes_thread(struct xpu_gpu_probes *p, uint32_t pid, uint32_t tid)
{
	if (!p || (pid == p->last_pid && tid == p->last_tid))
		return;
	struct lthreads *t = NULL;
	for (uint32_t i = 0; i < p->nlt && !t; i++)
		if (p->lt[i].pid == pid)
			t = &p->lt[i];
	if (!t)
		return;		/* not watched */
	p->last_pid = pid;
	p->last_tid = tid;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->tid[i] == tid)
			return;
	if (t->n == XPU_GPU_CPU_THREADS) {
		p->st.cpu_over++;
		return;
	}
	t->tid[t->n++] = tid;
	xpu_launch_probes_thread(p->lp, pid, tid);
}

void xpu_gpu_probes_left(struct xpu_gpu_probes *p, uint32_t pid)
{
	for (uint32_t i = 0; i < p->nlt; i++)
		if (p->lt[i].pid == pid) {
			p->lt[i] = p->lt[--p->nlt];
			break;
		}
	if (p->last_pid == pid)
		p->last_pid = p->last_tid = 0;
	bpf_map__delete_elem(p->skel->maps.injected, &pid, sizeof(pid), 0);
	bpf_map__delete_elem(p->skel->maps.probed_launches, &pid, sizeof(pid), 0);
	if (p->lp)
		xpu_launch_probes_unwatch(p->lp, pid);
}

/* Probes every launch function the file exports; missing ones are normal
 * (older or newer CUDA versions).  The probes go on and off with the
 * tracing mode (launch_probes.h). */
static void probe_runtime_file(struct xpu_gpu_probes *p, const char *path, int driver)
{
	const char *const *fns = driver ? driver_fns : runtime_fns;
	size_t n = driver ? NDRIVER : NRUNTIME;
	uint64_t offs[NRUNTIME > NDRIVER ? NRUNTIME : NDRIVER];
	uint64_t t = xpu_now_mono();
	int found = xpu_func_offsets(path, fns, n, offs);
	if (found > 0)		/* counted where they jump to */
		found -= xpu_func_drop_jumps(path, offs, n);
	if (found <= 0 || !p->lp || xpu_launch_probes_add(p->lp, path, offs, n, driver ? NRUNTIME : 0) < 0) {
		xpu_warn("no launch function of %s could be probed%s", path, found < 0 ? ": not an ELF file" : "");
		return;
	}
	xpu_debug("found %d launch functions of %s in %.1f ms", found, path, (double)(xpu_now_mono() - t) / 1e6);
}

/* Probes the CUDA runtime and driver files pid has mapped with code (once
 * per file).  Returns how many such mappings it has, or -1 when its maps
 * cannot be read (it exited). */
static int scan(struct xpu_gpu_probes *p, uint32_t pid)
{
	struct xpu_maps maps;
	int found = 0;
	if (xpu_maps_read(pid, &maps, NULL) < 0)
		return -1;
	for (size_t i = 0; i < maps.n; i++) {
		const struct xpu_map *m = &maps.v[i];
		const char *b = xpu_base_name(m->path);
		int runtime = strncmp(b, "libcudart.so", 12) == 0;
		int driver = strncmp(b, "libcuda.so", 10) == 0;
		struct file_id id = { ((uint64_t)m->dev_major << 32) | m->dev_minor, m->inode };
		if ((!runtime && !driver) || m->perms[2] != 'x')
			continue;
		found++;
		if (known(p->runtime, p->nruntime, id) || p->nruntime == MAX_FILES)
			continue;
		p->runtime[p->nruntime++] = id;
		char path[4200];
		proc_path(path, sizeof(path), pid, m->path);
		probe_runtime_file(p, path, driver);
	}
	xpu_maps_free(&maps);
	return found;
}

/* Reads the maps of the processes that mapped a CUDA file, within a time
 * budget.  One whose maps do not show it yet is read again at the next
 * refreshes; given up on, the file is forgotten in BPF so that its next
 * mapping reports it again. */
static void discover(struct xpu_gpu_probes *p, uint64_t now)
{
	uint32_t kept = 0, i = 0;
	for (; i < p->nqueue && xpu_now_mono() - now < DISCOVER_BUDGET_NS; i++) {
		struct mapped *m = &p->queue[i];
		int found = scan(p, m->pid);
		if (found == 0 && ++m->tries < DISCOVER_TRIES) {
			p->queue[kept++] = *m;
		} else if (found <= 0) {
			p->st.files_missed++;
			forget_file(p, &m->file);
		}
	}
	memmove(p->queue + kept, p->queue + i, (p->nqueue - i) * sizeof(p->queue[0]));
	p->nqueue = kept + (p->nqueue - i);
}

/* Where a launch-only process born at `born` is watched from: its start,
 * or where the first CUDA file was reported if that came later.  Before
 * it no process had a file the probes could be in (a Python program
 * imports torch for seconds first), and no launch to count; from the
 * probes' start instead, that time was estimated at the later slices' pace
 * (tests/bpf/gpu.sh's launcher exec'd 2 s after its start: +51%).  Not
 * from their first span: the launches between the file's mapping and it
 * are the process's too (-12 to -15% for a launcher that maps the first
 * file, started with xputop). */
static uint64_t watched_from(struct xpu_gpu_probes *p, uint64_t born)
{
	uint64_t from = p->files_from > p->began ? p->files_from : p->began;
	return born > from ? born : from;
}

/* Counted launches go to the sink; those counted without a stack get one
 * that says so, ending in their API. */
/* A launch-only process's launches, and the time their traps took from it
 * (by what a launch-only trap costs, measured): a nested driver launch's
 * trap comes as time alone (the probed sink's, no launch). */
static void on_counted(void *arg, const struct xpu_gpu_launch_key *k, uint32_t comm, uint32_t stack,
		       uint64_t calls, int nested, uint64_t born)
{
	struct xpu_gpu_probes *p = arg;
	uint64_t trap_ns = calls * (p->lp ? xpu_launch_probes_trap_ns(p->lp, 1) : 0);
	if (k->api >= NRUNTIME + NDRIVER) {
		p->st.bad++;
		return;
	}
	if (nested) {
		if (p->sink.probed && trap_ns)
			p->sink.probed(p->sink.arg, k->pid, xpu_now_mono(), 0, trap_ns, 0);
		return;
	}
	uint32_t api = p->api_str[k->api];
	if (!stack) {
		uint32_t frames[2] = { p->no_stack, xpu_dict_frame(p->dict, XPU_FRAME_LAUNCH, api, 0) };
		stack = xpu_dict_stack(p->dict, frames, 2);
	}
	p->st.launches += calls;
	if (born && p->sink.started)
		p->sink.started(p->sink.arg, k->pid, watched_from(p, born));
	p->sink.launch(p->sink.arg, k->pid, k->tid, xpu_now_mono(), comm, api, stack, calls, trap_ns);
}

struct cpu_at { struct xpu_gpu_probes *p; uint64_t now; };

static void on_cpu(void *arg, uint32_t pid, const struct xpu_launch_probes_cpu *c)
{
	struct cpu_at *a = arg;
	a->p->sink.cpu(a->p->sink.arg, pid, a->now, c->slice_ns, c->whole_ns, c->all_ns);
}

static void on_span(void *arg, uint64_t start, uint64_t end, int kind)
{
	struct xpu_gpu_probes *p = arg;
	if (p->sink.span)
		p->sink.span(p->sink.arg, start, end, kind);
}

static int probed_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct probed *)a)->pid, y = ((const struct probed *)b)->pid;
	return x < y ? -1 : x > y;
}

/* Hands on what the probes counted of each process since the last refresh:
 * an injected one's in sampled slices, and any one's while they were on
 * throughout (a count that went back, a pid used again, starts from 0).  A
 * process that is not injected and has gone leaves the map once its last
 * counts are handed on (an injected one's entry goes when it leaves). */
static void collect_probed(struct xpu_gpu_probes *p, uint64_t now)
{
	int fd = bpf_map__fd(p->skel->maps.probed_launches);
	uint32_t key, next, n = 0;
	if (!p->sink.probed)
		return;
	if (!p->spare && !(p->spare = malloc(MAX_PROBED * sizeof(*p->spare))))
		return;
	for (void *prev = NULL; n < MAX_PROBED && bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		struct xpu_gpu_probed c;
		if (bpf_map_lookup_elem(fd, &next, &c) == 0)
			p->spare[n++] = (struct probed){ next, c };
		key = next;
	}
	qsort(p->spare, n, sizeof(*p->spare), probed_cmp);
	/* The traps' time: their count by what one costs (0: not measured). */
	uint64_t trap_ns = p->lp ? xpu_launch_probes_trap_ns(p->lp, 0) : 0;
	uint64_t trap_lo_ns = p->lp ? xpu_launch_probes_trap_ns(p->lp, 1) : 0;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct probed *was = p->nprobed ? bsearch(&p->spare[i], p->probed, p->nprobed,
								 sizeof(*p->probed), probed_cmp) : NULL;
		const struct xpu_gpu_probed *c = &p->spare[i].n;
		uint32_t pid = p->spare[i].pid;
		int again = was && was->n.launches <= c->launches && was->n.traps <= c->traps &&
			    was->n.whole_launches <= c->whole_launches && was->n.whole_traps <= c->whole_traps;
		uint64_t d = again ? c->launches - was->n.launches : c->launches;
		uint64_t t = again ? c->traps - was->n.traps : c->traps;
		uint64_t wd = again ? c->whole_launches - was->n.whole_launches : c->whole_launches;
		uint64_t wt = again ? c->whole_traps - was->n.whole_traps : c->whole_traps;
		int injected = bpf_map__lookup_elem(p->skel->maps.injected, &pid, sizeof(pid), &(uint8_t){ 0 }, 1,
						    0) == 0;
		if (d || t)
			p->sink.probed(p->sink.arg, pid, now, d, t * trap_ns, 0);
		if (wd || wt)
			p->sink.probed(p->sink.arg, pid, now, wd, wt * (injected ? trap_ns : trap_lo_ns),
				       injected ? 1 : 2);
		if (!injected && !d && !t && !wd && !wt && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			bpf_map_delete_elem(fd, &pid);
			continue;
		}
		p->spare[kept++] = p->spare[i];
	}
	struct probed *v = p->probed;
	p->probed = p->spare;
	p->nprobed = kept;
	p->spare = v;
}

void xpu_gpu_probes_tick(struct xpu_gpu_probes *p, uint64_t now)
{
	discover(p, now);
	if (xpu_gpu_launches_collect(p->launches, now, on_counted, p) < 0)
		xpu_debug("cannot read the launch counts: %s", strerror(errno));
	collect_probed(p, now);
	if (p->lp && p->sink.cpu)
		xpu_launch_probes_cpu(p->lp, on_cpu, &(struct cpu_at){ p, now });
	if (p->lp)
		xpu_launch_probes_spans(p->lp, now, on_span, p);
}

/* The probes' slices are XPU_GPU_PROBE_SLICE_X times the library's, at
 * most a quarter of the period (never shorter than the library's): the
 * probes' count is what an injected process's launches are estimated from,
 * and a trap costs a launch a sixth of what CUPTI's slice does (0.85
 * against 5 us on an H200).  Their cost is linear in their share of the
 * time: on back-to-back empty kernels, launch-only, 0.022 us a launch of
 * system time at 2% (10 ms in 500), 0.086 at 10% (5x); at 3x, 6%, about
 * 0.05.  One run's estimates of training and decode spread by SD 2.7% at
 * 10% where they did by 5-7% at 2% (bench/RESULTS.md, ninth session). */
uint32_t xpu_gpu_probes_slice_ms(uint32_t slice_ms, uint32_t period_ms)
{
	uint64_t ms = (uint64_t)slice_ms * XPU_GPU_PROBE_SLICE_X;
	if (ms > period_ms / 4)
		ms = period_ms / 4;
	return ms > slice_ms ? (uint32_t)ms : slice_ms;
}

/* The probes stay on throughout while their traps cost at most this much a
 * second: XPUTOP_PROBES_WHOLE_US, XPU_GPU_PROBE_WHOLE_US by default (0:
 * never). */
static uint64_t whole_budget_ns(void)
{
	return xpu_env_u64("XPUTOP_PROBES_WHOLE_US", XPU_GPU_PROBE_WHOLE_US, 1000000) * 1000;
}

void xpu_gpu_probes_mode(struct xpu_gpu_probes *p, int exact, uint32_t slice_ms, uint32_t period_ms)
{
	if (p->lp)
		xpu_launch_probes_mode(p->lp, exact, xpu_gpu_probes_slice_ms(slice_ms, period_ms), period_ms,
				       whole_budget_ns());
}

void xpu_gpu_probes_mark(const struct xpu_gpu_probes *p, struct xpu_dict *d)
{
	xpu_gpu_launches_mark(p->launches, d);
}

int xpu_gpu_probes_own_parts(struct xpu_gpu_probes *p, struct bpf_program **prog, int *config_fd,
			     int *counts_fd)
{
	if (p->no_own)
		return -1;
	*prog = p->skel->progs.gpu_own;
	*config_fd = bpf_map__fd(p->skel->maps.own_config);
	*counts_fd = bpf_map__fd(p->skel->maps.own_counts);
	return 0;
}

void xpu_gpu_probes_stats(const struct xpu_gpu_probes *p, struct xpu_gpu_probe_stats *st)
{
	struct xpu_gpu_launches_stats ls;
	xpu_gpu_launches_stats(p->launches, &ls);
	*st = p->st;
	if (p->lp) {
		struct xpu_launch_probes_stats l;
		xpu_launch_probes_stats(p->lp, &l);
		st->runtime_files = l.files;
		st->launch_slices = l.slices;
		st->launch_wholes = l.wholes;
		st->launch_whole_cuts = l.whole_cuts;
		st->launch_whole_ns = l.whole_ns;
		st->trap_ns = l.trap_ns;
		st->trap_lo_ns = l.trap_lo_ns;
		st->trap_measured = l.trap_measured;
		st->trap_measure_ns = l.trap_measure_ns;
		st->launch_probes_on = 1;
		st->launch_attach_ns = l.attach_ns;
		st->launch_detach_ns = l.detach_ns;
		st->launch_probe_failed = l.failed;
		st->cpu_threads = l.cpu_threads;
		st->cpu_refused = l.cpu_refused;
		st->cpu_failed = l.cpu_failed;
		st->cpu_err = l.cpu_err;
	}
	st->lost_stacks = p->skel->bss->lost_stacks + ls.stacks_lost;
	st->dropped_nodes = p->skel->bss->dropped_nodes;
	st->node_sites_lost = p->skel->bss->node_sites_lost;
	st->dropped = p->skel->bss->dropped_sites + p->skel->bss->dropped_launches + p->skel->bss->dropped_waits +
		      p->skel->bss->dropped_files + p->st.files_dropped;
}
