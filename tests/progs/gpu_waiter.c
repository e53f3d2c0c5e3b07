/* SPDX-License-Identifier: GPL-2.0-only */
/* A training step without a GPU, as autograd runs it: the main thread
 * launches the forward pass itself, then waits in a known function
 * (standin_wait_for_worker, the stand-in for autograd's Engine::execute)
 * while a worker thread (the engine's) launches the backward kernels; between
 * steps it has the worker launch once more while it waits elsewhere
 * (standin_poll_worker: no waiter), so that those launches are made outside
 * any wait.  The main thread launches one kernel inside the waiter itself.  Launches and kernels go through the fake-CUPTI injection
 * library (libxputop_inject_fake.so), as gpu_standin's do.
 *
 * Usage: gpu_waiter LIB SECONDS [free|nodes]
 *   free: the main thread never enters the waiter (it polls for every job),
 *         so none of the worker's launches is made inside a wait.
 *   nodes: as autograd makes and runs nodes (the node probes, issue 26):
 *         the forward's layer_a_forward and layer_b_forward each make a node
 *         (standin_make_node, given an edge whose first word is the node);
 *         the worker runs nodes A, B and C, never made
 *         (standin_evaluate_function, given the node), each launching its
 *         kernel, while the main thread waits in the waiter.  Nodes E and F
 *         are made alike from layer_e_forward and layer_f_forward, but for
 *         the caller's caller (standin_linear below).
 * Prints the kernels' totals as JSON lines, as gpu_standin does. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_lib.h"

#define RUNTIME 2
#define CBID_LAUNCH_KERNEL 211	/* cudaLaunchKernel_v7000 */

enum { JOB_NONE, JOB_BACKWARD, JOB_OUTSIDE, JOB_NODES, JOB_QUIT };
#define KINDS 10

