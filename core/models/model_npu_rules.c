/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model's alert rules (model_npu.h): a call-rate storm against the
 * learned baseline, IPC silence, and jobs stalled past the TDR (and which
 * TDR that is).  Run by xpu_npu_model_tick() once the tick's buckets are
 * closed. */
#include <stdio.h>
#include <string.h>

#include "alerts.h"
#include "model_npu.h"
#include "model_npu_int.h"

/* The driver re-checks a long job's heartbeat at the TDR: while that query
 * is in flight (at most the IPC timeout) the job is not called stalled. */
#define HB_WAIT_NS (500 * MS)
#define EWMA_ALPHA 0.2
#define STORM_CALM_TICKS 2

void xpu_npu_fmt_dur(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, size, "%.1f s", (double)ns / 1e9);
	else if (ns >= MS)
		snprintf(buf, size, "%.0f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.0f us", (double)ns / 1e3);
}

/* WARN: the message rate is a multiple of what was learned over ticks of
 * work: jobs submitted or completed, or messages while a job is
 * outstanding (one long job is a steady stretch too).  A burst of work
 * after quiet is not a departure, since quiet ticks teach nothing: neither
 * ticks without jobs (a heartbeat trickle) nor silent ticks of a job
 * (normal in hardware-scheduler mode). */
void xpu_npu_rule_rate(struct xpu_npu_model *m, uint64_t now, uint64_t interval_ns)
{
	uint64_t msgs = m->g[XPU_NPU_C_TX].last + m->g[XPU_NPU_C_RX].last;
	double rate = interval_ns ? (double)msgs * 1e9 / (double)interval_ns : 0;
	int armed = m->learned_ticks >= m->cfg.learn_ticks;
	int high = armed && rate >= m->cfg.storm_min && rate >= m->cfg.storm_factor * m->baseline;
	int jobs = m->g[XPU_NPU_C_SUBMIT].last + m->g[XPU_NPU_C_DONE].last > 0 || (m->njobs && msgs);

	if (high) {
		m->storm_calm = 0;
		if (!m->storm)
			xpu_alert_raise(m->alerts, XPU_ALERT_WARN, "npu", "npu.ipc_rate", 0, now, 0,
					"firmware IPC at %.0f msgs/s, %.0fx the learned %.0f/s",
					rate, rate / m->baseline, m->baseline);
		m->storm = 1;
		return;
	}
	if (m->storm && ++m->storm_calm >= STORM_CALM_TICKS) {
		xpu_alert_clear(m->alerts, "npu", "npu.ipc_rate", 0, now);
		m->storm = 0;
	}
	if (jobs && !m->storm) {
		m->baseline = m->learned_ticks ? m->baseline * (1 - EWMA_ALPHA) + rate * EWMA_ALPHA : rate;
		m->learned_ticks++;
	}
}

/* WARN: no message at all, for much longer than jobs usually take, while
 * jobs are outstanding. */
void xpu_npu_rule_silence(struct xpu_npu_model *m, uint64_t now)
{
	int on = 0;
	uint64_t thr = 0, since = 0, p50 = 0, p99 = 0;

	if (m->njobs && m->job_lat.n_all >= m->cfg.learn_jobs &&
	    xpu_npu_lat_quantiles(&m->job_lat, XPU_WIN_ALL, &p50, &p99)) {
		thr = (uint64_t)m->cfg.silence_ms * MS;
		if (4 * p99 > thr)
			thr = 4 * p99;
		since = m->last_msg > m->jobs[0].submit_ns ? m->last_msg : m->jobs[0].submit_ns;
		on = now >= since + thr;
	}
	if (!on) {
		xpu_alert_clear(m->alerts, "npu", "npu.ipc_silent", 0, now);
		return;
	}
	if (!xpu_alert_find(m->alerts, "npu", "npu.ipc_silent", 0)) {
		char quiet[32], usual[32];
		xpu_npu_fmt_dur(quiet, sizeof(quiet), now - since);
		xpu_npu_fmt_dur(usual, sizeof(usual), p99);
		xpu_alert_raise(m->alerts, XPU_ALERT_WARN, "npu", "npu.ipc_silent", 0, now, 0,
				"no firmware IPC for %s while %u job%s outstanding (jobs take %s at p99)",
				quiet, m->njobs, m->njobs == 1 ? " is" : "s are", usual);
	}
}

uint32_t xpu_npu_model_tdr_ms(const struct xpu_npu_model *m, const char **origin)
{
	const char *o = "default";
	uint32_t v = XPU_NPU_DEFAULT_TDR_MS;
	if (m->cfg.tdr_ms) {
		o = "--npu-tdr";
		v = m->cfg.tdr_ms;
	} else if (m->tdr_ms_driver) {
		o = "driver";
		v = m->tdr_ms_driver;
	}
	if (origin)
		*origin = o;
	return v;
}

/* The stall's line: the job, its age now, the TDR; rewritten at each tick
 * so the age keeps counting. */
