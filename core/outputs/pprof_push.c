/* SPDX-License-Identifier: GPL-2.0-only */
#include "pprof_push.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A header's name: an HTTP token (RFC 9110). */
static int header_name_ok(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
			return 0;
	return 1;
}

/* The values are credentials: no message quotes them, only line numbers. */
static int parse_headers(char *text, size_t n, char **out, char *err, size_t errlen)
{
	size_t cap = n + 1, len = 0, count = 0;
	char *list = malloc(cap);
	if (!list)
		return snprintf(err, errlen, "out of memory"), -1;
	unsigned line = 0;
	for (char *save, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		size_t ln = strlen(l);
		if (ln && l[ln - 1] == '\r')
			l[--ln] = '\0';
		while (*l == ' ' || *l == '\t')
			l++, ln--;
		if (!*l || *l == '#')
			continue;
		char *colon = strchr(l, ':');
		if (!colon || !header_name_ok(l, (size_t)(colon - l))) {
			free(list);
			return snprintf(err, errlen, "line %u: expected 'Name: value' with a name of letters, digits "
					"and -_.", line), -1;
		}
		for (const char *c = colon + 1; *c; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t') {
				free(list);
				return snprintf(err, errlen, "line %u: a control character in the value", line), -1;
			}
		if (strncasecmp(l, "Content-Type:", 13) == 0 || strncasecmp(l, "Content-Length:", 15) == 0 ||
		    strncasecmp(l, "Host:", 5) == 0) {
			free(list);
			return snprintf(err, errlen, "line %u: xputop sets that header itself", line), -1;
		}
		if (++count > XPU_PUSH_HEADERS_MAX) {
			free(list);
			return snprintf(err, errlen, "more than %d headers", XPU_PUSH_HEADERS_MAX), -1;
		}
		memcpy(list + len, l, ln);
		len += ln;
		list[len++] = '\n';
	}
	list[len] = '\0';
	*out = list;
	return 0;
}

int xpu_push_read_headers(const char *path, char **out, char *err, size_t errlen)
{
	char text[XPU_PUSH_HEADERS_BYTES + 1];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return snprintf(err, errlen, "%s is not a regular file", path), -1;
	}
	/* It holds credentials: only its owner (xputop's user) may read or change it. */
	if (st.st_uid != geteuid() || (st.st_mode & 0027)) {
		close(fd);
		return snprintf(err, errlen, "%s holds credentials, yet %s (mode %04o, owner %u): chown it to "
				"uid %u and chmod 600 (or 640) it", path,
				st.st_uid != geteuid() ? "another user owns it" :
				(st.st_mode & 0007) ? "other users can read or change it" : "its group can change it",
				(unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)geteuid()), -1;
	}
	ssize_t n = read(fd, text, sizeof(text));
	close(fd);
	if (n < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
	if ((size_t)n > XPU_PUSH_HEADERS_BYTES)
		return snprintf(err, errlen, "%s is over %d bytes", path, XPU_PUSH_HEADERS_BYTES), -1;
	text[n] = '\0';
	if (memchr(text, '\0', (size_t)n))
		return snprintf(err, errlen, "%s: a NUL byte", path), -1;
	char sub[200];
	if (parse_headers(text, (size_t)n, out, sub, sizeof(sub)) < 0) {
		explicit_bzero(text, sizeof(text));
		return snprintf(err, errlen, "%s: %s", path, sub), -1;
	}
	explicit_bzero(text, sizeof(text));
	return 0;
}

#ifndef XPU_NO_EXPORTERS
#include <curl/curl.h>

struct item {
	char app[64];
	uint64_t from_ns, until_ns;
	uint32_t rate_hz;
	uint8_t *data;
	size_t len;
};

struct xpu_push {
	char *ingest;		/* the endpoint, without a query */
	struct curl_slist *headers;	/* --pprof-headers (the push thread's) */
	struct curl_slist *next_headers;	/* read again (SIGHUP), taken before the next push */
	char host[128];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item q[XPU_PUSH_QUEUE];
	uint32_t head, n;
	int stopping, busy;
	struct xpu_push_stats st;
};

static int send_one(struct xpu_push *p, CURL *c, const struct item *it, char *err, size_t errlen)
{
	char name[256], url[4096];
	snprintf(name, sizeof(name), "%s{host=%s}", it->app, p->host);
	char *ename = curl_easy_escape(c, name, 0);
	if (!ename)
		return snprintf(err, errlen, "out of memory"), -1;
	snprintf(url, sizeof(url), "%s?name=%s&from=%llu&until=%llu&format=pprof&spyName=xputop&sampleRate=%u",
		 p->ingest, ename, (unsigned long long)(it->from_ns / 1000000000ULL),
		 (unsigned long long)(it->until_ns / 1000000000ULL), it->rate_hz);
	curl_free(ename);
	curl_mime *mime = curl_mime_init(c);
	curl_mimepart *part = curl_mime_addpart(mime);
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, (const char *)it->data, it->len);
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "xputop/" XPU_VERSION);
	if (p->headers)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_mime_free(mime);
	if (rc != CURLE_OK)
		return snprintf(err, errlen, "%s: %s", p->ingest, cerr[0] ? cerr : curl_easy_strerror(rc)), -1;
	if (status < 200 || status > 299)
		return snprintf(err, errlen, "%s answered HTTP %ld", p->ingest, status), -1;
	return 0;
}

