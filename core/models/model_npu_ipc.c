/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model's IPC part (model_npu.h): the firmware messages' names,
 * messages by type, the timeout and heartbeat counters, and their snapshot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "model_npu.h"
#include "model_npu_int.h"

#define JSM_QUERY_ENGINE_HB 0x1104
#define JSM_QUERY_ENGINE_HB_DONE 0x2204

static const struct { uint32_t type; const char *name; } msg_names[] = {
	{ 0x1100, "ENGINE_RESET" }, { 0x1101, "ENGINE_PREEMPT" }, { 0x1102, "REGISTER_DB" },
	{ 0x1103, "UNREGISTER_DB" }, { 0x1104, "QUERY_ENGINE_HB" }, { 0x11ff, "STATE_DUMP" },
	{ 0x2100, "JOB_DONE" }, { 0x2200, "ASYNC_CMD_DONE" }, { 0x2201, "ENGINE_PREEMPT_DONE" },
	{ 0x2202, "REGISTER_DB_DONE" }, { 0x2203, "UNREGISTER_DB_DONE" },
	{ 0x2204, "QUERY_ENGINE_HB_DONE" }, { 0x21ff, "STATE_DUMP_RSP" },
};

const char *xpu_npu_msg_name(uint32_t type)
{
	for (size_t i = 0; i < sizeof(msg_names) / sizeof(msg_names[0]); i++)
		if (msg_names[i].type == type)
			return msg_names[i].name;
	return NULL;
}

uint32_t xpu_npu_msg_type(const char *name)
{
	if (strncmp(name, "VPU_JSM_MSG_", 12) == 0)
		name += 12;
	for (size_t i = 0; i < sizeof(msg_names) / sizeof(msg_names[0]); i++)
		if (strcmp(msg_names[i].name, name) == 0)
			return msg_names[i].type;
	return 0;
}

static struct xpu_npu_type *type_get(struct xpu_npu_model *m, uint32_t code)
{
	for (uint32_t i = 0; i < m->ntypes; i++)
		if (m->types[i].code == code)
			return &m->types[i];
	if (m->ntypes == XPU_NPU_MAX_TYPES)
		return NULL;
	struct xpu_npu_type *t = &m->types[m->ntypes];
	t->code = code;
	if (xpu_win_count_init(&t->tx, m->ticks.window) < 0 || xpu_win_count_init(&t->rx, m->ticks.window) < 0) {
		xpu_win_count_free(&t->tx);
		memset(t, 0, sizeof(*t));
		return NULL;
	}
	m->ntypes++;
	return t;
}

void xpu_npu_on_ipc(struct xpu_npu_model *m, const struct xpu_event *ev, uint64_t n)
{
	const struct xpu_ev_npu *e = &ev->npu;
	int timeout = (e->aux & XPU_NPU_IPC_RX) && e->result == -XPU_NPU_ETIMEDOUT;

	if ((e->aux & XPU_NPU_IPC_MSG) && !timeout) {
		if (e->aux & XPU_NPU_IPC_TX)
			m->g[XPU_NPU_C_TX].open += n;
		if (e->aux & XPU_NPU_IPC_RX)
			m->g[XPU_NPU_C_RX].open += n;
		m->last_msg = ev->time;
	}
	if (e->code && !timeout) {
		struct xpu_npu_type *t = type_get(m, e->code);
		if (t && (e->aux & XPU_NPU_IPC_TX))
			t->tx.open += n;
		if (t && (e->aux & XPU_NPU_IPC_RX))
			t->rx.open += n;
		if (e->code == JSM_QUERY_ENGINE_HB && (e->aux & XPU_NPU_IPC_TX))
			m->hb_asked = ev->time;
		if (e->code == JSM_QUERY_ENGINE_HB_DONE && (e->aux & XPU_NPU_IPC_RX))
			m->hb_asked = 0;
	}
	if (e->aux & XPU_NPU_IPC_HB) {
		/* The first reading has nothing to compare with: only a repeated
		 * value is evidence that the engine is not moving. */
		if (!m->hb_valued || e->arg != m->hb_value)
			m->last_hb_progress = ev->time;
		m->hb_value = e->arg;
		m->hb_valued = 1;
	}
	if (timeout) {
		m->hb_asked = 0;
		m->g[XPU_NPU_C_TIMEOUT].open += n;
		xpu_alert_raise(m->alerts, XPU_ALERT_CRITICAL, "npu", "npu.ipc_timeout", 0, ev->time,
				XPU_NPU_ALERT_HOLD_NS, "firmware IPC receive timed out (%llu so far)",
				(unsigned long long)(m->g[XPU_NPU_C_TIMEOUT].total + m->g[XPU_NPU_C_TIMEOUT].open));
	}
}

void xpu_npu_snap_ipc(const struct xpu_npu_model *m, struct xpu_npu_snap *s, enum xpu_window w)
{
	uint64_t span = xpu_win_span(&m->ticks, w);
	const struct xpu_win_count *tx = &m->g[XPU_NPU_C_TX], *rx = &m->g[XPU_NPU_C_RX];

	s->tx_s = xpu_win_per_s(tx->last, m->ticks.tick_ns);
	s->rx_s = xpu_win_per_s(rx->last, m->ticks.tick_ns);
	s->tx_avg = xpu_win_per_s(xpu_win_count_get(tx, w), span);
	s->rx_avg = xpu_win_per_s(xpu_win_count_get(rx, w), span);
	s->tx_total = tx->total;
	s->rx_total = rx->total;
	s->timeouts_total = m->g[XPU_NPU_C_TIMEOUT].total;
	s->nhistory = m->hist_n;
	s->history_peak = 0;
	for (uint32_t i = 0; i < m->hist_n; i++) {
		uint32_t k = (m->hist_head + i) % XPU_NPU_HISTORY;
		s->history[i] = xpu_win_per_s(m->hist_msgs[k], m->hist_ns[k]);
		if (s->history[i] > s->history_peak)
			s->history_peak = s->history[i];
	}
	s->ntypes = m->ntypes;
	for (uint32_t i = 0; i < m->ntypes; i++) {
		const struct xpu_npu_type *t = &m->types[i];
		struct xpu_npu_type_snap *o = &s->types[i];
		const char *name = xpu_npu_msg_name(t->code);
		o->code = t->code;
		if (name)
			snprintf(o->name, sizeof(o->name), "%s", name);
		else
			snprintf(o->name, sizeof(o->name), "0x%04x", t->code);
		o->tx_s = xpu_win_per_s(xpu_win_count_get(&t->tx, w), span);
		o->rx_s = xpu_win_per_s(xpu_win_count_get(&t->rx, w), span);
		o->tx_total = t->tx.total;
		o->rx_total = t->rx.total;
	}
	s->baseline = m->baseline;
	s->baseline_armed = m->learned_ticks >= m->cfg.learn_ticks;
}
