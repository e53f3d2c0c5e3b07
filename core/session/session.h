/* SPDX-License-Identifier: GPL-2.0-only */
/* A monitoring session: the dictionary, the models, the sources feeding them
 * and the recorder.  xpu_session_emit() is the event stream: every event from
 * every source (live or replayed) passes through it once, is recorded, and is
 * dispatched to the models. */
#ifndef XPU_SESSION_H
#define XPU_SESSION_H

#include <stdint.h>

#include "dict.h"
#include "event.h"
#include "alerts.h"
#include "model_cpu.h"
#include "model_gpu.h"
#include "model_gpudev.h"
#include "model_npu.h"
#include "pidset.h"
#include "snapshot.h"

struct xpu_rec_writer;
struct xpu_source;

#define XPU_MAX_SOURCES 8
#define XPU_MAX_HOLDERS 8

/* Something outside the models that keeps stack ids between events (a
 * source's per-site stacks, the replay reader's id map): it marks them when
 * the session sweeps the dictionary (dict.h). */
typedef void (*xpu_mark_fn)(void *arg, struct xpu_dict *d);

/* Something that sees the stream as the recorder does (the collector's
 * server, core/sources/share.h): every event, and each stack id a sweep frees. */
struct xpu_tap {
	void (*event)(void *arg, const struct xpu_event *ev);
	void (*forget)(void *arg, uint32_t stack);
	void *arg;
};

/* The dictionary is swept once it holds this many stacks and twice what the
 * last sweep kept. */
#define XPU_SWEEP_MIN 65536u

#define XPU_THIN_SLOTS 1024	/* CPUs thinned each on its own (more share slots) */

struct xpu_session_cfg {
	uint32_t sample_hz;
	uint64_t interval_ns;	/* refresh interval */
	uint64_t window_ns;	/* length of the recent window */
	struct xpu_npu_cfg npu;	/* NPU alert thresholds */
	struct xpu_gpu_tracing gpu;	/* the GPU tracing mode at the start */
};

struct xpu_session {
	struct xpu_dict dict;
	struct xpu_session_cfg cfg;
	struct xpu_cpu_model cpu;
	struct xpu_gpu_model gpu;
	struct xpu_gpudev_model gpudev;	/* GPU devices, from NVML */
	struct xpu_npu_model npu;
	struct xpu_alerts alerts;	/* raised by any model */

	struct xpu_source *sources[XPU_MAX_SOURCES];
	int nsources;
	struct { xpu_mark_fn fn; void *arg; } holders[XPU_MAX_HOLDERS];
	int nholders;
	uint32_t sweep_min;	/* XPU_SWEEP_MIN unless a test lowers it */
	uint32_t sweep_at;	/* live stacks that start the next sweep */
	struct xpu_rec_writer *rec;
	struct xpu_tap tap;	/* fn NULL: none */
	int rec_failed;
	uint64_t rec_invalid;	/* events the recorder refused as malformed */

	/* stream counters */
	uint64_t events_total, events_open, events_last;
	uint64_t dropped_total, dropped_open, dropped_last;
	uint64_t dropped_by_src[XPU_SRC_MAX];
	uint64_t ticks;
	uint64_t last_tick_mono, last_tick_wall, last_interval;
	/* When the first interval began (live): the CPU source leaves out
	 * samples taken before it, while the other sources were starting. */
	uint64_t start_mono;
	uint64_t before_start;	/* samples left out for that */

