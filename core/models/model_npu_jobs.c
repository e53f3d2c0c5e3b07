/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model's jobs (model_npu.h): submissions matched with their
 * completions or aborts, the outstanding ones the stall rule watches, and
 * the job latency snapshot. */
#include <errno.h>
#include <stdarg.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "event.h"
#include "grow.h"
#include "model_npu.h"
#include "model_npu_int.h"
#include "npu.h"

static void alert_aborted(struct xpu_npu_model *m, uint64_t now, const char *what)
{
	xpu_alert_raise(m->alerts, XPU_ALERT_CRITICAL, "npu", "npu.job_aborted", 0, now,
			XPU_NPU_ALERT_HOLD_NS, "%s", what);
}

static int job_submit(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	if (m->njobs == XPU_NPU_MAX_OUTSTANDING) {
		memmove(m->jobs, m->jobs + 1, (m->njobs - 1) * sizeof(*m->jobs));
		m->njobs--;
		m->jobs_forgotten++;
	}
	if (xpu_grow((void **)&m->jobs, &m->jobs_cap, m->njobs + 1, sizeof(*m->jobs)))
		return -ENOMEM;
	struct xpu_npu_job *j = &m->jobs[m->njobs++];
	*j = (struct xpu_npu_job){
		.submit_ns = ev->time, .key = ev->npu.arg, .queue = ev->npu.aux,
		.pid = ev->pid, .comm = ev->npu.comm,
	};
	if (ev->pid) {
		uint32_t c = xpu_npu_call_get(m, ev->pid, XPU_NPU_KIND_JOB, 0, ev->npu.comm);
		j->call = c == UINT32_MAX ? 0 : c + 1;
	}
	return 0;
}

/* The outstanding job a completion on (queue, key) ends: the one with that
 * key, else the queue's oldest job submitted without a key (by order: a
 * trace without job ids cannot tell which job completed). */
static int job_match(struct xpu_npu_model *m, uint32_t queue, uint64_t key)
{
	if (key)
		for (uint32_t i = 0; i < m->njobs; i++)
			if (m->jobs[i].queue == queue && m->jobs[i].key == key) {
				m->jobs_by_id++;
				return (int)i;
			}
	for (uint32_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].queue == queue && (!key || !m->jobs[i].key)) {
			m->jobs_by_order++;
			return (int)i;
		}
	return -1;
}

static int is_stalled(const struct xpu_npu_model *m, const struct xpu_npu_job *j)
{
	return m->stall.raised && !m->stall.cleared && j->submit_ns == m->stall.job.submit_ns &&
	       j->queue == m->stall.job.queue && j->key == m->stall.job.key;
}

void xpu_npu_stall_after(struct xpu_npu_model *m, uint32_t after, uint64_t now, const char *fmt, ...)
{
	va_list ap;
	if (!m->stall.raised || m->stall.cleared || m->stall.after)
		return;
	m->stall.after = after;
	m->stall.after_ns = now;
	va_start(ap, fmt);
	vsnprintf(m->stall.after_text, sizeof(m->stall.after_text), fmt, ap);
	va_end(ap);
}

/* The stalled job ended: how, and how late. */
static void stalled_job_ended(struct xpu_npu_model *m, const struct xpu_npu_job *j, int aborted, uint64_t now)
{
	char late[32];
	xpu_npu_fmt_dur(late, sizeof(late), now > j->submit_ns ? now - j->submit_ns : 0);
	if (aborted)
		xpu_npu_stall_after(m, XPU_NPU_AFTER_ABORT, now, "the driver aborted the job, %s after its submit",
				    late);
	else
		xpu_npu_stall_after(m, XPU_NPU_AFTER_DONE, now, "the job completed late, %s after its submit", late);
}

/* Finished jobs the trace export's ring holds now. */
static uint64_t ring_kept(const struct xpu_npu_model *m)
{
	return m->ring ? (m->ring_n < XPU_NPU_JOB_RING ? m->ring_n : XPU_NPU_JOB_RING) : 0;
}

/* A finished job goes in the trace export's ring, its memory taken at the
 * first; without it the job counts as dropped. */
static void ring_put(struct xpu_npu_model *m, const struct xpu_npu_job *j, uint64_t end, uint64_t job_id,
		     uint32_t state, int32_t status)
{
	if (!m->ring)
		m->ring = calloc(XPU_NPU_JOB_RING, sizeof(*m->ring));
	if (m->ring)
		m->ring[m->ring_n % XPU_NPU_JOB_RING] = (struct xpu_npu_jobrec){
			.submit_ns = j->submit_ns, .end_ns = end > j->submit_ns ? end : j->submit_ns,
			.job_id = job_id, .pid = j->pid, .comm = j->comm, .queue = j->queue,
			.state = state, .status = status,
		};
	m->ring_n++;
}

