/* SPDX-License-Identifier: GPL-2.0-only */
/* What a front-end reads each refresh.
 *
 * The snapshot is built from the models' closed data and the user's view
 * choices (struct xpu_viewstate).  Front-ends never compute a statistic:
 * the TUI reads only this; batch text, JSON and the exporters read it and,
 * for what it does not carry (whole stack tries, the GPU trace, the
 * models' counters), the session's models read-only (core/session/README.md).
 */
#ifndef XPU_SNAPSHOT_H
#define XPU_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "service.h"
#include "snap_view.h"
#include "stacks.h"
#include "symbolize.h"
#include "view_list.h"

/* What the collector's clients came to: attached now, dropped for not
 * reading, dropped for a malformed need, and connections turned away before
 * attaching (all XPU_SHARE_MAX_CLIENTS places taken, or not root nor of the
 * group), counted by uid: the first XPU_SHARE_UIDS uids each, the others
 * together (uid (uint32_t)-1). */
#define XPU_SHARE_UIDS 8
struct xpu_share_counts {
	unsigned attached;
	uint64_t dropped;
	uint64_t refused;
	uint64_t turned_away;
	uint64_t full, not_allowed;	/* turned_away, by why */
	unsigned nuids;
	struct { uint32_t uid; uint64_t n; } uids[XPU_SHARE_UIDS + 1];
};

struct xpu_dict;
struct xpu_session;
struct xpu_snapshot;

/* XPU_VIEW_<ID> for each view of view_list.h, in its order. */
#define XPU_VIEW_ENUM(ID, name) XPU_VIEW_##ID,
enum xpu_view { XPU_VIEW_LIST(XPU_VIEW_ENUM) XPU_VIEW_MAX };
#undef XPU_VIEW_ENUM

#define XPU_FILTER_MAX 64

/* The user's choices.  Owned by the front-end; the snapshot builder reads it. */
struct xpu_viewstate {
	enum xpu_view view;
	int sort_col[XPU_VIEW_MAX];	/* column index, -1 = the view's default */
	int reverse[XPU_VIEW_MAX];
	char filter[XPU_VIEW_MAX][XPU_FILTER_MAX];
	uint64_t selected[XPU_VIEW_MAX]; /* key of the selected row, 0 = first row */
	int sel_row[XPU_VIEW_MAX];	/* its position: kept while the rows re-sort */
	int follow[XPU_VIEW_MAX];	/* F: the selection stays on its key instead */
	int threads;			/* CPU view: one row per thread */
	int cmdline;			/* CPU view: COMMAND is the command line (p) */
	int tree;			/* CPU view: processes under their parents (t, F5) */
	int meters;			/* a meter per CPU under the header (1) */
	int flame_all;			/* CPU view: the flamegraph of all processes (A) */
	int hot;			/* CPU view: the hottest functions' pane (o) */
	char user[32];			/* CPU view: only this user's rows (u), "" = all */
	enum xpu_window window;		/* recent window or since start */
	int flame;			/* flamegraph pane shown */
	int paused;
	int seek;			/* replay: refreshes to move by (Right, Left...), 0 = none;
					 * the main loop does it and clears it */
};

void xpu_viewstate_init(struct xpu_viewstate *vs);
/* Takes each view's selection as the last build placed it (struct xpu_sel):
 * its row and key; following stops where the followed row is gone. */
void xpu_viewstate_settle(struct xpu_viewstate *vs, const struct xpu_snapshot *s);

/* A view's selection as the rebuilt table has it; the front-end takes it
 * back into its viewstate (row -1: an empty table). */
struct xpu_sel {
	int row;
	uint64_t key;
	int lost;		/* the row followed is gone: following stops */
};

struct xpu_snapshot {
	const struct xpu_dict *dict;	/* names for frames and strings */
	struct xpu_sel sel[XPU_VIEW_MAX];
	int no_flames;			/* set by the caller: nothing will draw the flamegraphs
					 * (batch output), so they are left empty */
	int only_view;			/* set by the caller: the view batch text shows
					 * (--view), -1 for all of them */
	int hot_functions;		/* set by the caller: fill cpu.hot (batch output) */
	int watched_only;		/* set by the caller: the models hold only the
					 * processes -p (or -- CMD) watches */
	/* set by the caller: the symbolizer's caches and the service thread's
	 * work (symbolize.h, service.h), for the JSON memory and symbolizer
	 * objects; have_sym 0 in a replay */
	int have_sym;
	struct xpu_sym_stats sym;
	struct xpu_service_stats svc;

