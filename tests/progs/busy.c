/* SPDX-License-Identifier: GPL-2.0-only */
/* A CPU-bound program with known function names, for stack tests:
 * main -> busy_outer -> busy_middle -> busy_leaf_spin.
 * Usage: busy SECONDS [THREADS] */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void busy_leaf_spin(void)
{
	for (unsigned long i = 0; i < 2000000; i++)
		sink += i * i;
}

__attribute__((noinline)) void busy_middle(void)
{
	busy_leaf_spin();
	sink++;
}

__attribute__((noinline)) void busy_outer(double seconds)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		busy_middle();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static double secs;

static void *thread_main(void *arg)
{
	busy_outer(secs);
	return arg;
}

int main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 5;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[64];
	for (int i = 1; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	busy_outer(secs);
	for (int i = 1; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
