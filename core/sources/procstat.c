/* SPDX-License-Identifier: GPL-2.0-only */
#include "procstat.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"
#include "sys.h"

int xpu_procstat_parse_pid(const char *stat, const char *statm, long page, long hz,
			   struct xpu_ev_proc_stat *out)
{
	/* The name may hold spaces and parentheses: the fields follow the last ')'. */
	const char *p = strrchr(stat, ')');
	char state;
	unsigned long long utime, stime, pages, resident;
	long threads;

	if (!p || page <= 0 || hz <= 0 ||
	    sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld",
		   &state, &utime, &stime, &threads) != 4 ||
	    sscanf(statm, "%llu %llu", &pages, &resident) != 2 || state < 'A' || state > 'z')
		return -1;
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

/* A small /proc file into buf, NUL-terminated; -1 when it cannot be read. */
static int slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

void xpu_procstat_init(struct xpu_procstat *p)
{
	char buf[512];
	memset(p, 0, sizeof(*p));
	p->page = sysconf(_SC_PAGESIZE);
	p->hz = sysconf(_SC_CLK_TCK);
	/* The first refresh's busy share is measured from here. */
	if (slurp("/proc/stat", buf, sizeof(buf)) || xpu_procstat_parse_cpu(buf, &p->busy, &p->total))
		p->busy = p->total = 0;
}

static void sys_stat(struct xpu_procstat *p, struct xpu_session *s, uint64_t now)
{
	char buf[4096];
	struct xpu_event ev = { .type = XPU_EV_SYS_STAT, .source = XPU_SRC_CPU, .time = now };
	uint64_t busy, total;

	if (slurp("/proc/loadavg", buf, sizeof(buf)) == 0 &&
	    xpu_procstat_parse_loadavg(buf, ev.sys.load100) == 0)
		ev.sys.flags |= XPU_SYS_LOAD;
	/* The first line is all that is read: "cpu ..." comes first. */
	if (slurp("/proc/stat", buf, 512) == 0 && xpu_procstat_parse_cpu(buf, &busy, &total) == 0) {
		if (p->total && total > p->total && busy >= p->busy) {
			uint64_t db = busy - p->busy, dt = total - p->total;
			ev.sys.busy_pct100 = (uint32_t)(db >= dt ? 10000 : db * 10000 / dt);
			ev.sys.flags |= XPU_SYS_BUSY;
		}
		p->busy = busy;
		p->total = total;
	}
	if (slurp("/proc/meminfo", buf, sizeof(buf)) == 0 &&
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
	if (slurp(path, stat, sizeof(stat)))
		return;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/statm", pid);
	if ((!tid && slurp(path, statm, sizeof(statm))) ||
	    xpu_procstat_parse_pid(stat, statm, p->page, p->hz, &ev.pstat))
		return;
	if (tid)
		ev.pstat.rss_bytes = 0;
	xpu_session_emit(s, &ev);
}

void xpu_procstat_tick(struct xpu_procstat *p, struct xpu_session *s)
{
	uint32_t pids[XPU_PROCSTAT_MAX], tids[XPU_PROCSTAT_MAX];
	uint64_t now = xpu_now_mono();
	sys_stat(p, s, now);
	int n = xpu_cpu_model_shown_pids(&s->cpu, pids, XPU_PROCSTAT_MAX);
	for (int i = 0; i < n; i++)
		proc_stat(p, s, pids[i], 0, now);
	n = xpu_cpu_model_shown_threads(&s->cpu, pids, tids, XPU_PROCSTAT_MAX);
	for (int i = 0; i < n; i++)
		proc_stat(p, s, pids[i], tids[i], now);
}
