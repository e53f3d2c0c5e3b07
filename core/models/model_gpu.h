/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU model: per-kernel GPU time, device busy time, and the CPU stacks
 * that launched each kernel, joined exactly by CUPTI correlation id.
 *
 * A LAUNCH event (pid, correlation id) carries the launching thread's stack
 * with the launch API frame at its leaf; a KERNEL event with the same pid and
 * correlation id (every kernel of a graph launch shares it) is attributed to
 * that stack, weighted by its GPU time.  Kernels with no matching launch are
 * attributed to "[no stack]" and counted, so the share of GPU time with a
 * complete stack is known. */
#ifndef XPU_MODEL_GPU_H
#define XPU_MODEL_GPU_H

#include <stdint.h>

#include "htab.h"
#include "stacks.h"
#include "table.h"
#include "ticks.h"
#include "window.h"

struct xpu_dict;
struct xpu_event;

/* How injected processes trace their kernels (source_gpu.c tells each
 * library): every kernel, or slices of slice_ms at a random point of every
 * period_ms.  exact_until: exact mode goes back to sampled then
 * (CLOCK_MONOTONIC ns; 0: until switched back). */
struct xpu_gpu_tracing {
	uint32_t mode;		/* XPU_GPU_MODE_* */
	uint32_t slice_ms, period_ms;
	uint64_t exact_until;
	uint32_t gen;		/* bumped at every change */
};

#define XPU_GPU_SLICE_MS 10	/* the default sampled mode: 2% of the time */
/* Sampled, a library traces throughout while its launches would cost CUPTI
 * at most this much a second (us; XPUTOP_TRACE_WHOLE_US, 0: never): inject/sched.c. */
#define XPU_GPU_TRACE_WHOLE_US 1000
/* The most a sampled figure is scaled by: traced a millionth of the time
 * (--gpu-sample 1/1000000 at most scales by 1e6; a damaged recording could
 * claim less). */
#define XPU_GPU_SCALE_MAX 1e6
#define XPU_GPU_PERIOD_MS 500

#define XPU_GPU_MAX_DEVICES 64
#define XPU_GPU_TRACE_MAX 65536		/* recent kernels and launches kept for the trace export */

/* A kernel row's figures over a window. */
struct xpu_gpu_counts {
	uint64_t calls, ns, max;
};

/* Successive differences of a per-tick series (count y in traced time t),
 * for the variance of a ratio estimated from systematic samples. */
struct xpu_gpu_sd {
	uint64_t n, seen;	/* ticks with anything traced; things seen (counts) */
	uint64_t hits;		/* ticks that saw something */
	double y, t, py, pt, dyy, dyt, dtt;
};

/* A kernel row's estimated figures: its calls and GPU time against the
 * time its process traced, its share against the GPU time its process was
 * seen to take (the same slices: the scale cancels). */
enum { XPU_GPU_KEST_CALLS, XPU_GPU_KEST_NS, XPU_GPU_KEST_SHARE, XPU_GPU_NKEST };

struct xpu_gpu_kernel {
	uint32_t pid, name, device, comm;	/* name: dict string, as CUPTI gave it */
	uint32_t frame;		/* the GPU frame (demangled name) */
	uint32_t short_name;	/* dict string: the name shortened for a column, unique (name_kernel) */
	uint32_t full_name;	/* dict string: demangled */
	struct xpu_win_count calls, ns;
	struct xpu_win_max max;		/* the longest kernel */
	struct xpu_gpu_sd sd[XPU_GPU_NKEST];	/* what its process's slices saw of it, since the start */
	/* The same against its process's own CPU time in slices (GPU_OWN):
	 * calls and ns (the share's is sd's). */
	struct xpu_gpu_sd osd[XPU_GPU_KEST_SHARE];
	/* Calls and ns against its process's launches seen in slices (by_probe). */
	struct xpu_gpu_sd rsd[XPU_GPU_KEST_SHARE];
	/* Of calls and ns, what its process's library saw while tracing
	 * throughout (counted as it is; sd, osd and rsd are the rest's; asd,
	 * calls and ns against all its process's launches traced, flat's). */
	struct xpu_win_count wcalls, wns;
	struct xpu_gpu_sd asd[XPU_GPU_KEST_SHARE];
};

