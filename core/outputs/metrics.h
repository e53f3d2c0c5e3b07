/* SPDX-License-Identifier: GPL-2.0-only */
/* Prometheus metrics: what the models hold, as series a Prometheus server
 * scrapes (core/outputs/prom_http.c serves them).
 *
 * xpu_metrics_update() reads the session once per refresh on the main thread
 * and keeps the values; xpu_metrics_write() formats them in the Prometheus
 * text format (0.0.4) or OpenMetrics 1.0.  The exporter keeps a little state
 * between refreshes, so that:
 *   - counters never decrease while xputop runs: a model total that goes
 *     back (a row aged out and came back, a sampled estimate revised down)
 *     continues from the last value exported, as Prometheus does at a reset;
 *   - cardinality is bounded: each process's kernels get at most top_n
 *     series of their own (the heaviest over the recent window, kept while
 *     they stay among the heaviest) and one kernel="other" series per device
 *     for the rest, so that the sum over a process stays its total;
 *   - process series are labelled by pid (and comm), or by name, cgroup or
 *     container, the processes sharing a value summed; an exited process's
 *     series go after the expiry; at most max_values label values have
 *     series of their own, the rest are summed into "other" (counted).
 * Fields the driver did not give are left out, never 0.  Label values are
 * escaped and made valid UTF-8.  See docs/metrics.md for every series.
 */
#ifndef XPU_METRICS_H
#define XPU_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct xpu_session;

#define XPU_METRICS_TOP_DEFAULT 10	/* kernel series per process */
#define XPU_METRICS_TOP_MAX 1000
#define XPU_METRICS_EXPIRY_DEFAULT 300	/* seconds an exited process keeps its series */
#define XPU_METRICS_EXPIRY_MAX 86400
#define XPU_METRICS_PROCESSES_DEFAULT 500	/* label values with series of their own */
#define XPU_METRICS_PROCESSES_MAX 100000

/* What a process's series are labelled by (--prometheus-label). */
enum xpu_metrics_label {
	XPU_METRICS_BY_PID, XPU_METRICS_BY_COMM, XPU_METRICS_BY_CGROUP, XPU_METRICS_BY_CONTAINER,
};

/* A growing text buffer. */
struct xpu_mbuf {
	char *p;
	size_t n, cap;
	int oom;
};
void xpu_mbuf_free(struct xpu_mbuf *b);

/* What the HTTP side knows that the models do not (it counts scrapes). */
struct xpu_metrics_extra {
	uint64_t scrapes;
	uint64_t refused;	/* requests for other paths, or not GET/HEAD */
	uint64_t cut_deadline, cut_evicted;	/* connections cut (prom_http.h) */
	/* CPU time the main loop spent writing the metrics and the pprof
	 * profiles (the server's and the push thread's time is in
	 * xputop_self_cpu_seconds_total only) */
	uint64_t metrics_ns, pprof_ns;
};

struct xpu_metrics;

struct xpu_metrics *xpu_metrics_new(uint32_t top_n);
/* --prometheus-label, --prometheus-expiry, --prometheus-processes (the
 * defaults until called); a new label starts the label values afresh. */
void xpu_metrics_set_processes(struct xpu_metrics *m, int label, double expiry_s, uint32_t max_values);
void xpu_metrics_free(struct xpu_metrics *m);
/* Takes this refresh's values (main thread).  Returns 0, or -1 when out of
 * memory (the last values stay). */
int xpu_metrics_update(struct xpu_metrics *m, const struct xpu_session *sess,
		       const struct xpu_metrics_extra *x);
/* Appends the values of the last update to out; om: OpenMetrics (ends in
 * "# EOF").  Returns 0, or -1 when out of memory. */
int xpu_metrics_write(const struct xpu_metrics *m, int om, struct xpu_mbuf *out);

/* Writes s into out as a label value: escaped (\\, \", \n), invalid UTF-8
 * replaced by U+FFFD, cut at max bytes on a character boundary. */
void xpu_metrics_label_value(struct xpu_mbuf *out, const char *s, size_t max);

#define XPU_METRICS_CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define XPU_METRICS_CT_OM "application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
