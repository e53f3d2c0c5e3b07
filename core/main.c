/* xputop's main loop: sources -> session (stream, recorder, models) ->
 * snapshot -> front-end (TUI, text or JSON), driven by one epoll set holding
 * the sources' descriptors, a refresh timer, signals and the terminal. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "batch.h"
#include "err.h"
#include "export.h"
#include "opts.h"
#include "record.h"
#include "session.h"
#include "snapshot.h"
#include "source.h"
#include "source_cpu.h"
#include "symbolize.h"
#include "sys.h"
#include "../tui/tui.h"

enum { TAG_TIMER = -1, TAG_SIGNAL = -2, TAG_TTY = -3 };

struct app {
	struct xpu_opts o;
	struct xpu_session sess;
	struct xpu_snapshot snap;
	struct xpu_viewstate vs;
	struct xpu_symbolizer *sym;
	struct xpu_rec_reader *replay;
	int epfd, timerfd, sigfd;
	int tui;
	long refreshes;
	int quit;
	int status;		/* exit status */
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
	/* Batch replay runs as fast as it can: the timer fires at once, every time. */
	uint64_t ns = a->replay && !a->tui ? 1 : (uint64_t)(a->o.delay_s * 1e9);
	struct itimerspec its = {
		.it_value = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
		.it_interval = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
	};
	timerfd_settime(a->timerfd, 0, &its, NULL);
	epoll_add(a->epfd, a->timerfd, TAG_TIMER);
	epoll_add(a->epfd, a->sigfd, TAG_SIGNAL);
	if (a->tui)
		epoll_add(a->epfd, STDIN_FILENO, TAG_TTY);
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
	if (a->tui)
		xpu_tui_draw(&a->snap, &a->vs);
	else if (a->o.json)
		xpu_batch_json(stdout, &a->snap, &a->sess, &a->vs);
	else
		xpu_batch_text(stdout, &a->snap);
}

static void export_now(struct app *a)
{
	char msg[4400];
	if (xpu_export_view(&a->sess, &a->snap, &a->vs, a->o.outdir, msg, sizeof(msg)) >= 0) {
		if (a->tui)
			xpu_tui_status(msg);
		else
			fprintf(stderr, "xputop: %s\n", msg);
	}
}

static void after_refresh(struct app *a)
{
	a->refreshes++;
	if (a->o.iterations && a->refreshes >= a->o.iterations)
		a->quit = 1;
}

/* Replay: feed the recording's events up to and including its next tick. */
static void replay_step(struct app *a)
{
	struct xpu_event ev;
	int r;
	if (a->sess.replay_done)
		return;
	while ((r = xpu_rec_next(a->replay, &ev)) > 0) {
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
	for (int i = 0; i < a->sess.nsources; i++) {
		struct xpu_source *src = a->sess.sources[i];
		src->drain(src, &a->sess);
		if (src->tick)
			src->tick(src, &a->sess);
	}
	if (a->vs.paused)
		return;
	xpu_session_tick(&a->sess, xpu_now_mono(), xpu_now_wall());
	show(a);
	after_refresh(a);
}

static void on_timer(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	if (!a->replay)
		live_tick(a);
	else if (!a->vs.paused)
		replay_step(a);
}

static void on_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		a->quit = 1;
		if (si.ssi_signo != SIGINT)
			a->status = 128 + (int)si.ssi_signo;
	}
}

static void on_tty(struct app *a)
{
	int r = xpu_tui_input(&a->snap, &a->vs);
	if (r & XPU_REACT_QUIT)
		a->quit = 1;
	if (r & XPU_REACT_EXPORT)
		export_now(a);
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
			}
		}
	}
	return 0;
}

static struct xpu_session_cfg session_cfg(const struct xpu_opts *o, uint32_t hz, uint64_t interval)
{
	struct xpu_session_cfg c = {
		.sample_hz = hz,
		.interval_ns = interval,
		.window_ns = (uint64_t)(o->window_s * 1e9),
	};
	return c;
}

static int open_replay(struct app *a)
{
	char err[512];
	a->replay = xpu_rec_open(a->o.replay, &a->sess.dict, err, sizeof(err));
	if (!a->replay) {
		xpu_err("%s: %s", a->o.replay, err);
		return -1;
	}
	if (xpu_rec_verify(a->replay) < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		return -1;
	}
	return 0;
}

