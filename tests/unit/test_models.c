/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU and GPU models and the folded exporter, fed through the event seam. */
#include "check.h"

#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "folded.h"
#include "model_cpu.h"
#include "model_gpu.h"
#include "outfile.h"
#include "table.h"

static uint32_t frame(struct xpu_dict *d, const char *name, uint32_t kind)
{
	return xpu_dict_frame(d, kind, xpu_dict_cstr(d, name), xpu_dict_cstr(d, "mod.so"));
}

static struct xpu_event sample(struct xpu_dict *d, uint32_t pid, uint32_t tid, const char *comm,
			       const char *tcomm, uint32_t stack)
{
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .pid = pid, .tid = tid };
	ev.cpu.stack = stack;
	ev.cpu.comm = xpu_dict_cstr(d, comm);
	ev.cpu.tcomm = xpu_dict_cstr(d, tcomm);
	ev.cpu.user = xpu_dict_cstr(d, "alice");
	ev.cpu.uid = 1000;
	return ev;
}

static const struct xpu_cell *row_for(const struct xpu_table *t, uint64_t key)
{
	int r = xpu_table_find(t, key);
	return r < 0 ? NULL : xpu_table_row(t, (uint32_t)r);
}

TEST(cpu_rows_past_the_limit_age_out_lightest_first_and_keep_the_total)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 2) == 0);
	m.max_tasks = 8;
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	/* Ten short-lived processes (one thread each: two rows) with 1..10 samples. */
	for (uint32_t p = 1; p <= 10; p++)
		for (uint32_t k = 0; k < p; k++) {
			struct xpu_event ev = sample(&d, 100 + p, 100 + p, "job", "job", st);
			xpu_cpu_model_sample(&m, &ev);
		}
	xpu_cpu_model_tick(&m, 1000000000ULL);
	CHECK_INT(m.ntasks, ==, 20);		/* all in the window: all stay */
	struct xpu_event ev = sample(&d, 7, 7, "yes", "yes", st);
	xpu_cpu_model_sample(&m, &ev);
	xpu_cpu_model_tick(&m, 1000000000ULL);
	xpu_cpu_model_tick(&m, 1000000000ULL);	/* the jobs leave the window */
	/* 3/4 of 8 = 6 rows: pid 7's two, and the two heaviest jobs' two each. */
	CHECK_INT(m.ntasks, ==, 6);
	CHECK_INT(m.tasks_aged_out, ==, 16);
	CHECK(xpu_cpu_model_task(&m, 7, 7) != NULL);
	CHECK(xpu_cpu_model_task(&m, 110, 0) != NULL);
	CHECK(xpu_cpu_model_task(&m, 109, 109) != NULL);
	CHECK(xpu_cpu_model_task(&m, 108, 0) == NULL);
	CHECK_INT(m.samples_total, ==, 55 + 1);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(gpu_kernel_rows_and_processes_past_the_limit_age_out_and_keep_the_totals)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 2) == 0);
	m.max_kernels = 8;
	m.max_procs = 4;
	uint32_t name = xpu_dict_cstr(&d, "_Z6kernelv");
	uint64_t t = 1000000000ULL, all = 0;
	/* Ten short-lived processes, each a kernel row weighing p us, then gone. */
	for (uint32_t p = 1; p <= 10; p++) {
		struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = 100 + p, .time = t };
		ev.gproc.state = XPU_GPU_PROC_CONNECTED;
		CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
		ev = (struct xpu_event){ .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = 100 + p, .time = t };
		ev.kernel.end = t + p * 1000;
		ev.kernel.name = name;
		ev.kernel.corr = p;
		CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
		all += p * 1000;
		ev = (struct xpu_event){ .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = 100 + p, .time = t };
		ev.gproc.state = XPU_GPU_PROC_LEFT;
		CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
	}
	xpu_gpu_model_tick(&m, t += 1000000000ULL, 1000000000ULL);
	CHECK_INT(m.nkernels, ==, 10);		/* in the window: all stay */
	xpu_gpu_model_tick(&m, t += 1000000000ULL, 1000000000ULL);
	xpu_gpu_model_tick(&m, t += 1000000000ULL, 1000000000ULL);
	CHECK_INT(m.nkernels, ==, 6);		/* 3/4 of 8, the heaviest */
	CHECK_INT(m.kernels_aged_out, ==, 4);
	for (uint32_t i = 0; i < m.nkernels; i++)
		CHECK(m.kernels[i].pid > 104);
	CHECK_INT(m.nprocs, ==, 3);		/* 3/4 of 4 */
	CHECK_INT(xpu_gpu_model_gpu_ns(&m, XPU_WIN_ALL), ==, all);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* One kernel record of the CUPTI name `name` for process pid. */
static void gpu_kernel(struct xpu_gpu_model *m, uint32_t pid, const char *name)
{
	static uint64_t t = 1000000000ULL;
	struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = pid, .time = t };
	ev.kernel.end = t + 1000;
	ev.kernel.name = xpu_dict_cstr(m->dict, name);
	CHECK_INT(xpu_gpu_model_event(m, &ev), ==, 0);
	t += 2000;
}

/* Process pid's GPU_PROC event at t: its library connected (or left). */
static void gpu_proc_event(struct xpu_gpu_model *m, uint32_t pid, uint64_t t, uint32_t state, uint32_t comm)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = pid, .time = t };
	ev.gproc.state = state;
	ev.gproc.comm = comm;
	CHECK_INT(xpu_gpu_model_event(m, &ev), ==, 0);
}

/* The KERNEL text of process pid's row for the CUPTI name `name`. */
static const char *gpu_row_text(const struct xpu_gpu_model *m, const struct xpu_table *t, uint32_t pid,
				const char *name)
{
	for (uint32_t r = 0; r < t->nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(t, r);
		if (c[XPU_GPU_COL_PID].i == pid && strcmp(c[XPU_GPU_COL_MANGLED].s, name) == 0)
			return c[XPU_GPU_COL_KERNEL].s;
	}
	return NULL;
}

TEST(gpu_kernels_that_shorten_alike_never_show_the_same_text)
{
	/* FillFunctor<int> kernels that differ only in a plumbing argument
	 * (std::array<char*, 1ul> and 2ul), overloads that differ only in their
	 * parameters, and an extern "C" kernel of the same name. */
	static const char *const names[] = {
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_",
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm2EEEEviT0_T1_",
		"_Z6kernelPf", "_Z6kernelPi", "kernel",
	};
	static const char *const want[] = {
		"vectorized_elementwise_kernel<4, FillFunctor<int>>",
		"at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 2ul> >",
		"kernel", "kernel(int*)", "kernel #2",
	};
	struct xpu_dict d;
	struct xpu_gpu_model m;
	struct xpu_table t;
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 2) == 0);
	for (size_t i = 0; i < 5; i++)
		gpu_kernel(&m, 7, names[i]);
	/* in another process, later, each name reads as it did in the first */
	for (size_t i = 5; i-- > 0;)
		gpu_kernel(&m, 8, names[i]);
	xpu_gpu_model_tick(&m, 2000000000ULL, 1000000000ULL);
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_RECENT) == 0);
	CHECK_INT(t.nrows, ==, 10);
	for (size_t i = 0; i < 5; i++) {
		CHECK_STR(gpu_row_text(&m, &t, 7, names[i]), want[i]);
		CHECK_STR(gpu_row_text(&m, &t, 8, names[i]), want[i]);
	}
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

