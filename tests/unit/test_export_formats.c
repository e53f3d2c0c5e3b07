/* SPDX-License-Identifier: GPL-2.0-only */
/* Exports as the tools that open them read them: the Chrome trace with exact
 * times, events of one track that nest and frames named by what ran; folded
 * lines that flamegraph.pl cannot mistake for differential ones. */
#include "check.h"

#include "chrome_trace.h"
#include "dict.h"
#include "folded.h"
#include "model_gpu.h"
#include "model_npu.h"
#include "npu_trace.h"
#include "stacks.h"

struct fixture {
	struct xpu_dict dict;
	struct xpu_gpu_model m;
	char *text;
	size_t len;
};

static int setup(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	xpu_dict_init(&fx->dict);
	return xpu_gpu_model_init(&fx->m, &fx->dict, 10);
}

static void add(struct fixture *fx, const char *name, int launch, uint32_t tid, uint64_t start, uint64_t end,
		uint32_t corr)
{
	fx->m.trace[fx->m.ntrace++] = (struct xpu_gpu_trace_rec){
		.start = start, .end = end, .pid = 100, .tid = tid, .corr = corr, .is_launch = (uint8_t)launch,
		.name = xpu_dict_str(&fx->dict, name, strlen(name)), .stream = 7,
	};
}

static long write_trace(struct fixture *fx)
{
	FILE *f = open_memstream(&fx->text, &fx->len);
	if (!f)
		return -1;
	long n = xpu_chrome_trace_write(f, &fx->m, &fx->dict);
	fclose(f);
	return n;
}

static void teardown(struct fixture *fx)
{
	free(fx->text);
	xpu_gpu_model_free(&fx->m);
	xpu_dict_free(&fx->dict);
}

/* The text of the X event named NAME that starts at TS ("ts":TS). */
static const char *event_at(const char *text, const char *name, const char *ts)
{
	char want[128];
	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) {
		const char *end = strchr(p, '}'), *t = strstr(p, "\"ts\":");
		if (t && end && t < end && strncmp(t + 5, ts, strlen(ts)) == 0 && t[5 + strlen(ts)] == ',')
			return p;
	}
	return NULL;
}

static int has_dur(const char *ev, const char *dur)
{
	char want[64];
	snprintf(want, sizeof(want), "\"dur\":%s}", dur);
	const char *end = strchr(ev, '}');
	const char *d = strstr(ev, want);
	return d && end && d < end;
}

TEST(times_stay_exact_to_the_nanosecond_long_after_the_start)
{
	struct fixture fx;
	REQUIRE(setup(&fx) == 0);
	uint64_t t0 = 5000000000ull;
	add(&fx, "cudaLaunchKernel", 1, 42, t0, t0, 1);
	add(&fx, "matmul", 0, 42, t0 + 1234567891ull, t0 + 1234567891ull + 2000, 1);
	add(&fx, "matmul", 0, 42, t0 + 1234570891ull, t0 + 1234570891ull + 1999, 2);
	REQUIRE(write_trace(&fx) == 3);
	const char *a = event_at(fx.text, "matmul", "1234567.891");
	const char *b = event_at(fx.text, "matmul", "1234570.891");
	CHECK(a && has_dur(a, "2.000"));
	CHECK(b && has_dur(b, "1.999"));
	CHECK(event_at(fx.text, "cudaLaunchKernel", "0.000") != NULL);
	teardown(&fx);
}

TEST(launches_of_one_thread_never_overlap)
{
	struct fixture fx;
	REQUIRE(setup(&fx) == 0);
	uint64_t t0 = 1000000;
	/* Written out of order, as records from two threads interleave. */
	add(&fx, "third", 1, 7, t0 + 2400, t0 + 2400, 3);
	add(&fx, "first", 1, 7, t0, t0, 1);
	add(&fx, "other_thread", 1, 8, t0 + 100, t0 + 100, 4);
	add(&fx, "second", 1, 7, t0 + 400, t0 + 400, 2);
	REQUIRE(write_trace(&fx) == 4);
	const char *first = event_at(fx.text, "first", "0.000");
	const char *second = event_at(fx.text, "second", "0.400");
	const char *third = event_at(fx.text, "third", "2.400");
	const char *other = event_at(fx.text, "other_thread", "0.100");
	CHECK(first && has_dur(first, "0.399"));
	CHECK(second && has_dur(second, "1.000"));
	CHECK(third && has_dur(third, "1.000"));
	CHECK(other && has_dur(other, "1.000"));
	teardown(&fx);
}

