/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU model: rates, errors and latency percentiles of ioctls, jobs matched
 * to their completions, and the alert rules against synthetic event
 * sequences of each scenario, including quiet periods that must not alert. */
#include "check.h"

#include <linux/types.h>

#include "dict.h"
#include "event.h"
#include "model_npu.h"
#include "npu.h"
#include "npu_sysfs.h"

#define S 1000000000ULL
#define MS 1000000ULL
#define TICK (500 * MS)

struct h {
	struct xpu_npu_model m;
	struct xpu_alerts alerts;
	struct xpu_dict dict;
	uint64_t now, last_tick;
	uint32_t job;
};

static struct h H;

/* The harness cannot go on without a model. */
#define REQUIRE_MODEL(c) do { if (!(c)) { fprintf(stderr, "  model init failed\n"); exit(1); } } while (0)

static struct h *setup(const struct xpu_npu_cfg *cfg)
{
	static int inited;
	if (inited) {
		xpu_npu_model_free(&H.m);
		xpu_dict_free(&H.dict);
	}
	memset(&H, 0, sizeof(H));
	xpu_alerts_init(&H.alerts);
	xpu_dict_init(&H.dict);
	REQUIRE_MODEL(xpu_npu_model_init(&H.m, cfg, 20, &H.alerts) == 0);
	inited = 1;
	H.now = H.last_tick = 100 * S;
	return &H;
}

static void emit(struct h *h, uint16_t type, uint32_t pid, uint32_t code, int32_t result, uint64_t dur,
		 uint64_t arg, uint32_t aux, uint32_t count)
{
	struct xpu_event ev = { .type = type, .source = XPU_SRC_NPU, .pid = pid, .time = h->now };
	ev.npu.code = code;
	ev.npu.result = result;
	ev.npu.dur_ns = dur;
	ev.npu.arg = arg;
	ev.npu.aux = aux;
	ev.npu.count = count;
	ev.npu.comm = pid ? xpu_dict_cstr(&h->dict, "app") : 0;
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);
}

/* Advances time to t, closing every tick on the way. */
static void until(struct h *h, uint64_t t)
{
	while (h->last_tick + TICK <= t) {
		h->last_tick += TICK;
		h->now = h->last_tick;
		xpu_npu_model_tick(&h->m, h->now, TICK);
		xpu_alerts_expire(&h->alerts, h->now);
	}
	h->now = t;
}

static void ioctl_(struct h *h, uint32_t pid, uint32_t cmd, int32_t result, uint64_t dur, uint32_t n)
{
	emit(h, XPU_EV_NPU_IOCTL, pid, cmd, result, dur, 0, 0, n);
}

static void msg(struct h *h, uint32_t type, uint32_t aux)
{
	emit(h, XPU_EV_NPU_IPC, 0, type, 0, 0, 0, aux | XPU_NPU_IPC_MSG, 1);
}

static void submit(struct h *h, uint32_t pid, uint32_t queue)
{
	emit(h, XPU_EV_NPU_JOB, pid, XPU_NPU_JOB_SUBMIT, 0, 0, 0, queue, 1);
}

static void done(struct h *h, uint32_t queue, int32_t status)
{
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, status, 0, 0, queue, 1);
	emit(h, XPU_EV_NPU_IPC, 0, 0x2100, 0, 0, 0, XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG, 1);
}

static void heartbeat(struct h *h, uint64_t value)
{
	msg(h, 0x1104, XPU_NPU_IPC_TX);
	emit(h, XPU_EV_NPU_IPC, 0, 0x2204, 0, 0, value, XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG | XPU_NPU_IPC_HB, 1);
}

/* Inference as the driver does it: ~100 jobs a second, 3 ms each, a
 * heartbeat query every 50 jobs. */
static void burst(struct h *h, uint64_t secs)
{
	uint64_t end = h->now + secs * S;
	while (h->now + 10 * MS <= end) {
		uint64_t t = h->now;
		submit(h, 42, 1);
		until(h, t + 3 * MS);
		done(h, 1, 0);
		if (++h->job % 50 == 0)
			heartbeat(h, 1000 + h->job);
		until(h, t + 10 * MS);
	}
	until(h, end);
}

static int alerts(struct h *h, const char *rule)
{
	int n = 0;
	for (uint32_t i = 0; i < h->alerts.n; i++)
		n += strcmp(xpu_alerts_at(&h->alerts, i)->rule, rule) == 0;
	return n;
}

static const struct xpu_alert *alert(struct h *h, const char *rule)
{
	for (uint32_t i = 0; i < h->alerts.n; i++)
		if (strcmp(xpu_alerts_at(&h->alerts, i)->rule, rule) == 0)
			return xpu_alerts_at(&h->alerts, i);
	return NULL;
}

static const struct xpu_cell *row(struct xpu_npu_snap *s, uint64_t key)
{
	int r = xpu_table_find(&s->calls, key);
	return r < 0 ? NULL : xpu_table_row(&s->calls, (uint32_t)r);
}

#define IOCTL_KEY(pid, cmd) ((uint64_t)(pid) << 32 | (uint64_t)XPU_NPU_KIND_IOCTL << 24 | (cmd))
#define SUBMIT_CMD 0x6445

/* ---- ioctls ---- */

TEST(ioctl_rates_are_calls_per_second_of_the_last_tick)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	for (int i = 0; i < 50; i++)
		ioctl_(h, 7, SUBMIT_CMD, 0, 2000, 1);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	const struct xpu_cell *c = row(&s, IOCTL_KEY(7, SUBMIT_CMD));
	REQUIRE(c);
	CHECK(c[XPU_NPU_COL_RATE].d > 99.9 && c[XPU_NPU_COL_RATE].d < 100.1);
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 50);
	CHECK_STR(c[XPU_NPU_COL_CALL].s, "IVPU_SUBMIT");
	CHECK_STR(c[XPU_NPU_COL_COMM].s, "app");
	xpu_npu_snap_free(&s);
}

TEST(an_aggregated_event_counts_as_its_count_of_calls)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	ioctl_(h, 7, 0x6440, 0, 1000, 30000);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	const struct xpu_cell *c = row(&s, IOCTL_KEY(7, 0x6440));
	REQUIRE(c);
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 30000);
	CHECK_STR(c[XPU_NPU_COL_CALL].s, "IVPU_GET_PARAM");
	xpu_npu_snap_free(&s);
}

TEST(ioctl_errors_are_counted_and_named_by_errno)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	ioctl_(h, 7, 0x6446, 0, 1000, 5);
	ioctl_(h, 7, 0x6446, -110, 1000, 3);
	ioctl_(h, 7, 0x6446, -25, 1000, 1);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	const struct xpu_cell *c = row(&s, IOCTL_KEY(7, 0x6446));
	REQUIRE(c);
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 9);
	CHECK_INT(c[XPU_NPU_COL_ERRORS].i, ==, 4);
	CHECK_STR(c[XPU_NPU_COL_ERRNO].s, "ETIMEDOUT");
	CHECK_STR(c[XPU_NPU_COL_CALL].s, "IVPU_BO_WAIT");
	xpu_npu_snap_free(&s);
}

/* 90 submits of 10 us and 10 of 2 ms in one tick; the row's cells in
 * window w (s initialized here). */
static const struct xpu_cell *mixed_latencies(struct h *h, struct xpu_npu_snap *s, enum xpu_window w)
{
	ioctl_(h, 7, SUBMIT_CMD, 0, 10000, 90);		/* 10 us */
	ioctl_(h, 7, SUBMIT_CMD, 0, 2000000, 10);	/* 2 ms */
	until(h, h->now + TICK);
	xpu_npu_snap_init(s);
	xpu_npu_model_snapshot(&h->m, &h->dict, s, w);
	return row(s, IOCTL_KEY(7, SUBMIT_CMD));
}

