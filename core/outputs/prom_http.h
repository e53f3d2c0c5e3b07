/* SPDX-License-Identifier: GPL-2.0-only */
/* The /metrics and /healthz endpoints: a thread of the server's own runs
 * libmicrohttpd and answers scrapes with the text the main thread last
 * published, so that a scrape never waits for a refresh and a refresh never
 * waits for a scrape (docs/architecture.md, rule 4): publishing swaps a pointer
 * under a lock held for no more than that, and a scrape takes a reference to
 * the current text under the same lock.
 *
 * Peers are untrusted (rule 5).  The thread accepts connections itself and
 * hands them to libmicrohttpd, so that it holds every connection to a budget:
 *   - a request has XPU_PROM_DEADLINE_NS from its accept (or from the end of
 *     the previous response on a kept-alive connection) to be answered,
 *     however steadily its bytes come; then it is cut;
 *   - an address has at most XPU_PROM_PER_ADDR_MAX connections, the server
 *     XPU_PROM_CONN_MAX: a new connection past either limit cuts the oldest
 *     one of its address, or of all, rather than being refused.  A scraper
 *     that shares its address with a flood (both local) still gets in, its
 *     request being the newest.
 * What was cut is counted (xpu_prom_http_counts()).
 */
#ifndef XPU_PROM_HTTP_H
#define XPU_PROM_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct xpu_prom_http;

#define XPU_PROM_CONN_MAX 2048u
#define XPU_PROM_CONN_SLACK 64u		/* slots of connections cut and not closed yet */
#define XPU_PROM_PER_ADDR_MAX 256u
#define XPU_PROM_DEADLINE_NS 5000000000ULL
/* /healthz says "stalled" after 3 refresh intervals without a refresh, and
 * never sooner than this. */
#define XPU_PROM_STALE_MIN_NS 2000000000ULL

struct xpu_prom_counts {
	uint64_t scrapes;	/* requests for /metrics answered */
	uint64_t refused;	/* requests for other paths, or not GET or HEAD */
	uint64_t cut_deadline;	/* connections cut at the request deadline */
	uint64_t cut_evicted;	/* connections cut to make room for a newer one */
};

/* Listens on spec, "[ADDR:]PORT" (ADDR: an IPv4 or [IPv6] address or a host
 * name; localhost when left out; PORT 0: any free port).  Returns NULL with
 * the reason in err. */
struct xpu_prom_http *xpu_prom_http_start(const char *spec, char *err, size_t errlen);
/* The address it listens on, "127.0.0.1:19400", for messages. */
const char *xpu_prom_http_addr(const struct xpu_prom_http *h);
/* Replaces what scrapes get: the text format and the OpenMetrics one, for
 * scrapers that ask for it (a NULL om: the text format for all).  Copies
 * both. */
int xpu_prom_http_publish(struct xpu_prom_http *h, const char *text, size_t n, const char *om, size_t omn);
/* Replaces what /healthz answers: text (one line a source), 503 when failed
 * or when no health came for 3 * interval_ns. */
int xpu_prom_http_health(struct xpu_prom_http *h, const char *text, int failed, uint64_t interval_ns);
void xpu_prom_http_counts(const struct xpu_prom_http *h, struct xpu_prom_counts *c);
void xpu_prom_http_stop(struct xpu_prom_http *h);

/* Parses "[ADDR:]PORT" into host and port; returns 0 or -1 (with err). */
int xpu_prom_http_parse(const char *spec, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen);

#endif
