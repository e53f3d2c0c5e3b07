/* SPDX-License-Identifier: GPL-2.0-only */
/* The launch-only uprobes on the CUDA runtime and driver (bpf/gpu.bpf.c's
 * gpu_launch), and when they are on.  A uprobe costs the process it fires in
 * a trap on every call whether its program counts the launch or turns it
 * away (an injected process): 2-3 us a launch, 20% of a batch-1 LLM decode
 * on the H200 when first measured; 0.83 us a launch on back-to-back empty
 * kernels there since (bench/RESULTS.md, the eighth session), and 846 ns
 * as xputop measures it at its start (xpu_launch_probes_trap_ns: the model
 * takes the traps' time off the probes').  So in the sampled mode the probes are
 * attached for a slice of each period only, as the injection library turns
 * CUPTI on; in the exact mode they stay on.  A thread of their own attaches
 * and detaches them (a few ms a slice), off the ingest path; the spans they
 * were on reach the model as GPU_SLICE events (pid 0: every launch-only
 * process), which scales the counts as it does an injected process's.  A
 * slice's span is when its probes count, not when they are in: the program
 * counts nothing while *state is paused (bpf/gpu.bpf.c's probes_state),
 * which it is while the slice's probes go in and out (taking them out can
 * wait for the process's mmap lock for 100 ms and more).
 *
 * Where the machine launches so little that the traps of all its launches
 * would cost at most a budget (whole_ns of trap time a second: a slice's
 * pace at most half of it), the probes stay on after a slice, throughout,
 * until their traps' cost outruns it (a bucket of one second's budget,
 * checked every 20 ms): a mostly idle process's launches are then counted,
 * every one, where 6% of the time would have caught a burst in few runs.
 * Such a span comes as XPU_LAUNCH_SPAN_WHOLE, and the program counts in it
 * apart (probed_launches' whole_* fields): the model takes what it counted
 * there as it is, and scales only the rest of the time's by the sampled
 * slices (a stratified estimate: the spans' kinds are chosen by the pace
 * before them, the slices' places at random in whole periods: after a
 * slice that saw little they go on throughout from its period's end, and
 * after their traps end a span on throughout the next period starts there,
 * the probes left in while its slice is near). */
#ifndef XPU_LAUNCH_PROBES_H
#define XPU_LAUNCH_PROBES_H

#include <stddef.h>
#include <stdint.h>

enum { XPU_LAUNCH_SPAN_SAMPLED = 0, XPU_LAUNCH_SPAN_EXACT = 1, XPU_LAUNCH_SPAN_WHOLE = 2 };

struct bpf_program;
struct xpu_launch_probes;

struct xpu_launch_probes_stats {
	uint32_t files;		/* CUDA files with launch probes */
	uint32_t links;		/* probes per cycle (each file's functions) */
	uint64_t slices;	/* sampled slices run */
	uint64_t attach_ns;	/* time spent attaching them (wall) */
	uint64_t detach_ns;	/* and detaching them (wall: mostly waiting for RCU) */
	uint64_t failed;	/* attaches that failed */
	uint32_t trap_ns;	/* what a probe's trap costs an injected process's launch
				 * (measured at the start); 0: unknown */
	uint32_t trap_lo_ns;	/* and a launch-only one's (its call site hashed) */
	int trap_measured;	/* the measuring is over */
	uint64_t trap_measure_ns;	/* and took this long (its probe's going in and out) */
	uint64_t wholes;	/* spans on throughout */
	uint64_t whole_cuts;	/* of them, ended by their traps' cost */
	uint64_t whole_ns;	/* time on throughout (ended spans) */
	uint32_t cpu_threads;	/* threads whose CPU time is kept now (xpu_launch_probes_thread) */
	uint64_t cpu_refused;	/* threads not kept: not their process's */
	uint64_t cpu_failed;	/* threads whose counter could not be opened */
	int cpu_err;		/* why, the last time (errno) */
};

