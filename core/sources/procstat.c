/* SPDX-License-Identifier: GPL-2.0-only */
#include "procstat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"
#include "session.h"
#include "sys.h"

int xpu_procstat_parse_pid(const char *stat, const char *statm, long page, long hz,
			   struct xpu_ev_proc_stat *out)
{
	/* The name may hold spaces and parentheses: the fields follow the last ')'. */
	const char *p = strrchr(stat, ')');
	char state;
	unsigned long long utime, stime, pages, resident, vsize;
	long threads, nice, ppid;

	if (!p || page <= 0 || hz <= 0 ||
	    sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %ld %ld",
		   &state, &ppid, &utime, &stime, &nice, &threads) != 6 ||
	    sscanf(statm, "%llu %llu", &pages, &resident) != 2 || state < 'A' || state > 'z')
		return -1;
	/* vsize, four fields on (starttime, vsize): fields 22 and 23 */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %*u %llu",
		   &vsize) == 1 && nice >= -20 && nice <= 19 && ppid >= 0) {
		out->flags = XPU_PSTAT_NICE_VIRT;
		out->nice = (int16_t)nice;
		out->ppid = (uint32_t)ppid;
		out->vsize_bytes = vsize;
	}
	out->state = (uint32_t)state;
	out->cpu_ns = (utime + stime) * (1000000000ULL / (unsigned long long)hz);
	out->rss_bytes = resident * (unsigned long long)page;
	out->threads = threads > 0 ? (uint32_t)threads : 0;
	return 0;
}

int xpu_procstat_parse_loadavg(const char *text, uint32_t load100[3])
{
	double l[3];
	if (sscanf(text, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (!(l[i] >= 0 && l[i] < 4e7))
			return -1;
		load100[i] = (uint32_t)(l[i] * 100 + 0.5);
	}
	return 0;
}

int xpu_procstat_parse_cpu(const char *text, uint64_t *busy, uint64_t *total)
{
	unsigned long long v[8] = { 0 };
	/* user nice system idle iowait irq softirq steal; guest time is in user already. */
	int n = sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		       &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return -1;
	uint64_t all = 0;
	for (int i = 0; i < 8; i++)
		all += v[i];
	*total = all;
	*busy = all - v[3] - v[4];
	return 0;
}

int xpu_procstat_parse_cpus(const char *text, uint64_t *busy, uint64_t *total, int max)
{
	int n = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned cpu;
		int at;
		if (strncmp(p, "cpu", 3) || p[3] < '0' || p[3] > '9' || sscanf(p + 3, "%u%n", &cpu, &at) != 1 ||
		    cpu >= (unsigned)max)
			continue;
		char line[160];
		snprintf(line, sizeof(line), "cpu%.*s", (int)strcspn(p + 3 + at, "\n"), p + 3 + at);
		if (xpu_procstat_parse_cpu(line, &busy[cpu], &total[cpu]) == 0 && (int)cpu >= n)
			n = (int)cpu + 1;
	}
	return n;
}

static int meminfo_field(const char *text, const char *key, uint64_t *kib)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long v;
		if (!strncmp(p, key, n) && p[n] == ':' && sscanf(p + n + 1, "%llu", &v) == 1) {
			*kib = v;
			return 0;
		}
	}
	return -1;
}

int xpu_procstat_parse_meminfo(const char *text, uint64_t *total_kib, uint64_t *used_kib)
{
	uint64_t total, free, buffers = 0, cached = 0, srecl = 0;
	if (meminfo_field(text, "MemTotal", &total) || meminfo_field(text, "MemFree", &free))
		return -1;
	meminfo_field(text, "Buffers", &buffers);
	meminfo_field(text, "Cached", &cached);
	meminfo_field(text, "SReclaimable", &srecl);
	uint64_t away = free + buffers + cached + srecl;
	*total_kib = total;
	*used_kib = away < total ? total - away : 0;
	return 0;
}

/* /proc/stat, as much as fits: a line per CPU (about 60 bytes). */
#define STAT_BYTES (32 * 1024)

void xpu_procstat_init(struct xpu_procstat *p)
{
	char *buf = malloc(STAT_BYTES);
	memset(p, 0, sizeof(*p));
	p->page = sysconf(_SC_PAGESIZE);
	p->hz = sysconf(_SC_CLK_TCK);
	p->cpu_busy = calloc(XPU_PROCSTAT_CPUS, sizeof(*p->cpu_busy));
	p->cpu_total = calloc(XPU_PROCSTAT_CPUS, sizeof(*p->cpu_total));
	if (!p->cpu_busy || !p->cpu_total)
		xpu_procstat_free(p);
	/* The first refresh's busy shares are measured from here. */
	if (!buf || xpu_read_small("/proc/stat", buf, STAT_BYTES) < 0 ||
	    xpu_procstat_parse_cpu(buf, &p->busy, &p->total))
		p->busy = p->total = 0;
	else if (p->cpu_busy)
		xpu_procstat_parse_cpus(buf, p->cpu_busy, p->cpu_total, XPU_PROCSTAT_CPUS);
	free(buf);
}

void xpu_procstat_free(struct xpu_procstat *p)
{
	free(p->cpu_busy);
	free(p->cpu_total);
	p->cpu_busy = p->cpu_total = NULL;
}

static uint32_t busy_share(uint64_t busy, uint64_t total, uint64_t busy0, uint64_t total0)
{
	uint64_t db = busy - busy0, dt = total - total0;
	return (uint32_t)(db >= dt ? 10000 : db * 10000 / dt);
}