TEST(ioctl_percentiles_come_from_the_latency_histogram_within_a_sixteenth)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	const struct xpu_cell *c = mixed_latencies(h, &s, XPU_WIN_RECENT);
	REQUIRE(c);
	CHECK(c[XPU_NPU_COL_P50].i >= 10000 * 15 / 16 && c[XPU_NPU_COL_P50].i <= 10000 * 17 / 16);
	CHECK(c[XPU_NPU_COL_P99].i >= 2000000 * 15 / 16 && c[XPU_NPU_COL_P99].i <= 2000000 * 17 / 16);
	xpu_npu_snap_free(&s);
}

TEST(the_histogram_bucket_of_a_bucket_lower_bound_is_that_bucket)
{
	for (uint32_t b = 0; b < XPU_NPU_HIST_BUCKETS; b++)
		CHECK_INT(xpu_npu_hist_bucket(xpu_npu_hist_lower(b)), ==, b);
	CHECK_INT(xpu_npu_hist_bucket(UINT64_MAX), ==, XPU_NPU_HIST_BUCKETS - 1);
}

TEST(calls_leave_the_recent_window_but_stay_in_the_totals)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	ioctl_(h, 7, SUBMIT_CMD, 0, 1000, 10);
	until(h, h->now + 30 * S);	/* the window is 20 ticks */
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK(row(&s, IOCTL_KEY(7, SUBMIT_CMD)) == NULL);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	const struct xpu_cell *c = row(&s, IOCTL_KEY(7, SUBMIT_CMD));
	REQUIRE(c);
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 10);
	xpu_npu_snap_free(&s);
}

TEST(an_idle_rows_histogram_is_parked_and_keeps_its_since_start_percentiles)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	const struct xpu_cell *c = mixed_latencies(h, &s, XPU_WIN_ALL);
	REQUIRE(c);
	int64_t p50 = c[XPU_NPU_COL_P50].i, p99 = c[XPU_NPU_COL_P99].i;
	REQUIRE(h->m.ncalls == 1);
	CHECK(h->m.calls[0].lat.all != NULL);
	until(h, h->now + 30 * S);	/* the window is 20 ticks: idle since */
	const struct xpu_win_hist *l = &h->m.calls[0].lat;
	CHECK(l->all == NULL && l->open == NULL && l->win == NULL && l->ring == NULL);
	CHECK_INT(l->parked.n, ==, 2);	/* two buckets used */
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	c = row(&s, IOCTL_KEY(7, SUBMIT_CMD));
	REQUIRE(c);
	CHECK_INT(c[XPU_NPU_COL_P50].i, ==, p50);
	CHECK_INT(c[XPU_NPU_COL_P99].i, ==, p99);
	/* In use again: dense, with the old buckets counted since the start. */
	ioctl_(h, 7, SUBMIT_CMD, 0, 2000000, 100);
	until(h, h->now + TICK);
	CHECK(l->all != NULL && l->parked.n == 0);
	CHECK_INT(l->n_all, ==, 200);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	c = row(&s, IOCTL_KEY(7, SUBMIT_CMD));
	REQUIRE(c);
	CHECK(c[XPU_NPU_COL_P50].i >= 2000000 * 15 / 16);	/* 110 of 200 at 2 ms now */
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 200);
	xpu_npu_snap_free(&s);
}

TEST(call_rows_past_the_limit_age_out_the_lightest_idle_ones)
{
	struct h *h = setup(NULL);
	h->m.max_calls = 8;
	for (uint32_t p = 1; p <= 12; p++)	/* twelve processes, p calls each, then quiet */
		ioctl_(h, 100 + p, SUBMIT_CMD, 0, 1000, p);
	until(h, h->now + 1 * S);
	CHECK_INT(h->m.ncalls, ==, 12);		/* all in the window */
	submit(h, 7, 1);			/* a job outstanding on pid 7's row */
	until(h, h->now + 25 * S);		/* the window is 20 ticks */
	CHECK_INT(h->m.ncalls, ==, 6);		/* pid 7's job row + the 5 heaviest */
	CHECK_INT(h->m.calls_aged_out, ==, 7);
	struct xpu_npu_snap s;
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	CHECK(row(&s, IOCTL_KEY(112, SUBMIT_CMD)) != NULL);
	CHECK(row(&s, IOCTL_KEY(107, SUBMIT_CMD)) == NULL);
	xpu_npu_snap_free(&s);
	done(h, 1, 0);				/* the job still finds its row */
	until(h, h->now + 1 * S);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK_INT(h->m.g[XPU_NPU_C_DONE].last + h->m.g[XPU_NPU_C_DONE].recent > 0, ==, 1);
	xpu_npu_snap_free(&s);
}

TEST(level_zero_calls_are_rows_of_their_process_with_ze_results_named)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	emit(h, XPU_EV_NPU_L0, 9, XPU_NPU_L0_EXECUTE, 0x78000001, 5000, 0, 0, 1);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	const struct xpu_cell *c = row(&s, (uint64_t)9 << 32 | (uint64_t)XPU_NPU_KIND_L0 << 24 | XPU_NPU_L0_EXECUTE);
	REQUIRE(c);
	CHECK_STR(c[XPU_NPU_COL_CALL].s, "zeCommandQueueExecuteCommandLists");
	CHECK_STR(c[XPU_NPU_COL_ERRNO].s, "UNINITIALIZED");
	CHECK_STR(c[XPU_NPU_COL_KIND].s, "L0");
	CHECK(s.l0_total[XPU_NPU_L0_EXECUTE] == 1);
	xpu_npu_snap_free(&s);
}

/* ---- jobs ---- */

TEST(a_completion_ends_the_oldest_job_of_its_queue)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	submit(h, 42, 1);
	until(h, h->now + 1 * MS);
	submit(h, 42, 2);
	until(h, h->now + 1 * MS);
	submit(h, 42, 1);
	until(h, h->now + 3 * MS);
	done(h, 1, 0);		/* the first job: 5 ms */
	xpu_npu_snap_init(&s);
	until(h, h->last_tick + TICK);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK_INT(s.outstanding, ==, 2);
	CHECK(s.lat_valid);
	CHECK_INT(s.max_ns, ==, 5 * MS);
	CHECK_INT(s.done_total, ==, 1);
	CHECK_INT(s.submitted_total, ==, 3);
	xpu_npu_snap_free(&s);
}

TEST(jobs_with_keys_match_their_completion_by_key)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, 11, 5, 1);
	until(h, h->now + 2 * MS);
	emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, 12, 5, 1);
	until(h, h->now + 2 * MS);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, 0, 0, 12, 5, 1);	/* the second: 2 ms */
	until(h, h->last_tick + TICK);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK_INT(s.max_ns, ==, 2 * MS);
	CHECK_INT(s.outstanding, ==, 1);
	xpu_npu_snap_free(&s);
}

TEST(a_process_busy_time_is_its_summed_job_time)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	for (int i = 0; i < 10; i++) {
		submit(h, 42, 1);
		until(h, h->now + 20 * MS);
		done(h, 1, 0);
	}
	until(h, h->last_tick + TICK);	/* 200 ms of jobs in one 500 ms tick */
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	const struct xpu_cell *c = row(&s, (uint64_t)42 << 32 | (uint64_t)XPU_NPU_KIND_JOB << 24);
	REQUIRE(c);
	CHECK(c[XPU_NPU_COL_BUSY].d > 39.9 && c[XPU_NPU_COL_BUSY].d < 40.1);
	CHECK_INT(c[XPU_NPU_COL_TOTAL].i, ==, 10);
	xpu_npu_snap_free(&s);
}

