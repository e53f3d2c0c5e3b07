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
#include "flame.h"
#include "model_cpu.h"
#include "model_gpu.h"
#include "model_gpudev.h"
#include "model_npu.h"
#include "stacks.h"
#include "service.h"
#include "symbolize.h"
#include "table.h"

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

enum xpu_view { XPU_VIEW_GPU = 0, XPU_VIEW_NPU = 1, XPU_VIEW_CPU = 2, XPU_VIEW_MAX };

#define XPU_FILTER_MAX 64
#define XPU_SNAP_GPU_DEVICES 16
#define XPU_SNAP_GPU_PROCS 32

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

/* Whether a data source is delivering, and if not, what the user can do. */
enum xpu_src_state { XPU_SRC_OFF = 0, XPU_SRC_ACTIVE = 1, XPU_SRC_WAITING = 2, XPU_SRC_FAILED = 3 };

struct xpu_src_status {
	enum xpu_src_state state;
	char text[640];		/* one line: what is active, or what is missing and how to fix it */
};

/* What the GPU injection socket refused of its peers (any local user's
 * process may connect: core/sources/gpu_peers.h), by reason, in all, per uid
 * and for the processes refused most recently. */
enum xpu_peer_reason {
	XPU_PEER_CONNS = 0,	/* connections over the uid's quota or the total */
	XPU_PEER_HELLO_LATE,	/* closed: no HELLO within the deadline */
	XPU_PEER_BAD_HELLO,	/* claimed another process, or its process was gone */
	XPU_PEER_NAMES,		/* kernel or API names over a budget */
	XPU_PEER_SERIES,	/* kernels of a (name, device) over the series budget */
	XPU_PEER_DEVICES,	/* records naming a device this machine does not have */
	XPU_PEER_RECORDS,	/* records over the uid's rate */
	XPU_PEER_REASONS
};
#define XPU_PEER_SHOWN 16	/* uids and processes listed */

struct xpu_peer_count {
	uint32_t uid, pid;	/* pid 0: the uid's line */
	char comm[16];		/* the kernel's name of the process (/proc), never the peer's word */
	uint64_t n[XPU_PEER_REASONS];
};

struct xpu_gpu_peers {
	uint64_t total[XPU_PEER_REASONS];
	struct xpu_peer_count uids[XPU_PEER_SHOWN];	/* most refused first */
	int nuids;
	struct xpu_peer_count procs[XPU_PEER_SHOWN];	/* most recent first */
	int nprocs;
	uint32_t devices;	/* device ids accepted: 0 .. devices - 1 */
	uint64_t name_bytes;	/* bytes of names peers added to the dictionary */
	uint32_t conns;		/* connections open */
};

const char *xpu_peer_reason_name(enum xpu_peer_reason r);

/* A view's selection as the rebuilt table has it; the front-end takes it
 * back into its viewstate (row -1: an empty table). */
struct xpu_sel {
	int row;
	uint64_t key;
	int lost;		/* the row followed is gone: following stops */
};

/* Each view's part of the snapshot: what its front-ends (tui/view_<name>.c,
 * core/outputs/batch_<name>.c, the exports) read. */
struct xpu_snap_cpu {
	struct xpu_src_status status;
	struct xpu_table rows;		/* processes or threads, sorted and filtered */
	struct xpu_flame flame;		/* stacks of the selected row */
	uint64_t flame_key;		/* pid (or tid in thread mode) the flame shows, 0 = none */
	char flame_title[128];
	uint64_t samples_tick;		/* samples in the last tick, all processes */
	struct xpu_cpu_sys sys;		/* load, CPU busy, memory: flags 0 = none read */
	struct xpu_cpu_hot hot[XPU_CPU_HOT_MAX];	/* machine-wide hottest functions */
	int nhot;
	uint64_t hot_all;		/* the samples they are a share of */
};

struct xpu_snap_gpu {
	struct xpu_src_status status;
	struct xpu_gpu_peers peers;	/* what the injection socket refused */
	struct xpu_table rows;		/* kernels, sorted and filtered */
	struct xpu_flame flame;		/* CPU -> launch API -> kernel, by GPU time */
	int flame_launches;		/* no GPU time: the flame counts launch-only calls */
	struct xpu_gpu_device_sum devices[XPU_SNAP_GPU_DEVICES];
	int ndevices;
	double joined_pct;		/* GPU time with a complete launch stack, -1 = none */
	uint64_t ns;			/* GPU time traced in the window */
	double ns_est;			/* the same, sampled processes' scaled up */
	struct xpu_gpu_est ns_err;	/* ns_est's uncertainty; ok 0: not estimated */
	struct xpu_gpu_proc procs[XPU_SNAP_GPU_PROCS];	/* processes seen, connected first */
	int nprocs;
	const char *selected;		/* full name of the selected kernel, or NULL */
	struct xpu_gpudev_snap dev;	/* GPU devices as NVML reports them */
	/* GPU tracing: the mode asked of the libraries (live), whether this
	 * xputop asks for exact tracing, and whether the figures shown are
	 * sampled estimates with the share of time traced. */
	struct xpu_gpu_tracing tracing;
	int exact_asked;
	double exact_left_s;		/* exact mode's time left, 0 = no limit */
	int sampled;
	double cover;			/* 0..1 */
};

struct xpu_snap_npu {
	struct xpu_src_status status;
	struct xpu_npu_snap model;	/* the NPU model's: the calls table sorted and filtered */
	struct xpu_npu_srcinfo sources;	/* what each NPU data source is doing */
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

	/* each view's part */
	struct xpu_snap_cpu cpu;
	struct xpu_snap_gpu gpu;
	struct xpu_snap_npu npu;

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

/* The CPU view's summary line, as htop's meters say it:
 * "load 0.52 0.40 0.33  cpu 12.3%  mem 3.2G/15.6G" (N/A for what is unknown).
 * Empty when nothing was read (a recording made before these figures). */
void xpu_cpu_sys_text(const struct xpu_cpu_sys *y, char *buf, size_t size);
/* A GPU device process's kind from its valid bits, as both front-ends say it:
 * "compute", "graphics" or "compute+graphics". */
const char *xpu_gpudev_proc_type(uint32_t valid);

void xpu_snapshot_init(struct xpu_snapshot *s);
void xpu_snapshot_free(struct xpu_snapshot *s);
/* (Re)builds the snapshot from the session's models for these choices.
 * Cheap enough to call on every key press that changes the choices. */
int xpu_snapshot_build(struct xpu_snapshot *s, struct xpu_session *sess,
		       const struct xpu_viewstate *vs);

#endif