static void (*launch)(uint32_t, uint32_t, uint32_t, const char *);
static void (*kernel)(const char *, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int job, done, first_backward = 1;
static uint32_t corr;
static uint64_t clock_ns;
static struct { const char *name; uint64_t calls, ns; } totals[KINDS];

/* autograd's Node (its vtable pointer first) and Edge (the node first). */
struct node {
	const void *vptr;
	const char *kernel;
};
struct edge {
	struct node *node;
	uint64_t input_nr;
};
static struct node node_a = { &node_a, "node_a_kernel" }, node_b = { &node_b, "node_b_kernel" },
		   node_c = { &node_c, "node_c_kernel" }, node_e = { &node_e, "node_e_kernel" },
		   node_f = { &node_e, "node_f_kernel" };

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One launch and its kernel; any thread. */
static void run_kernel(const char *name, uint64_t dur)
{
	pthread_mutex_lock(&lock);
	uint32_t c = ++corr;
	pthread_mutex_unlock(&lock);
	launch(c, CBID_LAUNCH_KERNEL, RUNTIME, "cudaLaunchKernel");
	pthread_mutex_lock(&lock);
	uint64_t start = clock_ns > now() ? clock_ns : now();
	kernel(name, start, start + dur, c, 0, 7, 0);
	clock_ns = start + dur;
	for (int i = 0; i < KINDS; i++) {
		if (!totals[i].name || strcmp(totals[i].name, name) == 0) {
			totals[i].name = name;
			totals[i].calls++;
			totals[i].ns += dur;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void standin_mm_backward(void)
{
	run_kernel("mm_backward_kernel", 1000000);
	run_kernel("mm_backward_kernel", 1000000);
}

__attribute__((noinline)) void standin_outside_launch(void)
{
	run_kernel("outside_kernel", 500000);
}

/* autograd's set_gradient_edge(const Tensor&, Edge): the forward made a node. */
__attribute__((noinline)) void standin_make_node(const void *tensor, const struct edge *e)
{
	__asm__ volatile("" : : "r"(tensor), "r"(e) : "memory");
}

/* Engine::evaluate_function(graph_task, node): a node's backward.  The
 * first takes as long as a real first one: xputop probes where it returns
 * to when it sees it, and finds the worker still inside it. */
__attribute__((noinline)) void standin_evaluate_function(void *graph_task, struct node *n)
{
	static int first = 1;
	if (first) {
		first = 0;
		usleep(300000);
	}
	run_kernel(n->kernel, 300000);
	__asm__ volatile("" : : "r"(graph_task) : "memory");
}

/* From one call site, as autograd's thread_main loop. */
__attribute__((noinline)) void standin_run_nodes(void)
{
	struct node *ready[] = { &node_a, &node_b, &node_c, &node_e, &node_f };
	for (int i = 0; i < 5; i++)
		standin_evaluate_function(NULL, ready[i]);
}

/* The engine thread: runs the jobs the main thread posts. */
__attribute__((noinline)) void *standin_engine_thread(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		while (job == JOB_NONE)
			pthread_cond_wait(&cond, &lock);
		int j = job;
		pthread_mutex_unlock(&lock);
		if (j == JOB_QUIT)
			return NULL;
		/* The first backward pass takes as long as a real first one
		 * (1 s: a loaded CI machine took more than 300 ms): xputop
		 * probes where the waiter returns to when it sees the first
		 * wait, and finds the main thread still inside it. */
		if (j == JOB_BACKWARD && first_backward) {
			first_backward = 0;
			usleep(1000000);
		}
		if (j == JOB_BACKWARD)
			standin_mm_backward();
		else if (j == JOB_NODES)
			standin_run_nodes();
		else
			standin_outside_launch();
		pthread_mutex_lock(&lock);
		job = JOB_NONE;
		done = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
}

static void post(int j)
{
	pthread_mutex_lock(&lock);
	job = j;
	done = 0;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* The waiter: blocks until the posted job is done, having launched a
 * kernel of its own meanwhile (autograd's caller runs the CPU-queue nodes
 * itself). */
__attribute__((noinline)) void standin_wait_for_worker(int j)
{
	post(j);
	run_kernel("wait_kernel", 100000);
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

/* Not a waiter: the same wait, by polling, in a function of another name. */
__attribute__((noinline)) void standin_poll_worker(int j)
{
	post(j);
	for (;;) {
		pthread_mutex_lock(&lock);
		int d = done;
		pthread_mutex_unlock(&lock);
		if (d)
			return;
		usleep(200);
	}
}

__attribute__((noinline)) void standin_forward(void)
{
	run_kernel("forward_kernel", 2000000);
}

__attribute__((noinline)) void layer_a_forward(void)
{
	struct edge e = { &node_a, 0 };
	run_kernel("a_forward_kernel", 200000);
	standin_make_node(&e, &e);
}

__attribute__((noinline)) void layer_b_forward(void)
{
	struct edge e = { &node_b, 0 };
	run_kernel("b_forward_kernel", 200000);
	standin_make_node(&e, &e);
}

/* Nodes E and F are of one class (one vtable), made by one function
 * (standin_linear, as a Python module's forward makes the same node from
 * whichever module calls it) at the same depth: only the order of the
 * makings tells them apart. */
__attribute__((noinline)) void standin_linear(struct node *n)
{
	struct edge e = { n, 0 };
	standin_make_node(&e, &e);
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) void layer_e_forward(void)
{
	standin_linear(&node_e);
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) void layer_f_forward(void)
{
	standin_linear(&node_f);
	__asm__ volatile("" : : : "memory");
}

/* mode: 0, 1 (free) or 2 (nodes). */
__attribute__((noinline)) void standin_backward(int free_mode)
{
	if (free_mode == 2)
		standin_wait_for_worker(JOB_NODES);
	else if (free_mode)
		standin_poll_worker(JOB_BACKWARD);
	else
		standin_wait_for_worker(JOB_BACKWARD);
}

__attribute__((noinline)) void standin_step(int free_mode)
{
	standin_forward();
	if (free_mode == 2) {
		layer_a_forward();
		layer_b_forward();
		layer_e_forward();
		layer_f_forward();
	}
	standin_backward(free_mode);
	standin_poll_worker(JOB_OUTSIDE);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gpu_waiter LIB SECONDS [free|nodes]\n");
		return 2;
	}
	struct fake_lib fk;
	if (fake_lib_load(&fk, "gpu_waiter", argv[1]) < 0)
		return 1;
	launch = fk.launch;
	kernel = fk.kernel;
	int free_mode = argc > 3 && strcmp(argv[3], "free") == 0   ? 1
			: argc > 3 && strcmp(argv[3], "nodes") == 0 ? 2
								    : 0;
	if (fake_lib_connect(&fk, "gpu_waiter") < 0)
		return 1;
	pthread_t worker;
	if (pthread_create(&worker, NULL, standin_engine_thread, NULL) != 0) {
		fprintf(stderr, "gpu_waiter: cannot start the worker\n");
		return 1;
	}
	/* A training script builds its model before its first step: xputop,
	 * loaded, probes the waiter and node functions meanwhile (waits and
	 * makings before that are not seen: their launches keep their own
	 * stack, their nodes the waiter's).  A uprobe shows in this process's
	 * own copy of the code as a breakpoint (int3) on the function's first
	 * byte.  STANDIN_PROBED=waiter or waiter,nodes: the steps begin once
	 * those functions have it, or after 10 s (a loaded sanitizer build
	 * took more than 1 s); else after 1 s. */
	const char *want = getenv("STANDIN_PROBED");
	const volatile uint8_t *probed[] = { (const volatile uint8_t *)(uintptr_t)standin_wait_for_worker,
					     (const volatile uint8_t *)(uintptr_t)standin_make_node,
					     (const volatile uint8_t *)(uintptr_t)standin_evaluate_function };
	int nprobed = !want ? 0 : strstr(want, "nodes") ? 3 : 1;
	for (int i = 0; i < (nprobed ? 100 : 10); i++) {
		int on = 0;
		for (int k = 0; k < nprobed; k++)
			on += *probed[k] == 0xcc;
		if (nprobed && on == nprobed)
			break;
		usleep(100000);
	}
	uint64_t end = now() + (uint64_t)(atof(argv[2]) * 1e9);
	while (now() < end) {
		standin_step(free_mode);
		usleep(20000);
	}
	post(JOB_QUIT);
	pthread_join(worker, NULL);
	for (int i = 0; i < KINDS && totals[i].name; i++)
		printf("{\"kernel\":\"%s\",\"calls\":%llu,\"total_ns\":%llu,\"pid\":%d}\n", totals[i].name,
		       (unsigned long long)totals[i].calls, (unsigned long long)totals[i].ns, (int)getpid());
	fflush(stdout);
	sleep(1);	/* the last kernels are flushed while the library is still up */
	return 0;
}