struct xpu_gpu_interval { uint64_t start, end; };

#define XPU_GPU_MAX_KERNEL_ROWS 8192u	/* (process, kernel, device) rows */
#define XPU_GPU_MAX_PROCS 1024u

struct xpu_gpu_device {
	int used;
	/* merged kernel intervals, sorted, oldest first, for busy time */
	struct xpu_gpu_interval *iv;
	uint32_t head, n, cap;	/* ring */
	uint64_t busy_all;	/* union length since start */
	struct xpu_win_count kernels, memcpy_ns, memcpy_bytes;
};

/* An estimate scaled from slices, and its uncertainty (docs/gpu-estimates.md):
 * one standard error, relative, in percent.  ok 0: none can be made (nothing
 * seen in the slices, or too few of them); exact figures have err_pct 0. */
struct xpu_gpu_est {
	double value, err_pct;
	int ok;
};

enum { XPU_GPU_EST_LAUNCHES, XPU_GPU_EST_KERNELS, XPU_GPU_EST_NS, XPU_GPU_NEST };
#define XPU_GPU_EST_MIN_TICKS 4	/* ticks with a slice, at the least, for an estimate */
#define XPU_GPU_EST_MIN_HITS 2	/* ticks that saw something, at the least (one gives no variance) */

/* Spans kept of each kind (a process's slices, the probes') to find where
 * they overlap: both come within a refresh or two of their end. */
#define XPU_GPU_SPANS_KEPT 16
/* The launch probes' spans kept for a launch-only process the model meets
 * after them (its first key is handed on after its first slice, seconds
 * after its start): 8 minutes of 500 ms periods. */
#define XPU_GPU_PROBE_HIST 1024

/* One of the probes' spans: [start, end), XPU_GPU_MODE_*. */
struct xpu_gpu_span {
	uint64_t start, end;
	uint32_t mode;
};

