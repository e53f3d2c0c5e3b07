/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view's part of the snapshot: its kernels, the CPU -> launch ->
 * kernel flamegraph, the devices, the processes and how the tracing runs. */
#include "snap_gpu.h"

#include <stdlib.h>

#include "session.h"
#include "snapshot.h"

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

/* Processes the library connected come first, then launch-only ones. */
static int by_state(const void *a, const void *b)
{
	const struct xpu_gpu_proc *x = a, *y = b;
	if (x->launch_only != y->launch_only)
		return x->launch_only - y->launch_only;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The sampled processes of window w scaled by their own CPU time (probes
 * 0), by the launch probes' count (1), or by that count scaled by their
 * launching threads' CPU time (2): how many, and the mean share of it
 * traced in *cover (the probes': in slices and on throughout, of the time
 * or of that CPU time). */
static int scaled_by(const struct xpu_gpu_model *m, enum xpu_window w, int probes, double *cover)
{
	int n = 0;
	*cover = 0;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct xpu_gpu_proc *p = &m->procs[i];
		if (p->sampled[w] && (probes == 2 ? p->by_probe[w] && p->by_cpu[w]
				      : probes ? p->by_probe[w] : p->by_own[w])) {
			n++;
			*cover += probes == 2 ? p->cpu_cover[w] + p->cpu_whole_cover[w]
				  : probes ? p->probe_cover[w] + p->whole_cover[w] : p->own_cover[w];
		}
	}
	if (n)
		*cover /= n;
	return n;
}

static int build(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct xpu_gpu_model *m = &sess->gpu;

	s->gpu.status = sess->status[XPU_SRC_GPU];
	s->gpu.peers = sess->gpu_peers;
	s->gpu.exact_asked = sess->gpu_exact_asked;
	xpu_gpudev_model_snapshot(&sess->gpudev, &s->gpu.dev);
	if (xpu_gpu_model_table(m, &sess->dict, &s->gpu.rows, vs->window) < 0)
		return -1;
	xpu_snapshot_arrange(s, &s->gpu.rows, vs, XPU_VIEW_GPU, XPU_GPU_COL_TOTAL);
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
	s->gpu.by_own = scaled_by(m, vs->window, 0, &s->gpu.own_cover);
	s->gpu.by_probe = scaled_by(m, vs->window, 1, &s->gpu.probe_cover);
	s->gpu.by_cpu = scaled_by(m, vs->window, 2, &s->gpu.cpu_cover);
	s->gpu.orphaned = s->gpu.ids_stuck = 0;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		s->gpu.orphaned += m->procs[i].orphaned[vs->window];
		s->gpu.ids_stuck += m->procs[i].orphaned[vs->window] && m->procs[i].ids_stuck;
	}
	s->gpu.nprocs = m->nprocs < XPU_SNAP_GPU_PROCS ? (int)m->nprocs : XPU_SNAP_GPU_PROCS;
	for (int i = 0; i < s->gpu.nprocs; i++)
		s->gpu.procs[i] = m->procs[i];
	qsort(s->gpu.procs, (size_t)s->gpu.nprocs, sizeof(*m->procs), by_state);
	/* Without GPU time (no library anywhere), the launch counts are the picture. */
	s->gpu.flame_launches = xpu_stacks_sum(&m->stacks, vs->window) == 0;
	struct xpu_flame_opts fo = {
		.window = vs->window, .min_frac = XPU_SNAP_FLAME_MIN_FRAC, .per_process = 1,
	};
	if (s->no_flames)
		return 0;
	return xpu_flame_build(&s->gpu.flame, s->gpu.flame_launches ? &m->launch_stacks : &m->stacks,
			       &sess->dict, &fo);
}

static void init(struct xpu_snapshot *s)
{
	xpu_table_init(&s->gpu.rows, xpu_gpu_cols, XPU_GPU_NCOLS);
	xpu_flame_init(&s->gpu.flame);
}

static void release(struct xpu_snapshot *s)
{
	xpu_table_free(&s->gpu.rows);
	xpu_flame_free(&s->gpu.flame);
}

const struct xpu_snap_view xpu_snap_view_gpu = {
	.name = "gpu",
	.cols = xpu_gpu_cols,
	.ncols = XPU_GPU_NCOLS,
	.init = init,
	.free = release,
	.build = build,
};
