/* SPDX-License-Identifier: GPL-2.0-only */
#include "launch_probes.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/gpu.h"

#include "err.h"
#include "sys.h"
#include "uprobe_multi.h"

#define MAX_FILES 64
#define MAX_FNS 16
#define MAX_SPANS 64
#define NS_PER_MS 1000000ULL
#define WHOLE_CHECK_MS 20	/* on throughout: how often their traps' cost is checked */
/* After their traps ended a span on throughout, the probes stay in (paused)
 * for the next period's slice if it comes within this much, and go out
 * otherwise: taking them out takes 100-120 ms in a busy CUDA process, and
 * a slice placed there could not begin. */
#define KEEP_MS 250
#define MAX_WATCH 64		/* processes whose CPU time is kept by the probes' state */
#define MAX_WATCH_FDS 128	/* and threads in all */

struct file {
	char *path;	/* /proc/self/fd/N: the file stays reachable after its process and its /proc go */
	int fd;
	uint64_t off[MAX_FNS], cookie0;
	struct bpf_link *link[MAX_FNS];
	int mfd;	/* the uprobe_multi link of all of them, or -1 */
	uint32_t n;
};

struct span { uint64_t start, end; int kind; };	/* XPU_LAUNCH_SPAN_* */

/* A process's launching threads' CPU time, read at each change of the
 * probes' state (a counter each) and put to the state it was in. */
struct wthread {
	uint32_t tid;
	int fd;			/* its counter; -1: closed, a read failed */
	uint64_t last;		/* its last reading */
};

struct watch {
	uint32_t pid;
	uint32_t n;
	struct wthread t[XPU_GPU_CPU_THREADS];
	struct xpu_launch_probes_cpu ns;	/* since the last xpu_launch_probes_cpu() */
};

struct xpu_launch_probes {
	struct bpf_program *prog;
	int multi;	/* prog attaches as uprobe_multi links */
	volatile uint32_t *state;	/* XPU_GPU_PROBES_*: prog counts nothing while paused */
	int hits_fd;			/* probe_hits (per CPU), or -1 */
	uint64_t *hits_v;		/* a value per possible CPU */
	int ncpus;
	volatile uint32_t *calib_pid;	/* prog counts the calibration's hits by this pid */
	volatile uint64_t *calib_hits;	/* ... here */
	uint32_t trap_ns[2];		/* what a trap costs an injected process, a launch-only
					 * one; 0: not measured (atomic) */
	pthread_t thread, calib;
	int started, calib_started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock */
	struct file files[MAX_FILES];
	uint32_t nfiles;
	int exact, stop, changed;
	uint32_t slice_ms, period_ms;
	struct span spans[MAX_SPANS];
	uint32_t nspans;
	uint64_t exact_since;		/* exact and attached since; 0: not */
	uint64_t whole_since;		/* on throughout since; 0: not */
	uint64_t whole_ns;		/* budget: their traps' time a second (0: never on throughout) */
	int whole_tried;		/* on throughout once already (the first files go so) */
	int kept;			/* in (paused) since a span on throughout ended */
	struct watch watch[MAX_WATCH];
	uint32_t nwatch, nfds;
	int cpu_state;			/* the span the probes count in (XPU_LAUNCH_SPAN_* + 1), 0: none */
	struct xpu_launch_probes_stats st;
	/* the thread's own */
	uint32_t attached;		/* files[0..attached) have their links */
	uint64_t rng;
};

static void add_span(struct xpu_launch_probes *lp, uint64_t start, uint64_t end, int kind)
{
	if (end <= start)
		return;
	if (lp->nspans == MAX_SPANS) {	/* nobody read them for 30 s: merge the oldest two */
		lp->spans[1].start = lp->spans[0].start;
		memmove(lp->spans, lp->spans + 1, (MAX_SPANS - 1) * sizeof(lp->spans[0]));
		lp->nspans--;
	}
	lp->spans[lp->nspans++] = (struct span){ start, end, kind };
}

/* One uprobe_multi link (core/sources/uprobe_multi.h) for all of a file's
 * functions: one system call on, one off.  A perf-event uprobe a function
 * costs a close that waits for an RCU grace period: 30 ms a probe, 0.7 s to
 * turn a file's 22 on and off on the 2-core CI machine. */
static int attach_multi(struct bpf_program *prog, const struct file *f)
{
	uint64_t offs[MAX_FNS], cookies[MAX_FNS];
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n; i++) {
		if (!f->off[i])
			continue;
		offs[n] = f->off[i];
		cookies[n++] = f->cookie0 + i;
	}
	return xpu_uprobe_multi_attach(bpf_program__fd(prog), f->path, offs, cookies, n, 0);
}

