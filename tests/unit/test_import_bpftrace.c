/* SPDX-License-Identifier: GPL-2.0-only */
/* Importing the NPU tutorial's bpftrace output: good logs with and without
 * header and summary, old probe names, damaged lines counted and skipped,
 * ticks synthesized from the timestamps, and the shipped fixture replayed into
 * the NPU model. */
#include "check.h"

#include <linux/types.h>

#include "dict.h"
#include "event.h"
#include "import_bpftrace.h"
#include "model_npu.h"
#include "npu.h"
#include "session.h"

#define S 1000000000ULL
#define MS 1000000ULL

static const char body[] =
	"1000       kprobe:intel_vpu:ivpu_hw_ip_db_set      \n"
	"1003       kprobe:intel_vpu:ivpu_hw_ip_ipc_rx_addr_get\n"
	"1003       kprobe:intel_vpu:ivpu_job_done_callback \n"
	"1004       kprobe:intel_vpu:ivpu_ipc_send          \n"
	"1004       kprobe:intel_vpu:ivpu_hw_ip_ipc_tx_set  \n"
	"1500       kprobe:intel_vpu:ivpu_gem_create_object \n"
	"1500       kprobe:intel_vpu:ivpu_submit_ioctl      \n"
	"1600       kprobe:intel_vpu:ivpu_fw_log_print      \n";

static const char header[] = "Attaching 187 probes...\nTIME(ms)   PROBE\n";
static const char summary[] =
	"\n\n@calls[kprobe:intel_vpu:ivpu_hw_ip_db_set]: 1\n"
	"@calls[kprobe:intel_vpu:ivpu_job_done_callback]: 1\n"
	"@calls[kprobe:intel_vpu:ivpu_fw_log_print]: 6\n";

struct got {
	int ticks, ipc_tx, ipc_rx, submit, done, mem, ioctl, drop, other, func;
	int map_page, free_page;
	uint32_t last_func;	/* dict string of the last function */
	uint64_t first_tick, last_tick, last_time;
	int out_of_order;
};

/* Function names go here; it outlives every import of the run. */
static struct xpu_dict *names(void)
{
	static struct xpu_dict d;
	static int inited;
	if (!inited)
		xpu_dict_init(&d);
	inited = 1;
	return &d;
}

static struct xpu_import *import(const char *text, uint64_t interval, char *err, size_t errlen)
{
	return xpu_import_bpftrace_text(text, strlen(text), interval, 1700000000ULL * S, names(), err,
					errlen);
}

static struct got drain(struct xpu_import *im)
{
	struct got g = { 0 };
	struct xpu_event ev;
	while (xpu_import_next(im, &ev) == 1) {
		if (ev.time < g.last_time)
			g.out_of_order = 1;
		g.last_time = ev.time;
		switch (ev.type) {
		case XPU_EV_TICK:
			if (!g.ticks++)
				g.first_tick = ev.time;
			g.last_tick = ev.time;
			break;
		case XPU_EV_NPU_IPC:
			if (!(ev.npu.aux & XPU_NPU_IPC_MSG))
				g.other++;
			else if (ev.npu.aux & XPU_NPU_IPC_TX)
				g.ipc_tx++;
			else
				g.ipc_rx++;
			break;
		case XPU_EV_NPU_JOB:
			g.submit += ev.npu.code == XPU_NPU_JOB_SUBMIT;
			g.done += ev.npu.code == XPU_NPU_JOB_DONE;
			break;
		case XPU_EV_NPU_MEM:
			g.mem++;
			g.map_page += ev.npu.code == XPU_NPU_MEM_MAP_PAGE;
			g.free_page += ev.npu.code == XPU_NPU_MEM_FREE_PAGE;
			break;
		case XPU_EV_NPU_FUNC:
			g.func += (int)ev.npu.count;
			g.last_func = ev.npu.code;
			break;
		case XPU_EV_NPU_IOCTL: g.ioctl++; break;
		case XPU_EV_DROP: g.drop += (int)ev.drop.count; break;
		default: break;
		}
	}
	return g;
}

