/* SPDX-License-Identifier: GPL-2.0-only */
/* xputop: sources -> session (stream, recorder, models) -> snapshot ->
 * front-end (TUI, text or JSON).  main() checks the options, starts what
 * they ask for (start.c, role.c, outputs.c), runs the loop (loop.c) and
 * takes it all down in order. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "config.h"
#include "err.h"
#include "gpu_probes.h"
#include "import_bpftrace.h"
#include "metrics.h"
#include "opts.h"
#include "pprof.h"
#include "pprof_push.h"
#include "procs.h"
#include "prom_http.h"
#include "record.h"
#include "role.h"
#include "service.h"
#include "share.h"
#include "source.h"
#include "symbolize.h"
#include "sys.h"
#include "tui.h"

/* At exit, how long names still being read may hold it up. */
#define EXIT_WAIT_MS 1000

static struct app *crash_app;

/* Crash signals: give the terminal back before dying with the same signal. */
static void on_crash(int sig)
{
	if (crash_app && crash_app->tui)
		xpu_tui_emergency_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_crash_handlers(void)
{
	int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_crash);
}

/* -o (and the current directory, where --export writes without it) must take
 * files now, not after the whole run. */
static int check_outdir(const struct app *a)
{
	const char *dir = a->o.outdir ? a->o.outdir : ".";
	struct stat st;
	if (!a->o.outdir && !a->o.export_at_end)
		return 0;
	if (stat(dir, &st) < 0)
		return xpu_err("-o %s: %s", dir, strerror(errno)), -1;
	if (!S_ISDIR(st.st_mode))
		return xpu_err("-o %s: not a directory", dir), -1;
	if (access(dir, W_OK | X_OK) < 0)
		return xpu_err("-o %s: exports cannot be written there: %s", dir, strerror(errno)), -1;
	return 0;
}

/* -p: each id a process that is there (a thread's id is not one), each name
 * the processes that have it now. */
static int check_pids(struct app *a)
{
	for (uint32_t i = 0; i < a->o.npids; i++) {
		long tgid = xpu_procs_tgid(a->o.pids[i]);
		if (tgid < 0)
			return xpu_err("-p %u: no such process", a->o.pids[i]), -1;
		if (tgid != (long)a->o.pids[i])
			return xpu_err("-p %u: that is a thread of process %ld; -p %ld watches the process", a->o.pids[i],
				       tgid, tgid), -1;
	}
	for (uint32_t i = 0; i < a->o.npid_names; i++) {
		const char *name = a->o.pid_names[i];
		int room = XPU_MAX_PIDS - (int)a->o.npids;
		int n = xpu_procs_by_name(name, a->o.pids + a->o.npids, room);
		if (n == 0)
			return xpu_err("-p %s: no process of that name", name), -1;
		if (n > room)
			return xpu_err("-p %s: more than %d processes", name, XPU_MAX_PIDS), -1;
		a->o.npids += (uint32_t)n;
	}
	return 0;
}

/* --sort and -H, over what the settings file chose. */
static int apply_sort(struct app *a)
{
	char names[512];
	if (a->o.threads)
		a->vs.threads = 1;
	if (!a->o.sort)
		return 0;
	int col = xpu_config_sort_col(a->vs.view, a->o.sort, names, sizeof(names));
	if (col < 0)
		return xpu_err("--sort %s: not a column of this view (%s)", a->o.sort, names), -1;
	a->vs.sort_col[a->vs.view] = col;
	a->vs.reverse[a->vs.view] = 0;
	return 0;
}

/* What the run was asked for, checked before anything starts: a usage
 * error, whatever the front-end. */
static int check_options(struct app *a)
{
	if (a->o.theme && xpu_tui_theme_check(a->o.theme, a->o.theme == a->settings.theme) < 0)
		return -1;
	if (check_outdir(a) < 0)
		return -1;
	return a->o.replay ? 0 : check_pids(a);
}

/* -v: what each view's source is doing, once they are up. */
static void report_sources(const struct app *a)
{
	static const char *names[XPU_SRC_MAX] = { "CPU", "GPU", "NPU" };
	for (int i = 0; i < XPU_SRC_MAX; i++)
		xpu_debug("%s: %s", names[i], a->sess.status[i].text);
	xpu_debug("GPU devices: %s", a->sess.gpudev.s.status);
}

/* As time(1) and timeout(1): a run of a command that ended returns its status
 * (128 + the signal that killed it), unless xputop itself failed; one that
 * could not start, 127 if it was not found and 126 otherwise, as env(1) and
 * the shells say. */