TEST(device_busy_percent_needs_two_sysfs_readings)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	xpu_npu_snap_init(&s);
	emit(h, XPU_EV_NPU_BUSY, 0, 0, 0, 0, 1000000, 0, 1);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK(!s.busy_valid);
	until(h, h->now + 1 * S);
	emit(h, XPU_EV_NPU_BUSY, 0, 0, 0, 0, 1250000, 0, 1);	/* 250 ms busy in 1 s */
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK(s.busy_valid);
	CHECK(s.busy_pct > 24.9 && s.busy_pct < 25.1);
	xpu_npu_snap_free(&s);
}

TEST(memory_shares_split_the_calls_by_category)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	emit(h, XPU_EV_NPU_MEM, 0, XPU_NPU_MEM_MAP, 0, 0, 0, 0, 2);
	emit(h, XPU_EV_NPU_MEM, 0, XPU_NPU_MEM_BO_CREATE, 0, 0, 0, 0, 1);
	emit(h, XPU_EV_NPU_MEM, 0, XPU_NPU_MEM_BIND, 0, 0, 0, 0, 1);
	for (int i = 0; i < 6; i++)
		msg(h, 0, XPU_NPU_IPC_TX);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	CHECK(s.shares_valid);
	CHECK(s.share_mm > 19.9 && s.share_mm < 20.1);
	CHECK(s.share_bo > 19.9 && s.share_bo < 20.1);
	CHECK(s.share_ipc > 59.9 && s.share_ipc < 60.1);
	xpu_npu_snap_free(&s);
}

TEST(the_sparkline_history_is_messages_per_second_of_each_tick)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	for (int t = 0; t < 3; t++) {
		for (int i = 0; i < t * 10; i++)
			msg(h, 0, XPU_NPU_IPC_RX);
		until(h, h->last_tick + TICK);
	}
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT);
	REQUIRE(s.nhistory == 3);
	CHECK(s.history[0] == 0);
	CHECK(s.history[1] > 19.9 && s.history[1] < 20.1);
	CHECK(s.history[2] > 39.9 && s.history[2] < 40.1);
	CHECK(s.history_peak > 39.9);
	xpu_npu_snap_free(&s);
}

/* ---- rules: each scenario, exactly its alerts ---- */

TEST(a_normal_inference_burst_raises_no_alert)
{
	struct h *h = setup(NULL);
	for (int i = 0; i < 4; i++) {
		burst(h, 3);
		until(h, h->now + 2 * S);
	}
	CHECK_INT(h->alerts.n, ==, 0);
}

TEST(quiet_but_healthy_raises_no_alert)
{
	struct h *h = setup(NULL);
	burst(h, 5);
	until(h, h->now + 600 * S);	/* ten minutes of nothing at all */
	CHECK_INT(h->alerts.n, ==, 0);
}

TEST(a_long_job_whose_heartbeat_advances_is_not_a_stall)
{
	struct h *h = setup(NULL);
	burst(h, 5);
	submit(h, 42, 1);
	for (int i = 1; i <= 5; i++) {	/* the driver checks the heartbeat at each TDR */
		until(h, h->now + 2 * S);
		heartbeat(h, 50000 + (uint64_t)i);
	}
	until(h, h->now + 100 * MS);
	done(h, 1, 0);
	until(h, h->now + 5 * S);
	CHECK_INT(alerts(h, "npu.stall"), ==, 0);
	CHECK_INT(alerts(h, "npu.job_aborted"), ==, 0);
}

TEST(a_firmware_stall_raises_stall_within_tdr_and_one_refresh)
{
	struct h *h = setup(NULL);
	burst(h, 4);
	until(h, h->now + 300 * MS);
	uint64_t onset = h->now;
	submit(h, 42, 1);
	until(h, onset + 2 * S + TICK);
	const struct xpu_alert *a = alert(h, "npu.stall");
	REQUIRE(a);
	CHECK(a->active);
	CHECK_INT(a->sev, ==, XPU_ALERT_STALL);
	CHECK(a->raised >= onset + 2 * S && a->raised <= onset + 2 * S + TICK);
	/* silence while a job waits, long past what jobs take: the early warning */
	CHECK_INT(alerts(h, "npu.ipc_silent"), ==, 1);
	CHECK_INT(h->alerts.n, ==, 2);
}

TEST(a_stall_clears_when_the_job_completes)
{
	struct h *h = setup(NULL);
	burst(h, 4);
	submit(h, 42, 1);
	until(h, h->now + 3 * S);
	REQUIRE(alert(h, "npu.stall") && alert(h, "npu.stall")->active);
	done(h, 1, 0);
	until(h, h->last_tick + TICK);
	CHECK(!alert(h, "npu.stall")->active);
	CHECK(!alert(h, "npu.ipc_silent")->active);
}

/* The stalled job's evidence, as the alert card and JSON show it. */
static struct xpu_npu_stall_snap stall_of(struct h *h)
{
	struct xpu_npu_snap s;
	xpu_npu_snap_init(&s);
	CHECK_INT(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT), ==, 0);
	struct xpu_npu_stall_snap st = s.stall;
	xpu_npu_snap_free(&s);
	return st;
}

/* A job with an id, its process polling BO_WAIT every 500 ms. */
static uint64_t stall_with_waits(struct h *h, uint64_t secs)
{
	burst(h, 4);
	until(h, h->now + 300 * MS);
	uint64_t onset = h->now;
	emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, 77, 1, 1);
	for (uint64_t t = 0; t < secs * 2; t++) {
		until(h, onset + t * 500 * MS + MS);
		ioctl_(h, 42, 0x6446, -XPU_NPU_ETIMEDOUT, 500 * MS, 1);
	}
	until(h, onset + secs * S);
	return onset;
}

TEST(a_stall_shows_its_job_process_waits_tdr_and_an_age_that_counts)
{
	struct h *h = setup(NULL);
	uint64_t onset = stall_with_waits(h, 8);
	const struct xpu_alert *a = alert(h, "npu.stall");
	REQUIRE(a && a->active);
	/* as of the last refresh, 7.7 s after the submit, not the 2.x s it had when raised */
	CHECK_INT(h->last_tick - onset, ==, 7700 * MS);
	CHECK(strstr(a->msg, "job 77 on queue 1 of pid 42 outstanding for 7.7 s, past the 2000 ms TDR") != NULL);
	struct xpu_npu_stall_snap st = stall_of(h);
	CHECK(st.shown && st.active && st.job_id_known);
	CHECK_INT(st.job_id, ==, 77);
	CHECK_INT(st.pid, ==, 42);
	CHECK_STR(st.comm, "app");
	CHECK_INT(st.submit, ==, onset);
	CHECK_INT(st.age_ns, ==, 7700 * MS);
	CHECK_INT(st.waits, ==, 16);
	CHECK_INT(st.wait_every_ns, ==, 500 * MS);
	CHECK(st.last_ipc && st.last_ipc < onset);
	CHECK_INT(st.tdr_ms, ==, 2000);
	CHECK_STR(st.tdr_origin, "default");
	CHECK_STR(st.after, "");
}

/* A hung job keeps the firmware hung after its process is gone, until the
 * driver's TDR ends it: the stall stays a TDR, saying the process exited;
 * with no word of the job by then, it clears and says so. */
