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
			return snprintf(err, errlen, "'%s': an IPv6 address goes in brackets, as [::1]:9400", spec), -1;
		spec++;
		hl -= 2;
	} else if (p && memchr(spec, ':', hl)) {
		return snprintf(err, errlen, "'%s': an IPv6 address goes in brackets, as [::1]:9400", spec), -1;
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

/* What one refresh published: shared by the scrapes that are sending it. */
struct blob {
	atomic_int refs;
	size_t len;
	char data[];
};

struct xpu_prom_http {
	struct MHD_Daemon *d;
	int fd;
	char addr[80];
	pthread_mutex_t lock;	/* guards text and om: held to swap or take a reference */
	struct blob *text, *om;
	atomic_uint_fast64_t scrapes, refused;
};

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
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
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

/* Whether the Accept header asks for OpenMetrics, as Prometheus does. */
static int accepts_om(struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	return a && strstr(a, "application/openmetrics-text") != NULL;
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
		return reply_static(c, MHD_HTTP_OK, "xputop: metrics at /metrics\n");
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
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data,
											 blob_unref, b);
	if (!r) {
		blob_unref(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, om ? XPU_METRICS_CT_OM : XPU_METRICS_CT_TEXT);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	atomic_fetch_add(&h->scrapes, 1);
	return ret;
}

struct xpu_prom_http *xpu_prom_http_start(const char *spec, char *err, size_t errlen)
{
	struct xpu_prom_http *h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), NULL;
	pthread_mutex_init(&h->lock, NULL);
	if (listen_on(h, spec, err, errlen) < 0) {
		free(h);
		return NULL;
	}
	/* One thread of its own; scrapes are small and quick.  It must not
	 * take the process's signals: the main loop reads them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->d) {
		snprintf(err, errlen, "cannot start the metrics server on %s", h->addr);
		close(h->fd);
		free(h);
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

void xpu_prom_http_counts(const struct xpu_prom_http *h, uint64_t *scrapes, uint64_t *refused)
{
	struct xpu_prom_http *w = (struct xpu_prom_http *)h;
	*scrapes = atomic_load(&w->scrapes);
	*refused = atomic_load(&w->refused);
}

void xpu_prom_http_stop(struct xpu_prom_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	close(h->fd);
	blob_unref(h->text);
	blob_unref(h->om);
	pthread_mutex_destroy(&h->lock);
	free(h);
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
void xpu_prom_http_counts(const struct xpu_prom_http *h, uint64_t *scrapes, uint64_t *refused)
{
	*scrapes = *refused = 0;
}
void xpu_prom_http_stop(struct xpu_prom_http *h) {}

#endif
