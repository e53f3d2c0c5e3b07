/* SPDX-License-Identifier: GPL-2.0-only */
#include "prom_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics.h"

int xpu_prom_http_parse(const char *spec, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen)
{
	const char *p = strrchr(spec, ':');
	const char *ps = p ? p + 1 : spec;
	char *end;
	size_t hl = p ? (size_t)(p - spec) : 0;
	if (p && spec[0] == '[') {	/* [IPv6]:PORT */
		if (hl < 2 || spec[hl - 1] != ']')
			return snprintf(err, errlen, "'%s': an IPv6 address goes in brackets, as [::1]:19400", spec), -1;
		spec++;
		hl -= 2;
	} else if (p && memchr(spec, ':', hl)) {
		return snprintf(err, errlen, "'%s': an IPv6 address goes in brackets, as [::1]:19400", spec), -1;
	}
	errno = 0;
	unsigned long v = strtoul(ps, &end, 10);
	if (!*ps || *end || errno || v > 65535 || *ps == '-' || *ps == '+')
		return snprintf(err, errlen, "'%s': expected [ADDR:]PORT with a port of 0 to 65535", spec), -1;
	if (hl >= hostlen)
		return snprintf(err, errlen, "'%s': the address is too long", spec), -1;
	if (p && hl == 0)
		return snprintf(err, errlen, "'%s': an empty address (leave it out for localhost)", spec), -1;
	memcpy(host, p ? spec : "127.0.0.1", p ? hl : 10);
	host[p ? hl : 9] = '\0';
	*port = (unsigned)v;
	return 0;
}

#ifndef XPU_NO_EXPORTERS
#include <microhttpd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>

/* What one refresh published: shared by the requests that are sending it. */
struct blob {
	atomic_int refs;
	size_t len;
	char data[];
};

/* A connection: from when its request began (its accept, or the end of the
 * previous response on a kept-alive connection). */
struct conn {
	int fd;			/* -1: a free slot */
	int cut;		/* shut down; libmicrohttpd closes it at its next turn */
	struct sockaddr_storage addr;
	uint64_t since;
};

struct xpu_prom_http {
	struct MHD_Daemon *d;
	int fd, epfd, wake;
	char addr[80];
	pthread_t thread;
	atomic_int stop;
	struct conn conns[XPU_PROM_CONN_MAX + XPU_PROM_CONN_SLACK];
	uint32_t nconns;	/* not cut */
	int paused;		/* the listening socket is out of the epoll set (no descriptor left) */
	pthread_mutex_t lock;	/* guards text, om, health and published_at: held to swap or take a reference */
	struct blob *text, *om, *health;
	int health_failed;
	uint64_t published_at, stale_ns;
	atomic_uint_fast64_t scrapes, refused, cut_deadline, cut_evicted;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct blob *blob_new(const char *p, size_t n)
{
	struct blob *b = malloc(sizeof(*b) + n);
	if (!b)
		return NULL;
	atomic_init(&b->refs, 1);
	b->len = n;
	memcpy(b->data, p, n);
	return b;
}

static void blob_unref(void *arg)
{
	struct blob *b = arg;
	if (b && atomic_fetch_sub(&b->refs, 1) == 1)
		free(b);
}

/* Binds and listens ourselves, so that a refusal says why. */
static int listen_on(struct xpu_prom_http *h, const char *spec, char *err, size_t errlen)
{
	char host[256], portstr[8];
	unsigned port;
	if (xpu_prom_http_parse(spec, host, sizeof(host), &port, err, errlen) < 0)
		return -1;
	snprintf(portstr, sizeof(portstr), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	int rc = getaddrinfo(host, portstr, &hints, &ai);
	if (rc)
		return snprintf(err, errlen, "'%s': %s: %s", spec, host, gai_strerror(rc)), -1;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1024) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s%s", spec, strerror(errno),
			 errno == EADDRINUSE ? " (give another port)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof(ip));
		snprintf(h->addr, sizeof(h->addr), "[%s]:%u", ip, ntohs(a6->sin6_port));
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip));
		snprintf(h->addr, sizeof(h->addr), "%s:%u", ip, ntohs(a4->sin_port));
	}
	h->fd = fd;
	return 0;
}

/* ---- connections: admission, eviction, the request deadline ---- */

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return 1;
}

static struct conn *conn_by_fd(struct xpu_prom_http *h, int fd)
{
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++)
		if (h->conns[i].fd == fd)
			return &h->conns[i];
	return NULL;
}

