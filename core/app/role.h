/* SPDX-License-Identifier: GPL-2.0-only */
/* Several xputops at once (core/sources/share.h): the first to start
 * collects (its own probes) and serves its stream; each started after it is
 * a client that reads that stream and tells the collector what it needs;
 * when the collector goes, a client takes over.  The functions take the
 * whole program (app.h): a role starts sources, the loop and refreshes. */
#ifndef XPU_ROLE_H
#define XPU_ROLE_H

#include <stdint.h>
#include <sys/types.h>

#include "pidset.h"
#include "share.h"

struct app;
struct xpu_source;

struct app_role {
	/* A client reads the collector's stream; a collector (own probes)
	 * serves it. */
	struct xpu_share_client *client;
	pid_t collector;		/* the pid a client reads from, or last read from */
	int keeper_fd;			/* a client's pidfd on the collector lock's keeper, or -1 */
	struct xpu_source *server;
	struct xpu_source *gpu;		/* this xputop's GPU source, closed before the lock goes */
	int collecting;			/* the probes are this xputop's own */
	int locked;			/* holds the collector lock: nobody else may serve the GPU socket */
	/* What this xputop needs collected (core/sources/share.h): its -p and
	 * -F, and exact GPU tracing while it asks for it (--gpu-exact, e). */
	struct {
		int exact;
		uint64_t until;		/* CLOCK_MONOTONIC ns, 0: until switched back */
	} gpu_want;
	/* A collector's union of its needs and its clients': the processes
	 * its GPU source serves (collect_ps) and what it last applied. */
	struct xpu_source *cpu;
	struct xpu_pidset collect_ps;
	int collect_ps_set;
	uint64_t needs_gen;
	uint64_t stream_ns;		/* the collector's timer: the shortest -d of all (0: its own) */
	struct xpu_share_need applied;
	int needs_applied;
	char share_warning[300];	/* said again once the screen is up */
};

int app_role_start(struct app *a);		/* live: collector or client */
void app_role_needs(struct app *a, int force);	/* a collector applies all needs */
void app_role_retry(struct app *a);		/* no collector: take over or attach */
void app_role_tick(struct app *a);		/* a collector's refresh */
/* A client's stream and its collector's lock keeper, into the loop's
 * epoll set; the keeper's end (TAG_KEEPER) is the collector's. */
void app_role_watch(struct app *a);
void app_role_keeper_gone(struct app *a);
void app_role_input(struct app *a);		/* a client reads the collector's stream */
void app_role_stop(struct app *a);		/* quitting: the lock goes first */
void app_role_switch_gpu_tracing(struct app *a);	/* the e key */

#endif
