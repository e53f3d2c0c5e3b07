/* SPDX-License-Identifier: GPL-2.0-only */
/* The Prometheus exporter (core/outputs/metrics.c): label values, counters that
 * never go back, and the top-N kernel series with "other". */
#include <math.h>

#include "check.h"
#include "metrics.h"
#include "prom_http.h"
#include "session.h"

#define SEC 1000000000ULL

static char *label(const char *s, size_t max)
{
	static struct xpu_mbuf b;
	b.n = 0;
	xpu_metrics_label_value(&b, s, max);
	return b.p ? b.p : "";
}

TEST(label_values_are_escaped_and_made_valid_utf8)
{
	CHECK_STR(label("a\"b\\c\nd", 100), "a\\\"b\\\\c\\nd");
	CHECK_STR(label("x\xe2\x82\xac", 100), "x\xe2\x82\xac");		/* € stays */
	CHECK_STR(label("x\xff", 100), "x\xef\xbf\xbd");			/* a stray byte: U+FFFD */
	CHECK_STR(label("\xc0\xaf", 100), "\xef\xbf\xbd\xef\xbf\xbd");	/* overlong '/' */
	CHECK_STR(label("\xed\xa0\x80", 100), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");	/* a surrogate */
	CHECK_STR(label("ab\xe2\x82", 100), "ab\xef\xbf\xbd\xef\xbf\xbd");	/* cut short */
}

TEST(a_long_label_value_is_cut_on_a_character_boundary)
{
	CHECK_STR(label("\xe2\x82\xac\xe2\x82\xac", 4), "\xe2\x82\xac");
	CHECK_STR(label("ab\"", 3), "ab");	/* never half an escape */
}

/* The value of the sample line that starts with `series` and a space. */
static double value(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return NAN;
}

/* The sum of the values of sample lines that start with prefix, and how many. */
static double sum(const char *text, const char *prefix, int *count)
{
	double s = 0;
	*count = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			s += strtod(strchr(p, ' ') + 1, NULL);
			(*count)++;
		}
	return s;
}

struct fixture {
	struct xpu_session s;
	struct xpu_metrics *m;
	struct xpu_mbuf text;
	uint64_t now;
};

static void start(struct fixture *f, uint32_t top)
{
	struct xpu_session_cfg cfg = { .sample_hz = 99, .interval_ns = SEC, .window_ns = 3 * SEC };
	memset(f, 0, sizeof(*f));
	xpu_session_init(&f->s);
	CHECK_INT(xpu_session_start(&f->s, &cfg), ==, 0);
	f->m = xpu_metrics_new(top);
	f->now = 10 * SEC;
}

static void stop(struct fixture *f)
{
	xpu_metrics_free(f->m);
	xpu_mbuf_free(&f->text);
	xpu_session_free(&f->s);
}

/* calls kernel records of `ns` each of kernel `name` in process pid. */
static void kernels(struct fixture *f, uint32_t pid, const char *name, int calls, uint64_t ns)
{
	for (int i = 0; i < calls; i++) {
		struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = pid, .time = f->now };
		ev.kernel.end = f->now + ns;
		ev.kernel.name = xpu_dict_cstr(&f->s.dict, name);
		xpu_session_emit(&f->s, &ev);
		f->now += ns + 1;
	}
}

/* Closes a tick and writes the metrics into f->text. */
static const char *refresh(struct fixture *f)
{
	f->now += SEC;
	xpu_session_tick(&f->s, f->now, f->now);
	CHECK_INT(xpu_metrics_update(f->m, &f->s, NULL), ==, 0);
	f->text.n = 0;
	CHECK_INT(xpu_metrics_write(f->m, 0, &f->text), ==, 0);
	return f->text.p;
}

#define K(name) "xputop_gpu_kernel_calls_total{pid=\"7\",comm=\"\",device=\"0\",kernel=\"" name "\"}"

TEST(a_process_gets_n_kernel_series_and_other_holds_the_rest)
{
	struct fixture f;
	start(&f, 2);
	kernels(&f, 7, "heavy", 10, 5000);
	kernels(&f, 7, "middle", 10, 3000);
	kernels(&f, 7, "light", 10, 1000);
	kernels(&f, 7, "lightest", 10, 500);
	const char *t = refresh(&f);
	CHECK(value(t, K("heavy")) == 10);
	CHECK(value(t, K("middle")) == 10);
	CHECK(value(t, K("other")) == 20);
	CHECK(isnan(value(t, K("light"))));
	int n;
	CHECK(sum(t, "xputop_gpu_kernel_calls_total{", &n) == 40);
	CHECK_INT(n, ==, 3);
	CHECK(fabs(sum(t, "xputop_gpu_kernel_seconds_total{", &n) - 95000e-9) < 1e-12);
	stop(&f);
}