static int stack_weight(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	uint64_t *w = arg;
	w[e->stack] += weight;
	return 0;
}

TEST(gpu_counted_launches_weigh_their_stack_by_their_count)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 2) == 0);
	uint32_t api = xpu_dict_cstr(&d, "cudaLaunchKernel");
	uint32_t launch = xpu_dict_frame(&d, XPU_FRAME_LAUNCH, api, 0);
	uint32_t step[] = { frame(&d, "main", XPU_FRAME_USER), frame(&d, "step", XPU_FRAME_USER), launch };
	uint32_t eval[] = { frame(&d, "main", XPU_FRAME_USER), frame(&d, "eval", XPU_FRAME_USER), launch };
	uint32_t s1 = xpu_dict_stack(&d, step, 3), s2 = xpu_dict_stack(&d, eval, 3);
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .tid = 9,
				.time = 1000000000ULL };
	ev.launch.api = api;
	ev.launch.comm = xpu_dict_cstr(&d, "app");
	ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
	ev.launch.stack = s1;
	ev.launch.count = 30000;
	CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
	ev.launch.stack = s2;
	ev.launch.count = 10000;
	CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
	ev.launch.count = 0;	/* one launch, as recordings made before counting have it */
	CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
	xpu_gpu_model_tick(&m, 2000000000ULL, 1000000000ULL);
	uint64_t w[8] = { 0 };
	REQUIRE(s1 < 8 && s2 < 8);
	xpu_stacks_each(&m.launch_stacks, XPU_WIN_ALL, 0, 0, stack_weight, w);
	CHECK_INT(w[s1], ==, 30000);
	CHECK_INT(w[s2], ==, 10001);
	REQUIRE(m.nprocs == 1);
	CHECK_INT(m.procs[0].launches.total, ==, 40001);
	CHECK(m.procs[0].launch_only);
	CHECK_INT(m.ntrace, ==, 0);	/* counted, not timed: nothing for the trace */
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(cpu_percent_is_samples_over_a_busy_cpus_worth)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	struct xpu_table t;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 10) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	for (int i = 0; i < 50; i++) {	/* 50 samples at 100 Hz in 1 s: half a CPU */
		struct xpu_event ev = sample(&d, 7, 7, "yes", "yes", st);
		xpu_cpu_model_sample(&m, &ev);
	}
	for (int i = 0; i < 150; i++) {	/* two threads of one process: 1.5 CPUs */
		struct xpu_event ev = sample(&d, 8, 8 + i % 2, "make", i % 2 ? "cc1" : "make", st);
		xpu_cpu_model_sample(&m, &ev);
	}
	xpu_cpu_model_tick(&m, 1000000000ULL);
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_RECENT) == 0);
	CHECK_INT(t.nrows, ==, 2);
	const struct xpu_cell *y = row_for(&t, 7), *mk = row_for(&t, 8);
	REQUIRE(y && mk);
	CHECK(y[XPU_CPU_COL_PCT].d > 49.99 && y[XPU_CPU_COL_PCT].d < 50.01);
	CHECK(mk[XPU_CPU_COL_PCT].d > 149.99 && mk[XPU_CPU_COL_PCT].d < 150.01);
	CHECK_INT(mk[XPU_CPU_COL_SAMPLES].i, ==, 150);
	CHECK_STR(y[XPU_CPU_COL_USER].s, "alice");
	CHECK_STR(y[XPU_CPU_COL_COMM].s, "yes");
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A sample taken before its process exited but delivered after the exit
 * (held while its stack's symbols were read), or one of another thread
 * dying just after the leader, leaves it exited; a sample a second after
 * the exit is a new process with the pid.  The first made a followed
 * process that had ended look alive (state R), so F kept following it. */
TEST(a_late_sample_does_not_revive_an_exited_process_a_later_one_does)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 99, 10) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	struct xpu_event ev = sample(&d, 8, 8, "busy", "busy", st);
	ev.time = 5;
	xpu_cpu_model_sample(&m, &ev);
	xpu_cpu_model_exit(&m, 8, 10);
	ev.time = 9;
	xpu_cpu_model_sample(&m, &ev);
	const struct xpu_cpu_task *p = xpu_cpu_model_task(&m, 8, 0);
	REQUIRE(p);
	CHECK(p->exited);
	ev.time = 10 + XPU_CPU_EXIT_GRACE_NS / 2;	/* another thread, dying after the leader */
	xpu_cpu_model_sample(&m, &ev);
	CHECK(xpu_cpu_model_task(&m, 8, 0)->exited);
	ev.time = 11 + XPU_CPU_EXIT_GRACE_NS;
	xpu_cpu_model_sample(&m, &ev);
	CHECK(!xpu_cpu_model_task(&m, 8, 0)->exited);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(cpu_thread_rows_of_an_exited_process_go_once_idle)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 2) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	for (uint32_t tid = 8; tid < 12; tid++) {	/* make: 4 threads */
		struct xpu_event ev = sample(&d, 8, tid, "make", "make", st);
		xpu_cpu_model_sample(&m, &ev);
	}
	struct xpu_event other = sample(&d, 9, 10, "cc", "cc", st);
	xpu_cpu_model_sample(&m, &other);
	xpu_cpu_model_tick(&m, 1000000000ULL);
	CHECK_INT(m.ntasks, ==, 7);	/* 2 processes, 5 threads */
	xpu_cpu_model_exit(&m, 8, 0);
	xpu_cpu_model_tick(&m, 1000000000ULL);
	CHECK_INT(m.ntasks, ==, 7);	/* still in the window */
	xpu_cpu_model_tick(&m, 1000000000ULL);
	CHECK_INT(m.ntasks, ==, 3);	/* make's threads went; its row stays */
	CHECK_INT(m.threads_dropped, ==, 4);
	const struct xpu_cpu_task *p = xpu_cpu_model_task(&m, 8, 0);
	REQUIRE(p);
	CHECK_INT(p->samples.total, ==, 4);
	CHECK(xpu_cpu_model_task(&m, 8, 9) == NULL);
	CHECK(xpu_cpu_model_task(&m, 9, 10) != NULL);	/* alive: kept */
	CHECK_INT(m.exits_pending, ==, 0);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(cpu_thread_rows_carry_thread_names)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	struct xpu_table t;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 10) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	struct xpu_event a = sample(&d, 8, 8, "make", "make", st), b = sample(&d, 8, 9, "make", "cc1", st);
	xpu_cpu_model_sample(&m, &a);
	xpu_cpu_model_sample(&m, &b);
	xpu_cpu_model_sample(&m, &b);
	xpu_cpu_model_tick(&m, 1000000000ULL);
	xpu_table_init(&t, xpu_cpu_thread_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 1, XPU_WIN_RECENT) == 0);
	CHECK_INT(t.nrows, ==, 2);
	const struct xpu_cell *cc = row_for(&t, 9);
	REQUIRE(cc);
	CHECK_STR(cc[XPU_CPU_COL_COMM].s, "cc1");
	CHECK_INT(cc[XPU_CPU_COL_PID].i, ==, 8);
	CHECK_INT(cc[XPU_CPU_COL_SAMPLES].i, ==, 2);
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A filter by a process's name (what the process table shows), then H: its
 * threads, whatever their own names (issue 28: "no rows match"). */
