/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes -p names, and (with -- CMD) every process they start: the
 * sources that cannot filter in the kernel (the GPU socket and launch
 * probes, a client's stream from the collector) ask this set.  A process
 * not named is looked up once in /proc (its parents, for a set that
 * follows forks) and the answer kept until it exits. */
#ifndef XPU_PIDSET_H
#define XPU_PIDSET_H

#include <stdint.h>

#include "htab.h"

struct xpu_pidset {
	uint32_t *pids;
	uint32_t n;		/* 0: every process is in the set */
	int follow;		/* descendants of the named are in it too */
	struct xpu_htab idx;	/* pid -> entry in keys/verdict */
	uint32_t *keys;
	uint8_t *verdict;	/* 1 in, 0 out, 2 to look up again (the pid exited) */
	uint32_t cnt, kcap, vcap;
	const char *proc_root;	/* "/proc", or a test's tree */
};

/* Copies pids.  -1 when out of memory. */
int xpu_pidset_init(struct xpu_pidset *ps, const uint32_t *pids, uint32_t n, int follow);
void xpu_pidset_free(struct xpu_pidset *ps);
/* Whether pid (a process, thread group id) is in the set. */
int xpu_pidset_has(struct xpu_pidset *ps, uint32_t pid);
/* pid exited: the next process to take its id is looked up afresh. */
void xpu_pidset_forget(struct xpu_pidset *ps, uint32_t pid);

#endif
