/* SPDX-License-Identifier: GPL-2.0-only */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "session.h"

/* Frames lighter than this share of the flame's total are not worth a column. */
#define FLAME_MIN_FRAC 0.001

void xpu_viewstate_init(struct xpu_viewstate *vs)
{
	memset(vs, 0, sizeof(*vs));
	vs->view = XPU_VIEW_CPU;
	for (int i = 0; i < XPU_VIEW_MAX; i++)
		vs->sort_col[i] = -1;
	vs->flame = 1;
	vs->window = XPU_WIN_RECENT;
}

void xpu_viewstate_settle(struct xpu_viewstate *vs, const struct xpu_snapshot *s)
{
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		if (s->sel[v].lost)
			vs->follow[v] = 0;
		if (s->sel[v].row >= 0) {
			vs->sel_row[v] = s->sel[v].row;
			vs->selected[v] = s->sel[v].key;
		}
	}
}

static void gib(char *buf, size_t size, uint64_t bytes)
{
	double v = (double)bytes;
	if (bytes >= (1ULL << 30))
		snprintf(buf, size, "%.1fG", v / (1ULL << 30));
	else
		snprintf(buf, size, "%.0fM", v / (1ULL << 20));
}

const char *xpu_peer_reason_name(enum xpu_peer_reason r)
{
	static const char *const names[XPU_PEER_REASONS] = {
		[XPU_PEER_CONNS] = "connections", [XPU_PEER_HELLO_LATE] = "hello_late",
		[XPU_PEER_BAD_HELLO] = "bad_hello", [XPU_PEER_NAMES] = "names",
		[XPU_PEER_SERIES] = "series", [XPU_PEER_DEVICES] = "devices",
		[XPU_PEER_RECORDS] = "records",
	};
	return (unsigned)r < XPU_PEER_REASONS ? names[r] : "?";
}

const char *xpu_gpudev_proc_type(uint32_t valid)
{
	int c = !!(valid & XPU_GPU_DEVPROC_COMPUTE), g = !!(valid & XPU_GPU_DEVPROC_GRAPHICS);
	return c && g ? "compute+graphics" : g ? "graphics" : "compute";
}

void xpu_cpu_sys_text(const struct xpu_cpu_sys *y, char *buf, size_t size)
{
	char load[48] = "N/A", busy[16] = "N/A", used[16], total[16], mem[40] = "N/A";
	if (!y->flags) {
		snprintf(buf, size, "%s", "");
		return;
	}
	if (y->flags & XPU_SYS_LOAD)
		snprintf(load, sizeof(load), "%.2f %.2f %.2f", y->load[0], y->load[1], y->load[2]);
	if (y->flags & XPU_SYS_BUSY)
		snprintf(busy, sizeof(busy), "%.1f%%", y->busy_pct);
	if (y->flags & XPU_SYS_MEM) {
		gib(used, sizeof(used), y->mem_used);
		gib(total, sizeof(total), y->mem_total);
		snprintf(mem, sizeof(mem), "%s/%s", used, total);
	}
	snprintf(buf, size, "load %s  cpu %s  mem %s", load, busy, mem);
}

void xpu_snapshot_init(struct xpu_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->only_view = -1;
	xpu_table_init(&s->cpu.rows, xpu_cpu_cols, XPU_CPU_NCOLS);
	xpu_flame_init(&s->cpu.flame);
	xpu_table_init(&s->gpu.rows, xpu_gpu_cols, XPU_GPU_NCOLS);
	xpu_flame_init(&s->gpu.flame);
	xpu_npu_snap_init(&s->npu.model);
}

void xpu_snapshot_free(struct xpu_snapshot *s)
{
	xpu_table_free(&s->cpu.rows);
	xpu_flame_free(&s->cpu.flame);
	xpu_table_free(&s->gpu.rows);
	xpu_flame_free(&s->gpu.flame);
	xpu_npu_snap_free(&s->npu.model);
}