TEST(cpu_a_filter_by_process_name_keeps_its_threads)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	struct xpu_table t;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 10) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	struct xpu_event a = sample(&d, 8, 8, "python3", "python3", st),
			 b = sample(&d, 8, 9, "python3", "pt_autograd_0", st),
			 c = sample(&d, 20, 20, "bash", "bash", st);
	xpu_cpu_model_sample(&m, &a);
	xpu_cpu_model_sample(&m, &b);
	xpu_cpu_model_sample(&m, &c);
	xpu_cpu_model_tick(&m, 1000000000ULL);
	xpu_table_init(&t, xpu_cpu_thread_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 1, XPU_WIN_RECENT) == 0);
	CHECK_INT(t.nrows, ==, 3);
	xpu_table_filter(&t, "python");
	CHECK_INT(t.nrows, ==, 2);
	REQUIRE(row_for(&t, 9));
	CHECK_STR(row_for(&t, 9)[XPU_CPU_COL_PROC].s, "python3");
	xpu_table_free(&t);
	/* The process table has no second name to match. */
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_RECENT) == 0);
	CHECK_INT(row_for(&t, 8)[XPU_CPU_COL_PROC].na, ==, 1);
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(cpu_rows_leave_the_recent_window_but_stay_since_start)
{
	struct xpu_dict d;
	struct xpu_cpu_model m;
	struct xpu_table t;
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 2) == 0);
	uint32_t st = xpu_dict_stack(&d, NULL, 0);
	struct xpu_event ev = sample(&d, 5, 5, "short", "short", st);
	xpu_cpu_model_sample(&m, &ev);
	for (int i = 0; i < 3; i++)
		xpu_cpu_model_tick(&m, 1000000000ULL);
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_RECENT);
	CHECK_INT(t.nrows, ==, 0);
	xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_ALL);
	CHECK_INT(t.nrows, ==, 1);
	CHECK_INT(m.ticks.window_ns, ==, 2000000000ULL);
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

static char *folded_of(struct xpu_dict *d, struct xpu_stacks *s, const struct xpu_folded_sel *sel)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xpu_folded_write(f, d, s, sel);
	fclose(f);
	return buf;
}

TEST(folded_lines_follow_flamegraph_conventions)
{
	struct xpu_dict d;
	struct xpu_stacks s;
	xpu_dict_init(&d);
	REQUIRE(xpu_stacks_init(&s, 4) == 0);
	uint32_t f1[] = {
		frame(&d, "main", XPU_FRAME_USER),
		frame(&d, "std::map<int; int>::find", XPU_FRAME_USER),
		frame(&d, "do_syscall_64", XPU_FRAME_KERNEL),
	};
	uint32_t f2[] = {
		frame(&d, "main", XPU_FRAME_USER),
		xpu_dict_frame(&d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(&d, "[unknown]"), xpu_dict_cstr(&d, "libx.so")),
		frame(&d, "jitted\nfn", XPU_FRAME_JIT),
	};
	uint32_t comm = xpu_dict_cstr(&d, "my app");
	xpu_stacks_add(&s, 1, 1, xpu_dict_stack(&d, f1, 3), comm, 3);
	xpu_stacks_add(&s, 1, 2, xpu_dict_stack(&d, f1, 3), comm, 4);	/* merged with the above */
	xpu_stacks_add(&s, 1, 1, xpu_dict_stack(&d, f2, 3), comm, 2);
	xpu_stacks_add(&s, 2, 2, xpu_dict_stack(&d, f2, 3), xpu_dict_cstr(&d, "other"), 9);
	xpu_stacks_tick(&s);
	struct xpu_folded_sel all = { .window = XPU_WIN_RECENT };
	char *out = folded_of(&d, &s, &all);
	CHECK_STR(out, "my app;main;[unknown] (libx.so);jitted?fn_[j] 2\n"
		       "my app;main;std::map<int: int>::find;do_syscall_64_[k] 7\n"
		       "other;main;[unknown] (libx.so);jitted?fn_[j] 9\n");
	free(out);
	uint64_t keys[] = { 2 };
	struct xpu_folded_sel one = { .window = XPU_WIN_RECENT, .keys = keys, .nkeys = 1 };
	out = folded_of(&d, &s, &one);
	CHECK_STR(out, "other;main;[unknown] (libx.so);jitted?fn_[j] 9\n");
	free(out);
	struct xpu_folded_sel us = { .window = XPU_WIN_RECENT, .keys = keys, .nkeys = 1, .divisor = 4 };
	out = folded_of(&d, &s, &us);
	CHECK_STR(out, "other;main;[unknown] (libx.so);jitted?fn_[j] 2\n");
	free(out);
	xpu_stacks_free(&s);
	xpu_dict_free(&d);
}

TEST(outfile_never_replaces_an_existing_file)
{
	char dir[] = "/tmp/xputop-test-XXXXXX", path[4200], path2[4200];
	struct xpu_outfile o;
	REQUIRE(mkdtemp(dir));
	REQUIRE(xpu_outfile_open(&o, dir) == 0);
	fputs("first\n", o.f);
	REQUIRE(xpu_outfile_commit(&o, "xputop-cpu-x", "folded", path, sizeof(path)) == 0);
	REQUIRE(xpu_outfile_open(&o, dir) == 0);
	fputs("second\n", o.f);
	REQUIRE(xpu_outfile_commit(&o, "xputop-cpu-x", "folded", path2, sizeof(path2)) == 0);
	CHECK(strcmp(path, path2) != 0);
	CHECK(strstr(path2, "xputop-cpu-x-2.folded") != NULL);
	char buf[16] = { 0 };
	int fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK_INT(read(fd, buf, sizeof(buf) - 1), ==, 6);
	CHECK_STR(buf, "first\n");
	close(fd);
	/* A symlink planted under the next name is not followed or replaced. */
	char link[4200];
	snprintf(link, sizeof(link), "%s/xputop-cpu-y.folded", dir);
	REQUIRE(symlink("/etc/passwd", link) == 0);
	REQUIRE(xpu_outfile_open(&o, dir) == 0);
	fputs("third\n", o.f);
	REQUIRE(xpu_outfile_commit(&o, "xputop-cpu-y", "folded", path, sizeof(path)) == 0);
	CHECK(strstr(path, "xputop-cpu-y-2.folded") != NULL);
	struct stat st;
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	unlink(link);
	unlink(path);
	unlink(path2);
	snprintf(path, sizeof(path), "%s/xputop-cpu-x.folded", dir);
	unlink(path);
	CHECK_INT(rmdir(dir), ==, 0);	/* no temporary file left behind */
}

TEST(outfile_abort_leaves_nothing)
{
	char dir[] = "/tmp/xputop-test-XXXXXX";
	struct xpu_outfile o;
	REQUIRE(mkdtemp(dir));
	REQUIRE(xpu_outfile_open(&o, dir) == 0);
	fputs("partial", o.f);
	xpu_outfile_abort(&o);
	CHECK_INT(rmdir(dir), ==, 0);
}

