/* SPDX-License-Identifier: GPL-2.0-only */
/* What the program's files share: struct app, the one running xputop (its
 * options, session, front-end and outputs), and the functions one of its
 * files calls in another, by the file that owns them.  The role among
 * several xputops has its own struct (role.h). */
#ifndef XPU_APP_H
#define XPU_APP_H

#include <stddef.h>
#include <stdint.h>

#include "child.h"
#include "config.h"
#include "metrics.h"
#include "opts.h"
#include "pidset.h"
#include "role.h"
#include "session.h"
#include "snapshot.h"

/* Where each refresh goes besides the screen or the batch output: the
 * Prometheus metrics and the pprof profiles (outputs.c). */
struct app_outputs {
	struct xpu_prom_http *prom;	/* --prometheus */
	struct xpu_metrics *metrics;
	struct xpu_mbuf mtext, mom;	/* the last metrics, both formats */
	int metrics_failed;		/* said once */
	struct xpu_pprof *pprof;	/* --pprof */
	struct xpu_push *push;		/* --pprof-push */
	uint64_t pprof_at;		/* stream time (CLOCK_MONOTONIC) of the last profiles */
	uint64_t push_failed;		/* failures said so far */
	uint64_t metrics_ns, pprof_ns;	/* the main loop's CPU time in each exporter */
};

struct app {
	struct xpu_opts o;
	struct xpu_session sess;
	struct xpu_snapshot snap;
	struct xpu_viewstate vs;
	struct xpu_symbolizer *sym;
	struct xpu_service *svc;	/* slow work off the ingest path (live only) */
	struct xpu_rec_reader *replay;
	struct xpu_import *import;	/* -r of a bpftrace log instead of a recording */
	uint64_t replay_ticks;		/* the recording's refreshes, counted for the TUI */
	int epfd, timerfd, sigfd;
	int timer_set;		/* the loop's timer exists (app_setup_loop()) */
	/* The timer's period and its next expiry before any shift
	 * (app_rephase_timer()), CLOCK_MONOTONIC ns; the shift's generator. */
	uint64_t timer_ns, timer_next, timer_rand;
	int first_new_source;	/* sources from here on are not polled yet */
	int tui;
	long refreshes;
	int quit;
	int status;		/* exit status */
	struct xpu_child child;	/* -- CMD */
	int child_done;		/* batch mode ends after the refresh that shows its end */
	struct xpu_settings settings;	/* what the settings file said; S saves */
	struct xpu_opts cli;		/* the command line alone: SIGHUP applies the file over it again */
	struct app_outputs out;		/* metrics and profiles (outputs.c) */
	struct app_role role;		/* collector or client of several xputops at once */
	/* A client's own probes, loaded but not attached, for a takeover
	 * (app_preload_probes()); NULL once used or where they did not load. */
	struct {
		struct xpu_source *cpu, *npu;
		struct xpu_gpu_probes *gpu;
	} pre;
	struct xpu_pidset watch;	/* -p, where the session filters (app_watch_pids()) */
};

/* events.c: the loop's epoll set (sources, the refresh timer, signals, the
 * terminal, the collector's stream) and its timer. */
enum { TAG_TIMER = -1, TAG_SIGNAL = -2, TAG_TTY = -3, TAG_SERVICE = -4, TAG_SHARE = -5, TAG_KEEPER = -6 };
int app_epoll_add(int epfd, int fd, int tag);
void app_block_loop_signals(void);
int app_poll_new_sources(struct app *a);
void app_set_timer(struct app *a, uint64_t ns);
void app_arm_timer(struct app *a);
/* A collector's next refresh, shifted by a random part of the sampling
 * period: see events.c. */
void app_rephase_timer(struct app *a);
int app_setup_loop(struct app *a);

/* loop.c: what each event does. */
int app_run_loop(struct app *a);

/* start.c: the session and the sources that feed it. */
struct xpu_session_cfg app_session_cfg(const struct xpu_opts *o, uint32_t hz, uint64_t interval);
int app_open_replay(struct app *a);
int app_start_replay(struct app *a);
int app_start_child(struct app *a, const char *lib);
int app_watch_pids(struct app *a, uint64_t types);
int app_start_services(struct app *a, const struct xpu_session_cfg *cfg);
int app_start_probes(struct app *a);
void app_preload_probes(struct app *a);

/* outputs.c: where each refresh goes (the screen, text or JSON, metrics,
 * profiles) and whether the run ends with it, exports and the recording. */
void app_show(struct app *a);
int app_export_now(struct app *a);
void app_after_refresh(struct app *a);
int app_write_pprofs(struct app *a, char *msg, size_t size);
void app_session_meta(const struct app *a, struct xpu_rec_meta *m);
int app_start_prometheus(struct app *a);
int app_start_pprof(struct app *a);
int app_start_recording(struct app *a);
int app_finish_recording(struct app *a);

#endif