TEST(a_log_with_header_and_summary_imports_every_call)
{
	char text[4096], err[256];
	snprintf(text, sizeof(text), "%s%s%s", header, body, summary);
	struct xpu_import *im = import(text, S, err, sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->calls, ==, 8);
	CHECK_INT(st->mapped, ==, 7);
	CHECK_INT(st->other, ==, 1);
	CHECK_INT(st->header, ==, 2);
	CHECK_INT(st->summary, ==, 3);
	CHECK_INT(st->summary_calls, ==, 8);
	CHECK_INT(st->bad, ==, 0);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.done, ==, 1);
	CHECK_INT(g.ipc_tx, ==, 1);	/* ivpu_ipc_send; tx_set counts the same message */
	CHECK_INT(g.ipc_rx, ==, 1);	/* rx_addr_get; the JOB_DONE is its type only */
	CHECK_INT(g.other, ==, 1);
	CHECK_INT(g.mem, ==, 1);
	CHECK_INT(g.ioctl, ==, 1);
	xpu_import_free(im);
}

TEST(a_log_without_header_or_summary_gives_the_same_events)
{
	char text[4096], err[256];
	snprintf(text, sizeof(text), "%s%s%s", header, body, summary);
	struct xpu_import *a = import(text, S, err, sizeof(err)), *b = import(body, S, err, sizeof(err));
	REQUIRE(a && b);
	struct got ga = drain(a), gb = drain(b);
	CHECK(ga.ticks == gb.ticks && ga.ipc_tx == gb.ipc_tx && ga.ipc_rx == gb.ipc_rx &&
	      ga.submit == gb.submit && ga.done == gb.done && ga.mem == gb.mem && ga.ioctl == gb.ioctl &&
	      ga.other == gb.other && ga.first_tick == gb.first_tick && ga.last_tick == gb.last_tick);
	CHECK_INT(xpu_import_stats(b)->header, ==, 0);
	xpu_import_free(a);
	xpu_import_free(b);
}

TEST(probe_names_without_a_module_are_understood)
{
	char err[256];
	struct xpu_import *im = import("5 kprobe:ivpu_hw_ip_db_set\n9 kprobe:ivpu_job_done_callback\n", S, err,
				       sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.done, ==, 1);
	CHECK_INT(g.ipc_rx, ==, 1);	/* no rx_addr_get lines: the JOB_DONE counts */
	xpu_import_free(im);
}

TEST(damaged_lines_are_counted_and_skipped)
{
	char text[16384], err[256], longline[6000];
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "10 kprobe:intel_vpu:ivpu_hw_ip_db_set\n"
		 "garbage in the middle\n"
		 "12 kprobe:\n"
		 "99999999999999999999999 kprobe:intel_vpu:ivpu_hw_ip_db_set\n"
		 "13\n"
		 "14 tracepoint:vpu:job\n"
		 "15 kprobe:intel_vpu:ivpu_hw_ip_db_set trailing words\n"
		 "@calls[broken: 3\n"
		 "%s\n"
		 "\x01\x02\xff binary\n"
		 "20 kprobe:intel_vpu:ivpu_job_done_callback\n",
		 longline);
	struct xpu_import *im = import(text, S, err, sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->calls, ==, 2);
	CHECK_INT(st->bad, ==, 9);
	CHECK_INT(st->first_bad, ==, 2);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.done, ==, 1);
	xpu_import_free(im);
}

TEST(text_without_probe_lines_is_not_a_bpftrace_log)
{
	char err[256] = "";
	CHECK(import("hello, not a recording\n", S, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "recording") != NULL);
	CHECK(import("", S, err, sizeof(err)) == NULL);
	CHECK(import(header, S, err, sizeof(err)) == NULL);
}

TEST(text_that_is_not_a_log_says_what_its_first_line_looked_like)
{
	char err[512] = "";
	CHECK(import("\nfoo bar baz\nsecond line\n", S, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "none of its 3 lines is a probe (the first: \"foo bar baz\")") != NULL);
	CHECK(import("", S, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "the file is empty") != NULL);
}

static uint64_t total(const struct got *g)
{
	return (uint64_t)g->func;
}

