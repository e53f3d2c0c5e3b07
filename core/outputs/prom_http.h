/* The /metrics endpoint: libmicrohttpd's own thread answers scrapes with the
 * text the main thread last published, so that a scrape never waits for a
 * refresh and a refresh never waits for a scrape (ARCHITECTURE.md, rule 4):
 * publishing swaps a pointer under a lock held for no more than that, and a
 * scrape takes a reference to the current text under the same lock.
 */
#ifndef XPU_PROM_HTTP_H
#define XPU_PROM_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct xpu_prom_http;

/* Listens on spec, "[ADDR:]PORT" (ADDR: an IPv4 or [IPv6] address or a host
 * name; localhost when left out; PORT 0: any free port).  Returns NULL with
 * the reason in err. */
struct xpu_prom_http *xpu_prom_http_start(const char *spec, char *err, size_t errlen);
/* The address it listens on, "127.0.0.1:9400", for messages. */
const char *xpu_prom_http_addr(const struct xpu_prom_http *h);
/* Replaces what scrapes get: the text format and the OpenMetrics one, for
 * scrapers that ask for it (a NULL om: the text format for all).  Copies
 * both. */
int xpu_prom_http_publish(struct xpu_prom_http *h, const char *text, size_t n, const char *om, size_t omn);
/* Scrapes answered, and requests refused (bad path or method). */
void xpu_prom_http_counts(const struct xpu_prom_http *h, uint64_t *scrapes, uint64_t *refused);
void xpu_prom_http_stop(struct xpu_prom_http *h);

/* Parses "[ADDR:]PORT" into host and port; returns 0 or -1 (with err). */
int xpu_prom_http_parse(const char *spec, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen);

#endif
