/* SPDX-License-Identifier: GPL-2.0-only */
/* xputop's main loop: sources -> session (stream, recorder, models) ->
 * snapshot -> front-end (TUI, text or JSON), driven by one epoll set holding
 * the sources' descriptors, a refresh timer, signals and the terminal. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "child.h"
#include "config.h"
#include "health.h"
#include "err.h"
#include "export.h"
#include "gpu_probes.h"
#include "import_bpftrace.h"
#include "inject_lib.h"
#include "metrics.h"
#include "opts.h"
#include "procs.h"
#include "outfile.h"
#include "pprof.h"
#include "pprof_push.h"
#include "prom_http.h"
#include "record.h"
#include "service.h"
#include "session.h"
#include "share.h"
#include "snapshot.h"
#include "source.h"
#include "source_cpu.h"
#include "source_gpu.h"
#include "source_npu.h"
#include "source_nvml.h"
#include "symbolize.h"
#include "sys.h"
#include "tui.h"

enum { TAG_TIMER = -1, TAG_SIGNAL = -2, TAG_TTY = -3, TAG_SERVICE = -4, TAG_SHARE = -5 };
/* Jobs waiting for the service thread at most (service.h). */
#define EXACT_KEY_S 60	/* how long e turns exact tracing on, unless --gpu-exact=SECS */
#define SERVICE_QUEUE 4096
/* At exit, how long names still being read may hold it up. */
#define EXIT_WAIT_MS 1000
/* How long a starting xputop waits for a collector that holds the lock to
 * serve, and for its hello once connected. */
#define SHARE_WAIT_MS 5000
/* How often an xputop left without a collector tries again. */
#define SHARE_RETRY_NS 20000000ULL

struct app {
	struct xpu_opts o;
	struct xpu_session sess;
	struct xpu_snapshot snap;
	struct xpu_viewstate vs;
	struct xpu_symbolizer *sym;
	struct xpu_service *svc;	/* slow work off the ingest path (live only) */
	struct xpu_rec_reader *replay;
	struct xpu_import *import;	/* -r of a bpftrace log instead of a recording */
	int epfd, timerfd, sigfd;
	int timer_set;		/* the loop's timer exists (setup_loop()) */
	int tui;
	long refreshes;
	int quit;
	int status;		/* exit status */
	struct xpu_child child;	/* -- CMD */
	int child_done;		/* batch mode ends after the refresh that shows its end */
	struct xpu_settings settings;	/* what the settings file said; S saves */
	struct xpu_opts cli;		/* the command line alone: SIGHUP applies the file over it again */
	struct xpu_prom_http *prom;	/* --prometheus */
	struct xpu_metrics *metrics;
	struct xpu_mbuf mtext, mom;	/* the last metrics, both formats */
	int metrics_failed;		/* said once */
	struct xpu_pprof *pprof;	/* --pprof */
	struct xpu_push *push;		/* --pprof-push */
	uint64_t pprof_at;		/* stream time (CLOCK_MONOTONIC) of the last profiles */
	uint64_t push_failed;		/* failures said so far */
	uint64_t metrics_ns, pprof_ns;	/* the main loop's CPU time in each exporter */
	/* Several xputops at once (core/sources/share.h): a client reads the
	 * collector's stream; a collector (own probes) serves it. */
	struct xpu_share_client *client;
	pid_t collector;		/* the pid a client reads from, or last read from */
	struct xpu_source *server;
	struct xpu_source *gpu;		/* this xputop's GPU source, closed before the lock goes */
	int collecting;			/* the probes are this xputop's own */
	int locked;			/* holds the collector lock: nobody else may serve the GPU socket */
	int first_new_source;		/* sources from here on are not polled yet */
	/* A client's own probes, loaded but not attached, for a takeover
	 * (share_preload()); NULL once used or where they did not load. */
	struct {
		struct xpu_source *cpu, *npu;
		struct xpu_gpu_probes *gpu;
	} pre;
	struct xpu_pidset watch;	/* -p, where the session filters (watch_pids()) */
	/* What this xputop needs collected (core/sources/share.h): its -p and
	 * -F, and exact GPU tracing while it asks for it (--gpu-exact, e). */
	struct {
		int exact;
		uint64_t until;		/* CLOCK_MONOTONIC ns, 0: until switched back */
	} gpu_want;
	/* A collector's union of its needs and its clients': the processes
	 * its GPU source serves (collect_ps) and what it last applied. */
	struct xpu_source *cpu;
	struct xpu_pidset collect_ps;
	int collect_ps_set;
	uint64_t needs_gen;
	uint64_t stream_ns;		/* the collector's timer: the shortest -d of all (0: its own) */
	struct xpu_share_need applied;
	int needs_applied;
	char share_warning[300];	/* said again once the screen is up */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct app *crash_app;

static void share_describe(struct app *a);
static void share_needs(struct app *a, int force);
static void share_tell_needs(struct app *a);
static int share_serving(struct app *a);
static void share_retry(struct app *a);
static void share_input(struct app *a);

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

static int epoll_add(int epfd, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)tag };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The signals the loop reads from its signalfd.  They are blocked first
 * thing in main(), before NVML, the symbolizer or any library starts a
 * thread: a thread that left them unblocked would take a process-directed
 * SIGINT, which a shell's background job ignores (the loop never saw it and
 * xputop ran on) and which elsewhere kills xputop before its last flush. */
static void loop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGCHLD);
}

