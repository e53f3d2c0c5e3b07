/* SPDX-License-Identifier: GPL-2.0-only */
/* Writes a large, realistic recording for the ingest and memory benchmarks,
 * through core/stream/record.c as xputop itself would.
 *
 *   genrec [-s SECONDS] [-r EVENTS_PER_S] [-k STACKS] FILE
 *
 * A machine of 32 CPUs running 64 programs: about 160 processes alive at a
 * time (1 to 16 threads each), each living a few minutes, so thousands of
 * processes come and go over an hour.  Each program has STACKS/64 distinct
 * call paths (C++-like names over 60 libraries, shared prefixes, 6 to 40
 * frames, some with kernel frames); samples favour a hot few but reach them
 * all.  Eight programs launch CUDA kernels (launch with its stack, then the
 * kernel, joined by correlation id; memory copies) and four drive an NPU
 * (ioctls as the source aggregates them, jobs submitted and done, firmware
 * IPC, buffers).  One tick a second.  Default: an hour at about 5,000 events
 * a second with 131,072 stacks.
 *
 * Prints what it wrote: "events N ticks T stacks S processes P bytes B".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "model_npu.h"
#include "record.h"

#define NPROGS 64
#define NCUDA 8			/* programs 0..7 launch GPU kernels */
#define NNPU 4			/* programs 8..11 drive an NPU */
#define LIVE 160		/* processes alive at a time */
#define LIFE_S 200		/* mean lifetime */
#define NFUNCS 40000
#define NMODS 60
#define NKFUNCS 3000
#define NGPUKERNELS 400
#define HOT 64			/* the hot stacks of each program */
#define CPUS 32
#define TICK_NS 1000000000ULL
#define START_NS 1000000000000ULL	/* CLOCK_MONOTONIC at the start */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(next_rand() % n);
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a + 0x9e3779b97f4a7c15ULL) ^ (b * 0xbf58476d1ce4e5b9ULL);
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

struct proc {
	uint32_t pid, prog, nthreads;
	uint64_t end;		/* ns */
	uint32_t corr;		/* next CUDA correlation id */
	uint32_t comm, tcomm[16];
};

static struct xpu_dict dict;
static uint32_t func_frame[NFUNCS], kfunc_frame[NKFUNCS], mod_str[NMODS], prog_str[NPROGS];
static uint32_t *stack_id;	/* per (program, index), interned on first use */
static uint32_t per_prog;	/* stacks per program */
static uint32_t gpu_name[NGPUKERNELS], launch_frame, launch_api, user_str[4];
static struct proc procs[LIVE];
static uint32_t next_pid = 1000;
static uint64_t nprocs;

static uint32_t str(const char *fmt, unsigned long long a, unsigned long long b, unsigned long long c)
{
	char buf[256];
	snprintf(buf, sizeof(buf), fmt, a, b, c);
	return xpu_dict_cstr(&dict, buf);
}

static uint32_t func(uint64_t h)
{
	uint32_t i = (uint32_t)(h % NFUNCS);
	if (!func_frame[i]) {
		uint32_t m = i % NMODS;
		if (!mod_str[m])
			mod_str[m] = str("libmod%llu.so.%llu", m, m % 3 + 1, 0);
		func_frame[i] = xpu_dict_frame(&dict, XPU_FRAME_USER,
					       str("ns%llu::Widget%llu::step%llu(int, std::vector<float> const&)",
						   i % 97, i / 97 % 211, i),
					       mod_str[m]);
	}
	return func_frame[i];
}

static uint32_t kfunc(uint64_t h)
{
	uint32_t i = (uint32_t)(h % NKFUNCS);
	if (!kfunc_frame[i])
		kfunc_frame[i] = xpu_dict_frame(&dict, XPU_FRAME_KERNEL, str("kfunc_%llu", i, 0, 0), 0);
	return kfunc_frame[i];
}

/* Stack i of program p: _start, __libc_start_main, main, then six levels of
 * four-way branches that spell out i (so every index is a distinct path),
 * then up to 31 more frames; 40% end in 3 to 12 kernel frames. */