static void header(struct xpu_snapshot *s, const struct xpu_session *sess)
{
	s->dict = &sess->dict;
	s->mono_ns = sess->last_tick_mono;
	s->wall_ns = sess->last_tick_wall;
	s->interval_ns = sess->last_interval;
	s->window_ns = sess->cpu.ticks.window_ns;
	snprintf(s->host, sizeof(s->host), "%s", sess->host);
	s->ticks = sess->ticks;
	s->events_total = sess->events_total;
	s->events_per_s = sess->last_interval ? (double)sess->events_last * 1e9 / (double)sess->last_interval : 0;
	s->dropped_total = sess->dropped_total;
	s->dropped_tick = sess->dropped_last;
	s->sample_hz = sess->cfg.sample_hz;
	s->ncpus = sess->ncpus;
	s->self_cpu_pct = sess->self_cpu_pct;
	s->replay = sess->replay;
	s->replay_done = sess->replay_done;
	s->attached = sess->attached;
	snprintf(s->source_name, sizeof(s->source_name), "%s", sess->source_name);
	s->collect_hz = sess->stream_hz ? sess->stream_hz : sess->cfg.sample_hz;
	s->collect = sess->replay ? 0 : sess->attached ? sess->stream_collect
			: sess->stream_collect | XPU_TICK_KNOWN |
			  (sess->cfg.gpu.mode == XPU_GPU_MODE_EXACT ? XPU_TICK_GPU_EXACT : 0);
	s->collector_pid = sess->attached ? sess->collector_pid : 0;
	s->collect_interval_ns = sess->stream_ns ? sess->stream_ns : sess->stream_interval;
	s->view_interval_ns = sess->cfg.interval_ns;
	s->merged_ticks = sess->merged_ticks;
	s->clients = sess->clients;
	s->gpu.exact_asked = sess->gpu_exact_asked;
	s->cpu.status = sess->status[XPU_SRC_CPU];
	s->gpu.status = sess->status[XPU_SRC_GPU];
	s->gpu.peers = sess->gpu_peers;
	s->npu.status = sess->status[XPU_SRC_NPU];
}

/* A view's rows as the user asked for them: filtered, then sorted by the
 * chosen column (or the view's default); then where the selection is: the
 * same position, or the followed row (s->sel). */
static void arrange(struct xpu_snapshot *s, struct xpu_table *t, const struct xpu_viewstate *vs,
		    enum xpu_view v, int default_col)
{
	int col = vs->sort_col[v];
	xpu_table_filter(t, vs->filter[v]);
	if (col < 0 || (uint32_t)col >= t->ncols)
		col = default_col;
	xpu_table_sort(t, col, vs->reverse[v]);
	if (v == XPU_VIEW_CPU)
		xpu_table_filter_col(t, XPU_CPU_COL_USER, vs->user);
	if (v == XPU_VIEW_CPU && vs->tree && !vs->threads)
		xpu_table_tree(t, XPU_CPU_COL_PPID, XPU_CPU_COL_COMM);
	struct xpu_sel *sel = &s->sel[v];
	sel->row = xpu_table_keep_row(t, vs->selected[v], vs->sel_row[v], vs->follow[v], &sel->lost);
	sel->key = sel->row >= 0 ? t->keys[sel->row] : 0;
}

static int cpu_view(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct xpu_cpu_model *m = &sess->cpu;

	int how = (vs->threads ? XPU_CPU_TABLE_THREADS : 0) | (vs->cmdline ? XPU_CPU_TABLE_CMDLINE : 0);
	if (xpu_cpu_model_table(m, &sess->dict, &s->cpu.rows, how, vs->window) < 0)
		return -1;
	arrange(s, &s->cpu.rows, vs, XPU_VIEW_CPU, XPU_CPU_COL_PCT);
	s->cpu.samples_tick = m->samples_last;
	s->cpu.sys = m->sys;
	s->cpu.nhot = 0;
	if (s->hot_functions &&
	    (s->cpu.nhot = xpu_cpu_model_hot(m, &sess->dict, vs->window, s->cpu.hot, XPU_CPU_HOT_MAX,
					     &s->cpu.hot_all)) < 0)
		return -1;

	uint64_t key = s->sel[XPU_VIEW_CPU].key;
	const struct xpu_cpu_task *task = NULL;
	if (key)
		task = vs->threads ? NULL : xpu_cpu_model_task(m, (uint32_t)key, 0);
	if (key && vs->threads) {
		int r = xpu_table_find(&s->cpu.rows, key);
		uint32_t pid = (uint32_t)xpu_table_row(&s->cpu.rows, r)[XPU_CPU_COL_PID].i;
		task = xpu_cpu_model_task(m, pid, (uint32_t)key);
	}
	s->cpu.flame_key = key;
	struct xpu_flame_opts fo = {
		.window = vs->window,
		.pid = task ? task->pid : UINT32_MAX,
		.tid = vs->threads && task ? task->tid : 0,
		.min_frac = FLAME_MIN_FRAC,
		.root_label = task ? task->comm : 0,
	};
	if (task)
		snprintf(s->cpu.flame_title, sizeof(s->cpu.flame_title), "%s (%s %u)",
			 xpu_dict_str_get(&sess->dict, task->comm), vs->threads ? "tid" : "pid",
			 vs->threads ? task->tid : task->pid);
	else
		s->cpu.flame_title[0] = '\0';
	if (s->no_flames)
		return 0;
	return xpu_flame_build(&s->cpu.flame, &m->stacks, &sess->dict, &fo);
}

