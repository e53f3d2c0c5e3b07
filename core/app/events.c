/* SPDX-License-Identifier: GPL-2.0-only */
/* The main loop's event set: one epoll set holding the sources'
 * descriptors, the refresh timer, the signals and the terminal (and a
 * client's stream from its collector); what joins it, and when the timer
 * fires.  What each event does is loop.c's. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "app.h"
#include "err.h"
#include "service.h"
#include "share.h"
#include "source.h"
#include "sys.h"

int app_epoll_add(int epfd, int fd, int tag)
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

void app_block_loop_signals(void)
{
	sigset_t set;
	loop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Sources added since the last call (at start, or at a takeover) join the
 * epoll set. */
int app_poll_new_sources(struct app *a)
{
	for (int i = a->first_new_source; i < a->sess.nsources; i++) {
		int fd = a->sess.sources[i]->fd(a->sess.sources[i]);
		if (fd >= 0 && app_epoll_add(a->epfd, fd, i) < 0) {
			xpu_err("cannot poll the %s source: %s", a->sess.sources[i]->name, strerror(errno));
			return -1;
		}
	}
	a->first_new_source = a->sess.nsources;
	return 0;
}

/* The timer fires every ns from now. */
void app_set_timer(struct app *a, uint64_t ns)
{
	struct itimerspec its = {
		.it_value = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
		.it_interval = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
	};
	timerfd_settime(a->timerfd, 0, &its, NULL);
	a->timer_ns = ns;
	a->timer_next = xpu_now_mono() + ns;
	if (!a->timer_rand)
		a->timer_rand = (a->timer_next << 17) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
}

/* A refresh on a fixed period falls at one phase of the sampling timers'
 * period forever (1 s is a whole number of periods at any whole -F), so
 * its work (the snapshot, /proc reads) was sampled at every refresh or at
 * none: xputop's own row showed 6-18% at freq 50 in the thread view where
 * the kernel said under 1% (issue 28).  Each refresh is moved by a random
 * part of the sampling period (at most half the refresh), keeping the
 * refreshes' cadence: sampled as often as it runs, no more. */
void app_rephase_timer(struct app *a)
{
	uint64_t now = xpu_now_mono(), span = a->o.hz ? 1000000000ULL / a->o.hz : 0;
	if (a->timer_ns < 2 || !span)
		return;	/* fast replay, or no sampling */
	if (span > a->timer_ns / 2)
		span = a->timer_ns / 2;
	while (a->timer_next <= now)
		a->timer_next += a->timer_ns;
	a->timer_rand ^= a->timer_rand << 13;
	a->timer_rand ^= a->timer_rand >> 7;
	a->timer_rand ^= a->timer_rand << 17;
	uint64_t at = a->timer_next + a->timer_rand % span;
	struct itimerspec its = {
		.it_value = { (time_t)(at / 1000000000ULL), (long)(at % 1000000000ULL) },
		.it_interval = { (time_t)(a->timer_ns / 1000000000ULL), (long)(a->timer_ns % 1000000000ULL) },
	};
	timerfd_settime(a->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The refresh timer, from now. */
void app_arm_timer(struct app *a)
{
	/* Batch replay runs as fast as it can (the timer fires at once, every
	 * time) unless -d asks for a pace.  A bpftrace log has no refreshes of
	 * its own: there -d is the step through the log's time, never a pace. */
	int fast = !a->tui && (a->import || (a->replay && !(a->o.given & XPU_GIVEN_DELAY)));
	/* A collector ticks its stream at the shortest -d of the xputops
	 * attached, its own view keeps its own (session.h: pace). */
	uint64_t ns = a->role.collecting && a->role.stream_ns ? a->role.stream_ns : (uint64_t)(a->o.delay_s * 1e9);
	app_set_timer(a, fast ? 1 : ns);
}

int app_setup_loop(struct app *a)
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
	app_arm_timer(a);
	app_epoll_add(a->epfd, a->timerfd, TAG_TIMER);
	app_epoll_add(a->epfd, a->sigfd, TAG_SIGNAL);
	if (a->tui)
		app_epoll_add(a->epfd, STDIN_FILENO, TAG_TTY);
	if (a->svc)
		app_epoll_add(a->epfd, xpu_service_fd(a->svc), TAG_SERVICE);
	if (a->role.client)
		app_role_watch(a);
	return app_poll_new_sources(a);
}
