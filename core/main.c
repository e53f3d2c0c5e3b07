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
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "child.h"
#include "config.h"
#include "err.h"
#include "export.h"
#include "import_bpftrace.h"
#include "inject_lib.h"
#include "opts.h"
#include "record.h"
#include "service.h"
#include "session.h"
#include "snapshot.h"
#include "source.h"
#include "source_cpu.h"
#include "source_gpu.h"
#include "source_npu.h"
#include "source_nvml.h"
#include "symbolize.h"
#include "sys.h"
#include "../tui/tui.h"

enum { TAG_TIMER = -1, TAG_SIGNAL = -2, TAG_TTY = -3, TAG_SERVICE = -4 };
/* Jobs waiting for the service thread at most (service.h). */
#define EXACT_KEY_S 60	/* how long e turns exact tracing on, unless --gpu-exact=SECS */
#define SERVICE_QUEUE 4096
/* At exit, how long names still being read may hold it up. */
#define EXIT_WAIT_MS 1000

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
	int tui;
	long refreshes;
	int quit;
	int status;		/* exit status */
	struct xpu_child child;	/* -- CMD */
	int child_done;		/* batch mode ends after the refresh that shows its end */
	struct xpu_settings settings;	/* what the settings file said; S saves */
};

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

static int epoll_add(int epfd, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)tag };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int setup_loop(struct app *a)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->sigfd < 0 || a->epfd < 0 || a->timerfd < 0) {
		xpu_err("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	/* Batch replay runs as fast as it can (the timer fires at once, every
	 * time) unless -d asks for a pace. */
	int fast = (a->replay || a->import) && !a->tui && !(a->o.given & XPU_GIVEN_DELAY);
	uint64_t ns = fast ? 1 : (uint64_t)(a->o.delay_s * 1e9);
	struct itimerspec its = {
		.it_value = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
		.it_interval = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
	};
	timerfd_settime(a->timerfd, 0, &its, NULL);
	epoll_add(a->epfd, a->timerfd, TAG_TIMER);
	epoll_add(a->epfd, a->sigfd, TAG_SIGNAL);
	if (a->tui)
		epoll_add(a->epfd, STDIN_FILENO, TAG_TTY);
	if (a->svc)
		epoll_add(a->epfd, xpu_service_fd(a->svc), TAG_SERVICE);
	for (int i = 0; i < a->sess.nsources; i++) {
		int fd = a->sess.sources[i]->fd(a->sess.sources[i]);
		if (fd >= 0 && epoll_add(a->epfd, fd, i) < 0) {
			xpu_err("cannot poll the %s source: %s", a->sess.sources[i]->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void show(struct app *a)
{
	if (xpu_snapshot_build(&a->snap, &a->sess, &a->vs) < 0)
		xpu_err("out of memory while building the display");
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
	char msg[4400];
	if (xpu_export_view(&a->sess, &a->snap, &a->vs, a->o.outdir, msg, sizeof(msg)) < 0)
		return -1;
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
	if (a->vs.paused)
		return;
	xpu_session_tick(&a->sess, xpu_now_mono(), xpu_now_wall());
	xpu_sym_tick(a->sym, (uint64_t)(a->o.delay_s * 1e9));
	show(a);
	after_refresh(a);
}

static void on_timer(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	if (!a->replay && !a->import)
		live_tick(a);
	else if (!a->vs.paused)
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

static void on_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (a->o.cmd)
				on_child_exit(a);
			continue;
		}
		a->quit = 1;
		if (si.ssi_signo != SIGINT)
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
	int exact = a->sess.cfg.gpu.mode != XPU_GPU_MODE_EXACT;
	double secs = a->o.gpu_exact_s > 0 ? a->o.gpu_exact_s : EXACT_KEY_S;
	xpu_session_gpu_exact(&a->sess, exact, secs, xpu_now_mono());
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
			} else if (tag == TAG_TIMER) {
				on_timer(a);
			} else if (tag == TAG_SIGNAL) {
				on_signal(a);
			} else if (tag == TAG_TTY) {
				on_tty(a);
			} else if (tag == TAG_SERVICE) {
				xpu_service_poll(a->svc);
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
		xpu_err("%s: %s", a->o.replay, err);
		return -1;
	}
	if (xpu_rec_verify(a->replay) < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		return -1;
	}
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
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE, "replaying the bpftrace log %s",
			   a->o.replay);
	xpu_npu_model_source(&a->sess.npu, "bpftrace log", XPU_SRC_ACTIVE,
			     "%llu calls over %.1f s (%llu of them also job, IPC, memory or power events), "
			     "%llu lines not understood%s",
			     (unsigned long long)st->calls, (double)(st->last_ms - st->first_ms) / 1e3,
			     (unsigned long long)st->mapped, (unsigned long long)st->bad, st->truncated ? ", cut at 512 MiB" : "");
	if (st->bad)
		xpu_warn("%s: %llu lines not understood (the first is line %llu); they are left out",
			 a->o.replay, (unsigned long long)st->bad, (unsigned long long)st->first_bad);
	if (st->summary && st->summary_calls != st->calls)
		xpu_warn("%s: the @calls summary counts %llu calls, the log has %llu lines of them",
			 a->o.replay, (unsigned long long)st->summary_calls, (unsigned long long)st->calls);
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

static int start_live(struct app *a)
{
	struct xpu_session_cfg cfg = session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	int *cpus = NULL;

	if (xpu_sys_check_root() < 0)
		return -1;
	/* Without BTF no BPF program loads; the rest still works (one message). */
	int bpf = xpu_sys_check_btf() == 0;
	xpu_sys_libbpf_logging(a->o.verbose);
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	int n = xpu_sys_online_cpus(&cpus);
	free(cpus);
	a->sess.ncpus = n > 0 ? (uint32_t)n : 0;
	a->svc = xpu_service_new(SERVICE_QUEUE);
	if (!a->svc) {
		xpu_err("cannot start the service thread: %s", strerror(errno));
		return -1;
	}
	a->sym = xpu_sym_new(&a->sess.dict, a->svc);
	if (!a->sym)
		return -1;
	const char *lib = xpu_inject_lib_path();
	if (a->o.cmd && start_child(a, lib) < 0)
		return -1;
	struct xpu_cpu_source_opts co = {
		.hz = a->o.hz, .pids = a->o.pids, .npids = a->o.npids, .follow_forks = a->o.cmd != NULL,
	};
	/* A CPU sampler that cannot load (said why) leaves the other views. */
	struct xpu_source *cpu = bpf ? xpu_source_cpu_new(&a->sess, a->sym, &co) : NULL;
	if (cpu)
		xpu_session_add_source(&a->sess, cpu);
	else
		xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_FAILED, "%s",
				   bpf ? "CPU sampling is off: its BPF program did not load (see the message at start)"
				       : "CPU sampling is off: this kernel has no usable BTF for BPF programs");
	struct xpu_source *gpu = xpu_source_gpu_new(&a->sess, a->sym, a->svc, lib, a->o.gpu_no_stacks, !bpf);
	if (!gpu)
		return -1;
	xpu_session_add_source(&a->sess, gpu);
	struct xpu_npu_source_opts no = {
		.dev_path = a->o.npu_dev, .probe_binary = a->o.npu_probe_binary, .sysfs_root = a->o.npu_sysfs,
		.pids = a->o.pids, .npids = a->o.npids,
	};
	struct xpu_source *npu = bpf ? xpu_source_npu_new(&a->sess, &no) : NULL;
	if (npu)
		xpu_session_add_source(&a->sess, npu);
	else if (bpf && (a->o.npu_dev || a->o.npu_probe_binary))
		return -1;	/* what was asked for by name cannot be done */
	else if (!bpf)
		xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_FAILED, "%s",
				   "NPU tracing is off: this kernel has no usable BTF for BPF programs");
	if (start_nvml(a) < 0)
		return -1;
	a->sess.last_tick_mono = xpu_now_mono();
	if (a->o.cmd && xpu_child_release(&a->child, a->o.cmd[0]) < 0)
		return -1;
	return 0;
}

