/* SPDX-License-Identifier: GPL-2.0-only */
/* A CUDA program without a GPU: it loads the injection library built on the
 * fake CUPTI (libxputop_inject_fake.so) and plays a known workload through
 * it, from functions with known names, so the whole GPU path of xputop can be
 * checked on a machine without a GPU.
 *
 * Usage: gpu_standin LIB SECONDS [RATES [nowait]]
 * Prints the expected per-kernel totals as JSON lines on stdout at the end.
 * With RATES, it runs flat out (no pause between steps) and writes to that
 * file, every 100 ms, "MS STEPS CONNECTED CPU_US": the steps done in the
 * slice, whether a monitor was connected and the CPU time the process (all
 * its threads, the library's included) used in the slice, so tests can see
 * it keep its speed when the monitor stalls or dies, in steps per CPU time
 * too where other programs take the CPUs.  "nowait" starts without a monitor.
 * STANDIN_FORK=1 forks a child at step 5 that launches (through the
 * library's forked copy, which must stay silent) and exits; its kernels are
 * not in the printed totals.  STANDIN_DEEP=N: every tenth step launches
 * deep_kernel N calls further down (deeper than the 127 frames the kernel's
 * frame-pointer walk stops at). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_lib.h"

#define RUNTIME 2
#define DRIVER 1
#define CBID_LAUNCH_KERNEL 211	/* cudaLaunchKernel_v7000 */
#define CBID_GRAPH_LAUNCH 311	/* cudaGraphLaunch_v10000 */
#define CBID_CU_LAUNCH_KERNEL 307	/* cuLaunchKernel */

static void (*launch)(uint32_t, uint32_t, uint32_t, const char *);
static void (*kernel)(const char *, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t);
static uint32_t corr;
static uint64_t clock_ns;	/* GPU time line, advanced by each kernel */

static struct { const char *name; uint64_t calls, ns; } totals[8];

static uint64_t clock_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

static void run_kernel(const char *name, uint32_t c, uint64_t dur, uint32_t graph)
{
	uint64_t start = clock_ns > now() ? clock_ns : now();
	kernel(name, start, start + dur, c, 0, 7, graph);
	clock_ns = start + dur;
	for (int i = 0; i < 8; i++) {
		if (!totals[i].name || strcmp(totals[i].name, name) == 0) {
			totals[i].name = name;
			totals[i].calls++;
			totals[i].ns += dur;
			break;
		}
	}
}

__attribute__((noinline)) void standin_matmul(void)
{
	uint32_t c = ++corr;
	launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
	run_kernel("_Z13matmul_kernelPfS_S_i", c, 2000000, 0);
}

__attribute__((noinline)) void standin_relu(void)
{
	uint32_t c = ++corr;
	launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
	run_kernel("relu_kernel", c, 1000000, 0);
}

/* Two PyTorch kernels, named as CUPTI names them, that differ only in the
 * functor's dtype: FillFunctor<int> and FillFunctor<bool>. */
__attribute__((noinline)) void standin_fill(void)
{
	static const char *const fill[] = {
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_",
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIbEESt5arrayIPcLm1EEEEviT0_T1_",
	};
	for (int i = 0; i < 2; i++) {
		uint32_t c = ++corr;
		launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
		run_kernel(fill[i], c, 100000 * (i + 1), 0);
	}
}

__attribute__((noinline)) void standin_forward(void)
{
	standin_matmul();
	standin_relu();
	standin_fill();
}

/* One graph launch runs three kernels, all with the launch's correlation id. */
__attribute__((noinline)) void standin_graph_replay(void)
{
	uint32_t c = ++corr;
	launch(c, CBID_GRAPH_LAUNCH, RUNTIME, "cudaGraphLaunch");
	for (int i = 0; i < 3; i++)
		run_kernel("graph_node_kernel", c, 500000, 42);
}

__attribute__((noinline)) void standin_driver_launch(void)
{
	uint32_t c = ++corr;
	launch(c, CBID_CU_LAUNCH_KERNEL, DRIVER, "cuLaunchKernel");
	run_kernel("driver_kernel", c, 300000, 0);
}

/* Functions without frame pointers, like PyTorch's: only DWARF unwinding
 * gets from the launch back to standin_train_step. */
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer"), optimize("no-optimize-sibling-calls")))
static volatile int sink;

