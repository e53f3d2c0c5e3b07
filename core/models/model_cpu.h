/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU model: on-CPU samples per process and per thread, and their stacks.
 *
 * %CPU of a row is its samples in the last closed tick over what one fully
 * busy CPU would have given (hz * tick length), as top reports it; AVG% is the
 * same over the chosen window.  Stacks are kept per (pid, tid, stack) in an
 * xpu_stacks so the flamegraph can show a process or one of its threads.
 */
#ifndef XPU_MODEL_CPU_H
#define XPU_MODEL_CPU_H

#include <stdint.h>

#include "htab.h"
#include "stacks.h"
#include "table.h"
#include "ticks.h"
#include "window.h"

struct xpu_dict;
struct xpu_event;

struct xpu_cpu_task {
	uint32_t pid, tid;	/* tid 0: the process row */
	uint32_t comm, user;	/* dict strings */
	uint32_t uid;
	uint32_t exited;
	uint64_t exit_ns;	/* when (event time): a sample taken before it does not revive it */
	struct xpu_win_count samples;
	/* From /proc (PROC_STAT events; process rows only), as last read. */
	int has_stat;
	uint32_t state;		/* state letter */
	uint64_t rss_bytes, cpu_ns;
	uint32_t cmdline;	/* dict string: the command line (process rows), 0 = not read
				 * for its current name */
	int has_nice;		/* nice and vsize read (recordings of minor 6 on) */
	int32_t nice;
	uint32_t ppid;
	uint64_t vsize_bytes;
};

/* CPUs with a meter of their own (CPU_STAT events). */
#define XPU_CPU_METERS 256

/* The machine as a whole, as last read (SYS_STAT events); flags XPU_SYS_*
 * say which fields are known. */
struct xpu_cpu_sys {
	uint32_t flags;
	double load[3];
	double busy_pct;
	uint64_t mem_total, mem_used;	/* bytes */
	/* Each CPU's busy share since the last read, % times 100, for CPUs
	 * 0 .. ncpus - 1 (0: none read, as in recordings before minor 6). */
	uint32_t ncpus;
	uint16_t cpu_busy100[XPU_CPU_METERS];
};

struct xpu_cpu_model {
	uint32_t hz;
	struct xpu_ticks ticks;
	struct xpu_cpu_task *tasks;
	uint32_t ntasks, cap;
	struct xpu_htab idx;
	struct xpu_stacks stacks;
	uint64_t samples_open, samples_last, samples_total;
	uint32_t max_tasks;	/* rows kept after a tick (default XPU_CPU_MAX_TASKS) */
	uint64_t tasks_aged_out;
	int exits_pending;	/* exited processes may still have thread rows */
	uint64_t threads_dropped;
	struct xpu_cpu_sys sys;
};

/* Memory is bounded: past max_tasks rows (processes and threads), those with
 * no samples in the window and the fewest since the start are aged out down
 * to 3/4 of it.  Their samples stay in samples_total.  The thread rows of an
 * exited process go as soon as they have nothing in the window: the process
 * row holds their samples. */
#define XPU_CPU_MAX_TASKS 16384u

/* RES, S and TIME+ are the process's, from /proc: N/A until read, not
 * shown in the thread table; so are VIRT and MEM% (RES of the memory in
 * all).  NI is a thread's own in the thread table.  NI, VIRT and MEM% are
 * dropped first on a narrow terminal, and N/A in recordings made before
 * xputop read them.  PROCESS, hidden, is a thread's process's name
 * (N/A in the process table): a filter by a process's name keeps its
 * threads. */
