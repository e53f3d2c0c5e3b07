#include "pprof_push.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

struct xpu_push *xpu_push_start(const char *url, const char *host, char *err, size_t errlen)
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
	snprintf(p->host, sizeof(p->host), "%s", host);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&p->thread, NULL, pusher, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free(p->ingest);
		free(p);
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
	free(p->ingest);
	free(p);
}

#else	/* a STATIC=1 build: no libcurl */

struct xpu_push *xpu_push_start(const char *url, const char *host, char *err, size_t errlen)
{
	snprintf(err, errlen, "this xputop was built with STATIC=1, without libcurl: build it without "
		 "STATIC=1 to push profiles (--pprof alone works)");
	return NULL;
}

void xpu_push_profile(struct xpu_push *p, const char *app, uint64_t from_ns, uint64_t until_ns,
		      uint32_t rate_hz, const uint8_t *data, size_t len)
{
}

void xpu_push_stats(struct xpu_push *p, struct xpu_push_stats *st)
{
	memset(st, 0, sizeof(*st));
}

void xpu_push_stop(struct xpu_push *p, int wait_ms)
{
}

#endif
