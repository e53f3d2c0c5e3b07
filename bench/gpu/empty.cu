/* SPDX-License-Identifier: GPL-2.0-only */
// Back-to-back empty kernels: the worst case for per-launch overhead.
// Usage: empty LAUNCHES [WARMUP_MS]
//   -> prints {"us_per_launch": X, "cpu_us_per_launch": C, "sys_us_per_launch": S,
//              "cycles_per_launch": Y, "kcycles_per_launch": K, "instructions_per_launch": I,
//              "stalls": N, "stall_ms": M, "stall_max_ms": L, "stall_at": [[S, MS], ...]}
// X is wall time; C is the process's CPU time (getrusage RUSAGE_SELF: every
// thread, the injection library's and CUPTI's included, user + system) over
// the same launches, S its system part.  Y, K and I are the CPU's own
// counters over the same launches, every thread of the process (opened
// before CUDA starts any, inherited by all it starts): cycles, the kernel's
// part of them (a uprobe's trap, an ioctl), instructions.  A VM's other
// guests and a descheduled vCPU do not run up these counters as they do
// wall time, so they tell a small cost apart where wall time cannot; null
// where the machine has no such counters (a VM without a virtual PMU).
// N blocks of 64 launches (some 0.2 ms each) took over 1 ms, M ms in all,
// L the longest: where something held the launching thread (a tracer
// attaching, the VM); stall_at: the first 64, each [its start, CLOCK_MONOTONIC
// s (the steady clock), ms].  WARMUP_MS (default: 1000 launches only) keeps
// launching for that long first, so that whatever watches the process (a
// library connecting to xputop, a first tracing slice) is in its steady
// state when the count starts.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

__global__ void empty_kernel(void)
{
}

__attribute__((noinline)) void launch_empty(void)
{
	empty_kernel<<<1, 1>>>();
}

static double cpu_us(int sys_only)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double sys = ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
	return sys_only ? sys : sys + ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec;
}

/* A hardware counter of this process and every thread it starts from now
 * on (inherit: read, it sums them, running or gone), or -1. */
static int hw_counter(uint64_t config, int kernel_only)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = config;
	a.inherit = 1;
	a.exclude_user = kernel_only;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The counter's value, scaled where it shared the PMU with others; -1
 * where it cannot be read or never ran. */
static double hw_read(int fd)
{
	uint64_t v[3];
	if (fd < 0 || read(fd, v, sizeof(v)) != (ssize_t)sizeof(v) || !v[2])
		return -1;
	return (double)v[0] * ((double)v[1] / (double)v[2]);
}

#define STALL_BLOCK 64
#define STALL_MS 1.0
#define MAX_STALLS_AT 64

static void put_per(const char *name, double a, double b, long n)
{
	if (a < 0 || b < 0)
		printf(", \"%s\": null", name);
	else
		printf(", \"%s\": %.1f", name, (b - a) / (double)n);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	long warm_ms = argc > 2 ? atol(argv[2]) : 0;
	/* Before the first CUDA call: CUDA's threads, and an injection
	 * library's, start after it. */
	int hw[3] = { hw_counter(PERF_COUNT_HW_CPU_CYCLES, 0), hw_counter(PERF_COUNT_HW_CPU_CYCLES, 1),
		      hw_counter(PERF_COUNT_HW_INSTRUCTIONS, 0) };
	for (int i = 0; i < 1000; i++)
		launch_empty();
	cudaDeviceSynchronize();
	auto w0 = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(warm_ms)) {
		for (int i = 0; i < 1000; i++)
			launch_empty();
		cudaDeviceSynchronize();
	}
	double h0[3], h1[3];
	for (int i = 0; i < 3; i++)
		h0[i] = hw_read(hw[i]);
	double c0 = cpu_us(0), s0 = cpu_us(1);
	auto t0 = std::chrono::steady_clock::now();
	/* Stalls: a block of STALL_BLOCK launches (some 0.2 ms) that took over
	 * STALL_MS, its whole time summed (something held the launching
	 * thread: a tracer attaching, the VM, a page fault). */
	auto tb = t0;
	static double stall_at[MAX_STALLS_AT][2];	/* when (steady clock, s), how long (ms) */
	long stalls = 0;
	double stall_ms = 0, stall_max = 0;
	for (long i = 0; i < n; i++) {
		launch_empty();
		if ((i + 1) % STALL_BLOCK == 0) {
			auto t = std::chrono::steady_clock::now();
			double ms = std::chrono::duration<double, std::milli>(t - tb).count();
			if (ms > STALL_MS) {
				if (stalls < MAX_STALLS_AT) {
					stall_at[stalls][0] = std::chrono::duration<double>(tb.time_since_epoch()).count();
					stall_at[stalls][1] = ms;
				}
				stalls++;
				stall_ms += ms;
				stall_max = ms > stall_max ? ms : stall_max;
			}
			tb = t;
		}
	}
	cudaDeviceSynchronize();
	auto t1 = std::chrono::steady_clock::now();
	double c1 = cpu_us(0), s1 = cpu_us(1);
	for (int i = 0; i < 3; i++)
		h1[i] = hw_read(hw[i]);
	printf("{\"us_per_launch\": %.4f, \"cpu_us_per_launch\": %.4f, \"sys_us_per_launch\": %.4f",
	       std::chrono::duration<double, std::micro>(t1 - t0).count() / n, (c1 - c0) / n, (s1 - s0) / n);
	put_per("cycles_per_launch", h0[0], h1[0], n);
	put_per("kcycles_per_launch", h0[1], h1[1], n);
	put_per("instructions_per_launch", h0[2], h1[2], n);
	printf(", \"stalls\": %ld, \"stall_ms\": %.2f, \"stall_max_ms\": %.2f, \"stall_at\": [", stalls, stall_ms,
	       stall_max);
	for (long i = 0; i < stalls && i < MAX_STALLS_AT; i++)
		printf("%s[%.4f, %.2f]", i ? ", " : "", stall_at[i][0], stall_at[i][1]);
	printf("]}\n");
	return 0;
}