/* Processes the library connected come first, then launch-only ones. */
static int by_state(const void *a, const void *b)
{
	const struct xpu_gpu_proc *x = a, *y = b;
	if (x->launch_only != y->launch_only)
		return x->launch_only - y->launch_only;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int gpu_view(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct xpu_gpu_model *m = &sess->gpu;

	if (xpu_gpu_model_table(m, &sess->dict, &s->gpu.rows, vs->window) < 0)
		return -1;
	arrange(s, &s->gpu.rows, vs, XPU_VIEW_GPU, XPU_GPU_COL_TOTAL);
	int row = s->sel[XPU_VIEW_GPU].row;
	s->gpu.selected = row >= 0 ? xpu_table_row(&s->gpu.rows, (uint32_t)row)[XPU_GPU_COL_NAME].s : NULL;
	s->gpu.ndevices = xpu_gpu_model_devices(m, vs->window, s->gpu.devices, XPU_SNAP_GPU_DEVICES);
	s->gpu.joined_pct = xpu_gpu_model_joined_pct(m, vs->window);
	s->gpu.ns = xpu_gpu_model_gpu_ns(m, vs->window);
	s->gpu.ns_est = xpu_gpu_model_gpu_ns_est(m, vs->window);
	s->gpu.ns_err = xpu_gpu_model_gpu_ns_err(m, vs->window);
	s->gpu.tracing = sess->cfg.gpu;
	if (sess->attached) {	/* the collector's mode in force, not this xputop's wish */
		s->gpu.tracing.mode = sess->stream_collect & XPU_TICK_GPU_EXACT ? XPU_GPU_MODE_EXACT : XPU_GPU_MODE_SAMPLED;
		s->gpu.tracing.exact_until = 0;
	}
	s->gpu.exact_left_s = s->gpu.tracing.exact_until > s->mono_ns
				      ? (double)(s->gpu.tracing.exact_until - s->mono_ns) / 1e9 : 0;
	s->gpu.sampled = xpu_gpu_model_sampled(m, vs->window, &s->gpu.cover);
	s->gpu.nprocs = m->nprocs < XPU_SNAP_GPU_PROCS ? (int)m->nprocs : XPU_SNAP_GPU_PROCS;
	for (int i = 0; i < s->gpu.nprocs; i++)
		s->gpu.procs[i] = m->procs[i];
	qsort(s->gpu.procs, (size_t)s->gpu.nprocs, sizeof(*m->procs), by_state);
	/* Without GPU time (no library anywhere), the launch counts are the picture. */
	s->gpu.flame_launches = xpu_stacks_sum(&m->stacks, vs->window) == 0;
	struct xpu_flame_opts fo = {
		.window = vs->window, .min_frac = FLAME_MIN_FRAC, .per_process = 1,
	};
	if (s->no_flames)
		return 0;
	return xpu_flame_build(&s->gpu.flame, s->gpu.flame_launches ? &m->launch_stacks : &m->stacks,
			       &sess->dict, &fo);
}

static int npu_view(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	s->npu.sources = sess->npu.sources;
	if (xpu_npu_model_snapshot(&sess->npu, &sess->dict, &s->npu.model, vs->window) < 0)
		return -1;
	arrange(s, &s->npu.model.calls, vs, XPU_VIEW_NPU, XPU_NPU_COL_RATE);
	/* A column of the driver functions' table chosen with -s sorts it;
	 * by default it is by the window's count, and where that ties (nothing
	 * in the window at the end of a replay) by the count since the start:
	 * a table sorted by zeros would leave the busiest function anywhere. */
	int fcol = vs->sort_col[XPU_VIEW_NPU] - XPU_NPU_NCOLS;
	if (fcol >= 0 && fcol < XPU_NPU_NFCOLS)
		xpu_table_sort_then(&s->npu.model.funcs, fcol, XPU_NPU_FCOL_TOTAL, vs->reverse[XPU_VIEW_NPU]);
	else
		xpu_table_sort_then(&s->npu.model.funcs, XPU_NPU_FCOL_COUNT, XPU_NPU_FCOL_TOTAL, 0);
	xpu_table_sort(&s->npu.model.chains, XPU_NPU_CCOL_TOTAL, 0);
	xpu_table_sort(&s->npu.model.clients, XPU_NPU_KCOL_TOTAL, 0);
	return 0;
}

static void alerts(struct xpu_snapshot *s, const struct xpu_alerts *a)
{
	s->nalerts = a->n;
	s->alerts_active = xpu_alerts_active(a, -1);
	xpu_alerts_summary(a, s->mono_ns, &s->alert_top, &s->alert_recent);
	for (uint32_t i = 0; i < a->n; i++)
		s->alerts[i] = *xpu_alerts_at(a, i);
}

int xpu_snapshot_build(struct xpu_snapshot *s, struct xpu_session *sess,
		       const struct xpu_viewstate *vs)
{
	header(s, sess);
	alerts(s, &sess->alerts);
	xpu_gpudev_model_snapshot(&sess->gpudev, &s->gpu.dev);
	if (npu_view(s, sess, vs) < 0 || gpu_view(s, sess, vs) < 0)
		return -1;
	return cpu_view(s, sess, vs);
}