static void block_loop_signals(void)
{
	sigset_t set;
	loop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Sources added since the last call (at start, or at a takeover) join the
 * epoll set. */
static int poll_new_sources(struct app *a)
{
	for (int i = a->first_new_source; i < a->sess.nsources; i++) {
		int fd = a->sess.sources[i]->fd(a->sess.sources[i]);
		if (fd >= 0 && epoll_add(a->epfd, fd, i) < 0) {
			xpu_err("cannot poll the %s source: %s", a->sess.sources[i]->name, strerror(errno));
			return -1;
		}
	}
	a->first_new_source = a->sess.nsources;
	return 0;
}

/* The timer fires every ns from now. */
static void set_timer(struct app *a, uint64_t ns)
{
	struct itimerspec its = {
		.it_value = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
		.it_interval = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
	};
	timerfd_settime(a->timerfd, 0, &its, NULL);
}

/* The refresh timer, from now. */
static void arm_timer(struct app *a)
{
	/* Batch replay runs as fast as it can (the timer fires at once, every
	 * time) unless -d asks for a pace.  A bpftrace log has no refreshes of
	 * its own: there -d is the step through the log's time, never a pace. */
	int fast = !a->tui && (a->import || (a->replay && !(a->o.given & XPU_GIVEN_DELAY)));
	/* A collector ticks its stream at the shortest -d of the xputops
	 * attached, its own view keeps its own (session.h: pace). */
	uint64_t ns = a->collecting && a->stream_ns ? a->stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	set_timer(a, fast ? 1 : ns);
}

static int setup_loop(struct app *a)
{
	sigset_t set;
	loop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->sigfd < 0 || a->epfd < 0 || a->timerfd < 0) {
		xpu_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	a->timer_set = 1;
	arm_timer(a);
	epoll_add(a->epfd, a->timerfd, TAG_TIMER);
	epoll_add(a->epfd, a->sigfd, TAG_SIGNAL);
	if (a->tui)
		epoll_add(a->epfd, STDIN_FILENO, TAG_TTY);
	if (a->svc)
		epoll_add(a->epfd, xpu_service_fd(a->svc), TAG_SERVICE);
	if (a->client)
		epoll_add(a->epfd, xpu_share_client_fd(a->client), TAG_SHARE);
	return poll_new_sources(a);
}

/* The metrics of this refresh go to the server, which answers scrapes with
 * them until the next refresh. */
static void publish_metrics(struct app *a)
{
	uint64_t t0 = thread_cpu_ns();
	struct xpu_metrics_extra x = { .metrics_ns = a->metrics_ns, .pprof_ns = a->pprof_ns };
	struct xpu_prom_counts pc;
	char health[4 * 700];
	xpu_prom_http_counts(a->prom, &pc);
	x.scrapes = pc.scrapes;
	x.refused = pc.refused;
	x.cut_deadline = pc.cut_deadline;
	x.cut_evicted = pc.cut_evicted;
	int failed = xpu_health_text(&a->sess, health, sizeof(health));
	if (xpu_prom_http_health(a->prom, health, failed, a->sess.cfg.interval_ns) < 0 && !a->metrics_failed++)
		xpu_err("out of memory while writing /healthz");
	a->mtext.n = a->mom.n = 0;
	a->mtext.oom = a->mom.oom = 0;
	if (xpu_metrics_update(a->metrics, &a->sess, &x) < 0 || xpu_metrics_write(a->metrics, 0, &a->mtext) < 0 ||
	    xpu_metrics_write(a->metrics, 1, &a->mom) < 0 ||
	    xpu_prom_http_publish(a->prom, a->mtext.p, a->mtext.n, a->mom.p, a->mom.n) < 0) {
		if (!a->metrics_failed++)
			xpu_err("out of memory while writing the metrics: scrapes get the last ones written");
	}
	a->metrics_ns += thread_cpu_ns() - t0;
}

/* One profile of a kind into the --pprof directory (and to the server). */
static int write_pprof(struct app *a, enum xpu_pprof_kind kind, char *path, size_t size)
{
	uint8_t *data;
	size_t len;
	uint64_t samples, wall = a->sess.last_tick_wall ? a->sess.last_tick_wall : xpu_now_wall();
	uint64_t from = xpu_pprof_since(a->pprof, kind);
	char stem[96];
	struct xpu_outfile out;
	path[0] = '\0';
	if (xpu_pprof_encode(a->pprof, &a->sess, a->sym, kind, wall, &data, &len, &samples) < 0) {
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
	if (a->push) {
		char app[32];
		snprintf(app, sizeof(app), "xputop.%s", xpu_pprof_kind_name(kind));
		xpu_push_profile(a->push, app, from ? from : wall - a->sess.cpu.ticks.total_ns, wall,
				 kind == XPU_PPROF_CPU ? a->sess.cfg.sample_hz : 0, data, len);
	}
	free(data);
	return rc;
}

/* The CPU and GPU profiles since the last ones; msg says where they went. */
static int write_pprofs(struct app *a, char *msg, size_t size)
{
	char cpu[4200], gpu[4200];
	uint64_t t0 = thread_cpu_ns();
	int rc = write_pprof(a, XPU_PPROF_CPU, cpu, sizeof(cpu));
	if (rc == 0)
		rc = write_pprof(a, XPU_PPROF_GPU, gpu, sizeof(gpu));
	a->pprof_ns += thread_cpu_ns() - t0;
	a->pprof_at = a->sess.last_tick_mono;
	if (rc == 0 && msg)
		snprintf(msg, size, "pprof profiles: %s%s%s", cpu[0] ? cpu : "", cpu[0] && gpu[0] ? " and " : "",
			 cpu[0] || gpu[0] ? gpu : "nothing new since the last ones");
	if (a->push) {
		struct xpu_push_stats st;
		xpu_push_stats(a->push, &st);
		if (st.failed > a->push_failed)
			xpu_warn("--pprof-push: %llu profiles not sent; the last: %s",
				 (unsigned long long)st.failed, st.last_error);
		a->push_failed = st.failed;
	}
	return rc;
}

static void pprof_due(struct app *a)
{
	if (!a->pprof)
		return;
	if (!a->pprof_at)	/* the first refresh starts the first period (a replay's clock is its own) */
		a->pprof_at = a->sess.last_tick_mono;
	else if (a->sess.last_tick_mono - a->pprof_at >= (uint64_t)(a->o.pprof_interval_s * 1e9))
		write_pprofs(a, NULL, 0);
}

static void show(struct app *a)
{
	if (xpu_snapshot_build(&a->snap, &a->sess, &a->vs) < 0)
		xpu_err("out of memory while building the display");
	xpu_viewstate_settle(&a->vs, &a->snap);
	if (a->prom)
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
static int export_now(struct app *a)
{
	char msg[14000];
	if (xpu_export_view(&a->sess, &a->snap, &a->vs, a->o.outdir, msg, sizeof(msg)) < 0)
		return -1;
	if (a->pprof && a->tui) {	/* s: the profiles too, on the status line after the export's */
		char pmsg[9000];
		if (write_pprofs(a, pmsg, sizeof(pmsg)) == 0)
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s", pmsg);
	}
	if (a->tui)
		xpu_tui_status(msg);
	else
		fprintf(stderr, "xputop: %s\n", msg);
	return 0;
}

static void after_refresh(struct app *a)
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

/* Replay: feed the recording's events up to and including its next tick. */
static void replay_step(struct app *a)
{
	struct xpu_event ev;
	int r;
	if (a->sess.replay_done)
		return;
	while ((r = a->import ? xpu_import_next(a->import, &ev) : xpu_rec_next(a->replay, &ev)) > 0) {
		xpu_session_emit(&a->sess, &ev);
		if (ev.type == XPU_EV_TICK) {
			show(a);
			after_refresh(a);
			return;
		}
	}
	a->sess.replay_done = 1;
	if (r < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		a->status = 1;
	}
	if (a->tui) {
		xpu_tui_status("end of the recording: q quits");
		show(a);
	} else if (a->prom && !a->o.iterations) {
		/* the last refresh stays there to be scraped */
		fprintf(stderr, "xputop: end of the recording; metrics stay at http://%s/metrics until "
			"interrupted\n", xpu_prom_http_addr(a->prom));
	} else {
		a->quit = 1;
	}
}

static void live_tick(struct app *a)
{
	/* What the service finished goes in before the sources' last records. */
	xpu_service_poll(a->svc);
	for (int i = 0; i < a->sess.nsources; i++) {
		struct xpu_source *src = a->sess.sources[i];
		src->drain(src, &a->sess);
		if (src->tick)
			src->tick(src, &a->sess);
	}
	share_needs(a, 0);
	/* Paused, the models stand still, unless other xputops read them. */
	if (a->vs.paused && !share_serving(a))
		return;
	share_describe(a);
	uint64_t views = a->sess.ticks;
	xpu_session_tick(&a->sess, xpu_now_mono(), xpu_now_wall());
	if (a->sess.ticks == views)	/* a tick of the stream only, merged into this view's next */
		return;
	xpu_sym_tick(a->sym, (uint64_t)(a->o.delay_s * 1e9));
	if (a->vs.paused)
		return;
	show(a);
	after_refresh(a);
}

static void on_timer(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	if (a->collecting)
		live_tick(a);
	else if (!a->replay && !a->import && !a->client)
		share_retry(a);
	else if ((a->replay || a->import) && !a->vs.paused)
		replay_step(a);
}

static void on_child_exit(struct app *a)
{
	char msg[4400];
	if (!xpu_child_reap(&a->child))
		return;
	int st = a->child.status;
	snprintf(msg, sizeof(msg), "%s (pid %d) %s %d%s%s", a->o.cmd[0], (int)a->child.pid,
		 WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), a->child.log[0] ? "; output in " : "",
		 a->child.log);
	if (a->tui)
		xpu_tui_status(msg);
	else
		fprintf(stderr, "xputop: %s\n", msg);
	a->child_done = 1;
}

/* Appends name to a comma-separated list. */
static void list_add(char *list, size_t size, const char *name)
{
	size_t n = strlen(list);
	snprintf(list + n, size - n, "%s%s", n ? ", " : "", name);
}

/* SIGHUP: the settings file again, over the command line as at start.  What
 * the models and the views read each refresh changes now; the refresh
 * interval, the sampling frequency, the window and the theme were built
 * into the probes and the screen, and wait for a restart.  The push
 * headers file is read again too (tokens are rotated). */
static void reload(struct app *a)
{
	char now[256] = "", later[128] = "";
	if (a->o.no_config) {
		list_add(now, sizeof(now), "no settings file (--no-config)");
	} else {
		struct xpu_settings st;
		struct xpu_opts o = a->cli;
		struct xpu_viewstate vs = a->vs;
		xpu_settings_init(&st);
		if (xpu_config_load(&st, a->cli.config) < 0) {
			xpu_warn("SIGHUP: the settings stay as they were");
			return;
		}
		xpu_config_apply(&st, &o, &vs);
		if (o.delay_s != a->o.delay_s)
			list_add(later, sizeof(later), "delay");
		if (o.hz != a->o.hz)
			list_add(later, sizeof(later), "freq");
		if (o.window_s != a->o.window_s)
			list_add(later, sizeof(later), "window");
		if ((o.theme || a->o.theme) && (!o.theme || !a->o.theme || strcmp(o.theme, a->o.theme) != 0))
			list_add(later, sizeof(later), "theme");
		struct xpu_npu_cfg *n = &a->sess.npu.cfg;
		if (o.npu_tdr_ms != a->o.npu_tdr_ms && o.npu_tdr_ms) {
			n->tdr_ms = o.npu_tdr_ms;
			list_add(now, sizeof(now), "npu-tdr");
		}
		if (o.npu_storm != a->o.npu_storm && o.npu_storm > 0) {
			n->storm_factor = o.npu_storm;
			list_add(now, sizeof(now), "npu-storm");
		}
		if (o.npu_silence_ms != a->o.npu_silence_ms && o.npu_silence_ms) {
			n->silence_ms = o.npu_silence_ms;
			list_add(now, sizeof(now), "npu-silence");
		}
		if (memcmp(vs.sort_col, a->vs.sort_col, sizeof(vs.sort_col)) || memcmp(vs.reverse, a->vs.reverse,
		    sizeof(vs.reverse)) || vs.threads != a->vs.threads || vs.window != a->vs.window || vs.flame != a->vs.flame)
			list_add(now, sizeof(now), "the views' sort, threads, window and flamegraph");
		a->o.npu_tdr_ms = o.npu_tdr_ms;
		a->o.npu_storm = o.npu_storm;
		a->o.npu_silence_ms = o.npu_silence_ms;
		a->vs = vs;
		a->settings = st;
	}
	if (a->push && a->o.pprof_push_headers) {
		char *headers = NULL, err[400];
		if (xpu_push_read_headers(a->o.pprof_push_headers, &headers, err, sizeof(err)) < 0) {
			xpu_warn("SIGHUP: --pprof-headers: %s; the headers stay as they were", err);
		} else {
			xpu_push_set_headers(a->push, headers);
			explicit_bzero(headers, strlen(headers));
			list_add(now, sizeof(now), "the push headers");
		}
		free(headers);
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "SIGHUP: settings re-read: %s%s%s%s", now[0] ? "applied " : "nothing changed",
		 now, later[0] ? "; a restart applies " : "", later);
	if (a->tui)
		xpu_tui_status(msg);
	else
		fprintf(stderr, "xputop: %s\n", msg);
}

static void on_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (a->o.cmd)
				on_child_exit(a);
			continue;
		}
		if (si.ssi_signo == SIGHUP && !a->tui) {	/* a terminal's hangup still ends the screen */
			reload(a);
			continue;
		}
		/* Stopped by a signal: 128 + its number, as the shell reports it;
		 * but Ctrl-C typed at the screen is a way to quit, as q is. */
		a->quit = 1;
		if (!(a->tui && si.ssi_signo == SIGINT && si.ssi_code == SI_KERNEL))
			a->status = 128 + (int)si.ssi_signo;
	}
}