NOFP void standin_nofp_inner(void)
{
	volatile char pad[64];
	pad[0] = 1;
	uint32_t c = ++corr;
	launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
	run_kernel("nofp_kernel", c, 400000, 0);
	sink += pad[0];
}

NOFP void standin_nofp_outer(void)
{
	volatile long pad[8];
	pad[1] = 2;
	standin_nofp_inner();
	sink += (int)pad[1];
}

static int deep;

__attribute__((noinline, optimize("no-optimize-sibling-calls"))) void standin_deep(int n)
{
	volatile int pad = n;
	if (n > 0) {
		standin_deep(n - 1);
		sink += pad;
		return;
	}
	uint32_t c = ++corr;
	launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
	run_kernel("deep_kernel", c, 200000, 0);
}

__attribute__((noinline)) void standin_train_step(int iter)
{
	if (deep && iter % 10 == 5)
		standin_deep(deep);
	standin_forward();
	if (iter % 10 == 0)
		standin_graph_replay();
	standin_driver_launch();
	standin_nofp_outer();
}

/* What `xputop -- CMD` is checked for: who we run as, the variable, and
 * whether we can load the library it names as CUDA would (then let it go, so
 * that only the fake one is there when xputop looks at our maps). */
static void say_injection(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	fprintf(stderr, "gpu_standin: uid=%d CUDA_INJECTION64_PATH=%s", (int)getuid(), inj ? inj : "");
	if (!inj || !*inj) {
		fprintf(stderr, "\n");
		return;
	}
	void *h = dlopen(inj, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, " cannot be loaded: %s\n", dlerror());
		return;
	}
	fprintf(stderr, dlsym(h, "InitializeInjection") ? " loads\n" : " loads, but has no InitializeInjection\n");
	dlclose(h);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gpu_standin LIB SECONDS\n");
		return 2;
	}
	struct fake_lib lib;
	if (fake_lib_load(&lib, "gpu_standin", argv[1]) < 0)
		return 1;
	launch = lib.launch;
	kernel = lib.kernel;
	say_injection();
	deep = getenv("STANDIN_DEEP") ? atoi(getenv("STANDIN_DEEP")) : 0;
	FILE *rates = argc > 3 ? fopen(argv[3], "w") : NULL;
	int nowait = argc > 4 && strcmp(argv[4], "nowait") == 0;
	if (argc > 3 && !rates) {
		perror(argv[3]);
		return 1;
	}
	if (nowait)
		lib.init();
	else if (fake_lib_connect(&lib, "gpu_standin") < 0)
		return 1;
	double secs = atof(argv[2]);
	uint64_t end = now() + (uint64_t)(secs * 1e9);
	uint64_t t0 = now(), slice = t0 + 100000000ULL, steps = 0, cpu0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
	const char *fk = getenv("STANDIN_FORK");
	for (int iter = 0; now() < end; iter++) {
		if (iter == 5 && fk && *fk == '1') {
			uint64_t saved = clock_ns;
			pid_t child = fork();
			if (child == 0) {
				for (int i = 0; i < 3; i++)
					standin_forward();
				exit(0);
			}
			int st = -1;
			if (child > 0)
				waitpid(child, &st, 0);
			clock_ns = saved;
			fprintf(stderr, "gpu_standin: forked child %d exited with %d\n", (int)child, st);
		}
		standin_train_step(iter);
		if (!rates) {
			usleep(20000);
			continue;
		}
		steps++;
		if (now() >= slice) {
			uint64_t cpu = clock_of(CLOCK_PROCESS_CPUTIME_ID);	/* every thread's */
			fprintf(rates, "%llu %llu %d %llu\n", (unsigned long long)((slice - t0) / 1000000),
				(unsigned long long)steps, lib.connected(), (unsigned long long)((cpu - cpu0) / 1000));
			fflush(rates);
			steps = 0;
			cpu0 = cpu;
			slice += 100000000ULL;
		}
	}
	for (int i = 0; i < 8 && totals[i].name; i++)
		printf("{\"kernel\":\"%s\",\"calls\":%llu,\"total_ns\":%llu,\"pid\":%d}\n", totals[i].name,
		       (unsigned long long)totals[i].calls, (unsigned long long)totals[i].ns, (int)getpid());
	fflush(stdout);
	sleep(1);	/* the last kernels are flushed while the library is still up */
	return 0;
}
