/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view's part of the snapshot: its processes (or threads), the
 * flamegraph of the selected one, the machine's summary and hottest
 * functions. */
#include "snap_cpu.h"

#include <stdio.h>
#include <string.h>

#include "dict.h"
#include "session.h"
#include "snapshot.h"

static void gib(char *buf, size_t size, uint64_t bytes)
{
	double v = (double)bytes;
	if (bytes >= (1ULL << 30))
		snprintf(buf, size, "%.1fG", v / (1ULL << 30));
	else
		snprintf(buf, size, "%.0fM", v / (1ULL << 20));
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

/* After the sort: one user's rows (u), the process tree (t). */
static void shape(struct xpu_table *t, const struct xpu_viewstate *vs)
{
	xpu_table_filter_col(t, XPU_CPU_COL_USER, vs->user);
	if (vs->tree && !vs->threads)
		xpu_table_tree(t, XPU_CPU_COL_PPID, XPU_CPU_COL_COMM);
}

/* F follows a process until it exits.  Its row stays a while after (state
 * X, 0.0%, sorted down among the idle), so being there is not enough: the
 * cursor goes back to the place it had, and following stops. */
static void unfollow_exited(struct xpu_snapshot *s, const struct xpu_table *t, const struct xpu_viewstate *vs)
{
	struct xpu_sel *sel = &s->sel[XPU_VIEW_CPU];
	int lost;

	if (!vs->follow[XPU_VIEW_CPU] || sel->row < 0)
		return;
	const struct xpu_cell *c = &xpu_table_row(t, (uint32_t)sel->row)[XPU_CPU_COL_STATE];
	if (c->na || !c->s || strcmp(c->s, "X"))
		return;
	sel->row = xpu_table_keep_row(t, 0, vs->sel_row[XPU_VIEW_CPU], 0, &lost);
	sel->key = sel->row >= 0 ? t->keys[sel->row] : 0;
	sel->lost = 1;
}

static int build(struct xpu_snapshot *s, struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	struct xpu_cpu_model *m = &sess->cpu;

	s->cpu.status = sess->status[XPU_SRC_CPU];
	int how = (vs->threads ? XPU_CPU_TABLE_THREADS : 0) | (vs->cmdline ? XPU_CPU_TABLE_CMDLINE : 0);
	if (xpu_cpu_model_table(m, &sess->dict, &s->cpu.rows, how, vs->window) < 0)
		return -1;
	xpu_snapshot_arrange_shaped(s, &s->cpu.rows, vs, XPU_VIEW_CPU, XPU_CPU_COL_PCT, shape);
	unfollow_exited(s, &s->cpu.rows, vs);
	s->cpu.samples_tick = m->samples_last;
	s->cpu.sys = m->sys;
	s->cpu.nhot = 0;
	if ((s->hot_functions || (vs->hot && vs->view == XPU_VIEW_CPU)) &&
	    (s->cpu.nhot = xpu_cpu_model_hot(m, &sess->dict, vs->window, s->cpu.hot, XPU_CPU_HOT_MAX,
					     &s->cpu.hot_all)) < 0)
		return -1;

	uint64_t key = vs->flame_all ? 0 : s->sel[XPU_VIEW_CPU].key;	/* A: every process's stacks */
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
		.pid = vs->flame_all ? 0 : task ? task->pid : UINT32_MAX,	/* 0: all, MAX: none */
		.tid = vs->threads && task ? task->tid : 0,
		.min_frac = XPU_SNAP_FLAME_MIN_FRAC,
		.root_label = task ? task->comm : 0,
		/* every process's: under their names, as the folded export has them */
		.per_process = !task,
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

static void init(struct xpu_snapshot *s)
{
	xpu_table_init(&s->cpu.rows, xpu_cpu_cols, XPU_CPU_NCOLS);
	xpu_flame_init(&s->cpu.flame);
}

static void release(struct xpu_snapshot *s)
{
	xpu_table_free(&s->cpu.rows);
	xpu_flame_free(&s->cpu.flame);
}

const struct xpu_snap_view xpu_snap_view_cpu = {
	.name = "cpu",
	.cols = xpu_cpu_cols,
	.ncols = XPU_CPU_NCOLS,
	.init = init,
	.free = release,
	.build = build,
};
