/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF half of the GPU source (bpf/gpu.bpf.c): the uprobe on the
 * injection library's xputop_launch_site() that captures each new call site's
 * stack, and the launch-only uprobes on every loaded copy of the CUDA runtime
 * and driver for processes running without the library: the copies are found
 * as they are mapped (and, at start, where they are mapped already), and the
 * launches are counted in BPF, a stack taken once per call site. */
#ifndef XPU_GPU_PROBES_H
#define XPU_GPU_PROBES_H

#include <stdint.h>

struct xpu_dict;
struct xpu_service;
struct xpu_symbolizer;
struct xpu_gpu_probes;
struct xpu_gpu_waiter;
struct xpu_gpu_nodes;
struct bpf_program;

struct xpu_gpu_probe_sink {
	/* A call site's CPU frames (root first, launch machinery trimmed),
	 * unwound on the service thread: it may come after the site's launches. */
	void (*site)(void *arg, uint32_t pid, uint32_t site, const uint32_t *frames, uint32_t n);
	/* calls launches counted by the launch-only probes since the last
	 * refresh, from one thread, call site and API: stack includes the API
	 * frame; trap_ns the time their traps took (0: not measured). */
	void (*launch)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint32_t comm,
		       uint32_t api, uint32_t stack, uint64_t calls, uint64_t trap_ns);
	/* A launch-only process started at time (CLOCK_MONOTONIC ns; the
	 * probes' own start for one started before them), told before the
	 * first launches of each of its keys: the time its launches are
	 * estimated over begins there, not at the first slice that counted
	 * one.  NULL: not told. */
	void (*started)(void *arg, uint32_t pid, uint64_t time);
	/* calls launches of injected process pid the launch probes counted
	 * in sampled slices since the last refresh (bpf/gpu.bpf.c's
	 * probed_launches): its pace untraced by CUPTI; trap_ns: the time
	 * their traps (a hit each, a launch or the driver's call under one)
	 * took from it, by what one costs as measured (0: not measured); for a
	 * launch-only process calls is 0 (its driver launches under runtime
	 * ones: their traps).  whole: counted while the probes were on
	 * throughout, of any process (every launch it made then; a
	 * launch-only one's, whole 2, are also in its launch events, with
	 * their traps, which may come a few refreshes later: a key waits
	 * for its stack).
	 * NULL: not told. */
	void (*probed)(void *arg, uint32_t pid, uint64_t time, uint64_t calls, uint64_t trap_ns, int whole);
	/* Injected process pid's CPU time since the last refresh, by the
	 * launch probes' state (launch_probes.h).  NULL: not told. */
	void (*cpu)(void *arg, uint32_t pid, uint64_t time, uint64_t slice_ns, uint64_t whole_ns, uint64_t all_ns);
	/* The launch probes were on from start to end (XPU_LAUNCH_SPAN_*:
	 * sampled, one slice; exact and on throughout, since the last
	 * refresh).  NULL: not told. */
	void (*span)(void *arg, uint64_t start, uint64_t end, int kind);
	/* A thread of an injected process entered a waiter function of kind
	 * (XPU_STITCH_*) at time with stack pointer sp; its frames (root
	 * first, the waiter last) follow as wait_frames(token) once unwound.
	 * blind: its return may go unseen (the probe where it returns to was
	 * not on yet). */
	void (*wait_begin)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp, int kind,
			   int blind, uint64_t token);
	void (*wait_frames)(void *arg, uint64_t token, const uint32_t *frames, uint32_t n);
	/* It returned from one, or from a node run: sp is the stack pointer
	 * after the return. */
	void (*wait_end)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp);
	/* A thread made an autograd node (the node probes, gpu_stitch.h) from
	 * the making site key (0: its stack not taken).  token non-zero: the
	 * site is new, its frames follow as wait_frames(token). */
	void (*node_made)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t node, uint32_t key,
			  uint64_t token);
	/* A thread began running node at time with stack pointer sp; blind:
	 * its return may go unseen. */
	void (*node_run)(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp, uint64_t node,
			 int blind);
	void *arg;
};

