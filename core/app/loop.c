/* SPDX-License-Identifier: GPL-2.0-only */
/* The main loop: it waits on the event set (events.c) and does what each
 * event asks: a refresh (live: role.c; or a replay's next tick), a signal
 * (SIGHUP's reload, the command's end, quitting), a key. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "config.h"
#include "dict.h"
#include "err.h"
#include "import_bpftrace.h"
#include "pprof_push.h"
#include "prom_http.h"
#include "record.h"
#include "role.h"
#include "service.h"
#include "source.h"
#include "symbolize.h"
#include "tui.h"

/* Replay: feeds the recording's events up to and including its next tick.
 * 1: a tick was fed; 0: the recording ended (or is damaged: r < 0). */
static int replay_feed(struct app *a, int *r)
{
	struct xpu_event ev;
	while ((*r = a->import ? xpu_import_next(a->import, &ev) : xpu_rec_next(a->replay, &ev)) > 0) {
		xpu_session_emit(&a->sess, &ev);
		if (ev.type == XPU_EV_TICK)
			return 1;
	}
	return 0;
}

static void replay_ended(struct app *a, int r);

/* Replay: the next tick, shown. */
static void replay_step(struct app *a)
{
	int r;
	if (a->sess.replay_done)
		return;
	if (replay_feed(a, &r)) {
		app_show(a);
		app_after_refresh(a);
		return;
	}
	replay_ended(a, r);
}

/* The refreshes of the recording, counted once with a dictionary of its
 * own (the position's "of N"); 0 where it cannot be read again. */
static uint64_t replay_count(const char *path)
{
	struct xpu_dict d;
	struct xpu_event ev;
	char err[256];
	uint64_t n = 0;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	if (r && xpu_rec_verify(r) == 0)
		while (xpu_rec_next(r, &ev) > 0)
			n += ev.type == XPU_EV_TICK;
	if (r)
		xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	return n;
}

/* Back to the recording's start: a fresh session, the reader opened again
 * (the models cannot go back, so a step back is a replay up to there). */
static int replay_rewind(struct app *a)
{
	xpu_rec_close_reader(a->replay);
	a->replay = NULL;
	xpu_session_free(&a->sess);
	xpu_session_init(&a->sess);
	return app_open_replay(a) < 0 || app_start_replay(a) < 0 ? -1 : 0;
}

/* Replay, TUI: moves by vs.seek refreshes (Right, Left; Shift: ten), to
 * refresh 1 at the least, the last at the most, and shows it. */
static void replay_seek(struct app *a)
{
	int64_t to = (int64_t)a->sess.ticks + a->vs.seek;
	uint64_t total = a->replay_ticks;
	int r = 0;
	a->vs.seek = 0;
	if (a->import)
		return;	/* a bpftrace log has no refreshes to count */
	if (to < 1)
		to = 1;
	if (total && (uint64_t)to > total)
		to = (int64_t)total;
	if ((uint64_t)to < a->sess.ticks && replay_rewind(a) < 0) {
		a->quit = 1;
		a->status = 1;
		return;
	}
	while (a->sess.ticks < (uint64_t)to && !a->sess.replay_done)
		if (!replay_feed(a, &r)) {
			replay_ended(a, r);	/* shows the end */
			return;
		}
	app_show(a);
}

static void replay_ended(struct app *a, int r)
{
	a->sess.replay_done = 1;
	if (r < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		a->status = 1;
	}
	if (a->tui) {
		xpu_tui_status("end of the recording: q quits");
		app_show(a);
	} else if (a->out.prom && !a->o.iterations) {
		/* the last refresh stays there to be scraped */
		fprintf(stderr, "xputop: end of the recording; metrics stay at http://%s/metrics until "
			"interrupted\n", xpu_prom_http_addr(a->out.prom));
	} else {
		a->quit = 1;
	}
}

static void on_timer(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	if (a->role.collecting) {
		app_role_tick(a);
		app_rephase_timer(a);
	} else if (!a->replay && !a->import && !a->role.client) {
		app_role_retry(a);
	} else if ((a->replay || a->import) && !a->vs.paused) {
		replay_step(a);
	}
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
	if (a->out.push && a->o.pprof_push_headers) {
		char *headers = NULL, err[400];
		if (xpu_push_read_headers(a->o.pprof_push_headers, &headers, err, sizeof(err)) < 0) {
			xpu_warn("SIGHUP: --pprof-headers: %s; the headers stay as they were", err);
		} else {
			xpu_push_set_headers(a->out.push, headers);
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
		app_export_now(a);
	if (r & XPU_REACT_GPU_EXACT)
		app_role_switch_gpu_tracing(a);
	if ((r & XPU_REACT_SEEK) && a->replay) {
		replay_seek(a);
		r &= ~XPU_REACT_REDRAW;
	}
	if (r & XPU_REACT_REBUILD) {
		if (xpu_snapshot_build(&a->snap, &a->sess, &a->vs) < 0)
			xpu_err("out of memory while building the display");
		xpu_viewstate_settle(&a->vs, &a->snap);
		r |= XPU_REACT_REDRAW;
	}
	if (r & XPU_REACT_REDRAW)
		xpu_tui_draw(&a->snap, &a->vs);
}

int app_run_loop(struct app *a)
{
	if (a->tui && a->replay)
		a->replay_ticks = replay_count(a->o.replay);
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
				if (src == a->role.server)	/* a client came, left or told its needs */
					app_role_needs(a, 0);
			} else if (tag == TAG_TIMER) {
				on_timer(a);
			} else if (tag == TAG_SIGNAL) {
				on_signal(a);
			} else if (tag == TAG_TTY && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
				/* The terminal is gone (its emulator or ssh session
				 * closed) without a SIGHUP reaching xputop: in a session
				 * of its own (setsid), or with the hangup left to a shell
				 * that did not pass it on.  It ends as on SIGHUP, rather
				 * than refresh for nobody, its reads failing at once. */
				a->quit = 1;
				a->status = 128 + SIGHUP;
			} else if (tag == TAG_TTY) {
				on_tty(a);
			} else if (tag == TAG_SERVICE) {
				xpu_service_poll(a->svc);
			} else if (tag == TAG_SHARE && a->role.client) {
				app_role_input(a);
			} else if (tag == TAG_KEEPER) {
				app_role_keeper_gone(a);
			}
		}
		if (a->sym)	/* names asked for while draining go to the service */
			xpu_sym_flush(a->sym);
	}
	return 0;
}
