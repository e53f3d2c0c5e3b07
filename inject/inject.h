/* SPDX-License-Identifier: GPL-2.0-only */
/* Internals of libxputop_inject.so, the CUPTI injection library.
 *
 * The library is loaded by CUDA through CUDA_INJECTION64_PATH.  It stays
 * dormant (no CUPTI subscription, no activity, nothing per launch) until an
 * xputop accepts its connection, and goes dormant again when xputop leaves.
 * It must never block, crash or slow down its host beyond the measured CUPTI
 * cost: everything it produces goes through a bounded channel that drops (and
 * counts) instead of waiting.
 */
#ifndef XPU_INJECT_H
#define XPU_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define XPU_INJ_API __attribute__((visibility("default")))

/* The channel: records appended by any thread, sent in packets by the agent. */
struct xpu_chan;

struct xpu_chan *xpu_chan_new(size_t capacity);
void xpu_chan_free(struct xpu_chan *c);
/* Appends a record (body, then tail bytes).  Never blocks on the peer: when
 * the buffer is full the record is dropped and counted by type.  Returns 0
 * or -1. */
int xpu_chan_put(struct xpu_chan *c, uint16_t type, const void *body, uint16_t len,
		 const void *tail, uint16_t tail_len);
/* Sends what is buffered as packets of at most XPU_WIRE_MAX_MSG bytes on a
 * SOCK_SEQPACKET socket without waiting.  What the socket cannot take now
 * stays buffered, ahead of newer records, and is sent next time; only what
 * no longer fits the buffer then is dropped (and counted).  Returns -1 when
 * the connection is gone. */
int xpu_chan_send(struct xpu_chan *c, int fd);
/* Whether records are still buffered (the socket was full). */
int xpu_chan_pending(struct xpu_chan *c);
/* Discards what is buffered and zeroes the counters (a new monitor). */
void xpu_chan_reset(struct xpu_chan *c);
/* Records dropped, all types, or one type (XPU_WIRE_*). */
uint64_t xpu_chan_dropped(const struct xpu_chan *c);
uint64_t xpu_chan_dropped_type(const struct xpu_chan *c, uint16_t type);
/* Bumped each time records that named something (NAME, API) were dropped:
 * names must then be sent again. */
uint32_t xpu_chan_names_epoch(const struct xpu_chan *c);

/* Call sites of launches.  A site is one distinct CPU stack of a launching
 * thread; its stack is captured once by xputop's BPF uprobe on
 * xputop_launch_site(), after which launches from it cost a hash lookup. */
void xpu_sites_init(void);
/* Called on the launching thread, in the launch callback.  Returns the site
 * id (0 when none can be given). */
uint32_t xpu_sites_current(uint32_t corr, uint32_t cbid);
/* A new monitor connected: every site is announced again when next used. */
void xpu_sites_new_generation(void);
uint64_t xpu_sites_count(void);

/* The marker xputop's uprobe attaches to (exported, never inlined). */
XPU_INJ_API void xputop_launch_site(uint32_t site, uint32_t corr, uint32_t cbid);

/* CUPTI, loaded with dlopen so a missing or foreign libcupti only disables us. */
int xpu_cupti_load(void);
/* Attaches CUPTI, with nothing traced yet (xpu_cupti_trace turns it on).
 * Returns XPU_WIRE_STATE_OK or the state explaining why not. */
int xpu_cupti_start(struct xpu_chan *chan, uint32_t flags);
/* Turns tracing on (attaching CUPTI again if it was detached, launch
 * callbacks, then kernel and memcpy activity; on 2: throughout, its launch
 * records flagged XPU_WIRE_LAUNCH_WHOLE) or off (launches no longer
 * recorded; activity goes off once the slice's kernels have run, then CUPTI
 * is detached at the next launch's return).  Returns XPU_WIRE_STATE_*. */
int xpu_cupti_trace(int on);
/* Flushes completed activity buffers into the channel. */
void xpu_cupti_flush(int forced);
/* CUPTI's correlation ids stuck, seen by a launching thread since the last
 * call: 1 and *at, when the first launch was seen under one id; the span
 * traced must end there (inject.c).  The agent's thread. */
int xpu_cupti_stuck(uint64_t *at);
/* After that, CUPTI is being detached to start afresh: nothing to switch on
 * until it is. */
int xpu_cupti_recovering(void);
/* A slice is over and its kernels are awaited (activity on or off) before
 * CUPTI is detached: the agent looks sooner than every flush. */