struct xpu_gpu_probe_stats {
	uint64_t sites;			/* site stacks captured */
	uint64_t sites_dwarf;		/* of which unwound with DWARF */
	uint64_t sites_fp_only;		/* frame pointers only: too many unwinds waited */
	uint32_t sites_unwinding;	/* waiting for the service thread now */
	uint32_t nodes_unwinding;	/* of which node making sites */
	uint64_t launches;		/* launches counted by the launch-only probes */
	uint64_t launch_stacks;		/* call-site stacks they captured */
	uint64_t lost_stacks;		/* call sites counted without a stack */
	uint64_t dropped;		/* site records, launches and file reports lost */
	uint64_t files_dropped;		/* file reports over the queue */
	uint64_t files_missed;		/* files reported but not found in the maps */
	uint64_t bad;			/* records that failed the size check */
	uint32_t marker_files;		/* library copies with the site probe */
	uint32_t runtime_files;		/* CUDA runtime/driver copies with launch probes */
	uint64_t launch_slices;		/* sampled slices the launch probes were on */
	uint64_t launch_wholes;		/* spans they were on throughout */
	uint64_t launch_whole_cuts;	/* of them, ended by their traps' cost */
	uint64_t launch_whole_ns;	/* time on throughout (ended spans) */
	uint32_t trap_ns;		/* what a probe's trap costs a call, measured; 0: unknown */
	uint32_t trap_lo_ns;		/* a launch-only process's (its call site hashed) */
	int trap_measured;		/* the measuring is over */
	uint64_t trap_measure_ns;	/* and took this long */
	int launch_probes_on;		/* the launch probes' thread runs */
	uint64_t launch_attach_ns;	/* time their thread spent attaching them */
	uint64_t launch_detach_ns;	/* and detaching them */
	uint64_t launch_probe_failed;	/* launch probes that could not be attached */
	uint32_t cpu_threads;		/* launching threads whose CPU time is kept now */
	uint64_t cpu_refused;		/* threads named that are not their process's */
	uint64_t cpu_failed;		/* threads whose counter could not be opened */
	int cpu_err;			/* why, the last time (errno) */
	uint64_t cpu_over;		/* threads past the most kept of a process */
	uint64_t waits;			/* waiter entries reported */
	uint64_t waits_blind;		/* of which with no probe on their return yet */
	uint32_t waiter_fns;		/* waiter functions probed (per file) */
	uint64_t nodes;			/* node makings reported */
	uint64_t node_sites;		/* of which from new making sites, with their stack */
	uint64_t node_sites_lost;	/* from new making sites past a process's limit, no stack */
	uint64_t node_sites_deferred;	/* new making sites left for a later making (unwinds busy) */
	uint64_t runs;			/* node runs reported */
	uint64_t runs_blind;		/* of which with no probe on their return yet */
	uint64_t dropped_nodes;		/* node makings and runs lost (ring over its share) */
	uint32_t node_fns;		/* node functions probed (per file) */
	int watching;			/* new mappings of CUDA files are seen */
	int no_launch_only;		/* the launch-only programs did not load */
};

/* Loads the BPF programs.  Sites are unwound on svc (NULL: inline).
 * Returns NULL with the reason reported. */
struct xpu_gpu_probes *xpu_gpu_probes_new(struct xpu_symbolizer *sym, struct xpu_dict *d,
					  struct xpu_service *svc, const struct xpu_gpu_probe_sink *sink);
/* The same in two steps (source_cpu.h says why): the load attaches nothing
 * and takes nothing from the dictionary; the start (which may fail, said,
 * leaving only the free) attaches and watches. */
struct xpu_gpu_probes *xpu_gpu_probes_load(struct xpu_symbolizer *sym, struct xpu_dict *d,
					   struct xpu_service *svc);
int xpu_gpu_probes_start(struct xpu_gpu_probes *p, const struct xpu_gpu_probe_sink *sink);
void xpu_gpu_probes_free(struct xpu_gpu_probes *p);
int xpu_gpu_probes_fd(struct xpu_gpu_probes *p);
int xpu_gpu_probes_drain(struct xpu_gpu_probes *p);
/* The waiter functions (gpu_stitch.h) to probe in the files injected
 * processes map from now on. */
void xpu_gpu_probes_waiters(struct xpu_gpu_probes *p, const struct xpu_gpu_waiter *w, int n);
/* The node probes (gpu_stitch.h) likewise. */
void xpu_gpu_probes_nodes(struct xpu_gpu_probes *p, const struct xpu_gpu_nodes *n);
/* A process connected: probe the library copy it has mapped (once per file)
 * and the waiter functions of the files it maps, and leave its launches to
 * CUPTI.  Returns 0 or -1 (reported). */
int xpu_gpu_probes_injected(struct xpu_gpu_probes *p, uint32_t pid);
void xpu_gpu_probes_left(struct xpu_gpu_probes *p, uint32_t pid);
/* A thread of injected process pid launched (the library says which: the
 * thread is looked for in pid's own /proc, so no other process's is read):
 * its CPU time counts for pid's from now on (launch_probes.h).  Cheap for a
 * thread seen before. */
void xpu_gpu_probes_thread(struct xpu_gpu_probes *p, uint32_t pid, uint32_t tid);
/* Once per refresh: probes the CUDA files mapped since the last one (reading
 * maps within a time budget) and hands on the launches counted since. */
void xpu_gpu_probes_tick(struct xpu_gpu_probes *p, uint64_t now);
/* The launch-only probes: always on (exact), or on for slice_ms of every
 * period_ms (launch_probes.h). */
void xpu_gpu_probes_mode(struct xpu_gpu_probes *p, int exact, uint32_t slice_ms, uint32_t period_ms);
/* How long the probes' slice is where the library's is slice_ms of every
 * period_ms: XPU_GPU_PROBE_SLICE_X times it, at most a quarter of the
 * period, never less than slice_ms. */
#define XPU_GPU_PROBE_SLICE_X 3
/* Their traps' time a second, at most, for them to stay on throughout
 * (launch_probes.h): 1 ms, 0.1% of a CPU, about 1,200 launches a second
 * at 0.85 us a trap (an H200's). */
#define XPU_GPU_PROBE_WHOLE_US 1000
uint32_t xpu_gpu_probes_slice_ms(uint32_t slice_ms, uint32_t period_ms);
/* Marks the stack ids the probes hold (session holder). */
void xpu_gpu_probes_mark(const struct xpu_gpu_probes *p, struct xpu_dict *d);
void xpu_gpu_probes_stats(const struct xpu_gpu_probes *p, struct xpu_gpu_probe_stats *st);
/* The own-time sampler's program and maps (gpu_own.h), owned by the probes.
 * Returns -1 where the program did not load. */
int xpu_gpu_probes_own_parts(struct xpu_gpu_probes *p, struct bpf_program **prog, int *config_fd,
			     int *counts_fd);

#endif