TEST(a_stall_whose_process_exits_says_so_then_clears_a_tdr_later)
{
	struct h *h = setup(NULL);
	stall_with_waits(h, 4);
	REQUIRE(alert(h, "npu.stall") && alert(h, "npu.stall")->active);
	uint64_t gone = h->now;
	xpu_npu_model_exit(&h->m, 42, gone);
	until(h, h->last_tick + TICK);
	const struct xpu_alert *a = alert(h, "npu.stall");
	CHECK(a->active);
	CHECK(strstr(a->msg, "of pid 42 (exited) outstanding") != NULL);
	struct xpu_npu_stall_snap st = stall_of(h);
	CHECK(st.active);
	CHECK_INT(st.exited, ==, gone);
	until(h, gone + 2 * S + TICK);
	CHECK(!a->active);
	CHECK(strstr(a->msg, "; then its process exited") != NULL);
	st = stall_of(h);
	CHECK(strstr(st.after, "no completion, abort or recovery came within the TDR") != NULL);
	CHECK_INT(h->m.njobs, ==, 0);
	/* a job whose process was gone before the stall says so when raised */
	h = setup(NULL);
	burst(h, 4);
	emit(h, XPU_EV_NPU_JOB, 43, XPU_NPU_JOB_SUBMIT, 0, 0, 0, 1, 1);
	until(h, h->now + 1500 * MS);
	xpu_npu_model_exit(&h->m, 43, h->now);
	until(h, h->now + 1 * S);
	REQUIRE(alert(h, "npu.stall"));
	CHECK(strstr(alert(h, "npu.stall")->msg, "of pid 43 (exited)") != NULL);
	CHECK(stall_of(h).exited != 0);
}

TEST(a_stalled_job_that_completes_late_says_how_late)
{
	struct h *h = setup(NULL);
	uint64_t onset = stall_with_waits(h, 5);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, 0, 0, 77, 1, 1);
	until(h, h->last_tick + TICK);
	CHECK(!alert(h, "npu.stall")->active);
	struct xpu_npu_stall_snap st = stall_of(h);
	CHECK_STR(st.after, "the job completed late, 5.0 s after its submit");
	CHECK_INT(st.submit, ==, onset);
}

/* The issue-27 case: one stuck job among 500 healthy ones.  With job ids
 * its age counts from its submit and the STALL comes at the TDR; by order
 * each completion ends the oldest job, which hides it. */
static void stuck_among_many(struct h *h, int ids)
{
	emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, ids ? 1 : 0, 1, 1);
	for (uint64_t k = 2; k < 502; k++) {
		until(h, h->now + 10 * MS);
		emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, ids ? k : 0, 1, 1);
		until(h, h->now + 3 * MS);
		emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, 0, 0, ids ? k : 0, 1, 1);
	}
}

TEST(a_stuck_job_among_many_is_found_by_its_job_id)
{
	struct h *h = setup(NULL);
	uint64_t onset = h->now;
	stuck_among_many(h, 1);
	struct xpu_npu_snap s;
	xpu_npu_snap_init(&s);
	CHECK_INT(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT), ==, 0);
	CHECK_INT(s.outstanding, ==, 1);
	CHECK_INT(s.oldest_ns, >=, 6 * S);
	CHECK(!s.jobs_by_order);
	xpu_npu_snap_free(&s);
	/* while the others complete the engine is progressing: once they stop,
	 * the STALL names the stuck job and its whole age */
	CHECK_INT(alerts(h, "npu.stall"), ==, 0);
	uint64_t quiet = h->now;
	until(h, quiet + 2 * S + 2 * TICK);
	REQUIRE(alert(h, "npu.stall"));
	CHECK_INT(h->m.stall.job.key, ==, 1);
	CHECK_INT(h->m.stall.job.submit_ns, ==, onset);
	CHECK(strstr(alert(h, "npu.stall")->msg, "job 1 on queue 1") != NULL);
}

TEST(a_stuck_job_among_many_without_job_ids_hides_behind_their_completions)
{
	struct h *h = setup(NULL);
	stuck_among_many(h, 0);
	struct xpu_npu_snap s;
	xpu_npu_snap_init(&s);
	CHECK_INT(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT), ==, 0);
	CHECK_INT(s.outstanding, ==, 1);
	CHECK_INT(s.oldest_ns, <, 50 * MS);	/* what xputop(8) says matching by order hides */
	CHECK(s.jobs_by_order);
	xpu_npu_snap_free(&s);
}

TEST(completions_without_job_ids_are_matched_by_order_and_said_so)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	emit(h, XPU_EV_NPU_JOB, 42, XPU_NPU_JOB_SUBMIT, 0, 0, 5, 1, 1);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, 0, 0, 5, 1, 1);
	xpu_npu_snap_init(&s);
	CHECK_INT(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT), ==, 0);
	CHECK(!s.jobs_by_order);
	submit(h, 42, 1);
	done(h, 1, 0);
	CHECK_INT(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT), ==, 0);
	CHECK(s.jobs_by_order);
	xpu_npu_snap_free(&s);
}

TEST(the_tdr_is_the_drivers_unless_forced)
{
	struct h *h = setup(NULL);
	const char *from;
	CHECK_INT(xpu_npu_model_tdr_ms(&h->m, &from), ==, 2000);
	CHECK_STR(from, "default");
	emit(h, XPU_EV_NPU_PM, 0, XPU_NPU_PM_TDR, 0, 0, 5000, 0, 1);
	CHECK_INT(xpu_npu_model_tdr_ms(&h->m, &from), ==, 5000);
	CHECK_STR(from, "driver");
	struct xpu_npu_cfg cfg = { .tdr_ms = 700 };
	h = setup(&cfg);
	emit(h, XPU_EV_NPU_PM, 0, XPU_NPU_PM_TDR, 0, 0, 5000, 0, 1);
	CHECK_INT(xpu_npu_model_tdr_ms(&h->m, &from), ==, 700);
	CHECK_STR(from, "--npu-tdr");
}

TEST(a_forced_tdr_moves_the_stall)
{
	struct xpu_npu_cfg cfg = { .tdr_ms = 5000, .silence_ms = 60000 };
	struct h *h = setup(&cfg);
	burst(h, 4);
	submit(h, 42, 1);
	until(h, h->now + 4 * S);
	CHECK_INT(alerts(h, "npu.stall"), ==, 0);
	until(h, h->now + 1500 * MS);
	CHECK_INT(alerts(h, "npu.stall"), ==, 1);
	CHECK_INT(alerts(h, "npu.ipc_silent"), ==, 0);
}

TEST(an_ipc_receive_timeout_is_critical_and_repeats_count)
{
	struct h *h = setup(NULL);
	for (int i = 0; i < 3; i++)
		emit(h, XPU_EV_NPU_IPC, 0, 0, -110, 0, 0, XPU_NPU_IPC_RX, 1);
	const struct xpu_alert *a = alert(h, "npu.ipc_timeout");
	REQUIRE(a);
	CHECK_INT(a->sev, ==, XPU_ALERT_CRITICAL);
	CHECK_INT(a->count, ==, 3);
	CHECK_INT(h->alerts.n, ==, 1);
	until(h, h->now + 11 * S);	/* held 10 s after the last one */
	CHECK(!a->active);
}

