/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch_alerts.h"

#include <inttypes.h>

#include "batch_fmt.h"
#include "json.h"
#include "snapshot.h"

void xpu_batch_alert_json(struct xpu_json *j, const struct xpu_snapshot *s, uint32_t i)
{
	char when[64];
	const struct xpu_alert *a = &s->alerts[i];
	xpu_json_obj(j, NULL);
	xpu_batch_wall_text(xpu_snapshot_wall(s, a->raised), when, sizeof(when), 1);
	xpu_json_str(j, "time", when);
	xpu_json_uint(j, "mono_ns", a->raised);
	xpu_json_str(j, "severity", xpu_alert_sev_name(a->sev));
	xpu_json_str(j, "source", a->source);
	xpu_json_str(j, "rule", a->rule);
	xpu_json_str(j, "message", a->msg);
	xpu_json_uint(j, "count", a->count);
	xpu_json_bool(j, "active", a->active);
	if (a->active) {
		xpu_json_null(j, "cleared");
	} else {
		xpu_batch_wall_text(xpu_snapshot_wall(s, a->cleared), when, sizeof(when), 1);
		xpu_json_str(j, "cleared", when);
	}
	xpu_json_end(j, '}');
}

void xpu_batch_alerts_json(struct xpu_json *j, const struct xpu_snapshot *s)
{
	xpu_json_arr(j, "alerts");
	for (uint32_t i = 0; i < s->nalerts; i++)
		xpu_batch_alert_json(j, s, i);
	xpu_json_end(j, ']');
}

void xpu_batch_alerts_text(FILE *f, const struct xpu_snapshot *s)
{
	char when[64];
	if (!s->nalerts)
		return;
	fprintf(f, "ALERTS: %u active\n", s->alerts_active);
	for (uint32_t i = 0; i < s->nalerts; i++) {
		const struct xpu_alert *a = &s->alerts[i];
		xpu_batch_wall_text(xpu_snapshot_wall(s, a->raised), when, sizeof(when), 0);
		fprintf(f, "  %s %-8s %-4s %s%s (x%u)\n", when, xpu_alert_sev_name(a->sev), a->source, a->msg,
			a->active ? "" : " [cleared]", a->count);
	}
}
