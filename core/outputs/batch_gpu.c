/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch_gpu.h"

#include <inttypes.h>
#include <stdlib.h>

#include "batch_fmt.h"
#include "batch_gpudev.h"
#include "batch_view.h"
#include "dict.h"
#include "export_gpu.h"
#include "gpu_stitch.h"
#include "json.h"
#include "session.h"
#include "snapshot.h"

static const char *proc_mode(const struct xpu_gpu_proc *p)
{
	return p->launch_only ? "launches only" : "cupti";
}

static const char *proc_state(const struct xpu_gpu_proc *p)
{
	static const char *const detail[] = { "ok", "another CUPTI profiler is attached",
					      "CUPTI refused to start",
					      "CUPTI's correlation ids stuck: not traced until it restarts" };
	if (p->launch_only)
		return p->left_at ? "exited" : "seen by launch probes";
	if (p->state == XPU_GPU_PROC_LEFT)
		return "disconnected";
	return p->detail < sizeof(detail) / sizeof(detail[0]) ? detail[p->detail] : "unknown";
}

/* Which kernel row a CPU->GPU stack belongs to: its pid and its leaf frame. */
struct kernel_keys {
	const struct xpu_gpu_model *m;
	const struct xpu_dict *d;
	const struct xpu_table *t;
};

static uint64_t kernel_of(const struct xpu_stack_entry *e, void *ctx)
{
	const struct kernel_keys *k = ctx;
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(k->d, e->stack, &n);
	if (!n)
		return 0;
	for (uint32_t r = 0; r < k->t->nrows; r++) {
		const struct xpu_gpu_kernel *g = &k->m->kernels[k->t->keys[r] - 1];
		if (g->pid == e->pid && g->frame == frames[n - 1])
			return k->t->keys[r];
	}
	return 0;
}