struct xpu_gpu_proc {
	uint32_t pid, comm;
	uint32_t state;		/* XPU_GPU_PROC_* of the last event */
	uint32_t detail;	/* the library's XPU_WIRE_STATE_* */
	int cupti_attached;	/* CUPTI stays attached between slices (its cost on every launch) */
	uint32_t sites;
	uint64_t dropped, cupti_dropped;	/* the library's account, last status */
	uint64_t kernels_dropped;		/* of dropped: kernel records */
	uint64_t kernels;			/* kernel records that reached the model */
	struct xpu_win_count launches;	/* no window: last and total */
	int launch_only;	/* seen by the launch probes, not the library */
	/* What share of the time the library traced (GPU_SLICE events).  In
	 * sampled mode it traced slices only, and what it saw stands for the
	 * whole: the process's figures are scaled by 1 / coverage. */
	uint32_t tracing;	/* XPU_GPU_MODE_* of the last slice */
	uint64_t since;		/* first seen: coverage counts from here */
	uint64_t left_at;	/* when it left (LEFT) or, launch-only, exited; 0 while connected */
	struct xpu_win_count traced;	/* ns traced */
	struct xpu_win_count sampled_slices;	/* slices traced in sampled mode */
	uint64_t sampled_all;		/* ns of those since the start */
	/* What the slices saw, per tick (the window) and since the start. */
	struct xpu_win_count seen[XPU_GPU_NEST];
	struct xpu_gpu_sd sd[XPU_GPU_NEST];
	struct xpu_gpu_est est[2][XPU_GPU_NEST];	/* by window, set each tick */
	uint64_t started;	/* launch-only: when the process started (GPU_BORN; 0: not known) */
	uint64_t hist_mark;	/* launch-only: the probes' spans that came before it was
				 * (probe_hist's count then) */
	int past_done;		/* those put to its time */
	double scale[2];	/* by window (XPU_WIN_RECENT, XPU_WIN_ALL): 1 when exact, set each tick */
	double cover[2];	/* traced share of the time, 0..1 */
	double span_s[2];	/* the time it was connected (or counted), seconds */
	int sampled[2];		/* it traced sampled slices in that window */
	/* Own CPU time (GPU_OWN): samples of its launching threads in its own
	 * code, not CUDA's, inside slices (own_in) and in all (own_all), per
	 * tick.  Tracing slows a launching thread in CUDA's code only, so where
	 * enough was sampled (by_own) the figures scale by own_all / own_in,
	 * not by time: a launch-bound thread launches fewer kernels in a slice
	 * than its length would hold untraced (docs/gpu-estimates.md). */
	int own_on;		/* GPU_OWN events came: oseen and osd count from then */
	uint64_t own_last[2], cuda_last[2];	/* the last event's cumulative counts */
	uint32_t own_hz, own_threads;
	struct xpu_win_count own_in, own_all, cuda_in, cuda_all;
	struct xpu_win_count oseen[XPU_GPU_NEST];	/* seen since own_on */
	struct xpu_gpu_sd osd[XPU_GPU_NEST];
	int by_own[2];		/* scale[w] is own_all / own_in */
	double own_cover[2];	/* own_in / own_all */
	/* The launch probes' count of an injected process (GPU_LAUNCH with
	 * XPU_GPU_LAUNCH_PROBED) and the time they were on while it was
	 * connected (pid 0's sampled GPU_SLICE spans), per tick: its launch
	 * pace where CUPTI does not slow it.  Where enough was counted
	 * (by_probe, before by_own), its launches are the probes' count scaled
	 * by time, and every figure scales as they do: scale[w] = that
	 * estimate / the launches its slices saw (docs/gpu-estimates.md).
	 * ptrap: the time the probes' own traps took from it (the event's
	 * trap_ns), which their time is taken as less of: the count is what
	 * the rest of it launched.  pover: the probes' time inside its own
	 * slices (where CUPTI slowed what they counted), told in JSON. */
	struct xpu_win_count pseen, ptraced, ptrap, pover;
	uint64_t slice_at[XPU_GPU_SPANS_KEPT][2];	/* its last sampled slices, for pover */
	uint32_t nslice_at;
	struct xpu_gpu_sd psd;			/* pseen against ptraced, since the start */
	struct xpu_gpu_sd rsd[XPU_GPU_NEST];	/* seen[e] against seen launches, since the start */
	int by_probe[2];
	double probe_cover[2];	/* ptraced / the time connected */
	double trap_share[2];	/* ptrap / ptraced, as the scale took it */
	/* The launch probes on throughout (pid 0's XPU_GPU_MODE_WHOLE spans)
	 * while it was connected, or since it was seen (launch-only): wseen,
	 * the launches they counted there (XPU_GPU_LAUNCH_WHOLE), every one;
	 * wtime, that time; wtrap, their traps' time there.  The estimates
	 * take wseen as it is and scale only the rest of the time's, by its
	 * sampled slices (a stratified estimate, docs/gpu-estimates.md):
	 * rest_share, the share of the launches estimate so scaled, which
	 * alone carries the sampling's uncertainty. */
	struct xpu_win_count wseen, wtime, wtrap;
	double whole_cover[2];	/* wtime / the time connected */
	double rest_share[2];
	int rest_by_pace[2];	/* the rest at the pace on throughout (no slice counted enough) */
	double rest_cap[2];	/* its uncertainty (percent of the estimate) where its own
				 * cannot be had and it is at most half the time; -1: none */
	int probe_ok[2];	/* probe_launches holds (an injected process's launches
				 * by the probes even where the slices saw too few to scale by) */
	double probe_launches[2];	/* the probes' estimate of its launches (by_probe, launch-only) */
	/* Its library on throughout (its own XPU_GPU_MODE_WHOLE spans, in
	 * sampled mode): lwt, that time; lw, what it saw there (launches
	 * flagged XPU_GPU_LAUNCH_WHOLE, and their kernels, by the join),
	 * every one.  Each figure is what it saw there as it is plus the
	 * rest's, scaled (scale[] is the rest's: by the time not on
	 * throughout over its slices' time, by own time outside, or by the
	 * probes' launches less those counted there); seen[] holds both, its
	 * series (sd, osd, rsd) the rest's alone. */
	struct xpu_win_count lwt, lw[XPU_GPU_NEST];
	double lib_whole_cover[2];	/* lwt / the time connected */
	int lib_cap[2];		/* on throughout at least half the time: with no slice's
				 * uncertainty, the rest is as uncertain as its estimate or
				 * its pace there, whichever is more */
	double lib_pace[2];	/* the rest of the time over the time on throughout */
	/* Its library on throughout and the probes' count to be had
	 * (by_probe): the rest's launches are the count less those traced
	 * throughout, its other figures those times its slices' ratio (asd's
	 * uncertainty where they give none); flat, by_probe where its slices
	 * saw no launch of the rest of the time: every figure is what was
	 * traced throughout times the count over the launches traced there
	 * (scale[]), each figure's uncertainty that count's and that of its
	 * ratio to those launches (asd). */
	int flat[2];
	struct xpu_gpu_sd asd[XPU_GPU_NEST];
	/* Its launching threads' CPU time (GPU_CPU events: a counter each,
	 * core/sources/launch_probes.h) while the probes counted in sampled slices (pcpu), on
	 * throughout (wcpu) and in all (acpu), per tick.  Where it came
	 * (cpu_on), the probes' count scales by CPU time, not time (by_cpu):
	 * the rest's launches are their count over pcpu less their traps,
	 * times acpu less wcpu.  A slice where the process idles sees as
	 * little of its CPU time as of its launches, wherever in its period it
	 * falls (a burst of 1 s in 10 came out 13-17% low by time on the
	 * H200, docs/gpu-estimates.md). */
	int cpu_on;		/* 1: GPU_CPU came this tick first, 2: before it */
	struct xpu_win_count pcpu, wcpu, acpu;
	/* ticks whose probes' slices counted launches and no CPU time: a
	 * launching thread whose time is not kept (more than
	 * XPU_GPU_CPU_THREADS of them came): by time then */
	struct xpu_win_count cpu_miss;
	/* Kernels whose launch record never came (no join), per tick.  Where
	 * they are more than XPU_GPU_ORPHAN_PCT of a sampled process's kernels
	 * and its figures are stratified by its library's spans on throughout
	 * or scaled by the probes' count, its kernels and GPU time are not
	 * estimated (orphaned): what its slices saw of each launch is not what
	 * it launched (on an H200 a torch.compile process's library, CUPTI
	 * staying attached for its CUDA graphs, recorded 220 launches of
	 * 40,000 and 415,953 kernels: 1 launch of the rest's to scale them by,
	 * 35,700 times the truth). */
	struct xpu_win_count orphan;
	int orphaned[2];	/* or its CUPTI's ids stuck (ids_stuck) */
	int ids_stuck;		/* its library's state says XPU_GPU_DETAIL_IDS_STUCK */
	struct xpu_gpu_sd pcsd;	/* pseen against pcpu, since the start */
	int by_cpu[2];
	double cpu_cover[2];	/* pcpu / acpu */
	double cpu_whole_cover[2];	/* wcpu / acpu */
};
/* Launches the slices saw, at the least, before their kernels and GPU time
 * scale by the probes' count: their ratio to launches from fewer is biased
 * (a mostly idle process's came out 21% low with none required). */