/* Attaches the links of files[from..nfiles).  The files array only grows
 * and only the thread touches the links, so the lock is dropped around the
 * system calls: adding a file never waits for an attach. */
static void attach_files(struct xpu_launch_probes *lp)
{
	while (lp->attached < lp->nfiles) {
		struct file *f = &lp->files[lp->attached];
		pthread_mutex_unlock(&lp->lock);
		uint32_t failed = 0;
		if (lp->multi) {
			f->mfd = attach_multi(lp->prog, f);
			failed += f->mfd < 0;
		}
		for (uint32_t i = 0; !lp->multi && i < f->n; i++) {
			if (!f->off[i])
				continue;
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = f->cookie0 + i);
			f->link[i] = bpf_program__attach_uprobe_opts(lp->prog, -1, f->path, f->off[i], &o);
			failed += !f->link[i];
		}
		pthread_mutex_lock(&lp->lock);
		lp->st.failed += failed;
		lp->attached++;
	}
}

static void detach_files(struct xpu_launch_probes *lp)
{
	uint32_t n = lp->attached;
	pthread_mutex_unlock(&lp->lock);
	for (uint32_t k = 0; k < n; k++) {
		struct file *f = &lp->files[k];
		if (f->mfd >= 0)
			close(f->mfd);
		f->mfd = -1;
		for (uint32_t i = 0; i < f->n; i++) {
			bpf_link__destroy(f->link[i]);
			f->link[i] = NULL;
		}
	}
	pthread_mutex_lock(&lp->lock);
	lp->attached = 0;
}

/* A thread's CPU time since its counter was opened (a task-clock perf
 * event counting, never sampling: read to the nanosecond, the kernel
 * bringing a running thread's up to date first), or -1.  Its scheduler
 * statistics (/proc/PID/task/TID/schedstat) leave out a running thread's
 * time since the last tick: 4 ms in a 30 ms slice at 250 Hz, and the
 * probes' slices in a burst on the H200 then read 50-88 launches a CPU
 * millisecond where the burst ran at 76. */
static int64_t cpu_now(int fd)
{
	uint64_t v;
	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v) || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