TEST(kernels_that_touch_on_a_stream_stay_in_order)
{
	struct fixture fx;
	REQUIRE(setup(&fx) == 0);
	add(&fx, "a", 0, 42, 1000, 3000, 1);
	add(&fx, "b", 0, 42, 3000, 4000, 2);
	REQUIRE(write_trace(&fx) == 2);
	const char *a = event_at(fx.text, "a", "0.000"), *b = event_at(fx.text, "b", "2.000");
	CHECK(a && has_dur(a, "1.999"));
	CHECK(b && has_dur(b, "1.000"));
	teardown(&fx);
}

TEST(events_carry_no_arguments_so_each_kernel_is_one_frame)
{
	struct fixture fx;
	REQUIRE(setup(&fx) == 0);
	add(&fx, "cudaLaunchKernel", 1, 42, 1000, 1000, 1);
	add(&fx, "relu", 0, 42, 5000, 6000, 1);
	add(&fx, "relu", 0, 42, 7000, 8000, 2);
	REQUIRE(write_trace(&fx) > 0);
	CHECK(strstr(fx.text, "correlation") == NULL);
	CHECK(strstr(fx.text, "\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":100,\"tid\":1000000007,"
			      "\"ts\":4.000,\"dur\":1.000}") != NULL);
	/* The launch -> kernel arrow still pairs them. */
	CHECK(strstr(fx.text, "\"ph\":\"s\"") != NULL);
	CHECK(strstr(fx.text, "\"ph\":\"f\"") != NULL);
	teardown(&fx);
}

static char *folded_leaf(const char *leaf)
{
	struct xpu_dict d;
	struct xpu_stacks s;
	char *buf = NULL;
	size_t len = 0;
	xpu_dict_init(&d);
	if (xpu_stacks_init(&s, 4) < 0)
		return NULL;
	uint32_t frames[] = {
		xpu_dict_frame(&d, XPU_FRAME_USER, xpu_dict_cstr(&d, "main"), 0),
		xpu_dict_frame(&d, XPU_FRAME_USER, xpu_dict_cstr(&d, leaf), 0),
	};
	xpu_stacks_add(&s, 1, 1, xpu_dict_stack(&d, frames, 2), xpu_dict_cstr(&d, "app"), 5);
	xpu_stacks_tick(&s);
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		struct xpu_folded_sel all = { .window = XPU_WIN_RECENT };
		xpu_folded_write(f, &d, &s, &all);
		fclose(f);
	}
	xpu_stacks_free(&s);
	xpu_dict_free(&d);
	return buf;
}

TEST(a_leaf_ending_in_a_number_is_not_read_as_a_second_count)
{
	const char *cases[][2] = {
		{ "stub 42", "app;main;stub_42 5\n" },
		{ "interp 3.", "app;main;interp_3. 5\n" },
		{ "loop 1.25", "app;main;loop_1.25 5\n" },
		{ "v8 .5", "app;main;v8 .5 5\n" },
		{ "f(int, 2)", "app;main;f(int, 2) 5\n" },
		{ "x86 42a", "app;main;x86 42a 5\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = folded_leaf(cases[i][0]);
		CHECK_STR(out, cases[i][1]);
		free(out);
	}
}

/* ---- the NPU jobs trace ---- */

static void npu_job(struct xpu_npu_model *m, struct xpu_dict *d, uint32_t pid, uint16_t code, uint64_t t,
		    uint32_t id)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_JOB, .source = XPU_SRC_NPU, .pid = pid, .time = t };
	ev.npu.code = code;
	ev.npu.aux = 1;
	ev.npu.id = id;
	ev.npu.comm = pid ? xpu_dict_cstr(d, "infer") : 0;
	xpu_npu_model_event(m, d, &ev);
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