TEST(an_ipc_timeout_storm_raises_critical_and_a_rate_warning)
{
	struct h *h = setup(NULL);
	burst(h, 4);
	uint64_t onset = h->now;
	while (h->now < onset + 3 * S) {	/* 2000 queries a second, every reply lost */
		msg(h, 0x1104, XPU_NPU_IPC_TX);
		emit(h, XPU_EV_NPU_IPC, 0, 0, -110, 0, 0, XPU_NPU_IPC_RX, 1);
		until(h, h->now + S / 2000);
	}
	until(h, h->now + 5 * S);
	CHECK_INT(alerts(h, "npu.ipc_timeout"), ==, 1);
	CHECK_INT(alerts(h, "npu.ipc_rate"), ==, 1);
	CHECK_INT(h->alerts.n, ==, 2);
	const struct xpu_alert *w = alert(h, "npu.ipc_rate");
	CHECK_INT(w->sev, ==, XPU_ALERT_WARN);
	CHECK(w->raised <= onset + 2 * S + TICK);
	CHECK(!w->active);	/* the rate came back down */
}

TEST(a_first_burst_after_a_trickle_is_not_a_storm)
{
	struct h *h = setup(NULL);
	for (int i = 0; i < 60; i++) {	/* a heartbeat a second, no jobs */
		heartbeat(h, 10 + (uint64_t)i);
		until(h, h->now + S);
	}
	burst(h, 5);
	CHECK_INT(h->alerts.n, ==, 0);
}

/* The issue-27 case: one job for 10 s at 71 messages a second, then 3 s at
 * 2,070 a second (29x), all inside that job. */
TEST(a_storm_inside_one_long_job_warns_against_the_rate_learned_in_it)
{
	struct h *h = setup(NULL);
	submit(h, 42, 1);
	uint64_t start = h->now;
	for (int per_s = 71; h->now < start + 15 * S;) {
		if (h->now >= start + 10 * S && h->now < start + 13 * S)
			per_s = 2070;
		else
			per_s = 71;
		msg(h, 0x2204, XPU_NPU_IPC_RX);
		until(h, h->now + S / (uint64_t)per_s);
	}
	const struct xpu_alert *w = alert(h, "npu.ipc_rate");
	REQUIRE(w);
	CHECK(w->raised >= start + 10 * S && w->raised <= start + 10 * S + 2 * TICK);
	CHECK(strstr(w->msg, "the learned 71/s") != NULL);
	CHECK_INT(alerts(h, "npu.stall"), ==, 0);
}

TEST(a_silent_long_job_teaches_no_rate)
{
	struct h *h = setup(NULL);
	burst(h, 4);
	submit(h, 42, 1);
	until(h, h->last_tick + TICK);	/* the submit's tick is a tick of work */
	double learned = h->m.baseline;
	uint32_t ticks = h->m.learned_ticks;
	until(h, h->now + 5 * S);
	CHECK(h->m.baseline == learned);
	CHECK_INT(h->m.learned_ticks, ==, ticks);
}

TEST(a_recovery_is_critical_and_names_its_reason)
{
	struct h *h = setup(NULL);
	struct xpu_event ev = { .type = XPU_EV_NPU_PM, .source = XPU_SRC_NPU, .time = h->now };
	ev.npu.code = XPU_NPU_PM_RECOVERY;
	ev.npu.aux = xpu_dict_cstr(&h->dict, "WDT NCE IRQ");
	ev.npu.count = 1;
	xpu_npu_model_event(&h->m, &h->dict, &ev);
	const struct xpu_alert *a = alert(h, "npu.recovery");
	REQUIRE(a);
	CHECK_INT(a->sev, ==, XPU_ALERT_CRITICAL);
	CHECK(strstr(a->msg, "WDT NCE IRQ") != NULL);
}

TEST(a_recovery_that_aborts_jobs_raises_recovery_and_aborted_and_nothing_else)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	burst(h, 4);
	submit(h, 42, 1);
	submit(h, 42, 1);
	until(h, h->now + 100 * MS);
	emit(h, XPU_EV_NPU_PM, 0, XPU_NPU_PM_RECOVERY, 0, 0, 0, 0, 1);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_ABORT, XPU_NPU_ABORT_ALL, 0, 0, 0, 1);
	burst(h, 3);
	until(h, h->now + 5 * S);
	CHECK_INT(alerts(h, "npu.recovery"), ==, 1);
	CHECK_INT(alerts(h, "npu.job_aborted"), ==, 1);
	CHECK_INT(h->alerts.n, ==, 2);
	xpu_npu_snap_init(&s);
	xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_ALL);
	CHECK_INT(s.aborted_total, ==, 2);
	CHECK_INT(s.outstanding, ==, 0);
	xpu_npu_snap_free(&s);
}

TEST(a_job_completed_with_status_aborted_is_critical)
{
	struct h *h = setup(NULL);
	submit(h, 42, 3);
	until(h, h->now + 5 * MS);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_DONE, XPU_NPU_JOB_STATUS_ABORTED, 0, 77, 3, 1);
	const struct xpu_alert *a = alert(h, "npu.job_aborted");
	REQUIRE(a);
	CHECK_INT(a->sev, ==, XPU_ALERT_CRITICAL);
	CHECK(strstr(a->msg, "job 77") != NULL);
	CHECK_INT(h->m.njobs, ==, 0);
}

TEST(an_abort_all_with_nothing_in_flight_adds_no_alert_of_its_own)
{
	struct h *h = setup(NULL);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_ABORT, XPU_NPU_ABORT_ALL, 0, 0, 0, 1);
	CHECK_INT(h->alerts.n, ==, 0);
}

/* ---- driver functions ---- */

static void fn(struct h *h, uint32_t pid, const char *name, uint32_t ctx, uint32_t n)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_FUNC, .source = XPU_SRC_NPU, .pid = pid, .time = h->now };
	ev.npu.code = xpu_dict_cstr(&h->dict, name);
	ev.npu.aux = ctx;
	ev.npu.count = n;
	ev.npu.comm = pid ? xpu_dict_cstr(&h->dict, "app") : 0;
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);
}

static const struct xpu_cell *fn_row(const struct xpu_npu_snap *s, const char *name)
{
	for (uint32_t r = 0; r < s->funcs.nrows; r++)
		if (!strcmp(xpu_table_row(&s->funcs, r)[XPU_NPU_FCOL_FUNC].s, name))
			return xpu_table_row(&s->funcs, r);
	return NULL;
}

TEST(the_category_rule_sorts_the_tutorials_functions)
{
	CHECK_INT(xpu_npu_fn_category("ivpu_mmu_context_map_page"), ==, XPU_NPU_CAT_MM);
	CHECK_INT(xpu_npu_fn_category("ivpu_pgtable_free_page"), ==, XPU_NPU_CAT_MM);
	CHECK_INT(xpu_npu_fn_category("ivpu_ipc_irq_handler"), ==, XPU_NPU_CAT_IPC);
	CHECK_INT(xpu_npu_fn_category("ivpu_hw_ip_ipc_rx_count_get"), ==, XPU_NPU_CAT_IPC);
	CHECK_INT(xpu_npu_fn_category("ivpu_bo_create_ioctl"), ==, XPU_NPU_CAT_BO);
	CHECK_INT(xpu_npu_fn_category("ivpu_gem_create_object"), ==, XPU_NPU_CAT_BO);
	CHECK_INT(xpu_npu_fn_category("ivpu_bo_wait_ioctl"), ==, XPU_NPU_CAT_JOBS);
	CHECK_INT(xpu_npu_fn_category("ivpu_submit_ioctl"), ==, XPU_NPU_CAT_JOBS);
	CHECK_INT(xpu_npu_fn_category("ivpu_job_done_callback"), ==, XPU_NPU_CAT_JOBS);
	CHECK_INT(xpu_npu_fn_category("ivpu_pm_runtime_resume_cb"), ==, XPU_NPU_CAT_POWER);
	CHECK_INT(xpu_npu_fn_category("ivpu_get_param_ioctl"), ==, XPU_NPU_CAT_OTHER);
}