static void *pusher(void *arg)
{
	struct xpu_push *p = arg;
	CURL *c = curl_easy_init();
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->n && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->n)
			break;
		if (p->next_headers) {
			curl_slist_free_all(p->headers);
			p->headers = p->next_headers;
			p->next_headers = NULL;
		}
		struct item it = p->q[p->head];
		p->head = (p->head + 1) % XPU_PUSH_QUEUE;
		p->n--;
		p->busy = 1;
		pthread_mutex_unlock(&p->lock);
		char err[256] = "";
		int rc = c ? send_one(p, c, &it, err, sizeof(err)) : (snprintf(err, sizeof(err), "libcurl failed"), -1);
		free(it.data);
		pthread_mutex_lock(&p->lock);
		p->busy = 0;
		if (rc == 0) {
			p->st.sent++;
		} else {
			p->st.failed++;
			snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err);
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	curl_easy_cleanup(c);
	return NULL;
}

static void global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static struct curl_slist *header_list(const char *headers, int *oom)
{
	struct curl_slist *list = NULL;
	*oom = 0;
	for (const char *h = headers; h && *h;) {
		const char *nl = strchr(h, '\n');
		size_t hl = nl ? (size_t)(nl - h) : strlen(h);
		char *one = strndup(h, hl);
		struct curl_slist *l = one ? curl_slist_append(list, one) : NULL;
		if (one)
			explicit_bzero(one, hl);
		free(one);
		if (!l) {
			curl_slist_free_all(list);
			*oom = 1;
			return NULL;
		}
		list = l;
		h += hl + (nl != NULL);
	}
	return list;
}

int xpu_push_set_headers(struct xpu_push *p, const char *headers)
{
	int oom;
	struct curl_slist *l = header_list(headers, &oom);
	if (oom)
		return -1;
	pthread_mutex_lock(&p->lock);
	curl_slist_free_all(p->next_headers);
	p->next_headers = l;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void free_push(struct xpu_push *p)
{
	curl_slist_free_all(p->next_headers);
	curl_slist_free_all(p->headers);
	free(p->ingest);
	free(p);
}

struct xpu_push *xpu_push_start(const char *url, const char *host, const char *headers, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, global_init);
	struct xpu_push *p = calloc(1, sizeof(*p));
	size_t n = strlen(url);
	while (n && url[n - 1] == '/')
		n--;
	const char *tail = n >= 7 && strncmp(url + n - 7, "/ingest", 7) == 0 ? "" : "/ingest";
	if (!p || !(p->ingest = malloc(n + strlen(tail) + 1))) {
		free(p);
		return snprintf(err, errlen, "out of memory"), NULL;
	}
	memcpy(p->ingest, url, n);
	strcpy(p->ingest + n, tail);
	int oom;
	p->headers = header_list(headers, &oom);
	if (oom) {
		free_push(p);
		return snprintf(err, errlen, "out of memory"), NULL;
	}
	snprintf(p->host, sizeof(p->host), "%s", host);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&p->thread, NULL, pusher, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free_push(p);
		return snprintf(err, errlen, "cannot start the push thread: %s", strerror(rc)), NULL;
	}
	return p;
}

void xpu_push_profile(struct xpu_push *p, const char *app, uint64_t from_ns, uint64_t until_ns,
		      uint32_t rate_hz, const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, data, len);
	pthread_mutex_lock(&p->lock);
	if (p->n == XPU_PUSH_QUEUE) {	/* the server is behind: the oldest goes */
		free(p->q[p->head].data);
		p->head = (p->head + 1) % XPU_PUSH_QUEUE;
		p->n--;
		p->st.dropped++;
	}
	struct item *it = &p->q[(p->head + p->n) % XPU_PUSH_QUEUE];
	*it = (struct item){ .from_ns = from_ns, .until_ns = until_ns, .rate_hz = rate_hz, .data = copy, .len = len };
	snprintf(it->app, sizeof(it->app), "%s", app);
	p->n++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void xpu_push_stats(struct xpu_push *p, struct xpu_push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

void xpu_push_stop(struct xpu_push *p, int wait_ms)
{
	if (!p)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while ((p->n || p->busy) && pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
		;
	/* what could not be sent in time is dropped */
	while (p->n) {
		free(p->q[p->head].data);
		p->head = (p->head + 1) % XPU_PUSH_QUEUE;
		p->n--;
		p->st.dropped++;
	}
	p->stopping = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free_push(p);
}

#else	/* a STATIC=1 build: no libcurl */

struct xpu_push *xpu_push_start(const char *url, const char *host, const char *headers, char *err, size_t errlen)
{
	snprintf(err, errlen, "this xputop was built with STATIC=1, without libcurl: build it without "
		 "STATIC=1 to push profiles (--pprof alone works)");
	return NULL;
}

void xpu_push_profile(struct xpu_push *p, const char *app, uint64_t from_ns, uint64_t until_ns,
		      uint32_t rate_hz, const uint8_t *data, size_t len)
{
}

int xpu_push_set_headers(struct xpu_push *p, const char *headers)
{
	return -1;
}

void xpu_push_stats(struct xpu_push *p, struct xpu_push_stats *st)
{
	memset(st, 0, sizeof(*st));
}

void xpu_push_stop(struct xpu_push *p, int wait_ms)
{
}

#endif
