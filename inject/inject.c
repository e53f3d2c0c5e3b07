/* SPDX-License-Identifier: GPL-2.0-only */
/* libxputop_inject.so: CUDA loads it through CUDA_INJECTION64_PATH and calls
 * InitializeInjection().  An agent thread looks for an xputop once a second
 * (one failed connect() when none runs); when one accepts, CUPTI is started
 * and batches flow every flush period; when the connection ends, for any
 * reason, CUPTI is stopped and the library is dormant again. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "inject.h"

#define CHAN_BYTES (4u << 20)
#define STATUS_EVERY_NS 1000000000ULL
/* How often the agent looks at a slice's kernels after it, until CUPTI is detached. */
#define SETTLE_MS 2
/* At exit, how long the process may wait for a slow xputop to take what is
 * left and the final count (only when one is connected and behind). */
#define EXIT_WAIT_NS 500000000ULL

static struct {
	pthread_mutex_t lock;	/* fd and active, against the exit handler */
	struct xpu_chan *chan;
	int fd;
	int active;
	uint32_t state;
	uint32_t flush_ms;
	int status_due;		/* the last status did not go out */
	struct xpu_sched sched;	/* when CUPTI traces */
	uint64_t slice_start;	/* while tracing: since when */
	int whole_span;		/* the span traced now is on throughout (XPU_WIRE_WHOLE) */
	uint64_t traced_ns, toggle_ns;
	uint32_t toggles;
	char path[108];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static int connect_monitor(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", g.path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	/* Only root's xputop (or one of our own user's) hears about us: a
	 * socket planted by someone else gets nothing, not even a HELLO. */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != getuid())) {
		static int said;
		xpu_inj_say_once(&said, "%s belongs to a process of uid %d, not root's xputop: not connecting",
				 g.path, (int)cred.uid);
		close(fd);
		return -1;
	}
	return fd;
}

/* The status goes in a packet of its own, never through the buffer, so a
 * full buffer cannot lose the count of what it dropped.  Returns 0, or -1
 * when the socket cannot take it now (it is sent again next round). */
static int send_status(int fd)
{
	struct {
		struct xpu_wire_msg m;
		struct xpu_wire_rec h;
		struct xpu_wire_status s;
	} __attribute__((packed)) pkt = {
		.m = { .magic = XPU_WIRE_MAGIC, .version = XPU_WIRE_VERSION, .nrecs = 1, .len = sizeof(pkt) },
		.h = { .type = XPU_WIRE_STATUS, .len = sizeof(struct xpu_wire_status) },
		.s = {
			.dropped = xpu_chan_dropped(g.chan),
			.cupti_dropped = xpu_cupti_dropped(),
			.launches = xpu_inj_launches(),
			.sites = xpu_sites_count(),
			.state = g.state,
			.detach = xpu_cupti_detach_state(),
			.kernels = xpu_inj_kernels(),
			.kernels_dropped = xpu_chan_dropped_type(g.chan, XPU_WIRE_KERNEL),
			.launches_dropped = xpu_chan_dropped_type(g.chan, XPU_WIRE_LAUNCH),
			.traced_ns = g.traced_ns,
			.toggle_ns = g.toggle_ns,
			.toggles = g.toggles,
			.mode = g.sched.mode.mode,
		},
	};
	g.status_due = send(fd, &pkt, sizeof(pkt), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(pkt);
	return g.status_due ? -1 : 0;
}

/* The process's name: its main thread's, not this agent thread's. */
static void process_name(char comm[16])
{
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, comm, 15) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		n = 0;
	while (n > 0 && comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
}

static int send_hello(int fd)
{
	struct xpu_wire_hello h = { .pid = (uint32_t)getpid(), .cupti_version = xpu_cupti_version() };
	process_name(h.comm);
	xpu_chan_put(g.chan, XPU_WIRE_HELLO, &h, sizeof(h), NULL, 0);
	return xpu_chan_send(g.chan, fd);
}

/* Waits up to ms for a packet from xputop; returns its first record's type
 * (START fills *start, MODE start->mode), 0 on timeout, -1 when the
 * connection is gone. */
static int read_control(int fd, int ms, struct xpu_wire_start *start)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[256];
	int r = poll(&p, 1, ms);
	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : 0;
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n <= 0)
		return n == 0 || errno != EAGAIN ? -1 : 0;
	struct xpu_wire_msg m;
	struct xpu_wire_rec h;
	if ((size_t)n < sizeof(m) + sizeof(h))
		return -1;
	memcpy(&m, buf, sizeof(m));
	memcpy(&h, buf + sizeof(m), sizeof(h));
	if (m.magic != XPU_WIRE_MAGIC || m.version != XPU_WIRE_VERSION)
		return -1;
	const char *body = buf + sizeof(m) + sizeof(h);
	if (h.type == XPU_WIRE_START && h.len >= sizeof(*start) &&
	    (size_t)n >= sizeof(m) + sizeof(h) + sizeof(*start))
		memcpy(start, body, sizeof(*start));
	if (h.type == XPU_WIRE_MODE && h.len >= sizeof(start->mode) &&
	    (size_t)n >= sizeof(m) + sizeof(h) + sizeof(start->mode))
		memcpy(&start->mode, body, sizeof(start->mode));
	return h.type;
}

