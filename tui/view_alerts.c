/* SPDX-License-Identifier: GPL-2.0-only */
#include "view_alerts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "draw.h"

static enum xpu_role sev_role(const struct xpu_alert *a)
{
	if (!a->active)
		return XPU_ROLE_ALERT_CLEARED;
	switch (a->sev) {
	case XPU_ALERT_CRITICAL: return XPU_ROLE_ALERT_CRITICAL;
	case XPU_ALERT_STALL: return XPU_ROLE_ALERT_STALL;
	default: return XPU_ROLE_ALERT_WARN;
	}
}

static void clock_text(char *buf, size_t size, const struct xpu_snapshot *s, uint64_t mono)
{
	time_t t = (time_t)(xpu_snapshot_wall(s, mono) / 1000000000ULL);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%H:%M:%S", &tm))
		snprintf(buf, size, "--:--:--");
}

int xpu_tui_alert_bar_wanted(const struct xpu_snapshot *s)
{
	return s->alert_top >= 0 || s->alert_recent >= 0;
}

void xpu_tui_alert_bar_draw(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	int top = s->alert_top >= 0 ? s->alert_top : s->alert_recent;
	char head[48], tail[96], when[16];

	if (r->h <= 0 || top < 0)
		return;
	const struct xpu_alert *a = &s->alerts[top];
	attr_t attr = xpu_draw_attr(sev_role(a));
	xpu_fill(r->y, r->x, r->w, attr);
	if (a->active) {
		clock_text(when, sizeof(when), s, a->raised);
		snprintf(head, sizeof(head), " %s %s ", xpu_alert_sev_name(a->sev), a->source);
		int n = snprintf(tail, sizeof(tail), "  x%u since %s", a->count, when);
		if (s->alerts_active > 1 && n > 0 && (size_t)n < sizeof(tail))
			snprintf(tail + n, sizeof(tail) - (size_t)n, "  (+%u more active)", s->alerts_active - 1);
	} else {
		clock_text(when, sizeof(when), s, a->cleared);
		snprintf(head, sizeof(head), " " XPU_ALERT_BAR_CLEARED " %s  %s %s ", when,
			 xpu_alert_sev_name(a->sev), a->source);
		tail[0] = '\0';
	}
	int x = r->x;
	x += xpu_put_text(r->y, x, r->w, head, attr | A_BOLD, 0);
	int tw = xpu_text_width(tail);
	if (tw > r->x + r->w - x - 8)
		tw = 0;
	xpu_put_text(r->y, x, r->x + r->w - x - tw, a->msg, attr, 1);
	if (tw)
		xpu_put_text(r->y, r->x + r->w - tw, tw, tail, attr, 0);
}

/* Where an alert line's message starts: " HH:MM:SS SEVERITY src  ". */
#define LOG_MSG_X 24

static void log_state(char *buf, size_t size, const struct xpu_snapshot *s, const struct xpu_alert *a)
{
	char c[16];
	if (a->active) {
		snprintf(buf, size, "x%u active", a->count);
	} else {
		clock_text(c, sizeof(c), s, a->cleared);
		snprintf(buf, size, "x%u cleared %s", a->count, c);
	}
}

/* Lines an alert's message takes on a log w wide: the first beside its
 * state, the rest below it from the message's column. */
static int msg_lines(const struct xpu_snapshot *s, const struct xpu_alert *a, int w)
{
	char state[48];
	log_state(state, sizeof(state), s, a);
	int first = w - LOG_MSG_X - xpu_text_width(state) - 2, rest = w - LOG_MSG_X - 1;
	if (first < 8 || rest < 8)
		return 1;
	const char *p;
	xpu_text_wrap(a->msg, first, &p);
	return 1 + xpu_text_lines(p, rest);
}

int xpu_tui_alert_log_rows(const struct xpu_snapshot *s, int w, int all)
{
	if (!s->nalerts)
		return all ? 2 : 0;
	return 1 + msg_lines(s, &s->alerts[s->nalerts - 1], w) + (all ? (int)s->nalerts - 1 : 0);
}

/* One alert from row y: its head and state, its message wrapped over at
 * most `lines` rows.  Returns the rows used. */
static int log_alert(const struct xpu_rect *r, int y, const struct xpu_snapshot *s, const struct xpu_alert *a,
		     int lines)
{
	char line[64], when[16], state[48];
	clock_text(when, sizeof(when), s, a->raised);
	snprintf(line, sizeof(line), "%s %-8s %-4s", when, xpu_alert_sev_name(a->sev), a->source);
	int x = r->x + 1;
	x += xpu_put_text(y, x, r->w - 1, line, xpu_draw_attr(sev_role(a)), 0) + 1;
	log_state(state, sizeof(state), s, a);
	int sw = xpu_text_width(state);
	int room = r->x + r->w - x - sw - 2, with_state = room > 8;
	const char *p = a->msg;
	int used = 1;
	if (lines > 1 && with_state && r->w - LOG_MSG_X - 1 >= 8) {
		size_t n = xpu_text_wrap(p, room, &p);
		char buf[XPU_ALERT_MSG_LEN + 1];
		memcpy(buf, a->msg, n);
		buf[n] = '\0';
		xpu_put_text(y, x, room, buf, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
		for (; *p && used < lines; used++) {
			const char *start = p;
			int last = used == lines - 1;
			n = last ? strlen(p) : xpu_text_wrap(p, r->w - LOG_MSG_X - 1, &p);
			memcpy(buf, start, n);
			buf[n] = '\0';
			xpu_put_text(y + used, r->x + LOG_MSG_X, r->w - LOG_MSG_X - 1, buf,
				     xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
			if (last)
				p += n;
		}
	} else {
		xpu_put_text(y, x, with_state ? room : r->x + r->w - x, a->msg, xpu_draw_attr(XPU_ROLE_DEFAULT), 1);
	}
	if (with_state)
		xpu_put_text(y, r->x + r->w - sw - 1, sw, state,
			     xpu_draw_attr(a->active ? sev_role(a) : XPU_ROLE_ALERT_CLEARED), 0);
	return used;
}

void xpu_tui_alert_log_draw(const struct xpu_rect *r, const struct xpu_snapshot *s)
{
	char title[96];

	if (r->h <= 0)
		return;
	snprintf(title, sizeof(title), " " XPU_ALERT_LOG_TITLE "  %u alert%s, %u active%s", s->nalerts,
		 s->nalerts == 1 ? "" : "s", s->alerts_active, s->nalerts ? "  (Enter: the alert card)" : "");
	xpu_fill(r->y, r->x, r->w, xpu_draw_attr(XPU_ROLE_FLAME_TITLE));
	xpu_put_text(r->y, r->x, r->w, title, xpu_draw_attr(XPU_ROLE_FLAME_TITLE), 1);
	if (!s->nalerts) {
		if (r->h > 1)
			xpu_put_text(r->y + 1, r->x + 1, r->w - 1,
				     "no alerts: stalls, recoveries, aborted jobs and IPC anomalies show here",
				     xpu_draw_attr(XPU_ROLE_EMPTY), 1);
		return;
	}
	/* Newest first, its whole message before a line for each older one. */
	int rows = r->h - 1, need = msg_lines(s, &s->alerts[s->nalerts - 1], r->w);
	int first = need < rows ? need : rows;
	int y = r->y + 1;
	for (uint32_t k = 0; k < s->nalerts && y < r->y + r->h; k++) {
		const struct xpu_alert *a = &s->alerts[s->nalerts - 1 - k];
		y += log_alert(r, y, s, a, k ? 1 : first);
	}
}
