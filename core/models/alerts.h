/* SPDX-License-Identifier: GPL-2.0-only */
/* The alert log: what any model raises when something needs a person's
 * attention, and whether it still holds.
 *
 * An alert is identified by (source, rule, key): raising it again while it is
 * active updates it (count, last time, message) instead of adding a line, so
 * a storm of timeouts is one alert with a count.  An alert is cleared either
 * by its rule (a condition that no longer holds: xpu_alert_clear) or, for
 * alerts about events rather than conditions, `hold_ns` after it was last
 * raised (xpu_alerts_expire at each tick).  Cleared alerts stay in the log;
 * the oldest lines are dropped, and counted, once the log is full.
 * Times are CLOCK_MONOTONIC ns, the stream's clock.
 */
#ifndef XPU_ALERTS_H
#define XPU_ALERTS_H

#include <stdint.h>

enum xpu_alert_sev {
	XPU_ALERT_WARN = 0,	/* departs from what was learned: look when you can */
	XPU_ALERT_STALL = 1,	/* work is not progressing */
	XPU_ALERT_CRITICAL = 2,	/* the device or driver failed (recovery, aborts, timeouts) */
	XPU_ALERT_SEV_MAX
};

#define XPU_ALERT_LOG_MAX 256
/* A cleared alert still shows on the alert bar for this long. */
#define XPU_ALERT_RECENT_NS (60ULL * 1000000000)
#define XPU_ALERT_MSG_LEN 160

struct xpu_alert {
	uint64_t raised;	/* first raised */
	uint64_t last;		/* last raised again */
	uint64_t cleared;	/* 0 while active */
	uint64_t hold_ns;	/* 0: stays until its rule clears it */
	uint64_t key;		/* tells apart alerts of one rule (e.g. a queue) */
	uint32_t count;		/* times raised while active */
	uint8_t sev;		/* enum xpu_alert_sev */
	uint8_t active;
	char source[8];		/* "npu", "gpu", ... */
	char rule[24];		/* stable id, e.g. "npu.stall" */
	char msg[XPU_ALERT_MSG_LEN];
};

struct xpu_alerts {
	struct xpu_alert log[XPU_ALERT_LOG_MAX];	/* a ring, oldest first from `head` */
	uint32_t head, n;
	uint64_t dropped;	/* lines pushed out of a full log */
	uint64_t raised_total;	/* new alerts since the start */
};

void xpu_alerts_init(struct xpu_alerts *a);
/* Raises (or raises again) an alert at time `now`.  Returns the alert. */
struct xpu_alert *xpu_alert_raise(struct xpu_alerts *a, enum xpu_alert_sev sev, const char *source,
				  const char *rule, uint64_t key, uint64_t now, uint64_t hold_ns,
				  const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* Clears the active alert (source, rule, key), if any.  Returns 1 if it was active. */
int xpu_alert_clear(struct xpu_alerts *a, const char *source, const char *rule, uint64_t key,
		    uint64_t now);
/* The active alert (source, rule, key), or NULL. */
struct xpu_alert *xpu_alert_find(struct xpu_alerts *a, const char *source, const char *rule,
				 uint64_t key);
/* Clears held alerts whose hold has run out by `now`. */
void xpu_alerts_expire(struct xpu_alerts *a, uint64_t now);
/* The i-th line of the log, oldest first (i < a->n). */
const struct xpu_alert *xpu_alerts_at(const struct xpu_alerts *a, uint32_t i);
/* Active alerts, in total and of one severity (sev < 0: all). */
uint32_t xpu_alerts_active(const struct xpu_alerts *a, int sev);
/* For an alert bar at time `now`: the log index of the most severe active
 * alert (the newest of equals) and of the newest alert cleared less than
 * XPU_ALERT_RECENT_NS ago; -1 where there is none. */
void xpu_alerts_summary(const struct xpu_alerts *a, uint64_t now, int *top, int *recent);
const char *xpu_alert_sev_name(enum xpu_alert_sev sev);	/* "CRITICAL", "STALL", "WARN" */

#endif
