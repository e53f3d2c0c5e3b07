/* SPDX-License-Identifier: GPL-2.0-only */
/* A CUDA program without a GPU for the injection library's own CUPTI layer
 * (inject/cupti.c): it loads the stand-in libcupti.so.13
 * (tests/fake/stand_cupti.c) where the library's dlopen finds it, then the
 * library CUDA_INJECTION64_PATH names and calls its InitializeInjection, as
 * CUDA does, and launches kernels at a steady rate from functions with
 * known names.
 *
 * Usage: cupti_standin [-e] [-o] [-q] [-x] [-b US] [-c LIBCUDART] [-g SECS] [-l MS] [-T MS] [-r RATE]
 *                      STAND_LIB SECONDS
 *   -r RATE  launches a second (default 30000), made every millisecond
 *   -e       the first launch waits for kernel activity, not only for the
 *            library to attach (exact mode: then every kernel is traced)
 *   -q       a deep queue: a first kernel of 1.5 s, then as much GPU time
 *            as launch interval, so the GPU stays 1.5 s behind the launches
 *   -l MS    the GPU MS ms behind, as -q (a first kernel of MS ms, then as
 *            much GPU time as launch interval, the graph's kernel counted in
 *            from the start: use it with -g 0)
 *   -x       exits with the GPU still busy (no cudaDeviceSynchronize)
 *   -g SECS  from SECS into the run, a CUDA graph is instantiated and each
 *            step replays it too (graph_kernel, from standin_graph)
 *   -T MS    CUDA's teardown at exit takes MS ms, in an atexit handler
 *            registered once the library is initialized, as CUDA's runtime
 *            registers its own (the stand-in counts CUPTI calls during it)
 *   -b US    launch-bound: no pace, each launch after US us of the
 *            program's own work (a spin in its own code), as a PyTorch
 *            thread between launches
 *   -c LIBCUDART  each launch also calls that libcudart's cudaLaunchKernel
 *            (which fails without a GPU): xputop's launch probes trap it,
 *            as they trap a PyTorch process's launches
 *   -o       plays another profiler too: it subscribes to the launches
 *            before the library is initialized, and counts them
 * It starts once the library has tried to subscribe to CUPTI (an xputop
 * accepted it: that is when the library subscribes), at most 10 s after it
 * is loaded.
 * Prints each kernel's exact totals as JSON lines, as gpu_standin does, and
 * last, after the library's own exit flush, the stand-in's counters as one
 * line {"stand_cupti": {...}, "pid": PID}; with -o first a line
 * {"other_profiler": {"launches": N, "seen": N}}: the launches made since it
 * subscribed, and those its callback saw.  (The library keeps CUPTI for a
 * whole connection, so a profiler that comes later cannot subscribe: only
 * one that came first is played.) */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void (*launch)(const char *, uint64_t);
static void (*graph_launch)(const char *, uint64_t);
static void (*graph_instantiate)(void);
static uint64_t graph_at_ns, play_start;	/* -g: when the graph comes in, from play_start */
static int graph_made;
static void (*sync_gpu)(void);
static uint64_t (*counter)(const char *);
static int (*stats)(char *, size_t);

static struct {
	const char *name;
	uint64_t calls, ns;
} totals[4];
static uint64_t gemm_ns, softmax_ns;

/* The other profiler (-o). */
static struct {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
	int on;
	uint64_t launches, seen;
} other;

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The kernel's exact totals (at most four kernels). */
static void count_kernel(const char *name, uint64_t ns)
{
	for (int i = 0; i < 4; i++) {
		if (!totals[i].name || strcmp(totals[i].name, name) == 0) {
			totals[i].name = name;
			totals[i].calls++;
			totals[i].ns += ns;
			break;
		}
	}
}

static cudaError_t (*real_launch)(const void *, dim3, dim3, void **, size_t, cudaStream_t);	/* -c */

__attribute__((noinline)) void standin_kernel_stub(void)
{
}

static void run_kernel(const char *name, uint64_t ns)
{
	if (real_launch) {
		dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
		real_launch((const void *)standin_kernel_stub, grid, block, NULL, 0, 0);
	}
	launch(name, ns);
	other.launches += other.on;
	count_kernel(name, ns);
}

static uint64_t prefill_ns = 1500000000ULL;	/* -q, -l */

__attribute__((noinline)) void standin_prefill(void)
{
	run_kernel("prefill_kernel", prefill_ns);
}

__attribute__((noinline)) void standin_gemm(void)
{
	run_kernel("gemm_kernel", gemm_ns);
}

__attribute__((noinline)) void standin_softmax(void)
{
	run_kernel("softmax_kernel", softmax_ns);
}

/* With -g, once it is time: a graph of one kernel, replayed. */
__attribute__((noinline)) void standin_graph(void)
{
	if (!graph_made) {
		graph_instantiate();
		graph_made = 1;
	}
	graph_launch("graph_kernel", softmax_ns);
	count_kernel("graph_kernel", softmax_ns);
}

