/* SPDX-License-Identifier: GPL-2.0-only */
/* Who waits for whose launches (issue 26; gpu_stitch.h says what a
 * stitched stack is).  The waiter probes report when a thread of an
 * injected process enters and leaves a waiter function, and the waiting
 * thread's stack once it is unwound; a launch by another thread of the same
 * process inside such a wait gets the stitched stack.  Waits are kept a
 * while after they end, as a launch comes through the library's socket
 * later than the waiter's return comes through the BPF ring.
 *
 * Nothing here waits: a wait whose stack is still being unwound stands in
 * the stitched stack as a pending frame, expanded when its frames come; a
 * call site whose frames are not all resolved yet (so the thread plumbing
 * cannot be told by name) likewise, until they are. */
#ifndef XPU_GPU_WAITS_H
#define XPU_GPU_WAITS_H

#include <stdint.h>

struct xpu_dict;
struct xpu_gpu_waits;

struct xpu_gpu_waits_stats {
	uint64_t waits;		/* waits begun */
	uint64_t stitched;	/* launches given a stitched stack */
	uint64_t dropped;	/* waits not kept (too many open at once) */
	uint64_t untrimmed;	/* call sites stitched whole: their names never all came */
	uint64_t nodes;		/* node makings seen */
	uint64_t nodes_dropped;	/* not kept (their slots taken, or too many unwinding) */
	uint64_t runs;		/* node runs seen */
	uint64_t node_stitched;	/* launches given their node's forward stack */
	/* launches in a node's run not given it, by why: the run was blind,
	 * its node's making was not seen, came after the run began, or its
	 * making site is not kept */
	uint64_t run_blind, run_unmade, run_made_late, run_no_site;
};

struct xpu_gpu_waits *xpu_gpu_waits_new(struct xpu_dict *d);
void xpu_gpu_waits_free(struct xpu_gpu_waits *w);

/* Thread tid of pid entered a waiter of kind (XPU_STITCH_*) at time with
 * stack pointer sp; its stack will come as xpu_gpu_waits_frames(token).  A
 * blind wait (its return may go unseen) stitches nothing: it only ends
 * those of the thread it is nested in or follows. */
void xpu_gpu_waits_begin(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
			 int kind, int blind, uint64_t token);
/* The waiting thread's frames (root first, the waiter function last). */
void xpu_gpu_waits_frames(struct xpu_gpu_waits *w, uint64_t token, const uint32_t *frames, uint32_t n);
/* A waiter returned: sp is the stack pointer after the return; the thread's
 * waits entered below it are over. */
void xpu_gpu_waits_end(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp);

/* The node probes (gpu_stitch.h): thread tid of pid made the node at
 * address addr at time, from the making site key (0: none known); token
 * non-zero: a new site, whose frames will come as
 * xpu_gpu_waits_frames(token). */
void xpu_gpu_waits_node(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t addr,
			uint32_t key, uint64_t token);
/* Thread tid began running node at time with stack pointer sp; it ends
 * with xpu_gpu_waits_end() above sp.  blind: its end may go unseen (not
 * stitched under). */
void xpu_gpu_waits_run(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
		       uint64_t node, int blind);

/* The stack of a launch by tid of pid at time from the call site whose
 * frame is site (root-first frames, expanded in place) with the launch API
 * frame api: under the forward stack of the node tid ran at that time when
 * its making was seen, else under the earliest wait of another thread of
 * pid open at that time, or 0 when there is none. */
uint32_t xpu_gpu_waits_stitch(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time,
			      uint32_t site, uint32_t api);

/* Marks the stitched stacks it remembers (a session holder). */
void xpu_gpu_waits_mark(const struct xpu_gpu_waits *w, struct xpu_dict *d);
/* Forgets waits over long enough, trims call sites whose names came. */
void xpu_gpu_waits_tick(struct xpu_gpu_waits *w, uint64_t now);
/* The process left: its waits go. */
void xpu_gpu_waits_forget(struct xpu_gpu_waits *w, uint32_t pid);
void xpu_gpu_waits_stats(const struct xpu_gpu_waits *w, struct xpu_gpu_waits_stats *st);

#endif