	/* header */
	uint64_t mono_ns;		/* CLOCK_MONOTONIC of the last closed tick */
	uint64_t wall_ns;		/* CLOCK_REALTIME of the last closed tick */
	uint64_t interval_ns;		/* length of the last closed tick */
	uint64_t window_ns;		/* length of the recent window */
	char host[64];
	uint64_t ticks;			/* closed ticks so far */
	uint64_t events_total;
	double events_per_s;		/* over the last tick */
	uint64_t dropped_total;
	uint64_t dropped_tick;		/* dropped during the last tick */
	uint32_t sample_hz;
	uint32_t ncpus;
	double self_cpu_pct;		/* xputop's own CPU over the last tick, % of one core */
	int replay;			/* data comes from a recording */
	int replay_done;		/* and it has ended */
	uint64_t replay_ticks;		/* its refreshes in all (0: not counted) */
	int attached;			/* data comes from another xputop, the collector */
	char source_name[192];		/* "live" or the recording's path */
	/* How the data is collected (live): the samples' rate (sample_hz is
	 * this xputop's own, what is shown), XPU_TICK_* (0: not known yet),
	 * and the collector's pid when attached. */
	uint32_t collect_hz;
	uint32_t collect;
	uint64_t collect_interval_ns;	/* the stream's ticks (the shortest -d of all) */
	uint64_t view_interval_ns;	/* this view's, its own -d */
	uint64_t merged_ticks;		/* the stream's ticks merged into this view's so far */
	struct xpu_share_counts clients;	/* a collector's clients */
	int collector_pid;

	/* each view's part: struct xpu_snap_cpu cpu, ... (view_list.h) */
#define XPU_VIEW_PART(ID, name) struct xpu_snap_##name name;
	XPU_VIEW_LIST(XPU_VIEW_PART)
#undef XPU_VIEW_PART

	/* Alerts of every view: the log, oldest first */
	struct xpu_alert alerts[XPU_ALERT_LOG_MAX];
	uint32_t nalerts;
	uint32_t alerts_active;
	int alert_top;			/* most severe active alert (newest first), -1 = none */
	int alert_recent;		/* newest alert cleared within XPU_ALERT_RECENT_NS, -1 = none */
};

/* CLOCK_REALTIME of a CLOCK_MONOTONIC time, as of the snapshot's tick. */
static inline uint64_t xpu_snapshot_wall(const struct xpu_snapshot *s, uint64_t mono)
{
	return s->wall_ns + mono - s->mono_ns;
}

/* Each view's core descriptor, xpu_snap_view_<name> in snap_<name>.c, in
 * the order of enum xpu_view. */
extern const struct xpu_snap_view *const xpu_snap_views[XPU_VIEW_MAX];

/* Frames lighter than this share of the flame's total are not worth a column. */
#define XPU_SNAP_FLAME_MIN_FRAC 0.001

/* For a view's builder: its rows as the user asked for them (filtered, then
 * sorted by the chosen column or default_col), then where its selection is:
 * the same position, or the followed row (s->sel[v]). */
void xpu_snapshot_arrange(struct xpu_snapshot *s, struct xpu_table *t, const struct xpu_viewstate *vs,
			  enum xpu_view v, int default_col);
/* The same, with shape (optional) reshaping the rows after the sort and
 * before the selection is placed (the CPU view's user filter and tree). */
void xpu_snapshot_arrange_shaped(struct xpu_snapshot *s, struct xpu_table *t, const struct xpu_viewstate *vs,
				 enum xpu_view v, int default_col,
				 void (*shape)(struct xpu_table *t, const struct xpu_viewstate *vs));

void xpu_snapshot_init(struct xpu_snapshot *s);
void xpu_snapshot_free(struct xpu_snapshot *s);
/* (Re)builds the snapshot from the session's models for these choices.
 * Cheap enough to call on every key press that changes the choices. */
int xpu_snapshot_build(struct xpu_snapshot *s, struct xpu_session *sess,
		       const struct xpu_viewstate *vs);

#endif