/* Three launches: one gemm, two softmax (and with -g, in time, a graph). */
__attribute__((noinline)) void standin_step(void)
{
	standin_gemm();
	standin_softmax();
	standin_softmax();
	if (graph_at_ns && now() - play_start >= graph_at_ns)
		standin_graph();
}

static void CUPTIAPI other_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				    const void *data)
{
	if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER)
		other.seen++;
}

/* The other profiler takes CUPTI before the library is initialized, as a
 * tool loaded first in the process would. */
static void other_profiler(void)
{
	CUpti_SubscriberHandle h;
	if (other.subscribe(&h, other_callback, NULL) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_standin: the other profiler could not subscribe\n");
		exit(1);
	}
	other.on = other.enable(1, h, CUPTI_CB_DOMAIN_RUNTIME_API,
				CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == CUPTI_SUCCESS;
	fprintf(stderr, "cupti_standin: another profiler subscribed%s\n",
		other.on ? "" : ", but got no callbacks");
}

/* Runs after the injection library's exit flush (registered before it:
 * atexit runs handlers last in, first out), so the counters include what
 * that flush handed over. */
static void print_stats(void)
{
	char buf[2048];
	stats(buf, sizeof(buf));
	printf("{\"stand_cupti\":%s,\"pid\":%d}\n", buf, (int)getpid());
	fflush(stdout);
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "cupti_standin: %s\n", dlerror());
		exit(1);
	}
	return p;
}

/* Until the library has tried to subscribe (an xputop accepted it: the
 * calls before are the other profiler's) or, with exact, turned kernel
 * activity on.  Returns 0, or -1 after 10 s. */
static int wait_monitor(int exact, uint64_t calls_before)
{
	uint64_t t0 = now();
	while (now() - t0 < 10000000000ULL) {
		if (exact ? counter("kernel_activity") : counter("subscribe_calls") > calls_before) {
			fprintf(stderr, "cupti_standin: the library attached after %.0f ms\n",
				(double)(now() - t0) / 1e6);
			return 0;
		}
		usleep(1000);
	}
	return -1;
}

static uint64_t bound_ns;	/* -b */
static uint64_t launching_cpu_ns;	/* -b: this thread's CPU time from its first launch to its last */

static uint64_t thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
static double turns_per_ns;	/* of standin_work's loop, measured at the start */

/* The program's own work: a set number of turns in its own code, about ns
 * of CPU (work, not a deadline: a thread kept off the CPU meanwhile does
 * as much of it, as a real program would). */
__attribute__((noinline)) void standin_work(uint64_t ns)
{
	volatile uint64_t x = 0;
	for (uint64_t i = (uint64_t)((double)ns * turns_per_ns); i > 0; i--)
		x = x + 1;
}

static uint64_t cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* How many turns of standin_work's loop a ns takes: the fastest of a few
 * tries of 20 million, by the thread's CPU time (wall time counted the
 * time a loaded machine kept it off the CPU: in a sanitizer pass beside
 * other suites it made 5 us of work of the 20 asked, and launched 3 times
 * as fast). */
static void calibrate(void)
{
	double best = 0;
	turns_per_ns = 1;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = cpu_now();
		standin_work(20000000);
		uint64_t d = cpu_now() - t0;
		double r = d ? 2e7 / (double)d : 0;
		best = r > best ? r : best;
	}
	turns_per_ns = best > 0 ? best : 1;
}

/* 0.5 to 1.5 times ns, at random: a program's steps are not all alike, and
 * a loop of one length would fall on the samplers' periods (a sample every
 * 200 us landing at one point of a 120 us loop). */
static uint64_t jitter(uint64_t ns)
{
	static uint64_t s = 0x9E3779B97F4A7C15ULL;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return ns / 2 + s % (ns + 1);
}

/* Launches RATE a second for secs, made every millisecond: a stall is made
 * up at once, so the rate holds over the run.  Launch-bound (-b): as fast
 * as its own work between launches lets it. */