static int start_replay(struct app *a)
{
	const struct xpu_rec_meta *m = xpu_rec_meta(a->replay);
	struct xpu_session_cfg cfg = session_cfg(&a->o, m->sample_hz, m->interval_ns);
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	a->sess.replay = 1;
	a->sess.ncpus = m->ncpus;
	snprintf(a->sess.host, sizeof(a->sess.host), "%s", m->host);
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "%s", a->o.replay);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE, "replaying %s (recorded on %s, %s)",
			   a->o.replay, m->host, m->kernel);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_OFF, "the recording holds no GPU activity");
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_OFF, "the recording holds no NPU activity");
	if (a->o.delay_s == 1.0 && m->interval_ns)	/* replay at the recorded pace by default */
		a->o.delay_s = (double)m->interval_ns / 1e9;
	return 0;
}

static int start_live(struct app *a)
{
	struct xpu_session_cfg cfg = session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	int *cpus = NULL;

	if (xpu_sys_check_root() < 0 || xpu_sys_check_btf() < 0)
		return -1;
	xpu_sys_libbpf_logging(a->o.verbose);
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	int n = xpu_sys_online_cpus(&cpus);
	free(cpus);
	a->sess.ncpus = n > 0 ? (uint32_t)n : 0;
	a->sym = xpu_sym_new(&a->sess.dict);
	if (!a->sym)
		return -1;
	struct xpu_cpu_source_opts co = { .hz = a->o.hz, .pids = a->o.pids, .npids = a->o.npids };
	struct xpu_source *cpu = xpu_source_cpu_new(&a->sess, a->sym, &co);
	if (!cpu)
		return -1;
	xpu_session_add_source(&a->sess, cpu);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_OFF,
			   "no GPU data source yet: GPU kernels will show here once the GPU source exists");
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_OFF,
			   "no NPU data source yet: Intel NPU activity will show here once the NPU source exists");
	a->sess.last_tick_mono = xpu_now_mono();
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
	snprintf(m.host, sizeof(m.host), "%.*s", (int)sizeof(m.host) - 1, a->sess.host);
	if (uname(&u) == 0)
		snprintf(m.kernel, sizeof(m.kernel), "%s", u.release);
	snprintf(m.version, sizeof(m.version), "%s", XPU_VERSION);
	a->sess.rec = xpu_rec_create(a->o.record, &a->sess.dict, &m, err, sizeof(err));
	if (!a->sess.rec) {
		xpu_err("%s", err);	/* names the file already */
		return -1;
	}
	return 0;
}

static void tui_log_fallback(void)
{
	xpu_log_set_sink(NULL, NULL);
}

int main(int argc, char **argv)
{
	static struct app app;
	struct app *a = &app;
	int r = xpu_opts_parse(&a->o, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	if (a->o.verbose)
		xpu_log_set_level(XPU_LOG_DEBUG);
	if (a->o.cmd) {
		xpu_err("running a command under xputop (-- CMD) is not available yet");
		return 2;
	}
	xpu_viewstate_init(&a->vs);
	if (a->o.view >= 0)
		a->vs.view = a->o.view;
	xpu_snapshot_init(&a->snap);
	xpu_session_init(&a->sess);
	a->tui = !a->o.batch;

	if (a->o.replay ? open_replay(a) < 0 || start_replay(a) < 0 : start_live(a) < 0)
		goto fail;
	if (a->o.record && start_recording(a) < 0)
		goto fail;
	if (a->tui) {
		struct xpu_tui_opts to = { .theme = a->o.theme, .no_color = getenv("NO_COLOR") && *getenv("NO_COLOR") };
		if (xpu_tui_init(&to) < 0)
			goto fail;
		crash_app = a;
		install_crash_handlers();
	}
	if (setup_loop(a) < 0 || run_loop(a) < 0)
		a->status = 1;
	if (a->tui) {
		xpu_tui_fini();
		tui_log_fallback();
		a->tui = 0;
	}
	if (a->o.export_at_end)
		export_now(a);
	goto out;
fail:
	a->status = 1;
out:
	if (a->tui)
		xpu_tui_fini();
	xpu_session_free(&a->sess);
	if (a->replay)
		xpu_rec_close_reader(a->replay);
	xpu_sym_free(a->sym);
	xpu_snapshot_free(&a->snap);
	return a->status;
}
