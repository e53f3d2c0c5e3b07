/* SPDX-License-Identifier: GPL-2.0-only */
#include "snapshot.h"

#include <stdio.h>
#include <string.h>

#include "session.h"

void xpu_viewstate_init(struct xpu_viewstate *vs)
{
	memset(vs, 0, sizeof(*vs));
	vs->view = XPU_VIEW_DEFAULT;
	for (int i = 0; i < XPU_VIEW_MAX; i++)
		vs->sort_col[i] = -1;
	vs->flame = 1;
	vs->window = XPU_WIN_RECENT;
}

void xpu_viewstate_settle(struct xpu_viewstate *vs, const struct xpu_snapshot *s)
{
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		if (s->sel[v].lost)
			vs->follow[v] = 0;
		if (s->sel[v].row >= 0) {
			vs->sel_row[v] = s->sel[v].row;
			vs->selected[v] = s->sel[v].key;
		}
	}
}

#define XPU_VIEW_DECL(ID, name) extern const struct xpu_snap_view xpu_snap_view_##name;
XPU_VIEW_LIST(XPU_VIEW_DECL)
#define XPU_VIEW_ENTRY(ID, name) [XPU_VIEW_##ID] = &xpu_snap_view_##name,
const struct xpu_snap_view *const xpu_snap_views[XPU_VIEW_MAX] = { XPU_VIEW_LIST(XPU_VIEW_ENTRY) };

int xpu_snap_more_col(const struct xpu_snap_view *d, int k, int sort_col)
{
	int first = (int)d->ncols;
	for (int i = 0; i < k && i < XPU_SNAP_MORE_MAX; i++)
		first += (int)d->more[i].n;
	if (k < 0 || k >= XPU_SNAP_MORE_MAX || sort_col < first || sort_col >= first + (int)d->more[k].n)
		return -1;
	return sort_col - first;
}

void xpu_snapshot_init(struct xpu_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->only_view = -1;
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		if (xpu_snap_views[v]->init)
			xpu_snap_views[v]->init(s);
}

void xpu_snapshot_free(struct xpu_snapshot *s)
{
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		if (xpu_snap_views[v]->free)
			xpu_snap_views[v]->free(s);
}

static void header(struct xpu_snapshot *s, const struct xpu_session *sess)
{
	s->dict = &sess->dict;
	s->mono_ns = sess->last_tick_mono;
	s->wall_ns = sess->last_tick_wall;
	s->interval_ns = sess->last_interval;
	s->window_ns = sess->cpu.ticks.window_ns;
	snprintf(s->host, sizeof(s->host), "%s", sess->host);
	s->ticks = sess->ticks;
	s->events_total = sess->events_total;
	s->events_per_s = sess->last_interval ? (double)sess->events_last * 1e9 / (double)sess->last_interval : 0;
	s->dropped_total = sess->dropped_total;
	s->dropped_tick = sess->dropped_last;
	s->sample_hz = sess->cfg.sample_hz;
	s->ncpus = sess->ncpus;
	s->self_cpu_pct = sess->self_cpu_pct;
	s->replay = sess->replay;
	s->replay_done = sess->replay_done;
	s->attached = sess->attached;
	snprintf(s->source_name, sizeof(s->source_name), "%s", sess->source_name);
	s->collect_hz = sess->stream_hz ? sess->stream_hz : sess->cfg.sample_hz;
	s->collect = sess->replay ? 0 : sess->attached ? sess->stream_collect
			: sess->stream_collect | XPU_TICK_KNOWN |
			  (sess->cfg.gpu.mode == XPU_GPU_MODE_EXACT ? XPU_TICK_GPU_EXACT : 0);
	s->collector_pid = sess->attached ? sess->collector_pid : 0;
	s->collect_interval_ns = sess->stream_ns ? sess->stream_ns : sess->stream_interval;
	s->view_interval_ns = sess->cfg.interval_ns;
	s->merged_ticks = sess->merged_ticks;
	s->clients = sess->clients;
}

void xpu_snapshot_arrange(struct xpu_snapshot *s, struct xpu_table *t, const struct xpu_viewstate *vs,
			  enum xpu_view v, int default_col)
{
	xpu_snapshot_arrange_shaped(s, t, vs, v, default_col, NULL);
}

void xpu_snapshot_arrange_shaped(struct xpu_snapshot *s, struct xpu_table *t, const struct xpu_viewstate *vs,
				 enum xpu_view v, int default_col,
				 void (*shape)(struct xpu_table *t, const struct xpu_viewstate *vs))
{
	int col = vs->sort_col[v];
	xpu_table_filter(t, vs->filter[v]);
	if (col < 0 || (uint32_t)col >= t->ncols)
		col = default_col;
	xpu_table_sort(t, col, vs->reverse[v]);
	if (shape)
		shape(t, vs);
	struct xpu_sel *sel = &s->sel[v];
	sel->row = xpu_table_keep_row(t, vs->selected[v], vs->sel_row[v], vs->follow[v], &sel->lost);
	sel->key = sel->row >= 0 ? t->keys[sel->row] : 0;
}

static void alerts(struct xpu_snapshot *s, const struct xpu_alerts *a)
{
	s->nalerts = a->n;
	s->alerts_active = xpu_alerts_active(a, -1);
	xpu_alerts_summary(a, s->mono_ns, &s->alert_top, &s->alert_recent);
	for (uint32_t i = 0; i < a->n; i++)
		s->alerts[i] = *xpu_alerts_at(a, i);
}

int xpu_snapshot_build(struct xpu_snapshot *s, struct xpu_session *sess,
		       const struct xpu_viewstate *vs)
{
	header(s, sess);
	alerts(s, &sess->alerts);
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		if (xpu_snap_views[v]->build(s, sess, vs) < 0)
			return -1;
	return 0;
}
