/* SPDX-License-Identifier: GPL-2.0-only */
/* Where the program's data goes: each refresh to the front-end (the TUI,
 * text or JSON), the Prometheus metrics and the pprof profiles (and their
 * push), exports (s, --export) and the recording (-w); and whether the run
 * ends with a refresh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "app.h"
#include "batch.h"
#include "err.h"
#include "export.h"
#include "health.h"
#include "metrics.h"
#include "outfile.h"
#include "pprof.h"
#include "pprof_push.h"
#include "prom_http.h"
#include "record.h"
#include "service.h"
#include "symbolize.h"
#include "sys.h"
#include "tui.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The metrics of this refresh go to the server, which answers scrapes with
 * them until the next refresh. */
static void publish_metrics(struct app *a)
{
	uint64_t t0 = thread_cpu_ns();
	struct xpu_metrics_extra x = { .metrics_ns = a->out.metrics_ns, .pprof_ns = a->out.pprof_ns };
	struct xpu_prom_counts pc;
	char health[4 * 700];
	xpu_prom_http_counts(a->out.prom, &pc);
	x.scrapes = pc.scrapes;
	x.refused = pc.refused;
	x.cut_deadline = pc.cut_deadline;
	x.cut_evicted = pc.cut_evicted;
	int failed = xpu_health_text(&a->sess, health, sizeof(health));
	if (xpu_prom_http_health(a->out.prom, health, failed, a->sess.cfg.interval_ns) < 0 &&
	    !a->out.metrics_failed++)
		xpu_err("out of memory while writing /healthz");
	a->out.mtext.n = a->out.mom.n = 0;
	a->out.mtext.oom = a->out.mom.oom = 0;
	if (xpu_metrics_update(a->out.metrics, &a->sess, &x) < 0 ||
	    xpu_metrics_write(a->out.metrics, 0, &a->out.mtext) < 0 ||
	    xpu_metrics_write(a->out.metrics, 1, &a->out.mom) < 0 ||
	    xpu_prom_http_publish(a->out.prom, a->out.mtext.p, a->out.mtext.n, a->out.mom.p, a->out.mom.n) < 0) {
		if (!a->out.metrics_failed++)
			xpu_err("out of memory while writing the metrics: scrapes get the last ones written");
	}
	a->out.metrics_ns += thread_cpu_ns() - t0;
}

/* One profile of a kind into the --pprof directory (and to the server). */
static int write_pprof(struct app *a, enum xpu_pprof_kind kind, char *path, size_t size)
{
	uint8_t *data;
	size_t len;
	uint64_t samples, wall = a->sess.last_tick_wall ? a->sess.last_tick_wall : xpu_now_wall();
	uint64_t from = xpu_pprof_since(a->out.pprof, kind);
	char stem[96];
	struct xpu_outfile out;
	path[0] = '\0';
	if (xpu_pprof_encode(a->out.pprof, &a->sess, a->sym, kind, wall, &data, &len, &samples) < 0) {
		xpu_err("out of memory while encoding the %s profile", xpu_pprof_kind_name(kind));
		return -1;
	}
	if (!samples) {	/* nothing new: no file (a profiler gains nothing from it) */
		free(data);
		return 0;
	}
	int rc = xpu_outfile_open(&out, a->o.pprof_dir);
	if (rc == 0 && (fwrite(data, 1, len, out.f) != len || fflush(out.f) != 0)) {
		xpu_err("cannot write a profile in %s: %s", out.dir, strerror(errno ? errno : EIO));
		xpu_outfile_abort(&out);
		rc = -1;
	}
	xpu_outfile_stem(stem, sizeof(stem), xpu_pprof_kind_name(kind));
	if (rc == 0)
		rc = xpu_outfile_commit(&out, stem, "pb.gz", path, size);
	if (a->out.push) {
		char app[32];
		snprintf(app, sizeof(app), "xputop.%s", xpu_pprof_kind_name(kind));
		xpu_push_profile(a->out.push, app, from ? from : wall - a->sess.cpu.ticks.total_ns, wall,
				 kind == XPU_PPROF_CPU ? a->sess.cfg.sample_hz : 0, data, len);
	}
	free(data);
	return rc;
}