static void json_devices(struct xpu_json *j, const struct xpu_snapshot *s)
{
	xpu_json_arr(j, "devices");
	for (int i = 0; i < s->gpu.ndevices; i++) {
		const struct xpu_gpu_device_sum *d = &s->gpu.devices[i];
		xpu_json_obj(j, NULL);
		xpu_json_uint(j, "device", d->device);
		xpu_json_num(j, "kernel_time_pct", d->kernel_pct);
		if (d->kernel_err_pct < 0)
			xpu_json_null(j, "kernel_time_err_pct");
		else
			xpu_json_num(j, "kernel_time_err_pct", d->kernel_err_pct);
		xpu_json_num(j, "kernels_per_s", d->kernels_per_s);
		xpu_json_uint(j, "kernels", d->kernels);
		xpu_json_uint(j, "memcpy_ns", d->memcpy_ns);
		xpu_json_uint(j, "memcpy_bytes", d->memcpy_bytes);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

/* An estimate and its uncertainty (one standard error, percent of it), or
 * null for both where none could be made. */
static void json_est(struct xpu_json *j, const char *key, const char *err_key, const struct xpu_gpu_est *e)
{
	if (!e->ok) {
		xpu_json_null(j, key);
		xpu_json_null(j, err_key);
		return;
	}
	xpu_json_num(j, key, e->value);
	xpu_json_num(j, err_key, e->err_pct);
}

/* The mode asked of the libraries (live, by this xputop) and whether the figures are
 * sampled estimates: then calls, totals and shares are scaled by the
 * traced share of the time (gpu_ns stays what was traced). */
static void json_tracing(struct xpu_json *j, const struct xpu_snapshot *s)
{
	xpu_json_obj(j, "tracing");
	if (!s->replay && (!s->attached || (s->collect & XPU_TICK_KNOWN))) {	/* the mode in force */
		xpu_json_str(j, "mode", s->gpu.tracing.mode == XPU_GPU_MODE_EXACT ? "exact" : "sampled");
		xpu_json_uint(j, "slice_ms", s->gpu.tracing.slice_ms);
		xpu_json_uint(j, "period_ms", s->gpu.tracing.period_ms);
		xpu_json_num(j, "exact_left_s", s->gpu.exact_left_s);
	}
	xpu_json_bool(j, "estimated", s->gpu.sampled);
	xpu_json_num(j, "traced_pct", 100 * s->gpu.cover);
	xpu_json_num(j, "gpu_ns_est", s->gpu.ns_est);
	if (s->gpu.ns_err.ok)
		xpu_json_num(j, "gpu_ns_est_err_pct", s->gpu.ns_err.err_pct);
	else
		xpu_json_null(j, "gpu_ns_est_err_pct");
	xpu_json_end(j, '}');
}

static void json_procs(struct xpu_json *j, const struct xpu_snapshot *s, enum xpu_window vs_window)
{
	double per_s = s->interval_ns ? 1e9 / (double)s->interval_ns : 0;
	xpu_json_arr(j, "processes");
	for (int i = 0; i < s->gpu.nprocs; i++) {
		const struct xpu_gpu_proc *p = &s->gpu.procs[i];
		xpu_json_obj(j, NULL);
		xpu_json_uint(j, "pid", p->pid);
		xpu_json_str(j, "comm", xpu_dict_str_get(s->dict, p->comm));
		xpu_json_str(j, "mode", proc_mode(p));
		xpu_json_str(j, "state", proc_state(p));
		xpu_json_num(j, "launches_per_s", (double)p->launches.last * per_s);
		xpu_json_uint(j, "launches", p->launches.total);
		/* Sampled: the launches counted, scaled by the share of the time
		 * they were counted in, with its uncertainty (null: none made). */
		json_est(j, "launches_est", "launches_est_err_pct", &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES]);
		if (!p->launch_only) {
			json_est(j, "kernels_est", "kernels_est_err_pct", &p->est[vs_window][XPU_GPU_EST_KERNELS]);
			json_est(j, "gpu_ns_est", "gpu_ns_est_err_pct", &p->est[vs_window][XPU_GPU_EST_NS]);
		}
		xpu_json_uint(j, "sites", p->sites);
		xpu_json_uint(j, "dropped", p->dropped + p->cupti_dropped);
		/* The account of kernels: what came, what the library dropped,
		 * what CUPTI dropped (activity records, mostly kernels). */
		xpu_json_uint(j, "kernels", p->kernels);
		xpu_json_uint(j, "kernels_dropped", p->kernels_dropped);
		xpu_json_uint(j, "cupti_dropped", p->cupti_dropped);
		xpu_json_str(j, "tracing", p->sampled[vs_window] ? "sampled" : "exact");
		xpu_json_num(j, "traced_pct", 100 * p->cover[vs_window]);
		/* Its kernels that came without their launch record: past
		 * XPU_GPU_ORPHAN_PCT a sampled process's kernels and GPU time are
		 * not estimated (model_gpu.h). */
		uint64_t kseen = xpu_win_count_get(&p->seen[XPU_GPU_EST_KERNELS], vs_window);
		xpu_json_num(j, "kernels_without_launch_pct",
			     kseen ? 100 * (double)xpu_win_count_get(&p->orphan, vs_window) / (double)kseen : 0);
		/* What the sampled figures are scaled by: the time traced, the
		 * launching threads' own CPU time sampled inside and outside the
		 * slices (GPU_OWN), or the launches the launch probes counted
		 * (model_gpu.h). */
		xpu_json_str(j, "scaled_by", !p->sampled[vs_window] ? "exact"
					     : p->by_probe[vs_window] ? "launch_probes"
					     : p->by_own[vs_window] ? "own_cpu" : "time");
		if (p->launch_only)	/* the share of the probes' time their traps took */
			xpu_json_num(j, "probed_trap_pct", 100 * p->trap_share[vs_window]);
		/* The probes on throughout: every launch counted, taken as it is. */
		if (p->wtime.total) {
			xpu_json_uint(j, "probed_whole_launches", xpu_win_count_get(&p->wseen, vs_window));
			xpu_json_num(j, "probed_whole_pct", 100 * p->whole_cover[vs_window]);
		}
		/* Its library on throughout: what it saw there taken as it is. */
		if (p->lwt.total) {
			xpu_json_uint(j, "traced_whole_launches",
				      xpu_win_count_get(&p->lw[XPU_GPU_EST_LAUNCHES], vs_window));
			xpu_json_uint(j, "traced_whole_kernels", xpu_win_count_get(&p->lw[XPU_GPU_EST_KERNELS], vs_window));
			xpu_json_num(j, "traced_whole_pct", 100 * p->lib_whole_cover[vs_window]);
		}
		if (!p->launch_only && (p->pseen.total || p->ptraced.total)) {
			xpu_json_uint(j, "probed_launches", xpu_win_count_get(&p->pseen, vs_window));
			xpu_json_num(j, "probed_pct", 100 * p->probe_cover[vs_window]);
			xpu_json_num(j, "probed_trap_pct", 100 * p->trap_share[vs_window]);
			uint64_t pt = xpu_win_count_get(&p->ptraced, vs_window);
			xpu_json_num(j, "probed_in_slices_pct",
				     pt ? 100 * (double)xpu_win_count_get(&p->pover, vs_window) / (double)pt : 0);
			/* Their count scaled by its launching threads' CPU time, or by time. */
			xpu_json_str(j, "probed_scaled_by", p->by_cpu[vs_window] ? "cpu_time" : "time");
			if (p->cpu_on) {
				xpu_json_num(j, "probed_cpu_pct", 100 * p->cpu_cover[vs_window]);
				xpu_json_num(j, "probed_whole_cpu_pct", 100 * p->cpu_whole_cover[vs_window]);
				xpu_json_num(j, "cpu_s", (double)xpu_win_count_get(&p->acpu, vs_window) / 1e9);
			}
		}
		if (p->own_on) {
			xpu_json_num(j, "own_traced_pct", 100 * p->own_cover[vs_window]);
			xpu_json_uint(j, "own_samples", xpu_win_count_get(&p->own_all, vs_window));
			xpu_json_uint(j, "own_samples_traced", xpu_win_count_get(&p->own_in, vs_window));
			xpu_json_uint(j, "cuda_samples", xpu_win_count_get(&p->cuda_all, vs_window));
			xpu_json_uint(j, "cuda_samples_traced", xpu_win_count_get(&p->cuda_in, vs_window));
			xpu_json_uint(j, "own_hz", p->own_hz);
			xpu_json_uint(j, "own_threads", p->own_threads);
		}
		/* Whether CUPTI's cost on every launch stays between slices (CUDA
		 * graphs, exact mode) or only comes with them (inject/cupti.c). */
		if (!p->launch_only)
			xpu_json_bool(j, "cupti_attached", p->cupti_attached);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

static void json_kernels(struct xpu_json *j, const struct xpu_snapshot *s,
			 const struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct kernel_keys kk = { &sess->gpu, s->dict, &s->gpu.rows };
	struct xpu_batch_top *tops = xpu_batch_top_stacks(&s->gpu.rows, &sess->gpu.stacks, s->dict,
							  vs->window, kernel_of, &kk);
	xpu_json_arr(j, "kernels");
	for (uint32_t r = 0; r < s->gpu.rows.nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, &s->gpu.rows, r);
		xpu_json_arr(j, "stacks");
		for (int k = 0; tops && k < XPU_BATCH_TOP && tops[r].stack[k]; k++) {
			xpu_json_obj(j, NULL);
			xpu_batch_json_frames(j, s->dict, tops[r].comm[k], tops[r].stack[k]);
			xpu_json_str(j, "stitched", xpu_gpu_stitch_name(xpu_gpu_stack_stitch(s->dict, tops[r].stack[k])));
			xpu_json_uint(j, "gpu_ns", tops[r].weight[k]);
			xpu_json_end(j, '}');
		}
		xpu_json_end(j, ']');
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	free(tops);
}

struct launch_line {
	struct xpu_json *j;
	const struct xpu_dict *d;
};

static int json_launch_stack(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct launch_line *l = arg;
	xpu_json_obj(l->j, NULL);
	xpu_json_uint(l->j, "pid", e->pid);
	xpu_batch_json_frames(l->j, l->d, e->comm, e->stack);
	xpu_json_uint(l->j, "calls", weight);
	xpu_json_end(l->j, '}');
	return 0;
}

static void json_refused(struct xpu_json *j, const char *key, const uint64_t *n)
{
	xpu_json_obj(j, key);
	for (int r = 0; r < XPU_PEER_REASONS; r++)
		xpu_json_uint(j, xpu_peer_reason_name(r), n[r]);
	xpu_json_end(j, '}');
}

/* What the injection socket refused of its peers: in all, per uid, and the
 * processes refused most recently (their names are the kernel's). */
static void json_peers(struct xpu_json *j, const struct xpu_gpu_peers *p)
{
	xpu_json_obj(j, "peers");
	xpu_json_uint(j, "connections", p->conns);
	xpu_json_uint(j, "devices", p->devices);
	xpu_json_uint(j, "name_bytes", p->name_bytes);
	json_refused(j, "refused", p->total);
	xpu_json_arr(j, "uids");
	for (int i = 0; i < p->nuids; i++) {
		xpu_json_obj(j, NULL);
		xpu_json_uint(j, "uid", p->uids[i].uid);
		json_refused(j, "refused", p->uids[i].n);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_arr(j, "processes");
	for (int i = 0; i < p->nprocs; i++) {
		xpu_json_obj(j, NULL);
		xpu_json_uint(j, "pid", p->procs[i].pid);
		xpu_json_uint(j, "uid", p->procs[i].uid);
		xpu_json_str(j, "comm", p->procs[i].comm);
		json_refused(j, "refused", p->procs[i].n);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

void xpu_batch_gpu_json(struct xpu_json *j, const struct xpu_snapshot *s,
			const struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	xpu_json_obj(j, "gpu");
	xpu_json_str(j, "state", xpu_batch_state_name(s->gpu.status.state));
	xpu_json_str(j, "status", s->gpu.status.text);
	xpu_json_uint(j, "gpu_ns", s->gpu.ns);
	json_tracing(j, s);
	if (s->gpu.joined_pct < 0)
		xpu_json_null(j, "stack_pct");
	else
		xpu_json_num(j, "stack_pct", s->gpu.joined_pct);
	xpu_json_uint(j, "graph_kernels", sess->gpu.graph_kernels);
	xpu_json_uint(j, "graph_kernels_joined", sess->gpu.graph_kernels_joined);
	json_peers(j, &s->gpu.peers);
	json_devices(j, s);
	json_procs(j, s, vs->window);
	json_kernels(j, s, sess, vs);
	struct launch_line l = { j, s->dict };
	xpu_json_arr(j, "launch_stacks");
	xpu_stacks_each(&sess->gpu.launch_stacks, vs->window, 0, 0, json_launch_stack, &l);
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

void xpu_batch_gpu_text(FILE *f, const struct xpu_snapshot *s)
{
	fprintf(f, "GPU: %s\n", s->gpu.status.text[0] ? s->gpu.status.text : "no data");
	for (int i = 0; i < s->gpu.ndevices; i++) {
		const struct xpu_gpu_device_sum *d = &s->gpu.devices[i];
		char err[16] = "";
		if (d->kernel_err_pct > 0)
			snprintf(err, sizeof(err), " +-%.0f%%", d->kernel_err_pct);
		else if (d->kernel_err_pct < 0)
			snprintf(err, sizeof(err), " +-?");
		fprintf(f, "  device %u: kernel time (traced) %.1f%%%s, %.0f kernels/s, memcpy %.2f ms",
			d->device, d->kernel_pct, err, d->kernels_per_s, (double)d->memcpy_ns / 1e6);
		fprintf(f, " (%" PRIu64 " bytes)\n", d->memcpy_bytes);
	}
	for (int i = 0; i < s->gpu.nprocs; i++) {
		const struct xpu_gpu_proc *p = &s->gpu.procs[i];
		fprintf(f, "  pid %u %s: %s, %s\n", p->pid, xpu_dict_str_get(s->dict, p->comm), proc_mode(p),
			proc_state(p));
	}
	for (int i = 0; i < s->gpu.peers.nuids; i++) {
		const struct xpu_peer_count *u = &s->gpu.peers.uids[i];
		fprintf(f, "  refused from uid %u:", u->uid);
		for (int r = 0; r < XPU_PEER_REASONS; r++)
			if (u->n[r])
				fprintf(f, " %s %" PRIu64, xpu_peer_reason_name(r), u->n[r]);
		fputc('\n', f);
	}
	if (s->gpu.joined_pct >= 0)
		fprintf(f, "  GPU time with a launch stack: %.1f%%\n", s->gpu.joined_pct);
	if (s->gpu.rows.nrows)
		xpu_batch_print_table(f, &s->gpu.rows);
}

/* The GPU view shows the devices as NVML reports them too. */
static void text(FILE *f, const struct xpu_snapshot *s)
{
	xpu_batch_gpu_text(f, s);
	xpu_batch_gpudev_text(f, s);
}

static void json(struct xpu_json *j, const struct xpu_snapshot *s, const struct xpu_session *sess,
		 const struct xpu_viewstate *vs)
{
	xpu_batch_gpu_json(j, s, sess, vs);
	xpu_batch_gpudev_json(j, s);
}

const struct xpu_batch_view xpu_batch_view_gpu = {
	.view = XPU_VIEW_GPU,
	.text = text,
	.json = json,
	.export = xpu_export_gpu,
};
