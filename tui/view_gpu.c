/* SPDX-License-Identifier: GPL-2.0-only */
#include "view_gpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dict.h"
#include "draw.h"
#include "event.h"
#include "flame_view.h"
#include "keys.h"
#include "pane.h"
#include "tui.h"
#include "view_gpudev.h"
#include "views.h"

#define MAX_PROC_LINES 4
#define MAX_NAME_LINES 3	/* the selected kernel's full name, wrapped */

/* Whether there is anything to show yet (else the view's message box). */
static int has_data(const struct xpu_snapshot *s)
{
	return s->gpu.nprocs > 0 || s->gpu.rows.nrows > 0 || s->gpu.ndevices > 0 || xpu_view_gpudev_has_data(s);
}

static int proc_lines(const struct xpu_snapshot *s)
{
	return s->gpu.nprocs < MAX_PROC_LINES ? s->gpu.nprocs : MAX_PROC_LINES;
}

/* Lines the selected kernel's full name takes in a text area cols wide. */
static int name_lines(const struct xpu_snapshot *s, int cols)
{
	if (!s->gpu.selected)
		return 0;
	int n = xpu_text_lines(s->gpu.selected, cols - 2);
	return n < MAX_NAME_LINES ? n : MAX_NAME_LINES;
}

/* status, the device panel, devices, processes, stack coverage, the
 * selected kernel's full name */
int xpu_view_gpu_text_rows(const struct xpu_snapshot *s, int cols)
{
	return 1 + xpu_view_gpudev_rows(s) + s->gpu.ndevices + proc_lines(s) + 1 + name_lines(s, cols);
}

static void line(const struct xpu_rect *r, int y, int role, const char *text)
{
	if (y < r->y + r->h)
		xpu_put_text(y, r->x + 1, r->w - 2, text, xpu_draw_attr(role), 1);
}

/* The full name from line y on, wrapped; the last line ends in "..." when
 * the name goes on. */
static void draw_name(const struct xpu_rect *r, int y, const char *name)
{
	for (int i = 1; *name && y < r->y + r->h; i++, y++) {
		char buf[1024];
		const char *next;
		size_t n = xpu_text_wrap(name, r->w - 2, &next);
		if (i == MAX_NAME_LINES || y == r->y + r->h - 1 || n >= sizeof(buf)) {
			line(r, y, XPU_ROLE_HINT_TEXT, name);
			return;
		}
		memcpy(buf, name, n);
		buf[n] = '\0';
		line(r, y, XPU_ROLE_HINT_TEXT, buf);
		name = next;
	}
}

static const char *pm(void)
{
	return xpu_draw_utf8() ? "\u00b1" : "+-";
}

/* A process's launches a second: counted, or estimated over the window
 * with its uncertainty ("~1234 +-8%"), or "?" where none can be made. */
static void launch_rate(char *buf, size_t size, const struct xpu_gpu_proc *p, double per_s)
{
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_RECENT][XPU_GPU_EST_LAUNCHES];
	double win_s = p->span_s[XPU_WIN_RECENT];
	if (!p->sampled[XPU_WIN_RECENT])
		snprintf(buf, size, "%8.0f launches/s", (double)p->launches.last * per_s);
	else if (!e->ok || win_s <= 0)
		snprintf(buf, size, "       ? launches/s (too few slices)");
	else
		snprintf(buf, size, "~%7.0f %s%.0f%% launches/s", e->value / win_s, pm(), e->err_pct);
}