static void stall_msg(struct xpu_alert *a, const struct xpu_npu_model *m, uint64_t now, uint64_t tdr)
{
	const struct xpu_npu_job *j = &m->stall.job;
	char age[32], id[32] = "", pid[32] = "";
	xpu_npu_fmt_dur(age, sizeof(age), now - j->submit_ns);
	if (j->key)
		snprintf(id, sizeof(id), " %llu", (unsigned long long)j->key);
	if (j->pid)
		snprintf(pid, sizeof(pid), " of pid %u%s", j->pid, j->exited ? " (exited)" : "");
	snprintf(a->msg, sizeof(a->msg), "job%s on queue %u%s outstanding for %s, past the %u ms TDR: "
		 "no completion, no heartbeat or IPC progress", id, j->queue, pid, age, (unsigned)(tdr / MS));
}

/* What came after, in the alert's line (the card has it whole). */
static const char *after_short(uint32_t after)
{
	switch (after) {
	case XPU_NPU_AFTER_DONE: return "the job completed late";
	case XPU_NPU_AFTER_ABORT: return "the driver aborted the job";
	case XPU_NPU_AFTER_RECOVERY: return "the driver recovered the NPU";
	case XPU_NPU_AFTER_EXIT: return "its process exited";
	default: return "progress again";
	}
}

/* The alert's line once it clears: its age at the clear and what came
 * after, or that progress did. */
static void stall_cleared(struct xpu_npu_model *m, uint64_t now, uint64_t tdr)
{
	struct xpu_alert *a = xpu_alert_find(m->alerts, "npu", "npu.stall", 0);
	if (!a)
		return;
	xpu_npu_stall_after(m, XPU_NPU_AFTER_PROGRESS, now,
			    "progress again: firmware IPC, a heartbeat or a completion came");
	m->stall.cleared = m->stall.after_ns ? m->stall.after_ns : now;
	stall_msg(a, m, m->stall.cleared, tdr);
	size_t n = strlen(a->msg);
	snprintf(a->msg + n, sizeof(a->msg) - n, "; then %s", after_short(m->stall.after));
	xpu_alert_clear(m->alerts, "npu", "npu.stall", 0, now);
}

/* STALL: as the driver's TDR sees it. */
void xpu_npu_rule_stall(struct xpu_npu_model *m, uint64_t now)
{
	const char *origin;
	uint64_t tdr = (uint64_t)xpu_npu_model_tdr_ms(m, &origin) * MS;
	int asking = m->hb_asked && now - m->hb_asked < HB_WAIT_NS;
	/* Past the TDR, not at it: the driver checks the heartbeat at each TDR. */
	uint64_t ipc = m->last_msg > m->last_ipc_fn ? m->last_msg : m->last_ipc_fn;
	int on = m->njobs && !asking && now > m->jobs[0].submit_ns + tdr &&
		 now - m->last_done > tdr && now - m->last_hb_progress > tdr && now - ipc > tdr;
	struct xpu_alert *a = xpu_alert_find(m->alerts, "npu", "npu.stall", 0);

	if (!on) {
		stall_cleared(m, now, tdr);
		return;
	}
	if (!a) {
		struct xpu_npu_stall *st = &m->stall;
		*st = (struct xpu_npu_stall){
			.job = m->jobs[0], .raised = now, .last_ipc = ipc, .last_hb = m->last_hb_progress,
			.tdr_ms = (uint32_t)(tdr / MS), .tdr_origin = origin,
		};
		if (m->wait_for == m->jobs[0].submit_ns) {
			st->waits = m->waits;
			st->wait_first = m->wait_first;
			st->wait_last = m->wait_last;
		}
		a = xpu_alert_raise(m->alerts, XPU_ALERT_STALL, "npu", "npu.stall", 0, now, 0, "job stalled");
	} else if (m->wait_for == m->stall.job.submit_ns) {
		m->stall.waits = m->waits;
		m->stall.wait_first = m->wait_first;
		m->stall.wait_last = m->wait_last;
	}
	if (a)
		stall_msg(a, m, now, tdr);
}

/* WARN: more page table entries written than the buffers created need, the
 * seed's "excessive page mapping per MiB allocated": a 4 KiB entry per page
 * is 256 per MiB, once per buffer; far more means buffers are mapped again
 * and again.  Since the start (a buffer is mapped at its first submit, not
 * at its creation), once 8 MiB were mapped, and only where the buffers'
 * sizes are known (not from a log of function names). */
#define PAGES_PER_MIB 256
#define MAP_MIN_PAGES (8 * PAGES_PER_MIB)
void xpu_npu_rule_map_pages(struct xpu_npu_model *m, uint64_t now)
{
	if (!m->bo_bytes || m->map_pages < MAP_MIN_PAGES)
		return;
	double per_mib = (double)m->map_pages * (1 << 20) / (double)m->bo_bytes;
	if (!m->map_storm && per_mib > 2 * PAGES_PER_MIB) {
		xpu_alert_raise(m->alerts, XPU_ALERT_WARN, "npu", "npu.map_pages", 0, now, 0,
				"%.0f page table entries written per MiB of buffers created, %.1fx the %u of 4 KiB "
				"pages: buffers mapped again and again", per_mib, per_mib / PAGES_PER_MIB, PAGES_PER_MIB);
		m->map_storm = 1;
	} else if (m->map_storm && per_mib < 1.5 * PAGES_PER_MIB) {
		xpu_alert_clear(m->alerts, "npu", "npu.map_pages", 0, now);
		m->map_storm = 0;
	}
}