/* A counter of thread tid's CPU time, or -1. */
static int cpu_open(uint32_t tid)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_TASK_CLOCK,
	};
	return (int)syscall(__NR_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Puts each watched thread's CPU time since its last reading to the state
 * the probes are in (under lock: the state changes under it only). */
static void cpu_account(struct xpu_launch_probes *lp)
{
	for (uint32_t i = 0; i < lp->nwatch; i++) {
		struct watch *w = &lp->watch[i];
		for (uint32_t k = 0; k < w->n; k++) {
			struct wthread *t = &w->t[k];
			int64_t now = t->fd < 0 ? -1 : cpu_now(t->fd);
			if (now < 0) {
				if (t->fd >= 0) {
					close(t->fd);
					t->fd = -1;
					lp->nfds--;
				}
				continue;
			}
			uint64_t d = (uint64_t)now > t->last ? (uint64_t)now - t->last : 0;
			t->last = (uint64_t)now;
			w->ns.all_ns += d;
			if (lp->cpu_state == XPU_LAUNCH_SPAN_SAMPLED + 1)
				w->ns.slice_ns += d;
			else if (lp->cpu_state == XPU_LAUNCH_SPAN_WHOLE + 1)
				w->ns.whole_ns += d;
		}
	}
}

static void watch_close(struct xpu_launch_probes *lp, struct watch *w);

/* The program's state word; span: the span it begins (XPU_LAUNCH_SPAN_*,
 * -1: none), whose CPU time the watched processes' goes to. */
static void set_state_span(struct xpu_launch_probes *lp, uint32_t v, int span)
{
	if (lp->state) {
		cpu_account(lp);
		__atomic_store_n(lp->state, v, __ATOMIC_SEQ_CST);
	}
	lp->cpu_state = span + 1;
}

static void set_state(struct xpu_launch_probes *lp, uint32_t v)
{
	set_state_span(lp, v, -1);
}

/* The probes' hits counted so far (all CPUs); 0 where they cannot be read. */
static uint64_t hits_now(struct xpu_launch_probes *lp)
{
	uint32_t zero = 0;
	uint64_t n = 0;
	if (lp->hits_fd < 0 || !lp->hits_v || bpf_map_lookup_elem(lp->hits_fd, &zero, lp->hits_v) < 0)
		return 0;
	for (int i = 0; i < lp->ncpus; i++)
		n += lp->hits_v[i];
	return n;
}

/* On throughout only with a budget and the hits to hold it to. */
static int whole_allowed(const struct xpu_launch_probes *lp)
{
	return lp->whole_ns && lp->hits_fd >= 0 && lp->hits_v;
}

/* What a trap costs (the dearer kind), for the budget: 1 us until measured. */
static uint64_t budget_trap_ns(struct xpu_launch_probes *lp)
{
	uint32_t a = __atomic_load_n(&lp->trap_ns[0], __ATOMIC_ACQUIRE);
	uint32_t b = __atomic_load_n(&lp->trap_ns[1], __ATOMIC_ACQUIRE);
	uint32_t t = a > b ? a : b;
	return t ? t : 1000;
}

static struct timespec at(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
}

/* Waits under lock until deadline, a change or stop; returns 1 if woken
 * by a change or stop. */
static int wait_until(struct xpu_launch_probes *lp, uint64_t deadline)
{
	struct timespec ts = at(deadline);
	while (!lp->stop && !lp->changed && xpu_now_mono() < deadline)
		pthread_cond_timedwait(&lp->wake, &lp->lock, &ts);
	return lp->stop || lp->changed;
}

static uint64_t next_random(struct xpu_launch_probes *lp)
{
	lp->rng ^= lp->rng >> 12;
	lp->rng ^= lp->rng << 25;
	lp->rng ^= lp->rng >> 27;
	return lp->rng * 0x2545F4914F6CDD1DULL;
}

/* The probes on throughout from `from` (attached, paused), as long as their
 * traps cost at most the budget: a bucket of one second's worth, refilled
 * as time goes, drained by each check's hits times what a trap costs (the
 * machine's pace can only be read between checks: a burst's first check
 * may take WHOLE_CHECK_MS of its traps more).  Every launch is counted
 * apart (probed_launches' whole_* fields), and the span reaches the model
 * as such: what is counted there is the count, not a sample.  Returns when
 * the next sampled period starts (now). */
static uint64_t whole(struct xpu_launch_probes *lp, uint64_t from)
{
	double bucket = (double)lp->whole_ns;
	uint64_t t = xpu_now_mono(), h = hits_now(lp);
	set_state_span(lp, XPU_GPU_PROBES_WHOLE, XPU_LAUNCH_SPAN_WHOLE);
	lp->whole_since = from;
	lp->st.wholes++;
	while (!lp->stop && !lp->changed) {
		wait_until(lp, t + WHOLE_CHECK_MS * NS_PER_MS);
		uint64_t t2 = xpu_now_mono(), h2 = hits_now(lp);
		bucket += (double)lp->whole_ns * (double)(t2 - t) / 1e9;
		if (bucket > (double)lp->whole_ns)
			bucket = (double)lp->whole_ns;
		bucket -= (double)(h2 - h) * (double)budget_trap_ns(lp);
		t = t2;
		h = h2;
		if (bucket < 0) {
			lp->st.whole_cuts++;
			lp->kept = 1;
			break;
		}
		if (lp->attached < lp->nfiles) {	/* a new file: its probes count once in */
			attach_files(lp);
			t = xpu_now_mono();
		}
	}
	set_state(lp, XPU_GPU_PROBES_PAUSED);
	uint64_t t2 = xpu_now_mono();
	if (lp->whole_since && t2 > lp->whole_since)
		add_span(lp, lp->whole_since, t2, XPU_LAUNCH_SPAN_WHOLE);
	lp->st.whole_ns += t2 - from;
	lp->whole_since = 0;
	/* Ended by their traps (most often a burst's start): the next period
	 * starts now, with the probes still in, so that its slice may fall
	 * anywhere in it, the time they would take to go out too (that time
	 * is a burst's as often as not; left out of every period, the recorded
	 * bursty process came out 3.8% low with 100 ms of it in the harness). */
	if (lp->kept && !lp->stop && !lp->changed)
		return t2;
	lp->kept = 0;
	detach_files(lp);
	uint64_t t3 = xpu_now_mono();
	lp->st.detach_ns += t3 - t2;
	return t3;
}

/* One sampled period from `period`: off, on for a slice at a random point
 * (as inject/sched.c places the library's), off.  Returns the next period's
 * start. */
static uint64_t sampled_period(struct xpu_launch_probes *lp, uint64_t period)
{
	uint64_t slice = lp->slice_ms * NS_PER_MS, len = lp->period_ms * NS_PER_MS;
	uint64_t room = len > slice ? len - slice : 0;
	uint64_t start = period + (room ? next_random(lp) % (room + 1) : 0);
	/* The first files go on throughout at once: a machine that launches
	 * little is counted from its first launch, one that launches much
	 * costs a budget's traps and goes to slices at the first check (the
	 * choice is made before anything is counted). */
	if (whole_allowed(lp) && !lp->whole_tried && lp->nfiles) {
		lp->whole_tried = 1;
		set_state(lp, XPU_GPU_PROBES_PAUSED);
		uint64_t t0 = xpu_now_mono();
		attach_files(lp);
		lp->st.attach_ns += xpu_now_mono() - t0;
		return whole(lp, xpu_now_mono());
	}
	/* In since a span on throughout ended: out, unless the slice is near. */
	if (lp->kept) {
		lp->kept = 0;
		uint64_t now = xpu_now_mono();
		if (start > now + KEEP_MS * NS_PER_MS) {
			detach_files(lp);
			lp->st.detach_ns += xpu_now_mono() - now;
		}
	}
	if (wait_until(lp, start) || !lp->nfiles)
		return period + len;
	/* The slice counts from when its probes are all in to when they start
	 * going out: the program is paused around both.  Probes go in and out
	 * one by one, each waiting for the mmap lock of every process that
	 * maps the file (its breakpoints are written there); a busy CUDA
	 * process holds it often enough to keep a slice's probes in for
	 * 100 ms after it (bench/RESULTS.md). */
	uint64_t t0 = xpu_now_mono();
	set_state(lp, XPU_GPU_PROBES_PAUSED);
	attach_files(lp);
	uint64_t t1 = xpu_now_mono();
	uint64_t h1 = hits_now(lp);
	set_state_span(lp, XPU_GPU_PROBES_SLICE, XPU_LAUNCH_SPAN_SAMPLED);
	wait_until(lp, t1 + slice);
	set_state(lp, XPU_GPU_PROBES_PAUSED);
	uint64_t t2 = xpu_now_mono();
	uint64_t h2 = hits_now(lp);
	add_span(lp, t1, t2, XPU_LAUNCH_SPAN_SAMPLED);
	lp->st.slices++;
	lp->st.attach_ns += t1 - t0;
	/* A slice whose traps, at its pace, would cost at most half the budget
	 * a second: the probes stay in, paused to the period's end, then on
	 * throughout.  Every sampled period is a whole one, its slice at a
	 * random point of it: going on throughout right after a slice that saw
	 * little ended each sampled stretch on such a slice, and a burst's
	 * tail before it was taken at its pace (-14% on the recorded bursty
	 * process, tests/unit/test_gpu_estimates.c). */
	if (whole_allowed(lp) && !lp->stop && !lp->changed && t2 > t1 &&
	    (double)(h2 - h1) * (double)budget_trap_ns(lp) * 1e9 / (double)(t2 - t1) <= (double)lp->whole_ns / 2 &&
	    !wait_until(lp, period + len))
		return whole(lp, xpu_now_mono());
	detach_files(lp);
	uint64_t t3 = xpu_now_mono();
	lp->st.detach_ns += t3 - t2;
	uint64_t next = period + len;
	return next < t3 ? t3 : next;
}

/* ---- what a trap costs ---- */

#if defined(__x86_64__)
/* The instructions the launch functions begin with (cudaLaunchKernel: push
 * rbp; mov rsp,rbp), which the kernel emulates under a uprobe, and nothing
 * else: a probe here costs what one on a launch function does.  Its twin,
 * never probed, is timed beside it, round for round, while the probe is in
 * (what a call costs without the trap drifts with the machine's load: timed
 * before and after the probe, the difference moved 25% between runs).
 * xpu_trap_chain calls the function whose address is in rsi through
 * XPU_GPU_SITE_DEPTH frames of its own, each a few words above the next,
 * the outermost one's saved frame pointer 0 (the walk ends there): a
 * launch-only probe's call-site hash walks all the frames it may (a PyTorch
 * launch is deeper), within the stack it reads at once, whatever the build
 * of xputop's C code around it.  Called from xputop's C frames, the hash
 * walked those: in a sanitizer build, whose frames carry redzones, out of
 * that window, a read a frame (1.63-1.81 us a trap with the hash, 1.33-1.51
 * in a plain build; a launch-only loop came out 1.12-1.25 of what ran in
 * CI's sanitizer pass). */
#define XPU_STR_(x) #x
#define XPU_STR(x) XPU_STR_(x)
/* a function of this file's, hidden, and its end */
#define ASM_FN(name) ".globl " #name "\n.hidden " #name "\n.type " #name ", @function\n" #name ":\n"
#define ASM_END(name) ".size " #name ", .-" #name "\n"
/* the target's body, and so its twin's, the same */
#define TRAP_BODY "\tpush %rbp\n\tmov %rsp, %rbp\n\tpop %rbp\n\tret\n"
__asm__(".pushsection .text\n"
	ASM_FN(xpu_trap_target) TRAP_BODY ASM_END(xpu_trap_target)
	ASM_FN(xpu_trap_twin) TRAP_BODY ASM_END(xpu_trap_twin)
	".type xpu_trap_chain, @function\n"
	"xpu_trap_chain:\n"
	"\tpush %rbp\n"
	"\txor %ebp, %ebp\n"
	"\tmov $" XPU_STR(XPU_GPU_SITE_DEPTH) ", %edi\n"
	"\tcall 2f\n"
	"\tpop %rbp\n"
	"\tret\n"
	"2:\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tdec %edi\n"
	"\tjz 1f\n"
	"\tcall 2b\n"
	"\tpop %rbp\n"
	"\tret\n"
	"1:\tcall *%rsi\n"
	"\tpop %rbp\n"
	"\tret\n"
	ASM_END(xpu_trap_chain)
	ASM_FN(xpu_trap_chain_target) "\tlea xpu_trap_target(%rip), %rsi\n\tjmp xpu_trap_chain\n"
	ASM_END(xpu_trap_chain_target)
	ASM_FN(xpu_trap_chain_twin) "\tlea xpu_trap_twin(%rip), %rsi\n\tjmp xpu_trap_chain\n"
	ASM_END(xpu_trap_chain_twin)
	".popsection\n");
void xpu_trap_target(void), xpu_trap_twin(void), xpu_trap_chain_target(void), xpu_trap_chain_twin(void);
#define TRAP_TARGET xpu_trap_target
#define TRAP_TWIN xpu_trap_twin
#define TRAP_CHAIN_TARGET xpu_trap_chain_target
#define TRAP_CHAIN_TWIN xpu_trap_chain_twin
#else
#define TRAP_TARGET NULL
#define TRAP_TWIN NULL
#define TRAP_CHAIN_TARGET NULL
#define TRAP_CHAIN_TWIN NULL
#endif

#define CALIB_CALLS 500
#define CALIB_ROUNDS 21
#define CALIB_WARM 16

/* The file offset of this executable's code at addr, from /proc/self/maps;
 * 0: not found. */
static uint64_t self_offset(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t off = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &pgoff) == 4 && addr >= lo && addr < hi) {
			if (perms[2] == 'x')
				off = addr - lo + pgoff;
			break;
		}
	}
	fclose(f);
	return off;
}