TEST(when_the_heaviest_kernels_change_other_never_goes_back_and_nothing_counts_twice)
{
	struct fixture f;
	start(&f, 2);
	kernels(&f, 7, "early_a", 10, 5000);
	kernels(&f, 7, "early_b", 10, 5000);
	kernels(&f, 7, "late_c", 1, 100);
	kernels(&f, 7, "late_d", 1, 100);
	const char *t = refresh(&f);
	double other = value(t, K("other")), a = value(t, K("early_a"));
	CHECK(other == 2);
	int n, calls = 22;
	/* the early kernels stop; the late ones take over, and once the early
	 * ones have been quiet long enough, get series of their own */
	for (int i = 0; i < 40; i++) {
		kernels(&f, 7, "late_c", 5, 4000);
		kernels(&f, 7, "late_d", 5, 4000);
		calls += 10;
		t = refresh(&f);
		double o = value(t, K("other"));
		CHECK(o >= other);
		other = o;
		if (!isnan(value(t, K("early_a"))))
			CHECK(value(t, K("early_a")) >= a);
		/* the series of a retired kernel goes, and what it showed stays
		 * out of "other": every call is in one series' increase once */
		double all = sum(t, "xputop_gpu_kernel_calls_total{", &n);
		CHECK(all == calls || all == calls - 10 || all == calls - 20);
	}
	CHECK(sum(t, "xputop_gpu_kernel_calls_total{", &n) == calls - 20);
	CHECK_INT(n, ==, 3);
	CHECK(!isnan(value(t, K("late_c"))));
	CHECK(!isnan(value(t, K("late_d"))));
	CHECK(isnan(value(t, K("early_a"))));
	stop(&f);
}

TEST(top_zero_puts_every_kernel_in_other)
{
	struct fixture f;
	start(&f, 0);
	kernels(&f, 7, "a", 3, 1000);
	kernels(&f, 7, "b", 4, 1000);
	const char *t = refresh(&f);
	int n;
	CHECK(value(t, K("other")) == 7);
	CHECK(sum(t, "xputop_gpu_kernel_calls_total{", &n) == 7);
	CHECK_INT(n, ==, 1);
	stop(&f);
}

TEST(a_counter_whose_source_goes_back_continues_from_its_last_value)
{
	struct fixture f;
	start(&f, 10);
	f.s.events_total = 100;
	CHECK(value(refresh(&f), "xputop_events_total") >= 100);
	double before = value(f.text.p, "xputop_events_total");
	f.s.events_total = 40;	/* as a total rebuilt after a row aged out would */
	CHECK(value(refresh(&f), "xputop_events_total") == before);
	f.s.events_total = 50;
	CHECK(value(refresh(&f), "xputop_events_total") == before + 10);
	stop(&f);
}

/* calls kernel records of kernel `name` in process pid named comm. */
static void named_kernels(struct fixture *f, uint32_t pid, const char *comm, const char *name, int calls)
{
	for (int i = 0; i < calls; i++) {
		struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = pid, .time = f->now };
		ev.kernel.end = f->now + 1000;
		ev.kernel.name = xpu_dict_cstr(&f->s.dict, name);
		ev.kernel.comm = xpu_dict_cstr(&f->s.dict, comm);
		xpu_session_emit(&f->s, &ev);
		f->now += 1001;
	}
}

/* A GPU process named comm connects (state CONNECTED) or leaves (LEFT). */
static void gpu_proc(struct fixture *f, uint32_t pid, const char *comm, uint32_t state)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = pid, .time = f->now };
	ev.gproc.state = state;
	ev.gproc.comm = xpu_dict_cstr(&f->s.dict, comm);
	xpu_session_emit(&f->s, &ev);
}

TEST(label_by_comm_sums_the_processes_of_one_name_without_a_pid)
{
	struct fixture f;
	start(&f, 10);
	f.s.replay = 1;	/* processes exit when the stream says so */
	xpu_metrics_set_processes(f.m, XPU_METRICS_BY_COMM, 300, 500);
	gpu_proc(&f, 7, "train", XPU_GPU_PROC_CONNECTED);
	gpu_proc(&f, 8, "train", XPU_GPU_PROC_CONNECTED);
	gpu_proc(&f, 9, "eval", XPU_GPU_PROC_CONNECTED);
	named_kernels(&f, 7, "train", "k", 3);
	named_kernels(&f, 8, "train", "k", 4);
	named_kernels(&f, 9, "eval", "k", 5);
	const char *t = refresh(&f);
	CHECK(value(t, "xputop_gpu_kernel_calls_total{comm=\"train\",device=\"0\",kernel=\"k\"}") == 7);
	CHECK(value(t, "xputop_gpu_kernel_calls_total{comm=\"eval\",device=\"0\",kernel=\"k\"}") == 5);
	CHECK(strstr(t, "pid=\"") == NULL);
	/* one of them leaves and goes after the expiry: the sum never goes back */
	xpu_metrics_set_processes(f.m, XPU_METRICS_BY_COMM, 1, 500);
	gpu_proc(&f, 8, "train", XPU_GPU_PROC_LEFT);
	refresh(&f);
	refresh(&f);
	t = refresh(&f);
	CHECK(value(t, "xputop_gpu_kernel_calls_total{comm=\"train\",device=\"0\",kernel=\"k\"}") == 7);
	named_kernels(&f, 7, "train", "k", 1);
	t = refresh(&f);
	CHECK(value(t, "xputop_gpu_kernel_calls_total{comm=\"train\",device=\"0\",kernel=\"k\"}") == 8);
	stop(&f);
}