static void save_settings(struct app *a)
{
	char msg[4200];
	if (a->o.no_config) {
		xpu_tui_status("settings are not saved with --no-config");
		return;
	}
	xpu_config_capture(&a->settings, &a->vs, xpu_tui_theme());
	if (xpu_config_save(&a->settings, a->o.config, msg, sizeof(msg)) == 0)
		xpu_tui_status(msg);
}

/* The e key: exact GPU tracing for a while (--gpu-exact's seconds, else
 * EXACT_KEY_S), or back to sampled. */
static void switch_gpu_tracing(struct app *a)
{
	char msg[160];
	if (a->replay || a->import) {
		xpu_tui_status("a replay shows the tracing mode it was recorded with");
		return;
	}
	int exact = !a->gpu_want.exact;
	double secs = a->o.gpu_exact_s > 0 ? a->o.gpu_exact_s : EXACT_KEY_S;
	a->gpu_want.exact = exact;
	a->gpu_want.until = exact ? xpu_now_mono() + (uint64_t)(secs * 1e9) : 0;
	if (!a->collecting) {	/* asked of the collector: the header says what it grants */
		share_tell_needs(a);
		snprintf(msg, sizeof(msg), exact ? "GPU: every kernel traced asked of the collector (xputop pid %d) "
						   "for %.0f s (e: no longer)" : "GPU: exact tracing no longer asked "
						   "of the collector (xputop pid %d)", (int)a->collector, secs);
		xpu_tui_status(msg);
		return;
	}
	share_needs(a, 1);
	if (!exact && a->sess.cfg.gpu.mode == XPU_GPU_MODE_EXACT) {
		xpu_tui_status("GPU: exact tracing stays on: an attached xputop asks for it");
		return;
	}
	if (exact)
		snprintf(msg, sizeof(msg), "GPU: every kernel traced for %.0f s (e: back to sampled)", secs);
	else
		snprintf(msg, sizeof(msg), "GPU: sampled tracing, %u ms in every %u ms", a->sess.cfg.gpu.slice_ms,
			 a->sess.cfg.gpu.period_ms);
	xpu_tui_status(msg);
}

static void on_tty(struct app *a)
{
	int r = xpu_tui_input(&a->snap, &a->vs);
	/* What these did is said on the status line, now: after a replay
	 * ended no refresh would show it. */
	if (r & (XPU_REACT_SAVE | XPU_REACT_EXPORT | XPU_REACT_GPU_EXACT))
		r |= XPU_REACT_REDRAW;
	if (r & XPU_REACT_QUIT)
		a->quit = 1;
	if (r & XPU_REACT_SAVE)
		save_settings(a);
	if (r & XPU_REACT_EXPORT)
		export_now(a);
	if (r & XPU_REACT_GPU_EXACT)
		switch_gpu_tracing(a);
	if (r & XPU_REACT_REBUILD) {
		if (xpu_snapshot_build(&a->snap, &a->sess, &a->vs) < 0)
			xpu_err("out of memory while building the display");
		xpu_viewstate_settle(&a->vs, &a->snap);
		r |= XPU_REACT_REDRAW;
	}
	if (r & XPU_REACT_REDRAW)
		xpu_tui_draw(&a->snap, &a->vs);
}

static int run_loop(struct app *a)
{
	struct epoll_event evs[16];
	while (!a->quit) {
		int n = epoll_wait(a->epfd, evs, 16, -1);
		if (n < 0) {
			if (errno != EINTR)
				return xpu_err("epoll_wait: %s", strerror(errno)), -1;
			if (a->tui)	/* a resize interrupts the wait; curses queued it as a key */
				on_tty(a);
			continue;
		}
		for (int i = 0; i < n && !a->quit; i++) {
			int tag = (int)(int64_t)evs[i].data.u64;
			if (tag >= 0) {
				struct xpu_source *src = a->sess.sources[tag];
				src->drain(src, &a->sess);
				if (src == a->server)	/* a client came, left or told its needs */
					share_needs(a, 0);
			} else if (tag == TAG_TIMER) {
				on_timer(a);
			} else if (tag == TAG_SIGNAL) {
				on_signal(a);
			} else if (tag == TAG_TTY) {
				on_tty(a);
			} else if (tag == TAG_SERVICE) {
				xpu_service_poll(a->svc);
			} else if (tag == TAG_SHARE && a->client) {
				share_input(a);
			}
		}
		if (a->sym)	/* names asked for while draining go to the service */
			xpu_sym_flush(a->sym);
	}
	return 0;
}