int xpu_cupti_settling(void);
/* Disables everything; CUPTI is detached at the next launch's return. */
void xpu_cupti_stop(void);
/* The process exits: CUPTI is not detached any more. */
void xpu_cupti_at_exit(void);
/* Stops producing records and detaching (in a forked child). */
void xpu_cupti_detach(void);
/* Times CUPTI was detached (low 31 bits); bit 31: it stays attached (a CUDA
 * graph seen, XPUTOP_CUPTI_DETACH=0, or no cuptiFinalize). */
uint32_t xpu_cupti_detach_state(void);
/* One JSON line on stderr: what attaching and detaching took (bench/gpu). */
void xpu_cupti_print_stats(void);
uint64_t xpu_cupti_dropped(void);
uint32_t xpu_cupti_version(void);
/* A new monitor: CUPTI's dropped count starts again from 0. */
void xpu_cupti_reset_counts(void);

/* When to trace (inject/sched.c): all the time (exact), or a slice of
 * slice_ms at a random point of every period_ms (sampled), so that the
 * slices, taken together, are a fair sample of the time.  Sampled, it also
 * traces throughout (XPU_SCHED_WHOLE) where the process launches so little
 * that CUPTI's cost on every launch (XPU_SCHED_LAUNCH_NS) and on every
 * graph kernel (XPU_SCHED_GRAPH_KERNEL_NS) stays within mode.whole_us a
 * second: from the start, until a check every XPU_SCHED_CHECK_MS finds a
 * bucket of one second's budget spent; then sampled periods, the first
 * from there, and on throughout again at the end of the last (one period
 * where the span lasted XPU_SCHED_LASTED_MS; where it was cut sooner, 4,
 * then twice as many as the last time).  A pure state machine on the times
 * and counts it is given: the agent does what it says. */
struct xpu_sched {
	struct xpu_wire_mode mode;
	int on;
	int whole;		/* on, throughout (not a slice) */
	int whole_next;		/* on throughout at the period's end */
	int whole_tried;	/* the first period went on throughout (or may not) */
	int closing;		/* a mode change ends the span on now; then `after` */
	uint64_t next;		/* sampled: when to switch (on throughout: to check) next */
	uint64_t after;
	uint64_t part;		/* the next slice's length (a wrapping slice's: its part's) */
	uint64_t wrap;		/* a wrapping slice's second part's start; 0: none (not
				 * wrapping, or in it) */
	uint64_t period;	/* sampled: when the current period started */
	uint64_t rng;
	uint64_t launches;	/* in: launches recorded so far (the caller sets it) */
	uint64_t graph_kernels;	/* in: CUDA graphs' kernels recorded so far (the same) */
	uint64_t checked, counted, counted_gk;	/* on throughout: the last check's time,
						 * launches, graph kernels */
	uint32_t checks;	/* on throughout: checks so far */
	uint32_t backoff, left;	/* sampled periods after a cut: how many, how many left */
	double bucket;		/* on throughout: ns of CUPTI's cost left to spend */
	uint32_t cuts;		/* spans on throughout ended by the budget */
};
enum { XPU_SCHED_NONE = 0, XPU_SCHED_ON = 1, XPU_SCHED_OFF = 2, XPU_SCHED_WHOLE = 3 };
#define XPU_SCHED_PERIOD_MS 500	/* the default sampled mode: 10 ms in 500 (2%) */
#define XPU_SCHED_SLICE_MS 10
#define XPU_SCHED_CHECK_MS 20	/* on throughout: how often the budget is looked at */
#define XPU_SCHED_BACKOFF_FIRST 4	/* sampled periods after a span cut before XPU_SCHED_LASTED_MS */
#define XPU_SCHED_BACKOFF_MAX 64	/* the most sampled periods between tries on throughout */
#define XPU_SCHED_LASTED_MS 100	/* a span on throughout this long, cut, goes on again after a period */
/* What tracing adds to a launch, for the budget: back-to-back empty kernels
 * in exact mode paid +4.77 us a launch on the H100 (issue 25), +2.77 us on
 * the H200 (bench/RESULTS.md). */
#define XPU_SCHED_LAUNCH_NS 5000
/* And to each kernel of a CUDA graph (one launch, many kernels): CUPTI's
 * kernel activity on throughout cost a torch.compile loop 0.3-2.9 us a
 * graph kernel a step on the H200, 21 kernels a launch, by the machine's
 * round (bench/RESULTS.md, fifteenth session). */