static void draw_summary(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	char buf[1100];
	int y = r->y;
	double per_s = s->interval_ns ? 1e9 / (double)s->interval_ns : 0;

	snprintf(buf, sizeof(buf), "%s  %s", xpu_src_state_name(s->gpu.status.state), s->gpu.status.text);
	line(r, y++, xpu_src_state_role(s->gpu.status.state), buf);
	/* The device panel gives up detail before the lines below lose theirs. */
	int panel = xpu_view_gpudev_rows(s), others = xpu_view_gpu_text_rows(s, r->w) - 1 - panel;
	struct xpu_rect dr = { y, r->x, r->y + r->h - y - others, r->w };
	y += xpu_view_gpudev_draw(&dr, s);
	for (int i = 0; i < s->gpu.ndevices; i++) {
		const struct xpu_gpu_device_sum *d = &s->gpu.devices[i];
		/* The union of the kernels traced: never called busy, which is
		 * NVML's utilization in the panel above. */
		char err[16] = "";
		if (d->kernel_err_pct > 0)
			snprintf(err, sizeof(err), " %s%.0f%%", pm(), d->kernel_err_pct);
		else if (d->kernel_err_pct < 0)
			snprintf(err, sizeof(err), " %s?", pm());
		snprintf(buf, sizeof(buf),
			 "GPU%u  kernel time (traced) %s%5.1f%%%s  %8.0f kernels/s  memcpy %.1f ms (%.1f MB)",
			 d->device, s->gpu.sampled ? "~" : "", d->kernel_pct, err, d->kernels_per_s,
			 (double)d->memcpy_ns / 1e6, (double)d->memcpy_bytes / 1e6);
		line(r, y++, XPU_ROLE_DEFAULT, buf);
	}
	for (int i = 0; i < proc_lines(s); i++) {
		const struct xpu_gpu_proc *p = &s->gpu.procs[i];
		char mode[32], rate[48];
		if (p->launch_only && p->sampled[XPU_WIN_RECENT])
			snprintf(mode, sizeof(mode), "launch-only %.0f%%", 100 * p->cover[XPU_WIN_RECENT]);
		else if (p->launch_only)
			snprintf(mode, sizeof(mode), "launches only");
		else if (p->sampled[XPU_WIN_RECENT] && p->lib_whole_cover[XPU_WIN_RECENT] >= 0.5)
			/* its library traced it throughout most of the time */
			snprintf(mode, sizeof(mode), "throughout %.0f%%", 100 * p->lib_whole_cover[XPU_WIN_RECENT]);
		else if (p->sampled[XPU_WIN_RECENT])
			snprintf(mode, sizeof(mode), "sampled %.1f%%", 100 * p->cover[XPU_WIN_RECENT]);
		else
			snprintf(mode, sizeof(mode), "CUPTI exact");
		launch_rate(rate, sizeof(rate), p, per_s);
		snprintf(buf, sizeof(buf), "pid %-7u %-16s %-14s %s  %u call sites  %" PRIu64 " dropped%s",
			 p->pid, xpu_dict_str_get(s->dict, p->comm), mode, rate, p->sites,
			 p->dropped + p->cupti_dropped,
			 p->state == XPU_GPU_PROC_LEFT || (p->launch_only && p->left_at) ? "  (exited)"
			 : p->detail == 1 ? "  (another profiler holds CUPTI)"
			 : p->detail == XPU_GPU_DETAIL_IDS_STUCK ? "  (CUPTI's ids stuck: not traced until it restarts)" : "");
		line(r, y++, p->launch_only ? XPU_ROLE_NA : XPU_ROLE_DEFAULT, buf);
	}
	if (s->gpu.joined_pct >= 0 && s->gpu.sampled && !s->gpu.ns_err.ok && s->gpu.ids_stuck)
		snprintf(buf, sizeof(buf), "GPU time not estimated: CUPTI's correlation ids stuck in %d process%s "
			 "(its kernels cannot be told apart until it restarts); %.1f ms seen", s->gpu.ids_stuck,
			 s->gpu.ids_stuck == 1 ? "" : "es", (double)s->gpu.ns / 1e6);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled && !s->gpu.ns_err.ok && s->gpu.orphaned)
		snprintf(buf, sizeof(buf), "GPU time not estimated: %d process%s kernels came without their launch "
			 "records (e: trace every kernel); %.1f ms seen", s->gpu.orphaned,
			 s->gpu.orphaned == 1 ? "'s" : "es'", (double)s->gpu.ns / 1e6);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled && !s->gpu.ns_err.ok)
		snprintf(buf, sizeof(buf), "GPU time not estimated yet: too few slices traced (%.1f%% of the time; "
			 "e: trace every kernel); %.1f ms seen", 100 * s->gpu.cover, (double)s->gpu.ns / 1e6);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled && s->gpu.by_probe && s->gpu.by_cpu == s->gpu.by_probe)
		/* ... in a share of the launching threads' CPU time, which a
		 * slice where they idle has none of */
		snprintf(buf, sizeof(buf), "GPU time ~%.1f ms %s%.0f%%, estimated from %.1f%% of the time traced and "
			 "the launches counted in %.1f%% of the launching threads' CPU time (e: trace every kernel); "
			 "%.1f%% of it with the launching CPU stack", s->gpu.ns_est / 1e6, pm(), s->gpu.ns_err.err_pct,
			 100 * s->gpu.cover, 100 * s->gpu.cpu_cover, s->gpu.joined_pct);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled && s->gpu.by_probe)
		/* Scaled by the launches the launch probes counted, which CUPTI
		 * does not slow (model_gpu.h). */
		snprintf(buf, sizeof(buf), "GPU time ~%.1f ms %s%.0f%%, estimated from %.1f%% of the time traced and "
			 "the launches counted in %.1f%% (e: trace every kernel); %.1f%% of it with the launching CPU stack",
			 s->gpu.ns_est / 1e6, pm(), s->gpu.ns_err.err_pct, 100 * s->gpu.cover, 100 * s->gpu.probe_cover,
			 s->gpu.joined_pct);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled && s->gpu.by_own)
		/* Scaled by the launching threads' own CPU time, which tracing
		 * does not slow (model_gpu.h): the share of it traced. */
		snprintf(buf, sizeof(buf), "GPU time ~%.1f ms %s%.0f%%, estimated from the %.1f%% of the launching "
			 "threads' own CPU time traced (e: trace every kernel); %.1f%% of it with the launching CPU stack",
			 s->gpu.ns_est / 1e6, pm(), s->gpu.ns_err.err_pct, 100 * s->gpu.own_cover, s->gpu.joined_pct);
	else if (s->gpu.joined_pct >= 0 && s->gpu.sampled)
		snprintf(buf, sizeof(buf), "GPU time ~%.1f ms %s%.0f%%, estimated from the %.1f%% of the time traced "
			 "(e: trace every kernel); %.1f%% of it with the launching CPU stack",
			 s->gpu.ns_est / 1e6, pm(), s->gpu.ns_err.err_pct, 100 * s->gpu.cover, s->gpu.joined_pct);
	else if (s->gpu.joined_pct >= 0)
		snprintf(buf, sizeof(buf), "GPU time %.1f ms, %.1f%% of it with the launching CPU stack",
			 (double)s->gpu.ns / 1e6, s->gpu.joined_pct);
	else
		snprintf(buf, sizeof(buf), "no GPU time yet");
	line(r, y++, XPU_ROLE_MODE, buf);
	if (s->gpu.selected)
		draw_name(r, y, s->gpu.selected);
}

