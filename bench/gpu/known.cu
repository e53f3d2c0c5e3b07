/* SPDX-License-Identifier: GPL-2.0-only */
// A CUDA program with known kernels launched from known functions, and a
// CUDA graph, for bench/gpu/run.sh.  Each kernel spins for a set time; CUDA
// events around each launch measure what the GPU took, and the per-kernel
// totals are written as JSON lines to OUTFILE so xputop's figures can be
// checked against them.
//
// Usage: known ITERATIONS OUTFILE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                        \
	do {                                                                            \
		cudaError_t e_ = (x);                                                   \
		if (e_ != cudaSuccess) {                                                \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

/* Spins for ns nanoseconds of GPU time (the global timer); each kernel is a
 * named wrapper so xputop and the events can tell them apart. */
__device__ void spin(long long ns)
{
	long long t0;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (long long t = t0; t - t0 < ns;)
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}

/* Keeps the GPU busy while the CPU queues the timed launch and its events,
 * so the events measure the kernel and not the time the CPU took to launch
 * it (which is what instrumentation adds to). */
__global__ void blocker_kernel(long long ns)
{
	spin(ns);
}

__global__ void spin_kernel_a(long long ns)
{
	spin(ns);
}

__global__ void spin_kernel_b(long long ns)
{
	spin(ns);
}

__global__ void graph_node_kernel(long long ns)
{
	spin(ns);
}

struct timing {
	const char *name;
	double ms;
	long calls;
};
static timing t_a = { "spin_kernel_a", 0, 0 }, t_b = { "spin_kernel_b", 0, 0 },
	      t_graph = { "graph_node_kernel", 0, 0 };
static cudaEvent_t ev0, ev1;
static cudaStream_t stream;

static void block(void)
{
	blocker_kernel<<<1, 32, 0, stream>>>(300000);
}

static void timed(timing *t, int calls)
{
	float ms;
	CHECK(cudaEventSynchronize(ev1));
	CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
	t->ms += ms;
	t->calls += calls;
}

__attribute__((noinline)) void run_layer_a(void)
{
	block();
	CHECK(cudaEventRecord(ev0, stream));
	spin_kernel_a<<<1, 32, 0, stream>>>(2000000);
	CHECK(cudaEventRecord(ev1, stream));
	timed(&t_a, 1);
}

__attribute__((noinline)) void run_layer_b(void)
{
	block();
	CHECK(cudaEventRecord(ev0, stream));
	spin_kernel_b<<<1, 32, 0, stream>>>(1000000);
	CHECK(cudaEventRecord(ev1, stream));
	timed(&t_b, 1);
}

__attribute__((noinline)) void model_forward(void)
{
	run_layer_a();
	run_layer_b();
}

/* A graph of three kernels in a row, captured once, replayed many times. */
static cudaGraphExec_t make_graph(void)
{
	cudaGraph_t g;
	cudaGraphExec_t exec;
	CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < 3; i++)
		graph_node_kernel<<<1, 32, 0, stream>>>(500000);
	CHECK(cudaStreamEndCapture(stream, &g));
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	return exec;
}

__attribute__((noinline)) void replay_graph(cudaGraphExec_t exec)
{
	block();
	CHECK(cudaEventRecord(ev0, stream));
	CHECK(cudaGraphLaunch(exec, stream));
	CHECK(cudaEventRecord(ev1, stream));
	timed(&t_graph, 3);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100;
	FILE *out = argc > 2 ? fopen(argv[2], "w") : stdout;
	CHECK(cudaStreamCreate(&stream));
	CHECK(cudaEventCreate(&ev0));
	CHECK(cudaEventCreate(&ev1));
	cudaGraphExec_t exec = make_graph();
	for (int i = 0; i < iters; i++) {
		model_forward();
		if (i % 5 == 0)
			replay_graph(exec);
	}
	CHECK(cudaDeviceSynchronize());
	timing *all[] = { &t_a, &t_b, &t_graph };
	for (timing *t : all)
		fprintf(out, "{\"kernel\":\"%s\",\"calls\":%ld,\"event_ms\":%.6f}\n", t->name, t->calls, t->ms);
	fclose(out);
	return 0;
}