#define XPU_GPU_PROBE_MIN 30
/* Kernels without their launch record, at most, in percent of a sampled
 * process's kernels, for its kernels and GPU time to be estimated. */
#define XPU_GPU_ORPHAN_PCT 10
/* Own-time samples inside slices, at the least, before the figures scale by
 * them: 30 samples are a Poisson error of 18% on their own, which the
 * stated uncertainty carries (sd_err_pct's successive differences). */
#define XPU_GPU_OWN_MIN_IN 30
/* What own-time scaling leaves, added in quadrature to the uncertainty of
 * the figures it scales (percent): the program's own code runs slower
 * inside a slice too, which no split by code sees.  On an H200 own-time
 * figures of GPT-2 training, HF decode and a 128x128 loop came out 12.5%
 * low on average (18 runs, standard error 0.9%, docs/gpu-estimates.md);
 * the stand-in's, whose own code tracing does not slow, within 3%. */
#define XPU_GPU_OWN_SYS_PCT 13.0
/* What scaling by the launch probes' count leaves, the same way, beside
 * the traps' share of their time, which is taken off it as if the thread
 * only launched (it may be up to that much too much): their spans inside
 * the library's slices and its switching.  On an H200 GPT-2 training and
 * HF decode came out 5.6% low on average with the traps' time left in (12
 * runs: -3.7%), -0.8% with it taken off (4 runs, docs/gpu-estimates.md);
 * not added to a kernel row's share (the scale cancels there). */
