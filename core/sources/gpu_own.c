/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_own.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "err.h"
#include "func_offsets.h"
#include "gpu.h"
#include "service.h"
#include "symfiles.h"
#include "sys.h"

/* A process's ranges are read again at most this often; a new thread asks
 * for it sooner than RESCAN_NS (libcupti is loaded at the first slice,
 * after the first launches). */
#define RESCAN_MIN_NS 1000000000ULL
#define RESCAN_NS 10000000000ULL
/* Reading maps and ELF files and opening events per tick stops after this
 * long; the rest waits for the next tick. */
#define TICK_BUDGET_NS 10000000ULL

/* The files whose code is CUDA's: the driver, the runtime, CUPTI, the
 * library itself and the driver's helpers.  Tracing's cost lands there. */
static const char *const cuda_files[] = {
	"libcuda.so", "libcudart.so", "libcupti.so", "libxputop_inject", "libnvidia-",
};

/* Code both sides call: neither own time nor CUDA's.  On an H200, CUPTI's
 * slices raised a GPT-2 training thread's time in libc by half per launch
 * (its locks, allocations and copies; bench/slicecpu.c), so counted as own
 * it kept the estimates 12-14% low. */
static const char *const shared_files[] = {
	"libc.so", "ld-linux", "libstdc++.so", "libgcc_s.so", "libm.so", "libpthread.so", "[vdso]",
};

struct thread {
	uint32_t tid;
	struct bpf_link *link;	/* NULL: not opened yet (or refused) */
	int tried;
};

struct scan_job;

struct proc {
	uint32_t pid;
	struct scan_job *job;	/* its scan on the service thread, or NULL */
	int configured;		/* its config and counts are in the maps */
	int no_flag;		/* counted in no_flag already */
	int full;		/* a thread came past XPU_GPU_OWN_THREADS */
	int rescan;		/* a thread came: read the ranges again */
	uint64_t scanned;	/* when its maps were last read */
	uint32_t nthreads, open;
	struct thread t[XPU_GPU_OWN_THREADS];
	struct xpu_gpu_own_config cfg;
};

struct xpu_gpu_own {
	struct bpf_program *prog;
	struct xpu_service *svc;	/* scans run there (NULL: on the caller's thread) */
	int config_fd, counts_fd;
	uint32_t hz;
	struct proc *procs[XPU_GPU_OWN_PROCS];
	uint32_t last_pid, last_tid;	/* the last watch, seen already */
	uint32_t refused_pid;		/* the last process refused for the limit */
	struct xpu_gpu_own_stats st;
};

struct xpu_gpu_own *xpu_gpu_own_new(struct bpf_program *prog, int config_fd, int counts_fd, uint32_t hz,
				    struct xpu_service *svc)
{
	struct xpu_gpu_own *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->prog = prog;
	o->svc = svc;
	o->config_fd = config_fd;
	o->counts_fd = counts_fd;
	o->hz = hz;
	return o;
}

static struct proc *proc_of(const struct xpu_gpu_own *o, uint32_t pid)
{
	for (int i = 0; i < XPU_GPU_OWN_PROCS; i++)
		if (o->procs[i] && o->procs[i]->pid == pid)
			return o->procs[i];
	return NULL;
}

static void close_thread(struct proc *p, uint32_t i)
{
	if (p->t[i].link)
		p->open--;
	bpf_link__destroy(p->t[i].link);
	p->t[i] = p->t[--p->nthreads];
}

/* A process's maps read and its library's flag looked up, and its new
 * threads' perf events opened, on the service thread (a PyTorch process maps
 * thousands of files; the first sampling event of a machine patches the
 * kernel's text: 5-13 ms on the 2-CPU test machine; rule 4).  The result is
 * applied, and the events attached, on the main thread, unless the process
 * went (cancelled). */
struct opened { uint32_t tid; int fd, err, not_own, tried; };

struct scan_job {
	struct xpu_service_job job;
	struct xpu_gpu_own *o;	/* NULL: cancelled */
	struct proc *p;
	uint32_t pid, hz;
	int do_scan;		/* read the maps (else only open events) */
	uint64_t flag;		/* in: the flag known already (0: look it up) */
	int rc;			/* out: 0, or -1 (maps unreadable) */
	int no_flag;		/* out: no flag found */
	uint32_t ranges_over;
	struct xpu_gpu_own_config cfg;
	uint32_t nopen;
	struct opened open[XPU_GPU_OWN_THREADS];	/* in: tids; out: their events */
};