#define XPU_SCHED_GRAPH_KERNEL_NS 2000
/* Takes a mode (checked: a bad one becomes the default sampled mode). */
void xpu_sched_mode(struct xpu_sched *s, const struct xpu_wire_mode *m, uint64_t now, uint64_t seed);
/* The switch due at now, if any (the state moves on): ON a slice, WHOLE on
 * throughout, OFF either's end. */
int xpu_sched_due(struct xpu_sched *s, uint64_t now);
/* The span on ends now, early (CUPTI's ids stuck): OFF if one was on.  A
 * span on throughout goes on throughout again at the next xpu_sched_due (it
 * was not its cost that ended it), a slice ends as at its end, exact mode's
 * goes on again at the next xpu_sched_due. */
int xpu_sched_end(struct xpu_sched *s, uint64_t now);
/* Nanoseconds until the next switch, UINT64_MAX when none will come. */
uint64_t xpu_sched_wait(const struct xpu_sched *s, uint64_t now);
/* Tracing actually began at now, after the switch due earlier took its
 * time (enabling CUPTI takes 30-55 us; attaching it again after a detach
 * took about 10 ms, docs/gpu-cost.md): the slice lasts its length from
 * here. */
void xpu_sched_started(struct xpu_sched *s, uint64_t now);

/* The pauses in tracing (inject/gaps.c).  A pause starts when launches stop
 * being recorded (the slice's last launch); kernel activity goes off a
 * little later, once the slice's kernels have run, and it ends at the next
 * slice's start.  A graph kernel still running when activity went off gets
 * a later flush's time as its end; a launch made in a pause is not traced,
 * even if activity was still on for its kernel. */
#define XPU_GAPS 16
struct xpu_gap {
	uint64_t off;		/* when kernel activity went off (UINT64_MAX: not yet) */
	uint32_t corr;		/* the last launch traced before the pause */
	uint32_t on_corr;	/* the last launch seen before tracing began again */
	int open;		/* tracing has not begun again */
};
struct xpu_gaps {
	struct xpu_gap gap[XPU_GAPS];	/* the last XPU_GAPS pauses */
	uint32_t n;		/* pauses so far */
};
void xpu_gaps_reset(struct xpu_gaps *g);
/* A pause starts after launch last_corr; activity is still on. */
void xpu_gaps_pause(struct xpu_gaps *g, uint32_t last_corr);
/* Kernel activity went off at now, in the latest pause. */
void xpu_gaps_activity_off(struct xpu_gaps *g, uint64_t now);
/* Tracing begins again; the last launch seen before it was last_corr. */
void xpu_gaps_resume(struct xpu_gaps *g, uint32_t last_corr);
/* 1: the record of a graph kernel of launch corr, ending at end, was cut by
 * a pause (its end is not its own). */
int xpu_gaps_cut(const struct xpu_gaps *g, uint32_t corr, uint64_t end);
/* 1: launch corr was made in a pause kept (not traced). */
int xpu_gaps_outside(const struct xpu_gaps *g, uint32_t corr);

/* Records from what CUPTI reports (inject/records.c), shared with the test
 * stand-in that replaces CUPTI. */
enum { XPU_INJ_RUNTIME = 2, XPU_INJ_DRIVER = 1 };	/* CUPTI callback domains */
/* On the launching thread: the LAUNCH record, with its call site (whole:
 * traced throughout, XPU_WIRE_LAUNCH_WHOLE). */
void xpu_inj_launch(struct xpu_chan *chan, uint32_t corr, uint32_t cbid, uint32_t domain,
		    const char *api, int whole);
/* A kernel record; the name is sent once and then referred to by id. */
void xpu_inj_kernel(struct xpu_chan *chan, const struct xpu_wire_kernel *k, const char *name);
/* A new monitor connected (START flags): names are sent again, sites
 * announced again, counters start from 0. */
void xpu_inj_new_monitor(uint32_t flags);
uint64_t xpu_inj_launches(void);
uint64_t xpu_inj_kernels(void);
uint64_t xpu_inj_graph_kernels(void);	/* of them, a CUDA graph's */

/* Messages on the host's stderr, each at most once per process (inject/say.c). */
void xpu_inj_say_once(int *said, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint64_t xpu_inj_now(void);	/* CLOCK_MONOTONIC ns */

#endif