#define XPU_GPU_PROBE_SYS_PCT 3.0

/* A launch waiting for its kernels. */
struct xpu_gpu_join {
	uint32_t pid, corr, tid, stack;
	uint32_t api;		/* dict string: the launch API */
	uint32_t whole;		/* traced while its library was on throughout */
	uint64_t time;
};

/* A kernel or launch kept for the Chrome trace export. */
struct xpu_gpu_trace_rec {
	uint64_t start, end;	/* a launch: end == start */
	uint32_t pid, tid;	/* a kernel: tid = the launching thread, or 0 */
	uint32_t name;		/* dict string: kernel name or launch API */
	uint32_t device, stream, corr;
	uint8_t is_launch;
};

struct xpu_gpu_model {
	struct xpu_ticks ticks;
	uint64_t probe_at[XPU_GPU_SPANS_KEPT][2];	/* the launch probes' last sampled spans */
	uint32_t nprobe_at;
	struct xpu_gpu_span probe_hist[XPU_GPU_PROBE_HIST];	/* all their spans, the last kept */
	uint64_t nprobe_hist;
	uint64_t now;		/* time of the last tick */

	struct xpu_gpu_kernel *kernels;
	uint32_t nkernels, kcap;
	struct xpu_htab kidx;

	struct xpu_gpu_device dev[XPU_GPU_MAX_DEVICES];

	struct xpu_gpu_proc *procs;
	uint32_t nprocs, pcap;
	/* Memory is bounded (trim.h): past max_kernels kernel rows or max_procs
	 * processes, idle ones age out; their GPU time stays in the totals. */
	uint32_t max_kernels, max_procs;
	uint64_t kernels_aged_out, procs_aged_out;

	struct xpu_gpu_join *joins;	/* ring */
	uint32_t jhead, jtail, jcap;
	struct xpu_htab jidx;

	struct xpu_htab flame_idx;	/* (launch stack, kernel frame) -> flame stack */
	uint32_t (*flame_cache)[3];
	uint32_t nflame, flame_cap;

	struct xpu_stacks stacks;	/* CPU->GPU stacks weighted by GPU ns */
	struct xpu_stacks launch_stacks;	/* launch-only stacks weighted by calls */

	/* Kernels run by a CUDA graph since the start, and of those, the ones
	 * joined to the graph launch that replayed them (the launch-side check
	 * of graph attribution). */
	uint64_t graph_kernels, graph_kernels_joined;
	struct xpu_htab graph_api_idx;	/* api string -> whether it launches graphs */
	uint32_t (*graph_api)[2];
	uint32_t ngraph_api, graph_api_cap;

	/* GPU time with and without a complete stack */
	struct xpu_win_count joined, unjoined;

	struct xpu_gpu_trace_rec *trace;	/* ring of XPU_GPU_TRACE_MAX */
	uint64_t ntrace;

	/* Which kernel name (dict string) each short name shown belongs to, so
	 * that two different kernels never show the same text. */
	struct xpu_gpu_claim { uint32_t text, owner; } *claims;
	uint32_t nclaims, claim_cap;
	struct xpu_htab claim_idx;