/* multi: prog was loaded as a uprobe_multi program (expected attach type
 * XPU_BPF_TRACE_UPROBE_MULTI, uprobe_multi.h; Linux 6.6); else one
 * perf-event uprobe a function, whose detach waits for RCU (slow to turn on
 * and off).  state: prog's XPU_GPU_PROBES_* word; hits_fd: its probe_hits
 * map (hits per CPU), or -1 (never on throughout). */
struct xpu_launch_probes *xpu_launch_probes_new(struct bpf_program *prog, int multi, volatile uint32_t *state,
					       int hits_fd, volatile uint32_t *calib_pid,
					       volatile uint64_t *calib_hits);
void xpu_launch_probes_free(struct xpu_launch_probes *lp);
/* A file to probe: n functions at file offsets offs (0: absent), function i
 * with the BPF cookie cookie0 + i.  Returns 0, or -1 (no function, no room). */
int xpu_launch_probes_add(struct xpu_launch_probes *lp, const char *path, const uint64_t *offs, size_t n,
			  uint64_t cookie0);
/* exact: always on; else on for slice_ms at a random point of each
 * period_ms, and throughout while their traps cost at most whole_ns a
 * second (0: never). */
void xpu_launch_probes_mode(struct xpu_launch_probes *lp, int exact, uint32_t slice_ms, uint32_t period_ms,
			    uint64_t whole_ns);
/* Hands fn the spans the probes were on since the last call (exact and on
 * throughout: up to now), oldest first; kind: XPU_LAUNCH_SPAN_*. */
void xpu_launch_probes_spans(struct xpu_launch_probes *lp, uint64_t now,
			     void (*fn)(void *arg, uint64_t start, uint64_t end, int kind), void *arg);
void xpu_launch_probes_stats(struct xpu_launch_probes *lp, struct xpu_launch_probes_stats *st);
/* An injected process's launching threads' CPU time by the probes' state,
 * read at each change of it: the probes' count of its launches scales by
 * it (model_gpu.c), where a slice that falls while the process idles sees
 * as little of it as of its launches, and one whose probes took long to go
 * in (a busy process's mmap lock) is not moved off a burst's end.  Its
 * launching threads only: the library's and CUPTI's threads work in bursts
 * of their own (the whole process's clock put 5-15% more of its CPU time
 * per launch in the probes' slices than outside them on the H200).
 * watch: pid from now on (-1: MAX_WATCH watched already); thread: its
 * thread tid too, from now on (-1: not watched, gone, or too many; a
 * thread watched already: 0); unwatch: no more.  xpu_launch_probes_cpu
 * hands fn each watched process's time since the last call (those with
 * some), in exact mode all of it in all_ns. */
#define XPU_GPU_CPU_THREADS 8	/* launching threads of a process whose CPU time is kept */
struct xpu_launch_probes_cpu {
	uint64_t slice_ns;	/* while the probes counted in a sampled slice */
	uint64_t whole_ns;	/* while they counted on throughout */
	uint64_t all_ns;	/* in all */
};
int xpu_launch_probes_watch(struct xpu_launch_probes *lp, uint32_t pid);
int xpu_launch_probes_thread(struct xpu_launch_probes *lp, uint32_t pid, uint32_t tid);
void xpu_launch_probes_unwatch(struct xpu_launch_probes *lp, uint32_t pid);
void xpu_launch_probes_cpu(struct xpu_launch_probes *lp,
			   void (*fn)(void *arg, uint32_t pid, const struct xpu_launch_probes_cpu *cpu), void *arg);
/* What a probe's trap costs an injected process's launch, or a launch-only
 * one's (its call site hashed), measured on this machine as the probes'
 * thread starts (a few ms: calls to a function of xputop's own, without
 * and with a probe running the launch program, calib_pid and calib_hits
 * being its bpf/gpu.bpf.c globals); 0 until then or where it could not be
 * measured.  Never waits. */
uint32_t xpu_launch_probes_trap_ns(struct xpu_launch_probes *lp, int launch_only);

#endif