/* Shuts a connection down; libmicrohttpd sees the end of its socket at its
 * next turn, closes it and tells conn_notify(), which frees the slot.  The
 * socket is closed by the thread that runs libmicrohttpd, this one, so the
 * descriptor cannot be another's by then. */
static void cut(struct xpu_prom_http *h, struct conn *c)
{
	if (c->cut)
		return;
	shutdown(c->fd, SHUT_RDWR);
	c->cut = 1;
	h->nconns--;
}

/* Makes room for a connection from addr: past the per-address limit, the
 * oldest request of that address goes; past the total, the oldest of all.
 * A scraper on the same address as a flood still gets in: its request is
 * the newest, and requests are cut at the deadline. */
static void make_room(struct xpu_prom_http *h, const struct sockaddr_storage *addr)
{
	struct conn *oldest = NULL, *oldest_here = NULL;
	uint32_t here = 0;
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++) {
		struct conn *c = &h->conns[i];
		if (c->fd < 0 || c->cut)
			continue;
		if (!oldest || c->since < oldest->since)
			oldest = c;
		if (same_host(&c->addr, addr)) {
			here++;
			if (!oldest_here || c->since < oldest_here->since)
				oldest_here = c;
		}
	}
	if (here >= XPU_PROM_PER_ADDR_MAX && oldest_here) {
		cut(h, oldest_here);
		atomic_fetch_add(&h->cut_evicted, 1);
	} else if (h->nconns >= XPU_PROM_CONN_MAX && oldest) {
		cut(h, oldest);
		atomic_fetch_add(&h->cut_evicted, 1);
	}
}

static struct conn *free_slot(struct xpu_prom_http *h)
{
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++)
		if (h->conns[i].fd < 0)
			return &h->conns[i];
	return NULL;
}

static void listening(struct xpu_prom_http *h, int on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = h->fd };
	if (on == !h->paused)
		return;
	epoll_ctl(h->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, h->fd, &ev);
	h->paused = !on;
}

/* A few at a time: libmicrohttpd reads what came between two batches, so a
 * request already sent is answered before a flood behind it in the backlog
 * can push it out. */
#define ACCEPT_BATCH 16

static void accept_some(struct xpu_prom_http *h)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(h->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			/* Out of descriptors: no slot frees before libmicrohttpd's
			 * next turn, so the listening socket waits for it. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				listening(h, 0);
			return;
		}
		make_room(h, &ss);
		struct conn *c = free_slot(h);
		if (!c) {	/* every slot is being closed: the next turn frees them */
			close(fd);
			listening(h, 0);
			return;
		}
		*c = (struct conn){ .fd = fd, .addr = ss, .since = mono_ns() };
		h->nconns++;
		if (MHD_add_connection(h->d, fd, (struct sockaddr *)&ss, sl) != MHD_YES && c->fd == fd) {
			/* libmicrohttpd closed it, maybe without telling */
			c->fd = -1;
			if (!c->cut)
				h->nconns--;
		}
	}
}

/* Requests past the deadline go, however steadily their bytes come. */
static uint64_t cut_late(struct xpu_prom_http *h, uint64_t now)
{
	uint64_t next = now + XPU_PROM_DEADLINE_NS;
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++) {
		struct conn *c = &h->conns[i];
		if (c->fd < 0 || c->cut)
			continue;
		if (now - c->since >= XPU_PROM_DEADLINE_NS) {
			cut(h, c);
			atomic_fetch_add(&h->cut_deadline, 1);
		} else if (c->since + XPU_PROM_DEADLINE_NS < next) {
			next = c->since + XPU_PROM_DEADLINE_NS;
		}
	}
	return next;
}

static void conn_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct xpu_prom_http *h = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *c = ci ? conn_by_fd(h, ci->connect_fd) : NULL;
	if (toe != MHD_CONNECTION_NOTIFY_CLOSED || !c)
		return;
	if (!c->cut)
		h->nconns--;
	c->fd = -1;
	c->cut = 0;
	listening(h, 1);
}

/* A response sent: a kept-alive connection's next request has its own deadline. */
static void request_done(void *cls, struct MHD_Connection *connection, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct xpu_prom_http *h = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *c = ci ? conn_by_fd(h, ci->connect_fd) : NULL;
	if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		c->since = mono_ns();
}