static uint64_t time_calls(void (*volatile fn)(void), uint32_t n)
{
	uint64_t t0 = xpu_now_mono();
	for (uint32_t i = 0; i < n; i++)
		fn();
	return xpu_now_mono() - t0;
}

/* The least of n round times: a round another thread interrupted only
 * takes longer, so the least is the one nothing else was in (with the
 * medians, a busy CI machine's sanitizer run took 29% of the probes' time
 * off as traps where 18% held alone: 1.13 of the truth, not 0.98). */
static uint64_t least(const uint64_t *v, size_t n)
{
	uint64_t m = v[0];
	for (size_t i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/* What a probe's trap costs a call, on this machine, now: with the probe
 * on xpu_trap_target (the launch program, through what an injected
 * process's launch takes, cookie XPU_GPU_API_CALIB, or a launch-only one's,
 * XPU_GPU_API_CALIB_LO, called through the chain: its call site hashed),
 * rounds of calls to it and to its twin, alternated; the least rounds'
 * difference.  Every probed call must have been a hit of this process's, or
 * nothing is measured.  Counted whether or not the probes are paused (the
 * program looks at the calibration's cookies first), so it runs beside the
 * slices, on a thread of its own: its probe goes in and out as slowly as
 * theirs (grace periods: 70-190 ms here, seconds on a slow machine), and
 * the probes must not wait for it (ci38: a start delayed by it lost a
 * program's first seconds). */
static uint32_t measure_trap(struct xpu_launch_probes *lp, uint64_t cookie)
{
	int lo = cookie == XPU_GPU_API_CALIB_LO;
	void (*volatile probed_fn)(void) = lo ? TRAP_CHAIN_TARGET : TRAP_TARGET;
	void (*volatile plain_fn)(void) = lo ? TRAP_CHAIN_TWIN : TRAP_TWIN;
	uintptr_t target = (uintptr_t)TRAP_TARGET;
	uint64_t off = target ? self_offset(target) : 0;
	uint64_t plain[CALIB_ROUNDS], probed[CALIB_ROUNDS];
	struct bpf_link *link = NULL;
	int mfd = -1;
	if (!off || !lp->calib_pid || !lp->calib_hits)
		return 0;
	*lp->calib_pid = (uint32_t)getpid();
	uint64_t hits0 = __atomic_load_n(lp->calib_hits, __ATOMIC_SEQ_CST);
	if (lp->multi) {
		mfd = xpu_uprobe_multi_attach(bpf_program__fd(lp->prog), "/proc/self/exe", &off, &cookie, 1, 0);
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie);
		link = bpf_program__attach_uprobe_opts(lp->prog, getpid(), "/proc/self/exe", off, &o);
	}
	if (mfd < 0 && !link)
		return 0;
	time_calls(probed_fn, CALIB_WARM);	/* a process's first hit makes its out-of-line area */
	time_calls(plain_fn, CALIB_WARM);
	for (int r = 0; r < CALIB_ROUNDS; r++) {
		plain[r] = time_calls(plain_fn, CALIB_CALLS);
		probed[r] = time_calls(probed_fn, CALIB_CALLS);
	}
	uint64_t hits = __atomic_load_n(lp->calib_hits, __ATOMIC_SEQ_CST) - hits0;
	if (mfd >= 0)
		close(mfd);
	bpf_link__destroy(link);
	*lp->calib_pid = 0;
	uint64_t p = least(probed, CALIB_ROUNDS), q = least(plain, CALIB_ROUNDS);
	if (hits != (uint64_t)CALIB_WARM + (uint64_t)CALIB_ROUNDS * CALIB_CALLS || p <= q)
		return 0;
	uint64_t ns = (p - q + CALIB_CALLS / 2) / CALIB_CALLS;
	return ns ? (uint32_t)(ns > UINT32_MAX ? UINT32_MAX : ns) : 1;
}

static void *calibrate(void *arg)
{
	struct xpu_launch_probes *lp = arg;
	xpu_sys_thread_begin("xputop-trapcal");
	uint64_t t0 = xpu_now_mono();
	uint32_t trap = measure_trap(lp, XPU_GPU_API_CALIB), trap_lo = measure_trap(lp, XPU_GPU_API_CALIB_LO);
	__atomic_store_n(&lp->trap_ns[0], trap, __ATOMIC_RELEASE);
	__atomic_store_n(&lp->trap_ns[1], trap_lo, __ATOMIC_RELEASE);
	pthread_mutex_lock(&lp->lock);
	lp->st.trap_ns = trap;
	lp->st.trap_lo_ns = trap_lo;
	lp->st.trap_measured = 1;
	lp->st.trap_measure_ns = xpu_now_mono() - t0;
	pthread_mutex_unlock(&lp->lock);
	return NULL;
}

static void *run(void *arg)
{
	struct xpu_launch_probes *lp = arg;
	xpu_sys_thread_begin("xputop-launch");
	pthread_mutex_lock(&lp->lock);
	uint64_t period = xpu_now_mono();
	while (!lp->stop) {
		lp->changed = 0;
		if (lp->exact) {
			set_state(lp, XPU_GPU_PROBES_SLICE);
			attach_files(lp);
			if (lp->attached && !lp->exact_since)
				lp->exact_since = xpu_now_mono();
			while (!lp->stop && !lp->changed)
				pthread_cond_wait(&lp->wake, &lp->lock);
			continue;
		}
		if (lp->attached && !lp->kept) {	/* from exact to sampled */
			set_state(lp, XPU_GPU_PROBES_PAUSED);
			uint64_t t = xpu_now_mono();
			detach_files(lp);
			if (lp->exact_since)
				add_span(lp, lp->exact_since, t, XPU_LAUNCH_SPAN_EXACT);
			lp->exact_since = 0;
			period = xpu_now_mono();
		}
		period = sampled_period(lp, period);
	}
	detach_files(lp);
	pthread_mutex_unlock(&lp->lock);
	return NULL;
}

struct xpu_launch_probes *xpu_launch_probes_new(struct bpf_program *prog, int multi, volatile uint32_t *state,
					       int hits_fd, volatile uint32_t *calib_pid, volatile uint64_t *calib_hits)
{
	struct xpu_launch_probes *lp = calloc(1, sizeof(*lp));
	pthread_condattr_t ca;
	if (!lp)
		return NULL;
	lp->prog = prog;
	lp->multi = multi;
	lp->state = state;
	lp->hits_fd = hits_fd;
	lp->ncpus = libbpf_num_possible_cpus();
	if (lp->ncpus > 0)
		lp->hits_v = calloc((size_t)lp->ncpus, sizeof(*lp->hits_v));
	lp->calib_pid = calib_pid;
	lp->calib_hits = calib_hits;
	lp->exact = 1;
	lp->rng = xpu_now_mono() | 1;
	pthread_mutex_init(&lp->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lp->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&lp->thread, NULL, run, lp) != 0) {
		xpu_launch_probes_free(lp);
		return NULL;
	}
	lp->started = 1;
	/* Without it the probes' time is taken as the launches' (said). */
	lp->calib_started = pthread_create(&lp->calib, NULL, calibrate, lp) == 0;
	return lp;
}

