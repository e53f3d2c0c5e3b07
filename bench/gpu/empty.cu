// Back-to-back empty kernels: the worst case for per-launch overhead.
// Usage: empty LAUNCHES [WARMUP_MS]
//   -> prints {"us_per_launch": X, "cpu_us_per_launch": C, "sys_us_per_launch": S}
// X is wall time; C is the process's CPU time (getrusage RUSAGE_SELF: every
// thread, the injection library's and CUPTI's included, user + system) over
// the same launches, S its system part.  WARMUP_MS (default: 1000 launches
// only) keeps launching for that long first, so that whatever watches the
// process (a library connecting to xputop, a first tracing slice) is in its
// steady state when the count starts.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <sys/resource.h>

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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	long warm_ms = argc > 2 ? atol(argv[2]) : 0;
	for (int i = 0; i < 1000; i++)
		launch_empty();
	cudaDeviceSynchronize();
	auto w0 = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(warm_ms)) {
		for (int i = 0; i < 1000; i++)
			launch_empty();
		cudaDeviceSynchronize();
	}
	double c0 = cpu_us(0), s0 = cpu_us(1);
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++)
		launch_empty();
	cudaDeviceSynchronize();
	auto t1 = std::chrono::steady_clock::now();
	double c1 = cpu_us(0), s1 = cpu_us(1);
	printf("{\"us_per_launch\": %.4f, \"cpu_us_per_launch\": %.4f, \"sys_us_per_launch\": %.4f}\n",
	       std::chrono::duration<double, std::micro>(t1 - t0).count() / n, (c1 - c0) / n, (s1 - s0) / n);
	return 0;
}