TEST(a_clients_mmu_context_set_up_at_open_is_not_memory_management)
{
	CHECK_INT(xpu_npu_fn_category("ivpu_mmu_context_init"), ==, XPU_NPU_CAT_OTHER);
	CHECK_INT(xpu_npu_fn_category("ivpu_mmu_context_fini"), ==, XPU_NPU_CAT_OTHER);
	CHECK_INT(xpu_npu_fn_category("ivpu_mmu_context_map_sgt"), ==, XPU_NPU_CAT_MM);
}

TEST(runtime_pm_references_are_power)
{
	CHECK_INT(xpu_npu_fn_category("ivpu_rpm_get"), ==, XPU_NPU_CAT_POWER);
	CHECK_INT(xpu_npu_fn_category("ivpu_rpm_put"), ==, XPU_NPU_CAT_POWER);
}

TEST(a_share_is_written_one_way_never_rounded_to_1_or_100_percent)
{
	char b[8];
	xpu_npu_share_text(b, sizeof(b), 100.0 * 74 / 8198);	/* the tutorial's buffer management */
	CHECK_STR(b, "<1%");
	xpu_npu_share_text(b, sizeof(b), 100.0 * 4648 / 8198);
	CHECK_STR(b, "57%");
	xpu_npu_share_text(b, sizeof(b), 0);
	CHECK_STR(b, "0%");
	xpu_npu_share_text(b, sizeof(b), 99.6);
	CHECK_STR(b, ">99%");
	xpu_npu_share_text(b, sizeof(b), 100);
	CHECK_STR(b, "100%");
}

TEST(driver_functions_are_counted_by_name_with_category_and_share)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn(h, 0, "ivpu_mmu_context_map_page", 0, 6);
	fn(h, 0, "ivpu_ipc_receive", 0, 3);
	fn(h, 0, "ivpu_bo_pin", 0, 1);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.funcs.nrows, ==, 3);
	const struct xpu_cell *r = fn_row(&s, "ivpu_mmu_context_map_page");
	REQUIRE(r);
	CHECK_STR(r[XPU_NPU_FCOL_CAT].s, "memory management");
	CHECK_INT(r[XPU_NPU_FCOL_COUNT].i, ==, 6);
	CHECK_INT(r[XPU_NPU_FCOL_TOTAL].i, ==, 6);
	CHECK(r[XPU_NPU_FCOL_SHARE].d > 59.9 && r[XPU_NPU_FCOL_SHARE].d < 60.1);
	CHECK(r[XPU_NPU_FCOL_RATE].d > 11.9 && r[XPU_NPU_FCOL_RATE].d < 12.1);	/* 6 in 0.5 s */
	CHECK(s.shares_valid);
	CHECK(s.share_mm > 59.9 && s.share_mm < 60.1);
	CHECK(s.share_ipc > 29.9 && s.share_ipc < 30.1);
	CHECK(s.share_bo > 9.9 && s.share_bo < 10.1);
	xpu_npu_snap_free(&s);
}

/* n calls of name timed at ns each (the source's bucket lower bound), or,
 * with ns UINT64_MAX, n returns that could not be timed. */
static void fn_lat(struct h *h, const char *name, uint64_t ns, uint32_t n)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_FUNC_LAT, .source = XPU_SRC_NPU, .time = h->now };
	ev.npu.code = xpu_dict_cstr(&h->dict, name);
	ev.npu.count = n;
	if (ns == UINT64_MAX)
		ev.npu.aux = XPU_NPU_FLAT_UNTIMED;
	else
		ev.npu.dur_ns = xpu_npu_hist_lower(xpu_npu_hist_bucket(ns));
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);
}

static const struct xpu_cell *fn_snap(struct h *h, struct xpu_npu_snap *s, const char *name, enum xpu_window w)
{
	xpu_npu_snap_init(s);
	if (xpu_npu_model_snapshot(&h->m, &h->dict, s, w))
		return NULL;
	return fn_row(s, name);
}

static int within_an_eighth(int64_t got, uint64_t want)
{
	return got >= (int64_t)(want - want / 8) && got <= (int64_t)(want + want / 8);
}

TEST(function_percentiles_come_from_its_histogram_within_an_eighth)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn(h, 0, "ivpu_bo_wait_ioctl", 0, 100);
	fn_lat(h, "ivpu_bo_wait_ioctl", 2000000, 90);	/* 2 ms */
	fn_lat(h, "ivpu_bo_wait_ioctl", 40000000, 10);	/* 40 ms */
	until(h, h->now + TICK);
	const struct xpu_cell *r = fn_snap(h, &s, "ivpu_bo_wait_ioctl", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK(!r[XPU_NPU_FCOL_P50].na && !r[XPU_NPU_FCOL_P99].na && !r[XPU_NPU_FCOL_MAX].na);
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P50].i, 2000000));
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P99].i, 40000000));
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_MAX].i, 40000000));
	CHECK_INT(r[XPU_NPU_FCOL_TIMED].i, ==, 100);
	CHECK_INT(r[XPU_NPU_FCOL_UNTIMED].i, ==, 0);
	CHECK(s.fn_timed);
	xpu_npu_snap_free(&s);
}

TEST(the_p99_of_a_function_falls_where_the_99th_call_of_100_is)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn_lat(h, "ivpu_ipc_receive", 10000, 98);	/* 10 us */
	fn_lat(h, "ivpu_ipc_receive", 1000000, 2);	/* 1 ms: the 99th and 100th */
	until(h, h->now + TICK);
	const struct xpu_cell *r = fn_snap(h, &s, "ivpu_ipc_receive", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P50].i, 10000));
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P99].i, 1000000));
	xpu_npu_snap_free(&s);
	fn_lat(h, "ivpu_ipc_receive", 10000, 100);	/* now 1 in 100 over the window */
	until(h, h->now + TICK);
	r = fn_snap(h, &s, "ivpu_ipc_receive", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P99].i, 10000));
	xpu_npu_snap_free(&s);
}

TEST(a_function_never_timed_shows_na_not_zero)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn(h, 0, "ivpu_hw_ip_db_set", 0, 5);
	until(h, h->now + TICK);
	const struct xpu_cell *r = fn_snap(h, &s, "ivpu_hw_ip_db_set", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK(r[XPU_NPU_FCOL_P50].na && r[XPU_NPU_FCOL_P99].na && r[XPU_NPU_FCOL_MAX].na);
	CHECK(r[XPU_NPU_FCOL_TIMED].na && r[XPU_NPU_FCOL_UNTIMED].na);
	CHECK(!s.fn_timed);
	xpu_npu_snap_free(&s);
}

TEST(returns_not_timed_are_counted_apart_and_move_no_percentile)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn_lat(h, "ivpu_submit_ioctl", 50000, 10);
	fn_lat(h, "ivpu_submit_ioctl", UINT64_MAX, 3);
	until(h, h->now + TICK);
	const struct xpu_cell *r = fn_snap(h, &s, "ivpu_submit_ioctl", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK_INT(r[XPU_NPU_FCOL_TIMED].i, ==, 10);
	CHECK_INT(r[XPU_NPU_FCOL_UNTIMED].i, ==, 3);
	CHECK_INT(s.fn_untimed, ==, 3);
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P50].i, 50000));
	CHECK(r[XPU_NPU_FCOL_MAX].i <= 50000);
	xpu_npu_snap_free(&s);
}

