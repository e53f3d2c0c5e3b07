/* SPDX-License-Identifier: GPL-2.0-only */
/* What top and htop read from /proc besides samples: a process's resident
 * memory, state and CPU time, and the machine's load, CPU busy and memory.
 *
 * Read once a refresh, before the tick, for the processes the CPU table
 * shows (at most XPU_PROCSTAT_MAX), never on the ring buffer's ingest path;
 * the figures go down the stream as PROC_STAT and SYS_STAT events, so a
 * replay shows what was read.  The parsers take the files' text so tests can
 * give them fixtures.
 */
#ifndef XPU_PROCSTAT_H
#define XPU_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct xpu_session;

#define XPU_PROCSTAT_MAX 512	/* processes read per refresh (and as many threads) */

/* /proc/PID/stat and /proc/PID/statm; page in bytes, hz the clock ticks per
 * second.  Returns 0, or -1 when the text is not what the kernel writes. */
int xpu_procstat_parse_pid(const char *stat, const char *statm, long page, long hz,
			   struct xpu_ev_proc_stat *out);
/* /proc/loadavg: the three loads times 100. */
int xpu_procstat_parse_loadavg(const char *text, uint32_t load100[3]);
/* /proc/stat's first line: clock ticks busy and in all, every CPU. */
int xpu_procstat_parse_cpu(const char *text, uint64_t *busy, uint64_t *total);
/* /proc/stat's "cpuN" lines: each CPU's ticks busy and in all, by N, for
 * N < max.  Returns one more than the highest N read (0: none). */
int xpu_procstat_parse_cpus(const char *text, uint64_t *busy, uint64_t *total, int max);
/* /proc/PID/cmdline's n bytes in buf (size n + 1 at least): its arguments
 * joined by spaces, NUL-terminated.  Returns the length (0: empty, as a
 * kernel thread's). */
int xpu_procstat_parse_cmdline(char *buf, size_t n);
/* /proc/meminfo: MemTotal and htop's used (total - free - buffers - cached
 * - sreclaimable), KiB. */
int xpu_procstat_parse_meminfo(const char *text, uint64_t *total_kib, uint64_t *used_kib);

/* CPUs whose busy share is read (the meters toggled by 1 in the TUI). */
#define XPU_PROCSTAT_CPUS 256

/* Machine-wide CPU busy is a difference between two reads; so is each CPU's. */
struct xpu_procstat {
	uint64_t busy, total;	/* the last read of /proc/stat, 0 = none yet */
	long page, hz;
	uint64_t *cpu_busy, *cpu_total;	/* XPU_PROCSTAT_CPUS each, NULL: out of memory */
};

void xpu_procstat_init(struct xpu_procstat *p);
void xpu_procstat_free(struct xpu_procstat *p);
/* Emits one SYS_STAT, a CPU_STAT for each CPU, and a PROC_STAT for each process and each thread the
 * CPU model has a row for in its window (the CPU source calls it before
 * each tick).  A thread's (tid set) holds its state and CPU time, rss 0. */
void xpu_procstat_tick(struct xpu_procstat *p, struct xpu_session *s);

#endif