void xpu_launch_probes_free(struct xpu_launch_probes *lp)
{
	if (!lp)
		return;
	if (lp->started) {
		pthread_mutex_lock(&lp->lock);
		lp->stop = 1;
		pthread_cond_signal(&lp->wake);
		pthread_mutex_unlock(&lp->lock);
		pthread_join(lp->thread, NULL);
	}
	if (lp->calib_started)
		pthread_join(lp->calib, NULL);
	for (uint32_t i = 0; i < lp->nfiles; i++) {
		free(lp->files[i].path);
		close(lp->files[i].fd);
	}
	for (uint32_t i = 0; i < lp->nwatch; i++)
		watch_close(lp, &lp->watch[i]);
	pthread_cond_destroy(&lp->wake);
	pthread_mutex_destroy(&lp->lock);
	free(lp->hits_v);
	free(lp);
}

int xpu_launch_probes_add(struct xpu_launch_probes *lp, const char *path, const uint64_t *offs, size_t n,
			  uint64_t cookie0)
{
	uint32_t fns = 0;
	for (size_t i = 0; i < n; i++)
		fns += offs[i] != 0;
	if (!fns || n > MAX_FNS)
		return -1;
	char fdpath[40], *copy = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	pthread_mutex_lock(&lp->lock);
	if (lp->nfiles == MAX_FILES || !(copy = strdup(fdpath))) {
		pthread_mutex_unlock(&lp->lock);
		close(fd);
		return -1;
	}
	struct file *f = &lp->files[lp->nfiles];
	*f = (struct file){ .path = copy, .fd = fd, .mfd = -1, .cookie0 = cookie0, .n = (uint32_t)n };
	memcpy(f->off, offs, n * sizeof(*offs));
	lp->nfiles++;
	lp->st.files = lp->nfiles;
	lp->st.links += fns;
	if (lp->exact) {	/* on at once; a sampled mode takes it at its next slice */
		lp->changed = 1;
		pthread_cond_signal(&lp->wake);
	}
	pthread_mutex_unlock(&lp->lock);
	return 0;
}

