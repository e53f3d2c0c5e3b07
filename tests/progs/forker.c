/* SPDX-License-Identifier: GPL-2.0-only */
/* A process tree that changes under the monitor, for the fault tests:
 * the parent spins, forks a child that spins in a function of its own, then
 * execs PROG ARGS... (a different program, so a different comm and different
 * code at the same addresses); the parent spins until the child is gone, then
 * exits.  Prints "child PID" on stdout as soon as the child exists.
 * Usage: forker SECONDS_BEFORE_EXEC PROG [ARGS...] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void forker_spin_until(double end)
{
	while (now() < end)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i * i;
}

__attribute__((noinline)) void forker_child_before_exec(double secs)
{
	forker_spin_until(now() + secs);
}

__attribute__((noinline)) void forker_parent_waits(pid_t child)
{
	while (waitpid(child, NULL, WNOHANG) == 0)
		forker_spin_until(now() + 0.05);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: forker SECONDS_BEFORE_EXEC PROG [ARGS...]\n");
		return 2;
	}
	double secs = atof(argv[1]);
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		forker_child_before_exec(secs);
		execv(argv[2], argv + 2);
		perror("forker: exec");
		_exit(127);
	}
	printf("child %d\n", (int)child);
	fflush(stdout);
	forker_parent_waits(child);
	return 0;
}
