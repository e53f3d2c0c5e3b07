/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's export (`s`): the driver function counts since the start as
 * folded stacks, process;Level Zero call;ioctl;function (flamegraph.pl reads
 * them), the recent jobs as a Chrome trace (npu_trace.c) and the alert log
 * as JSON lines. */
#include "export_npu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "batch_alerts.h"
#include "dict.h"
#include "err.h"
#include "json.h"
#include "model_npu.h"
#include "npu_trace.h"
#include "outfile.h"
#include "session.h"
#include "snapshot.h"

/* A frame as the folded format wants it: ';' would split it. */
static void frame(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, f);
}

static const char *api_frame(uint32_t api, char *buf, size_t size)
{
	const char *n = xpu_npu_l0_name(api);
	if (!api)
		return "[no Level Zero call]";
	if (n)
		return n;
	snprintf(buf, size, "Level Zero API %u", api);
	return buf;
}

static const char *ioctl_frame(uint32_t cmd, char *buf, size_t size)
{
	const char *n = xpu_npu_ioctl_name(cmd);
	if (!cmd)
		return "[no ioctl]";
	if (n)
		return n;
	snprintf(buf, size, "ioctl 0x%04x", cmd);
	return buf;
}

/* The ivpu_job_done_callback calls that delivered each process's jobs'
 * completions (its irq row), out of the n no chain holds; returns the rest. */
static uint64_t write_irq(FILE *f, const struct xpu_npu_model *m, const struct xpu_dict *d, uint64_t n,
			  long *lines)
{
	for (uint32_t i = 0; i < m->ncalls && n; i++) {
		const struct xpu_npu_call *c = &m->calls[i];
		uint64_t k = xpu_npu_irq_take(m, i, &n);
		if (!k)
			continue;
		frame(f, c->comm ? xpu_dict_str_get(d, c->comm) : "?");
		fprintf(f, "-%u;[" XPU_NPU_IRQ_FRAME "];[no ioctl];", c->pid);
		frame(f, xpu_dict_str_get(d, m->fns[m->fn_job_done - 1].name));
		fprintf(f, " %" PRIu64 "\n", k);
		(*lines)++;
	}
	return n;
}

/* Calls inside a known context are their chain's; the completions of a
 * process's jobs are its own; the rest of a function's calls hang under
 * "[no process]". */
static long write_stacks(FILE *f, const struct xpu_npu_model *m, const struct xpu_dict *d)
{
	long lines = 0;
	char a[48], b[48];
	for (uint32_t i = 0; i < m->nchains; i++) {
		const struct xpu_npu_chain *c = &m->chains[i];
		if (!c->calls.total)
			continue;
		const char *comm = c->comm ? xpu_dict_str_get(d, c->comm) : "?";
		frame(f, comm);
		fprintf(f, "-%u;", c->pid);
		frame(f, api_frame(XPU_NPU_FN_API(c->ctx), a, sizeof(a)));
		fputc(';', f);
		frame(f, ioctl_frame(XPU_NPU_FN_CMD(c->ctx), b, sizeof(b)));
		fputc(';', f);
		frame(f, xpu_dict_str_get(d, m->fns[c->fn].name));
		fprintf(f, " %" PRIu64 "\n", c->calls.total);
		lines++;
	}
	for (uint32_t i = 0; i < m->nfns; i++) {
		uint64_t n = xpu_npu_fn_unchained(m, i);
		if (i + 1 == m->fn_job_done)
			n = write_irq(f, m, d, n, &lines);
		if (!n)
			continue;
		fputs("[no process];[no Level Zero call];[no ioctl];", f);
		frame(f, xpu_dict_str_get(d, m->fns[i].name));
		fprintf(f, " %" PRIu64 "\n", n);
		lines++;
	}
	return lines;
}

static void write_alerts(FILE *f, const struct xpu_snapshot *s)
{
	for (uint32_t i = 0; i < s->nalerts; i++) {
		struct xpu_json j;
		xpu_json_init(&j, f);
		xpu_batch_alert_json(&j, s, i);
		fputc('\n', f);
	}
}

static int commit(struct xpu_outfile *o, const char *what, const char *ext, char *path, size_t size)
{
	char stem[96];
	if (fflush(o->f) != 0 || ferror(o->f)) {
		xpu_err("cannot write the NPU %s export in %s: %s", what, o->dir, strerror(errno ? errno : EIO));
		xpu_outfile_abort(o);
		return -1;
	}
	xpu_outfile_stem(stem, sizeof(stem), what);
	return xpu_outfile_commit(o, stem, ext, path, size);
}

