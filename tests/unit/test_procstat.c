/* SPDX-License-Identifier: GPL-2.0-only */
/* RES, S, TIME+ and the load/CPU/memory line: the /proc parsers on fixture
 * text, TIME+ as htop writes it, and the CPU model fed PROC_STAT and
 * SYS_STAT events. */
#include "check.h"

#include <string.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "model_cpu.h"
#include "procstat.h"
#include "readfile.h"
#include "snapshot.h"
#include "table.h"

/* A name with a space and a ')' in it: the fields follow the last ')'. */
static const char STAT[] =
	"4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1234 0 5 0 "
	"250 130 0 0 20 0 3 0 98765 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
static const char STATM[] = "30141 2048 1500 100 0 2500 0\n";

TEST(a_process_stat_gives_its_state_cpu_time_resident_memory_and_threads)
{
	struct xpu_ev_proc_stat p;
	REQUIRE(xpu_procstat_parse_pid(STAT, STATM, 4096, 100, &p) == 0);
	CHECK_INT(p.state, ==, 'S');
	CHECK_INT(p.cpu_ns, ==, 3800000000ULL);	/* (250 + 130) ticks at 100 Hz */
	CHECK_INT(p.rss_bytes, ==, 2048ULL * 4096);
	CHECK_INT(p.threads, ==, 3);
}

TEST(a_process_stat_gives_its_nice_value_and_virtual_size)
{
	struct xpu_ev_proc_stat p;
	static const char NICED[] = "4242 (n) S 1 4242 4242 0 -1 4194560 1234 0 5 0 "
				    "250 130 0 0 25 -5 3 0 98765 4096 2048\n";
	memset(&p, 0, sizeof(p));
	REQUIRE(xpu_procstat_parse_pid(STAT, STATM, 4096, 100, &p) == 0);
	CHECK_INT(p.flags, ==, XPU_PSTAT_NICE_VIRT);
	CHECK_INT(p.nice, ==, 0);
	CHECK_INT(p.ppid, ==, 1);
	CHECK_INT(p.vsize_bytes, ==, 123456789);
	memset(&p, 0, sizeof(p));
	REQUIRE(xpu_procstat_parse_pid(NICED, STATM, 4096, 100, &p) == 0);
	CHECK_INT(p.nice, ==, -5);
	CHECK_INT(p.vsize_bytes, ==, 4096);
}

TEST(proc_stat_gives_each_cpus_busy_and_total_ticks_by_number)
{
	uint64_t busy[4] = { 0 }, total[4] = { 0 };
	const char *text = "cpu  100 20 30 800 50 5 5 0 7 0\ncpu0 50 10 15 400 25 2 3 0 0 0\n"
			   "cpu2 10 0 0 90 0 0 0 0 0 0\ncpu9 1 1 1 1 1 1 1 1 0 0\nintr 1 2 3\n";
	CHECK_INT(xpu_procstat_parse_cpus(text, busy, total, 4), ==, 3);
	CHECK_INT(busy[0], ==, 80);
	CHECK_INT(total[0], ==, 505);
	CHECK_INT(busy[2], ==, 10);
	CHECK_INT(total[2], ==, 100);
	CHECK_INT(total[1], ==, 0);	/* offline: no line */
}

TEST(a_process_stat_that_is_cut_short_or_not_one_is_refused)
{
	struct xpu_ev_proc_stat p;
	CHECK_INT(xpu_procstat_parse_pid("4242 (x) R 1 2 3", STATM, 4096, 100, &p), ==, -1);
	CHECK_INT(xpu_procstat_parse_pid("no parenthesis here", STATM, 4096, 100, &p), ==, -1);
	CHECK_INT(xpu_procstat_parse_pid(STAT, "", 4096, 100, &p), ==, -1);
}