static struct xpu_session_cfg session_cfg(const struct xpu_opts *o, uint32_t hz, uint64_t interval)
{
	struct xpu_session_cfg c = {
		.sample_hz = hz,
		.interval_ns = interval,
		.window_ns = (uint64_t)(o->window_s * 1e9),
		.npu = { .tdr_ms = o->npu_tdr_ms, .storm_factor = o->npu_storm,
			 .silence_ms = o->npu_silence_ms },
		.gpu = { .mode = o->gpu_exact ? XPU_GPU_MODE_EXACT : XPU_GPU_MODE_SAMPLED,
			 .slice_ms = o->gpu_slice_ms ? o->gpu_slice_ms : XPU_GPU_SLICE_MS,
			 .period_ms = o->gpu_period_ms ? o->gpu_period_ms : XPU_GPU_PERIOD_MS,
			 .exact_until = o->gpu_exact && o->gpu_exact_s > 0 ?
						xpu_now_mono() + (uint64_t)(o->gpu_exact_s * 1e9) : 0 },
	};
	return c;
}

static int open_replay(struct app *a)
{
	char err[512];
	a->replay = xpu_rec_open(a->o.replay, &a->sess.dict, err, sizeof(err));
	if (!a->replay) {
		/* Not a recording: perhaps the text of the NPU tutorial's bpftrace script. */
		char ierr[256];
		a->import = xpu_import_bpftrace(a->o.replay, (uint64_t)(a->o.delay_s * 1e9), &a->sess.dict,
					       ierr, sizeof(ierr));
		if (a->import)
			return 0;
		/* A file that is no recording at all was perhaps meant as a log:
		 * the importer says what it looked like and why it is not one. */
		xpu_err("%s: %s", a->o.replay, strstr(err, "not an xputop recording") ? ierr : err);
		return -1;
	}
	if (xpu_rec_verify(a->replay) < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		return -1;
	}
	if (*xpu_rec_warning(a->replay))
		xpu_warn("%s: %s", a->o.replay, xpu_rec_warning(a->replay));
	return 0;
}

/* A bpftrace log replays into the NPU model only, paced at -d. */
static int start_import(struct app *a)
{
	const struct xpu_import_stats *st = xpu_import_stats(a->import);
	struct xpu_session_cfg cfg = session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	a->sess.replay = 1;
	snprintf(a->sess.host, sizeof(a->sess.host), "bpftrace log");
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "%s", a->o.replay);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_OFF, "a bpftrace log holds no CPU samples");
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_OFF, "a bpftrace log holds no GPU activity");
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_OFF, "a bpftrace log holds no GPU devices");
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE, "replaying the bpftrace log %s%s",
			   a->o.replay, st->untimed ? " (counts only: it has no times, so no rates, jobs or alerts)" : "");
	a->sess.npu.untimed = st->untimed;
	if (st->untimed)
		xpu_npu_model_source(&a->sess.npu, "bpftrace log", XPU_SRC_ACTIVE,
				     "%llu calls as %s: counts only, the log has no times (no rates, jobs or "
				     "alerts), %llu lines not understood%s",
				     (unsigned long long)st->calls, st->form, (unsigned long long)st->bad,
				     st->truncated ? ", cut at 512 MiB" : "");
	else
		xpu_npu_model_source(&a->sess.npu, "bpftrace log", XPU_SRC_ACTIVE,
				     "%llu %s over %.1f s (%llu of them also job, IPC, memory or power events), "
				     "%llu lines not understood%s",
				     (unsigned long long)st->calls, st->form, (double)(st->last_ms - st->first_ms) / 1e3,
				     (unsigned long long)st->mapped, (unsigned long long)st->bad,
				     st->truncated ? ", cut at 512 MiB" : "");
	if (st->bad)
		xpu_warn("%s: %llu lines not understood (the first is line %llu); they are left out",
			 a->o.replay, (unsigned long long)st->bad, (unsigned long long)st->first_bad);
	if (st->summary_mismatch)
		xpu_warn("%s: the @calls map disagrees with the lines for %llu functions (%s)", a->o.replay,
			 (unsigned long long)st->summary_mismatch, st->first_mismatch);
	return 0;
}

static void mark_replay(void *arg, struct xpu_dict *d)
{
	xpu_rec_mark_stacks(arg, d);
}

static int start_replay(struct app *a)
{
	if (a->import)
		return start_import(a);
	const struct xpu_rec_meta *m = xpu_rec_meta(a->replay);
	struct xpu_session_cfg cfg = session_cfg(&a->o, m->sample_hz, m->interval_ns);
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	a->sess.replay = 1;
	a->sess.ncpus = m->ncpus;
	if (xpu_session_add_holder(&a->sess, mark_replay, a->replay) < 0)
		return -1;
	snprintf(a->sess.host, sizeof(a->sess.host), "%s", m->host);
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "%s", a->o.replay);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE, "replaying %s (recorded on %s, %s)",
			   a->o.replay, m->host, m->kernel);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE, "replaying %s: GPU activity as recorded",
			   a->o.replay);
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_ACTIVE, "replaying %s: GPU devices as NVML "
				"reported them on %s", a->o.replay, m->host);
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE, "replaying %s: NPU activity as recorded",
			   a->o.replay);
	xpu_npu_model_source(&a->sess.npu, "replay", XPU_SRC_ACTIVE, "events recorded on %s (%s)",
			     m->host, m->kernel);
	if (!(a->o.given & XPU_GIVEN_DELAY) && m->interval_ns)	/* replay at the recorded pace by default */
		a->o.delay_s = (double)m->interval_ns / 1e9;
	return 0;
}

/* The GPU device view: NVML, unless XPUTOP_NVML=off. */
static int start_nvml(struct app *a)
{
	const char *lib = xpu_nvml_lib_path();
	if (lib && strcmp(lib, "off") == 0) {
		xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_OFF, "turned off by XPUTOP_NVML=off");
		return 0;
	}
	struct xpu_source *src = xpu_source_nvml_new(&a->sess, lib, a->sess.cfg.interval_ns);
	if (src && xpu_session_add_source(&a->sess, src) == 0)
		return 0;
	xpu_source_destroy(src);
	xpu_err("cannot start the GPU device view: out of memory");
	return -1;
}

/* The command waits at its gate until every source is ready. */
static int start_child(struct app *a, const char *lib)
{
	if (!lib)
		xpu_warn("libxputop_inject.so was not found next to xputop or in its library directory: "
			 "%s runs without it, so only its launches are seen", a->o.cmd[0]);
	if (a->o.npids == XPU_MAX_PIDS) {
		xpu_err("too many processes to watch with -p and a command");
		return -1;
	}
	if (xpu_child_spawn(&a->child, a->o.cmd, lib, a->tui ? (a->o.outdir ? a->o.outdir : ".") : NULL) < 0)
		return -1;
	a->o.pids[a->o.npids++] = (uint32_t)a->child.pid;
	return 0;
}

/* The events -p filters in the session: every event of a process, for the
 * collector's sources collect what its clients need too (share_needs()),
 * and a client reads the collector's stream. */