/* The IRQ / IPC work that delivered a completion is its job's process's
 * when the completion named the job and its submit named the process: one
 * completion on the process's irq row (and, read from it, its share of
 * ivpu_job_done_callback's calls).  A trace without job ids (a bpftrace log
 * of names) leaves it with no process. */
static void charge_irq(struct xpu_npu_model *m, const struct xpu_npu_job *j, uint64_t job_id)
{
	if (!j || !j->pid || !job_id) {
		m->irq_unlinked++;
		return;
	}
	m->irq_linked++;
	uint32_t c = xpu_npu_call_get(m, j->pid, XPU_NPU_KIND_IRQ, 0, j->comm);
	if (c != UINT32_MAX)
		m->calls[c].calls.open++;
}

static int job_done(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	int aborted = ev->npu.result == XPU_NPU_JOB_STATUS_ABORTED;
	int i = job_match(m, ev->npu.aux, ev->npu.arg);
	struct xpu_npu_job j = { 0 };
	int rc = 0;

	uint64_t job_id = ev->npu.id ? ev->npu.id : ev->npu.arg;

	if (i < 0) {
		m->jobs_unmatched++;
	} else {
		j = m->jobs[i];
		ring_put(m, &j, ev->time, job_id ? job_id : j.key,
			 aborted ? XPU_NPU_JOBREC_ABORTED : XPU_NPU_JOBREC_DONE, ev->npu.result);
		if (is_stalled(m, &j))
			stalled_job_ended(m, &j, aborted, ev->time);
		memmove(m->jobs + i, m->jobs + i + 1, (m->njobs - (uint32_t)i - 1) * sizeof(*m->jobs));
		m->njobs--;
	}
	charge_irq(m, i >= 0 ? &j : NULL, job_id);
	if (aborted) {
		char what[96];
		m->g[XPU_NPU_C_ABORTED].open++;
		if (i >= 0 && j.call)
			m->calls[j.call - 1].errors.open++;
		snprintf(what, sizeof(what), "job aborted by the driver (queue %u, job %llu)",
			 ev->npu.aux, (unsigned long long)ev->npu.arg);
		alert_aborted(m, ev->time, what);
		return 0;
	}
	m->g[XPU_NPU_C_DONE].open++;
	m->last_done = ev->time;
	if (i < 0)
		return 0;
	uint64_t lat = ev->time > j.submit_ns ? ev->time - j.submit_ns : 0;
	rc = xpu_npu_lat_add(&m->job_lat, lat, 1);
	if (j.call) {
		struct xpu_npu_call *c = &m->calls[j.call - 1];
		c->calls.open++;
		c->busy_ns.open += lat;
		if (xpu_npu_lat_add(&c->lat, lat, 1) < 0)
			rc = -ENOMEM;
	}
	return rc;
}

/* Every abort path of the driver ends the jobs outstanding on the affected
 * queues; which queues is not visible, so all outstanding jobs are counted
 * as aborted. */
static void job_abort(struct xpu_npu_model *m, const struct xpu_event *ev)
{
	static const char *why[] = { "", "all queues", "a command queue", "an engine error" };
	uint32_t kind = (uint32_t)ev->npu.result < 4 ? (uint32_t)ev->npu.result : 0;
	uint32_t n = m->njobs;
	char what[96];

	for (uint32_t i = 0; i < n; i++) {
		if (m->jobs[i].call)
			m->calls[m->jobs[i].call - 1].errors.open++;
		if (is_stalled(m, &m->jobs[i]))
			stalled_job_ended(m, &m->jobs[i], 1, ev->time);
		ring_put(m, &m->jobs[i], ev->time, m->jobs[i].key, XPU_NPU_JOBREC_ABORTED,
			 XPU_NPU_JOB_STATUS_ABORTED);
	}
	m->njobs = 0;
	m->g[XPU_NPU_C_ABORTED].open += n;
	if (!n && kind == XPU_NPU_ABORT_ALL)
		return;	/* a recovery with nothing in flight: its own alert says it */
	snprintf(what, sizeof(what), "%u outstanding job%s aborted (%s)", n, n == 1 ? "" : "s",
		 kind ? why[kind] : "abort");
	alert_aborted(m, ev->time, what);
}

void xpu_npu_model_exit(struct xpu_npu_model *m, uint32_t pid, uint64_t now)
{
	if (!pid)
		return;
	for (uint32_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].pid == pid && !m->jobs[i].exited) {
			if (is_stalled(m, &m->jobs[i]))
				m->stall.job.exited = now;
			m->jobs[i].exited = now;
		}
}

void xpu_npu_jobs_expire(struct xpu_npu_model *m, uint64_t now)
{
	uint64_t tdr = (uint64_t)xpu_npu_model_tdr_ms(m, NULL) * MS;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < m->njobs; i++) {
		const struct xpu_npu_job *j = &m->jobs[i];
		if (!j->exited || now < j->exited + tdr) {
			m->jobs[kept++] = *j;
			continue;
		}
		if (is_stalled(m, j))
			xpu_npu_stall_after(m, XPU_NPU_AFTER_EXIT, now,
					    "its process exited %.1f s ago and no completion, abort or recovery came "
					    "within the TDR: the job is no longer counted", (double)(now - j->exited) / 1e9);
		m->jobs_forgotten++;
	}
	m->njobs = kept;
}

