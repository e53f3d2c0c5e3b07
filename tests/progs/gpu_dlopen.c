/* SPDX-License-Identifier: GPL-2.0-only */
/* A program that loads the CUDA runtime late, with dlopen(), and then calls
 * cudaLaunchKernel through it from functions with known names, sleeping
 * between launches: xputop must find a library that appears in a process
 * long after it started, whatever the process's CPU use.  Given the driver
 * too, each step also calls its cuLaunchKernel directly.
 *
 * Usage: gpu_dlopen LIBCUDART DELAY_S LAUNCHES INTERVAL_MS [LIBCUDA]
 * Prints how many launches it made of each and when the runtime was loaded. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* cudaLaunchKernel's and cuLaunchKernel's ABI. */
struct dim3 { unsigned x, y, z; };
typedef int (*launch_fn)(const void *fn, struct dim3 grid, struct dim3 block, void **args,
			 size_t shmem, void *stream);
typedef int (*cu_launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

static launch_fn launch;
static cu_launch_fn cu_launch;

__attribute__((noinline)) void late_kernel_stub(void)
{
}

__attribute__((noinline)) void late_launch_layer(void)
{
	void *args[1] = { NULL };
	struct dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	launch((const void *)late_kernel_stub, grid, block, args, 0, NULL);
}

__attribute__((noinline)) void late_driver_layer(void)
{
	void *args[1] = { NULL };
	cu_launch((void *)late_kernel_stub, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
}

__attribute__((noinline)) void late_model_step(void)
{
	late_launch_layer();
	if (cu_launch)
		late_driver_layer();
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&t, NULL);
}

static void *symbol(const char *path, const char *name)
{
	void *lib = dlopen(path, RTLD_NOW);
	void *fn = lib ? dlsym(lib, name) : NULL;
	if (!fn)
		fprintf(stderr, "gpu_dlopen: %s: %s\n", path, dlerror());
	return fn;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: gpu_dlopen LIBCUDART DELAY_S LAUNCHES INTERVAL_MS [LIBCUDA]\n");
		return 2;
	}
	sleep_s(atof(argv[2]));
	uint64_t loaded = now_ns();
	launch = (launch_fn)symbol(argv[1], "cudaLaunchKernel");
	if (argc == 6)
		cu_launch = (cu_launch_fn)symbol(argv[5], "cuLaunchKernel");
	if (!launch || (argc == 6 && !cu_launch))
		return 1;
	long n = atol(argv[3]);
	double gap = atof(argv[4]) / 1000;
	for (long i = 0; i < n; i++) {
		late_model_step();
		if (gap > 0)
			sleep_s(gap);
	}
	printf("runtime %ld driver %ld loaded_ns %llu\n", n, cu_launch ? n : 0, (unsigned long long)loaded);
	return 0;
}