/* The span just traced, for xputop's share of time covered.  None while
 * CUPTI refused or another profiler has it: the schedule goes on, but
 * nothing is traced (the slices were counted, and such a process read as
 * traced 2% of the time, tests/bpf/cupti.sh). */
static void put_slice(uint64_t start, uint64_t end)
{
	struct xpu_wire_slice sl = { start, end };
	if (end > start && g.state == XPU_WIRE_STATE_OK) {
		xpu_chan_put(g.chan, g.whole_span ? XPU_WIRE_WHOLE : XPU_WIRE_SLICE, &sl, sizeof(sl), NULL, 0);
		g.traced_ns += end - start;
	}
}

/* Switches CUPTI as the schedule says, timing the switch (under the lock:
 * the exit flush closes the slice too); a span switched off ends at end
 * (0: now). */
static void switch_tracing_at(int act, uint64_t end)
{
	pthread_mutex_lock(&g.lock);
	uint64_t t0 = xpu_inj_now();
	if (act == XPU_SCHED_OFF)
		put_slice(g.slice_start, end && end < t0 ? end : t0);
	/* A slice attaches CUPTI again; another profiler may have taken it
	 * meanwhile (and may give it back), or CUPTI's ids stuck and it is
	 * being detached: the state follows. */
	int on = act != XPU_SCHED_OFF;
	if (g.state == XPU_WIRE_STATE_OK ||
	    (on && (g.state == XPU_WIRE_STATE_OTHER_SUBSCRIBER || g.state == XPU_WIRE_STATE_IDS_STUCK))) {
		uint32_t state = (uint32_t)xpu_cupti_trace(act == XPU_SCHED_WHOLE ? 2 : on);
		if (state != g.state) {
			g.state = state;
			g.status_due = 1;
		}
	}
	uint64_t t1 = xpu_inj_now();
	g.toggle_ns += t1 - t0;
	if (on) {
		g.toggles++;
		g.slice_start = t1;
		g.whole_span = act == XPU_SCHED_WHOLE;
		/* The slice is its length of tracing, switching on not counted. */
		xpu_sched_started(&g.sched, t1);
	}
	pthread_mutex_unlock(&g.lock);
}

static void switch_tracing(int act)
{
	switch_tracing_at(act, 0);
}

/* CUPTI's ids stuck (inject/cupti.c): what was traced from then on cannot
 * be joined, so the span on ends where they were seen stuck (one on
 * throughout goes on throughout again, xpu_sched_end), and nothing is
 * switched on until CUPTI is detached (never, where it may not be: the
 * state then says so, and slices are not counted). */