/* The CPU and GPU profiles since the last ones; msg says where they went. */
int app_write_pprofs(struct app *a, char *msg, size_t size)
{
	char cpu[4200], gpu[4200];
	uint64_t t0 = thread_cpu_ns();
	int rc = write_pprof(a, XPU_PPROF_CPU, cpu, sizeof(cpu));
	if (rc == 0)
		rc = write_pprof(a, XPU_PPROF_GPU, gpu, sizeof(gpu));
	a->out.pprof_ns += thread_cpu_ns() - t0;
	a->out.pprof_at = a->sess.last_tick_mono;
	if (rc == 0 && msg)
		snprintf(msg, size, "pprof profiles: %s%s%s", cpu[0] ? cpu : "", cpu[0] && gpu[0] ? " and " : "",
			 cpu[0] || gpu[0] ? gpu : "nothing new since the last ones");
	if (a->out.push) {
		struct xpu_push_stats st;
		xpu_push_stats(a->out.push, &st);
		if (st.failed > a->out.push_failed)
			xpu_warn("--pprof-push: %llu profiles not sent; the last: %s",
				 (unsigned long long)st.failed, st.last_error);
		a->out.push_failed = st.failed;
	}
	return rc;
}

static void pprof_due(struct app *a)
{
	if (!a->out.pprof)
		return;
	if (!a->out.pprof_at)	/* the first refresh starts the first period (a replay's clock is its own) */
		a->out.pprof_at = a->sess.last_tick_mono;
	else if (a->sess.last_tick_mono - a->out.pprof_at >= (uint64_t)(a->o.pprof_interval_s * 1e9))
		app_write_pprofs(a, NULL, 0);
}

void app_show(struct app *a)
{
	a->snap.watched_only = a->o.npids > 0;	/* -p, or -- CMD's processes */
	a->snap.replay_ticks = a->replay_ticks;
	if (xpu_snapshot_build(&a->snap, &a->sess, &a->vs) < 0)
		xpu_err("out of memory while building the display");
	xpu_viewstate_settle(&a->vs, &a->snap);
	if (a->out.prom)
		publish_metrics(a);
	pprof_due(a);
	if (a->tui) {
		xpu_tui_draw(&a->snap, &a->vs);
	} else if (a->o.json) {
		if (a->sym) {	/* the symbolizer's caches and work, for JSON */
			a->snap.have_sym = 1;
			xpu_sym_stats(a->sym, &a->snap.sym);
			xpu_service_stats(a->svc, &a->snap.svc);
		}
		xpu_batch_json(stdout, &a->snap, &a->sess, &a->vs);
	} else {
		xpu_batch_text(stdout, &a->snap);
	}
}

/* Returns 0, or -1 when the export failed (the reason was reported). */
int app_export_now(struct app *a)
{
	char msg[14000];
	if (xpu_export_view(&a->sess, &a->snap, &a->vs, a->o.outdir, msg, sizeof(msg)) < 0)
		return -1;
	if (a->out.pprof && a->tui) {	/* s: the profiles too, on the status line after the export's */
		char pmsg[9000];
		if (app_write_pprofs(a, pmsg, sizeof(pmsg)) == 0)
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s", pmsg);
	}
	if (a->tui)
		xpu_tui_status(msg);
	else
		fprintf(stderr, "xputop: %s\n", msg);
	return 0;
}

void app_after_refresh(struct app *a)
{
	a->refreshes++;
	if (a->o.iterations && a->refreshes >= a->o.iterations)
		a->quit = 1;
	/* In batch mode a command's end ends the run, once it has been shown. */
	if (a->child_done && !a->tui)
		a->quit = 1;
	/* A batch run that records is for the recording: it ends with it. */
	if (a->sess.rec_failed && !a->tui)
		a->quit = 1;
}