TEST(function_latency_leaves_the_window_and_stays_in_the_totals)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	fn_lat(h, "ivpu_bo_wait_ioctl", 2000000, 4);
	until(h, h->now + 30 * TICK);	/* past the 20-tick window */
	const struct xpu_cell *r = fn_snap(h, &s, "ivpu_bo_wait_ioctl", XPU_WIN_RECENT);
	REQUIRE(r);
	CHECK(r[XPU_NPU_FCOL_P50].na);
	CHECK_INT(r[XPU_NPU_FCOL_TIMED].i, ==, 0);
	xpu_npu_snap_free(&s);
	r = fn_snap(h, &s, "ivpu_bo_wait_ioctl", XPU_WIN_ALL);
	REQUIRE(r);
	CHECK(within_an_eighth(r[XPU_NPU_FCOL_P50].i, 2000000));
	CHECK_INT(r[XPU_NPU_FCOL_TIMED].i, ==, 4);
	xpu_npu_snap_free(&s);
}

TEST(since_start_category_shares_stand_beside_the_windows)
{
	struct h *h = setup(NULL);	/* a window of 20 ticks */
	struct xpu_npu_snap s;
	fn(h, 0, "ivpu_mmu_context_map_page", 0, 90);
	until(h, h->now + TICK);
	until(h, h->now + 30 * TICK);	/* the page mapping leaves the window */
	fn(h, 0, "ivpu_ipc_irq_handler", 0, 10);
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.cats[XPU_NPU_CAT_IPC].count, ==, 10);
	CHECK(s.cats[XPU_NPU_CAT_IPC].share > 99.9);
	CHECK(s.cats[XPU_NPU_CAT_MM].share_total > 89.9 && s.cats[XPU_NPU_CAT_MM].share_total < 90.1);
	CHECK_INT(s.cats[XPU_NPU_CAT_MM].total, ==, 90);
	CHECK_INT(s.fn_total, ==, 100);
	xpu_npu_snap_free(&s);
}

static void alloc_and_map(struct h *h, uint64_t bytes, uint32_t pages)
{
	emit(h, XPU_EV_NPU_MEM, 42, XPU_NPU_MEM_BO_CREATE, 0, 0, bytes, 0, 1);
	fn(h, 42, "ivpu_mmu_context_map_page", 0, pages);
	until(h, h->last_tick + TICK);
}

TEST(pages_mapped_once_per_buffer_raise_nothing)
{
	struct h *h = setup(NULL);
	for (int i = 0; i < 3; i++)	/* the tutorial's three zeMemAllocHost: 1,377 pages each */
		alloc_and_map(h, 1377 * 4096, 1377);
	CHECK_INT(alerts(h, "npu.map_pages"), ==, 0);
}

TEST(pages_mapped_again_and_again_warn_per_mib_allocated)
{
	struct h *h = setup(NULL);
	alloc_and_map(h, 4 << 20, 1024);
	CHECK_INT(alerts(h, "npu.map_pages"), ==, 0);
	alloc_and_map(h, 0, 1024);	/* the same 4 MiB mapped again: twice, not past it */
	CHECK_INT(alerts(h, "npu.map_pages"), ==, 0);
	alloc_and_map(h, 0, 1024);
	const struct xpu_alert *a = alert(h, "npu.map_pages");
	REQUIRE(a);
	CHECK_INT(a->sev, ==, XPU_ALERT_WARN);
	CHECK_STR(a->msg, "768 page table entries written per MiB of buffers created, 3.0x the 256 of 4 KiB "
			  "pages: buffers mapped again and again");
	/* new buffers bring it back down */
	alloc_and_map(h, 16 << 20, 0);
	CHECK(!alert(h, "npu.map_pages")->active);
}

TEST(a_long_job_while_firmware_ipc_goes_on_is_not_a_stall)
{
	struct h *h = setup(NULL);
	submit(h, 42, 1);
	for (int i = 0; i < 10; i++) {	/* 5 s of interrupts, no message decoded */
		fn(h, 0, "ivpu_ipc_irq_handler", 0, 20);
		until(h, h->now + TICK);
	}
	CHECK_INT(alerts(h, "npu.stall"), ==, 0);
}

TEST(a_job_seen_only_by_function_names_stalls_past_the_tdr)
{
	struct h *h = setup(NULL);
	fn(h, 42, "ivpu_submit_ioctl", 0, 1);
	submit(h, 42, 0);
	uint64_t onset = h->now;
	while (h->now < onset + 3 * S) {	/* the process polls; the firmware says nothing */
		fn(h, 42, "ivpu_bo_wait_ioctl", 0, 1);
		until(h, h->now + 100 * MS);
	}
	const struct xpu_alert *a = alert(h, "npu.stall");
	REQUIRE(a);
	CHECK_INT(a->sev, ==, XPU_ALERT_STALL);
	CHECK(a->raised >= onset + 2 * S && a->raised <= onset + 2 * S + TICK);
}

TEST(calls_inside_a_level_zero_call_and_ioctl_form_a_chain)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	uint32_t ctx = XPU_NPU_FN_CTX(XPU_NPU_L0_ALLOC_HOST, 0x6442);
	fn(h, 42, "ivpu_bo_create_ioctl", ctx, 1);
	fn(h, 42, "ivpu_mmu_context_map_page", ctx, 1377);
	fn(h, 0, "ivpu_ipc_irq_handler", 0, 5);	/* no context: no chain */
	until(h, h->now + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.chains.nrows, ==, 2);
	int found = 0;
	for (uint32_t r = 0; r < s.chains.nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(&s.chains, r);
		if (strcmp(c[XPU_NPU_CCOL_FUNC].s, "ivpu_mmu_context_map_page"))
			continue;
		found = 1;
		CHECK_INT(c[XPU_NPU_CCOL_PID].i, ==, 42);
		CHECK_STR(c[XPU_NPU_CCOL_L0].s, "zeMemAllocHost");
		CHECK_STR(c[XPU_NPU_CCOL_IOCTL].s, "IVPU_BO_CREATE");
		CHECK_INT(c[XPU_NPU_CCOL_TOTAL].i, ==, 1377);
	}
	CHECK(found);
	xpu_npu_snap_free(&s);
}

/* ---- intel-npu-smi's sources ---- */

TEST(fdinfo_of_an_intel_vpu_file_gives_its_memory_and_engine_time)
{
	struct xpu_ev_npu_client c;
	CHECK(xpu_npu_fdinfo_parse("pos:\t0\ndrm-driver:\tintel_vpu\ndrm-client-id:\t12\n"
				   "drm-total-memory:\t2048 KiB\ndrm-resident-memory:\t1 MiB\n"
				   "drm-engine-npu:\t500 ns\ndrm-engine-capacity-npu:\t2\n", &c));
	CHECK_INT(c.client_id, ==, 12);
	CHECK_INT(c.total_bytes, ==, 2 << 20);
	CHECK_INT(c.resident_bytes, ==, 1 << 20);
	CHECK_INT(c.engine_ns, ==, 500);
	CHECK_INT(c.flags, ==, XPU_NPU_CLIENT_TOTAL | XPU_NPU_CLIENT_RESIDENT | XPU_NPU_CLIENT_ENGINE);
}

TEST(fdinfo_of_another_driver_is_not_an_npu_client)
{
	struct xpu_ev_npu_client c;
	CHECK(!xpu_npu_fdinfo_parse("drm-driver:\ti915\ndrm-client-id:\t3\n", &c));
	CHECK(!xpu_npu_fdinfo_parse("", &c));
}

