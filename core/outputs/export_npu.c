/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU view's export (`s`): the driver function counts since the start as
 * folded stacks, process;Level Zero call;ioctl;function (flamegraph.pl reads
 * them), and the alert log as JSON lines. */
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

/* Calls inside a known context are their chain's; the rest of a function's
 * calls hang under "[no process]". */
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
		uint64_t n = m->fns[i].calls.total;
		for (uint32_t k = 0; k < m->nchains; k++)
			if (m->chains[k].fn == i)
				n -= m->chains[k].calls.total < n ? m->chains[k].calls.total : n;
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

int xpu_export_npu(struct xpu_session *sess, const struct xpu_snapshot *snap, const char *dir, char *msg,
		   size_t size)
{
	char funcs[4200], alerts[4200];
	struct xpu_outfile o;
	if (xpu_outfile_open(&o, dir) < 0)
		return -1;
	long lines = write_stacks(o.f, &sess->npu, &sess->dict);
	if (commit(&o, "npu-functions", "folded", funcs, sizeof(funcs)) < 0)
		return -1;
	if (xpu_outfile_open(&o, dir) < 0)
		return -1;
	write_alerts(o.f, snap);
	if (commit(&o, "npu-alerts", "jsonl", alerts, sizeof(alerts)) < 0)
		return -1;
	snprintf(msg, size, "exported %ld function stacks to %s and %u alerts to %s", lines, funcs,
		 snap->nalerts, alerts);
	return 2;
}