#define EVBIT(t) (1ULL << (t))
#define CLIENT_WATCH (EVBIT(XPU_EV_GPU_LAUNCH) | EVBIT(XPU_EV_GPU_KERNEL) | EVBIT(XPU_EV_GPU_MEMCPY) | \
		      EVBIT(XPU_EV_GPU_PROC) | EVBIT(XPU_EV_GPU_SLICE) | EVBIT(XPU_EV_CPU_SAMPLE) | \
		      EVBIT(XPU_EV_PROC_STAT) | EVBIT(XPU_EV_THREAD_STAT) | EVBIT(XPU_EV_NPU_IOCTL) | EVBIT(XPU_EV_NPU_L0))

/* This xputop's own wish for exact GPU tracing, from --gpu-exact. */
static void gpu_want_init(struct app *a)
{
	a->gpu_want.exact = a->o.gpu_exact;
	a->gpu_want.until = a->o.gpu_exact && a->o.gpu_exact_s > 0 ?
				    xpu_now_mono() + (uint64_t)(a->o.gpu_exact_s * 1e9) : 0;
	a->sess.gpu_exact_asked = a->gpu_want.exact;
}

/* -p (with -- CMD, the command and what it starts): 0, or -1 out of memory. */
static int watch_pids(struct app *a, uint64_t types)
{
	if (!a->o.npids)
		return 0;
	if (xpu_pidset_init(&a->watch, a->o.pids, a->o.npids, a->o.cmd != NULL) < 0) {
		xpu_err("out of memory");
		return -1;
	}
	xpu_session_watch(&a->sess, &a->watch, types);
	return 0;
}

/* The session, the service thread and the symbolizer: a client has them
 * too, to take over. */
static int start_services(struct app *a, const struct xpu_session_cfg *cfg)
{
	if (xpu_session_start(&a->sess, cfg) < 0)
		return -1;
	a->svc = xpu_service_new(SERVICE_QUEUE);
	if (!a->svc) {
		xpu_err("cannot start the service thread: %s", strerror(errno));
		return -1;
	}
	a->sym = xpu_sym_new(&a->sess.dict, a->svc);
	return a->sym ? 0 : -1;
}

static struct xpu_cpu_source_opts cpu_opts(const struct app *a)
{
	return (struct xpu_cpu_source_opts){
		.hz = a->o.hz, .pids = a->o.pids, .npids = a->o.npids, .follow_forks = a->o.cmd != NULL,
	};
}

static struct xpu_npu_source_opts npu_opts(const struct app *a)
{
	return (struct xpu_npu_source_opts){
		.dev_path = a->o.npu_dev, .probe_binary = a->o.npu_probe_binary, .sysfs_root = a->o.npu_sysfs,
		.pids = a->o.pids, .npids = a->o.npids,
	};
}

static uint32_t online_cpus(void)
{
	int *cpus = NULL;
	int n = xpu_sys_online_cpus(&cpus);
	free(cpus);
	return n > 0 ? (uint32_t)n : 0;
}

/* The CPU sampler: attached from the preload where there is one. */
static struct xpu_source *start_cpu(struct app *a, const struct xpu_cpu_source_opts *co)
{
	struct xpu_source *cpu = a->pre.cpu;
	a->pre.cpu = NULL;
	if (!cpu)
		return xpu_source_cpu_new(&a->sess, a->sym, co);
	if (xpu_source_cpu_attach(cpu) == 0)
		return cpu;
	xpu_source_destroy(cpu);
	return NULL;
}

static struct xpu_source *start_npu(struct app *a, const struct xpu_npu_source_opts *no)
{
	struct xpu_source *npu = a->pre.npu;
	a->pre.npu = NULL;
	if (!npu)
		return xpu_source_npu_new(&a->sess, no);
	xpu_source_npu_attach(npu);
	return npu;
}

/* This xputop's own probes: CPU sampling, the GPU socket and probes, NPU
 * tracing, NVML. */
static int start_probes(struct app *a)
{
	/* Without BTF no BPF program loads; the rest still works (one message). */
	int bpf = xpu_sys_check_btf() == 0;
	xpu_sys_libbpf_logging(a->o.verbose);
	a->sess.ncpus = online_cpus();
	const char *lib = xpu_inject_lib_path();
	struct xpu_cpu_source_opts co = cpu_opts(a);
	/* A CPU sampler that cannot load (said why) leaves the other views. */
	uint64_t t0 = xpu_now_mono();
	struct xpu_source *cpu = bpf ? start_cpu(a, &co) : NULL;
	uint64_t t1 = xpu_now_mono();
	if (cpu && xpu_session_add_source(&a->sess, cpu) == 0)
		a->cpu = cpu;
	else
		xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_FAILED, "%s",
				   bpf ? "CPU sampling is off: its BPF program did not load (see the message at start)"
				       : "CPU sampling is off: this kernel has no usable BTF for BPF programs");
	struct xpu_gpu_source_opts go = {
		.inject_lib = lib, .no_stacks = a->o.gpu_no_stacks, .no_bpf = !bpf, .locked = a->locked,
		.probes = a->pre.gpu,
	};
	a->pre.gpu = NULL;
	struct xpu_source *gpu = xpu_source_gpu_new(&a->sess, a->sym, a->svc, &go);
	uint64_t t2 = xpu_now_mono();
	if (!gpu)
		return -1;
	xpu_session_add_source(&a->sess, gpu);
	a->gpu = gpu;
	struct xpu_npu_source_opts no = npu_opts(a);
	struct xpu_source *npu = bpf ? start_npu(a, &no) : NULL;
	uint64_t t3 = xpu_now_mono();
	if (npu)
		xpu_session_add_source(&a->sess, npu);
	else if (bpf && (a->o.npu_dev || a->o.npu_probe_binary))
		return -1;	/* what was asked for by name cannot be done */
	else if (!bpf)
		xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_FAILED, "%s",
				   "NPU tracing is off: this kernel has no usable BTF for BPF programs");
	if (start_nvml(a) < 0)
		return -1;
	xpu_debug("the probes started in %.0f ms: CPU sampling %.0f, GPU %.0f, NPU %.0f, NVML %.0f",
		  (double)(xpu_now_mono() - t0) / 1e6, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
		  (double)(t3 - t2) / 1e6, (double)(xpu_now_mono() - t3) / 1e6);
	a->collecting = 1;
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes");
	return 0;
}

static void session_meta(const struct app *a, struct xpu_rec_meta *m)
{
	struct utsname u;
	memset(m, 0, sizeof(*m));
	m->sample_hz = a->sess.stream_hz ? a->sess.stream_hz : a->sess.cfg.sample_hz;
	m->ncpus = a->sess.ncpus;
	m->start_wall_ns = xpu_now_wall();
	m->interval_ns = a->stream_ns ? a->stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	memcpy(m->host, a->sess.host, sizeof(m->host) - 1);
	if (uname(&u) == 0)
		memcpy(m->kernel, u.release, sizeof(m->kernel) - 1);
	snprintf(m->version, sizeof(m->version), "%s", XPU_VERSION);
}

/* ---- several xputops at once (core/sources/share.h) ---- */

/* The collector serves its stream to the xputops started after it. */
static void share_serve(struct app *a, int lockfd)
{
	char err[300] = "";
	struct xpu_rec_meta m;
	if (lockfd < 0)
		return;
	session_meta(a, &m);
	a->server = xpu_share_server_new(&a->sess, lockfd, &m, err, sizeof(err));
	if (!a->server || xpu_session_add_source(&a->sess, a->server) < 0) {
		xpu_source_destroy(a->server);
		a->server = NULL;
		xpu_warn("%s: other xputops started now will not see this one's data", err[0] ? err : "out of memory");
	}
}

/* Whether other xputops read this one's stream now. */
static int share_serving(struct app *a)
{
	struct xpu_share_counts c = { 0 };
	if (a->server)
		xpu_share_server_counts(a->server, &c);
	return c.attached > 0;
}