/* A process that runs kernel "big" (3 ms) and "small" (1 ms) back to back
 * for `secs` seconds from t = 1 s, traced in slices of slice_ms at a random
 * point of every period_ms (sampled) or all the time (exact): the model gets
 * only what was traced, as from the library. */
static void traced_run(struct xpu_gpu_model *m, int sampled, uint32_t slice_ms, uint32_t period_ms,
		       int secs, uint64_t *calls)
{
	const uint64_t ms = 1000000ULL, t0 = 1000000000ULL;
	uint64_t rng = 12345, end = t0 + (uint64_t)secs * 1000 * ms;
	gpu_proc_event(m, 5, t0, XPU_GPU_PROC_CONNECTED, xpu_dict_cstr(m->dict, "decode"));
	uint32_t names[2] = { xpu_dict_cstr(m->dict, "big"), xpu_dict_cstr(m->dict, "small") };
	uint64_t lo = t0, hi = end, tick = t0 + 1000 * ms, t = t0;
	for (uint64_t period = t0; period < end; period += (uint64_t)period_ms * ms) {
		if (sampled) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			lo = period + (rng >> 33) % ((uint64_t)(period_ms - slice_ms) * ms);
			hi = lo + (uint64_t)slice_ms * ms;
		} else {
			lo = period;
			hi = period + (uint64_t)period_ms * ms;
		}
		for (; t < period + (uint64_t)period_ms * ms; ) {
			for (int k = 0; k < 2; k++) {
				uint64_t d = k ? 1 * ms : 3 * ms;
				calls[k]++;
				if (t >= lo && t < hi) {
					struct xpu_event ke = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU,
								.pid = 5, .time = t };
					ke.kernel.end = t + d;
					ke.kernel.name = names[k];
					CHECK_INT(xpu_gpu_model_event(m, &ke), ==, 0);
				}
				t += d;
			}
			if (t >= tick) {
				xpu_gpu_model_tick(m, tick, 1000 * ms);
				tick += 1000 * ms;
			}
		}
		struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 5, .time = lo };
		se.slice.end = hi;
		se.slice.mode = sampled ? XPU_GPU_MODE_SAMPLED : XPU_GPU_MODE_EXACT;
		CHECK_INT(xpu_gpu_model_event(m, &se), ==, 0);
	}
	xpu_gpu_model_tick(m, tick, 1000 * ms);
}

static const struct xpu_cell *kernel_row(const struct xpu_table *t, const char *name)
{
	for (uint32_t r = 0; r < t->nrows; r++)
		if (strcmp(xpu_table_row(t, r)[XPU_GPU_COL_MANGLED].s, name) == 0)
			return xpu_table_row(t, r);
	return NULL;
}

TEST(sampled_figures_are_scaled_by_the_share_of_time_traced)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	struct xpu_table t;
	uint64_t calls[2] = { 0 };
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 60) == 0);
	traced_run(&m, 1, 10, 500, 40, calls);
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	const struct xpu_cell *big = kernel_row(&t, "big"), *small = kernel_row(&t, "small");
	REQUIRE(big && small);
	/* 2% traced: 80 slices of 2.5 steps each stand for 10,000 steps */
	double cover;
	CHECK(xpu_gpu_model_sampled(&m, XPU_WIN_ALL, &cover));
	CHECK(cover > 0.019 && cover < 0.021);
	CHECK_INT(big[XPU_GPU_COL_CALLS].i, >, (int64_t)calls[0] * 85 / 100);
	CHECK_INT(big[XPU_GPU_COL_CALLS].i, <, (int64_t)calls[0] * 115 / 100);
	CHECK_INT(big[XPU_GPU_COL_AVG].i, ==, 3000000);
	/* the shares, 75% and 25%, within 2 points */
	CHECK(big[XPU_GPU_COL_SHARE].d > 73 && big[XPU_GPU_COL_SHARE].d < 77);
	CHECK(small[XPU_GPU_COL_SHARE].d > 23 && small[XPU_GPU_COL_SHARE].d < 27);
	/* each row states its uncertainty, as the process figures do, in both
	 * windows; the calls' covers their true count */
	for (int w = 0; w < 2; w++) {
		REQUIRE(xpu_gpu_model_table(&m, &d, &t, (enum xpu_window)w) == 0);
		big = kernel_row(&t, "big");
		REQUIRE(big);
		static const int errs[] = { XPU_GPU_COL_CALLS_ERR, XPU_GPU_COL_TOTAL_ERR,
					    XPU_GPU_COL_SHARE_ERR };
		for (int c = 0; c < 3; c++)
			CHECK(!big[errs[c]].na && big[errs[c]].d > 0 && big[errs[c]].d < 50);
	}
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	big = kernel_row(&t, "big");
	REQUIRE(big);
	double off = fabs((double)big[XPU_GPU_COL_CALLS].i - (double)calls[0]);
	CHECK(off <= 3 * big[XPU_GPU_COL_CALLS_ERR].d / 100 * (double)big[XPU_GPU_COL_CALLS].i);
	/* the device's kernel time carries its process's GPU time's */
	struct xpu_gpu_device_sum dev;
	REQUIRE(xpu_gpu_model_devices(&m, XPU_WIN_ALL, &dev, 1) == 1);
	CHECK(fabs(dev.kernel_err_pct - m.procs[0].est[XPU_WIN_ALL][XPU_GPU_EST_NS].err_pct) < 0.01);
	CHECK(dev.kernel_err_pct > 0);
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(exact_figures_are_the_counts_themselves)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	struct xpu_table t;
	uint64_t calls[2] = { 0 };
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 60) == 0);
	traced_run(&m, 0, 0, 500, 10, calls);
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	const struct xpu_cell *big = kernel_row(&t, "big");
	REQUIRE(big);
	CHECK(!xpu_gpu_model_sampled(&m, XPU_WIN_ALL, NULL));
	CHECK_INT(big[XPU_GPU_COL_CALLS].i, ==, (int64_t)calls[0]);
	CHECK_INT(big[XPU_GPU_COL_TOTAL].i, ==, (int64_t)calls[0] * 3000000);
	/* no uncertainty: 0, not unknown */
	CHECK(!big[XPU_GPU_COL_TOTAL_ERR].na && big[XPU_GPU_COL_TOTAL_ERR].d == 0);
	CHECK(!big[XPU_GPU_COL_CALLS_ERR].na && big[XPU_GPU_COL_CALLS_ERR].d == 0);
	CHECK(!big[XPU_GPU_COL_SHARE_ERR].na && big[XPU_GPU_COL_SHARE_ERR].d == 0);
	struct xpu_gpu_device_sum dev;
	REQUIRE(xpu_gpu_model_devices(&m, XPU_WIN_ALL, &dev, 1) == 1);
	CHECK(dev.kernel_err_pct == 0);
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A GPU model of a 60 s window, and main -> cudaLaunchKernel as a launch's
 * stack. */