void xpu_launch_probes_mode(struct xpu_launch_probes *lp, int exact, uint32_t slice_ms, uint32_t period_ms,
			    uint64_t whole_ns)
{
	pthread_mutex_lock(&lp->lock);
	if (lp->exact != !!exact || lp->slice_ms != slice_ms || lp->period_ms != period_ms ||
	    lp->whole_ns != whole_ns) {
		lp->exact = !!exact;
		lp->slice_ms = slice_ms;
		lp->period_ms = period_ms > slice_ms ? period_ms : slice_ms + 1;
		lp->whole_ns = whole_ns;
		lp->changed = 1;
		pthread_cond_signal(&lp->wake);
	}
	pthread_mutex_unlock(&lp->lock);
}

void xpu_launch_probes_spans(struct xpu_launch_probes *lp, uint64_t now,
			     void (*fn)(void *arg, uint64_t start, uint64_t end, int kind), void *arg)
{
	struct span v[MAX_SPANS + 2];
	uint32_t n;
	pthread_mutex_lock(&lp->lock);
	n = lp->nspans;
	memcpy(v, lp->spans, n * sizeof(v[0]));
	lp->nspans = 0;
	if (lp->exact_since && now > lp->exact_since) {
		v[n++] = (struct span){ lp->exact_since, now, XPU_LAUNCH_SPAN_EXACT };
		lp->exact_since = now;
	}
	if (lp->whole_since && now > lp->whole_since) {
		v[n++] = (struct span){ lp->whole_since, now, XPU_LAUNCH_SPAN_WHOLE };
		lp->whole_since = now;
	}
	pthread_mutex_unlock(&lp->lock);
	for (uint32_t i = 0; i < n; i++)
		fn(arg, v[i].start, v[i].end, v[i].kind);
}

