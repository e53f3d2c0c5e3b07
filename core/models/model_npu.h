/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model: Intel NPU (intel_vpu) ioctls, firmware IPC, jobs, memory
 * activity, Level Zero calls and device busy time, and the stall rules.
 *
 * What the NPU events mean (struct xpu_ev_npu; `count` is how many calls or
 * messages one event stands for, at least 1):
 *   NPU_IOCTL  code = (type << 8) | nr of the command; result = 0 or -errno;
 *              dur_ns = latency (a histogram bucket's lower bound when the
 *              source aggregated); aux XPU_NPU_F_NODUR: latency unknown.
 *   NPU_IPC    code = JSM message type (0 = not known); aux = XPU_NPU_IPC_*;
 *              result = status, or ivpu_ipc_receive's return (-ETIMEDOUT);
 *              arg = heartbeat value with XPU_NPU_IPC_HB; dur_ns = receive wait.
 *   NPU_JOB    code = XPU_NPU_JOB_*; aux = queue (doorbell, fence context,
 *              context id); arg = job key (0 = the queue's oldest job);
 *              result = job status (DONE; 256 = aborted) or XPU_NPU_ABORT_* (ABORT);
 *              id = the job id a DONE reported (0: the trace has none).
 *   NPU_MEM    code = XPU_NPU_MEM_*; arg = bytes (BO_CREATE) or device address.
 *   NPU_PM     code = XPU_NPU_PM_*; aux = dict string (recovery reason or the
 *              power event's name); arg = milliseconds (TDR).
 *   NPU_L0     code = enum xpu_npu_l0_api; result = ze_result_t; dur_ns.
 *   NPU_BUSY   aux = device index; arg = npu_busy_time_us as read from sysfs.
 *   NPU_FUNC   code = dict string: the ivpu_* function (or vpu:* tracepoint)
 *              called; count = calls; aux = where the calling thread was,
 *              XPU_NPU_FN_CTX(Level Zero API, ioctl command), 0 = nowhere
 *              known; pid = that thread's process, 0 = not tied to one
 *              (interrupts, workers, or a log without pids).
 *   NPU_FUNC_LAT code = dict string: the ivpu_* function; count = calls of it
 *              timed entry to return that took dur_ns (a histogram bucket's
 *              lower bound); aux XPU_NPU_FLAT_UNTIMED: count returns that
 *              could not be timed instead.  Not calls: NPU_FUNC counts those.
 *
 * Rates are per second over the last closed tick and over the recent window,
 * as in the CPU model.  Alerts go to the session's alert log:
 *   CRITICAL  a recovery; an aborted job; an IPC receive timeout
 *             (event alerts, held XPU_NPU_ALERT_HOLD_NS after the last one);
 *   STALL     the oldest outstanding job is older than the TDR, and during
 *             the last TDR no job completed, the engine heartbeat did not
 *             advance and no firmware IPC went on (no message, no call of an
 *             IPC driver function); cleared when any of that changes;
 *   WARN      page table entries written (ivpu_mmu_context_map_page) are more
 *             than twice the 256 per MiB of buffers created, since the
 *             start, once 8 MiB were mapped (buffers mapped again and again);
 *   WARN      the IPC rate is storm_factor times the baseline learned over
 *             ticks of work (jobs moving, or messages while one is outstanding); or no IPC for longer than the silence
 *             threshold while jobs are outstanding, once job latencies have
 *             been learned.  Quiet alone never raises anything.
 */
#ifndef XPU_MODEL_NPU_H
#define XPU_MODEL_NPU_H

#include <stdint.h>

#include "alerts.h"
#include "event.h"
#include "htab.h"
#include "table.h"
#include "ticks.h"
#include "window.h"

struct xpu_dict;
struct xpu_event;

/* NPU_IOCTL aux */
#define XPU_NPU_F_NODUR 1

/* NPU_IPC aux */
enum {
	XPU_NPU_IPC_TX = 1,	/* host -> firmware */
	XPU_NPU_IPC_RX = 2,	/* firmware -> host */
	XPU_NPU_IPC_MSG = 4,	/* counts as one message in the rates (else: type detail only) */
	XPU_NPU_IPC_HB = 8,	/* arg holds the engine heartbeat */
};

enum { XPU_NPU_JOB_SUBMIT = 1, XPU_NPU_JOB_DONE = 2, XPU_NPU_JOB_ABORT = 3 };
#define XPU_NPU_JOB_STATUS_ABORTED 256

enum {
	XPU_NPU_MEM_BO_CREATE = 1,
	XPU_NPU_MEM_BIND = 2,
	XPU_NPU_MEM_MAP = 3,
	XPU_NPU_MEM_UNMAP = 4,
	XPU_NPU_MEM_FAULT = 5,
	XPU_NPU_MEM_OTHER_MMU = 6,	/* another ivpu_mmu_* function (imports) */
	XPU_NPU_MEM_OTHER_BO = 7,	/* another ivpu_bo_* / ivpu_gem_* function (imports) */
	XPU_NPU_MEM_MAP_PAGE = 8,	/* one 4 KiB page table entry written (ivpu_mmu_context_map_page) */
	XPU_NPU_MEM_FREE_PAGE = 9,	/* a page table page freed (ivpu_pgtable_free_page) */
	XPU_NPU_MEM_MAX
};

enum {
	XPU_NPU_PM_SUSPEND = 1,
	XPU_NPU_PM_RESUME = 2,
	XPU_NPU_PM_RECOVERY = 3,
	XPU_NPU_PM_TDR = 4,	/* the driver's TDR timeout in arg (ms), as the source read it */
	XPU_NPU_PM_OTHER = 5,	/* a vpu:pm event named by aux */
	XPU_NPU_PM_MAX
};

#define XPU_NPU_ETIMEDOUT 110
#define XPU_NPU_HISTORY 300		/* ticks of IPC rate kept for the sparkline */
#define XPU_NPU_ALERT_HOLD_NS (10ULL * 1000000000)
#define XPU_NPU_MAX_DEVICES XPU_NPU_DEV_MAX
#define XPU_NPU_MAX_TYPES 48		/* distinct IPC message types tracked */
#define XPU_NPU_MAX_OUTSTANDING 65536

/* Thresholds of the alert rules.  Zero fields take the defaults. */
struct xpu_npu_cfg {
	uint32_t tdr_ms;		/* forced TDR; 0 = the driver's (PM_TDR event) or 2000 */
	double storm_factor;		/* WARN above this times the baseline (default 5) */
	double storm_min;		/* ... and at least this many messages/s (default 50) */
	uint32_t silence_ms;		/* WARN on IPC silence longer than this (default 1000)
					 * and 4x the learned job latency p99 */
	uint32_t learn_ticks;		/* ticks with jobs before the storm rule arms (default 5) */
	uint32_t learn_jobs;		/* completed jobs before the silence rule arms (default 8) */
};

#define XPU_NPU_DEFAULT_TDR_MS 2000

/* Driver functions by category, by the rule in xputop(8) (NPU VIEW),
 * xpu_npu_fn_category(). */
enum xpu_npu_cat {
	XPU_NPU_CAT_MM = 0,	/* memory management: MMU, page tables */
	XPU_NPU_CAT_IPC = 1,	/* firmware IPC */
	XPU_NPU_CAT_BO = 2,	/* buffer management: buffer objects */
	XPU_NPU_CAT_JOBS = 3,	/* job submission, completion, waits, queues */
	XPU_NPU_CAT_POWER = 4,	/* power management, boot, recovery */
	XPU_NPU_CAT_OTHER = 5,
	XPU_NPU_NCAT
};

/* NPU_FUNC aux: the Level Zero call and ioctl a function ran inside. */
#define XPU_NPU_FN_CTX(api, cmd) ((uint32_t)(api) << 16 | ((cmd) & 0xffff))
#define XPU_NPU_FN_API(aux) ((aux) >> 16)
#define XPU_NPU_FN_CMD(aux) ((aux) & 0xffff)

/* NPU_FUNC_LAT aux */
#define XPU_NPU_FLAT_UNTIMED 1

#define XPU_NPU_MAX_FNS 4096		/* distinct functions kept */
#define XPU_NPU_MAX_CHAINS 4096		/* (process, L0 call, ioctl, function) kept */


struct xpu_npu_fn {
	uint32_t name, cat;		/* dict string; enum xpu_npu_cat */
	uint32_t ioctl;			/* the ioctl an ivpu_*_ioctl handler serves, else 0 */
	struct xpu_win_count calls;
	struct xpu_win_hist lat;	/* entry to return, by xpu_npu_hist_bucket */
	struct xpu_win_count untimed;	/* returns that could not be timed */
};

/* Calls of one function made inside one Level Zero call and ioctl of one
 * process; counted since the start (no window). */
struct xpu_npu_chain {
	uint32_t pid, comm, ctx, fn;	/* fn: index into fns */
	struct xpu_win_count calls;
};

/* KIND_IRQ: the completions of the process's jobs the IRQ / IPC path
 * delivered, charged to it by the job id the completion carried. */
enum xpu_npu_kind { XPU_NPU_KIND_IOCTL = 1, XPU_NPU_KIND_L0 = 2, XPU_NPU_KIND_JOB = 3, XPU_NPU_KIND_IRQ = 4 };

/* One row of the calls table: a process's ioctl command, Level Zero API or jobs. */
#define XPU_NPU_MAX_CALL_ROWS 8192u	/* (process, call) rows */

struct xpu_npu_call {
	uint32_t pid, kind, code, comm;
	struct xpu_win_count calls, errors;
	struct xpu_win_hist lat;	/* latency by xpu_npu_hist_bucket */
	struct xpu_win_count busy_ns;	/* jobs: summed job time */
	uint32_t err_code[4];		/* most frequent errnos / results */
	uint64_t err_count[4];
};

struct xpu_npu_type {
	uint32_t code;
	struct xpu_win_count tx, rx;
};

struct xpu_npu_job {
	uint64_t submit_ns, key;
	uint64_t exited;		/* when its process exited (0: alive); the job stays a
					 * TDR more: the driver still holds it */
	uint32_t queue, pid, comm, call;	/* call: index of the process's job row + 1 */
};

/* A finished job (or one still outstanding, as the trace export writes it):
 * kept in a ring of the XPU_NPU_JOB_RING most recent, for the trace export. */
#define XPU_NPU_JOB_RING 4096u
enum { XPU_NPU_JOBREC_DONE = 1, XPU_NPU_JOBREC_ABORTED = 2, XPU_NPU_JOBREC_OUTSTANDING = 3 };
struct xpu_npu_jobrec {
	uint64_t submit_ns, end_ns;	/* end: completion or abort */
	uint64_t job_id;		/* the id the trace reported; 0: none */
	uint32_t pid, comm, queue;
	uint32_t state;			/* XPU_NPU_JOBREC_* */
	int32_t status;			/* the job status a completion reported */
	uint32_t pad;
};

/* What happened to a stalled job after the stall was raised. */
enum xpu_npu_after {
	XPU_NPU_AFTER_NONE = 0,
	XPU_NPU_AFTER_DONE,		/* it completed, late */
	XPU_NPU_AFTER_ABORT,		/* the driver aborted it */
	XPU_NPU_AFTER_RECOVERY,		/* the driver recovered the device */
	XPU_NPU_AFTER_EXIT,		/* its process exited and a TDR passed with no word of it */
	XPU_NPU_AFTER_PROGRESS,		/* IPC, a heartbeat or another job's completion came */
};

/* The evidence behind the STALL alert, kept after it clears: the job, what
 * the firmware and the job's process did while it waited, the TDR, and what
 * came after. */
struct xpu_npu_stall {
	struct xpu_npu_job job;		/* the oldest outstanding job, as submitted */
	uint64_t raised, cleared;	/* 0: never raised; still active */
	uint64_t last_ipc, last_hb;	/* as raised: the last firmware IPC, heartbeat progress; 0: none */
	uint32_t waits;			/* BO_WAIT calls of its process since its submit */
	uint64_t wait_first, wait_last;
	uint32_t tdr_ms;		/* in force when raised */
	const char *tdr_origin;
	uint32_t after;			/* enum xpu_npu_after */
	uint64_t after_ns;
	char after_text[112];		/* what came after, in words */
};

/* Global counters, one ring matrix. */
enum xpu_npu_gctr {
	XPU_NPU_C_TX, XPU_NPU_C_RX, XPU_NPU_C_TIMEOUT,
	XPU_NPU_C_SUBMIT, XPU_NPU_C_DONE, XPU_NPU_C_ABORTED,
	XPU_NPU_C_MEM0,	/* + XPU_NPU_MEM_* */
	XPU_NPU_C_PM0 = XPU_NPU_C_MEM0 + XPU_NPU_MEM_MAX,	/* + XPU_NPU_PM_* */
	XPU_NPU_C_IOCTL = XPU_NPU_C_PM0 + XPU_NPU_PM_MAX,
	XPU_NPU_C_IOCTL_ERR, XPU_NPU_C_L0,
	XPU_NPU_NCTR
};

struct xpu_npu_device {
	uint64_t busy_us, at_ns;	/* last reading */
	uint64_t prev_us, prev_ns;	/* the one before */
	int readings;
	struct xpu_ev_npu_dev state;	/* the last NPU_DEV sample */
	int have_state;
};

/* An open NPU file as fdinfo last reported it; forgotten when a sample has
 * not mentioned it for XPU_NPU_CLIENT_STALE_NS. */
#define XPU_NPU_MAX_CLIENTS 256
#define XPU_NPU_CLIENT_STALE_NS (3ULL * 1000000000)
struct xpu_npu_client {
	uint32_t pid;
	struct xpu_ev_npu_client c;
	uint64_t at, prev_at, prev_engine_ns;
	int samples;
};

/* What each NPU data source is doing on this machine (or "replaying"):
 * set by the source at start-up, shown as is. */
#define XPU_NPU_MAX_SRCLINES 16
struct xpu_npu_srcline {
	char name[24];
	int state;		/* enum xpu_src_state */
	char detail[200];
};

struct xpu_npu_srcinfo {
	struct xpu_npu_srcline line[XPU_NPU_MAX_SRCLINES];
	uint32_t n;
};

struct xpu_npu_model {
	struct xpu_npu_cfg cfg;
	struct xpu_npu_srcinfo sources;
	struct xpu_alerts *alerts;
	struct xpu_ticks ticks;
	uint64_t now;			/* time of the newest event or tick */
	uint64_t events;		/* NPU events seen */

	struct xpu_win_count g[XPU_NPU_NCTR];
	struct xpu_npu_call *calls;
	uint32_t ncalls, cap;
	/* Memory is bounded (trim.h): past max_calls rows, idle ones age out. */
	uint32_t max_calls;
	uint64_t calls_aged_out;
	struct xpu_htab idx;
	struct xpu_npu_type types[XPU_NPU_MAX_TYPES];
	uint32_t ntypes;

	struct xpu_win_hist job_lat;
	struct xpu_npu_job *jobs;	/* outstanding, oldest first */
	uint32_t njobs, jobs_cap;
	uint64_t jobs_unmatched;	/* completions with no known submission */
	uint64_t jobs_forgotten;	/* outstanding jobs dropped from a full list */
	uint64_t jobs_by_order;		/* completions matched without a job id: the queue's oldest */
	uint64_t jobs_by_id;		/* completions matched by job id */
	/* The completions' IRQ / IPC work charged to the job's process (the
	 * completion named its job), and the rest (no job id, or no pid). */
	uint64_t irq_linked, irq_unlinked;
	uint32_t fn_job_done;		/* ivpu_job_done_callback's index + 1; 0: not seen */
	/* Recent finished jobs (a ring, allocated at the first), the trace export's */
	struct xpu_npu_jobrec *ring;
	uint64_t ring_n;		/* jobs ever put in it; past XPU_NPU_JOB_RING the oldest go */
	/* BO_WAIT calls since the oldest outstanding job's submit, by its process */
	uint64_t wait_for;		/* that job's submit time */
	uint32_t waits;
	uint64_t wait_first, wait_last;
	int waits_by_ioctl;		/* BO_WAIT ioctls seen: ivpu_bo_wait_ioctl calls are the same */
	struct xpu_npu_stall stall;

	/* IPC rate history: messages and length of each closed tick, oldest first */
	uint64_t hist_msgs[XPU_NPU_HISTORY], hist_ns[XPU_NPU_HISTORY];
	uint32_t hist_head, hist_n;

	/* rule state */
	uint32_t tdr_ms_driver;		/* from a PM_TDR event; 0 = none */
	uint64_t last_done, last_hb_progress, last_msg;
	uint64_t hb_value;
	int hb_valued;
	uint64_t hb_asked;		/* a heartbeat query in flight since then; 0 = none */
	double baseline;		/* learned IPC messages/s over ticks with jobs */
	uint32_t learned_ticks;
	int storm, storm_calm;		/* storm alert up; calm ticks since */
	uint32_t last_recovery_reason;	/* dict string */

	struct xpu_npu_device dev[XPU_NPU_MAX_DEVICES];

	/* driver functions */
	struct xpu_npu_fn *fns;
	uint32_t nfns, capfns;
	struct xpu_htab fn_idx;
	struct xpu_win_count cat[XPU_NPU_NCAT];	/* calls by category */
	uint64_t fns_over;		/* calls of functions past XPU_NPU_MAX_FNS, uncounted by name */
	struct xpu_npu_chain *chains;
	uint32_t nchains, capchains;
	struct xpu_htab chain_idx;
	uint64_t chains_over;		/* calls past XPU_NPU_MAX_CHAINS, left out of the chains */
	uint64_t last_ipc_fn;		/* the last call of an IPC function */
	/* page mapping against allocation, since the start (npu.map_pages) */
	uint64_t bo_bytes;		/* bytes of buffer objects created (0 where not known) */
	uint64_t map_pages;		/* ivpu_mmu_context_map_page calls: 4 KiB entries written */
	uint32_t fn_map_page;		/* that function's index + 1; 0: not seen yet */
	int map_storm;
	int untimed;			/* fed counts without times (a log's): rates are N/A */
	int fn_timed;			/* NPU_FUNC_LAT seen: driver functions are timed */
	int fn_lat_absent;		/* set by an importer: the input holds no return times */

	struct xpu_npu_client clients[XPU_NPU_MAX_CLIENTS];
	uint32_t nclients;
};

int xpu_npu_model_init(struct xpu_npu_model *m, const struct xpu_npu_cfg *cfg, uint32_t window_ticks,
		       struct xpu_alerts *alerts);
void xpu_npu_model_free(struct xpu_npu_model *m);
/* Takes one NPU_* event.  Returns 0 or -ENOMEM. */
int xpu_npu_model_event(struct xpu_npu_model *m, const struct xpu_dict *d, const struct xpu_event *ev);
/* Closes the open tick, which ended at `now` and lasted interval_ns, and
 * evaluates the tick rules. */
void xpu_npu_model_tick(struct xpu_npu_model *m, uint64_t now, uint64_t interval_ns);
/* Adds (or replaces, by name) a line of the sources list. */
void xpu_npu_model_source(struct xpu_npu_model *m, const char *name, int state, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A process exited: its outstanding jobs are marked so, and a stall on one
 * of them says so.  They stay one TDR more (the driver still holds them: a
 * hung one keeps the firmware hung until the driver's TDR recovers it); with
 * no completion, abort or recovery by then they are no longer counted (the
 * word of their end was lost), and the stall clears saying so. */
void xpu_npu_model_exit(struct xpu_npu_model *m, uint32_t pid, uint64_t now);
/* The jobs the trace export writes, oldest first: the ring's finished jobs,
 * then those outstanding (state OUTSTANDING, end_ns = now).  malloc'd, *n of
 * them; NULL with *n = 0 when there are none or memory is out (-ENOMEM in *err). */
struct xpu_npu_jobrec *xpu_npu_model_jobs(const struct xpu_npu_model *m, uint32_t *n, int *err);
/* Calls of driver function fn (its index) no chain holds: made with no
 * process known, since the start. */
uint64_t xpu_npu_fn_unchained(const struct xpu_npu_model *m, uint32_t fn);
/* Of *left ivpu_job_done_callback calls no chain holds, those that
 * delivered call row i's completions (an irq row's, as many as it has):
 * taken from *left and returned; 0 for any other row.  The chains table and
 * the folded export charge them to the process under this frame: */
uint64_t xpu_npu_irq_take(const struct xpu_npu_model *m, uint32_t i, uint64_t *left);
#define XPU_NPU_IRQ_FRAME "IRQ/IPC: its job's completion"
/* The TDR the rules use, and where it came from ("--npu-tdr", "driver", "default"). */
uint32_t xpu_npu_model_tdr_ms(const struct xpu_npu_model *m, const char **origin);

/* ---- what front-ends read (built by xpu_npu_model_snapshot) ---- */

enum xpu_npu_col {
	XPU_NPU_COL_PID, XPU_NPU_COL_COMM, XPU_NPU_COL_KIND, XPU_NPU_COL_CALL, XPU_NPU_COL_RATE,
	XPU_NPU_COL_AVG, XPU_NPU_COL_TOTAL, XPU_NPU_COL_ERRORS, XPU_NPU_COL_ERRNO,
	XPU_NPU_COL_P50, XPU_NPU_COL_P99, XPU_NPU_COL_BUSY, XPU_NPU_NCOLS
};
extern const struct xpu_col xpu_npu_cols[XPU_NPU_NCOLS];

/* The driver functions table. */
enum xpu_npu_fcol {
	XPU_NPU_FCOL_FUNC, XPU_NPU_FCOL_CAT, XPU_NPU_FCOL_RATE, XPU_NPU_FCOL_COUNT,
	XPU_NPU_FCOL_TOTAL, XPU_NPU_FCOL_SHARE, XPU_NPU_FCOL_P50, XPU_NPU_FCOL_P99, XPU_NPU_FCOL_MAX,
	XPU_NPU_FCOL_TIMED, XPU_NPU_FCOL_UNTIMED, XPU_NPU_NFCOLS
};
extern const struct xpu_col xpu_npu_fcols[XPU_NPU_NFCOLS];

/* Open NPU files (DRM fdinfo). */
enum xpu_npu_kcol {
	XPU_NPU_KCOL_PID, XPU_NPU_KCOL_COMM, XPU_NPU_KCOL_CLIENT, XPU_NPU_KCOL_TOTAL, XPU_NPU_KCOL_RESIDENT,
	XPU_NPU_KCOL_ENGINE, XPU_NPU_NKCOLS
};
extern const struct xpu_col xpu_npu_kcols[XPU_NPU_NKCOLS];

/* The Level Zero -> ioctl -> driver function chains, since the start. */
enum xpu_npu_ccol {
	XPU_NPU_CCOL_PID, XPU_NPU_CCOL_COMM, XPU_NPU_CCOL_L0, XPU_NPU_CCOL_IOCTL, XPU_NPU_CCOL_FUNC,
	XPU_NPU_CCOL_RATE, XPU_NPU_CCOL_TOTAL, XPU_NPU_NCCOLS
};
extern const struct xpu_col xpu_npu_ccols[XPU_NPU_NCCOLS];

struct xpu_npu_cat_snap {
	uint64_t count, total;		/* calls in the window (or since start), since start */
	double share, share_total;	/* percent of all driver function calls */
	char share_text[8], share_total_text[8];	/* written as xpu_npu_share_text does */
};

/* The stall alert's evidence (struct xpu_npu_stall) as front-ends show it. */
struct xpu_npu_stall_snap {
	int shown;			/* a stall was raised: the rest is set */
	int active;
	int job_id_known;		/* the trace names jobs (else: matched by order) */
	uint64_t job_id;
	uint32_t queue, pid;
	char comm[32];			/* "" when not known */
	uint64_t submit, raised, cleared;	/* CLOCK_MONOTONIC ns; cleared 0 while active */
	uint64_t exited;		/* when its process exited; 0: it has not */
	uint64_t age_ns;		/* submit to now while active, to the clear after */
	uint64_t last_ipc, last_hb;	/* 0: none seen */
	uint32_t waits;			/* BO_WAIT calls of its process since the submit */
	uint64_t wait_every_ns;		/* their mean spacing; 0 below two calls */
	uint32_t tdr_ms;
	const char *tdr_origin;
	char after[160];		/* what came after, "" while nothing has */
};

struct xpu_npu_type_snap {
	uint32_t code;
	char name[40];
	double tx_s, rx_s;
	uint64_t tx_total, rx_total;
};

struct xpu_npu_snap {
	int any;			/* the model has seen NPU events */
	int untimed;			/* counts only (a log without times): no rates */
	uint64_t events;
	struct xpu_table calls;		/* rows: processes x (ioctl | L0 API | jobs) */
	/* IPC */
	double tx_s, rx_s, tx_avg, rx_avg;
	uint64_t tx_total, rx_total, timeouts_total;
	double history[XPU_NPU_HISTORY];	/* messages/s per closed tick, oldest first */
	uint32_t nhistory;
	double history_peak;		/* the largest of them */
	struct xpu_npu_type_snap types[XPU_NPU_MAX_TYPES];
	uint32_t ntypes;
	double baseline;		/* learned messages/s; valid when baseline_armed */
	int baseline_armed;
	/* jobs */
	double submit_s, done_s;
	uint64_t submitted_total, done_total, aborted_total, aborted_recent;
	uint32_t outstanding;
	uint64_t oldest_ns;		/* age of the oldest outstanding job */
	int jobs_by_order;		/* some completions were matched by order, not job id */
	uint64_t irq_linked, irq_unlinked;	/* completions whose IRQ / IPC work was charged
						 * to their job's process; the others */
	uint64_t jobs_kept, jobs_dropped;	/* finished jobs in the trace export's ring; gone from it */
	struct xpu_npu_stall_snap stall;
	int lat_valid;			/* p50/p99/max over the window exist */
	uint64_t p50_ns, p99_ns, max_ns;
	/* memory */
	double mem_s[XPU_NPU_MEM_MAX];
	uint64_t mem_total[XPU_NPU_MEM_MAX];
	int shares_valid;
	char share_mm_text[8], share_ipc_text[8], share_bo_text[8];	/* xpu_npu_share_text */
	double share_mm, share_ipc, share_bo;	/* percent of the window's calls: of driver
						 * function calls where any were traced,
						 * else of memory events and IPC messages */
	/* power */
	uint64_t suspends, resumes, recoveries;
	char last_recovery[40];
	/* device busy */
	int busy_valid;
	double busy_pct;
	/* the device as sysfs says it (the first device with a sample) */
	int dev_valid;
	struct xpu_ev_npu_dev dev;
	struct xpu_table clients;	/* open NPU files, from fdinfo */
	/* Level Zero, all processes */
	double l0_s[8];
	uint64_t l0_total[8];
	/* driver functions */
	struct xpu_table funcs;		/* one row per function */
	struct xpu_table chains;	/* rows with a known Level Zero call or ioctl */
	uint64_t fn_count, fn_total;	/* calls in the window (or since start), since start */
	struct xpu_npu_cat_snap cats[XPU_NPU_NCAT];
	uint64_t fns_over, chains_over;
	int fn_timed;			/* the latency columns hold figures (else N/A: untimed) */
	uint64_t fn_untimed;		/* returns not timed in the window, all functions */
	char fn_lat_note[48];		/* what the latency columns lack, for the table's title:
					 * "no latency in this log", "3 returns not timed", "" */
	/* rules */
	uint32_t tdr_ms;
	const char *tdr_origin;
	uint32_t silence_ms;		/* in effect now */
};

void xpu_npu_snap_init(struct xpu_npu_snap *s);
void xpu_npu_snap_free(struct xpu_npu_snap *s);
/* Fills s for window w (the calls table unsorted). */
int xpu_npu_model_snapshot(const struct xpu_npu_model *m, const struct xpu_dict *d,
			   struct xpu_npu_snap *s, enum xpu_window w);

/* How the completions' IRQ / IPC work was matched to jobs, in words:
 * "by job id", "unavailable: ...", ... */
const char *xpu_npu_irq_matching(const struct xpu_npu_snap *s);
/* Names: "IVPU_SUBMIT", "DRM_VERSION", or NULL for a command it does not know. */
const char *xpu_npu_ioctl_name(uint32_t cmd);
/* Names: "JOB_DONE", ... or NULL. */
const char *xpu_npu_msg_name(uint32_t type);
/* The JSM type for a name as vpu:jsm prints it ("VPU_JSM_MSG_JOB_DONE" or "JOB_DONE"), or 0. */
uint32_t xpu_npu_msg_type(const char *name);
/* Names: "zeCommandQueueExecuteCommandLists", ... or NULL. */
const char *xpu_npu_l0_name(uint32_t api);
const char *xpu_npu_mem_name(uint32_t code);
/* "memory management", "IPC", ... */
const char *xpu_npu_cat_name(uint32_t cat);
/* A share as every front-end writes it: "<1%" above 0 and below 1, ">99%"
 * above 99 and below 100 (never a rounded 1% or 100% that is not), else
 * whole percents. */
void xpu_npu_share_text(char *buf, size_t size, double pct);
/* The category of a driver function (ivpu_mmu_context_map_page) or tracepoint
 * (vpu:job), by the rule in xputop(8). */
uint32_t xpu_npu_fn_category(const char *name);
/* The DRM ioctl an ivpu_*_ioctl handler serves ((type << 8) | nr), or 0. */
uint32_t xpu_npu_fn_ioctl(const char *name);

#endif