/* A CPU_STAT for each CPU of text whose ticks went on since the last read. */
static void cpu_stats(struct xpu_procstat *p, struct xpu_session *s, const char *text, uint64_t now)
{
	uint64_t busy[XPU_PROCSTAT_CPUS], total[XPU_PROCSTAT_CPUS];
	if (!p->cpu_busy)
		return;
	memcpy(busy, p->cpu_busy, sizeof(busy));
	memcpy(total, p->cpu_total, sizeof(total));
	int n = xpu_procstat_parse_cpus(text, busy, total, XPU_PROCSTAT_CPUS);
	for (int i = 0; i < n; i++) {
		if (p->cpu_total[i] && total[i] > p->cpu_total[i] && busy[i] >= p->cpu_busy[i]) {
			struct xpu_event ev = { .type = XPU_EV_CPU_STAT, .source = XPU_SRC_CPU, .tid = (uint32_t)i,
						.time = now };
			ev.sys.flags = XPU_SYS_BUSY;
			ev.sys.busy_pct100 = busy_share(busy[i], total[i], p->cpu_busy[i], p->cpu_total[i]);
			xpu_session_emit(s, &ev);
		}
		p->cpu_busy[i] = busy[i];
		p->cpu_total[i] = total[i];
	}
}

static void sys_stat(struct xpu_procstat *p, struct xpu_session *s, uint64_t now)
{
	char buf[4096], *stat = malloc(STAT_BYTES);
	struct xpu_event ev = { .type = XPU_EV_SYS_STAT, .source = XPU_SRC_CPU, .time = now };
	uint64_t busy, total;

	if (xpu_read_small("/proc/loadavg", buf, sizeof(buf)) >= 0 &&
	    xpu_procstat_parse_loadavg(buf, ev.sys.load100) == 0)
		ev.sys.flags |= XPU_SYS_LOAD;
	/* "cpu ..." comes first, then a line per CPU. */
	if (stat && xpu_read_small("/proc/stat", stat, STAT_BYTES) >= 0 &&
	    xpu_procstat_parse_cpu(stat, &busy, &total) == 0) {
		if (p->total && total > p->total && busy >= p->busy) {
			ev.sys.busy_pct100 = busy_share(busy, total, p->busy, p->total);
			ev.sys.flags |= XPU_SYS_BUSY;
		}
		p->busy = busy;
		p->total = total;
		cpu_stats(p, s, stat, now);
	}
	free(stat);
	if (xpu_read_small("/proc/meminfo", buf, sizeof(buf)) >= 0 &&
	    xpu_procstat_parse_meminfo(buf, &ev.sys.mem_total_kib, &ev.sys.mem_used_kib) == 0)
		ev.sys.flags |= XPU_SYS_MEM;
	if (ev.sys.flags)
		xpu_session_emit(s, &ev);
}

/* A process (tid 0), or one of its threads: a thread's own state and CPU
 * time (its memory is the process's: not read again). */
static void proc_stat(struct xpu_procstat *p, struct xpu_session *s, uint32_t pid, uint32_t tid, uint64_t now)
{
	char path[96], stat[1024], statm[256] = "0 0";
	struct xpu_event ev = { .type = tid ? XPU_EV_THREAD_STAT : XPU_EV_PROC_STAT, .source = XPU_SRC_CPU,
				.pid = pid, .tid = tid, .time = now };

	if (tid)
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task/%" PRIu32 "/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	if (xpu_read_small(path, stat, sizeof(stat)) < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/statm", pid);
	if ((!tid && xpu_read_small(path, statm, sizeof(statm)) < 0) ||
	    xpu_procstat_parse_pid(stat, statm, p->page, p->hz, &ev.pstat))
		return;
	if (tid)
		ev.pstat.rss_bytes = 0;
	xpu_session_emit(s, &ev);
}

int xpu_procstat_parse_cmdline(char *buf, size_t n)
{
	while (n && !buf[n - 1])
		n--;	/* the last argument's NUL, and padding */
	for (size_t i = 0; i < n; i++)
		if (!buf[i] || buf[i] == '\n' || buf[i] == '\t')
			buf[i] = ' ';
	buf[n] = '\0';
	return (int)n;
}

/* A process's command line, once for each name it has (the model forgets
 * it at an exec); none for kernel threads, whose cmdline is empty. */
static void proc_cmdline(struct xpu_session *s, uint32_t pid, uint64_t now)
{
	char path[64], buf[XPU_CMDLINE_MAX + 1];
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/cmdline", pid);
	long n = xpu_read_small(path, buf, sizeof(buf));
	if (n < 0 || !(n = xpu_procstat_parse_cmdline(buf, (size_t)n)))
		return;
	struct xpu_event ev = { .type = XPU_EV_PROC_CMDLINE, .source = XPU_SRC_CPU, .pid = pid, .time = now };
	ev.pcmd.cmdline = xpu_dict_str(&s->dict, buf, (size_t)n);
	xpu_session_emit(s, &ev);
}

void xpu_procstat_tick(struct xpu_procstat *p, struct xpu_session *s)
{
	uint32_t pids[XPU_PROCSTAT_MAX], tids[XPU_PROCSTAT_MAX];
	uint64_t now = xpu_now_mono();
	sys_stat(p, s, now);
	int n = xpu_cpu_model_shown_pids(&s->cpu, pids, XPU_PROCSTAT_MAX);
	for (int i = 0; i < n; i++) {
		const struct xpu_cpu_task *t = xpu_cpu_model_task(&s->cpu, pids[i], 0);
		proc_stat(p, s, pids[i], 0, now);
		if (t && !t->cmdline)
			proc_cmdline(s, pids[i], now);
	}
	n = xpu_cpu_model_shown_threads(&s->cpu, pids, tids, XPU_PROCSTAT_MAX);
	for (int i = 0; i < n; i++)
		proc_stat(p, s, pids[i], tids[i], now);
}