static void unstick(uint64_t now)
{
	uint64_t at;
	if (!xpu_cupti_stuck(&at))
		return;
	if (xpu_sched_end(&g.sched, now) == XPU_SCHED_OFF)
		switch_tracing_at(XPU_SCHED_OFF, at);
	pthread_mutex_lock(&g.lock);
	g.state = XPU_WIRE_STATE_IDS_STUCK;
	g.status_due = 1;
	pthread_mutex_unlock(&g.lock);
}

/* Exact mode's one long slice, and a span on throughout, are reported in
 * pieces at every flush, and when the mode changes, so that xputop's
 * coverage lags by one flush.  A span that began after now (switched on
 * since: attaching CUPTI took 7-110 ms on the H200) is not moved back to
 * it: that time was not traced. */
static void report_piece(uint64_t now)
{
	pthread_mutex_lock(&g.lock);
	if (g.sched.on && (g.sched.mode.mode == XPU_WIRE_MODE_EXACT || g.whole_span) && now > g.slice_start) {
		put_slice(g.slice_start, now);
		g.slice_start = now;
	}
	pthread_mutex_unlock(&g.lock);
}

/* Runs what the schedule says is due; returns the ms to wait at most. */
static int run_schedule(void)
{
	uint64_t now = xpu_inj_now();
	int act;
	unstick(now);
	if (xpu_cupti_recovering())
		return (int)g.flush_ms;
	g.sched.launches = xpu_inj_launches();
	g.sched.graph_kernels = xpu_inj_graph_kernels();
	while ((act = xpu_sched_due(&g.sched, now)) != XPU_SCHED_NONE)
		switch_tracing(act);
	report_piece(now);
	uint64_t wait = xpu_sched_wait(&g.sched, xpu_inj_now());
	int ms = wait < (uint64_t)g.flush_ms * 1000000ULL ? (int)(wait / 1000000ULL) + 1 : (int)g.flush_ms;
	/* After a slice, CUPTI's cost stays on every launch until the slice's
	 * kernels have their records and it is detached: looked at every
	 * SETTLE_MS then, not only at the flushes. */
	return ms > SETTLE_MS && xpu_cupti_settling() ? SETTLE_MS : ms;
}

static void set_active(int fd, int active)
{
	pthread_mutex_lock(&g.lock);
	g.fd = fd;
	g.active = active;
	pthread_mutex_unlock(&g.lock);
}

/* One connection's life: HELLO, START, batches until it ends. */
static void serve(int fd)
{
	struct xpu_wire_start start = { .flush_ms = 20 };
	xpu_chan_reset(g.chan);
	if (send_hello(fd) < 0 || read_control(fd, 2000, &start) != XPU_WIRE_START)
		return;
	g.flush_ms = start.flush_ms >= 5 && start.flush_ms <= 1000 ? start.flush_ms : 20;
	xpu_cupti_reset_counts();
	g.traced_ns = g.toggle_ns = 0;
	g.toggles = 0;
	g.sched = (struct xpu_sched){ 0 };
	g.whole_span = 0;
	xpu_sched_mode(&g.sched, &start.mode, xpu_inj_now(), xpu_inj_now() ^ (uint64_t)getpid() << 32);
	g.state = xpu_cupti_start(g.chan, start.flags);
	set_active(fd, 1);
	send_status(fd);
	uint64_t last_status = xpu_inj_now();
	for (;;) {
		int r = read_control(fd, run_schedule(), &start);
		if (r < 0 || r == XPU_WIRE_STOP)
			break;
		if (r == XPU_WIRE_MODE) {
			report_piece(xpu_inj_now());
			/* A span on throughout ends here: what follows is the
			 * new mode's. */
			if (g.sched.on && g.whole_span) {
				switch_tracing(XPU_SCHED_OFF);
				g.sched.on = g.sched.whole = 0;
			}
			xpu_sched_mode(&g.sched, &start.mode, xpu_inj_now(), xpu_inj_now());
			send_status(fd);
		}
		if (g.state == XPU_WIRE_STATE_OK)
			xpu_cupti_flush(0);
		if (xpu_chan_send(g.chan, fd) < 0)
			break;
		if (g.status_due || xpu_inj_now() - last_status >= STATUS_EVERY_NS) {
			send_status(fd);
			last_status = xpu_inj_now();
		}
	}
	set_active(-1, 0);
	if (g.sched.on)
		switch_tracing(XPU_SCHED_OFF);
	xpu_cupti_stop();
	xpu_chan_reset(g.chan);
}