void app_session_meta(const struct app *a, struct xpu_rec_meta *m)
{
	struct utsname u;
	memset(m, 0, sizeof(*m));
	m->sample_hz = a->sess.stream_hz ? a->sess.stream_hz : a->sess.cfg.sample_hz;
	m->ncpus = a->sess.ncpus;
	m->start_wall_ns = xpu_now_wall();
	m->interval_ns = a->role.stream_ns ? a->role.stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	memcpy(m->host, a->sess.host, sizeof(m->host) - 1);
	if (uname(&u) == 0)
		memcpy(m->kernel, u.release, sizeof(m->kernel) - 1);
	snprintf(m->version, sizeof(m->version), "%s", XPU_VERSION);
}

int app_start_prometheus(struct app *a)
{
	char err[400];
	a->out.metrics = xpu_metrics_new(a->o.prometheus_top);
	if (!a->out.metrics) {
		xpu_err("cannot start the metrics: out of memory");
		return -1;
	}
	xpu_metrics_set_processes(a->out.metrics, a->o.prometheus_label, a->o.prometheus_expiry_s,
				  a->o.prometheus_processes);
	a->out.prom = xpu_prom_http_start(a->o.prometheus, err, sizeof(err));
	if (!a->out.prom) {
		xpu_err("--prometheus: %s", err);
		return -1;
	}
	if (!a->tui)
		fprintf(stderr, "xputop: metrics at http://%s/metrics\n", xpu_prom_http_addr(a->out.prom));
	return 0;
}

/* The --pprof directory, made (0750) where it is missing: the unit's
 * StateDirectory holds it, but the directory itself is the user's choice. */
static int pprof_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0 && errno == ENOENT) {
		if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
			xpu_err("--pprof: cannot create %s: %s%s", dir, strerror(errno),
				errno == ENOENT ? " (its parent directory is missing)" : "");
			return -1;
		}
		chmod(dir, 0750);	/* whatever the umask */
	}
	if (stat(dir, &st) < 0) {
		xpu_err("--pprof: %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		xpu_err("--pprof: %s is not a directory", dir);
		return -1;
	}
	return 0;
}

int app_start_pprof(struct app *a)
{
	char err[400];
	if (pprof_dir(a->o.pprof_dir) < 0)
		return -1;
	/* a profile may come a refresh late: then its changes must still be in the window */
	a->out.pprof = xpu_pprof_new(a->o.pprof_interval_s + a->o.delay_s <= a->o.window_s);
	if (!a->out.pprof) {
		xpu_err("cannot start the profiles: out of memory");
		return -1;
	}
	if (!a->o.pprof_push)
		return 0;
	char *headers = NULL;
	if (a->o.pprof_push_headers &&
	    xpu_push_read_headers(a->o.pprof_push_headers, &headers, err, sizeof(err)) < 0) {
		xpu_err("--pprof-headers: %s", err);
		return -1;
	}
	a->out.push = xpu_push_start(a->o.pprof_push, a->sess.host, headers, err, sizeof(err));
	if (headers)
		explicit_bzero(headers, strlen(headers));
	free(headers);
	if (!a->out.push) {
		xpu_err("--pprof-push: %s", err);
		return -1;
	}
	return 0;
}

int app_start_recording(struct app *a)
{
	struct xpu_rec_meta m;
	char err[512];
	app_session_meta(a, &m);
	a->sess.rec = xpu_rec_create_from(a->o.record, a->o.replay, &a->sess.dict, &m, err, sizeof(err));
	if (!a->sess.rec) {
		xpu_err("%s", err);	/* names the file already */
		return -1;
	}
	return 0;
}

/* The recording's last block goes out now: a recording that stopped early
 * (a full disk) or could not be completed fails the run. */
int app_finish_recording(struct app *a)
{
	if (!a->sess.rec)
		return 0;
	int failed = a->sess.rec_failed;
	int rc = xpu_rec_close(a->sess.rec);
	a->sess.rec = NULL;
	if (rc < 0 && !failed)
		xpu_err("%s: the recording could not be completed: %s", a->o.record, strerror(-rc));
	if (rc < 0 || failed) {
		xpu_err("%s: the recording is incomplete; a replay shows what it holds up to where it "
			"stopped", a->o.record);
		return -1;
	}
	return 0;
}
