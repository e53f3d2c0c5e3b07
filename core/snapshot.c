#include "snapshot.h"

#include <stdio.h>
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

void xpu_snapshot_init(struct xpu_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	xpu_table_init(&s->cpu, xpu_cpu_cols, XPU_CPU_NCOLS);
	xpu_flame_init(&s->cpu_flame);
}

void xpu_snapshot_free(struct xpu_snapshot *s)
{
	xpu_table_free(&s->cpu);
	xpu_flame_free(&s->cpu_flame);
}

static void header(struct xpu_snapshot *s, const struct xpu_session *sess)
{
	s->dict = &sess->dict;
	s->mono_ns = sess->last_tick_mono;
	s->wall_ns = sess->last_tick_wall;
	s->interval_ns = sess->last_interval;
	s->window_ns = sess->cpu.window_ns;
	snprintf(s->host, sizeof(s->host), "%s", sess->host);
	s->ticks = sess->ticks;
	s->events_total = sess->events_total;
	s->events_per_s = sess->last_interval ? (double)sess->events_last * 1e9 / (double)sess->last_interval : 0;
	s->dropped_total = sess->dropped_total;
	s->dropped_tick = sess->dropped_last;
	s->sample_hz = sess->cfg.sample_hz;
	s->ncpus = sess->ncpus;
	s->replay = sess->replay;
	s->replay_done = sess->replay_done;
	snprintf(s->source_name, sizeof(s->source_name), "%s", sess->source_name);
	s->cpu_status = sess->status[XPU_SRC_CPU];
	s->gpu_status = sess->status[XPU_SRC_GPU];
	s->npu_status = sess->status[XPU_SRC_NPU];
}

/* The row the flame follows: the selected key if it is still shown, else the
 * first row. */
static uint64_t selected_key(const struct xpu_table *t, uint64_t want)
{
	if (want && xpu_table_find(t, want) >= 0)
		return want;
	return t->nrows ? t->keys[0] : 0;
}

static int cpu_view(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct xpu_cpu_model *m = &sess->cpu;
	int col = vs->sort_col[XPU_VIEW_CPU];

	if (xpu_cpu_model_table(m, &sess->dict, &s->cpu, vs->threads, vs->window) < 0)
		return -1;
	xpu_table_filter(&s->cpu, vs->filter[XPU_VIEW_CPU]);
	if (col < 0 || (uint32_t)col >= s->cpu.ncols)
		col = XPU_CPU_COL_PCT;
	xpu_table_sort(&s->cpu, col, vs->reverse[XPU_VIEW_CPU]);
	s->cpu_samples_tick = m->samples_last;

	uint64_t key = selected_key(&s->cpu, vs->selected[XPU_VIEW_CPU]);
	const struct xpu_cpu_task *task = NULL;
	if (key)
		task = vs->threads ? NULL : xpu_cpu_model_task(m, (uint32_t)key, 0);
	if (key && vs->threads) {
		int r = xpu_table_find(&s->cpu, key);
		uint32_t pid = (uint32_t)xpu_table_row(&s->cpu, r)[XPU_CPU_COL_PID].i;
		task = xpu_cpu_model_task(m, pid, (uint32_t)key);
	}
	s->cpu_flame_key = key;
	struct xpu_flame_opts fo = {
		.window = vs->window,
		.pid = task ? task->pid : UINT32_MAX,
		.tid = vs->threads && task ? task->tid : 0,
		.min_frac = FLAME_MIN_FRAC,
		.root_label = task ? task->comm : 0,
	};
	if (task)
		snprintf(s->cpu_flame_title, sizeof(s->cpu_flame_title), "%s (%s %u)",
			 xpu_dict_str_get(&sess->dict, task->comm), vs->threads ? "tid" : "pid",
			 vs->threads ? task->tid : task->pid);
	else
		s->cpu_flame_title[0] = '\0';
	return xpu_flame_build(&s->cpu_flame, &m->stacks, &sess->dict, &fo);
}

int xpu_snapshot_build(struct xpu_snapshot *s, struct xpu_session *sess,
		       const struct xpu_viewstate *vs)
{
	header(s, sess);
	return cpu_view(s, sess, vs);
}