/* A BO_WAIT (ioctl or driver function) of pid: counted for the oldest
 * outstanding job when it is that job's process's (or either is not known). */
void xpu_npu_on_wait(struct xpu_npu_model *m, uint32_t pid, uint64_t now, uint64_t n)
{
	if (!m->njobs || now < m->jobs[0].submit_ns)
		return;
	if (m->wait_for != m->jobs[0].submit_ns) {
		m->wait_for = m->jobs[0].submit_ns;
		m->waits = 0;
	}
	if (pid && m->jobs[0].pid && pid != m->jobs[0].pid)
		return;
	if (!m->waits)
		m->wait_first = now;
	m->waits += (uint32_t)n;
	m->wait_last = now;
}

int xpu_npu_on_job(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n)
{
	int rc = 0;
	switch (ev->npu.code) {
	case XPU_NPU_JOB_SUBMIT:
		m->g[XPU_NPU_C_SUBMIT].open += n;
		for (uint64_t i = 0; i < n && rc == 0; i++)
			rc = job_submit(m, ev);
		return rc;
	case XPU_NPU_JOB_DONE:
		for (uint64_t i = 0; i < n && rc == 0; i++)
			rc = job_done(m, ev);
		return rc;
	case XPU_NPU_JOB_ABORT:
		job_abort(m, ev);
		return 0;
	default:
		return 0;
	}
}

void xpu_npu_snap_jobs(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w)
{
	const struct xpu_win_hist *l = &m->job_lat;
	s->submit_s = xpu_win_per_s(m->g[XPU_NPU_C_SUBMIT].last, m->ticks.tick_ns);
	s->done_s = xpu_win_per_s(m->g[XPU_NPU_C_DONE].last, m->ticks.tick_ns);
	s->submitted_total = m->g[XPU_NPU_C_SUBMIT].total;
	s->done_total = m->g[XPU_NPU_C_DONE].total;
	s->aborted_total = m->g[XPU_NPU_C_ABORTED].total;
	s->aborted_recent = m->g[XPU_NPU_C_ABORTED].recent;
	s->outstanding = m->njobs;
	s->jobs_by_order = m->jobs_by_order > 0;
	s->irq_linked = m->irq_linked;
	s->irq_unlinked = m->irq_unlinked;
	s->jobs_kept = ring_kept(m);
	s->jobs_dropped = m->ring_n - s->jobs_kept;
	s->oldest_ns = m->njobs && m->now > m->jobs[0].submit_ns ? m->now - m->jobs[0].submit_ns : 0;
	s->lat_valid = xpu_npu_lat_quantiles(l, w, &s->p50_ns, &s->p99_ns);
	s->max_ns = s->lat_valid ? xpu_win_max_get(&l->max, w, m->ticks.window) : 0;
	/* Job times are exact: a bucket's middle must not exceed the real maximum. */
	if (s->p99_ns > s->max_ns)
		s->p99_ns = s->max_ns;
	if (s->p50_ns > s->max_ns)
		s->p50_ns = s->max_ns;
}

struct xpu_npu_jobrec *xpu_npu_model_jobs(const struct xpu_npu_model *m, uint32_t *n, int *err)
{
	uint64_t kept = ring_kept(m);
	struct xpu_npu_jobrec *v;
	*n = 0;
	*err = 0;
	if (!kept && !m->njobs)
		return NULL;
	if (!(v = malloc((kept + m->njobs) * sizeof(*v)))) {
		*err = -ENOMEM;
		return NULL;
	}
	for (uint64_t i = m->ring_n - kept; i < m->ring_n; i++)
		v[(*n)++] = m->ring[i % XPU_NPU_JOB_RING];
	for (uint32_t i = 0; i < m->njobs; i++) {
		const struct xpu_npu_job *j = &m->jobs[i];
		v[(*n)++] = (struct xpu_npu_jobrec){
			.submit_ns = j->submit_ns, .end_ns = m->now > j->submit_ns ? m->now : j->submit_ns,
			.job_id = j->key, .pid = j->pid, .comm = j->comm, .queue = j->queue,
			.state = XPU_NPU_JOBREC_OUTSTANDING,
		};
	}
	return v;
}

const char *xpu_npu_irq_matching(const struct xpu_npu_snap *s)
{
	if (s->irq_linked && s->irq_unlinked)
		return "by job id; completions without one (or whose submit had no process) stay with no process";
	if (s->irq_linked)
		return "by job id";
	if (s->irq_unlinked)
		return "unavailable: the completions carry no job id (or their submits no process), so their "
		       "IRQ/IPC work stays with no process";
	return "no completions yet";
}
