/* SPDX-License-Identifier: GPL-2.0-only */
/* --pprof-push: profiles posted to a Pyroscope-compatible ingest endpoint
 * (POST /ingest?name=xputop.cpu{host=...}&from=&until=&format=pprof, the
 * gzipped profile as the multipart field "profile") by a thread of its own
 * with libcurl, so that a slow or absent server never holds up a refresh.
 * At most XPU_PUSH_QUEUE profiles wait; past that the oldest is dropped and
 * counted. */
#ifndef XPU_PPROF_PUSH_H
#define XPU_PPROF_PUSH_H

#include <stddef.h>
#include <stdint.h>

#define XPU_PUSH_QUEUE 8

struct xpu_push;

struct xpu_push_stats {
	uint64_t sent, failed, dropped;
	char last_error[256];
};

#define XPU_PUSH_HEADERS_MAX 32
#define XPU_PUSH_HEADERS_BYTES 16384

/* --pprof-headers FILE: one "Name: value" a line (blank lines and
 * lines starting with # skipped), for tokens and tenants that must not be
 * in the URL (visible in ps).  The file must be xputop's user's and not
 * readable by others or writable by its group.  *out: the headers, one a
 * line (free() it).  Returns 0, or -1 with the reason in err, which never
 * quotes a value. */
int xpu_push_read_headers(const char *path, char **out, char *err, size_t errlen);

/* url: the server ("http://host:4040") or its ingest endpoint (".../ingest");
 * headers: NULL, or what xpu_push_read_headers() read, sent with each
 * profile beside "User-Agent: xputop/VERSION".  Returns NULL with the reason
 * in err. */
struct xpu_push *xpu_push_start(const char *url, const char *host, const char *headers, char *err, size_t errlen);
/* New headers (SIGHUP), sent from the next push on.  Returns 0 or -1. */
int xpu_push_set_headers(struct xpu_push *p, const char *headers);
/* Queues a profile (copied): app "xputop.cpu", its time span (CLOCK_REALTIME
 * ns) and the sampling rate.  Never blocks on the network. */
void xpu_push_profile(struct xpu_push *p, const char *app, uint64_t from_ns, uint64_t until_ns,
		      uint32_t rate_hz, const uint8_t *data, size_t len);
void xpu_push_stats(struct xpu_push *p, struct xpu_push_stats *st);
/* Sends what is queued (waiting at most wait_ms), then stops the thread. */
void xpu_push_stop(struct xpu_push *p, int wait_ms);

#endif