static void drop(struct xpu_gpu_own *o, int slot)
{
	struct proc *p = o->procs[slot];
	if (p->job) {		/* its scan's done() frees the job alone */
		p->job->o = NULL;
		p->job->p = NULL;
	}
	while (p->nthreads)
		close_thread(p, p->nthreads - 1);
	bpf_map_delete_elem(o->config_fd, &p->pid);
	bpf_map_delete_elem(o->counts_fd, &p->pid);
	free(p);
	o->procs[slot] = NULL;
}

void xpu_gpu_own_free(struct xpu_gpu_own *o)
{
	if (!o)
		return;
	for (int i = 0; i < XPU_GPU_OWN_PROCS; i++)
		if (o->procs[i])
			drop(o, i);
	free(o);
}

static struct proc *add_proc(struct xpu_gpu_own *o, uint32_t pid)
{
	int slot = 0;
	while (slot < XPU_GPU_OWN_PROCS && o->procs[slot])
		slot++;
	struct proc *p = slot < XPU_GPU_OWN_PROCS ? calloc(1, sizeof(*p)) : NULL;
	if (!p) {
		if (o->refused_pid != pid)
			o->st.procs_over++;
		o->refused_pid = pid;
		return NULL;
	}
	p->pid = pid;
	o->procs[slot] = p;
	return p;
}

void xpu_gpu_own_watch(struct xpu_gpu_own *o, uint32_t pid, uint32_t tid)
{
	if (!o || !pid || (pid == o->last_pid && tid == o->last_tid))
		return;
	struct proc *p = proc_of(o, pid);
	if (!p && !(p = add_proc(o, pid)))
		return;
	o->last_pid = pid;
	o->last_tid = tid;
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (p->t[i].tid == tid)
			return;
	if (p->nthreads == XPU_GPU_OWN_THREADS) {
		p->full = 1;
		return;
	}
	p->t[p->nthreads++] = (struct thread){ .tid = tid };
	p->rescan = 1;
}

void xpu_gpu_own_forget(struct xpu_gpu_own *o, uint32_t pid)
{
	if (!o)
		return;
	for (int i = 0; i < XPU_GPU_OWN_PROCS; i++)
		if (o->procs[i] && o->procs[i]->pid == pid)
			drop(o, i);
	if (o->last_pid == pid)
		o->last_pid = o->last_tid = 0;
}

static int any_prefix(const char *path, const char *const *v, size_t n)
{
	const char *b = xpu_base_name(path);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(b, v[i], strlen(v[i])))
			return 1;
	return 0;
}

static int cuda_file(const char *path)
{
	return any_prefix(path, cuda_files, sizeof(cuda_files) / sizeof(cuda_files[0]));
}

static int shared_file(const char *path)
{
	return any_prefix(path, shared_files, sizeof(shared_files) / sizeof(shared_files[0]));
}

/* The address of the library's xputop_tracing word: the file is read as the
 * kernel maps it (map_files), or through the process's root, never by a
 * path the process could have chosen for us to read. */
static int find_flag(const struct xpu_maps *maps, uint32_t pid, uint64_t *addr)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct xpu_map *m = &maps->v[i];
		char path[4200];
		uint64_t rel;
		if (m->pgoff || strncmp(xpu_base_name(m->path), "libxputop_inject", 16))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		if (xpu_func_object_offset(path, "xputop_tracing", &rel) < 0) {
			snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path);
			if (xpu_func_object_offset(path, "xputop_tracing", &rel) < 0)
				continue;
		}
		*addr = m->start + rel;
		return 0;
	}
	return -1;
}

/* Reads the process's maps: the flag's address (once) and CUDA's code.
 * Touches nothing but the job. */
static int thread_of(uint32_t pid, uint32_t tid);
static void open_events(struct scan_job *j);

static void scan_work(struct xpu_service_job *job)
{
	struct scan_job *j = (struct scan_job *)job;
	struct xpu_maps maps;
	uint64_t flag;
	j->rc = -1;
	if (!j->do_scan) {
		open_events(j);
		return;
	}
	if (xpu_maps_read(j->pid, &maps, NULL) < 0)
		return;
	j->cfg = (struct xpu_gpu_own_config){ 0 };
	if (j->flag)
		j->cfg.flag = j->flag;
	else if (find_flag(&maps, j->pid, &flag) == 0)
		j->cfg.flag = flag;
	else
		j->no_flag = 1;
	/* CUDA's ranges first, then the shared ones (gpu.h) */
	for (int shared = 0; shared < 2; shared++) {
		for (size_t i = 0; i < maps.n; i++) {
			const struct xpu_map *m = &maps.v[i];
			if (m->perms[2] != 'x' || !(shared ? shared_file(m->path) : cuda_file(m->path)))
				continue;
			if (j->cfg.nranges == XPU_GPU_OWN_RANGES) {
				j->ranges_over++;
				break;
			}
			j->cfg.lo[j->cfg.nranges] = m->start;
			j->cfg.hi[j->cfg.nranges++] = m->end;
		}
		if (!shared)
			j->cfg.ncuda = j->cfg.nranges;
	}
	xpu_maps_free(&maps);
	j->rc = 0;
	if (j->cfg.flag)
		open_events(j);
}

