/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch_npu.h"

#include <inttypes.h>
#include <linux/types.h>

#include "batch_fmt.h"
#include "batch_view.h"
#include "export_npu.h"
#include "json.h"
#include "model_npu.h"
#include "npu.h"
#include "snapshot.h"

#define JSON_HISTORY 60		/* sparkline points per JSON snapshot */

static void num_or_null(struct xpu_json *j, const char *key, int valid, double v)
{
	if (valid)
		xpu_json_num(j, key, v);
	else
		xpu_json_null(j, key);
}

static void json_sources(struct xpu_json *j, const struct xpu_npu_srcinfo *si)
{
	xpu_json_arr(j, "sources");
	for (uint32_t i = 0; i < si->n; i++) {
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "name", si->line[i].name);
		xpu_json_str(j, "state", xpu_batch_state_name(si->line[i].state));
		xpu_json_str(j, "detail", si->line[i].detail);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

static void json_ipc(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	uint32_t from = n->nhistory > JSON_HISTORY ? n->nhistory - JSON_HISTORY : 0;
	xpu_json_obj(j, "ipc");
	xpu_json_num(j, "tx_per_s", n->tx_s);
	xpu_json_num(j, "rx_per_s", n->rx_s);
	xpu_json_num(j, "tx_avg_per_s", n->tx_avg);
	xpu_json_num(j, "rx_avg_per_s", n->rx_avg);
	xpu_json_uint(j, "tx_total", n->tx_total);
	xpu_json_uint(j, "rx_total", n->rx_total);
	xpu_json_uint(j, "timeouts_total", n->timeouts_total);
	num_or_null(j, "baseline_per_s", n->baseline_armed, n->baseline);
	xpu_json_arr(j, "history_per_s");
	for (uint32_t i = from; i < n->nhistory; i++)
		xpu_json_num(j, NULL, n->history[i]);
	xpu_json_end(j, ']');
	xpu_json_arr(j, "types");
	for (uint32_t i = 0; i < n->ntypes; i++) {
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "type", n->types[i].name);
		xpu_json_uint(j, "code", n->types[i].code);
		xpu_json_num(j, "tx_per_s", n->types[i].tx_s);
		xpu_json_num(j, "rx_per_s", n->types[i].rx_s);
		xpu_json_uint(j, "tx_total", n->types[i].tx_total);
		xpu_json_uint(j, "rx_total", n->types[i].rx_total);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

static void json_jobs(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	xpu_json_obj(j, "jobs");
	xpu_json_num(j, "submitted_per_s", n->submit_s);
	xpu_json_num(j, "done_per_s", n->done_s);
	xpu_json_uint(j, "submitted_total", n->submitted_total);
	xpu_json_uint(j, "done_total", n->done_total);
	xpu_json_uint(j, "outstanding", n->outstanding);
	xpu_json_uint(j, "oldest_ns", n->oldest_ns);
	num_or_null(j, "p50_ns", n->lat_valid, (double)n->p50_ns);
	num_or_null(j, "p99_ns", n->lat_valid, (double)n->p99_ns);
	num_or_null(j, "max_ns", n->lat_valid, (double)n->max_ns);
	xpu_json_uint(j, "aborted_total", n->aborted_total);
	xpu_json_bool(j, "matched_by_order", n->jobs_by_order);
	xpu_json_uint(j, "irq_linked", n->irq_linked);
	xpu_json_uint(j, "irq_unlinked", n->irq_unlinked);
	xpu_json_str(j, "irq_matching", xpu_npu_irq_matching(n));
	xpu_json_uint(j, "trace_kept", n->jobs_kept);
	xpu_json_uint(j, "trace_dropped", n->jobs_dropped);
	xpu_json_end(j, '}');
}

/* A time of the stall's as wall-clock text, null for none. */
static void json_when(struct xpu_json *j, const struct xpu_snapshot *s, const char *key, uint64_t mono)
{
	char when[64];
	if (!mono) {
		xpu_json_null(j, key);
		return;
	}
	xpu_batch_wall_text(xpu_snapshot_wall(s, mono), when, sizeof(when), 1);
	xpu_json_str(j, key, when);
}

/* The STALL alert's evidence (null before any stall). */
static void json_stall(struct xpu_json *j, const struct xpu_snapshot *s)
{
	const struct xpu_npu_stall_snap *st = &s->npu.model.stall;
	if (!st->shown) {
		xpu_json_null(j, "stall");
		return;
	}
	xpu_json_obj(j, "stall");
	xpu_json_bool(j, "active", st->active);
	xpu_json_bool(j, "job_id_known", st->job_id_known);
	num_or_null(j, "job_id", st->job_id_known, (double)st->job_id);
	xpu_json_uint(j, "queue", st->queue);
	num_or_null(j, "pid", st->pid != 0, st->pid);
	xpu_json_str(j, "comm", st->comm);
	json_when(j, s, "process_exited", st->exited);
	json_when(j, s, "submitted", st->submit);
	xpu_json_uint(j, "submit_mono_ns", st->submit);
	json_when(j, s, "raised", st->raised);
	json_when(j, s, "cleared", st->cleared);
	xpu_json_uint(j, "age_ns", st->age_ns);
	json_when(j, s, "last_ipc", st->last_ipc);
	json_when(j, s, "last_heartbeat", st->last_hb);
	xpu_json_uint(j, "bo_waits", st->waits);
	num_or_null(j, "bo_wait_every_ns", st->waits > 1, (double)st->wait_every_ns);
	xpu_json_uint(j, "tdr_ms", st->tdr_ms);
	xpu_json_str(j, "tdr_from", st->tdr_origin ? st->tdr_origin : "default");
	xpu_json_str(j, "after", st->after);
	xpu_json_end(j, '}');
}

static void json_memory(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	char key[48];
	xpu_json_obj(j, "memory");
	for (uint32_t c = 1; c < XPU_NPU_MEM_MAX; c++) {
		snprintf(key, sizeof(key), "%s_per_s", xpu_npu_mem_name(c));
		xpu_json_num(j, key, n->mem_s[c]);
		snprintf(key, sizeof(key), "%s_total", xpu_npu_mem_name(c));
		xpu_json_uint(j, key, n->mem_total[c]);
	}
	if (n->shares_valid) {
		xpu_json_obj(j, "shares_pct");
		xpu_json_num(j, "memory_management", n->share_mm);
		xpu_json_num(j, "ipc", n->share_ipc);
		xpu_json_num(j, "buffer_management", n->share_bo);
		xpu_json_end(j, '}');
	} else {
		xpu_json_null(j, "shares_pct");
	}
	xpu_json_end(j, '}');
}

/* What intel-npu-smi shows: the device from sysfs, the open files from fdinfo. */
static void json_device(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	uint32_t f = n->dev_valid ? n->dev.flags : 0;
	xpu_json_obj(j, "device");
	if (f & XPU_NPU_DEV_MEM)
		xpu_json_uint(j, "memory_bytes", n->dev.mem_bytes);
	else
		xpu_json_null(j, "memory_bytes");
	num_or_null(j, "freq_mhz", f & XPU_NPU_DEV_CUR_MHZ, n->dev.cur_mhz);
	num_or_null(j, "max_freq_mhz", f & XPU_NPU_DEV_MAX_MHZ, n->dev.max_mhz);
	num_or_null(j, "power_w", f & XPU_NPU_DEV_POWER, n->dev.power_mw / 1000.0);
	xpu_json_end(j, '}');
	xpu_json_arr(j, "clients");
	for (uint32_t r = 0; r < n->clients.nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, &n->clients, r);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

/* The driver functions table, its categories (window and since start) and
 * the Level Zero -> ioctl -> function chains. */
static void json_functions(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	xpu_json_obj(j, "functions");
	xpu_json_uint(j, "count", n->fn_count);
	xpu_json_uint(j, "total", n->fn_total);
	xpu_json_uint(j, "uncounted", n->fns_over);
	xpu_json_bool(j, "timed", n->fn_timed);
	xpu_json_uint(j, "untimed", n->fn_untimed);
	xpu_json_str(j, "latency_note", n->fn_lat_note);
	xpu_json_arr(j, "categories");
	for (uint32_t c = 0; c < XPU_NPU_NCAT; c++) {
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "category", xpu_npu_cat_name(c));
		xpu_json_uint(j, "count", n->cats[c].count);
		xpu_json_uint(j, "total", n->cats[c].total);
		xpu_json_num(j, "share_pct", n->cats[c].share);
		xpu_json_num(j, "share_total_pct", n->cats[c].share_total);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_arr(j, "rows");
	for (uint32_t r = 0; r < n->funcs.nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, &n->funcs, r);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_uint(j, "chains_uncounted", n->chains_over);
	xpu_json_arr(j, "chains");
	for (uint32_t r = 0; r < n->chains.nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, &n->chains, r);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

static void json_l0(struct xpu_json *j, const struct xpu_npu_snap *n)
{
	xpu_json_obj(j, "level_zero");
	for (uint32_t a = 1; a < XPU_NPU_L0_API_MAX; a++) {
		xpu_json_obj(j, xpu_npu_l0_name(a));
		xpu_json_num(j, "per_s", n->l0_s[a]);
		xpu_json_uint(j, "total", n->l0_total[a]);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, '}');
}

void xpu_batch_npu_json(struct xpu_json *j, const struct xpu_snapshot *s)
{
	const struct xpu_npu_snap *n = &s->npu.model;

	xpu_json_obj(j, "npu");
	xpu_json_str(j, "state", xpu_batch_state_name(s->npu.status.state));
	xpu_json_str(j, "status", s->npu.status.text);
	json_sources(j, &s->npu.sources);
	xpu_json_uint(j, "events", n->events);
	xpu_json_bool(j, "counts_only", n->untimed);	/* a log without times: no rates, jobs or alerts */
	json_ipc(j, n);
	json_jobs(j, n);
	json_stall(j, s);
	json_memory(j, n);
	json_functions(j, n);
	xpu_json_obj(j, "power");
	xpu_json_uint(j, "suspends", n->suspends);
	xpu_json_uint(j, "resumes", n->resumes);
	xpu_json_uint(j, "recoveries", n->recoveries);
	xpu_json_str(j, "last_recovery", n->last_recovery);
	xpu_json_end(j, '}');
	num_or_null(j, "busy_pct", n->busy_valid, n->busy_pct);
	json_device(j, n);
	json_l0(j, n);
	xpu_json_obj(j, "rules");
	xpu_json_uint(j, "tdr_ms", n->tdr_ms);
	xpu_json_str(j, "tdr_from", n->tdr_origin ? n->tdr_origin : "default");
	xpu_json_uint(j, "silence_ms", n->silence_ms);
	xpu_json_end(j, '}');
	xpu_json_arr(j, "calls");
	for (uint32_t r = 0; r < n->calls.nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, &n->calls, r);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

static void text_pct(char *buf, size_t size, int valid, double v)
{
	if (valid)
		snprintf(buf, size, "%.0f%%", v);
	else
		snprintf(buf, size, "N/A");
}

/* The stall's evidence, as the alert card shows it. */
static void text_stall(FILE *f, const struct xpu_snapshot *s)
{
	const struct xpu_npu_stall_snap *st = &s->npu.model.stall;
	char when[64], ipc[64];
	if (!st->shown)
		return;
	xpu_batch_wall_text(xpu_snapshot_wall(s, st->submit), when, sizeof(when), 0);
	if (st->last_ipc)
		xpu_batch_wall_text(xpu_snapshot_wall(s, st->last_ipc), ipc, sizeof(ipc), 0);
	else
		snprintf(ipc, sizeof(ipc), "none seen");
	fprintf(f, "  stall (%s): job ", st->active ? "active" : "cleared");
	if (st->job_id_known)
		fprintf(f, "%" PRIu64 " ", st->job_id);
	fprintf(f, "on queue %u", st->queue);
	if (st->pid)
		fprintf(f, " of pid %u %s%s", st->pid, st->comm, st->exited ? " (exited)" : "");
	fprintf(f, ", submitted %s, outstanding %.1f s; last IPC %s; BO_WAIT x%u", when, (double)st->age_ns / 1e9,
		ipc, st->waits);
	if (st->waits > 1)
		fprintf(f, " every %.0f ms", (double)st->wait_every_ns / 1e6);
	fprintf(f, "; TDR %u ms (%s)%s%s%s\n", st->tdr_ms, st->tdr_origin ? st->tdr_origin : "default",
		st->job_id_known ? "" : "; matched by order (no job ids)", st->after[0] ? "; then " : "", st->after);
}

void xpu_batch_npu_text(FILE *f, const struct xpu_snapshot *s)
{
	const struct xpu_npu_snap *n = &s->npu.model;
	char busy[16];

	fprintf(f, "NPU: %s\n", s->npu.status.text[0] ? s->npu.status.text : "no data");
	if (!n->any)
		return;
	if (n->untimed)
		fputs("  counts only: the log has no times, so no IPC or job rates, no latencies, no alerts\n", f);
	else
		fprintf(f, "  IPC: tx %.1f/s rx %.1f/s, %" PRIu64 " receive timeouts\n", n->tx_s, n->rx_s,
			n->timeouts_total);
	if (!n->untimed) {
		fprintf(f, "  jobs: submitted %.1f/s done %.1f/s, %u outstanding, %" PRIu64 " aborted",
			n->submit_s, n->done_s, n->outstanding, n->aborted_total);
		if (n->lat_valid)
			fprintf(f, ", latency p50 %.2fms p99 %.2fms max %.2fms", (double)n->p50_ns / 1e6,
				(double)n->p99_ns / 1e6, (double)n->max_ns / 1e6);
		fputc('\n', f);
		fprintf(f, "  job completions' IRQ/IPC work: %" PRIu64 " charged to their jobs' processes, %" PRIu64
			" with no process; matching %s\n", n->irq_linked, n->irq_unlinked, xpu_npu_irq_matching(n));
		fprintf(f, "  jobs kept for the trace export: %" PRIu64 " (%" PRIu64 " older dropped, ring of %u)\n",
			n->jobs_kept, n->jobs_dropped, XPU_NPU_JOB_RING);
	}
	if (n->shares_valid)
		fprintf(f, "  shares: memory management %s, IPC %s, buffer management %s\n", n->share_mm_text,
			n->share_ipc_text, n->share_bo_text);
	if (n->fn_total) {
		fprintf(f, "  driver functions since start: %" PRIu64 " calls;", n->fn_total);
		for (uint32_t c = 0; c < XPU_NPU_NCAT; c++)
			fprintf(f, " %s %" PRIu64 " (%s)%s", xpu_npu_cat_name(c), n->cats[c].total,
				n->cats[c].share_total_text, c + 1 < XPU_NPU_NCAT ? "," : "\n");
		fprintf(f, "  driver function latency: %s\n",
			n->fn_lat_note[0] ? n->fn_lat_note : n->fn_timed ? "timed, entry to return" : "not timed");
	}
	text_stall(f, s);
	text_pct(busy, sizeof(busy), n->busy_valid, n->busy_pct);
	fprintf(f, "  busy: %s, %" PRIu64 " recoveries, TDR %u ms (%s)\n", busy, n->recoveries, n->tdr_ms,
		n->tdr_origin ? n->tdr_origin : "default");
	if (n->calls.nrows)
		xpu_batch_print_table(f, &n->calls);
	if (n->clients.nrows)
		xpu_batch_print_table(f, &n->clients);
	if (n->funcs.nrows)
		xpu_batch_print_table(f, &n->funcs);
	if (n->chains.nrows)
		xpu_batch_print_table(f, &n->chains);
}

static void json(struct xpu_json *j, const struct xpu_snapshot *s, const struct xpu_session *sess,
		 const struct xpu_viewstate *vs)
{
	xpu_batch_npu_json(j, s);
}

static int export(struct xpu_session *sess, const struct xpu_snapshot *snap, const struct xpu_viewstate *vs,
		  const char *dir, char *msg, size_t size)
{
	return xpu_export_npu(sess, snap, dir, msg, size);
}

const struct xpu_batch_view xpu_batch_view_npu = {
	.view = XPU_VIEW_NPU,
	.text = xpu_batch_npu_text,
	.json = json,
	.export = export,
};
