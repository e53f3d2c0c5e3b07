/* SPDX-License-Identifier: GPL-2.0-only */
/* What the symbolizer's two halves share: its state (struct xpu_symbolizer
 * and the per-process entries), its bounds and its clock.  symbolize.c does
 * the lookups (user and kernel addresses to frames); symbolize_cache.c keeps
 * the per-process state they read and the symbolizer's lifecycle.  No one
 * else includes this. */
#ifndef XPU_SYMBOLIZE_INT_H
#define XPU_SYMBOLIZE_INT_H

#include <stdint.h>
#include <time.h>

#include "addrcache.h"
#include "elfcache.h"
#include "htab.h"
#include "readfile.h"
#include "symbolize.h"

#define PROCS_MAX 4096
#define DEAD_GRACE_NS (5 * NS_PER_S)
#define PROC_CACHE_MAX 4096
#define KERNEL_CACHE_MAX 65536
#define KWAIT_MAX 65536
/* Re-reading a process's maps or perf map on a miss happens at most this
 * often, and never more than 1/REREAD_COST_RATIO of the time: a 100 MB perf
 * map that takes 0.5 s to parse is re-read at most every 10 s. */
#define REREAD_MIN_NS (100 * NS_PER_MS)
#define REREAD_COST_RATIO 20
#define PERFMAP_ABSENT_WAIT_NS NS_PER_S
#define PERFMAP_MAX_BYTES (256u << 20)
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* Per mapping of a process, filled lazily. */
struct pmap {
	uint32_t module;	/* dict id of the mapping's name, 0 = not yet */
	uint8_t no_elf;		/* its file could not be opened or read */
	uint8_t checked;	/* the cached ELF was checked against its file */
};

struct proc {
	uint32_t pid;
	uint8_t dead;		/* exited (or vanished): never read /proc/PID again */
	uint64_t last_use;	/* s->clock at its last lookup */
	uint64_t died_ns;
	struct xpu_maps maps;
	struct pmap *pm;	/* one per mapping */
	uint64_t maps_ns, maps_wait_ns;	/* last read, and the wait before the next */
	struct xpu_perfmap *jit;
	struct xpu_filesig jit_sig;
	uint64_t jit_ns, jit_wait_ns;
	struct xpu_addrcache cache;	/* address (after the -1 of return addresses) -> frame */
};

/* Our own vDSO: a small image in memory, named inline. */
struct vdso {
	struct xpu_elf *elf;
	uint32_t *names;
	uint64_t len;
	int tried;
};

/* A kernel address waiting for /proc/kallsyms. */
struct kwait {
	uint64_t addr;
	uint32_t frame;
};

struct xpu_symbolizer {
	struct xpu_dict *dict;
	struct xpu_service *svc;	/* NULL: everything inline */
	struct xpu_sym_stats st;
	uint64_t clock;		/* counts calls, orders LRU eviction */

	struct proc **procs;
	uint32_t nprocs, ndead;
	struct xpu_htab proc_idx;
	struct proc *last;	/* the process of the previous call: stacks come in runs */

	struct xpu_elfcache *elfs;
	struct vdso vdso;

	struct xpu_kallsyms *ksyms;
	int ksyms_state;	/* KSYMS_* */
	struct kwait *kwaits;
	uint32_t nkwaits, kwait_cap;
	struct xpu_addrcache kcache;

	uint32_t unknown_name, unknown_frame, unknown_kframe;
	/* each module's path where it was first seen, for the pprof mappings */
	struct modpath { uint32_t module, pid; char *path; } *mods;
	uint32_t nmods, modcap;
	int warned_maps;
	char buf[8192];		/* demangled names */
};

enum { KSYMS_NONE, KSYMS_LOADING, KSYMS_READY };

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline int reread_due(uint64_t last_ns, uint64_t wait_ns)
{
	return !last_ns || now_ns() - last_ns >= wait_ns;
}

/* The wait after a read that started at t0 and just ended at t1. */
static inline uint64_t reread_wait(uint64_t t0, uint64_t t1, uint64_t at_least)
{
	uint64_t wait = (t1 - t0) * REREAD_COST_RATIO;
	if (wait < at_least)
		wait = at_least;
	return wait > REREAD_MIN_NS ? wait : REREAD_MIN_NS;
}
/* The process's state, made (and its maps read) on first use (symbolize_cache.c). */
struct proc *xpu_sym_proc_get(struct xpu_symbolizer *s, uint32_t pid);
/* Reads the process's maps again (symbolize_cache.c). */
void xpu_sym_read_maps(struct xpu_symbolizer *s, struct proc *p);
/* Starts reading /proc/kallsyms, on the service thread when there is one
 * (symbolize.c). */
void xpu_sym_start_kallsyms(struct xpu_symbolizer *s);

#endif
