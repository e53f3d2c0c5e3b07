/* SPDX-License-Identifier: GPL-2.0-only */
#include "alerts.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void xpu_alerts_init(struct xpu_alerts *a)
{
	memset(a, 0, sizeof(*a));
}

static struct xpu_alert *slot(struct xpu_alerts *a, uint32_t i)
{
	return &a->log[(a->head + i) % XPU_ALERT_LOG_MAX];
}

const struct xpu_alert *xpu_alerts_at(const struct xpu_alerts *a, uint32_t i)
{
	return &a->log[(a->head + i) % XPU_ALERT_LOG_MAX];
}

static int same(const struct xpu_alert *x, const char *source, const char *rule, uint64_t key)
{
	return x->key == key && strcmp(x->source, source) == 0 && strcmp(x->rule, rule) == 0;
}

struct xpu_alert *xpu_alert_find(struct xpu_alerts *a, const char *source, const char *rule,
				 uint64_t key)
{
	/* Newest first: an active alert is never older than a cleared one of its kind. */
	for (uint32_t i = a->n; i-- > 0;) {
		struct xpu_alert *x = slot(a, i);
		if (x->active && same(x, source, rule, key))
			return x;
	}
	return NULL;
}

/* A new line at the end; a full log drops its oldest line, which is never an
 * active one as long as anything cleared is left to drop. */
static struct xpu_alert *append(struct xpu_alerts *a)
{
	if (a->n < XPU_ALERT_LOG_MAX)
		return slot(a, a->n++);
	uint32_t victim = 0;
	while (victim < a->n && slot(a, victim)->active)
		victim++;
	if (victim == a->n)
		victim = 0;
	for (uint32_t i = victim; i + 1 < a->n; i++)
		*slot(a, i) = *slot(a, i + 1);
	a->dropped++;
	return slot(a, a->n - 1);
}

struct xpu_alert *xpu_alert_raise(struct xpu_alerts *a, enum xpu_alert_sev sev, const char *source,
				  const char *rule, uint64_t key, uint64_t now, uint64_t hold_ns,
				  const char *fmt, ...)
{
	struct xpu_alert *x = xpu_alert_find(a, source, rule, key);
	va_list ap;

	if (x) {
		x->count++;
		x->last = now;
		if (sev > x->sev)
			x->sev = (uint8_t)sev;
	} else {
		x = append(a);
		memset(x, 0, sizeof(*x));
		x->raised = x->last = now;
		x->hold_ns = hold_ns;
		x->key = key;
		x->count = 1;
		x->sev = (uint8_t)sev;
		x->active = 1;
		snprintf(x->source, sizeof(x->source), "%s", source);
		snprintf(x->rule, sizeof(x->rule), "%s", rule);
		a->raised_total++;
	}
	va_start(ap, fmt);
	vsnprintf(x->msg, sizeof(x->msg), fmt, ap);
	va_end(ap);
	return x;
}

int xpu_alert_clear(struct xpu_alerts *a, const char *source, const char *rule, uint64_t key,
		    uint64_t now)
{
	struct xpu_alert *x = xpu_alert_find(a, source, rule, key);
	if (!x)
		return 0;
	x->active = 0;
	x->cleared = now ? now : 1;
	return 1;
}

void xpu_alerts_expire(struct xpu_alerts *a, uint64_t now)
{
	for (uint32_t i = 0; i < a->n; i++) {
		struct xpu_alert *x = slot(a, i);
		if (x->active && x->hold_ns && now >= x->last + x->hold_ns) {
			x->active = 0;
			x->cleared = x->last + x->hold_ns;
		}
	}
}

uint32_t xpu_alerts_active(const struct xpu_alerts *a, int sev)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct xpu_alert *x = xpu_alerts_at(a, i);
		n += x->active && (sev < 0 || x->sev == sev);
	}
	return n;
}

void xpu_alerts_summary(const struct xpu_alerts *a, uint64_t now, int *top, int *recent)
{
	*top = *recent = -1;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct xpu_alert *x = xpu_alerts_at(a, i);
		if (x->active && (*top < 0 || x->sev >= xpu_alerts_at(a, (uint32_t)*top)->sev))
			*top = (int)i;
		if (!x->active && x->cleared + XPU_ALERT_RECENT_NS > now &&
		    (*recent < 0 || x->cleared >= xpu_alerts_at(a, (uint32_t)*recent)->cleared))
			*recent = (int)i;
	}
}

const char *xpu_alert_sev_name(enum xpu_alert_sev sev)
{
	static const char *names[XPU_ALERT_SEV_MAX] = { "WARN", "STALL", "CRITICAL" };
	return sev < XPU_ALERT_SEV_MAX ? names[sev] : "?";
}