TEST(one_probe_a_line_without_times_is_counts_only)
{
	char err[256];
	struct xpu_import *im = import("Attaching 223 probes...\n"
				       "kprobe:intel_vpu:ivpu_submit_ioctl\n"
				       "kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "kprobe:intel_vpu:ivpu_job_done_callback\n\n\n", S, err, sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->untimed, ==, 1);
	CHECK_INT(st->calls, ==, 4);
	CHECK_INT(st->bad, ==, 0);
	CHECK_STR(st->form, "untimed calls (one probe a line)");
	struct got g = drain(im);
	CHECK_INT(total(&g), ==, 4);
	/* no times: no jobs, no IPC messages, nothing a rate or a rule reads */
	CHECK_INT(g.submit + g.done + g.ipc_rx + g.ioctl, ==, 0);
	CHECK_INT(g.ticks, ==, 1);
	xpu_import_free(im);
}

TEST(uniq_c_counts_are_read_as_counts_not_milliseconds)
{
	char err[256];
	struct xpu_import *im = import("   4131 kprobe:intel_vpu:ivpu_mmu_context_map_page\n"
				       "    945 kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "     24 kprobe:intel_vpu:ivpu_bo_create_ioctl\n"
				       "      2 \n"
				       "      1 Attaching 223 probes...\n", S, err, sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->untimed, ==, 1);
	CHECK_INT(st->calls, ==, 4131 + 945 + 24);
	CHECK_INT(st->bad, ==, 0);
	CHECK_STR(st->form, "call counts (uniq -c)");
	struct got g = drain(im);
	CHECK_INT(total(&g), ==, 4131 + 945 + 24);
	CHECK_INT(g.map_page + g.ipc_rx + g.ioctl, ==, 0);
	CHECK_INT(g.ticks, ==, 1);
	xpu_import_free(im);
}

TEST(sort_rn_counts_without_padding_are_counts_too)
{
	char err[256];
	struct xpu_import *im = import("4131 kprobe:intel_vpu:ivpu_mmu_context_map_page\n"
				       "945 kprobe:intel_vpu:ivpu_ipc_receive\n", S, err, sizeof(err));
	REQUIRE(im);
	CHECK_INT(xpu_import_stats(im)->untimed, ==, 1);
	CHECK_INT(xpu_import_stats(im)->calls, ==, 5076);
	xpu_import_free(im);
}

TEST(a_timed_log_of_one_call_a_function_stays_timed)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_hw_ip_db_set\n"
				       "1003 kprobe:intel_vpu:ivpu_job_done_callback\n", S, err, sizeof(err));
	REQUIRE(im);
	CHECK_INT(xpu_import_stats(im)->untimed, ==, 0);
	CHECK_INT(xpu_import_stats(im)->calls, ==, 2);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.done, ==, 1);
	xpu_import_free(im);
}

TEST(an_calls_map_alone_is_read_as_its_counts)
{
	char err[256];
	struct xpu_import *im = import("Attaching 223 probes...\n\n\n"
				       "@calls[kprobe:intel_vpu:ivpu_pgtable_free_page]: 517\n"
				       "@calls[kprobe:intel_vpu:ivpu_mmu_context_map_page]: 4131\n", S, err,
				       sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->untimed, ==, 1);
	CHECK_INT(st->calls, ==, 4648);
	CHECK_STR(st->form, "call counts (an @calls map)");
	struct got g = drain(im);
	CHECK_INT(total(&g), ==, 4648);
	CHECK_INT(g.mem, ==, 0);
	xpu_import_free(im);
}

TEST(the_tutorials_begin_and_end_text_is_understood)
{
	char err[256];
	struct xpu_import *im = import("Attaching 224 probes...\n"
				       "Tracing Intel NPU kernel driver... Hit Ctrl-C to end.\n"
				       "TIME(ms)   FUNCTION\n"
				       "1000       kprobe:intel_vpu:ivpu_hw_ip_db_set\n"
				       "1001       kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "1002       kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "^C\n"
				       "=== Intel NPU Function Call Statistics ===\n\n"
				       "Top functions by call count:\n"
				       "@calls[kprobe:intel_vpu:ivpu_ipc_receive]: 2\n", S, err, sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->bad, ==, 0);
	CHECK_INT(st->titles, ==, 3);	/* "Tracing ...", "=== ... ===", "Top functions ...:" */
	CHECK_INT(st->calls, ==, 3);
	/* print(@calls, 20) shows the top functions only: the others are not a disagreement */
	CHECK_INT(st->summary_mismatch, ==, 0);
	xpu_import_free(im);
}

TEST(a_map_that_disagrees_with_the_lines_names_the_function)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_ipc_receive\n"
				       "@calls[kprobe:intel_vpu:ivpu_ipc_receive]: 7\n", S, err, sizeof(err));
	REQUIRE(im);
	CHECK_INT(xpu_import_stats(im)->summary_mismatch, ==, 1);
	CHECK_STR(xpu_import_stats(im)->first_mismatch, "ivpu_ipc_receive: 7 in the map, 1 lines");
	xpu_import_free(im);
}