/* A scan's result into the BPF maps (main thread). */
static void scan_apply(struct xpu_gpu_own *o, struct proc *p, const struct scan_job *j)
{
	o->st.ranges_over += j->ranges_over;
	if (j->rc < 0)
		return;
	if (j->no_flag && !p->no_flag) {
		p->no_flag = 1;
		o->st.no_flag++;
		xpu_debug("GPU process %u: no xputop_tracing in a libxputop_inject library in its maps: its "
			  "launching threads' own time is not sampled", p->pid);
	}
	if (!j->cfg.flag || (p->configured && !memcmp(&j->cfg, &p->cfg, sizeof(j->cfg))))
		return;
	if (!p->configured) {
		struct xpu_gpu_own_counts zero = { 0 };
		if (bpf_map_update_elem(o->counts_fd, &p->pid, &zero, BPF_NOEXIST) < 0 && errno != EEXIST)
			return;
	}
	if (bpf_map_update_elem(o->config_fd, &p->pid, &j->cfg, BPF_ANY) < 0)
		return;
	p->cfg = j->cfg;
	p->configured = 1;
}

static void attach_event(struct xpu_gpu_own *o, struct proc *p, const struct opened *e);

static void scan_done(struct xpu_service_job *job)
{
	struct scan_job *j = (struct scan_job *)job;
	if (j->o && j->p) {
		j->p->job = NULL;
		if (job->ran && j->do_scan)
			scan_apply(j->o, j->p, j);
		for (uint32_t i = 0; i < j->nopen; i++) {
			if (!job->ran)
				j->open[i].tried = 0;
			attach_event(j->o, j->p, &j->open[i]);
		}
	} else {
		for (uint32_t i = 0; job->ran && i < j->nopen; i++)
			if (j->open[i].fd >= 0)
				close(j->open[i].fd);
	}
	free(j);
}

/* Starts a job for p: a scan (do_scan) and the events of its threads not
 * tried yet, on the service thread where there is one (done with a later
 * poll), else here.  A full queue tries again next tick. */
static void submit(struct xpu_gpu_own *o, struct proc *p, int do_scan, uint64_t now)
{
	struct scan_job *j = calloc(1, sizeof(*j));
	if (!j)
		return;
	*j = (struct scan_job){ .job = { .work = scan_work, .done = scan_done }, .o = o, .p = p, .pid = p->pid,
				.hz = o->hz, .do_scan = do_scan, .flag = p->cfg.flag };
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (!p->t[i].tried)
			j->open[j->nopen++] = (struct opened){ .tid = p->t[i].tid, .fd = -1 };
	if (o->svc && xpu_service_submit(o->svc, &j->job) < 0) {
		free(j);
		return;
	}
	for (uint32_t i = 0; i < p->nthreads; i++)
		p->t[i].tried = 1;
	if (do_scan) {
		p->scanned = now;
		p->rescan = 0;
	}
	p->job = j;
	if (!o->svc) {
		scan_work(&j->job);
		j->job.ran = 1;
		scan_done(&j->job);
	}
}

/* A thread of process pid: tids are the machine's, so one the library
 * named that belongs to another process is not under /proc/PID/task. */
static int thread_of(uint32_t pid, uint32_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) == 0;
}

/* The tid comes from the library, so from the process: the event opened is
 * kept only if the thread is still one of its own after the open (the
 * kernel bound the event to that task then; a tid reused in between would
 * have to be reused again).  On the service thread: the job's alone. */
static void open_events(struct scan_job *j)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_TASK_CLOCK,
		.freq = 1, .sample_freq = j->hz,
	};
	for (uint32_t i = 0; i < j->nopen; i++) {
		struct opened *e = &j->open[i];
		e->tried = 1;
		e->fd = (int)syscall(__NR_perf_event_open, &a, (pid_t)e->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (e->fd < 0) {
			e->err = errno;
			continue;
		}
		if (!thread_of(j->pid, e->tid)) {
			e->not_own = 1;
			close(e->fd);
			e->fd = -1;
		}
	}
}

