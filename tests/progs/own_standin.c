/* SPDX-License-Identifier: GPL-2.0-only */
/* A launching thread for the own-time sampler (tests/bpf/own.sh): it loads
 * the real injection library (dormant: nothing calls its
 * InitializeInjection) and a stand-in for CUDA's code, then loops: OWN_US of
 * work in its own code, then CUDA_US in the stand-in, three times as long
 * while the library's xputop_tracing word is 1, as tracing slows CUDA's
 * code.  It sets the word itself, at the start of an iteration, for the
 * first 10 ms of every 50, so an iteration is wholly in or out.  The work is
 * counted in loop turns calibrated once, not timed: a clock read inside the
 * stand-in would put its samples in libc or the vDSO.
 *
 * Usage: own_standin INJECT_LIB CUDA_LIB SECONDS [OWN_US CUDA_US]
 * Prints {"pid": P, "tid": T} at start, and at the end
 * {"iters": [OUT, IN]}: the iterations made with the word 0 and 1. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void own_spin(uint64_t loops)
{
	for (volatile uint64_t i = 0; i < loops; i++)
		;
}

/* Loop turns a microsecond, the fastest of a few tries (the least
 * disturbed by other work on the machine). */
static uint64_t calibrate(void)
{
	uint64_t best = UINT64_MAX, n = 20000000;
	for (int k = 0; k < 5; k++) {
		uint64_t t = now_ns();
		own_spin(n);
		t = now_ns() - t;
		best = t < best ? t : best;
	}
	return n * 1000 / best;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 6) {
		fprintf(stderr, "usage: own_standin INJECT_LIB CUDA_LIB SECONDS [OWN_US CUDA_US]\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void *cuda = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	volatile uint32_t *flag = lib ? dlsym(lib, "xputop_tracing") : NULL;
	void (*cuda_spin)(uint64_t) = cuda ? (void (*)(uint64_t))dlsym(cuda, "own_cuda_spin") : NULL;
	if (!flag || !cuda_spin) {
		fprintf(stderr, "own_standin: %s\n", dlerror());
		return 1;
	}
	double secs = atof(argv[3]);
	uint64_t own_us = argc == 6 ? strtoull(argv[4], NULL, 10) : 173;
	uint64_t cuda_us = argc == 6 ? strtoull(argv[5], NULL, 10) : 61;
	uint64_t per_us = calibrate();
	uint64_t iters[2] = { 0, 0 };
	printf("{\"pid\": %d, \"tid\": %ld}\n", getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
	for (uint64_t t = t0; t < end; t = now_ns()) {
		uint32_t on = (t - t0) % 50000000 < 10000000;
		*flag = on;
		own_spin(own_us * per_us);
		cuda_spin((on ? 3 : 1) * cuda_us * per_us);
		iters[on]++;
	}
	*flag = 0;
	printf("{\"iters\": [%llu, %llu], \"loops_per_us\": %llu}\n", (unsigned long long)iters[0],
	       (unsigned long long)iters[1], (unsigned long long)per_us);
	return 0;
}
