/* SPDX-License-Identifier: GPL-2.0-only */
/* The alert log: one line per alert while it holds, counts instead of
 * repeats, held event alerts, condition alerts, a bounded log. */
#include "check.h"

#include "alerts.h"

#define S 1000000000ULL

static struct xpu_alerts log_;

static struct xpu_alerts *fresh(void)
{
	xpu_alerts_init(&log_);
	return &log_;
}

TEST(a_raised_alert_is_active_with_its_time_severity_and_message)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "npu.stall", 0, 5 * S, 0, "job %d stuck", 7);
	REQUIRE(a->n == 1);
	const struct xpu_alert *x = xpu_alerts_at(a, 0);
	CHECK(x->active);
	CHECK_INT(x->raised, ==, 5 * S);
	CHECK_INT(x->sev, ==, XPU_ALERT_STALL);
	CHECK_STR(x->msg, "job 7 stuck");
	CHECK_STR(x->source, "npu");
	CHECK_STR(x->rule, "npu.stall");
	CHECK_STR(xpu_alert_sev_name(x->sev), "STALL");
}

TEST(raising_again_while_active_counts_instead_of_adding_a_line)
{
	struct xpu_alerts *a = fresh();
	for (int i = 0; i < 5; i++)
		xpu_alert_raise(a, XPU_ALERT_CRITICAL, "npu", "npu.ipc_timeout", 0, (uint64_t)(i + 1) * S,
				10 * S, "timeout %d", i);
	CHECK_INT(a->n, ==, 1);
	CHECK_INT(xpu_alerts_at(a, 0)->count, ==, 5);
	CHECK_INT(xpu_alerts_at(a, 0)->raised, ==, 1 * S);
	CHECK_INT(xpu_alerts_at(a, 0)->last, ==, 5 * S);
	CHECK_STR(xpu_alerts_at(a, 0)->msg, "timeout 4");
}

TEST(alerts_of_other_keys_or_rules_are_separate_lines)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_WARN, "npu", "npu.ipc_rate", 1, S, 0, "a");
	xpu_alert_raise(a, XPU_ALERT_WARN, "npu", "npu.ipc_rate", 2, S, 0, "b");
	xpu_alert_raise(a, XPU_ALERT_WARN, "npu", "npu.ipc_silent", 1, S, 0, "c");
	xpu_alert_raise(a, XPU_ALERT_WARN, "gpu", "npu.ipc_rate", 1, S, 0, "d");
	CHECK_INT(a->n, ==, 4);
	CHECK_INT(xpu_alerts_active(a, -1), ==, 4);
}

TEST(a_condition_alert_stays_until_its_rule_clears_it)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "npu.stall", 0, S, 0, "stuck");
	xpu_alerts_expire(a, 3600 * S);
	CHECK(xpu_alerts_at(a, 0)->active);
	CHECK_INT(xpu_alert_clear(a, "npu", "npu.stall", 0, 7 * S), ==, 1);
	CHECK(!xpu_alerts_at(a, 0)->active);
	CHECK_INT(xpu_alerts_at(a, 0)->cleared, ==, 7 * S);
	CHECK_INT(xpu_alert_clear(a, "npu", "npu.stall", 0, 8 * S), ==, 0);
}

TEST(a_held_alert_clears_when_its_hold_runs_out_after_the_last_raise)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_CRITICAL, "npu", "npu.recovery", 0, 1 * S, 10 * S, "recovery");
	xpu_alert_raise(a, XPU_ALERT_CRITICAL, "npu", "npu.recovery", 0, 4 * S, 10 * S, "recovery");
	xpu_alerts_expire(a, 13 * S);
	CHECK(xpu_alerts_at(a, 0)->active);
	xpu_alerts_expire(a, 14 * S);
	CHECK(!xpu_alerts_at(a, 0)->active);
	CHECK_INT(xpu_alerts_at(a, 0)->cleared, ==, 14 * S);
}

TEST(a_cleared_alert_raised_again_is_a_new_line)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "npu.stall", 0, S, 0, "first");
	xpu_alert_clear(a, "npu", "npu.stall", 0, 2 * S);
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "npu.stall", 0, 3 * S, 0, "second");
	CHECK_INT(a->n, ==, 2);
	CHECK(!xpu_alerts_at(a, 0)->active);
	CHECK(xpu_alerts_at(a, 1)->active);
	CHECK_STR(xpu_alerts_at(a, 1)->msg, "second");
}

TEST(a_full_log_drops_its_oldest_cleared_line_and_counts_it)
{
	struct xpu_alerts *a = fresh();
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "keep", 0, S, 0, "still active");
	for (uint64_t i = 0; i < XPU_ALERT_LOG_MAX + 9; i++) {
		xpu_alert_raise(a, XPU_ALERT_WARN, "npu", "w", i, S + i, 0, "w%llu", (unsigned long long)i);
		xpu_alert_clear(a, "npu", "w", i, S + i + 1);
	}
	CHECK_INT(a->n, ==, XPU_ALERT_LOG_MAX);
	CHECK_INT(a->dropped, ==, 10);
	CHECK_STR(xpu_alerts_at(a, 0)->rule, "keep");
	CHECK(xpu_alert_find(a, "npu", "keep", 0) != NULL);
	CHECK_STR(xpu_alerts_at(a, a->n - 1)->msg, "w264");
}

TEST(the_bar_shows_the_most_severe_active_alert_newest_first)
{
	struct xpu_alerts *a = fresh();
	int top, recent;
	xpu_alert_raise(a, XPU_ALERT_WARN, "npu", "w", 0, 1 * S, 0, "warn");
	xpu_alert_raise(a, XPU_ALERT_CRITICAL, "npu", "c1", 0, 2 * S, 10 * S, "crit 1");
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "s", 0, 3 * S, 0, "stall");
	xpu_alert_raise(a, XPU_ALERT_CRITICAL, "npu", "c2", 0, 4 * S, 10 * S, "crit 2");
	xpu_alerts_summary(a, 5 * S, &top, &recent);
	CHECK_INT(top, ==, 3);
	CHECK_INT(recent, ==, -1);
	CHECK_INT(xpu_alerts_active(a, XPU_ALERT_CRITICAL), ==, 2);
	CHECK_INT(xpu_alerts_active(a, XPU_ALERT_WARN), ==, 1);
}

TEST(a_cleared_alert_stays_on_the_bar_for_a_minute)
{
	struct xpu_alerts *a = fresh();
	int top, recent;
	xpu_alert_raise(a, XPU_ALERT_STALL, "npu", "s", 0, 1 * S, 0, "stall");
	xpu_alert_clear(a, "npu", "s", 0, 2 * S);
	xpu_alerts_summary(a, 2 * S + XPU_ALERT_RECENT_NS - 1, &top, &recent);
	CHECK_INT(top, ==, -1);
	CHECK_INT(recent, ==, 0);
	xpu_alerts_summary(a, 2 * S + XPU_ALERT_RECENT_NS, &top, &recent);
	CHECK_INT(recent, ==, -1);
}