/* What this xputop needs collected. */
static void own_need(const struct app *a, struct xpu_share_need *n)
{
	memset(n, 0, sizeof(*n));
	n->hz = a->o.hz;
	n->interval_ms = (uint32_t)(a->o.delay_s * 1000 + 0.5);
	if (n->interval_ms < XPU_NEED_MS_MIN)
		n->interval_ms = XPU_NEED_MS_MIN;
	if (n->interval_ms > XPU_NEED_MS_MAX)
		n->interval_ms = XPU_NEED_MS_MAX;
	n->flags = (a->o.npids ? 0 : XPU_NEED_ALL_PIDS) | (a->o.cmd ? XPU_NEED_FOLLOW : 0) |
		   (a->gpu_want.exact ? XPU_NEED_GPU_EXACT : 0);
	n->npids = a->o.npids;
	memcpy(n->pids, a->o.pids, a->o.npids * sizeof(n->pids[0]));
}

/* This xputop's exact GPU tracing runs out (--gpu-exact's seconds, e's). */
static void gpu_want_expire(struct app *a)
{
	if (a->gpu_want.exact && a->gpu_want.until && xpu_now_mono() >= a->gpu_want.until) {
		a->gpu_want.exact = 0;
		a->gpu_want.until = 0;
		if (a->client)
			share_tell_needs(a);
	}
}

/* The processes the collector's GPU source serves: -p's of all. */
static void collect_pids(struct app *a, const struct xpu_share_needs *u)
{
	int all = (u->flags & XPU_NEED_ALL_PIDS) != 0;
	if (a->collect_ps_set)
		xpu_pidset_free(&a->collect_ps);
	a->collect_ps_set = !all && xpu_pidset_init(&a->collect_ps, u->pids, u->npids,
						     (u->flags & XPU_NEED_FOLLOW) != 0) == 0;
	all |= !a->collect_ps_set;	/* out of memory: widen, never narrow */
	xpu_session_collect(&a->sess, all, a->collect_ps_set ? &a->collect_ps : NULL);
	a->sess.stream_collect = all ? XPU_TICK_ALL_PIDS : 0;
	if (a->gpu)	/* libraries woken for an xputop that left go back to sleep */
		xpu_source_gpu_narrow(a->gpu);
}

/* The stream ticks at the shortest -d asked (-d's own floor, 0.05 s, is
 * XPU_NEED_MS_MIN): every xputop's view then ticks at its own -d, merging
 * the stream's ticks in between, this one's included. */
static void stream_pace(struct app *a, uint32_t ms)
{
	uint64_t ns = (uint64_t)ms * 1000000ULL, own = (uint64_t)(a->o.delay_s * 1e9);
	if (!ms || ns > own)
		ns = own;
	if (ns == (a->stream_ns ? a->stream_ns : own))
		return;
	a->stream_ns = ns;
	if (a->timer_set)
		arm_timer(a);
	xpu_debug("the stream ticks every %.3f s, this xputop's view every %.3f s", (double)ns / 1e9,
		  a->o.delay_s);
}

/* The collector collects the union of its own needs and its clients': the
 * CPU sampler at the highest rate and on the widest set of processes, the
 * GPU libraries of those processes served, exact if any asks, the stream
 * ticking at the shortest -d.  At each refresh, and at once (force) when
 * this xputop's own needs change. */
static void share_needs(struct app *a, int force)
{
	struct xpu_share_needs *u = calloc(1, sizeof(*u));
	struct xpu_share_need own;
	gpu_want_expire(a);
	if (!u || !a->collecting)
		goto out;
	uint64_t gen = a->server ? xpu_share_server_needs(a->server, u) : 0;
	int theirs = (u->flags & XPU_NEED_GPU_EXACT) != 0;
	own_need(a, &own);
	xpu_share_needs_add(u, &own);
	int exact = (u->flags & XPU_NEED_GPU_EXACT) != 0;
	if (exact != (a->sess.cfg.gpu.mode == XPU_GPU_MODE_EXACT)) {
		xpu_session_gpu_exact(&a->sess, exact, 0, xpu_now_mono());
		force = 1;
	}
	/* Only this xputop's own wish runs out by itself (the GPU source ends it). */
	a->sess.cfg.gpu.exact_until = exact && !theirs ? a->gpu_want.until : 0;
	a->sess.gpu_exact_asked = a->gpu_want.exact;
	if (!force && a->needs_applied && gen == a->needs_gen && own.hz == a->applied.hz &&
	    own.flags == a->applied.flags)
		goto out;
	a->needs_gen = gen;
	a->needs_applied = 1;
	a->applied = own;
	stream_pace(a, u->interval_ms);
	struct xpu_cpu_source_opts co = { .hz = u->hz, .pids = u->pids,
					  .npids = u->flags & XPU_NEED_ALL_PIDS ? 0 : u->npids,
					  .follow_forks = (u->flags & XPU_NEED_FOLLOW) != 0 };
	if (a->cpu && xpu_source_cpu_retune(a->cpu, &co) < 0)
		xpu_warn("cannot sample at %u Hz for the xputops attached to this one: sampling at %u Hz",
			 co.hz, xpu_source_cpu_hz(a->cpu));
	a->sess.stream_hz = a->cpu ? xpu_source_cpu_hz(a->cpu) : u->hz;
	collect_pids(a, u);
	xpu_debug("collecting for %s: %u Hz, %s, GPU %s", a->server ? "this xputop and its clients" : "this xputop",
		  a->sess.stream_hz, u->flags & XPU_NEED_ALL_PIDS ? "every process" : "some processes",
		  exact ? "exact" : "sampled");
out:
	free(u);
}

/* A client tells the collector what it needs. */
static void share_tell_needs(struct app *a)
{
	struct xpu_share_need n;
	own_need(a, &n);
	a->sess.gpu_exact_asked = a->gpu_want.exact;
	if (a->client && xpu_share_client_need(a->client, &n) < 0)
		xpu_debug("cannot tell the collector what this xputop needs: its stream will end");
}

/* How the stream is collected and how this xputop shows it, for the
 * header: the rate and, where this view merges the stream's ticks, the
 * stream's interval. */
static void collect_text(const struct app *a, char *buf, size_t size)
{
	const struct xpu_session *s = &a->sess;
	uint32_t hz = s->stream_hz ? s->stream_hz : s->cfg.sample_hz;
	uint64_t ns = s->stream_ns ? s->stream_ns : s->stream_interval;
	/* a client's is measured: a tenth of the view's -d either way is the same pace */
	int merged = ns && ns * 10 < s->cfg.interval_ns * 9;
	int n = snprintf(buf, size, "%u Hz", hz);
	/* the view's own interval is the header's "refresh" */
	if (merged && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "/%.3g s", (double)ns / 1e9);
	if (n > 0 && (size_t)n < size && hz > s->cfg.sample_hz)
		snprintf(buf + n, size - (size_t)n, " (shown at %u)", s->cfg.sample_hz);
}

/* What the header says the data comes from. */
static void share_describe(struct app *a)
{
	struct xpu_share_counts c = { 0 };
	char rate[96];
	if (a->collecting)
		a->sess.stream_ns = a->stream_ns ? a->stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	else
		a->sess.stream_ns = 0;	/* as the collector's ticks come */
	collect_text(a, rate, sizeof(rate));
	if (a->client) {
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "collector pid %d, %s",
			 (int)a->collector, rate);
		return;
	}
	if (a->server)
		xpu_share_server_counts(a->server, &c);
	a->sess.clients = c;
	if (c.attached || c.dropped || c.refused || c.turned_away)
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes, %s, serving %u xputop%s%s",
			 rate, c.attached, c.attached == 1 ? "" : "s",
			 c.dropped || c.refused || c.turned_away ? " (some dropped or turned away)" : "");
	else
		snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes, %s", rate);
}