static void *serve(void *arg)
{
	struct xpu_prom_http *h = arg;
	uint64_t next = mono_ns() + XPU_PROM_DEADLINE_NS;
	while (!atomic_load(&h->stop)) {
		struct epoll_event evs[4];
		uint64_t now = mono_ns();
		MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
		int64_t ms = next > now ? (int64_t)((next - now) / 1000000 + 1) : 0;
		if (MHD_get_timeout(h->d, &mhd_ms) == MHD_YES && (int64_t)mhd_ms < ms)
			ms = (int64_t)mhd_ms;
		int n = epoll_wait(h->epfd, evs, 4, (int)ms);
		for (int i = 0; i < n; i++)
			if (evs[i].data.fd == h->fd)
				accept_some(h);
		MHD_run(h->d);
		/* a new request's deadline is after the earliest one's */
		now = mono_ns();
		if (now >= next)
			next = cut_late(h, now);
	}
	return NULL;
}

/* Room for every connection the server keeps, beside the probes' and the
 * injection sockets' descriptors. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t want = 4 * (XPU_PROM_CONN_MAX + XPU_PROM_CONN_SLACK) + 4096;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_blob(struct MHD_Connection *c, unsigned status, struct blob *b, const char *ct)
{
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data,
											 blob_unref, b);
	if (!r) {
		blob_unref(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ct);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Whether the Accept header asks for OpenMetrics, as Prometheus does. */
static int accepts_om(struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	return a && strstr(a, "application/openmetrics-text") != NULL;
}

/* /healthz: each source's state, 200 while refreshes come and no source
 * has failed, else 503 with why first. */
static enum MHD_Result healthz(struct xpu_prom_http *h, struct MHD_Connection *c)
{
	char head[160] = "";
	pthread_mutex_lock(&h->lock);
	struct blob *b = h->health;
	uint64_t age = h->published_at ? mono_ns() - h->published_at : 0;
	int failed = h->health_failed;
	if (b)
		atomic_fetch_add(&b->refs, 1);
	if (b && age > h->stale_ns)
		snprintf(head, sizeof(head), "stalled: no refresh for %.1f s (expected every %.1f s)\n",
			 (double)age / 1e9, (double)h->stale_ns / 3e9);
	pthread_mutex_unlock(&h->lock);
	if (!b)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "starting: xputop has not refreshed yet\n");
	unsigned status = head[0] || failed ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK;
	if (!head[0])
		return reply_blob(c, status, b, "text/plain; charset=utf-8");
	size_t hl = strlen(head);
	struct blob *all = malloc(sizeof(*all) + hl + b->len);
	if (all) {
		atomic_init(&all->refs, 1);
		all->len = hl + b->len;
		memcpy(all->data, head, hl);
		memcpy(all->data + hl, b->data, b->len);
	}
	blob_unref(b);
	if (!all)
		return MHD_NO;
	return reply_blob(c, status, all, "text/plain; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct xpu_prom_http *h = cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		atomic_fetch_add(&h->refused, 1);
		return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	}
	if (strcmp(url, "/") == 0)
		return reply_static(c, MHD_HTTP_OK, "xputop: metrics at /metrics, health at /healthz\n");
	if (strcmp(url, "/healthz") == 0)
		return healthz(h, c);
	if (strcmp(url, "/metrics") != 0) {
		atomic_fetch_add(&h->refused, 1);
		return reply_static(c, MHD_HTTP_NOT_FOUND, "not found: metrics are at /metrics\n");
	}
	int om = accepts_om(c);
	pthread_mutex_lock(&h->lock);
	struct blob *b = om && h->om ? h->om : h->text;
	om = b && b == h->om;
	if (b)
		atomic_fetch_add(&b->refs, 1);
	pthread_mutex_unlock(&h->lock);
	if (!b)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "xputop has not refreshed yet\n");
	atomic_fetch_add(&h->scrapes, 1);
	return reply_blob(c, MHD_HTTP_OK, b, om ? XPU_METRICS_CT_OM : XPU_METRICS_CT_TEXT);
}