void xpu_launch_probes_stats(struct xpu_launch_probes *lp, struct xpu_launch_probes_stats *st)
{
	pthread_mutex_lock(&lp->lock);
	*st = lp->st;
	st->cpu_threads = lp->nfds;
	pthread_mutex_unlock(&lp->lock);
}

static struct watch *watch_of(struct xpu_launch_probes *lp, uint32_t pid)
{
	for (uint32_t i = 0; i < lp->nwatch; i++)
		if (lp->watch[i].pid == pid)
			return &lp->watch[i];
	return NULL;
}

static void watch_close(struct xpu_launch_probes *lp, struct watch *w)
{
	for (uint32_t k = 0; k < w->n; k++)
		if (w->t[k].fd >= 0) {
			close(w->t[k].fd);
			lp->nfds--;
		}
}

int xpu_launch_probes_watch(struct xpu_launch_probes *lp, uint32_t pid)
{
	int rc = 0;
	pthread_mutex_lock(&lp->lock);
	struct watch *w = watch_of(lp, pid);
	if (w) {
		watch_close(lp, w);
		*w = (struct watch){ .pid = pid };
	} else if (lp->nwatch < MAX_WATCH) {
		lp->watch[lp->nwatch++] = (struct watch){ .pid = pid };
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&lp->lock);
	return rc;
}