static uint32_t stack(uint32_t p, uint32_t i)
{
	uint32_t *slot = &stack_id[(size_t)p * per_prog + i], f[XPU_DICT_MAX_DEPTH], n = 0;
	if (*slot)
		return *slot;
	uint64_t path = mix(p, 1);
	f[n++] = func(mix(p, 2));
	f[n++] = func(mix(p, 3));
	f[n++] = func(mix(p, 4));
	uint32_t depth = 6 + (uint32_t)(mix(p * 7919ULL + i, 5) % 32);
	for (uint32_t l = 0; l < depth; l++) {
		uint64_t branch = l < 6 ? (i >> (2 * l)) & 3 : mix(path, i) % 4;
		path = mix(path, branch + 1);
		f[n++] = func(path);
	}
	if (mix(p * 7919ULL + i, 6) % 10 < 4)
		for (uint32_t k = 0, nk = 3 + (uint32_t)(mix(i, p) % 10); k < nk; k++)
			f[n++] = kfunc(mix(mix(i, k), p));
	return *slot = xpu_dict_stack(&dict, f, n);
}

/* The stack of a sample: the hot few most of the time, any of them otherwise. */
static uint32_t pick_stack(uint32_t p)
{
	return stack(p, below(10) < 7 ? below(HOT) : below(per_prog));
}

static uint32_t launch_stack(uint32_t p, uint32_t site)
{
	uint32_t n;
	const uint32_t *fs = xpu_dict_stack_get(&dict, stack(p, site), &n);
	uint32_t f[XPU_DICT_MAX_DEPTH];
	uint32_t user = 0;
	while (user < n && xpu_dict_frame_get(&dict, fs[user])->kind == XPU_FRAME_USER)
		user++;
	memcpy(f, fs, user * sizeof(*f));
	f[user] = launch_frame;
	return xpu_dict_stack(&dict, f, user + 1);
}

/* ---- the event buffer of one tick, written sorted by time ---- */

static struct xpu_event *evs;
static size_t nevs, capevs;

