// SPDX-License-Identifier: GPL-2.0-only
// A C++ program whose waiter function throws, as autograd's Engine::execute
// does when the backward pass fails: xputop's probes on the waiter must
// leave the exception's unwinding alone (a uretprobe's return address would
// make it end in std::terminate).  It loads the fake-CUPTI injection library
// as gpu_waiter does, so that xputop probes its waiter, launches a kernel in
// each wait and throws from every other one.
//
// Usage: gpu_waiter_throw LIB COUNT
// Prints {"caught": N, "waits": COUNT} and exits 0 when every exception
// reached its handler.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdexcept>
#include <time.h>
#include <unistd.h>

#include "fake_lib.h"

static void (*launch)(uint32_t, uint32_t, uint32_t, const char *);
static void (*kernel)(const char *, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t);
static uint32_t corr;

static uint64_t now()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void standin_throwing_wait(int i)
{
	uint32_t c = ++corr;
	launch(c, 211, 2, "cudaLaunchKernel");
	kernel("throw_kernel", now(), now() + 100000, c, 0, 7, 0);
	usleep(20000);
	if (i % 2)
		throw std::runtime_error("the backward pass failed");
}

__attribute__((noinline)) int standin_step(int i)
{
	try {
		standin_throwing_wait(i);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gpu_waiter_throw LIB COUNT\n");
		return 2;
	}
	struct fake_lib fk;
	if (fake_lib_load(&fk, "gpu_waiter_throw", argv[1]) < 0)
		return 1;
	launch = fk.launch;
	kernel = fk.kernel;
	if (fake_lib_connect(&fk, "gpu_waiter_throw") < 0)
		return 1;
	sleep(1);	// xputop probes the waiter once the library has connected
	int n = atoi(argv[2]), caught = 0;
	for (int i = 0; i < n; i++)
		caught += standin_step(i);
	printf("{\"caught\": %d, \"waits\": %d}\n", caught, n);
	fflush(stdout);
	return caught == n / 2 ? 0 : 1;
}
