/* SPDX-License-Identifier: GPL-2.0-only */
/* A program that calls cudaLaunchKernel through the real libcudart from
 * functions with known names.  Without a GPU every call fails, but the
 * launch probes still see it: the test and the benchmark of xputop's
 * launch-only path.
 *
 * Usage: cuda_launch [-s SECONDS] [-n LAUNCHES] [-i INTERVAL_MS] [-b BUSY_US] [-t THREADS] [-m MIB] [-w SECONDS] [-k]
 *   Each thread launches until SECONDS have passed (default 5) or it made
 *   LAUNCHES, sleeping INTERVAL_MS between launches (default: none).  Three
 *   launches in four come from app_model_step, one from app_model_eval (two
 *   call sites); the last line says how many of each, the wall time per launch
 *   (per thread) and the process's CPU time per launch (uprobes run in it).
 *   -b BUSY_US: each launch after BUSY_US of the thread's own work (a spin
 *   on the clock): a launch-bound thread whose pace a probe's trap slows.
 *   -m MIB: one more thread maps MIB of memory and fills it, over and over,
 *   holding the process's mmap lock as CUDA's driver threads do (a uprobe
 *   is taken out of a process under that lock: its launch probes stay in
 *   for longer after their slice).  -k: launch through __cudaLaunchKernel,
 *   as nvcc's <<<>>> does since CUDA 13 (it jumps to cudaLaunchKernel).
 *   -w SECONDS: wait that long first, libcudart mapped (a Python program
 *   that imported torch and builds its model before its first launch). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double seconds = 5, interval_ms, busy_us, wait_s;
static long limit;
static long step_calls, eval_calls, failures;
static size_t churn_bytes;
static cudaError_t (*stub_launch)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
static volatile int churn_stop;

__attribute__((noinline)) void app_kernel_stub(void)
{
}

__attribute__((noinline)) void app_launch_layer(void)
{
	void *args[1] = { NULL };
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	if ((stub_launch ? stub_launch((const void *)app_kernel_stub, grid, block, args, 0, 0)
			 : cudaLaunchKernel((const void *)app_kernel_stub, grid, block, args, 0, 0)) != cudaSuccess)
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void app_model_step(void)
{
	app_launch_layer();
}

__attribute__((noinline)) void app_model_eval(void)
{
	app_launch_layer();
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *launcher(void *arg)
{
	double t0 = now();
	long i = 0, eval = 0;
	struct timespec gap = { (time_t)(interval_ms / 1000), (long)(interval_ms * 1e6) % 1000000000L };
	for (; (!limit || i < limit) && now() - t0 < seconds; i++) {
		for (double b0 = busy_us > 0 ? now() : 0; busy_us > 0 && (now() - b0) * 1e6 < busy_us;)
			;
		if (i % 4 == 3) {
			app_model_eval();
			eval++;
		} else {
			app_model_step();
		}
		if (interval_ms > 0)
			nanosleep(&gap, NULL);
	}
	__atomic_add_fetch(&step_calls, i - eval, __ATOMIC_RELAXED);
	__atomic_add_fetch(&eval_calls, eval, __ATOMIC_RELAXED);
	return arg;
}

static void *churn(void *arg)
{
	while (!churn_stop) {
		void *p = mmap(NULL, churn_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			       -1, 0);
		if (p == MAP_FAILED)
			break;
		munmap(p, churn_bytes);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int threads = 1, c;
	while ((c = getopt(argc, argv, "s:n:i:b:t:m:w:k")) != -1) {
		switch (c) {
		case 's': seconds = atof(optarg); break;
		case 'n': limit = atol(optarg); break;
		case 'i': interval_ms = atof(optarg); break;
		case 'b': busy_us = atof(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'm': churn_bytes = (size_t)atol(optarg) << 20; break;
		case 'w': wait_s = atof(optarg); break;
		case 'k':
			if (!(*(void **)&stub_launch = dlsym(RTLD_DEFAULT, "__cudaLaunchKernel"))) {
				fprintf(stderr, "this libcudart has no __cudaLaunchKernel\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: cuda_launch [-s SECONDS] [-n LAUNCHES] [-i INTERVAL_MS] [-b BUSY_US] [-t THREADS] "
				"[-m MIB] [-w SECONDS] [-k]\n");
			return 2;
		}
	}
	if (wait_s > 0) {
		struct timespec w = { (time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9) };
		while (nanosleep(&w, &w) < 0)
			;
	}
	pthread_t tids[64];
	if (threads < 1 || threads > 64)
		threads = 1;
	pthread_t churner;
	int churning = churn_bytes && pthread_create(&churner, NULL, churn, NULL) == 0;
	double t0 = now();
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, launcher, NULL);
	launcher(NULL);		/* the main thread is the first launcher */
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	double t = now() - t0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	churn_stop = 1;
	if (churning)
		pthread_join(churner, NULL);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	long total = step_calls + eval_calls;
	fprintf(stderr, "%ld launches failed (no GPU here, as expected)\n", failures);
	printf("launches %ld step %ld eval %ld seconds %.3f us_per_launch %.3f cpu_us_per_launch %.3f start_ns %.0f\n",
	       total, step_calls, eval_calls, t, total ? t * 1e6 * threads / (double)total : 0.0,
	       total ? cpu * 1e6 / (double)total : 0.0, t0 * 1e9);
	return 0;
}
