// Back-to-back empty kernels: the worst case for per-launch overhead.
// Usage: empty LAUNCHES  -> prints {"us_per_launch": X}
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel(void)
{
}

__attribute__((noinline)) void launch_empty(void)
{
	empty_kernel<<<1, 1>>>();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	for (int i = 0; i < 1000; i++)
		launch_empty();
	cudaDeviceSynchronize();
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++)
		launch_empty();
	cudaDeviceSynchronize();
	auto t1 = std::chrono::steady_clock::now();
	printf("{\"us_per_launch\": %.4f}\n", std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
	return 0;
}