static void gpu_draw(const struct xpu_layout *l, const struct xpu_snapshot *s,
		     const struct xpu_viewstate *vs, struct xpu_ui *ui)
{
	char info[96];
	if (l->text.h)
		draw_summary(&l->text, s);
	if (l->table.h)
		xpu_view_draw_table(&l->table, &s->gpu.rows, vs, ui,
				    "no kernels yet (processes without the library show launches only)");
	if (!l->flame.h)
		return;
	if (s->gpu.flame_launches)
		snprintf(info, sizeof(info), "%" PRIu64 " launches", s->gpu.flame.total);
	else
		snprintf(info, sizeof(info), "%.1f ms GPU time, %s", (double)s->gpu.flame.total / 1e6,
			 vs->window == XPU_WIN_ALL ? "since start" : "recent window");
	xpu_tui_flame_draw(&l->flame, &s->gpu.flame, s->dict, &ui->zoom[XPU_VIEW_GPU],
			    s->gpu.flame_launches ? "CPU stacks -> launch API (launch counts)"
						  : "CPU stacks -> launch API -> GPU kernel",
			    info, "no launches yet");
}

static const struct xpu_src_status *gpu_status(const struct xpu_snapshot *s)
{
	return &s->gpu.status;
}

static const struct xpu_table *gpu_table(const struct xpu_snapshot *s)
{
	return has_data(s) ? &s->gpu.rows : NULL;
}

static const struct xpu_flame *gpu_flame(const struct xpu_snapshot *s)
{
	return has_data(s) ? &s->gpu.flame : NULL;
}

static void gpu_layout(const struct xpu_snapshot *s, const struct xpu_viewstate *vs, int cols,
		       struct xpu_layout_opts *o)
{
	if (o->table)
		o->text = xpu_view_gpu_text_rows(s, cols);
}

/* e: exact tracing costs CUDA programs 30-100%, so it is asked for where its
 * figures are shown, not by a stray key in another view, and only after a y.
 * Back to sampled (or a replay's answer that it can't) needs no question. */
static int gpu_pane_key(struct xpu_ui *ui, const struct xpu_snapshot *s, int key)
{
	if (key != 'e')
		return -1;
	if (s->gpu.exact_asked || s->replay)
		return XPU_REACT_GPU_EXACT;
	return xpu_act_gpu_exact(&ui->act);
}

const struct xpu_view_desc xpu_view_gpu = {
	.name = "GPU",
	.key = 'g',
	.no_data = "No GPU data. Run a CUDA program under xputop (sudo xputop -- CMD), "
		   "or start it with CUDA_INJECTION64_PATH set to libxputop_inject.so.",
	.status = gpu_status,
	.table = gpu_table,
	.flame = gpu_flame,
	.layout = gpu_layout,
	.draw = gpu_draw,
	.pane_key = gpu_pane_key,
};