TEST(only_an_ivpu_recover_uevent_is_a_recovery)
{
	static const char rec[] = "change@/devices/x/accel/accel0\0ACTION=change\0IVPU_PM_EVENT=IVPU_RECOVER";
	static const char other[] = "change@/devices/x\0ACTION=change\0IVPU_PM_EVENT=IVPU_RECOVERED";
	CHECK(xpu_npu_uevent_recovery(rec, sizeof(rec)));
	CHECK(!xpu_npu_uevent_recovery(other, sizeof(other)));
	CHECK(!xpu_npu_uevent_recovery(rec, 20));	/* cut before the key */
}

TEST(a_client_not_reported_for_three_seconds_is_forgotten)
{
	struct h *h = setup(NULL);
	struct xpu_event ev = { .type = XPU_EV_NPU_CLIENT, .source = XPU_SRC_NPU, .pid = 42, .time = h->now };
	ev.nclient.client_id = 7;
	ev.nclient.flags = XPU_NPU_CLIENT_TOTAL;
	ev.nclient.total_bytes = 4096;
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);	/* the same file again */
	CHECK_INT(h->m.nclients, ==, 1);
	until(h, h->now + 2 * S);
	CHECK_INT(h->m.nclients, ==, 1);
	until(h, h->now + 2 * S);
	CHECK_INT(h->m.nclients, ==, 0);
}

/* ---- job completions' IRQ/IPC work, and the jobs the trace export writes ---- */

#define IRQ_KEY(pid) ((uint64_t)(pid) << 32 | (uint64_t)XPU_NPU_KIND_IRQ << 24)

/* A completion as the driver's JOB_DONE reports it: in interrupt context (no
 * process), the job id in the message (0: the trace has none). */
static void done_id(struct h *h, uint32_t queue, uint32_t id)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_JOB, .source = XPU_SRC_NPU, .time = h->now };
	ev.npu.code = XPU_NPU_JOB_DONE;
	ev.npu.aux = queue;
	ev.npu.id = id;
	CHECK_INT(xpu_npu_model_event(&h->m, &h->dict, &ev), ==, 0);
	fn(h, 0, "ivpu_job_done_callback", 0, 1);
}

static const struct xpu_cell *chain_of(const struct xpu_npu_snap *s, uint32_t pid, const char *func)
{
	for (uint32_t r = 0; r < s->chains.nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(&s->chains, r);
		if (c[XPU_NPU_CCOL_PID].i == pid && !strcmp(c[XPU_NPU_CCOL_FUNC].s, func))
			return c;
	}
	return NULL;
}

TEST(a_completion_naming_its_job_charges_its_irq_work_to_the_jobs_process)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	for (uint32_t id = 1; id <= 3; id++) {
		submit(h, 42, 1);
		until(h, h->now + 3 * MS);
		done_id(h, 1, id);
	}
	until(h, h->last_tick + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.irq_linked, ==, 3);
	CHECK_INT(s.irq_unlinked, ==, 0);
	CHECK_STR(xpu_npu_irq_matching(&s), "by job id");
	const struct xpu_cell *r = row(&s, IRQ_KEY(42));
	REQUIRE(r != NULL);
	CHECK_STR(r[XPU_NPU_COL_COMM].s, "app");
	CHECK_STR(r[XPU_NPU_COL_KIND].s, "irq");
	CHECK_INT(r[XPU_NPU_COL_TOTAL].i, ==, 3);
	/* the calls that delivered them are the process's, not "no process"'s */
	const struct xpu_cell *c = chain_of(&s, 42, "ivpu_job_done_callback");
	REQUIRE(c != NULL);
	CHECK_STR(c[XPU_NPU_CCOL_COMM].s, "app");
	CHECK_STR(c[XPU_NPU_CCOL_L0].s, "IRQ/IPC: its job's completion");
	CHECK_INT(c[XPU_NPU_CCOL_TOTAL].i, ==, 3);
	CHECK_INT(xpu_npu_fn_unchained(&h->m, h->m.fn_job_done - 1), ==, 3);	/* the export's [no process] less these */
	xpu_npu_snap_free(&s);
}

TEST(completions_without_job_ids_leave_their_irq_work_with_no_process_and_say_so)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	submit(h, 42, 1);
	until(h, h->now + 3 * MS);
	done_id(h, 1, 0);
	until(h, h->last_tick + TICK);
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.done_total, ==, 1);
	CHECK_INT(s.irq_linked, ==, 0);
	CHECK_INT(s.irq_unlinked, ==, 1);
	CHECK(strncmp(xpu_npu_irq_matching(&s), "unavailable:", 12) == 0);
	CHECK(row(&s, IRQ_KEY(42)) == NULL);
	CHECK(chain_of(&s, 42, "ivpu_job_done_callback") == NULL);
	xpu_npu_snap_free(&s);
}

TEST(the_jobs_ring_keeps_the_newest_jobs_and_counts_those_dropped)
{
	struct h *h = setup(NULL);
	struct xpu_npu_snap s;
	struct xpu_npu_jobrec *v;
	uint32_t n;
	int err;
	for (uint32_t id = 1; id <= XPU_NPU_JOB_RING + 10; id++) {
		submit(h, 42, 1);
		until(h, h->now + 1 * MS);
		done_id(h, 1, id);
	}
	uint64_t at = h->now;
	submit(h, 43, 2);	/* outstanding */
	until(h, h->last_tick + TICK);	/* to the tick: the newest time the model has seen */
	xpu_npu_snap_init(&s);
	REQUIRE(xpu_npu_model_snapshot(&h->m, &h->dict, &s, XPU_WIN_RECENT) == 0);
	CHECK_INT(s.jobs_kept, ==, XPU_NPU_JOB_RING);
	CHECK_INT(s.jobs_dropped, ==, 10);
	v = xpu_npu_model_jobs(&h->m, &n, &err);
	REQUIRE(v != NULL);
	CHECK_INT(n, ==, XPU_NPU_JOB_RING + 1);
	CHECK_INT(v[0].job_id, ==, 11);
	CHECK_INT(v[0].pid, ==, 42);
	CHECK_INT(v[0].state, ==, XPU_NPU_JOBREC_DONE);
	CHECK_INT(v[0].end_ns - v[0].submit_ns, ==, 1 * MS);
	CHECK_INT(v[n - 2].job_id, ==, XPU_NPU_JOB_RING + 10);
	CHECK_INT(v[n - 1].pid, ==, 43);
	CHECK_INT(v[n - 1].state, ==, XPU_NPU_JOBREC_OUTSTANDING);
	CHECK_INT(v[n - 1].submit_ns, ==, at);
	CHECK_INT(v[n - 1].end_ns, ==, h->last_tick);
	free(v);
	xpu_npu_snap_free(&s);
}

TEST(jobs_aborted_together_are_kept_as_aborted)
{
	struct h *h = setup(NULL);
	struct xpu_npu_jobrec *v;
	uint32_t n;
	int err;
	submit(h, 42, 1);
	submit(h, 42, 1);
	until(h, h->now + 7 * MS);
	emit(h, XPU_EV_NPU_JOB, 0, XPU_NPU_JOB_ABORT, XPU_NPU_ABORT_ALL, 0, 0, 0, 1);
	v = xpu_npu_model_jobs(&h->m, &n, &err);
	REQUIRE(v != NULL);
	CHECK_INT(n, ==, 2);
	CHECK_INT(v[1].state, ==, XPU_NPU_JOBREC_ABORTED);
	CHECK_INT(v[1].end_ns - v[1].submit_ns, ==, 7 * MS);
	free(v);
}