static int start_recording(struct app *a)
{
	struct xpu_rec_meta m = {
		.sample_hz = a->sess.cfg.sample_hz,
		.ncpus = a->sess.ncpus,
		.start_wall_ns = xpu_now_wall(),
		.interval_ns = (uint64_t)(a->o.delay_s * 1e9),
	};
	struct utsname u;
	char err[512];
	memcpy(m.host, a->sess.host, sizeof(m.host) - 1);
	if (uname(&u) == 0)
		memcpy(m.kernel, u.release, sizeof(m.kernel) - 1);
	snprintf(m.version, sizeof(m.version), "%s", XPU_VERSION);
	a->sess.rec = xpu_rec_create(a->o.record, &a->sess.dict, &m, err, sizeof(err));
	if (!a->sess.rec) {
		xpu_err("%s", err);	/* names the file already */
		return -1;
	}
	return 0;
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
	int r = xpu_opts_parse(&a->o, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (a->o.verbose)
		xpu_log_set_level(XPU_LOG_DEBUG);
	xpu_viewstate_init(&a->vs);
	xpu_settings_init(&a->settings);
	if (!a->o.no_config) {
		if (xpu_config_load(&a->settings, a->o.config) < 0)
			return 1;
		xpu_config_apply(&a->settings, &a->o, &a->vs);
	}
	if (a->o.view >= 0)
		a->vs.view = a->o.view;
	xpu_snapshot_init(&a->snap);
	xpu_session_init(&a->sess);
	a->tui = !a->o.batch;
	a->snap.no_flames = !a->tui;	/* text and JSON show no flamegraph: a replay runs 1.5x as fast */

	if (a->o.replay ? open_replay(a) < 0 || start_replay(a) < 0 : start_live(a) < 0)
		goto fail;
	if (a->o.record && start_recording(a) < 0)
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
		crash_app = a;
		install_crash_handlers();
	}
	if (setup_loop(a) < 0 || run_loop(a) < 0)
		a->status = 1;
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
	goto out;
fail:
	a->status = 1;
out:
	if (a->tui)
		xpu_tui_fini();
	/* Its last jobs' done() touch the sources and the dictionary. */
	xpu_service_free(a->svc, 0);
	xpu_session_free(&a->sess);
	if (a->replay)
		xpu_rec_close_reader(a->replay);
	xpu_import_free(a->import);
	xpu_sym_free(a->sym);
	xpu_snapshot_free(&a->snap);
	return a->status;
}