int xpu_launch_probes_thread(struct xpu_launch_probes *lp, uint32_t pid, uint32_t tid)
{
	char path[64];
	int rc = -1;
	/* the thread of pid's, looked for in pid's own /proc: its library says
	 * which, and may say what it likes */
	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	pthread_mutex_lock(&lp->lock);
	struct watch *w = watch_of(lp, pid);
	uint32_t k = 0;
	while (w && k < w->n && w->t[k].tid != tid)
		k++;
	if (w && k < w->n) {
		rc = 0;		/* watched already */
	} else if (w && w->n < XPU_GPU_CPU_THREADS && lp->nfds < MAX_WATCH_FDS) {
		/* Opened under the lock: a thread read later than its first
		 * reading would put its time to the wrong state. */
		int own = access(path, F_OK) == 0;
		int fd = own ? cpu_open(tid) : -1;
		if (own && fd < 0)
			lp->st.cpu_err = errno;
		/* still pid's once its counter is open (a tid is used again) */
		own = own && (fd < 0 || access(path, F_OK) == 0);
		int64_t now = fd >= 0 && own ? cpu_now(fd) : -1;
		if (now >= 0) {
			w->t[w->n++] = (struct wthread){ .tid = tid, .fd = fd, .last = (uint64_t)now };
			lp->nfds++;
			rc = 0;
		} else {
			if (fd >= 0)
				close(fd);
			if (own)
				lp->st.cpu_failed++;
			else
				lp->st.cpu_refused++;
		}
	}
	pthread_mutex_unlock(&lp->lock);
	return rc;
}

void xpu_launch_probes_unwatch(struct xpu_launch_probes *lp, uint32_t pid)
{
	pthread_mutex_lock(&lp->lock);
	struct watch *w = watch_of(lp, pid);
	if (w) {
		watch_close(lp, w);
		*w = lp->watch[--lp->nwatch];
	}
	pthread_mutex_unlock(&lp->lock);
}

void xpu_launch_probes_cpu(struct xpu_launch_probes *lp,
			   void (*fn)(void *arg, uint32_t pid, const struct xpu_launch_probes_cpu *cpu), void *arg)
{
	struct { uint32_t pid; struct xpu_launch_probes_cpu ns; } v[MAX_WATCH];
	uint32_t n = 0;
	pthread_mutex_lock(&lp->lock);
	cpu_account(lp);
	for (uint32_t i = 0; i < lp->nwatch; i++) {
		struct watch *w = &lp->watch[i];
		if (!w->ns.all_ns)
			continue;
		v[n].pid = w->pid;
		v[n++].ns = w->ns;
		w->ns = (struct xpu_launch_probes_cpu){ 0 };
	}
	pthread_mutex_unlock(&lp->lock);
	for (uint32_t i = 0; i < n; i++)
		fn(arg, v[i].pid, &v[i].ns);
}

uint32_t xpu_launch_probes_trap_ns(struct xpu_launch_probes *lp, int launch_only)
{
	return __atomic_load_n(&lp->trap_ns[!!launch_only], __ATOMIC_ACQUIRE);
}