static struct xpu_event *add(uint16_t type, uint16_t source, uint32_t pid, uint32_t tid, uint64_t time)
{
	if (nevs == capevs) {
		capevs = capevs ? capevs * 2 : 65536;
		evs = realloc(evs, capevs * sizeof(*evs));
		if (!evs) {
			perror("genrec");
			exit(1);
		}
	}
	struct xpu_event *e = &evs[nevs++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->source = source;
	e->pid = pid;
	e->tid = tid;
	e->time = time;
	return e;
}

static int by_time(const void *a, const void *b)
{
	const struct xpu_event *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

static void spawn(struct proc *pr, uint64_t now)
{
	pr->pid = next_pid;
	pr->prog = below(NPROGS);
	pr->nthreads = 1 + (below(4) ? below(4) : below(16));
	next_pid += pr->nthreads + 1;
	pr->end = now + (uint64_t)(1 + below(2 * LIFE_S)) * TICK_NS;
	pr->corr = 1;
	pr->comm = prog_str[pr->prog];
	for (uint32_t t = 0; t < pr->nthreads; t++)
		pr->tcomm[t] = t ? str("prog%llu-w%llu", pr->prog, t, 0) : pr->comm;
	nprocs++;
	if (pr->prog < NCUDA) {
		struct xpu_event *e = add(XPU_EV_GPU_PROC, XPU_SRC_GPU, pr->pid, pr->pid, now);
		e->gproc.state = XPU_GPU_PROC_CONNECTED;
		e->gproc.comm = pr->comm;
	}
}

static void cpu_samples(uint64_t t0, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		struct proc *pr = &procs[below(LIVE)];
		uint32_t t = below(pr->nthreads);
		struct xpu_event *e = add(XPU_EV_CPU_SAMPLE, XPU_SRC_CPU, pr->pid, pr->pid + t,
					  t0 + below((uint32_t)TICK_NS));
		e->cpu.stack = pick_stack(pr->prog);
		e->cpu.comm = pr->comm;
		e->cpu.tcomm = pr->tcomm[t];
		e->cpu.uid = 1000 + pr->prog % 4;
		e->cpu.user = user_str[pr->prog % 4];
		e->cpu.cpu = below(CPUS);
	}
}

static struct proc *pick_prog(uint32_t lo, uint32_t hi)
{
	for (int tries = 0; tries < 4 * LIVE; tries++) {
		struct proc *pr = &procs[below(LIVE)];
		if (pr->prog >= lo && pr->prog < hi)
			return pr;
	}
	return NULL;
}

static void gpu_activity(uint64_t t0, uint32_t launches, uint32_t copies)
{
	for (uint32_t k = 0; k < launches; k++) {
		struct proc *pr = pick_prog(0, NCUDA);
		if (!pr)
			return;
		uint64_t at = t0 + below((uint32_t)(TICK_NS * 9 / 10));
		uint32_t site = below(256), kname = (uint32_t)(mix(pr->prog, site) % NGPUKERNELS);
		struct xpu_event *e = add(XPU_EV_GPU_LAUNCH, XPU_SRC_GPU, pr->pid, pr->pid, at);
		e->launch.corr = pr->corr;
		e->launch.stack = launch_stack(pr->prog, site);
		e->launch.api = launch_api;
		e->launch.comm = pr->comm;
		uint64_t start = at + 5000 + below(200000);
		e = add(XPU_EV_GPU_KERNEL, XPU_SRC_GPU, pr->pid, 0, start);
		e->kernel.end = start + 2000 + below(2000000);
		e->kernel.corr = pr->corr++;
		e->kernel.name = gpu_name[kname];
		e->kernel.device = pr->pid % 8;
		e->kernel.stream = 7 + site % 4;
		e->kernel.comm = pr->comm;
	}
	for (uint32_t k = 0; k < copies; k++) {
		struct proc *pr = pick_prog(0, NCUDA);
		if (!pr)
			return;
		uint64_t start = t0 + below((uint32_t)(TICK_NS * 9 / 10));
		struct xpu_event *e = add(XPU_EV_GPU_MEMCPY, XPU_SRC_GPU, pr->pid, 0, start);
		e->memcpy.end = start + 10000 + below(500000);
		e->memcpy.bytes = 4096ULL << below(12);
		e->memcpy.device = pr->pid % 8;
		e->memcpy.kind = 1 + below(2);
		e->memcpy.comm = pr->comm;
	}
}

static struct xpu_event *npu(uint16_t type, struct proc *pr, uint64_t at, uint32_t code)
{
	struct xpu_event *e = add(type, XPU_SRC_NPU, pr ? pr->pid : 0, pr ? pr->pid : 0, at);
	e->npu.code = code;
	e->npu.comm = pr ? pr->comm : 0;
	e->npu.count = 1;
	return e;
}

static void npu_activity(uint64_t t0, uint32_t jobs)
{
	static uint64_t job_key = 1;
	static const uint32_t cmds[] = { 0x6440, 0x6445, 0x6446 };
	for (uint32_t k = 0; k < jobs; k++) {
		struct proc *pr = pick_prog(NCUDA, NCUDA + NNPU);
		if (!pr)
			return;
		uint64_t at = t0 + below((uint32_t)(TICK_NS * 9 / 10));
		uint32_t db = 1 + pr->pid % 4;
		struct xpu_event *e = npu(XPU_EV_NPU_JOB, pr, at, XPU_NPU_JOB_SUBMIT);
		e->npu.aux = db;
		e->npu.arg = job_key;
		uint64_t done = at + 2000000 + below(4000000);
		e = npu(XPU_EV_NPU_IPC, NULL, done, 0x2100);
		e->npu.aux = XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG;
		e = npu(XPU_EV_NPU_JOB, NULL, done + 1000, XPU_NPU_JOB_DONE);
		e->npu.aux = db;
		e->npu.arg = job_key++;
	}
	for (uint32_t i = 0; i < LIVE; i++) {	/* ioctls, as counted per refresh */
		struct proc *pr = &procs[i];
		if (pr->prog < NCUDA || pr->prog >= NCUDA + NNPU)
			continue;
		for (uint32_t c = 0; c < 3; c++) {
			struct xpu_event *e = npu(XPU_EV_NPU_IOCTL, pr, t0 + TICK_NS - 1000, cmds[c]);
			e->npu.count = jobs / 4 + below(20) + 1;
			e->npu.dur_ns = 1000ULL << (c * 3 + below(3));
		}
		struct xpu_event *e = npu(XPU_EV_NPU_MEM, pr, t0 + below((uint32_t)TICK_NS), XPU_NPU_MEM_BO_CREATE);
		e->npu.arg = 1 << 20;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: genrec [-s SECONDS] [-r EVENTS_PER_S] [-k STACKS] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long secs = 3600, rate = 5000, nstacks = 131072;
	int c;
	while ((c = getopt(argc, argv, "s:r:k:")) != -1) {
		if (c == 's')
			secs = atol(optarg);
		else if (c == 'r')
			rate = atol(optarg);
		else if (c == 'k')
			nstacks = atol(optarg);
		else
			usage();
	}
	if (optind != argc - 1 || secs < 1 || rate < 100 || nstacks < NPROGS * HOT)
		usage();

	xpu_dict_init(&dict);
	per_prog = (uint32_t)(nstacks / NPROGS);
	stack_id = calloc((size_t)NPROGS * per_prog, sizeof(*stack_id));
	for (uint32_t p = 0; p < NPROGS; p++)
		prog_str[p] = str("prog%llu", p, 0, 0);
	for (uint32_t u = 0; u < 4; u++)
		user_str[u] = str("user%llu", u, 0, 0);
	for (uint32_t k = 0; k < NGPUKERNELS; k++)
		gpu_name[k] = str("_Z%llugemm_kernel_%lluPKfS0_Pfi", 15 + (k >= 10) + (k >= 100), k, 0);
	launch_api = xpu_dict_cstr(&dict, "cudaLaunchKernel");
	launch_frame = xpu_dict_frame(&dict, XPU_FRAME_LAUNCH, launch_api, 0);

	struct xpu_rec_meta m = { .sample_hz = 99, .ncpus = CPUS, .start_wall_ns = 1700000000000000000ULL,
				  .interval_ns = TICK_NS };
	snprintf(m.host, sizeof(m.host), "genrec");
	snprintf(m.kernel, sizeof(m.kernel), "synthetic");
	snprintf(m.version, sizeof(m.version), "%s", XPU_VERSION);
	char err[512];
	struct xpu_rec_writer *w = xpu_rec_create(argv[optind], &dict, &m, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "genrec: %s\n", err);
		return 1;
	}

	/* About 60% CPU samples, 25% GPU, 15% NPU. */
	uint32_t samples = (uint32_t)(rate * 60 / 100), launches = (uint32_t)(rate * 12 / 100),
		 copies = (uint32_t)(rate / 100), jobs = (uint32_t)(rate * 4 / 100);
	uint64_t events = 0;
	for (uint32_t i = 0; i < LIVE; i++)
		spawn(&procs[i], START_NS);
	for (long t = 0; t < secs; t++) {
		uint64_t t0 = START_NS + (uint64_t)t * TICK_NS;
		for (uint32_t i = 0; i < LIVE; i++)
			if (procs[i].end <= t0) {
				add(XPU_EV_PROC_EXIT, XPU_SRC_CPU, procs[i].pid, procs[i].pid, t0);
				spawn(&procs[i], t0);
			}
		cpu_samples(t0, samples - samples / 10 + below(samples / 5 + 1));
		gpu_activity(t0, launches, copies);
		npu_activity(t0, jobs);
		qsort(evs, nevs, sizeof(*evs), by_time);
		struct xpu_event *tick = add(XPU_EV_TICK, XPU_SRC_CPU, 0, 0, t0 + TICK_NS);
		tick->tick.wall_ns = m.start_wall_ns + (uint64_t)(t + 1) * TICK_NS;
		tick->tick.interval_ns = TICK_NS;
		for (size_t k = 0; k < nevs; k++) {
			int r = xpu_rec_write(w, &evs[k]);
			if (r == 0 && evs[k].type == XPU_EV_TICK)
				r = xpu_rec_flush(w);
			if (r < 0) {
				fprintf(stderr, "genrec: %s: %s\n", argv[optind], strerror(-r));
				return 1;
			}
		}
		events += nevs - 1;	/* the tick is not an event of the stream's count */
		nevs = 0;
	}
	uint64_t bytes = xpu_rec_bytes(w);
	if (xpu_rec_close(w) < 0) {
		fprintf(stderr, "genrec: cannot complete %s\n", argv[optind]);
		return 1;
	}
	printf("events %llu ticks %ld stacks %u processes %llu bytes %llu\n", (unsigned long long)events, secs,
	       xpu_dict_nstacks(&dict), (unsigned long long)nprocs, (unsigned long long)bytes);
	return 0;
}