/* Function calls the folded file would hold. */
static int any_calls(const struct xpu_npu_model *m)
{
	for (uint32_t i = 0; i < m->nfns; i++)
		if (m->fns[i].calls.total)
			return 1;
	return 0;
}

static int export_jobs(struct xpu_session *sess, const struct xpu_snapshot *snap, const char *dir, char *path,
		       size_t size, long *n)
{
	struct xpu_outfile o;
	char stem[96];
	if (xpu_outfile_open(&o, dir) < 0)
		return -1;
	*n = xpu_npu_trace_write(o.f, &sess->npu, &sess->dict, snap);
	if (*n <= 0) {
		if (*n < 0)
			xpu_err("cannot write the NPU jobs trace in %s: %s", o.dir, strerror(errno ? errno : EIO));
		xpu_outfile_abort(&o);
		return *n < 0 ? -1 : 0;
	}
	xpu_outfile_stem(stem, sizeof(stem), "npu-jobs");
	return xpu_outfile_commit(&o, stem, "trace.json", path, size) < 0 ? -1 : 1;
}

/* What was written, what was not for want of anything to hold, then the
 * paths: the status line cuts a long message, and the paths are the longest. */
static void describe(char *msg, size_t size, const char *funcs, long lines, const char *jobs, long njobs,
		     uint64_t dropped, const char *alerts, uint32_t nalerts)
{
	const char *sep = " ";
	size_t at = 0;
#define SAY(...) (at < size ? at += (size_t)snprintf(msg + at, size - at, __VA_ARGS__) : at)
	SAY("exported");
	if (funcs) {
		SAY("%s%ld function stacks", sep, lines);
		sep = ", ";
	}
	if (jobs) {
		SAY("%s%ld job%s", sep, njobs, njobs == 1 ? "" : "s");
		if (dropped)
			SAY(" (%" PRIu64 " older dropped from the ring of %u)", dropped, XPU_NPU_JOB_RING);
		sep = ", ";
	}
	if (alerts)
		SAY("%s%u alert%s", sep, nalerts, nalerts == 1 ? "" : "s");
	sep = " (";
	if (!funcs) {
		SAY("%sno driver function calls to export", sep);
		sep = ", ";
	}
	if (!jobs) {
		SAY("%sno jobs to export", sep);
		sep = ", ";
	}
	if (!alerts) {
		SAY("%sno alerts to export", sep);
		sep = ", ";
	}
	SAY("%s:", sep[0] == ',' ? ")" : "");
	if (funcs)
		SAY(" %s", funcs);
	if (jobs)
		SAY(" %s", jobs);
	if (alerts)
		SAY(" %s", alerts);
#undef SAY
}

/* Each file only where it has something to hold: no empty files. */
int xpu_export_npu(struct xpu_session *sess, const struct xpu_snapshot *snap, const char *dir, char *msg,
		   size_t size)
{
	char funcs[4200], jobs[4200], alerts[4200];
	const struct xpu_npu_snap *n = &snap->npu.model;
	struct xpu_outfile o;
	long lines = 0, njobs = 0;
	int files = 0, calls = any_calls(&sess->npu), anyjobs = sess->npu.ring_n > 0 || sess->npu.njobs > 0;
	if (!calls && !anyjobs && !snap->nalerts) {
		snprintf(msg, size, "nothing to export: the NPU view has no driver function calls, no jobs and no "
			 "alerts (its source line says why)");
		return 0;
	}
	if (calls) {
		if (xpu_outfile_open(&o, dir) < 0)
			return -1;
		lines = write_stacks(o.f, &sess->npu, &sess->dict);
		if (commit(&o, "npu-functions", "folded", funcs, sizeof(funcs)) < 0)
			return -1;
		files++;
	}
	if (anyjobs) {
		int rc = export_jobs(sess, snap, dir, jobs, sizeof(jobs), &njobs);
		if (rc < 0)
			return -1;
		anyjobs = rc;
		files += rc;
	}
	if (snap->nalerts) {
		if (xpu_outfile_open(&o, dir) < 0)
			return -1;
		write_alerts(o.f, snap);
		if (commit(&o, "npu-alerts", "jsonl", alerts, sizeof(alerts)) < 0)
			return -1;
		files++;
	}
	describe(msg, size, calls ? funcs : NULL, lines, anyjobs ? jobs : NULL, njobs, n->jobs_dropped,
		 snap->nalerts ? alerts : NULL, snap->nalerts);
	return files;
}