TEST(pid_and_command_columns_give_each_call_its_process)
{
	char err[256];
	struct xpu_event ev;
	struct xpu_import *im = import("TIME(ms)   PID     COMM             PROBE\n"
				       "1000       4242    matmul           kprobe:intel_vpu:ivpu_submit_ioctl\n"
				       "1003       0       swapper/0        kprobe:intel_vpu:ivpu_ipc_irq_handler\n"
				       "1004       GUI Thread 77   kprobe:intel_vpu:ivpu_bo_wait_ioctl\n", S, err,
				       sizeof(err));
	REQUIRE(im);
	const struct xpu_import_stats *st = xpu_import_stats(im);
	CHECK_INT(st->calls, ==, 3);
	CHECK_INT(st->bad, ==, 0);
	CHECK_INT(st->untimed, ==, 0);
	uint32_t pids[3], n = 0, submit_pid = 0;
	const char *comms[3];
	while (xpu_import_next(im, &ev) == 1) {
		if (ev.type == XPU_EV_NPU_FUNC && n < 3) {
			pids[n] = ev.pid;
			comms[n++] = xpu_dict_str_get(names(), ev.npu.comm);
		}
		if (ev.type == XPU_EV_NPU_JOB && ev.npu.code == XPU_NPU_JOB_SUBMIT)
			submit_pid = ev.pid;
	}
	REQUIRE(n == 3);
	CHECK_INT(pids[0], ==, 4242);
	CHECK_STR(comms[0], "matmul");
	CHECK_INT(pids[1], ==, 0);
	CHECK_STR(comms[1], "swapper/0");
	CHECK_INT(pids[2], ==, 77);
	CHECK_STR(comms[2], "GUI Thread");
	CHECK_INT(submit_pid, ==, 4242);
	xpu_import_free(im);
}

TEST(a_log_of_only_functions_the_model_has_no_use_for_gives_only_function_counts)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_fw_log_print\n"
				       "1001 kretprobe:intel_vpu:ivpu_ipc_send\n", S, err, sizeof(err));
	REQUIRE(im);
	CHECK_INT(xpu_import_stats(im)->calls, ==, 2);
	CHECK_INT(xpu_import_stats(im)->other, ==, 2);
	struct got g = drain(im);
	CHECK_INT(g.ipc_tx + g.ipc_rx + g.submit + g.done + g.mem + g.ioctl + g.drop, ==, 0);
	CHECK_INT(g.func, ==, 1);	/* the return is not a call */
	CHECK_STR(xpu_dict_str_get(names(), g.last_func), "ivpu_fw_log_print");
	CHECK_INT(g.ticks, ==, 1);
	xpu_import_free(im);
}

TEST(every_call_is_a_function_event_named_after_its_function)
{
	char err[256];
	struct xpu_import *im = import(body, S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.func, ==, 8);
	CHECK_STR(xpu_dict_str_get(names(), g.last_func), "ivpu_fw_log_print");
	xpu_import_free(im);
}

TEST(a_submit_ioctl_is_a_job_where_the_log_has_no_doorbell)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_submit_ioctl\n"
				       "1001 kprobe:intel_vpu:ivpu_job_done_callback\n", S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.done, ==, 1);
	CHECK_INT(g.ioctl, ==, 1);
	xpu_import_free(im);
}

TEST(with_the_doorbell_a_submit_ioctl_is_not_a_second_job)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_submit_ioctl\n"
				       "1000 kprobe:intel_vpu:ivpu_hw_ip_db_set\n", S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.submit, ==, 1);
	xpu_import_free(im);
}

TEST(page_table_writes_and_frees_are_memory_events_of_their_own)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:intel_vpu:ivpu_mmu_context_map_page\n"
				       "1000 kprobe:intel_vpu:ivpu_mmu_context_map_page\n"
				       "1001 kprobe:intel_vpu:ivpu_pgtable_free_page\n", S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.map_page, ==, 2);
	CHECK_INT(g.free_page, ==, 1);
	xpu_import_free(im);
}

