/* SPDX-License-Identifier: GPL-2.0-only */
/* Runs code spread over a generated library with hundreds of thousands of
 * long C++ symbols (tests/bigsym.py): calls a random function of it, again
 * and again, for SECONDS, so CPU samples land in ever new functions, as they
 * do in a framework such as PyTorch.
 * Usage: bigsym_caller LIB SECONDS */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void bigsym_drive(const char *first, uint32_t n, double secs)
{
	struct timespec t0, t;
	uint64_t x = 88172645463325252ULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 4096; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			((void (*)(void))(uintptr_t)(first + 16 * (x % n)))();
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bigsym_caller LIB SECONDS\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW);
	const char *first = lib ? dlsym(lib, "bigsym_first") : NULL;
	const uint32_t *count = lib ? dlsym(lib, "bigsym_count") : NULL;
	if (!first || !count) {
		fprintf(stderr, "bigsym_caller: %s\n", dlerror());
		return 1;
	}
	bigsym_drive(first, *count, atof(argv[2]));
	return 0;
}