static void share_client_status(struct app *a)
{
	int pid = (int)a->collector;
	a->sess.attached = 1;
	a->sess.collector_pid = pid;
	share_describe(a);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its CPU sampling", pid);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its injection library socket and launch probes", pid);
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE,
			   "from the collector, xputop pid %d: its NPU tracing", pid);
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_ACTIVE,
				"from the collector, xputop pid %d: its NVML readings", pid);
}

static void mark_client(void *arg, struct xpu_dict *d)
{
	struct app *a = arg;
	if (a->client)
		xpu_share_client_mark(a->client, d);
}

/* The samples no xputop took while none collected count as dropped. */
static void share_count_gap(struct app *a, uint64_t from)
{
	uint64_t now = xpu_now_mono();
	if (!from || now <= from)
		return;
	struct xpu_event ev = { .type = XPU_EV_DROP, .source = XPU_SRC_CPU, .time = now };
	ev.drop.source = XPU_SRC_CPU;
	ev.drop.what = XPU_DROP_GAP;
	ev.drop.count = (uint64_t)((double)(now - from) / 1e9 * a->sess.cfg.sample_hz * a->sess.ncpus);
	if (ev.drop.count)
		xpu_session_emit(&a->sess, &ev);
}

/* Reads from the collector on fd: 0, or -1 (said why when loud). */
static int share_attach(struct app *a, int fd, int wait_ms, int loud)
{
	struct xpu_share_client *c = xpu_share_client_new(fd, &a->sess.dict);
	if (!c || xpu_share_client_wait_meta(c, wait_ms) < 0) {
		if (loud)
			xpu_err("cannot read from the xputop collecting on this machine: %s",
				c ? xpu_share_client_error(c) : "out of memory");
		xpu_share_client_free(c);
		return -1;
	}
	a->client = c;
	a->collector = xpu_share_client_pid(c);
	return 0;
}

/* -p, -F, -d and exact GPU tracing are asked of the collector, which
 * collects for every xputop attached (share_tell_needs()); how the
 * collector traces is its own (said again on the screen). */
static void share_warn_options(struct app *a)
{
	const struct xpu_opts *o = &a->o;
	if (!o->gpu_no_stacks && !o->gpu_slice_ms && !o->gpu_period_ms && !o->npu_dev && !o->npu_probe_binary)
		return;
	snprintf(a->share_warning, sizeof(a->share_warning), "this xputop reads the collector's stream (xputop pid "
		 "%d): --gpu-slice, --gpu-period, --gpu-no-stacks and --npu-* given here apply only if it takes over "
		 "(-p, -F, -d and --gpu-exact do apply)", (int)a->collector);
	xpu_warn("%s", a->share_warning);
}

/* What a preload says goes to -v only: a load that failed is tried again,
 * and said, when this xputop takes over. */
static void preload_sink(void *ctx, int level, const char *msg)
{
	const struct app *a = ctx;
	if (a->o.verbose)
		fprintf(stderr, "xputop: (loading the probes to take over with) %s%s\n",
			level == XPU_LOG_WARN ? "warning: " : "", msg);
}

/* A client loads its own probes at the start, attaching none: nothing runs
 * in the watched programs, but a takeover then only attaches, skipping the
 * verifier (most of an xputop's start, seconds on a loaded machine). */
static void share_preload(struct app *a)
{
	uint64_t t0 = xpu_now_mono();
	xpu_log_set_sink(preload_sink, a);	/* before the screen: no sink to keep */
	if (xpu_sys_check_btf() == 0) {
		xpu_sys_libbpf_logging(a->o.verbose);
		struct xpu_cpu_source_opts co = cpu_opts(a);
		struct xpu_npu_source_opts no = npu_opts(a);
		co.ncpus = online_cpus();	/* this machine's CPUs size the ring, as at the takeover */
		a->pre.cpu = xpu_source_cpu_load(&a->sess, a->sym, &co);
		a->pre.gpu = xpu_gpu_probes_load(a->sym, &a->sess.dict, a->svc);
		a->pre.npu = xpu_source_npu_load(&a->sess, &no);
	}
	xpu_log_set_sink(NULL, NULL);
	xpu_debug("loaded the probes to take over with in %.0f ms (CPU %s, GPU %s, NPU %s): attached only if "
		  "the collector goes", (double)(xpu_now_mono() - t0) / 1e6, a->pre.cpu ? "ready" : "failed",
		  a->pre.gpu ? "ready" : "failed", a->pre.npu ? "ready" : "failed");
}

/* A client's start: the models are sized as the collector's (its -F and
 * -d), whose stream feeds them. */
static int start_client(struct app *a, int fd)
{
	if (share_attach(a, fd, SHARE_WAIT_MS, 1) < 0)
		return -1;
	share_warn_options(a);
	const struct xpu_rec_meta *m = xpu_share_client_meta(a->client);
	struct xpu_session_cfg cfg = session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	if (start_services(a, &cfg) < 0 || xpu_session_add_holder(&a->sess, mark_client, a) < 0)
		return -1;
	a->sess.ncpus = m->ncpus;
	a->sess.stream_hz = m->sample_hz;	/* then each of its ticks says */
	a->sess.pace = 1;	/* its own -d, the collector ticking at least as often */
	const char *lib = xpu_inject_lib_path();
	if ((a->o.cmd && start_child(a, lib) < 0) || watch_pids(a, CLIENT_WATCH) < 0)
		return -1;
	gpu_want_init(a);
	share_tell_needs(a);
	share_preload(a);
	share_client_status(a);
	if (a->o.cmd && xpu_child_release(&a->child, a->o.cmd[0]) < 0)
		return -1;
	xpu_session_begin(&a->sess, xpu_now_mono());
	return 0;
}

/* Attaches to the collector if one runs (1), else takes the collector lock
 * (0, *lockfd holds it, or -1 where it cannot be taken: then this xputop
 * collects alone).  -1 on an error, said. */
static int choose_role(struct app *a, int *lockfd)
{
	char sock[128];
	xpu_share_paths(sock, sizeof(sock), NULL, 0);
	for (int waited = 0; waited < SHARE_WAIT_MS; waited += 20) {
		int fd, rc = xpu_share_connect(&fd);
		if (rc == 0)
			return start_client(a, fd) < 0 ? -1 : 1;
		if (rc == -EACCES) {
			xpu_err("cannot attach to the xputop collecting on this machine (%s): only root and "
				"members of group %s may — run as root", sock, XPU_SHARE_GROUP);
			return -1;
		}
		if (waited == 0 && xpu_sys_check_root() < 0)
			return -1;
		*lockfd = xpu_share_lock();
		if (*lockfd >= 0)
			return 0;
		if (errno != EWOULDBLOCK) {
			xpu_warn("cannot take the collector lock beside %s (%s): this xputop collects alone",
				 sock, strerror(errno));
			return 0;
		}
		usleep(20000);	/* a collector is starting: it serves in a moment */
	}
	xpu_err("another xputop holds the collector lock but does not serve %s", sock);
	return -1;
}

/* Becomes the collector once the last one is gone: 0, -1 when another
 * xputop took the lock first, -2 when its probes would not start (it quits). */
static int share_take_over(struct app *a)
{
	uint64_t from = a->sess.stream_last;
	int lockfd = xpu_share_lock();
	if (lockfd < 0)
		return -1;
	uint64_t t0 = xpu_now_mono();
	a->locked = 1;
	if (start_probes(a) < 0) {	/* some sources may have started: no second try */
		xpu_err("cannot collect in the place of the collector that left (see above)");
		close(lockfd);
		a->quit = 1;
		a->status = 1;
		return -2;
	}
	xpu_debug("took over %.0f ms after the collector's last refresh: the lock came at %.0f ms, the "
		  "probes took %.0f ms", (double)(xpu_now_mono() - from) / 1e6, (double)(t0 - from) / 1e6,
		  (double)(xpu_now_mono() - t0) / 1e6);
	share_serve(a, lockfd);
	poll_new_sources(a);
	a->sess.attached = 0;
	share_needs(a, 1);	/* this xputop's own; its clients tell theirs as they attach */
	share_count_gap(a, from);
	return 0;
}