TEST(each_npu_job_is_a_slice_of_its_process_and_overlapping_jobs_get_lanes)
{
	struct xpu_npu_model m;
	struct xpu_dict d;
	char *text = NULL;
	size_t len;
	uint64_t t0 = 7000000000ull;
	xpu_dict_init(&d);
	REQUIRE(xpu_npu_model_init(&m, NULL, 10, NULL) == 0);
	npu_job(&m, &d, 42, XPU_NPU_JOB_SUBMIT, t0, 0);
	npu_job(&m, &d, 42, XPU_NPU_JOB_SUBMIT, t0 + 1000, 0);		/* in flight with the first */
	npu_job(&m, &d, 0, XPU_NPU_JOB_DONE, t0 + 3000, 17);
	npu_job(&m, &d, 0, XPU_NPU_JOB_DONE, t0 + 5000, 18);
	npu_job(&m, &d, 42, XPU_NPU_JOB_SUBMIT, t0 + 6000, 0);	/* after both: the first lane again */
	npu_job(&m, &d, 0, XPU_NPU_JOB_DONE, t0 + 9000, 19);
	/* a queue with a large number (a fence context) still gets a 32-bit track */
	struct xpu_event big = { .type = XPU_EV_NPU_JOB, .source = XPU_SRC_NPU, .pid = 42, .time = t0 + 9500 };
	big.npu.code = XPU_NPU_JOB_SUBMIT;
	big.npu.aux = 4000000000u;
	big.npu.arg = 5;
	xpu_npu_model_event(&m, &d, &big);
	big.npu.code = XPU_NPU_JOB_DONE;
	big.time = t0 + 9700;
	xpu_npu_model_event(&m, &d, &big);
	FILE *f = open_memstream(&text, &len);
	REQUIRE(f != NULL);
	CHECK_INT(xpu_npu_trace_write(f, &m, &d, NULL), ==, 4);
	fclose(f);
	CHECK_INT(count(text, "\"cat\":\"npu_job\""), ==, 4);
	CHECK(strstr(text, "\"name\":\"job 5\",\"cat\":\"npu_job\",\"ph\":\"X\",\"pid\":42,\"tid\":2000000064,") != NULL);
	CHECK(strstr(text, "\"queue\":4000000000,") != NULL);
	CHECK(strstr(text, "\"args\":{\"name\":\"infer (42)\"}") != NULL);
	CHECK(strstr(text, "{\"name\":\"job 17\",\"cat\":\"npu_job\",\"ph\":\"X\",\"pid\":42,\"tid\":2000000000,"
			   "\"ts\":0.000,\"dur\":3.000,\"args\":{\"job_id\":17,\"queue\":1,\"status\":\"done\","
			   "\"job_status\":0,\"command\":\"infer\"}}") != NULL);
	CHECK(strstr(text, "\"name\":\"job 18\",\"cat\":\"npu_job\",\"ph\":\"X\",\"pid\":42,\"tid\":2000000001,") != NULL);
	CHECK(strstr(text, "\"name\":\"job 19\",\"cat\":\"npu_job\",\"ph\":\"X\",\"pid\":42,\"tid\":2000000000,") != NULL);
	CHECK_INT(count(text, "\"NPU queue 1\""), ==, 1);
	CHECK_INT(count(text, "\"NPU queue 1 (2)\""), ==, 1);
	free(text);
	xpu_npu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(with_no_npu_jobs_the_trace_writes_nothing)
{
	struct xpu_npu_model m;
	struct xpu_dict d;
	char *text = NULL;
	size_t len;
	xpu_dict_init(&d);
	REQUIRE(xpu_npu_model_init(&m, NULL, 10, NULL) == 0);
	FILE *f = open_memstream(&text, &len);
	REQUIRE(f != NULL);
	CHECK_INT(xpu_npu_trace_write(f, &m, &d, NULL), ==, 0);
	fclose(f);
	CHECK_INT(len, ==, 0);
	free(text);
	xpu_npu_model_free(&m);
	xpu_dict_free(&d);
}