TEST(an_exited_process_keeps_its_series_for_the_expiry_then_they_go)
{
	struct fixture f;
	start(&f, 10);
	f.s.replay = 1;
	xpu_metrics_set_processes(f.m, XPU_METRICS_BY_PID, 2, 500);
	gpu_proc(&f, 7, "train", XPU_GPU_PROC_CONNECTED);
	kernels(&f, 7, "k", 3, 1000);
	refresh(&f);
	gpu_proc(&f, 7, "train", XPU_GPU_PROC_LEFT);
	const char *t = refresh(&f);	/* exited now: 2 s to go */
	CHECK(strstr(t, "pid=\"7\"") != NULL);
	t = refresh(&f);
	CHECK(strstr(t, "pid=\"7\"") != NULL);
	t = refresh(&f);
	CHECK(strstr(t, "pid=\"7\"") == NULL);
	stop(&f);
}

TEST(past_the_cap_label_values_are_summed_into_other_and_counted)
{
	struct fixture f;
	start(&f, 10);
	f.s.replay = 1;
	xpu_metrics_set_processes(f.m, XPU_METRICS_BY_PID, 300, 2);
	for (uint32_t pid = 1; pid <= 5; pid++) {
		char name[16];
		snprintf(name, sizeof(name), "k%u", pid);
		gpu_proc(&f, pid, "p", XPU_GPU_PROC_CONNECTED);
		kernels(&f, pid, name, (int)pid, 1000);
	}
	const char *t = refresh(&f);
	int n;
	double all = sum(t, "xputop_gpu_kernel_calls_total{", &n);
	CHECK(all == 15);	/* 1 + 2 + ... + 5: nothing lost */
	sum(t, "xputop_gpu_launches_total{", &n);
	CHECK_INT(n, <=, 3);	/* two of their own and "other" */
	CHECK(value(t, "xputop_metrics_series_folded_total") == 3);
	CHECK(value(t, "xputop_metrics_process_label_values{state=\"own\"}") == 2);
	CHECK(value(t, "xputop_metrics_process_label_values{state=\"folded\"}") == 3);
	/* a folded process's kernels are all "other" */
	CHECK(strstr(t, "pid=\"other\",comm=\"other\",device=\"0\",kernel=\"other\"") != NULL);
	CHECK(strstr(t, "kernel=\"k5\"") == NULL || strstr(t, "pid=\"5\"") != NULL);
	stop(&f);
}

TEST(openmetrics_names_counter_families_without_total_and_ends_in_eof)
{
	struct fixture f;
	start(&f, 10);
	refresh(&f);
	struct xpu_mbuf om = { 0 };
	CHECK_INT(xpu_metrics_write(f.m, 1, &om), ==, 0);
	CHECK(strstr(om.p, "\n# TYPE xputop_events counter\nxputop_events_total ") != NULL);
	CHECK(strstr(f.text.p, "\n# TYPE xputop_events_total counter\nxputop_events_total ") != NULL);
	CHECK(strcmp(om.p + om.n - 6, "# EOF\n") == 0);
	xpu_mbuf_free(&om);
	stop(&f);
}

TEST(the_address_spec_is_parsed_and_localhost_is_the_default)
{
	char host[64], err[200];
	unsigned port;
	CHECK_INT(xpu_prom_http_parse("19400", host, sizeof(host), &port, err, sizeof(err)), ==, 0);
	CHECK_STR(host, "127.0.0.1");
	CHECK_INT(port, ==, 19400);
	CHECK_INT(xpu_prom_http_parse("0.0.0.0:80", host, sizeof(host), &port, err, sizeof(err)), ==, 0);
	CHECK_STR(host, "0.0.0.0");
	CHECK_INT(xpu_prom_http_parse("[::1]:19400", host, sizeof(host), &port, err, sizeof(err)), ==, 0);
	CHECK_STR(host, "::1");
	CHECK_INT(xpu_prom_http_parse("::1:19400", host, sizeof(host), &port, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_prom_http_parse("65536", host, sizeof(host), &port, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_prom_http_parse("-1", host, sizeof(host), &port, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_prom_http_parse("host:", host, sizeof(host), &port, err, sizeof(err)), ==, -1);
}