/* Without a collector to read from: take over, or attach to whoever did.
 * Tried again at each refresh until one works. */
static void share_retry(struct app *a)
{
	int fd, pid = (int)a->collector;
	uint64_t from = a->sess.stream_last;
	int took = share_take_over(a);
	if (took == -2)
		return;
	if (took == 0) {
		xpu_warn("the collector (xputop pid %d) is gone: this xputop collects now", pid);
		a->sess.pace_lag = (int64_t)a->sess.cfg.interval_ns;	/* this tick is the view's, however short */
		live_tick(a);	/* at once: the view goes on within the refresh the collector missed */
		arm_timer(a);	/* and a whole refresh to the next */
		return;
	}
	if (xpu_share_connect(&fd) < 0 || share_attach(a, fd, 250, 0) < 0) {
		/* The dead collector's lock goes with its last files, or another
		 * xputop is starting to serve: soon, either way. */
		set_timer(a, SHARE_RETRY_NS);
		return;
	}
	arm_timer(a);
	epoll_add(a->epfd, xpu_share_client_fd(a->client), TAG_SHARE);
	a->sess.stream_hz = xpu_share_client_meta(a->client)->sample_hz;
	share_tell_needs(a);
	share_client_status(a);
	share_count_gap(a, from);
}

static void share_collector_gone(struct app *a)
{
	xpu_debug("the collector's stream ended: %s", xpu_share_client_error(a->client));
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, xpu_share_client_fd(a->client), NULL);
	xpu_share_client_free(a->client);
	a->client = NULL;
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_WAITING,
			   "the collector (xputop pid %d) is gone: waiting for the next one", (int)a->collector);
	share_retry(a);
}

/* The collector's stream: each tick it sends is a refresh here. */
static void share_input(struct app *a)
{
	int r;
	uint64_t views = a->sess.ticks;
	while ((r = xpu_share_client_next(a->client, &a->sess)) > 0) {
		gpu_want_expire(a);
		share_describe(a);
		if (a->vs.paused || a->sess.ticks == views)	/* merged into this view's next tick */
			continue;
		views = a->sess.ticks;
		show(a);
		after_refresh(a);
		if (a->quit)
			return;
	}
	if (r < 0)
		share_collector_gone(a);
}

/* Quitting: the injection library's socket and the collector lock go first,
 * so an attached xputop takes over now, not after this one's teardown. */
static void share_stop(struct app *a)
{
	if (!a->server)
		return;
	xpu_source_gpu_close(a->gpu);
	xpu_share_server_stop(a->server);
}

static int start_live(struct app *a)
{
	int lockfd = -1;
	int role = choose_role(a, &lockfd);
	if (role != 0)
		return role < 0 ? -1 : 0;
	a->locked = lockfd >= 0;
	struct xpu_session_cfg cfg = session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	const char *lib = xpu_inject_lib_path();
	gpu_want_init(a);
	a->sess.pace = 1;
	if (start_services(a, &cfg) < 0 || (a->o.cmd && start_child(a, lib) < 0) ||
	    watch_pids(a, CLIENT_WATCH) < 0 || start_probes(a) < 0) {
		if (lockfd >= 0)
			close(lockfd);
		return -1;
	}
	share_serve(a, lockfd);
	share_needs(a, 1);
	xpu_session_begin(&a->sess, xpu_now_mono());
	if (a->o.cmd && xpu_child_release(&a->child, a->o.cmd[0]) < 0)
		return -1;
	return 0;
}

static int start_prometheus(struct app *a)
{
	char err[400];
	a->metrics = xpu_metrics_new(a->o.prometheus_top);
	if (!a->metrics) {
		xpu_err("cannot start the metrics: out of memory");
		return -1;
	}
	xpu_metrics_set_processes(a->metrics, a->o.prometheus_label, a->o.prometheus_expiry_s,
				  a->o.prometheus_processes);
	a->prom = xpu_prom_http_start(a->o.prometheus, err, sizeof(err));
	if (!a->prom) {
		xpu_err("--prometheus: %s", err);
		return -1;
	}
	if (!a->tui)
		fprintf(stderr, "xputop: metrics at http://%s/metrics\n", xpu_prom_http_addr(a->prom));
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

static int start_pprof(struct app *a)
{
	char err[400];
	if (pprof_dir(a->o.pprof_dir) < 0)
		return -1;
	/* a profile may come a refresh late: then its changes must still be in the window */
	a->pprof = xpu_pprof_new(a->o.pprof_interval_s + a->o.delay_s <= a->o.window_s);
	if (!a->pprof) {
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
	a->push = xpu_push_start(a->o.pprof_push, a->sess.host, headers, err, sizeof(err));
	if (headers)
		explicit_bzero(headers, strlen(headers));
	free(headers);
	if (!a->push) {
		xpu_err("--pprof-push: %s", err);
		return -1;
	}
	return 0;
}

static int start_recording(struct app *a)
{
	struct xpu_rec_meta m;
	char err[512];
	session_meta(a, &m);
	a->sess.rec = xpu_rec_create_from(a->o.record, a->o.replay, &a->sess.dict, &m, err, sizeof(err));
	if (!a->sess.rec) {
		xpu_err("%s", err);	/* names the file already */
		return -1;
	}
	return 0;
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

/* The recording's last block goes out now: a recording that stopped early
 * (a full disk) or could not be completed fails the run. */
static int finish_recording(struct app *a)
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
	/* xputop is left running for days, and its large tables are freed and
	 * rebuilt when they are trimmed or swept.  glibc would raise its mmap
	 * threshold after the first such free and serve later tables from the
	 * heap, which then only grows; a fixed threshold gives them back. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	block_loop_signals();
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

	if (a->o.replay ? open_replay(a) < 0 || start_replay(a) < 0 : start_live(a) < 0)
		goto fail;
	if (a->o.record && start_recording(a) < 0)
		goto fail;
	report_sources(a);
	if (a->o.prometheus && start_prometheus(a) < 0)
		goto fail;
	if (a->o.pprof_dir && start_pprof(a) < 0)
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
		if (a->share_warning[0])
			xpu_warn("%s", a->share_warning);
		crash_app = a;
		install_crash_handlers();
		if (a->prom) {
			char msg[200];
			snprintf(msg, sizeof(msg), "metrics at http://%s/metrics", xpu_prom_http_addr(a->prom));
			xpu_tui_status(msg);
		}
	}
	if (setup_loop(a) < 0 || run_loop(a) < 0)
		a->status = 1;
	share_stop(a);
	if (a->tui) {
		xpu_tui_fini();
		a->tui = 0;
	}
	/* Names still on their way go into the export and the recording. */
	if (a->svc && xpu_service_drain(a->svc, EXIT_WAIT_MS) == 0 && a->sym)
		xpu_sym_flush(a->sym);
	if (a->svc)
		xpu_service_drain(a->svc, EXIT_WAIT_MS);
	if (a->o.export_at_end && export_now(a) < 0)
		a->status = 1;
	if (finish_recording(a) < 0)
		a->status = 1;
	if (a->pprof && write_pprofs(a, NULL, 0) < 0)	/* what the last ones left */
		a->status = 1;
	xpu_push_stop(a->push, EXIT_WAIT_MS * 5);
	goto out;
fail:
	a->status = 1;
out:
	if (a->tui)
		xpu_tui_fini();
	xpu_prom_http_stop(a->prom);
	xpu_metrics_free(a->metrics);
	xpu_pprof_free(a->pprof);
	xpu_mbuf_free(&a->mtext);
	xpu_mbuf_free(&a->mom);
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
	xpu_share_client_free(a->client);
	xpu_sym_free(a->sym);
	xpu_snapshot_free(&a->snap);
	return exit_status(a);
}