TEST(loadavg_gives_three_loads_in_hundredths)
{
	uint32_t l[3];
	REQUIRE(xpu_procstat_parse_loadavg("0.52 1.40 12.07 3/456 7890\n", l) == 0);
	CHECK_INT(l[0], ==, 52);
	CHECK_INT(l[1], ==, 140);
	CHECK_INT(l[2], ==, 1207);
	CHECK_INT(xpu_procstat_parse_loadavg("0.52 nan", l), ==, -1);
}

TEST(proc_stat_counts_idle_and_iowait_as_not_busy)
{
	uint64_t busy, total;
	const char *text = "cpu  100 20 30 800 50 5 5 0 7 0\ncpu0 50 10 15 400 25 2 3 0 0 0\n";
	REQUIRE(xpu_procstat_parse_cpu(text, &busy, &total) == 0);
	CHECK_INT(total, ==, 1010);	/* guest (7) is in user already */
	CHECK_INT(busy, ==, 160);
	CHECK_INT(xpu_procstat_parse_cpu("intr 1 2 3\n", &busy, &total), ==, -1);
}

TEST(meminfo_used_is_htops_total_less_free_buffers_cached_and_sreclaimable)
{
	uint64_t total, used;
	const char *text = "MemTotal:       16000000 kB\nMemFree:         4000000 kB\n"
			   "MemAvailable:    9000000 kB\nBuffers:          500000 kB\n"
			   "Cached:          3000000 kB\nSwapCached:            0 kB\n"
			   "SReclaimable:     400000 kB\nSUnreclaim:       100000 kB\n";
	REQUIRE(xpu_procstat_parse_meminfo(text, &total, &used) == 0);
	CHECK_INT(total, ==, 16000000);
	CHECK_INT(used, ==, 16000000 - 4000000 - 500000 - 3000000 - 400000);
	CHECK_INT(xpu_procstat_parse_meminfo("MemFree: 1 kB\n", &total, &used), ==, -1);
}

static const char *fmt_time(int64_t ns, char *buf, size_t size)
{
	static const struct xpu_col col = { "TIME+", "cpu_time_ns", XPU_CELL_CPUTIME, 9, 0 };
	struct xpu_cell c = { .i = ns };
	xpu_cell_format(&col, &c, buf, size);
	return buf;
}

TEST(time_plus_reads_as_htops_minutes_seconds_hundredths_then_hours)
{
	char b[32];
	CHECK_STR(fmt_time(0, b, sizeof(b)), "0:00.00");
	CHECK_STR(fmt_time(3800000000LL, b, sizeof(b)), "0:03.80");
	CHECK_STR(fmt_time(754120000000LL, b, sizeof(b)), "12:34.12");
	CHECK_STR(fmt_time(3599990000000LL, b, sizeof(b)), "59:59.99");
	CHECK_STR(fmt_time(3600000000000LL, b, sizeof(b)), "1h00:00");
	CHECK_STR(fmt_time(((25LL * 60 + 7) * 60 + 9) * 1000000000LL, b, sizeof(b)), "25h07:09");
}

static struct xpu_event sample(struct xpu_dict *d, uint32_t pid, uint32_t tid)
{
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .pid = pid, .tid = tid };
	ev.cpu.comm = ev.cpu.tcomm = xpu_dict_cstr(d, "app");
	ev.cpu.user = xpu_dict_cstr(d, "alice");
	return ev;
}

static const struct xpu_cell *row_for(const struct xpu_table *t, uint64_t key)
{
	int r = xpu_table_find(t, key);
	return r < 0 ? NULL : xpu_table_row(t, (uint32_t)r);
}