enum xpu_cpu_col {
	XPU_CPU_COL_PID, XPU_CPU_COL_TID, XPU_CPU_COL_USER, XPU_CPU_COL_NI, XPU_CPU_COL_VIRT,
	XPU_CPU_COL_RES, XPU_CPU_COL_STATE, XPU_CPU_COL_PCT, XPU_CPU_COL_MEM, XPU_CPU_COL_AVG,
	XPU_CPU_COL_TIME, XPU_CPU_COL_SAMPLES, XPU_CPU_COL_COMM, XPU_CPU_COL_PROC, XPU_CPU_COL_CMDLINE,
	XPU_CPU_COL_PPID, XPU_CPU_NCOLS
};
/* What xpu_cpu_model_table builds: the thread table, and COMMAND as the
 * command line where it was read (the name where not; htop's full command,
 * top's c).  CMDLINE, in JSON only, always holds it. */
enum { XPU_CPU_TABLE_THREADS = 1, XPU_CPU_TABLE_CMDLINE = 2 };
extern const struct xpu_col xpu_cpu_cols[XPU_CPU_NCOLS];
extern const struct xpu_col xpu_cpu_thread_cols[XPU_CPU_NCOLS];

int xpu_cpu_model_init(struct xpu_cpu_model *m, uint32_t hz, uint32_t window_ticks);
void xpu_cpu_model_free(struct xpu_cpu_model *m);
/* Takes one CPU_SAMPLE event. Returns 0 or -ENOMEM. */
int xpu_cpu_model_sample(struct xpu_cpu_model *m, const struct xpu_event *ev);
/* The process pid exited at time_ns (its event's time: its leader's exit).
 * A sample of it taken more than XPU_CPU_EXIT_GRACE_NS after that is a new
 * process with the pid; one taken before it and delivered after (held while
 * its stack's symbols were read), or one of its other threads, dying after
 * the leader, is not. */
#define XPU_CPU_EXIT_GRACE_NS 1000000000ULL
void xpu_cpu_model_exit(struct xpu_cpu_model *m, uint32_t pid, uint64_t time_ns);
/* Takes a PROC_STAT, THREAD_STAT, SYS_STAT, CPU_STAT or PROC_CMDLINE event;
 * one of a process without a row is ignored. */
void xpu_cpu_model_stat(struct xpu_cpu_model *m, const struct xpu_event *ev);
/* The processes with a row in the recent window that have not exited: up
 * to max into out.  Returns how many. */
int xpu_cpu_model_shown_pids(const struct xpu_cpu_model *m, uint32_t *out, int max);
/* The same for the thread table's rows: pids[i] and tids[i]. */
int xpu_cpu_model_shown_threads(const struct xpu_cpu_model *m, uint32_t *pids, uint32_t *tids, int max);
/* Closes the open tick, which lasted interval_ns. */
void xpu_cpu_model_tick(struct xpu_cpu_model *m, uint64_t interval_ns);
/* Fills a table (columns xpu_cpu_cols, or xpu_cpu_thread_cols with
 * XPU_CPU_TABLE_THREADS in how) with the rows that have samples in window w,
 * unsorted; row keys are pids (tids). */
int xpu_cpu_model_table(const struct xpu_cpu_model *m, const struct xpu_dict *d,
			struct xpu_table *t, int how, enum xpu_window w);
/* A function the CPUs were in, machine-wide (perf top's list). */
struct xpu_cpu_hot {
	uint32_t frame;		/* dict frame: the leaf of the stacks */
	uint64_t samples;
};
#define XPU_CPU_HOT_MAX 10
/* The leaf frames of every process's stacks in window w, heaviest first:
 * up to max into out.  Returns how many (or -ENOMEM); *all is every sample
 * counted (what percentages are of). */
int xpu_cpu_model_hot(const struct xpu_cpu_model *m, const struct xpu_dict *d, enum xpu_window w,
		      struct xpu_cpu_hot *out, int max, uint64_t *all);
/* The task (tid 0: the process), or NULL if never sampled. */
const struct xpu_cpu_task *xpu_cpu_model_task(const struct xpu_cpu_model *m, uint32_t pid,
					      uint32_t tid);

#endif