static int launch_model(struct xpu_dict *d, struct xpu_gpu_model *m, uint32_t *api, uint32_t *stack)
{
	xpu_dict_init(d);
	if (xpu_gpu_model_init(m, d, 60) < 0)
		return -1;
	*api = xpu_dict_cstr(d, "cudaLaunchKernel");
	uint32_t frames[] = { frame(d, "main", XPU_FRAME_USER), xpu_dict_frame(d, XPU_FRAME_LAUNCH, *api, 0) };
	*stack = xpu_dict_stack(d, frames, 2);
	return 0;
}

/* The launch-only probes' slices come with pid 0 and scale every process
 * they count, not the injected ones (their own slices do). */
TEST(launch_probe_slices_scale_every_launch_only_process)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	/* an injected process 7, traced exactly */
	gpu_proc_event(&m, 7, t0, XPU_GPU_PROC_CONNECTED, 0);
	/* 10 s; pids 8 and 9 launch 1000 times a second; the probes count them
	 * 10 ms of every 500 ms (2%): 20 counted a period */
	for (int sec = 0; sec < 10; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms;
		for (int half = 0; half < 2; half++) {
			uint64_t lo = t + (uint64_t)half * 500 * ms + 100 * ms;
			for (uint32_t pid = 8; pid <= 9; pid++) {
				struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = pid,
							.tid = pid, .time = lo + 10 * ms };
				ev.launch.api = api;
				ev.launch.comm = xpu_dict_cstr(&d, "app");
				ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
				ev.launch.stack = stack;
				ev.launch.count = 10;
				CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
			}
			struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 0, .time = lo };
			se.slice.end = lo + 10 * ms;
			se.slice.mode = XPU_GPU_MODE_SAMPLED;
			CHECK_INT(xpu_gpu_model_event(&m, &se), ==, 0);
		}
		struct xpu_event xe = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 7, .time = t };
		xe.slice.end = t + 1000 * ms;
		xe.slice.mode = XPU_GPU_MODE_EXACT;
		CHECK_INT(xpu_gpu_model_event(&m, &xe), ==, 0);
		xpu_gpu_model_tick(&m, t + 1000 * ms, 1000 * ms);
	}
	REQUIRE(m.nprocs == 3);
	for (uint32_t i = 0; i < m.nprocs; i++) {
		const struct xpu_gpu_proc *p = &m.procs[i];
		if (p->pid == 7) {
			CHECK(!p->sampled[XPU_WIN_ALL]);
			CHECK(p->scale[XPU_WIN_ALL] == 1);
			continue;
		}
		CHECK(p->launch_only && p->sampled[XPU_WIN_ALL]);
		CHECK_INT(p->launches.total, ==, 200);
		/* 20 slices of 10 ms over the ~9.9 s since its first slice */
		CHECK(p->cover[XPU_WIN_ALL] > 0.019 && p->cover[XPU_WIN_ALL] < 0.0205);
		double est = (double)p->launches.total * p->scale[XPU_WIN_ALL];
		CHECK(est > 9700 && est < 10300);
	}
	/* a slice that ends before it starts (a damaged recording) is ignored */
	struct xpu_event bad = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 0, .time = t0 + 20000 * ms };
	bad.slice.end = t0;
	bad.slice.mode = XPU_GPU_MODE_SAMPLED;
	CHECK_INT(xpu_gpu_model_event(&m, &bad), ==, 0);
	xpu_gpu_model_tick(&m, t0 + 11000 * ms, 1000 * ms);
	CHECK(m.procs[1].cover[XPU_WIN_ALL] < 0.0205);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A launch-only process's start (GPU_BORN), or its launches counted by the
 * probes, handed on at `time` (pid 8, one thread). */
static void born_event(struct xpu_gpu_model *m, uint64_t born)
{
	struct xpu_event be = { .type = XPU_EV_GPU_BORN, .source = XPU_SRC_GPU, .pid = 8, .tid = 8, .time = born };
	CHECK_INT(xpu_gpu_model_event(m, &be), ==, 0);
}

static void counted_event(struct xpu_gpu_model *m, uint64_t time, uint32_t comm, uint32_t api, uint32_t stack,
			  uint32_t count)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 8, .tid = 8, .time = time };
	ev.launch.api = api;
	ev.launch.comm = comm;
	ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
	ev.launch.stack = stack;
	ev.launch.count = count;
	CHECK_INT(xpu_gpu_model_event(m, &ev), ==, 0);
}

/* The launch probes' span [start, end) of mode (pid 0: every process). */
static void probes_span(struct xpu_gpu_model *m, uint64_t start, uint64_t end, uint32_t mode)
{
	struct xpu_event ps = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 0, .time = start };
	ps.slice.end = end;
	ps.slice.mode = mode;
	CHECK_INT(xpu_gpu_model_event(m, &ps), ==, 0);
}

/* A launch-only process started 400 ms into the run and exited 4 s later,
 * launching 1,000 times a second; the probes counted 50 ms of every 500 ms
 * (at 300 ms into each), 8 slices of its life, and went on for 8 s.  Each
 * second's refresh hands on its counts (its start, GPU_BORN, with its first
 * key's) and then the spans that ended.  Its time is its life: 4 s, 10%
 * counted, 4,000 estimated; from its first slice counted it was 3.6 s and
 * 3,600 (tests/bpf/gpu.sh's 4 s launcher came out 20% low so), and past
 * its exit the probes' spans added time in which it launched nothing. */
TEST(a_launch_only_process_is_estimated_from_its_start_to_its_exit)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms, born = t0 + 400 * ms, died = born + 4000 * ms;
	uint32_t api, stack;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	int told = 0;
	for (int sec = 0; sec < 8; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		uint32_t counted = 0;
		for (int half = 0; half < 2; half++) {
			uint64_t lo = t + (uint64_t)half * 500 * ms + 300 * ms, hi = lo + 50 * ms;
			uint64_t a = lo > born ? lo : born, b = hi < died ? hi : died;
			counted += b > a ? (uint32_t)((b - a) / ms) : 0;
		}
		if (counted && !told) {
			born_event(&m, born);
			told = 1;
		}
		if (counted)
			counted_event(&m, tick, xpu_dict_cstr(&d, "app"), api, stack, counted);
		if (died > t && died <= tick)
			xpu_gpu_model_exit(&m, 8, died);
		for (int half = 0; half < 2; half++) {
			uint64_t lo = t + (uint64_t)half * 500 * ms + 300 * ms;
			probes_span(&m, lo, lo + 50 * ms, XPU_GPU_MODE_SAMPLED);
		}
		xpu_gpu_model_tick(&m, tick, 1000 * ms);
	}
	REQUIRE(m.nprocs == 1);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK(p->launch_only);
	CHECK_INT(p->launches.total, ==, 400);
	CHECK(fabs(p->span_s[XPU_WIN_ALL] - 4.0) < 0.001);
	CHECK(fabs(p->cover[XPU_WIN_ALL] - 0.1) < 0.0001);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(e->value > 3990 && e->value < 4010);
	/* another process takes its id and starts launching: from its start */
	born_event(&m, t0 + 8500 * ms);
	CHECK(p->left_at == 0 && p->since == t0 + 8500 * ms);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A launch-only process started 500 ms into the run, importing and
 * building for 9.5 s (no launch) while the probes were on throughout (a
 * machine launching nothing), then launching 1,000 times a second for 5 s:
 * its first launches cut the probes' span at once and they go to slices
 * (50 ms of every 500, 50 counted each); the model meets it with its first
 * key's launches, a second after the cut.  Its 9.5 s on throughout came
 * before it and are its too: 500 counted in 0.5 s of the other 5 s, 5,000
 * estimated.  Not put to it, that time counted as uncovered and was
 * estimated at the slices' pace (as on an H200, a training run +182%):
 * 24,167 here (its time on throughout lost too). */