static void free_server(struct xpu_prom_http *h)
{
	if (h->d)
		MHD_stop_daemon(h->d);
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->wake >= 0)
		close(h->wake);
	if (h->fd >= 0)
		close(h->fd);
	blob_unref(h->text);
	blob_unref(h->om);
	blob_unref(h->health);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct xpu_prom_http *xpu_prom_http_start(const char *spec, char *err, size_t errlen)
{
	struct xpu_prom_http *h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), NULL;
	pthread_mutex_init(&h->lock, NULL);
	h->fd = h->wake = -1;
	h->stale_ns = 3000000000ULL;
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++)
		h->conns[i].fd = -1;
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->epfd < 0 || h->wake < 0) {
		snprintf(err, errlen, "cannot start the metrics server: %s", strerror(errno));
		free_server(h);
		return NULL;
	}
	if (listen_on(h, spec, err, errlen) < 0) {
		free_server(h);
		return NULL;
	}
	raise_fd_limit();
	/* Connections come from our own accept (accept_some()), so that admission
	 * and the request deadline are ours; libmicrohttpd runs in our thread. */
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, h,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)(XPU_PROM_CONN_MAX + XPU_PROM_CONN_SLACK),
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(XPU_PROM_DEADLINE_NS / 1000000000ULL),
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
				MHD_OPTION_NOTIFY_CONNECTION, conn_notify, h,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, h, MHD_OPTION_END);
	const union MHD_DaemonInfo *di = h->d ? MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = di ? di->epoll_fd : -1 };
	struct epoll_event wev = { .events = EPOLLIN, .data.fd = h->wake };
	struct epoll_event lev = { .events = EPOLLIN, .data.fd = h->fd };
	if (!di || epoll_ctl(h->epfd, EPOLL_CTL_ADD, di->epoll_fd, &ev) < 0 ||
	    epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->wake, &wev) < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->fd, &lev) < 0) {
		snprintf(err, errlen, "cannot start the metrics server on %s", h->addr);
		free_server(h);
		return NULL;
	}
	/* The server's thread must not take the process's signals: the main
	 * loop reads them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot start the metrics server's thread: %s", strerror(rc));
		free_server(h);
		return NULL;
	}
	return h;
}

const char *xpu_prom_http_addr(const struct xpu_prom_http *h)
{
	return h->addr;
}

int xpu_prom_http_publish(struct xpu_prom_http *h, const char *text, size_t n, const char *om, size_t omn)
{
	struct blob *t = blob_new(text, n), *o = om ? blob_new(om, omn) : NULL;
	if (!t || (om && !o)) {
		blob_unref(t);
		blob_unref(o);
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	struct blob *old_t = h->text, *old_o = h->om;
	h->text = t;
	h->om = o;
	pthread_mutex_unlock(&h->lock);
	blob_unref(old_t);
	blob_unref(old_o);
	return 0;
}

int xpu_prom_http_health(struct xpu_prom_http *h, const char *text, int failed, uint64_t interval_ns)
{
	struct blob *b = blob_new(text, strlen(text));
	if (!b)
		return -1;
	uint64_t stale = 3 * interval_ns;
	pthread_mutex_lock(&h->lock);
	struct blob *old = h->health;
	h->health = b;
	h->health_failed = failed;
	h->published_at = mono_ns();
	h->stale_ns = stale > XPU_PROM_STALE_MIN_NS ? stale : XPU_PROM_STALE_MIN_NS;
	pthread_mutex_unlock(&h->lock);
	blob_unref(old);
	return 0;
}

void xpu_prom_http_counts(const struct xpu_prom_http *h, struct xpu_prom_counts *c)
{
	struct xpu_prom_http *w = (struct xpu_prom_http *)h;
	c->scrapes = atomic_load(&w->scrapes);
	c->refused = atomic_load(&w->refused);
	c->cut_deadline = atomic_load(&w->cut_deadline);
	c->cut_evicted = atomic_load(&w->cut_evicted);
}

void xpu_prom_http_stop(struct xpu_prom_http *h)
{
	if (!h)
		return;
	atomic_store(&h->stop, 1);
	uint64_t one = 1;
	ssize_t w = write(h->wake, &one, sizeof(one));	/* else it wakes within a deadline */
	(void)w;
	pthread_join(h->thread, NULL);
	free_server(h);
}
#else	/* a STATIC=1 build: no libmicrohttpd */

struct xpu_prom_http *xpu_prom_http_start(const char *spec, char *err, size_t errlen)
{
	snprintf(err, errlen, "this xputop was built with STATIC=1, without the metrics server "
		 "(libmicrohttpd): build it without STATIC=1");
	return NULL;
}

const char *xpu_prom_http_addr(const struct xpu_prom_http *h) { return ""; }
int xpu_prom_http_publish(struct xpu_prom_http *h, const char *text, size_t n, const char *om, size_t omn)
{
	return -1;
}
int xpu_prom_http_health(struct xpu_prom_http *h, const char *text, int failed, uint64_t interval_ns)
{
	return -1;
}
void xpu_prom_http_counts(const struct xpu_prom_http *h, struct xpu_prom_counts *c)
{
	memset(c, 0, sizeof(*c));
}
void xpu_prom_http_stop(struct xpu_prom_http *h) {}

#endif