/* An event opened for a thread of p, attached to the program (main
 * thread); closed where the thread went meanwhile or p has no config. */
static void attach_event(struct xpu_gpu_own *o, struct proc *p, const struct opened *e)
{
	struct thread *t = NULL;
	for (uint32_t i = 0; i < p->nthreads && !t; i++)
		if (p->t[i].tid == e->tid)
			t = &p->t[i];
	if (!e->tried) {	/* no flag found yet: the next scan tries it */
		if (t)
			t->tried = 0;
		return;
	}
	if (e->fd < 0) {
		if (e->not_own)
			o->st.not_own++;
		else if (e->err && e->err != ESRCH) {	/* a thread that exited already is no failure */
			o->st.open_failed++;
			o->st.err = e->err;
		}
		return;
	}
	if (!t || t->link || !p->configured) {
		close(e->fd);
		return;
	}
	t->link = bpf_program__attach_perf_event(o->prog, e->fd);
	if (!t->link) {
		o->st.attach_failed++;
		o->st.err = errno;
		close(e->fd);
		return;
	}
	p->open++;
}

/* Threads that exited keep their event open but never fire: closed when a
 * scan finds them gone, so their places go to new ones. */
static void reap(struct proc *p)
{
	for (uint32_t i = p->nthreads; i-- > 0;)
		if (!thread_of(p->pid, p->t[i].tid))
			close_thread(p, i);
}

static void tick_proc(struct xpu_gpu_own *o, struct proc *p, uint64_t now)
{
	uint64_t since = now - p->scanned;
	if (p->job)		/* its scan is under way */
		return;
	/* A process without the library's word (another injection library,
	 * the tests' fake) is looked at again only every RESCAN_NS: reading its
	 * maps and ELF files each second held the loop up to 25 ms in a
	 * sanitizer build, and the waits' stitching behind it (stitch.sh). */
	int soon = (p->rescan || !p->configured) && !p->no_flag;
	if (since >= RESCAN_NS || (soon && since >= RESCAN_MIN_NS)) {
		if (p->configured) {
			reap(p);
			o->last_pid = o->last_tid = 0;	/* a reaped tid may come again */
		}
		submit(o, p, 1, now);
		return;
	}
	for (uint32_t i = 0; p->configured && i < p->nthreads; i++) {
		if (!p->t[i].tried) {
			submit(o, p, 0, now);
			return;
		}
	}
}

void xpu_gpu_own_tick(struct xpu_gpu_own *o, uint64_t now)
{
	if (!o)
		return;
	uint64_t t0 = xpu_now_mono();
	for (int i = 0; i < XPU_GPU_OWN_PROCS && xpu_now_mono() - t0 < TICK_BUDGET_NS; i++)
		if (o->procs[i])
			tick_proc(o, o->procs[i], now);
}

int xpu_gpu_own_read(const struct xpu_gpu_own *o, uint32_t pid, struct xpu_ev_gpu_own *out)
{
	const struct proc *p = o ? proc_of(o, pid) : NULL;
	struct xpu_gpu_own_counts n;
	if (!p || !p->configured || bpf_map_lookup_elem(o->counts_fd, &pid, &n) < 0)
		return -1;
	*out = (struct xpu_ev_gpu_own){ .hz = o->hz, .threads = p->open };
	for (int k = 0; k < 2; k++) {
		out->own[k] = n.own[k];
		out->cuda[k] = n.cuda[k];
	}
	return 0;
}

void xpu_gpu_own_each(const struct xpu_gpu_own *o, void (*fn)(void *arg, uint32_t pid,
							       const struct xpu_ev_gpu_own *g), void *arg)
{
	for (int i = 0; o && i < XPU_GPU_OWN_PROCS; i++) {
		struct xpu_ev_gpu_own g;
		if (o->procs[i] && xpu_gpu_own_read(o, o->procs[i]->pid, &g) == 0)
			fn(arg, o->procs[i]->pid, &g);
	}
}

void xpu_gpu_own_stats(const struct xpu_gpu_own *o, struct xpu_gpu_own_stats *st)
{
	*st = o->st;
	st->unread = 0;
	for (int i = 0; i < XPU_GPU_OWN_PROCS; i++) {
		const struct proc *p = o->procs[i];
		struct xpu_gpu_own_counts n;
		if (!p)
			continue;
		st->procs++;
		st->threads += p->open;
		st->procs_full += (uint32_t)p->full;
		if (p->configured && bpf_map_lookup_elem(o->counts_fd, &p->pid, &n) == 0)
			st->unread += n.unread;
	}
}