static int exit_status(const struct app *a)
{
	if (a->o.cmd && a->child.exec_errno)
		return a->child.exec_errno == ENOENT ? 127 : 126;
	if (a->status || !a->o.cmd || !a->child.exited)
		return a->status;
	int st = a->child.status;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	static struct app app;
	struct app *a = &app;
	if (argc == 2 && strcmp(argv[1], XPU_SHARE_KEEPER_ARG) == 0)
		return xpu_share_keeper_main();	/* the collector lock's keeper (share.c) */
	xpu_share_keeper_enable();
	/* xputop is left running for days, and its large tables are freed and
	 * rebuilt when they are trimmed or swept.  glibc would raise its mmap
	 * threshold after the first such free and serve later tables from the
	 * heap, which then only grows; a fixed threshold gives them back. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	app_block_loop_signals();
	int r = xpu_opts_parse(&a->o, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (a->o.verbose)
		xpu_log_set_level(XPU_LOG_DEBUG);
	xpu_viewstate_init(&a->vs);
	xpu_settings_init(&a->settings);
	a->cli = a->o;
	if (!a->o.no_config) {
		if (xpu_config_load(&a->settings, a->o.config) < 0)
			return 1;
		xpu_config_apply(&a->settings, &a->o, &a->vs);
	}
	if (check_options(a) < 0)
		return 2;
	if (a->o.view >= 0)
		a->vs.view = a->o.view;
	if (apply_sort(a) < 0)
		return 2;
	xpu_snapshot_init(&a->snap);
	xpu_session_init(&a->sess);
	a->tui = !a->o.batch;
	a->snap.no_flames = !a->tui;	/* text and JSON show no flamegraph: a replay runs 1.5x as fast */
	a->snap.only_view = a->o.view;	/* text: --view's alone, else all */
	a->snap.hot_functions = !a->tui;

	if (a->o.replay ? app_open_replay(a) < 0 || app_start_replay(a) < 0 : app_role_start(a) < 0)
		goto fail;
	if (a->o.record && app_start_recording(a) < 0)
		goto fail;
	report_sources(a);
	if (a->o.prometheus && app_start_prometheus(a) < 0)
		goto fail;
	if (a->o.pprof_dir && app_start_pprof(a) < 0)
		goto fail;
	if (a->tui) {
		struct xpu_tui_opts to = {
			.theme = a->o.theme, .no_color = getenv("NO_COLOR") && *getenv("NO_COLOR"),
			.theme_optional = a->o.theme == a->settings.theme, .no_mouse = !a->settings.mouse,
		};
		if (xpu_tui_init(&to) < 0)
			goto fail;
		if (a->settings.warnings)	/* printed before the screen took over: say so there */
			xpu_warn("%s (%d settings file problem%s: on the terminal after q)",
				 a->settings.first_warning, a->settings.warnings,
				 a->settings.warnings > 1 ? "s" : "");
		if (a->role.share_warning[0])
			xpu_warn("%s", a->role.share_warning);
		crash_app = a;
		install_crash_handlers();
		if (a->out.prom) {
			char msg[200];
			snprintf(msg, sizeof(msg), "metrics at http://%s/metrics", xpu_prom_http_addr(a->out.prom));
			xpu_tui_status(msg);
		}
	}
	if (app_setup_loop(a) < 0 || app_run_loop(a) < 0)
		a->status = 1;
	app_role_stop(a);
	if (a->tui) {
		xpu_tui_fini();
		a->tui = 0;
	}
	/* Names still on their way go into the export and the recording. */
	if (a->svc && xpu_service_drain(a->svc, EXIT_WAIT_MS) == 0 && a->sym)
		xpu_sym_flush(a->sym);
	if (a->svc)
		xpu_service_drain(a->svc, EXIT_WAIT_MS);
	if (a->o.export_at_end && app_export_now(a) < 0)
		a->status = 1;
	if (app_finish_recording(a) < 0)
		a->status = 1;
	if (a->out.pprof && app_write_pprofs(a, NULL, 0) < 0)	/* what the last ones left */
		a->status = 1;
	xpu_push_stop(a->out.push, EXIT_WAIT_MS * 5);
	goto out;
fail:
	a->status = 1;
out:
	if (a->tui)
		xpu_tui_fini();
	xpu_prom_http_stop(a->out.prom);
	xpu_metrics_free(a->out.metrics);
	xpu_pprof_free(a->out.pprof);
	xpu_mbuf_free(&a->out.mtext);
	xpu_mbuf_free(&a->out.mom);
	/* Its last jobs' done() touch the sources and the dictionary. */
	xpu_service_free(a->svc, 0);
	if (a->svc)	/* live: probes to detach */
		xpu_sys_detach_in_background();
	xpu_source_destroy(a->pre.cpu);
	xpu_source_destroy(a->pre.npu);
	xpu_gpu_probes_free(a->pre.gpu);
	xpu_session_free(&a->sess);
	xpu_pidset_free(&a->watch);
	if (a->replay)
		xpu_rec_close_reader(a->replay);
	xpu_import_free(a->import);
	xpu_share_client_free(a->role.client);
	xpu_sym_free(a->sym);
	xpu_snapshot_free(&a->snap);
	return exit_status(a);
}
