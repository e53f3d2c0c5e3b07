/* A program that calls cudaLaunchKernel through the real libcudart from
 * functions with known names.  Without a GPU every call fails, but the
 * launch probes still see it: the test of xputop's launch-only path.
 * Usage: cuda_launch SECONDS */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long failures;

__attribute__((noinline)) void app_kernel_stub(void)
{
}

__attribute__((noinline)) void app_launch_layer(void)
{
	void *args[1] = { NULL };
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	if (cudaLaunchKernel((const void *)app_kernel_stub, grid, block, args, 0, 0) != cudaSuccess)
		failures++;
}

__attribute__((noinline)) void app_model_step(void)
{
	app_launch_layer();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		app_model_step();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%ld launches failed (no GPU here, as expected)\n", failures);
	return 0;
}