TEST(a_launch_only_process_met_late_has_the_probes_spans_since_its_start)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms, born = t0 + 500 * ms, from = t0 + 10000 * ms;
	const uint64_t died = from + 5000 * ms;
	uint32_t api, stack;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	uint32_t counted = 0;
	for (int sec = 0; sec < 17; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		if (tick <= from) {
			probes_span(&m, t, tick, XPU_GPU_MODE_WHOLE);
		} else {
			for (int half = 0; half < 2; half++) {
				uint64_t lo = t + (uint64_t)half * 500 * ms + 300 * ms;
				probes_span(&m, lo, lo + 50 * ms, XPU_GPU_MODE_SAMPLED);
				counted += lo < died ? 50 : 0;
			}
		}
		if (counted && tick > from + 1000 * ms) {
			born_event(&m, born);
			counted_event(&m, tick, xpu_dict_cstr(&d, "python3"), api, stack, counted);
			counted = 0;
		}
		if (died > t && died <= tick)
			xpu_gpu_model_exit(&m, 8, died);
		xpu_gpu_model_tick(&m, tick, 1000 * ms);
	}
	REQUIRE(m.nprocs == 1);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK_INT(p->launches.total, ==, 500);
	CHECK(fabs(p->span_s[XPU_WIN_ALL] - 14.5) < 0.001);
	CHECK(fabs(p->whole_cover[XPU_WIN_ALL] - 9.5 / 14.5) < 0.001);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(e->value > 4950 && e->value < 5050);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A launch-only process the probes counted on throughout for 5 s (every
 * launch: 1,000 a second), then in slices (10 ms in 500, 20 counted a
 * second), its launch events coming two refreshes after the probes' whole
 * count (a key waits for its stack): what was counted throughout is taken as
 * it is, only the rest of the time is scaled by its slices, and the whole
 * count makes the process launch-only at once, so that the spans before its
 * launch events count for it (they did not: the rest came out 2 s longer). */
TEST(a_launch_only_process_counted_throughout_is_scaled_only_outside_it)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	uint32_t late[12] = { 0 };	/* launch events due at each second's tick */
	for (int sec = 0; sec < 12; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 8, .tid = 8,
					.time = tick };
		ev.launch.api = api;
		ev.launch.comm = xpu_dict_cstr(&d, "app");
		ev.launch.stack = stack;
		if (sec < 5) {		/* on throughout: the whole count now, the launch events later */
			ev.launch.flags = XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE | XPU_GPU_LAUNCH_ONLY;
			ev.launch.count = 1000;
			CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
			late[sec + 2] += 1000;
			struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 0, .time = t };
			se.slice.end = tick;
			se.slice.mode = XPU_GPU_MODE_WHOLE;
			CHECK_INT(xpu_gpu_model_event(&m, &se), ==, 0);
		} else if (sec < 10) {
			late[sec] += 20;
			for (int half = 0; half < 2; half++) {
				struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 0,
							.time = t + (uint64_t)half * 500 * ms + 100 * ms };
				se.slice.end = se.time + 10 * ms;
				se.slice.mode = XPU_GPU_MODE_SAMPLED;
				CHECK_INT(xpu_gpu_model_event(&m, &se), ==, 0);
			}
		}
		if (late[sec]) {
			ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
			ev.launch.count = late[sec];
			CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
		}
		if (sec < 10)
			xpu_gpu_model_tick(&m, tick, 1000 * ms);
	}
	REQUIRE(m.nprocs == 1);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK(p->launch_only);
	CHECK_INT(p->launches.total, ==, 5100);
	CHECK_INT(p->wseen.total, ==, 5000);
	CHECK(fabs(p->whole_cover[XPU_WIN_ALL] - 0.5) < 0.01);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	/* 5,000 counted and 100 in 1% of the other 5 s: 10,000 */
	CHECK(e->value > 9800 && e->value < 10200);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* An injected process whose library traced throughout for 20 s (a launch
 * and its kernel every 100 ms, flagged), then slices of 10 ms in 500 for
 * 20 s, each seeing 2 of the 200 launches a second; with probes (count 1):
 * their count on throughout, every second, 200 in the first 20 s and
 * 200 x 10 in the last. */
static void library_whole_run(struct xpu_dict *d, struct xpu_gpu_model *m, int probes)
{
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack, corr = 0;
	REQUIRE(launch_model(d, m, &api, &stack) == 0);
	uint32_t comm = xpu_dict_cstr(d, "serve"), k = xpu_dict_cstr(d, "gemm");
	gpu_proc_event(m, 9, t0, XPU_GPU_PROC_CONNECTED, comm);
	for (int sec = 0; sec < 40; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		int whole = sec < 20;
		for (int i = 0; i < (whole ? 10 : 4); i++) {
			/* on throughout: every 100 ms; slices at 100 and 600 ms, two launches each */
			uint64_t at = whole ? t + (uint64_t)i * 100 * ms : t + (uint64_t)(i / 2) * 500 * ms + 100 * ms + (uint64_t)(i % 2) * ms;
			struct xpu_event l = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .tid = 9, .time = at };
			l.launch.corr = ++corr;
			l.launch.api = api;
			l.launch.stack = stack;
			l.launch.comm = comm;
			l.launch.flags = whole ? XPU_GPU_LAUNCH_WHOLE : 0;
			CHECK_INT(xpu_gpu_model_event(m, &l), ==, 0);
			struct xpu_event ke = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = 9, .time = at + ms };
			ke.kernel.end = at + 2 * ms;
			ke.kernel.corr = corr;
			ke.kernel.name = k;
			ke.kernel.comm = comm;
			CHECK_INT(xpu_gpu_model_event(m, &ke), ==, 0);
		}
		struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 9, .time = t };
		se.slice.comm = comm;
		if (whole) {
			se.slice.end = tick;
			se.slice.mode = XPU_GPU_MODE_WHOLE;
			CHECK_INT(xpu_gpu_model_event(m, &se), ==, 0);
		} else {
			for (int half = 0; half < 2; half++) {
				se.time = t + (uint64_t)half * 500 * ms + 100 * ms;
				se.slice.end = se.time + 10 * ms;
				se.slice.mode = XPU_GPU_MODE_SAMPLED;
				CHECK_INT(xpu_gpu_model_event(m, &se), ==, 0);
			}
		}
		if (probes) {
			struct xpu_event pe = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .time = tick };
			pe.launch.flags = XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE;
			pe.launch.count = whole ? 10 : 200;
			CHECK_INT(xpu_gpu_model_event(m, &pe), ==, 0);
			probes_span(m, t, tick, XPU_GPU_MODE_WHOLE);
		}
		xpu_gpu_model_tick(m, tick, 1000 * ms);
	}
}

/* What the library traced throughout is counted as it is; only the rest of
 * the time is scaled, by its slices, and carries their uncertainty alone. */
