/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch_cpu.h"

#include <inttypes.h>
#include <stdlib.h>

#include "batch_fmt.h"
#include "batch_view.h"
#include "dict.h"
#include "export_cpu.h"
#include "json.h"
#include "session.h"
#include "snapshot.h"

/* perf top's list: where the CPUs were, whichever process (of those -p
 * watches, where it is given: said so). */
static void hot_text(FILE *f, const struct xpu_snapshot *s)
{
	char name[512];
	if (!s->cpu.nhot || !s->cpu.hot_all)
		return;
	fprintf(f, "Hottest functions, %s (%" PRIu64 " samples):\n",
		s->watched_only ? "the watched processes only" : "all processes", s->cpu.hot_all);
	for (int i = 0; i < s->cpu.nhot; i++) {
		xpu_frame_text(s->dict, s->cpu.hot[i].frame, name, sizeof(name));
		fprintf(f, "  %5.1f%%  %s\n", 100.0 * (double)s->cpu.hot[i].samples / (double)s->cpu.hot_all, name);
	}
}

void xpu_batch_cpu_text(FILE *f, const struct xpu_snapshot *s)
{
	fprintf(f, "CPU: %u Hz on %u CPUs, %" PRIu64 " samples in the last %.2fs\n", s->sample_hz,
		s->ncpus, s->cpu.samples_tick, (double)s->interval_ns / 1e9);
	char sys[160];
	xpu_cpu_sys_text(&s->cpu.sys, sys, sizeof(sys));
	if (sys[0])
		fprintf(f, "System: %s\n", sys);
	xpu_batch_print_table(f, &s->cpu.rows);
	hot_text(f, s);
}

static uint64_t pid_of(const struct xpu_stack_entry *e, void *ctx)
{
	return e->pid;
}

static uint64_t tid_of(const struct xpu_stack_entry *e, void *ctx)
{
	return e->tid;
}

static void json_cpu(struct xpu_json *j, const struct xpu_snapshot *s,
		     const struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	const struct xpu_table *t = &s->cpu.rows;
	struct xpu_batch_top *tops = xpu_batch_top_stacks(t, &sess->cpu.stacks, s->dict, vs->window,
							  vs->threads ? tid_of : pid_of, NULL);
	xpu_json_arr(j, "cpu");
	for (uint32_t r = 0; r < t->nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, t, r);
		uint32_t pid = (uint32_t)xpu_table_row(t, r)[XPU_CPU_COL_PID].i;
		const struct xpu_cpu_task *proc = xpu_cpu_model_task(&sess->cpu, pid, 0);
		xpu_json_arr(j, "stacks");
		for (int k = 0; tops && k < XPU_BATCH_TOP && tops[r].stack[k]; k++) {
			xpu_json_obj(j, NULL);
			xpu_batch_json_frames(j, s->dict, proc ? proc->comm : 0, tops[r].stack[k]);
			xpu_json_uint(j, "samples", tops[r].weight[k]);
			xpu_json_end(j, '}');
		}
		xpu_json_end(j, ']');
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	free(tops);
	xpu_json_arr(j, "cpu_functions");
	for (int i = 0; i < s->cpu.nhot; i++) {
		char name[512];
		xpu_frame_text(s->dict, s->cpu.hot[i].frame, name, sizeof(name));
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "function", name);
		xpu_json_uint(j, "samples", s->cpu.hot[i].samples);
		xpu_json_num(j, "pct", s->cpu.hot_all ? 100.0 * (double)s->cpu.hot[i].samples / (double)s->cpu.hot_all : 0);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

/* The machine as /proc says (the CPU view's summary line); null where unknown. */
static void json_system(struct xpu_json *j, const struct xpu_cpu_sys *y)
{
	xpu_json_obj(j, "system");
	if (y->flags & XPU_SYS_LOAD) {
		xpu_json_arr(j, "load");
		for (int i = 0; i < 3; i++)
			xpu_json_num(j, NULL, y->load[i]);
		xpu_json_end(j, ']');
	} else {
		xpu_json_null(j, "load");
	}
	if (y->flags & XPU_SYS_BUSY)
		xpu_json_num(j, "cpu_busy_pct", y->busy_pct);
	else
		xpu_json_null(j, "cpu_busy_pct");
	if (y->flags & XPU_SYS_MEM) {
		xpu_json_uint(j, "mem_used_bytes", y->mem_used);
		xpu_json_uint(j, "mem_total_bytes", y->mem_total);
	} else {
		xpu_json_null(j, "mem_used_bytes");
		xpu_json_null(j, "mem_total_bytes");
	}
	xpu_json_end(j, '}');
}

void xpu_batch_cpu_json(struct xpu_json *j, const struct xpu_snapshot *s,
			const struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	json_cpu(j, s, sess, vs);
	json_system(j, &s->cpu.sys);
	xpu_json_obj(j, "cpu_info");
	xpu_json_uint(j, "hz", s->sample_hz);
	xpu_json_uint(j, "ncpus", s->ncpus);
	xpu_json_uint(j, "samples_tick", s->cpu.samples_tick);
	xpu_json_str(j, "view", vs->threads ? "threads" : "processes");
	xpu_json_str(j, "state", xpu_batch_state_name(s->cpu.status.state));
	xpu_json_str(j, "status", s->cpu.status.text);
	/* What bounded memory has aged out so far (model_cpu.h, stacks.h). */
	xpu_json_uint(j, "rows_aged_out", sess->cpu.tasks_aged_out);
	xpu_json_uint(j, "stacks_aged_out", sess->cpu.stacks.aged_out);
	xpu_json_end(j, '}');
}

const struct xpu_batch_view xpu_batch_view_cpu = {
	.view = XPU_VIEW_CPU,
	.text = xpu_batch_cpu_text,
	.json = xpu_batch_cpu_json,
	.export = xpu_export_cpu,
};
