/* SPDX-License-Identifier: GPL-2.0-only */
#include "npu_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_trace.h"
#include "dict.h"
#include "json.h"
#include "model_npu.h"
#include "snapshot.h"

/* NPU tracks get thread ids of their own, far above real thread ids and
 * below 2^32 (Perfetto reads them as 32-bit): one per lane of each queue in
 * the trace, numbered in order, not by the queue's number (a fence context
 * can be large).  A queue's jobs that overlap (several in flight) go on
 * lanes of their own, so that every track's slices follow each other, as
 * viewers need. */
#define NPU_TID_BASE 2000000000u
#define LANES 64u

static int by_track_and_time(const void *a, const void *b, void *ctx)
{
	const struct xpu_npu_jobrec *v = ctx, *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	return x->submit_ns < y->submit_ns ? -1 : x->submit_ns > y->submit_ns;
}

static uint64_t track_tid(uint32_t group, uint32_t lane)
{
	return NPU_TID_BASE + (uint64_t)group * LANES + lane;
}

static const char *comm_of(const struct xpu_dict *d, uint32_t comm)
{
	const char *c = comm ? xpu_dict_str_get(d, comm) : NULL;
	return c ? c : "?";
}

static void job(struct xpu_json *j, const struct xpu_npu_jobrec *r, uint64_t tid, const struct xpu_dict *d,
		uint64_t origin)
{
	static const char *const states[] = { "?", "done", "aborted", "outstanding" };
	char name[40];
	if (r->job_id)
		snprintf(name, sizeof(name), "job %llu", (unsigned long long)r->job_id);
	else
		snprintf(name, sizeof(name), "job (no id)");
	xpu_json_obj(j, NULL);
	xpu_json_str(j, "name", name);
	xpu_json_str(j, "cat", "npu_job");
	xpu_json_str(j, "ph", "X");
	xpu_json_uint(j, "pid", r->pid);
	xpu_json_uint(j, "tid", tid);
	xpu_json_ns_as_us(j, "ts", r->submit_ns - origin);
	xpu_json_ns_as_us(j, "dur", r->end_ns - r->submit_ns);
	xpu_json_obj(j, "args");
	if (r->job_id)
		xpu_json_uint(j, "job_id", r->job_id);
	else
		xpu_json_null(j, "job_id");
	xpu_json_uint(j, "queue", r->queue);
	xpu_json_str(j, "status", states[r->state < 4 ? r->state : 0]);
	if (r->state == XPU_NPU_JOBREC_DONE)
		xpu_json_int(j, "job_status", r->status);
	xpu_json_str(j, "command", r->pid ? comm_of(d, r->comm) : "[no process]");
	xpu_json_end(j, '}');
	xpu_json_end(j, '}');
}

/* The alerts of the NPU raised while the jobs ran, as global instants. */
static void alerts(struct xpu_json *j, const struct xpu_snapshot *s, uint64_t origin)
{
	for (uint32_t i = 0; s && i < s->nalerts; i++) {
		const struct xpu_alert *a = &s->alerts[i];
		if (strcmp(a->source, "npu") != 0 || a->raised < origin)
			continue;
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "name", a->rule);
		xpu_json_str(j, "cat", "npu_alert");
		xpu_json_str(j, "ph", "i");
		xpu_json_str(j, "s", "g");
		xpu_json_uint(j, "pid", 0);
		xpu_json_uint(j, "tid", 0);
		xpu_json_ns_as_us(j, "ts", a->raised - origin);
		xpu_json_obj(j, "args");
		xpu_json_str(j, "severity", xpu_alert_sev_name(a->sev));
		xpu_json_str(j, "message", a->msg);
		xpu_json_end(j, '}');
		xpu_json_end(j, '}');
	}
}

/* The lane of a queue a job goes on: the first whose last job ended before
 * it was submitted, else a new one; past LANES, the one that ends first. */
static uint32_t lane_for(uint64_t *ends, uint32_t *nlanes, const struct xpu_npu_jobrec *r, int *opened)
{
	uint32_t best = 0;
	*opened = 0;
	for (uint32_t l = 0; l < *nlanes; l++) {
		if (ends[l] < r->submit_ns) {
			ends[l] = r->end_ns;
			return l;
		}
		if (ends[l] < ends[best])
			best = l;
	}
	if (*nlanes < LANES) {
		best = (*nlanes)++;
		*opened = 1;
	}
	ends[best] = r->end_ns;
	return best;
}

static void write_jobs(struct xpu_json *j, const struct xpu_npu_jobrec *v, const uint32_t *order, uint32_t n,
		       const struct xpu_dict *d, uint64_t origin)
{
	uint64_t ends[LANES];
	uint32_t nlanes = 0, group = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct xpu_npu_jobrec *r = &v[order[k]], *prev = k ? &v[order[k - 1]] : NULL;
		char name[64];
		int opened;
		if (!prev || prev->pid != r->pid) {
			if (r->pid)
				snprintf(name, sizeof(name), "%s (%u)", comm_of(d, r->comm), r->pid);
			else
				snprintf(name, sizeof(name), "[no process]");
			xpu_chrome_trace_meta(j, "process_name", r->pid, 0, name);
		}
		if (prev && (prev->pid != r->pid || prev->queue != r->queue)) {
			group++;
			nlanes = 0;
		}
		uint32_t lane = lane_for(ends, &nlanes, r, &opened);
		if (opened) {
			if (lane)
				snprintf(name, sizeof(name), "NPU queue %u (%u)", r->queue, lane + 1);
			else
				snprintf(name, sizeof(name), "NPU queue %u", r->queue);
			xpu_chrome_trace_meta(j, "thread_name", r->pid, track_tid(group, lane), name);
		}
		job(j, r, track_tid(group, lane), d, origin);
	}
}

long xpu_npu_trace_write(FILE *f, const struct xpu_npu_model *m, const struct xpu_dict *d,
			 const struct xpu_snapshot *s)
{
	uint32_t n;
	int err;
	struct xpu_npu_jobrec *v = xpu_npu_model_jobs(m, &n, &err);
	uint32_t *order;
	uint64_t origin = UINT64_MAX;
	struct xpu_json j;
	if (!v) {
		errno = err ? ENOMEM : 0;
		return err ? -1 : 0;
	}
	if (!(order = malloc((size_t)n * sizeof(*order)))) {
		free(v);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		order[i] = i;
		if (v[i].submit_ns < origin)
			origin = v[i].submit_ns;
	}
	qsort_r(order, n, sizeof(*order), by_track_and_time, v);
	xpu_json_init(&j, f);
	xpu_json_obj(&j, NULL);
	xpu_json_str(&j, "displayTimeUnit", "ms");
	xpu_json_arr(&j, "traceEvents");
	write_jobs(&j, v, order, n, d, origin);
	alerts(&j, s, origin);
	xpu_json_end(&j, ']');
	xpu_json_end(&j, '}');
	fputc('\n', f);
	free(order);
	free(v);
	return ferror(f) ? -1 : (long)n;
}