static void play(double secs, uint64_t rate)
{
	uint64_t t0 = now(), end = t0 + (uint64_t)(secs * 1e9), made = 0;
	play_start = t0;
	if (bound_ns) {
		calibrate();
		launching_cpu_ns = thread_cpu();
		while (now() < end) {
			standin_work(jitter(3 * bound_ns));
			standin_step();
		}
		launching_cpu_ns = thread_cpu() - launching_cpu_ns;
		return;
	}
	struct timespec tick;
	clock_gettime(CLOCK_MONOTONIC, &tick);
	for (uint64_t t = t0; t < end; t = now()) {
		uint64_t due = (t - t0) * rate / 1000000000ULL;
		while (made < due) {
			standin_step();
			made += 3;
		}
		tick.tv_nsec += 1000000;
		if (tick.tv_nsec >= 1000000000) {
			tick.tv_sec++;
			tick.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
	}
}

int main(int argc, char **argv)
{
	int exact = 0, deep = 0, lag = 0, nosync = 0, with_other = 0, c;
	uint64_t teardown_ms = 0;
	uint64_t rate = 30000;
	const char *cudart = NULL;
	while ((c = getopt(argc, argv, "eoqxb:c:g:l:T:r:")) != -1) {
		switch (c) {
		case 'e':
			exact = 1;
			break;
		case 'o':
			with_other = 1;
			break;
		case 'q':
			deep = 1;
			break;
		case 'x':
			nosync = 1;
			break;
		case 'l':
			deep = lag = 1;
			prefill_ns = (uint64_t)(atof(optarg) * 1e6);
			break;
		case 'r':
			rate = strtoull(optarg, NULL, 10);
			break;
		case 'b':
			bound_ns = strtoull(optarg, NULL, 10) * 1000ULL;
			break;
		case 'c':
			cudart = optarg;
			break;
		case 'T':
			teardown_ms = strtoull(optarg, NULL, 10);
			break;
		case 'g':
			graph_at_ns = (uint64_t)(atof(optarg) * 1e9);
			if (!graph_at_ns)
				graph_at_ns = 1;
			break;
		default:
			return 2;
		}
	}
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (argc - optind != 2 || !rate || !inj || !*inj) {
		fprintf(stderr, "usage: CUDA_INJECTION64_PATH=LIB cupti_standin [-e] [-o] [-q] [-x] [-b US] "
				"[-c LIBCUDART] [-g SECS] [-l MS] [-T MS] [-r RATE] STAND_LIB SECONDS\n");
		return 2;
	}
	if (cudart) {
		void *rt = dlopen(cudart, RTLD_NOW);
		if (!rt) {
			fprintf(stderr, "cupti_standin: %s\n", dlerror());
			return 1;
		}
		*(void **)&real_launch = sym(rt, "cudaLaunchKernel");
	}
	/* Global, so that the library's dlopen("libcupti.so.13", RTLD_NOLOAD)
	 * finds it, as it finds the libcupti a PyTorch process already has. */
	void *stand = dlopen(argv[optind], RTLD_NOW | RTLD_GLOBAL);
	if (!stand) {
		fprintf(stderr, "cupti_standin: %s\n", dlerror());
		return 1;
	}
	launch = (void (*)(const char *, uint64_t))sym(stand, "stand_cuda_launch");
	sync_gpu = (void (*)(void))sym(stand, "stand_cuda_sync");
	graph_launch = (void (*)(const char *, uint64_t))sym(stand, "stand_cuda_graph_launch");
	graph_instantiate = (void (*)(void))sym(stand, "stand_cuda_graph_instantiate");
	counter = (uint64_t(*)(const char *))sym(stand, "stand_cupti_stat");
	stats = (int (*)(char *, size_t))sym(stand, "stand_cupti_stats");
	*(void **)&other.subscribe = sym(stand, "cuptiSubscribe");
	*(void **)&other.enable = sym(stand, "cuptiEnableCallback");
	void *lib = dlopen(inj, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cupti_standin: %s\n", dlerror());
		return 1;
	}
	int (*init)(void) = (int (*)(void))sym(lib, "InitializeInjection");
	atexit(print_stats);
	if (with_other)
		other_profiler();
	uint64_t calls_before = counter("subscribe_calls");
	init();
	if (teardown_ms)
		((void (*)(uint64_t))sym(stand, "stand_cuda_teardown_at_exit"))(teardown_ms);
	if (wait_monitor(exact, calls_before) < 0) {
		fprintf(stderr, "cupti_standin: the library did not attach CUPTI in 10 s (no xputop?)\n");
		return 1;
	}
	/* A step of three launches takes 0.6 of its three launch intervals on
	 * the GPU (busy a fifth of the time), or with -q all three (the queue
	 * the first kernel made stays as deep; with -l the graph's kernel is
	 * one of them). */
	uint64_t interval = 1000000000ULL / rate;
	softmax_ns = deep ? interval / 2 : interval / 10;
	gemm_ns = deep ? 3 * interval - (lag ? 3 : 2) * softmax_ns : 4 * interval / 10;
	if (deep)
		standin_prefill();
	play(atof(argv[optind + 1]), rate);
	if (!nosync)
		sync_gpu();
	if (with_other)
		printf("{\"other_profiler\":{\"launches\":%llu,\"seen\":%llu}}\n",
		       (unsigned long long)other.launches, (unsigned long long)other.seen);
	if (launching_cpu_ns)
		printf("{\"launching_cpu_ns\":%llu,\"pid\":%d}\n", (unsigned long long)launching_cpu_ns, (int)getpid());
	for (int i = 0; i < 4 && totals[i].name; i++)
		printf("{\"kernel\":\"%s\",\"calls\":%llu,\"total_ns\":%llu,\"pid\":%d}\n", totals[i].name,
		       (unsigned long long)totals[i].calls, (unsigned long long)totals[i].ns, (int)getpid());
	fflush(stdout);
	return 0;
}