TEST(a_process_its_library_traced_throughout_is_scaled_only_outside_it)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	library_whole_run(&d, &m, 0);
	REQUIRE(m.nprocs == 1);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK_INT(p->lw[XPU_GPU_EST_LAUNCHES].total, ==, 200);
	CHECK_INT(p->seen[XPU_GPU_EST_LAUNCHES].total, ==, 280);
	CHECK(fabs(p->lib_whole_cover[XPU_WIN_ALL] - 0.5) < 0.01);
	CHECK(p->sampled[XPU_WIN_ALL] && !p->flat[XPU_WIN_ALL]);
	/* 200 counted; 80 seen in 400 ms of the other 20 s: 4,000 */
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(fabs(e->value - 4200) < 1);
	CHECK(e->ok);
	/* the slices' own: the Poisson term of 80 seen (11.2%), of 4,000 of
	 * 4,200 */
	CHECK(fabs(e->err_pct - 100 / sqrt(80) * 4000 / 4200) < 0.2);
	e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_KERNELS];
	CHECK(fabs(e->value - 4200) < 1);
	/* the kernel's row: as many calls, 1 ms each */
	struct xpu_table t;
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	REQUIRE(t.nrows == 1);
	const struct xpu_cell *r = xpu_table_row(&t, 0);
	CHECK_INT(r[XPU_GPU_COL_CALLS].i, ==, 4200);
	CHECK_INT(r[XPU_GPU_COL_TOTAL].i, ==, 4200 * 1000000LL);
	CHECK(!r[XPU_GPU_COL_CALLS_ERR].na && fabs(r[XPU_GPU_COL_CALLS_ERR].d - e->err_pct) < 1);
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* With the probes' count, the rest's launches are that count less those
 * traced throughout, and its kernels what its slices saw of each launch
 * times them. */
TEST(a_process_its_library_traced_throughout_scales_by_the_probes_count)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	library_whole_run(&d, &m, 1);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK(p->by_probe[XPU_WIN_ALL] && !p->flat[XPU_WIN_ALL]);
	CHECK(fabs(p->scale[XPU_WIN_ALL] - 4000.0 / 80) < 0.01);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(fabs(e->value - 4200) < 1);
	CHECK(e->ok && e->err_pct < 5);
	e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_NS];
	CHECK(fabs(e->value - 4200e6) < 1e6);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* The probes' span of the second a process left in comes after it left:
 * the part up to its leaving counts (left out, that half second was
 * estimated at the pace on throughout, 5% high here). */
TEST(the_probes_span_of_the_second_a_process_left_in_counts_to_its_leaving)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	uint32_t comm = xpu_dict_cstr(&d, "idle");
	gpu_proc_event(&m, 9, t0, XPU_GPU_PROC_CONNECTED, comm);
	for (int sec = 0; sec < 10; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		int last = sec == 9;
		for (int i = 0; i < (last ? 5 : 10); i++) {
			struct xpu_event l = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .tid = 9,
					       .time = t + (uint64_t)i * 100 * ms };
			l.launch.corr = (uint32_t)(sec * 10 + i + 1);
			l.launch.api = api;
			l.launch.stack = stack;
			l.launch.comm = comm;
			l.launch.flags = XPU_GPU_LAUNCH_WHOLE;
			CHECK_INT(xpu_gpu_model_event(&m, &l), ==, 0);
		}
		struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 9, .time = t };
		se.slice.end = last ? t + 500 * ms : tick;
		se.slice.mode = XPU_GPU_MODE_WHOLE;
		se.slice.comm = comm;
		CHECK_INT(xpu_gpu_model_event(&m, &se), ==, 0);
		if (last) {
			gpu_proc_event(&m, 9, t + 500 * ms, XPU_GPU_PROC_LEFT, comm);
		}
		struct xpu_event pe = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .time = tick };
		pe.launch.flags = XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE;
		pe.launch.count = last ? 5 : 10;
		CHECK_INT(xpu_gpu_model_event(&m, &pe), ==, 0);
		probes_span(&m, t, tick, XPU_GPU_MODE_WHOLE);
		xpu_gpu_model_tick(&m, tick, 1000 * ms);
	}
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK_INT(p->wtime.total, ==, 9500 * ms);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(fabs(e->value - 95) < 0.01);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A process busy in 5 seconds of 20 (10,000 launches and 1 s of CPU
 * time each) counted by the probes, 30 ms a second: in 2 of its busy
 * seconds their slice fell where it paused (no launch, no CPU time).  By
 * time their count stands for 20 s at 900 launches in 600 ms: 30,000;
 * by its CPU time (cpu 1), for the 5 s it worked at 900 in 90 ms: 50,000,
 * every launch.  Its library's slices see 100 of each busy second's.
 * cpu 2: one slice counts launches with no CPU time kept. */
static void bursty_probed_run(struct xpu_dict *d, struct xpu_gpu_model *m, int cpu)
{
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack, corr = 0;
	REQUIRE(launch_model(d, m, &api, &stack) == 0);
	uint32_t comm = xpu_dict_cstr(d, "burst");
	gpu_proc_event(m, 9, t0, XPU_GPU_PROC_CONNECTED, comm);
	for (int sec = 0; sec < 20; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		int busy = sec % 4 == 0, paused = sec == 8 || sec == 16;
		for (int i = 0; busy && i < 100; i++) {
			struct xpu_event l = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .tid = 9,
					       .time = t + 500 * ms + (uint64_t)i * 100000 };
			l.launch.corr = ++corr;
			l.launch.api = api;
			l.launch.stack = stack;
			l.launch.comm = comm;
			CHECK_INT(xpu_gpu_model_event(m, &l), ==, 0);
		}
		struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 9,
					.time = t + 500 * ms };
		se.slice.end = se.time + 10 * ms;
		se.slice.mode = XPU_GPU_MODE_SAMPLED;
		se.slice.comm = comm;
		CHECK_INT(xpu_gpu_model_event(m, &se), ==, 0);
		if (busy && !paused) {
			struct xpu_event pe = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .time = tick };
			pe.launch.flags = XPU_GPU_LAUNCH_PROBED;
			pe.launch.count = 300;
			CHECK_INT(xpu_gpu_model_event(m, &pe), ==, 0);
		}
		if (cpu && busy) {
			struct xpu_event ce = { .type = XPU_EV_GPU_CPU, .source = XPU_SRC_GPU, .pid = 9, .time = tick };
			/* cpu 2: in second 4 the slice counted a thread whose time is not kept */
			ce.gcpu.slice_ns = paused || (cpu == 2 && sec == 4) ? 0 : 30 * ms;
			ce.gcpu.all_ns = 1000 * ms;
			CHECK_INT(xpu_gpu_model_event(m, &ce), ==, 0);
		}
		probes_span(m, t + 100 * ms, t + 130 * ms, XPU_GPU_MODE_SAMPLED);
		xpu_gpu_model_tick(m, tick, 1000 * ms);
	}
}