static void *agent(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "xputop-agent");
	for (;;) {
		int fd = connect_monitor();
		if (fd >= 0) {
			serve(fd);
			close(fd);
		}
		sleep(1);
	}
	return arg;
}

/* Waits until fd can take more, or the deadline passes; 0 when it can. */
static int wait_writable(int fd, uint64_t deadline)
{
	uint64_t now = xpu_inj_now();
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (now >= deadline)
		return -1;
	return poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1) == 1 && (p.revents & POLLOUT) ? 0 : -1;
}

/* At exit, whatever completed is flushed and sent while the monitor listens,
 * then the final count.  This is the one place the library waits for
 * xputop, and only while one is connected and behind, at most EXIT_WAIT_NS:
 * otherwise what is left would be lost without a word. */
static void on_exit_flush(void)
{
	xpu_cupti_at_exit();
	const char *stats = getenv("XPUTOP_INJECT_STATS");
	if (stats && strcmp(stats, "1") == 0)
		xpu_cupti_print_stats();
	pthread_mutex_lock(&g.lock);
	if (g.active && g.fd >= 0) {
		uint64_t deadline = xpu_inj_now() + EXIT_WAIT_NS;
		if (g.sched.on) {	/* the slice ends here: nothing after is traced */
			put_slice(g.slice_start, xpu_inj_now());
			g.slice_start = xpu_inj_now();
		}
		if (g.state == XPU_WIRE_STATE_OK)
			xpu_cupti_flush(1);
		while (xpu_chan_send(g.chan, g.fd) == 0 && xpu_chan_pending(g.chan) &&
		       wait_writable(g.fd, deadline) == 0)
			;
		while (send_status(g.fd) < 0 && wait_writable(g.fd, deadline) == 0)
			;
	}
	pthread_mutex_unlock(&g.lock);
}

/* A forked child shares the parent's socket but has no agent thread and no
 * usable CUDA: it stays silent. */
static void after_fork_child(void)
{
	g.active = 0;
	g.fd = -1;
	xpu_cupti_detach();
}

/* Called by CUDA when it initializes.  Returns 1 (success) even when the
 * library decides to stay out of the way: it must never stop the host. */
XPU_INJ_API int InitializeInjection(void)
{
	static int done;
	pthread_t t;
	pthread_attr_t attr;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return 1;
	const char *path = getenv("XPUTOP_SOCKET");
	snprintf(g.path, sizeof(g.path), "%s", path && *path ? path : XPU_WIRE_SOCKET);
	if (xpu_cupti_load() < 0) {
		static int said;
		xpu_inj_say_once(&said, "libcupti.so.13 not found; xputop cannot show this process's "
				 "GPU kernels");
		return 1;
	}
	g.chan = xpu_chan_new(CHAN_BYTES);
	if (!g.chan)
		return 1;
	xpu_sites_init();
	atexit(on_exit_flush);
	pthread_atfork(NULL, NULL, after_fork_child);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&t, &attr, agent, NULL) != 0) {
		static int said;
		xpu_inj_say_once(&said, "cannot start its agent thread; xputop will not see this process");
	}
	pthread_attr_destroy(&attr);
	return 1;
}