TEST(a_process_row_shows_res_state_and_time_once_read_and_na_before)
{
	struct xpu_cpu_model m;
	struct xpu_dict d;
	struct xpu_table t;
	xpu_dict_init(&d);
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_init(&m, 100, 5) == 0);
	struct xpu_event s1 = sample(&d, 10, 11), s2 = sample(&d, 20, 20);
	xpu_cpu_model_sample(&m, &s1);
	xpu_cpu_model_sample(&m, &s2);
	struct xpu_event ps = { .type = XPU_EV_PROC_STAT, .pid = 10 };
	ps.pstat = (struct xpu_ev_proc_stat){ .rss_bytes = 5 << 20, .cpu_ns = 3800000000ULL, .state = 'R' };
	xpu_cpu_model_stat(&m, &ps);
	ps.pid = 99;	/* no row: ignored, and no row made */
	xpu_cpu_model_stat(&m, &ps);
	xpu_cpu_model_tick(&m, 1000000000);

	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_RECENT) == 0);
	CHECK_INT(t.nrows, ==, 2);
	const struct xpu_cell *r = row_for(&t, 10);
	REQUIRE(r);
	CHECK_INT(r[XPU_CPU_COL_RES].i, ==, 5 << 20);
	CHECK_STR(r[XPU_CPU_COL_STATE].s, "R");
	CHECK_INT(r[XPU_CPU_COL_TIME].i, ==, 3800000000LL);
	r = row_for(&t, 20);
	REQUIRE(r);
	CHECK(r[XPU_CPU_COL_RES].na && r[XPU_CPU_COL_STATE].na && r[XPU_CPU_COL_TIME].na);
	xpu_table_sort(&t, XPU_CPU_COL_TIME, 0);	/* known first, unknown last */
	CHECK_INT(t.keys[0], ==, 10);

	/* The thread table: each thread's own state and CPU time, once read;
	 * RES is the process's, so not there. */
	struct xpu_event ts = { .type = XPU_EV_THREAD_STAT, .pid = 10, .tid = 11 };
	ts.pstat = (struct xpu_ev_proc_stat){ .cpu_ns = 1200000000ULL, .state = 'S' };
	xpu_cpu_model_stat(&m, &ts);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 1, XPU_WIN_RECENT) == 0);
	CHECK(!xpu_col_shown(&t.cols[XPU_CPU_COL_RES]));
	CHECK(xpu_col_shown(&t.cols[XPU_CPU_COL_TIME]) && xpu_col_shown(&t.cols[XPU_CPU_COL_STATE]));
	r = row_for(&t, 11);
	REQUIRE(r);
	CHECK_STR(r[XPU_CPU_COL_STATE].s, "S");
	CHECK_INT(r[XPU_CPU_COL_TIME].i, ==, 1200000000LL);
	r = row_for(&t, 20);	/* thread 20 of process 20: not read yet */
	REQUIRE(r);
	CHECK(r[XPU_CPU_COL_STATE].na && r[XPU_CPU_COL_TIME].na);
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(an_exited_process_is_dead_with_no_memory_and_keeps_its_cpu_time)
{
	struct xpu_cpu_model m;
	struct xpu_dict d;
	struct xpu_table t;
	xpu_dict_init(&d);
	xpu_table_init(&t, xpu_cpu_cols, XPU_CPU_NCOLS);
	REQUIRE(xpu_cpu_model_init(&m, 100, 5) == 0);
	struct xpu_event s1 = sample(&d, 10, 10);
	xpu_cpu_model_sample(&m, &s1);
	struct xpu_event ps = { .type = XPU_EV_PROC_STAT, .pid = 10 };
	ps.pstat = (struct xpu_ev_proc_stat){ .rss_bytes = 5 << 20, .cpu_ns = 2000000000ULL, .state = 'R' };
	xpu_cpu_model_stat(&m, &ps);
	xpu_cpu_model_exit(&m, 10, 0);
	xpu_cpu_model_tick(&m, 1000000000);
	REQUIRE(xpu_cpu_model_table(&m, &d, &t, 0, XPU_WIN_RECENT) == 0);
	const struct xpu_cell *r = row_for(&t, 10);
	REQUIRE(r);
	CHECK_STR(r[XPU_CPU_COL_STATE].s, "X");
	CHECK(r[XPU_CPU_COL_RES].na);
	CHECK_INT(r[XPU_CPU_COL_TIME].i, ==, 2000000000LL);
	xpu_table_free(&t);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(only_processes_with_a_row_in_the_window_are_read)
{
	struct xpu_cpu_model m;
	struct xpu_dict d;
	uint32_t pids[8];
	xpu_dict_init(&d);
	REQUIRE(xpu_cpu_model_init(&m, 100, 2) == 0);
	struct xpu_event a = sample(&d, 10, 11), b = sample(&d, 20, 20);
	xpu_cpu_model_sample(&m, &a);
	xpu_cpu_model_sample(&m, &b);
	xpu_cpu_model_tick(&m, 1000000000);
	CHECK_INT(xpu_cpu_model_shown_pids(&m, pids, 8), ==, 2);
	CHECK_INT(xpu_cpu_model_shown_pids(&m, pids, 1), ==, 1);	/* bounded */
	xpu_cpu_model_exit(&m, 20, 0);
	int n = xpu_cpu_model_shown_pids(&m, pids, 8);
	CHECK_INT(n, ==, 1);
	CHECK_INT(pids[0], ==, 10);
	uint32_t tids[8];
	n = xpu_cpu_model_shown_threads(&m, pids, tids, 8);	/* and their threads */
	CHECK_INT(n, ==, 1);
	CHECK_INT(pids[0], ==, 10);
	CHECK_INT(tids[0], ==, 11);
	xpu_cpu_model_sample(&m, &a);
	xpu_cpu_model_tick(&m, 1000000000);
	xpu_cpu_model_tick(&m, 1000000000);
	xpu_cpu_model_tick(&m, 1000000000);	/* out of the 2-tick window */
	CHECK_INT(xpu_cpu_model_shown_pids(&m, pids, 8), ==, 0);
	CHECK_INT(xpu_cpu_model_shown_threads(&m, pids, tids, 8), ==, 0);
	xpu_cpu_model_free(&m);
	xpu_dict_free(&d);
}

TEST(the_summary_line_says_load_cpu_and_memory_and_na_for_what_is_unknown)
{
	struct xpu_cpu_model m;
	char buf[160];
	REQUIRE(xpu_cpu_model_init(&m, 100, 2) == 0);
	xpu_cpu_sys_text(&m.sys, buf, sizeof(buf));
	CHECK_STR(buf, "");	/* nothing read (an older recording) */
	struct xpu_event y = { .type = XPU_EV_SYS_STAT };
	y.sys.flags = XPU_SYS_LOAD | XPU_SYS_MEM;
	y.sys.load100[0] = 52, y.sys.load100[1] = 140, y.sys.load100[2] = 1207;
	y.sys.mem_total_kib = 16 << 20;
	y.sys.mem_used_kib = 3 << 20;
	xpu_cpu_model_stat(&m, &y);
	xpu_cpu_sys_text(&m.sys, buf, sizeof(buf));
	CHECK_STR(buf, "load 0.52 1.40 12.07  cpu N/A  mem 3.0G/16.0G");
	y.sys.flags |= XPU_SYS_BUSY;
	y.sys.busy_pct100 = 1234;
	xpu_cpu_model_stat(&m, &y);
	xpu_cpu_sys_text(&m.sys, buf, sizeof(buf));
	CHECK_STR(buf, "load 0.52 1.40 12.07  cpu 12.3%  mem 3.0G/16.0G");
	xpu_cpu_model_free(&m);
}

/* The one small-file reader procstat and the TUI's kill/renice share: a
 * file longer than the buffer is cut at size - 1 and NUL-terminated; an
 * empty file and a missing one both read as -1. */
TEST(a_small_file_is_read_into_the_buffer_cut_at_its_size)
{
	char path[] = "/tmp/xpu-small-XXXXXX", buf[8];
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	CHECK_INT(xpu_read_small(path, buf, sizeof(buf)), ==, -1);
	REQUIRE(write(fd, "0123456789\n", 11) == 11);
	close(fd);
	CHECK_INT(xpu_read_small(path, buf, sizeof(buf)), ==, 7);
	CHECK_STR(buf, "0123456");
	unlink(path);
	CHECK_INT(xpu_read_small(path, buf, sizeof(buf)), ==, -1);
}