TEST(the_probes_count_scales_by_the_processs_cpu_time_where_it_is_told)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	bursty_probed_run(&d, &m, 0);
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK(p->by_probe[XPU_WIN_ALL] && !p->by_cpu[XPU_WIN_ALL]);
	CHECK(fabs(p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES].value - 30000) < 1);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
	bursty_probed_run(&d, &m, 1);
	p = &m.procs[0];
	CHECK(p->by_probe[XPU_WIN_ALL] && p->by_cpu[XPU_WIN_ALL]);
	CHECK(fabs(p->cpu_cover[XPU_WIN_ALL] - 0.09 / 5) < 1e-6);
	const struct xpu_gpu_est *e = &p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES];
	CHECK(fabs(e->value - 50000) < 1);
	/* every tick with a probes' slice a sample (the idle ones too): the
	 * two paused ones' CPU time says how far the count may be off */
	CHECK(e->ok && e->err_pct > 3 && e->err_pct < 60);
	CHECK_INT(p->pcsd.n, ==, 20);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
	/* launches counted in a slice with none of the CPU time kept: by time */
	bursty_probed_run(&d, &m, 2);
	p = &m.procs[0];
	CHECK(p->by_probe[XPU_WIN_ALL] && !p->by_cpu[XPU_WIN_ALL]);
	CHECK_INT(p->cpu_miss.total, ==, 1);
	CHECK(fabs(p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES].value - 30000) < 1);
	/* a launch-only process's are not its: its probes' count scales by time */
	struct xpu_event ce = { .type = XPU_EV_GPU_CPU, .source = XPU_SRC_GPU, .pid = 77, .time = 30000000000ULL };
	ce.gcpu.all_ns = 1;
	CHECK_INT(xpu_gpu_model_event(&m, &ce), ==, 0);
	CHECK_INT(m.nprocs, ==, 1);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

/* A sampled process its library traced throughout for a while, whose
 * kernels come mostly without their launch records (on an H200 a library
 * that recorded 220 of 40,000 launches sent 415,953 kernels: scaled by what
 * its slices saw of each launch, 35,700 times the truth): they cannot be
 * told a span on throughout's from a slice's, so its kernels and GPU time
 * are not estimated, its rows hold what came, its launches are still
 * estimated. */
TEST(kernels_without_their_launches_are_not_scaled_by_them)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	const uint64_t ms = 1000000ULL, t0 = 1000 * ms;
	uint32_t api, stack, corr = 0;
	REQUIRE(launch_model(&d, &m, &api, &stack) == 0);
	uint32_t comm = xpu_dict_cstr(&d, "graphs"), k = xpu_dict_cstr(&d, "graph_node");
	gpu_proc_event(&m, 9, t0, XPU_GPU_PROC_CONNECTED, comm);
	for (int sec = 0; sec < 20; sec++) {
		uint64_t t = t0 + (uint64_t)sec * 1000 * ms, tick = t + 1000 * ms;
		int whole = sec == 0;	/* its library on throughout the first second */
		for (int i = 0; i < (whole ? 10 : 52); i++) {
			/* on throughout, ten launches and their kernels; then two in
			 * each slice, and 50 kernels of none */
			uint64_t at = t + 100 * ms + (uint64_t)i * 100000;
			uint32_t c = whole || i < 2 ? ++corr : 1000000 + (uint32_t)(sec * 100 + i);
			if (whole || i < 2) {
				struct xpu_event l = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU, .pid = 9, .tid = 9,
						       .time = at };
				l.launch.corr = c;
				l.launch.api = api;
				l.launch.stack = stack;
				l.launch.comm = comm;
				l.launch.flags = whole ? XPU_GPU_LAUNCH_WHOLE : 0;
				CHECK_INT(xpu_gpu_model_event(&m, &l), ==, 0);
			}
			struct xpu_event ke = { .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU, .pid = 9, .time = at };
			ke.kernel.end = at + 50000;
			ke.kernel.corr = c;
			ke.kernel.name = k;
			ke.kernel.comm = comm;
			CHECK_INT(xpu_gpu_model_event(&m, &ke), ==, 0);
		}
		struct xpu_event se = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .pid = 9,
					.time = whole ? t : t + 100 * ms };
		se.slice.end = whole ? tick : se.time + 10 * ms;
		se.slice.mode = whole ? XPU_GPU_MODE_WHOLE : XPU_GPU_MODE_SAMPLED;
		se.slice.comm = comm;
		CHECK_INT(xpu_gpu_model_event(&m, &se), ==, 0);
		xpu_gpu_model_tick(&m, tick, 1000 * ms);
	}
	const struct xpu_gpu_proc *p = &m.procs[0];
	CHECK(p->sampled[XPU_WIN_ALL] && p->orphaned[XPU_WIN_ALL]);
	CHECK_INT(p->orphan.total, ==, 950);
	/* 10 on throughout, 38 in 190 ms of the other 19 s */
	CHECK(p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES].ok);
	CHECK(fabs(p->est[XPU_WIN_ALL][XPU_GPU_EST_LAUNCHES].value - 3810) < 1);
	CHECK(!p->est[XPU_WIN_ALL][XPU_GPU_EST_KERNELS].ok);
	CHECK(fabs(p->est[XPU_WIN_ALL][XPU_GPU_EST_KERNELS].value - 998) < 1e-6);
	CHECK(!p->est[XPU_WIN_ALL][XPU_GPU_EST_NS].ok);
	CHECK(!xpu_gpu_model_gpu_ns_err(&m, XPU_WIN_ALL).ok);
	struct xpu_table t;
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	REQUIRE(t.nrows == 1);
	const struct xpu_cell *r = xpu_table_row(&t, 0);
	CHECK_INT(r[XPU_GPU_COL_CALLS].i, ==, 998);
	CHECK(r[XPU_GPU_COL_CALLS_ERR].na);
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(a_sampled_process_that_left_keeps_its_estimate)
{
	struct xpu_dict d;
	struct xpu_gpu_model m;
	struct xpu_table t;
	uint64_t calls[2] = { 0 };
	xpu_dict_init(&d);
	REQUIRE(xpu_gpu_model_init(&m, &d, 60) == 0);
	traced_run(&m, 1, 50, 250, 10, calls);
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .source = XPU_SRC_GPU, .pid = 5,
				.time = 11000000000ULL };
	ev.gproc.state = XPU_GPU_PROC_LEFT;
	CHECK_INT(xpu_gpu_model_event(&m, &ev), ==, 0);
	xpu_gpu_model_tick(&m, 12500000000ULL, 500000000ULL);
	xpu_table_init(&t, xpu_gpu_cols, XPU_GPU_NCOLS);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	int64_t before = kernel_row(&t, "big")[XPU_GPU_COL_CALLS].i;
	for (int i = 0; i < 20; i++)
		xpu_gpu_model_tick(&m, 13500000000ULL + (uint64_t)i * 1000000000ULL, 1000000000ULL);
	REQUIRE(xpu_gpu_model_table(&m, &d, &t, XPU_WIN_ALL) == 0);
	CHECK_INT(kernel_row(&t, "big")[XPU_GPU_COL_CALLS].i, ==, before);
	CHECK_INT(before, >, (int64_t)calls[0] * 85 / 100);
	CHECK_INT(before, <, (int64_t)calls[0] * 115 / 100);
	xpu_table_free(&t);
	xpu_gpu_model_free(&m);
	xpu_dict_free(&d);
}