	uint32_t no_stack_frame;	/* "[no stack]" */
	struct xpu_dict *dict;
};

int xpu_gpu_model_init(struct xpu_gpu_model *m, struct xpu_dict *d, uint32_t window_ticks);
void xpu_gpu_model_free(struct xpu_gpu_model *m);
int xpu_gpu_model_event(struct xpu_gpu_model *m, const struct xpu_event *ev);
void xpu_gpu_model_tick(struct xpu_gpu_model *m, uint64_t now, uint64_t interval_ns);
/* A process exited (PROC_EXIT) at time: its stacks merge by name once idle
 * (stacks.h); a launch-only one's time ends there. */
void xpu_gpu_model_exit(struct xpu_gpu_model *m, uint32_t pid, uint64_t time);
/* A dictionary sweep (dict.h): mark marks the stacks the model holds; prune,
 * once every holder has marked, forgets the cached flame paths of stacks
 * about to be freed. */
void xpu_gpu_model_mark(const struct xpu_gpu_model *m);
void xpu_gpu_model_prune(struct xpu_gpu_model *m);

enum xpu_gpu_col {
	XPU_GPU_COL_KERNEL, XPU_GPU_COL_PID, XPU_GPU_COL_PROC, XPU_GPU_COL_DEV, XPU_GPU_COL_CALLS,
	XPU_GPU_COL_TOTAL, XPU_GPU_COL_TOTAL_ERR, XPU_GPU_COL_AVG, XPU_GPU_COL_MAX, XPU_GPU_COL_SHARE,
	XPU_GPU_COL_NAME, XPU_GPU_COL_MANGLED, XPU_GPU_COL_CALLS_ERR, XPU_GPU_COL_SHARE_ERR, XPU_GPU_NCOLS
};
extern const struct xpu_col xpu_gpu_cols[XPU_GPU_NCOLS];

/* Kernel rows with GPU time in window w (key = kernel index + 1), unsorted.
 * Calls, total and share of a sampled process are estimates (its figures
 * scaled by 1 / coverage), each with its uncertainty (the *_ERR columns:
 * one standard error in percent, as the process figures'; 0 when exact, N/A
 * where none can be stated); average and max are as measured. */
int xpu_gpu_model_table(const struct xpu_gpu_model *m, const struct xpu_dict *d,
			struct xpu_table *t, enum xpu_window w);

struct xpu_gpu_device_sum {
	uint32_t device;
	double kernel_pct;	/* traced kernel time (union of intervals) over the window, scaled when sampled: not NVML's utilization */
	double kernel_err_pct;	/* its uncertainty, percent of it: 0 exact, -1 where none can be stated */
	double kernels_per_s;	/* over the last tick */
	uint64_t memcpy_ns, memcpy_bytes;	/* in the window */
	uint64_t kernels;	/* in the window */
};

/* Summaries of the devices seen, at most max; returns how many. */
int xpu_gpu_model_devices(const struct xpu_gpu_model *m, enum xpu_window w,
			  struct xpu_gpu_device_sum *out, int max);
/* Whether any process's figures in window w are sampled estimates, and the
 * share of the time traced, over the sampled processes (0..1). */
int xpu_gpu_model_sampled(const struct xpu_gpu_model *m, enum xpu_window w, double *cover);
/* The estimated GPU time of every process (as gpu_ns_est) and its
 * uncertainty; ok 0 when a sampled process's could not be estimated. */
struct xpu_gpu_est xpu_gpu_model_gpu_ns_err(const struct xpu_gpu_model *m, enum xpu_window w);
/* Percent of GPU time (window w) whose launch stack is known; -1 if none. */
double xpu_gpu_model_joined_pct(const struct xpu_gpu_model *m, enum xpu_window w);
uint64_t xpu_gpu_model_gpu_ns(const struct xpu_gpu_model *m, enum xpu_window w);
/* The same with each process's scale applied: the estimate of the GPU time
 * its kernels took, traced or not. */
double xpu_gpu_model_gpu_ns_est(const struct xpu_gpu_model *m, enum xpu_window w);

#endif