	uint32_t ncpus;
	double self_cpu_pct;	/* xputop's own CPU over the last tick, % of one core */
	uint64_t self_cpu_ns, self_at;
	char host[64];
	int replay, replay_done;
	int attached;		/* the events are another xputop's (core/sources/share.h) */
	/* -p where the sources cannot filter: events of the types in
	 * watch_types (a bit per XPU_EV_*) from processes outside it go no
	 * further.  NULL: every process. */
	struct xpu_pidset *watch;
	uint64_t watch_types;
	/* How the stream is collected: the rate its CPU samples come at (the
	 * collection in force, this xputop's own or the collector's; 0 where
	 * it is cfg.sample_hz, as in a replay) and XPU_TICK_* (own: set by the
	 * collector's role logic; attached: from the collector's last tick).
	 * Samples beyond cfg.sample_hz, this xputop's own -F, are thinned out
	 * on arrival, each CPU's evenly (xpu_session_emit). */
	uint32_t stream_hz;
	uint32_t stream_collect;
	uint32_t thin_acc[XPU_THIN_SLOTS];
	uint64_t thinned;	/* samples left out for that */
	/* The processes collected, where the collector's sources may leave
	 * others alone (the GPU libraries' dormancy): this xputop's -p and
	 * its clients'.  collect_set 0: as watch says. */
	int collect_set, collect_all;
	struct xpu_pidset *collect;
	int collector_pid;	/* attached: the collector's pid */
	/* Live, ticks come at the stream's pace (the collector's timer: the
	 * shortest -d of the xputops attached to it) and this xputop's models
	 * tick at its own -d, cfg.interval_ns: the stream's ticks in between
	 * are merged, their events staying in the open interval, and a view
	 * tick carries the time of all it merged.  Where -d is not a multiple
	 * of the stream's interval the view's intervals alternate around it
	 * (pace_lag keeps them -d apart on average).  pace 0: every tick is
	 * the view's (a replay). */
	int pace;
	uint64_t stream_last;	/* the stream's last tick, CLOCK_MONOTONIC ns */
	uint64_t stream_interval;	/* and its interval */
	uint64_t merged_ns;	/* the open interval so far */
	int64_t pace_lag;	/* how far the view is behind its own -d */
	uint64_t stream_ticks, merged_ticks;	/* ticks seen, and merged into a view's */
	uint64_t stream_ns;	/* the collector's nominal interval (own: its timer; 0: as measured) */
	struct xpu_share_counts clients;	/* a collector's clients (set by its role logic) */
	int gpu_exact_asked;	/* this xputop asks for exact GPU tracing */
	char source_name[192];
	struct xpu_src_status status[XPU_SRC_MAX];
	struct xpu_gpu_peers gpu_peers;	/* set by the GPU source each tick */
};

/* Two steps, because a replay learns its configuration from the recording,
 * which is read into the session's dictionary. */
void xpu_session_init(struct xpu_session *s);
int xpu_session_start(struct xpu_session *s, const struct xpu_session_cfg *cfg);
void xpu_session_free(struct xpu_session *s);
/* Passes one event down the stream: recorder, then models. */
void xpu_session_emit(struct xpu_session *s, const struct xpu_event *ev);
/* The first interval begins at mono (live, once every source is up). */
void xpu_session_begin(struct xpu_session *s, uint64_t mono);
/* Emits a TICK at mono (CLOCK_MONOTONIC) / wall (CLOCK_REALTIME) ns. */
void xpu_session_tick(struct xpu_session *s, uint64_t mono, uint64_t wall);
int xpu_session_add_source(struct xpu_session *s, struct xpu_source *src);
/* Registers a holder of stack ids; returns 0, or -1 when the table is full. */
int xpu_session_add_holder(struct xpu_session *s, xpu_mark_fn fn, void *arg);
/* Sweeps the dictionary's stacks if it has grown past sweep_at (called after
 * every tick).  Returns the stacks freed. */
uint32_t xpu_session_sweep(struct xpu_session *s);
/* A source's cumulative count of lost records: emits a DROP event for what
 * is new since *seen (and updates it). */
void xpu_session_drops(struct xpu_session *s, enum xpu_src_id src, uint64_t total, uint64_t *seen);
/* Keeps only ps's processes' events of types (bits 1 << XPU_EV_*). */
void xpu_session_watch(struct xpu_session *s, struct xpu_pidset *ps, uint64_t types);
/* Whether process pid is collected (-p, and what the xputops attached to
 * this one need), for a source that may leave the others alone altogether. */
int xpu_session_watches(struct xpu_session *s, uint32_t pid);
/* The collector's union of needs: every process, or those of ps (NULL:
 * none but watch's). */
void xpu_session_collect(struct xpu_session *s, int all, struct xpu_pidset *ps);
/* Switches GPU tracing to exact for seconds (0: until switched back), or
 * back to sampled when exact is 0. */
void xpu_session_gpu_exact(struct xpu_session *s, int exact, double seconds, uint64_t now);
/* Sets a view's source status line (printf-style). */
void xpu_session_status(struct xpu_session *s, enum xpu_src_id src, enum xpu_src_state state,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline uint32_t xpu_window_ticks(const struct xpu_session_cfg *c)
{
	uint64_t n = c->interval_ns ? (c->window_ns + c->interval_ns - 1) / c->interval_ns : 1;
	return n ? (uint32_t)n : 1;
}

#endif