TEST(ticks_are_synthesized_at_the_interval_from_the_first_call)
{
	char err[256];
	struct xpu_import *im = import("1000 kprobe:ivpu_hw_ip_db_set\n3200 kprobe:ivpu_job_done_callback\n",
				       500 * MS, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.first_tick, ==, 1500 * MS);
	CHECK_INT(g.last_tick, ==, 3500 * MS);	/* the tick that holds the last call */
	CHECK_INT(g.ticks, ==, 5);
	CHECK(!g.out_of_order);
	xpu_import_free(im);
}

TEST(calls_are_replayed_in_time_order_even_when_lines_are_not)
{
	char err[256];
	struct xpu_import *im = import("2000 kprobe:ivpu_job_done_callback\n1000 kprobe:ivpu_hw_ip_db_set\n"
				       "1500 kprobe:ivpu_gem_create_object\n",
				       S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK(!g.out_of_order);
	CHECK_INT(g.submit, ==, 1);
	xpu_import_free(im);
}

TEST(a_timestamp_near_2_to_the_64_ns_keeps_ticks_after_the_calls)
{
	char err[256];
	/* 18446744073709 ms is 2^64 ns less 0.55 s: a tick after it would wrap. */
	struct xpu_import *im = import("Lost 3 events\n18446744073709 kprobe:ivpu_hw_ip_db_set\n",
				       S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK(!g.out_of_order);
	CHECK_INT(g.submit, ==, 1);
	CHECK_INT(g.drop, ==, 3);
	CHECK_INT(g.ticks, ==, 1);
	xpu_import_free(im);
}

TEST(events_bpftrace_lost_become_a_drop)
{
	char err[256];
	struct xpu_import *im = import("1 kprobe:ivpu_hw_ip_db_set\nLost 42 events\n", S, err, sizeof(err));
	REQUIRE(im);
	struct got g = drain(im);
	CHECK_INT(g.drop, ==, 42);
	CHECK_INT(xpu_import_stats(im)->bad, ==, 0);
	xpu_import_free(im);
}

TEST(random_bytes_never_crash_the_parser)
{
	static const char alphabet[] = "0123456789 \nkprobe:ivpu_db_set@[]:\x01";
	char buf[2048], err[256];
	uint64_t x = 88172645463325252ULL;
	for (int round = 0; round < 2000; round++) {
		size_t n = 0;
		for (; n < sizeof(buf); n++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[n] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		struct xpu_import *im = xpu_import_bpftrace_text(buf, n, S, 0, names(), err, sizeof(err));
		if (im) {
			drain(im);
			xpu_import_free(im);
		}
	}
	CHECK(1);
}

TEST(the_fixture_log_replays_into_stall_recovery_and_abort_alerts)
{
	char err[256];
	struct xpu_session s;
	struct xpu_session_cfg cfg = { .sample_hz = 99, .interval_ns = 500 * MS, .window_ns = 10 * S };
	struct xpu_event ev;
	xpu_session_init(&s);
	struct xpu_import *im = xpu_import_bpftrace("tests/fixtures/npu-bpftrace.log", 500 * MS, &s.dict, err,
						    sizeof(err));
	REQUIRE(im);
	CHECK_INT(xpu_import_stats(im)->bad, ==, 0);
	CHECK_INT(xpu_import_stats(im)->summary_calls, ==, xpu_import_stats(im)->calls);
	CHECK_INT(xpu_import_stats(im)->summary_mismatch, ==, 0);
	REQUIRE(xpu_session_start(&s, &cfg) == 0);
	while (xpu_import_next(im, &ev) == 1)
		xpu_session_emit(&s, &ev);
	int stall = 0, recovery = 0, aborted = 0, other = 0;
	for (uint32_t i = 0; i < s.alerts.n; i++) {
		const char *rule = xpu_alerts_at(&s.alerts, i)->rule;
		if (!strcmp(rule, "npu.stall"))
			stall++;
		else if (!strcmp(rule, "npu.recovery"))
			recovery++;
		else if (!strcmp(rule, "npu.job_aborted"))
			aborted++;
		else if (strcmp(rule, "npu.ipc_silent"))
			other++;
	}
	CHECK_INT(stall, ==, 1);
	CHECK_INT(recovery, ==, 1);
	CHECK_INT(aborted, ==, 1);
	CHECK_INT(other, ==, 0);
	CHECK_INT(s.npu.g[XPU_NPU_C_DONE].total, ==, 40);
	xpu_session_free(&s);
	xpu_import_free(im);
}
