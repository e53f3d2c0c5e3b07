/* SPDX-License-Identifier: GPL-2.0-only */
/* What a hook on the mmap syscall costs other programs: a loop of one kind
 * of call for SECONDS, printing the nanoseconds per call.
 *
 *   mmap_loop exec FILE SECONDS   mmap(FILE, PROT_READ|PROT_EXEC) + munmap:
 *                                 the hook reads the file's name each time
 *   mmap_loop anon SECONDS        anonymous mmap + munmap: the hook's first
 *                                 test turns it away
 *   mmap_loop getppid SECONDS     any other syscall: a syscall tracepoint puts
 *                                 every syscall on the kernel's slower path
 * The time per call is given as wall time and as the process's CPU time (the
 * hook runs in it; time spent waiting for a CPU on a shared machine does
 * not). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One call of the kind asked for; -1 on an error. */
static int once(const char *kind, int fd)
{
	if (strcmp(kind, "getppid") == 0)
		return (int)syscall(SYS_getppid) > 0 ? 0 : -1;
	int exec = strcmp(kind, "exec") == 0;
	void *p = mmap(NULL, 4096, exec ? PROT_READ | PROT_EXEC : PROT_READ | PROT_WRITE,
		       exec ? MAP_PRIVATE : MAP_PRIVATE | MAP_ANONYMOUS, exec ? fd : -1, 0);
	return p == MAP_FAILED ? -1 : munmap(p, 4096);
}

int main(int argc, char **argv)
{
	int exec = argc == 4 && strcmp(argv[1], "exec") == 0;
	if (!exec && (argc != 3 || (strcmp(argv[1], "anon") && strcmp(argv[1], "getppid")))) {
		fprintf(stderr, "usage: mmap_loop exec FILE SECONDS | anon SECONDS | getppid SECONDS\n");
		return 2;
	}
	int fd = exec ? open(argv[2], O_RDONLY | O_CLOEXEC) : -1;
	double secs = atof(argv[argc - 1]), t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID), t;
	long n = 0;
	if (exec && fd < 0) {
		perror(argv[2]);
		return 1;
	}
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (once(argv[1], fd) < 0) {
				perror(argv[1]);
				return 1;
			}
		t = now(CLOCK_MONOTONIC) - t0;
	} while (t < secs);
	double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("%s calls %ld ns_per_call %.1f cpu_ns_per_call %.1f\n", argv[1], n, t * 1e9 / (double)n,
	       cpu * 1e9 / (double)n);
	return 0;
}
