/* SPDX-License-Identifier: GPL-2.0-only */
#include "metrics.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dict.h"
#include "grow.h"
#include "htab.h"
#include "model_npu.h"
#include "npu.h"
#include "session.h"
#include "table.h"
#include "utf8.h"

enum ftype { GAUGE, COUNTER, HISTOGRAM };

/* Every family xputop exports.  Counters are named without "_total" here:
 * OpenMetrics names the family so and its samples with the suffix. */
enum fam {
	F_BUILD_INFO, F_REFRESHES, F_LAST_REFRESH, F_REPLAY, F_EVENTS, F_DROPPED, F_SELF_CPU, F_SELF_RSS,
	F_SCRAPES, F_REFUSED, F_CUT, F_EXPORTER_CPU, F_FOLDED, F_LABEL_SETS,
	F_CPU_HZ, F_CPU_SAMPLES, F_PROC_SAMPLES, F_PROC_CPU,
	F_GPU_INFO, F_GPU_UTIL, F_GPU_MEM_UTIL, F_GPU_MEM_USED, F_GPU_MEM_TOTAL, F_GPU_POWER,
	F_GPU_POWER_LIMIT, F_GPU_TEMP, F_GPU_SM_CLOCK, F_GPU_MEM_CLOCK, F_GPU_PCIE_RX, F_GPU_PCIE_TX,
	F_GPU_NVLINK_RX, F_GPU_NVLINK_TX, F_GPU_AGE, F_GPU_PROC_MEM, F_GPU_PROC_SM,
	F_KERNEL_SECONDS, F_KERNEL_CALLS, F_LAUNCHES, F_GPU_TRACED, F_GPU_LIB_DROPPED, F_GPU_BUSY,
	F_GPU_MEMCPY_BYTES, F_GPU_MEMCPY_SECONDS,
	F_NPU_IOCTLS, F_NPU_IOCTL_ERRORS, F_NPU_L0, F_NPU_IPC, F_NPU_IPC_TIMEOUTS, F_NPU_SUBMITTED,
	F_NPU_COMPLETED, F_NPU_ABORTED, F_NPU_OUTSTANDING, F_NPU_OLDEST, F_NPU_LATENCY, F_NPU_MEM,
	F_NPU_PM, F_NPU_BUSY,
	F_ALERT, F_ALERTS, F_ALERTS_RAISED,
	F_PEER_REFUSED, F_PEER_REFUSED_UID,	/* the GPU socket's peers (issue 24) */
	F_MAX
};

static const struct family {
	const char *name;
	enum ftype type;
	const char *help;
} fams[F_MAX] = {
	[F_BUILD_INFO] = { "xputop_build_info", GAUGE, "xputop's version, as a label; always 1" },
	[F_REFRESHES] = { "xputop_refreshes", COUNTER, "refreshes (closed ticks) so far" },
	[F_LAST_REFRESH] = { "xputop_last_refresh_timestamp_seconds", GAUGE,
			     "wall-clock time of the last refresh (the recorded time in a replay)" },
	[F_REPLAY] = { "xputop_replay", GAUGE, "1 when the data comes from a recording (-r), else 0" },
	[F_EVENTS] = { "xputop_events", COUNTER, "events of every source that reached the models" },
	[F_DROPPED] = { "xputop_dropped_events", COUNTER, "events lost before the models, by source" },
	[F_SELF_CPU] = { "xputop_self_cpu_seconds", COUNTER, "CPU time xputop itself used, all its threads" },
	[F_SELF_RSS] = { "xputop_self_resident_memory_bytes", GAUGE, "xputop's own resident memory" },
	[F_SCRAPES] = { "xputop_metrics_scrapes", COUNTER, "requests for /metrics served so far" },
	[F_REFUSED] = { "xputop_metrics_refused_requests", COUNTER,
			"requests for another path than /metrics, or with another method than GET or HEAD" },
	[F_CUT] = { "xputop_metrics_cut_connections", COUNTER,
		    "connections to the metrics server cut: at the request deadline, or to make room for a newer one" },
	[F_FOLDED] = { "xputop_metrics_series_folded", COUNTER,
		       "process label values (pids, names, cgroups or containers) summed into the \"other\" series "
		       "for want of room (--prometheus-processes), each counted once" },
	[F_LABEL_SETS] = { "xputop_metrics_process_label_values", GAUGE,
			   "process label values with series of their own (state=\"own\") or summed into \"other\" "
			   "(state=\"folded\")" },
	[F_EXPORTER_CPU] = { "xputop_exporter_cpu_seconds", COUNTER,
			     "CPU time the refresh loop spent writing the metrics or the pprof profiles" },
	[F_CPU_HZ] = { "xputop_cpu_sample_frequency_hertz", GAUGE, "CPU sampling frequency, per CPU" },
	[F_CPU_SAMPLES] = { "xputop_cpu_samples", COUNTER, "on-CPU samples taken, all processes" },
	[F_PROC_SAMPLES] = { "xputop_process_cpu_samples", COUNTER,
			     "on-CPU samples of a process (those with samples in the recent window)" },
	[F_PROC_CPU] = { "xputop_process_cpu_ratio", GAUGE,
			 "a process's CPU use over the last refresh, in CPUs (1 = one CPU busy)" },
	[F_GPU_INFO] = { "xputop_gpu_info", GAUGE, "a GPU as NVML names it; always 1" },
	[F_GPU_UTIL] = { "xputop_gpu_utilization_ratio", GAUGE,
			 "share of the last sample period a kernel ran on the GPU (NVML), 0..1" },
	[F_GPU_MEM_UTIL] = { "xputop_gpu_memory_utilization_ratio", GAUGE,
			     "share of the last sample period device memory was read or written (NVML), 0..1" },
	[F_GPU_MEM_USED] = { "xputop_gpu_memory_used_bytes", GAUGE, "device memory in use (NVML)" },
	[F_GPU_MEM_TOTAL] = { "xputop_gpu_memory_total_bytes", GAUGE, "device memory in all (NVML)" },
	[F_GPU_POWER] = { "xputop_gpu_power_watts", GAUGE, "power draw (NVML)" },
	[F_GPU_POWER_LIMIT] = { "xputop_gpu_power_limit_watts", GAUGE, "power management limit (NVML)" },
	[F_GPU_TEMP] = { "xputop_gpu_temperature_celsius", GAUGE, "GPU core temperature (NVML)" },
	[F_GPU_SM_CLOCK] = { "xputop_gpu_sm_clock_hertz", GAUGE, "SM clock (NVML)" },
	[F_GPU_MEM_CLOCK] = { "xputop_gpu_memory_clock_hertz", GAUGE, "memory clock (NVML)" },
	[F_GPU_PCIE_RX] = { "xputop_gpu_pcie_receive_bytes_per_second", GAUGE,
			    "PCIe receive throughput over NVML's last 20 ms" },
	[F_GPU_PCIE_TX] = { "xputop_gpu_pcie_transmit_bytes_per_second", GAUGE,
			    "PCIe transmit throughput over NVML's last 20 ms" },
	[F_GPU_NVLINK_RX] = { "xputop_gpu_nvlink_receive_bytes_per_second", GAUGE,
			      "NVLink receive throughput between the last two samples" },
	[F_GPU_NVLINK_TX] = { "xputop_gpu_nvlink_transmit_bytes_per_second", GAUGE,
			      "NVLink transmit throughput between the last two samples" },
	[F_GPU_AGE] = { "xputop_gpu_sample_age_seconds", GAUGE, "age of the GPU's last NVML sample" },
	[F_GPU_PROC_MEM] = { "xputop_gpu_process_memory_used_bytes", GAUGE,
			     "device memory a process uses on a GPU (NVML)" },
	[F_GPU_PROC_SM] = { "xputop_gpu_process_sm_utilization_ratio", GAUGE,
			    "a process's share of a GPU's SM time (NVML), 0..1" },
	[F_KERNEL_SECONDS] = { "xputop_gpu_kernel_seconds", COUNTER,
			       "GPU time of a process's kernel (top N per process, the rest kernel=\"other\"); "
			       "estimated from slices in sampled tracing" },
	[F_KERNEL_CALLS] = { "xputop_gpu_kernel_calls", COUNTER,
			     "runs of a process's kernel (top N per process, the rest kernel=\"other\")" },
	[F_LAUNCHES] = { "xputop_gpu_launches", COUNTER, "kernel launches a process made" },
	[F_GPU_TRACED] = { "xputop_gpu_traced_ratio", GAUGE,
			   "share of the time a process's kernels were traced since it was seen, 0..1" },
	[F_GPU_LIB_DROPPED] = { "xputop_gpu_library_dropped_records", COUNTER,
				"records the injection library in a process could not deliver" },
	[F_GPU_BUSY] = { "xputop_gpu_traced_kernel_seconds", COUNTER,
			 "time a kernel traced by xputop ran on a CUDA device (union of kernel intervals; "
			 "not NVML's utilization)" },
	[F_GPU_MEMCPY_BYTES] = { "xputop_gpu_memcpy_bytes", COUNTER, "bytes copied by traced memcpys" },
	[F_GPU_MEMCPY_SECONDS] = { "xputop_gpu_memcpy_seconds", COUNTER, "time of traced memcpys" },
	[F_NPU_IOCTLS] = { "xputop_npu_ioctls", COUNTER, "NPU ioctls of a process, by command" },
	[F_NPU_IOCTL_ERRORS] = { "xputop_npu_ioctl_errors", COUNTER, "failed NPU ioctls of a process, by command" },
	[F_NPU_L0] = { "xputop_npu_level_zero_calls", COUNTER, "Level Zero calls of a process, by API" },
	[F_NPU_IPC] = { "xputop_npu_ipc_messages", COUNTER,
			"firmware IPC messages by direction and JSM type (type=\"all\": every message)" },
	[F_NPU_IPC_TIMEOUTS] = { "xputop_npu_ipc_timeouts", COUNTER, "firmware IPC receive timeouts" },
	[F_NPU_SUBMITTED] = { "xputop_npu_jobs_submitted", COUNTER, "NPU jobs submitted" },
	[F_NPU_COMPLETED] = { "xputop_npu_jobs_completed", COUNTER, "NPU jobs completed" },
	[F_NPU_ABORTED] = { "xputop_npu_jobs_aborted", COUNTER, "NPU jobs aborted" },
	[F_NPU_OUTSTANDING] = { "xputop_npu_jobs_outstanding", GAUGE, "NPU jobs submitted and not done" },
	[F_NPU_OLDEST] = { "xputop_npu_oldest_job_age_seconds", GAUGE,
			   "age of the oldest outstanding NPU job, 0 when none is" },
	[F_NPU_LATENCY] = { "xputop_npu_job_latency_seconds", HISTOGRAM,
			    "NPU job submit-to-done time (the sum is estimated from the buckets)" },
	[F_NPU_MEM] = { "xputop_npu_memory_operations", COUNTER, "NPU memory operations by kind" },
	[F_NPU_PM] = { "xputop_npu_power_events", COUNTER, "NPU suspends, resumes and recoveries" },
	[F_NPU_BUSY] = { "xputop_npu_busy_seconds", COUNTER, "NPU busy time as the driver counts it (sysfs)" },
	[F_ALERT] = { "xputop_alert_active", GAUGE,
		      "an active alert, by source, rule and severity; the value is how often it was raised" },
	[F_ALERTS] = { "xputop_alerts_active", GAUGE, "active alerts by severity" },
	[F_ALERTS_RAISED] = { "xputop_alerts_raised", COUNTER, "alerts raised since the start" },
	[F_PEER_REFUSED] = { "xputop_gpu_peer_refused", COUNTER,
			     "what the GPU injection socket refused its peers, by reason (docs/security.md)" },
	[F_PEER_REFUSED_UID] = { "xputop_gpu_peer_refused_by_uid", COUNTER,
				 "the same, for the uids refused most (at most 16)" },
};

/* The NPU job latency histogram's bounds, seconds. */
static const double lat_le[] = { 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 60.0 };
#define NLE (sizeof(lat_le) / sizeof(lat_le[0]))

enum { SUF_NONE, SUF_BUCKET, SUF_SUM, SUF_COUNT };

struct sample {
	uint16_t fam;
	uint8_t suffix;
	uint8_t mono;		/* a counter: made monotonic once every process's share is in */
	uint32_t seq;		/* order of addition, for a stable sort */
	size_t labels;		/* offset into the arena: "a=\"b\",c=\"d\"" */
	double v;
};

/* A counter's last raw value and what is added to it, so that it never
 * goes back (see metrics.h). */
struct floor {
	uint64_t key;
	double raw, base;
	uint64_t gen;		/* the update that last saw it */
};

/* A kernel that has a series of its own. */
struct slot {
	uint64_t key;		/* hash of (pid, kernel name, device) */
	uint32_t pid, device;
	double promo_ns, promo_calls;	/* its totals when it got the series */
	uint64_t since;		/* update it got it */
	uint64_t gen;		/* update that last saw it */
};

/* Per (pid, device): what "other" must leave out to stay monotonic. */
struct other {
	uint32_t pid, device;
	double retired_ns, retired_calls;
	uint64_t gen;
};

/* A process seen in the models, and the label value its series go under. */
struct proc {
	uint32_t pid;
	uint32_t group;
	uint64_t seen;		/* update that last saw it */
	uint64_t exited_at;	/* wall ns, 0 while alive */
	int expired;		/* exited longer than the expiry: no series */
};

/* A label value (a pid, a name, a cgroup, a container): its own series or
 * folded into "other". */
struct group {
	char *value;
	uint64_t hash;
	int own;
	uint64_t used_at;	/* wall ns of the last update a live process used it */
};

struct xpu_metrics {
	int label;		/* enum xpu_metrics_label */
	uint64_t expiry_ns;
	uint32_t max_values;
	uint64_t now;		/* the session's wall clock at this update */
	struct proc *procs;
	uint32_t nprocs, pcap;
	struct xpu_htab pidx;
	struct group *groups;
	uint32_t ngroups, gcap, nown;
	struct xpu_htab gidx;
	uint64_t folded_total;
	struct xpu_htab sidx;	/* this update's samples by family and labels */
	uint32_t top_n;
	uint64_t gen;
	struct sample *s;
	uint32_t ns, scap;
	struct xpu_mbuf arena;
	struct floor *floors;
	uint32_t nfloors, fcap;
	struct xpu_htab fidx;
	struct slot *slots;
	uint32_t nslots, slcap;
	struct other *others;
	uint32_t nothers, ocap;
	struct xpu_table gtab, gwin, ctab;	/* scratch */
	int failed;
};

/* ---- text ---- */

void xpu_mbuf_free(struct xpu_mbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static int mreserve(struct xpu_mbuf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->n + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void mput(struct xpu_mbuf *b, const char *s, size_t n)
{
	if (mreserve(b, n) < 0)
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void mputs(struct xpu_mbuf *b, const char *s)
{
	mput(b, s, strlen(s));
}

static void mprintf(struct xpu_mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mprintf(struct xpu_mbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		mput(b, tmp, (size_t)n);
		return;
	}
	if (mreserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

void xpu_metrics_label_value(struct xpu_mbuf *out, const char *s, size_t max)
{
	size_t used = 0, left = s ? strlen(s) : 0;
	const unsigned char *p = (const unsigned char *)s;
	while (left) {
		size_t n = xpu_utf8_len(p, left);
		const char *rep = NULL;
		if (n == 1 && *p == '\\')
			rep = "\\\\";
		else if (n == 1 && *p == '"')
			rep = "\\\"";
		else if (n == 1 && *p == '\n')
			rep = "\\n";
		else if (n == 0)
			rep = XPU_UTF8_REPLACEMENT;
		size_t w = rep ? strlen(rep) : n;
		if (used + w > max)
			break;
		if (rep)
			mputs(out, rep);
		else
			mput(out, (const char *)p, n);
		used += w;
		p += n ? n : 1;
		left -= n ? n : 1;
	}
}

/* Numbers as Prometheus reads them; integers without an exponent. */
static void put_value(struct xpu_mbuf *b, double v)
{
	if (isinf(v))
		mputs(b, v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		mputs(b, "NaN");
	else if (v == floor(v) && fabs(v) < 1e15)
		mprintf(b, "%.0f", v);
	else
		mprintf(b, "%.10g", v);
}

/* ---- labels: a small builder, copied into the arena per sample ---- */

struct labels {
	struct xpu_mbuf b;
};

static void lab_str(struct labels *l, const char *key, const char *val)
{
	if (l->b.n)
		mputs(&l->b, ",");
	mputs(&l->b, key);
	mputs(&l->b, "=\"");
	xpu_metrics_label_value(&l->b, val ? val : "", 512);
	mputs(&l->b, "\"");
}

static void lab_uint(struct labels *l, const char *key, uint64_t v)
{
	char tmp[24];
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	lab_str(l, key, tmp);
}

static void lab_reset(struct labels *l)
{
	l->b.n = 0;
	if (l->b.p)
		l->b.p[0] = '\0';
}

/* ---- samples ---- */

struct skey {
	const struct xpu_metrics *m;
	uint16_t fam;
	uint8_t suffix;
	const char *labels;
};

static int sample_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct skey *k = key;
	const struct sample *s = &k->m->s[id];
	return s->fam == k->fam && s->suffix == k->suffix && strcmp(k->m->arena.p + s->labels, k->labels) == 0;
}

/* A series already added in this update (processes that share a label
 * value) takes v into its sum, or its minimum for a ratio of coverage. */
static void add(struct xpu_metrics *m, enum fam f, int suffix, const struct labels *l, double v)
{
	if (m->failed)
		return;
	const char *lp = l && l->b.n ? l->b.p : "";
	struct skey k = { .m = m, .fam = (uint16_t)f, .suffix = (uint8_t)suffix, .labels = lp };
	uint64_t h = xpu_hash_bytes(lp, strlen(lp), ((uint64_t)f << 8 | (uint64_t)suffix) + 1);
	uint32_t id = m->arena.p ? xpu_htab_find(&m->sidx, h, sample_eq, &k, &k) : UINT32_MAX;
	if (id != UINT32_MAX) {
		struct sample *s = &m->s[id];
		s->v = f == F_GPU_TRACED ? fmin(s->v, v) : s->v + v;
		return;
	}
	if (xpu_grow((void **)&m->s, &m->scap, (size_t)m->ns + 1, sizeof(*m->s)) < 0 ||
	    xpu_htab_put(&m->sidx, h, m->ns) < 0) {
		m->failed = 1;
		return;
	}
	struct sample *s = &m->s[m->ns];
	s->fam = (uint16_t)f;
	s->suffix = (uint8_t)suffix;
	s->mono = 0;
	s->seq = m->ns++;
	s->labels = m->arena.n;
	s->v = v;
	mput(&m->arena, lp, strlen(lp));
	mput(&m->arena, "", 1);	/* keeps each label string's NUL */
	if (m->arena.oom)
		m->failed = 1;
}

static int floor_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_metrics *m = ctx;
	return m->floors[id].key == *(const uint64_t *)key;
}

/* A counter's value as exported: the raw total plus what keeps it from
 * going back. */
static double monotonic_str(struct xpu_metrics *m, enum fam f, const char *labels, double raw)
{
	uint64_t key = xpu_hash_bytes(labels, strlen(labels), (uint64_t)f + 1);
	uint32_t id = xpu_htab_find(&m->fidx, key, floor_eq, m, &key);
	if (id == UINT32_MAX) {
		if (xpu_grow((void **)&m->floors, &m->fcap, (size_t)m->nfloors + 1, sizeof(*m->floors)) < 0 ||
		    xpu_htab_put(&m->fidx, key, m->nfloors) < 0) {
			m->failed = 1;
			return raw;
		}
		id = m->nfloors++;
		m->floors[id] = (struct floor){ .key = key, .raw = raw };
	}
	struct floor *fl = &m->floors[id];
	if (raw < fl->raw)
		fl->base += fl->raw - raw;
	fl->raw = raw;
	fl->gen = m->gen;
	return raw + fl->base;
}

static double monotonic(struct xpu_metrics *m, enum fam f, const struct labels *l, double raw)
{
	return monotonic_str(m, f, l && l->b.n ? l->b.p : "", raw);
}

/* A counter: summed over the processes that share its labels, then made
 * monotonic (finish_counters()), so that a process leaving a sum never
 * takes it back. */
static void counter(struct xpu_metrics *m, enum fam f, const struct labels *l, double raw)
{
	uint32_t before = m->ns;
	add(m, f, SUF_NONE, l, raw);
	if (m->ns > before)
		m->s[before].mono = 1;
}

static void finish_counters(struct xpu_metrics *m)
{
	for (uint32_t i = 0; i < m->ns && !m->failed; i++)
		if (m->s[i].mono)
			m->s[i].v = monotonic_str(m, (enum fam)m->s[i].fam, m->arena.p + m->s[i].labels, m->s[i].v);
}

/* Floors of series not seen for a while go: their series are gone. */
#define FLOOR_KEEP 600

static int prune_floors(struct xpu_metrics *m)
{
	if (m->nfloors < 4096 || m->gen % 64)
		return 0;
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->nfloors; i++)
		if (m->gen - m->floors[i].gen <= FLOOR_KEEP)
			m->floors[k++] = m->floors[i];
	m->nfloors = k;
	xpu_htab_free(&m->fidx);
	xpu_htab_init(&m->fidx);
	for (uint32_t i = 0; i < k; i++)
		if (xpu_htab_put(&m->fidx, m->floors[i].key, i) < 0)
			return -1;
	return 0;
}

/* ---- the families ---- */

static const char *str(const struct xpu_session *s, uint32_t id)
{
	const char *v = id ? xpu_dict_str_get(&s->dict, id) : NULL;
	return v ? v : "";
}

/* ---- process label values ---- */

static int proc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_metrics *m = ctx;
	return m->procs[id].pid == *(const uint32_t *)key;
}

static int group_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_metrics *m = ctx;
	return strcmp(m->groups[id].value, key) == 0;
}

/* The process's cgroup v2 path (the "0::" line), or the first hierarchy's. */
static void cgroup_of(uint32_t pid, char *out, size_t size)
{
	char path[64], line[1024];
	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');
		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		if (!out[0] || strncmp(line, "0::", 3) == 0)
			snprintf(out, size, "%s", p + 1);
	}
	fclose(f);
}

/* The innermost container id in a cgroup path: 64 hex digits (Docker's
 * docker-ID.scope or /docker/ID, containerd's cri-containerd-ID.scope,
 * CRI-O's crio-ID.scope, Podman's libpod-ID.scope), cut to 12 as docker ps
 * shows them; "" outside a container. */
static void container_of(const char *cg, char *out, size_t size)
{
	out[0] = '\0';
	for (const char *p = cg; *p;) {
		size_t n = strspn(p, "0123456789abcdef");
		if (n == 64 && (p == cg || !isxdigit((unsigned char)p[-1])))
			snprintf(out, size, "%.12s", p);
		p += n ? n : 1;
	}
}

/* Whether the process is still there: in a replay, unless the recording
 * said it exited. */
static int alive(const struct xpu_session *s, uint32_t pid)
{
	if (!s->replay)
		return kill((pid_t)pid, 0) == 0 || errno == EPERM;
	const struct xpu_cpu_task *t = xpu_cpu_model_task(&s->cpu, pid, 0);
	if (t && t->exited)
		return 0;
	for (uint32_t i = 0; i < s->gpu.nprocs; i++)
		if (s->gpu.procs[i].pid == pid && s->gpu.procs[i].left_at)
			return 0;
	return 1;
}

static uint32_t group_get(struct xpu_metrics *m, const char *value)
{
	uint64_t h = xpu_hash_bytes(value, strlen(value), 7);
	uint32_t id = xpu_htab_find(&m->gidx, h, group_eq, m, value);
	if (id != UINT32_MAX)
		return id;
	char *v = strdup(value);
	if (!v || xpu_grow((void **)&m->groups, &m->gcap, (size_t)m->ngroups + 1, sizeof(*m->groups)) < 0 ||
	    xpu_htab_put(&m->gidx, h, m->ngroups) < 0) {
		free(v);
		return UINT32_MAX;
	}
	int own = m->nown < m->max_values;
	m->nown += own;
	m->folded_total += !own;
	m->groups[m->ngroups] = (struct group){ .value = v, .hash = h, .own = own, .used_at = m->now };
	return m->ngroups++;
}

static struct proc *proc_get(struct xpu_metrics *m, const struct xpu_session *s, uint32_t pid, const char *comm)
{
	uint32_t id = xpu_htab_find(&m->pidx, xpu_hash_u64(pid), proc_eq, m, &pid);
	if (id != UINT32_MAX)
		return &m->procs[id];
	char value[512], cg[512];
	switch (m->label) {
	case XPU_METRICS_BY_COMM:
		snprintf(value, sizeof(value), "%s", comm ? comm : "");
		break;
	case XPU_METRICS_BY_CGROUP:	/* a replay's pids are not this machine's */
	case XPU_METRICS_BY_CONTAINER:
		cg[0] = '\0';
		if (!s->replay)
			cgroup_of(pid, cg, sizeof(cg));
		if (m->label == XPU_METRICS_BY_CGROUP)
			snprintf(value, sizeof(value), "%s", cg);
		else
			container_of(cg, value, sizeof(value));
		break;
	default:
		snprintf(value, sizeof(value), "%u", pid);
	}
	uint32_t g = group_get(m, value);
	if (g == UINT32_MAX || xpu_grow((void **)&m->procs, &m->pcap, (size_t)m->nprocs + 1, sizeof(*m->procs)) < 0 ||
	    xpu_htab_put(&m->pidx, xpu_hash_u64(pid), m->nprocs) < 0)
		return NULL;
	m->procs[m->nprocs] = (struct proc){ .pid = pid, .group = g };
	return &m->procs[m->nprocs++];
}

/* Appends the labels of a process's series to l: its label value, or
 * "other" when its value has no series of its own.  Returns -1 when the
 * process has none at all (it exited longer than the expiry ago), else 0. */
static int proc_label(struct xpu_metrics *m, const struct xpu_session *s, struct labels *l, uint32_t pid,
		      const char *comm)
{
	struct proc *p = proc_get(m, s, pid, comm);
	if (!p) {
		m->failed = 1;
		return -1;
	}
	if (p->seen != m->gen) {
		p->seen = m->gen;
		if (!p->exited_at && !p->expired && !alive(s, pid))
			p->exited_at = m->now;
		p->expired = p->expired || (p->exited_at && m->now >= p->exited_at + m->expiry_ns);
		if (!p->expired)
			m->groups[p->group].used_at = m->now;
	}
	if (p->expired)
		return -1;
	const struct group *g = &m->groups[p->group];
	const char *v = g->own ? g->value : "other";
	switch (m->label) {
	case XPU_METRICS_BY_COMM:
		lab_str(l, "comm", v);
		break;
	case XPU_METRICS_BY_CGROUP:
		lab_str(l, "cgroup", v);
		break;
	case XPU_METRICS_BY_CONTAINER:
		lab_str(l, "container", v);
		break;
	default:
		lab_str(l, "pid", v);
		lab_str(l, "comm", g->own ? comm : "other");
	}
	return 0;
}

/* Whether the process's series are in "other". */
static int proc_folded(const struct xpu_metrics *m, uint32_t pid)
{
	uint32_t id = xpu_htab_find(&m->pidx, xpu_hash_u64(pid), proc_eq, m, &pid);
	return id != UINT32_MAX && m->procs[id].group != UINT32_MAX && !m->groups[m->procs[id].group].own;
}

/* After an update: processes the models no longer show go; label values no
 * live process used go too, and folded ones take the room they leave. */
static int prune_procs(struct xpu_metrics *m)
{
	uint32_t *map = malloc((m->ngroups ? m->ngroups : 1) * sizeof(*map));
	if (!map)
		return -1;
	uint32_t k = 0;
	m->nown = 0;
	for (uint32_t i = 0; i < m->ngroups; i++) {
		if (m->groups[i].used_at != m->now) {
			free(m->groups[i].value);
			map[i] = UINT32_MAX;
			continue;
		}
		map[i] = k;
		m->nown += m->groups[i].own;
		m->groups[k++] = m->groups[i];
	}
	m->ngroups = k;
	for (uint32_t i = 0; i < m->ngroups && m->nown < m->max_values; i++)
		if (!m->groups[i].own) {
			m->groups[i].own = 1;
			m->nown++;
		}
	k = 0;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].seen != m->gen)
			continue;
		if (m->procs[i].group != UINT32_MAX)	/* only an expired process has none */
			m->procs[i].group = map[m->procs[i].group];
		m->procs[k++] = m->procs[i];
	}
	m->nprocs = k;
	free(map);
	xpu_htab_free(&m->pidx);
	xpu_htab_init(&m->pidx);
	xpu_htab_free(&m->gidx);
	xpu_htab_init(&m->gidx);
	for (uint32_t i = 0; i < m->nprocs; i++)
		if (xpu_htab_put(&m->pidx, xpu_hash_u64(m->procs[i].pid), i) < 0)
			return -1;
	for (uint32_t i = 0; i < m->ngroups; i++)
		if (xpu_htab_put(&m->gidx, m->groups[i].hash, i) < 0)
			return -1;
	return 0;
}

static void process_stats(struct xpu_metrics *m)
{
	struct labels l = { 0 };
	counter(m, F_FOLDED, NULL, (double)m->folded_total);
	lab_str(&l, "state", "own");
	add(m, F_LABEL_SETS, SUF_NONE, &l, m->nown);
	lab_reset(&l);
	lab_str(&l, "state", "folded");
	add(m, F_LABEL_SETS, SUF_NONE, &l, m->ngroups - m->nown);
	xpu_mbuf_free(&l.b);
}

static long rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	long pages = 0, rss = 0;
	if (!f)
		return -1;
	int ok = fscanf(f, "%ld %ld", &pages, &rss) == 2;
	fclose(f);
	return ok ? rss * sysconf(_SC_PAGESIZE) : -1;
}

static void self(struct xpu_metrics *m, const struct xpu_session *s, const struct xpu_metrics_extra *x)
{
	struct labels l = { 0 };
	static const char *const src[XPU_SRC_MAX] = { "cpu", "gpu", "npu" };
	lab_str(&l, "version", XPU_VERSION);
	add(m, F_BUILD_INFO, SUF_NONE, &l, 1);
	counter(m, F_REFRESHES, NULL, (double)s->ticks);
	if (s->last_tick_wall)
		add(m, F_LAST_REFRESH, SUF_NONE, NULL, (double)s->last_tick_wall / 1e9);
	add(m, F_REPLAY, SUF_NONE, NULL, s->replay ? 1 : 0);
	counter(m, F_EVENTS, NULL, (double)s->events_total);
	for (int i = 0; i < XPU_SRC_MAX; i++) {
		lab_reset(&l);
		lab_str(&l, "source", src[i]);
		counter(m, F_DROPPED, &l, (double)s->dropped_by_src[i]);
	}
	counter(m, F_SELF_CPU, NULL, (double)s->self_cpu_ns / 1e9);
	long rss = rss_bytes();
	if (rss >= 0)
		add(m, F_SELF_RSS, SUF_NONE, NULL, (double)rss);
	if (x) {
		counter(m, F_SCRAPES, NULL, (double)x->scrapes);
		counter(m, F_REFUSED, NULL, (double)x->refused);
		lab_reset(&l);
		lab_str(&l, "reason", "deadline");
		counter(m, F_CUT, &l, (double)x->cut_deadline);
		lab_reset(&l);
		lab_str(&l, "reason", "evicted");
		counter(m, F_CUT, &l, (double)x->cut_evicted);
		lab_reset(&l);
		lab_str(&l, "exporter", "prometheus");
		counter(m, F_EXPORTER_CPU, &l, (double)x->metrics_ns / 1e9);
		lab_reset(&l);
		lab_str(&l, "exporter", "pprof");
		counter(m, F_EXPORTER_CPU, &l, (double)x->pprof_ns / 1e9);
	}
	xpu_mbuf_free(&l.b);
}

static int by_double_desc(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : 0;
}

static void cpu(struct xpu_metrics *m, const struct xpu_session *s)
{
	struct labels l = { 0 };
	add(m, F_CPU_HZ, SUF_NONE, NULL, s->cfg.sample_hz);
	counter(m, F_CPU_SAMPLES, NULL, (double)s->cpu.samples_total);
	if (xpu_cpu_model_table(&s->cpu, &s->dict, &m->ctab, 0, XPU_WIN_RECENT) < 0) {
		m->failed = 1;
		return;
	}
	/* the busiest first: they take the room for series of their own first */
	uint32_t n = m->ctab.nrows;
	double (*order)[2] = calloc(n ? n : 1, sizeof(*order));
	if (!order) {
		m->failed = 1;
		return;
	}
	for (uint32_t r = 0; r < n; r++) {
		order[r][0] = xpu_table_row(&m->ctab, r)[XPU_CPU_COL_AVG].d;
		order[r][1] = r;
	}
	qsort(order, n, sizeof(*order), by_double_desc);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = (uint32_t)order[i][1];
		const struct xpu_cell *c = xpu_table_row(&m->ctab, r);
		uint32_t pid = (uint32_t)m->ctab.keys[r];
		const struct xpu_cpu_task *t = xpu_cpu_model_task(&s->cpu, pid, 0);
		lab_reset(&l);
		if (!t || proc_label(m, s, &l, pid, c[XPU_CPU_COL_COMM].s) < 0)
			continue;
		counter(m, F_PROC_SAMPLES, &l, (double)t->samples.total);
		if (!c[XPU_CPU_COL_PCT].na)
			add(m, F_PROC_CPU, SUF_NONE, &l, c[XPU_CPU_COL_PCT].d / 100.0);
	}
	free(order);
	xpu_mbuf_free(&l.b);
}

static void gpu_label(struct labels *l, uint32_t index)
{
	lab_reset(l);
	lab_uint(l, "gpu", index);
}

/* One GPU as NVML reported it; fields it did not give are left out. */
static void gpudev_one(struct xpu_metrics *m, const struct xpu_session *s, const struct xpu_gpudev *d,
		       struct labels *l)
{
	uint32_t v = d->valid;
	gpu_label(l, d->index);
	lab_str(l, "name", str(s, d->name));
	lab_str(l, "bus_id", str(s, d->bus));
	add(m, F_GPU_INFO, SUF_NONE, l, 1);
	gpu_label(l, d->index);
	struct { uint32_t bit; enum fam f; double v; } f[] = {
		{ XPU_GPU_DEV_UTIL, F_GPU_UTIL, d->util_gpu / 100.0 },
		{ XPU_GPU_DEV_MEM_UTIL, F_GPU_MEM_UTIL, d->util_mem / 100.0 },
		{ XPU_GPU_DEV_MEM, F_GPU_MEM_USED, (double)d->mem_used },
		{ XPU_GPU_DEV_MEM, F_GPU_MEM_TOTAL, (double)d->mem_total },
		{ XPU_GPU_DEV_POWER, F_GPU_POWER, d->power_w },
		{ XPU_GPU_DEV_POWER_LIMIT, F_GPU_POWER_LIMIT, d->power_limit_w },
		{ XPU_GPU_DEV_TEMP, F_GPU_TEMP, d->temp_c },
		{ XPU_GPU_DEV_SM_CLOCK, F_GPU_SM_CLOCK, d->sm_mhz * 1e6 },
		{ XPU_GPU_DEV_MEM_CLOCK, F_GPU_MEM_CLOCK, d->mem_mhz * 1e6 },
		{ XPU_GPU_DEV_PCIE_RX, F_GPU_PCIE_RX, d->pcie_rx },
		{ XPU_GPU_DEV_PCIE_TX, F_GPU_PCIE_TX, d->pcie_tx },
		{ XPU_GPU_DEV_NVLINK_RX, F_GPU_NVLINK_RX, d->nvlink_rx },
		{ XPU_GPU_DEV_NVLINK_TX, F_GPU_NVLINK_TX, d->nvlink_tx },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (v & f[i].bit)
			add(m, f[i].f, SUF_NONE, l, f[i].v);
	if (d->sampled)
		add(m, F_GPU_AGE, SUF_NONE, l, d->age_s);
}

static void gpudev(struct xpu_metrics *m, const struct xpu_session *s)
{
	static struct xpu_gpudev_snap snap;	/* large: main thread only */
	struct labels l = { 0 };
	xpu_gpudev_model_snapshot(&s->gpudev, &snap);
	for (uint32_t i = 0; i < snap.ndev; i++)
		gpudev_one(m, s, &snap.dev[i], &l);
	for (uint32_t i = 0; i < snap.nproc; i++) {
		const struct xpu_gpudev_proc *p = &snap.proc[i];
		gpu_label(&l, p->index);
		if (proc_label(m, s, &l, p->pid, str(s, p->comm)) < 0)
			continue;
		if (p->valid & XPU_GPU_DEVPROC_MEM)
			add(m, F_GPU_PROC_MEM, SUF_NONE, &l, (double)p->mem);
		if (p->valid & XPU_GPU_DEVPROC_UTIL)
			add(m, F_GPU_PROC_SM, SUF_NONE, &l, p->sm_pct / 100.0);
	}
	xpu_mbuf_free(&l.b);
}

/* ---- kernels: top N per process, the rest "other" ---- */

static uint64_t kernel_key(uint32_t pid, const char *name, uint32_t dev)
{
	uint64_t h = xpu_hash_bytes(name, strlen(name), ((uint64_t)pid << 32) | dev);
	return h ? h : 1;
}

static struct slot *slot_find(struct xpu_metrics *m, uint64_t key)
{
	for (uint32_t i = 0; i < m->nslots; i++)
		if (m->slots[i].key == key)
			return &m->slots[i];
	return NULL;
}

static struct other *other_find(struct xpu_metrics *m, uint32_t pid, uint32_t dev)
{
	for (uint32_t i = 0; i < m->nothers; i++)
		if (m->others[i].pid == pid && m->others[i].device == dev)
			return &m->others[i];
	return NULL;
}

static struct other *other_get(struct xpu_metrics *m, uint32_t pid, uint32_t dev)
{
	struct other *o = other_find(m, pid, dev);
	if (o)
		return o;
	if (xpu_grow((void **)&m->others, &m->ocap, (size_t)m->nothers + 1, sizeof(*m->others)) < 0)
		return NULL;
	m->others[m->nothers] = (struct other){ .pid = pid, .device = dev };
	return &m->others[m->nothers++];
}

static uint32_t slots_of(const struct xpu_metrics *m, uint32_t pid)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->nslots; i++)
		n += m->slots[i].pid == pid;
	return n;
}

/* A kernel row of the since-start table by its key, or -1. */
static int all_row(const struct xpu_table *t, uint64_t key, int hint)
{
	if (hint >= 0 && (uint32_t)hint < t->nrows && t->keys[hint] == key)
		return hint;
	return xpu_table_find(t, key);
}

/* A slot's kernel goes back to "other", which takes its totals from now
 * on but leaves out what the kernel's own series showed, so that "other"
 * goes on from where it was and no GPU time is counted twice. */
static void retire(struct xpu_metrics *m, uint32_t i)
{
	struct slot *sl = &m->slots[i];
	struct other *o = other_get(m, sl->pid, sl->device);
	double ns = sl->promo_ns, calls = sl->promo_calls;
	for (uint32_t r = 0; r < m->gtab.nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(&m->gtab, r);
		if ((uint32_t)c[XPU_GPU_COL_PID].i == sl->pid && (uint32_t)c[XPU_GPU_COL_DEV].i == sl->device &&
		    kernel_key(sl->pid, c[XPU_GPU_COL_MANGLED].s, sl->device) == sl->key) {
			ns = (double)c[XPU_GPU_COL_TOTAL].i;
			calls = (double)c[XPU_GPU_COL_CALLS].i;
			break;
		}
	}
	if (o) {
		o->retired_ns += ns - sl->promo_ns;
		o->retired_calls += calls - sl->promo_calls;
	}
	m->slots[i] = m->slots[--m->nslots];
}

/* Promotes the window's heaviest kernels of each process into slots. */
static void choose_slots(struct xpu_metrics *m)
{
	struct xpu_table *w = &m->gwin, *a = &m->gtab;
	xpu_table_sort(w, XPU_GPU_COL_TOTAL, 0);
	for (uint32_t r = 0; r < w->nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(w, r);
		uint32_t pid = (uint32_t)c[XPU_GPU_COL_PID].i, dev = (uint32_t)c[XPU_GPU_COL_DEV].i;
		uint64_t key = kernel_key(pid, c[XPU_GPU_COL_MANGLED].s, dev);
		if (slot_find(m, key))
			continue;
		int ar = all_row(a, w->keys[r], -1);
		if (ar < 0)
			continue;
		const struct xpu_cell *ac = xpu_table_row(a, (uint32_t)ar);
		if (slots_of(m, pid) >= m->top_n) {
			/* a slot whose kernel has gone quiet makes room */
			uint32_t quiet = UINT32_MAX;
			for (uint32_t i = 0; i < m->nslots; i++)
				if (m->slots[i].pid == pid && m->slots[i].gen != m->gen &&
				    m->gen - m->slots[i].since > 30)
					quiet = i;
			if (quiet == UINT32_MAX)
				continue;
			retire(m, quiet);
		}
		if (xpu_grow((void **)&m->slots, &m->slcap, (size_t)m->nslots + 1, sizeof(*m->slots)) < 0) {
			m->failed = 1;
			return;
		}
		/* A process seen for the first time has shown no "other" yet: its
		 * kernels' series start from their totals.  Later, a kernel's
		 * series starts from 0, what it had being in "other" already. */
		int fresh = !other_find(m, pid, dev);
		m->slots[m->nslots++] = (struct slot){
			.key = key, .pid = pid, .device = dev, .since = m->gen, .gen = m->gen,
			.promo_ns = fresh ? 0 : (double)ac[XPU_GPU_COL_TOTAL].i,
			.promo_calls = fresh ? 0 : (double)ac[XPU_GPU_COL_CALLS].i,
		};
	}
}

/* A folded process's kernels all go to kernel="other": its names would
 * bring back the series the folding saves. */
static void kernel_labels(struct xpu_metrics *m, const struct xpu_session *s, struct labels *l, uint32_t pid,
			  const char *comm, uint32_t dev, const char *k)
{
	lab_reset(l);
	proc_label(m, s, l, pid, comm);
	lab_uint(l, "device", dev);
	lab_str(l, "kernel", proc_folded(m, pid) ? "other" : k);
}

static void kernels(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_gpu_model *g = &s->gpu;
	struct labels l = { 0 };
	if (xpu_gpu_model_table(g, &s->dict, &m->gtab, XPU_WIN_ALL) < 0 ||
	    xpu_gpu_model_table(g, &s->dict, &m->gwin, XPU_WIN_RECENT) < 0) {
		m->failed = 1;
		return;
	}
	struct xpu_table *a = &m->gtab;
	/* mark the slots whose kernels ran in the window */
	for (uint32_t r = 0; r < m->gwin.nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(&m->gwin, r);
		struct slot *sl = slot_find(m, kernel_key((uint32_t)c[XPU_GPU_COL_PID].i, c[XPU_GPU_COL_MANGLED].s,
							  (uint32_t)c[XPU_GPU_COL_DEV].i));
		if (sl)
			sl->gen = m->gen;
	}
	choose_slots(m);
	/* "other" per (pid, device): every row not in a slot, plus what the
	 * slots held when they got their series */
	for (uint32_t i = 0; i < m->nothers; i++)
		m->others[i].gen = 0;
	double (*oth)[2] = calloc(m->nothers + a->nrows + 1, sizeof(*oth));
	if (!oth) {
		m->failed = 1;
		return;
	}
	for (uint32_t r = 0; r < a->nrows; r++) {
		const struct xpu_cell *c = xpu_table_row(a, r);
		uint32_t pid = (uint32_t)c[XPU_GPU_COL_PID].i, dev = (uint32_t)c[XPU_GPU_COL_DEV].i;
		double ns = (double)c[XPU_GPU_COL_TOTAL].i, calls = (double)c[XPU_GPU_COL_CALLS].i;
		lab_reset(&l);
		if (proc_label(m, s, &l, pid, c[XPU_GPU_COL_PROC].s) < 0)
			continue;	/* exited long ago: its slots and "other" go below */
		struct slot *sl = slot_find(m, kernel_key(pid, c[XPU_GPU_COL_MANGLED].s, dev));
		struct other *o = other_get(m, pid, dev);
		if (!o) {
			m->failed = 1;
			break;
		}
		uint32_t oi = (uint32_t)(o - m->others);
		o->gen = 1;
		if (sl) {
			kernel_labels(m, s, &l, pid, c[XPU_GPU_COL_PROC].s, dev, c[XPU_GPU_COL_KERNEL].s);
			counter(m, F_KERNEL_SECONDS, &l, (ns - sl->promo_ns) / 1e9);
			counter(m, F_KERNEL_CALLS, &l, calls - sl->promo_calls);
			oth[oi][0] += sl->promo_ns;
			oth[oi][1] += sl->promo_calls;
		} else {
			oth[oi][0] += ns;
			oth[oi][1] += calls;
		}
	}
	for (uint32_t i = 0; i < m->nothers; i++) {
		const struct other *o = &m->others[i];
		if (!o->gen)
			continue;
		const struct xpu_gpu_proc *p = NULL;
		for (uint32_t j = 0; j < g->nprocs && !p; j++)
			if (g->procs[j].pid == o->pid)
				p = &g->procs[j];
		kernel_labels(m, s, &l, o->pid, p ? str(s, p->comm) : "", o->device, "other");
		counter(m, F_KERNEL_SECONDS, &l, (oth[i][0] - o->retired_ns) / 1e9);
		counter(m, F_KERNEL_CALLS, &l, oth[i][1] - o->retired_calls);
	}
	free(oth);
	/* slots and "other" series of processes that left the model go */
	for (uint32_t i = 0; i < m->nslots;) {
		int seen = 0;
		for (uint32_t j = 0; j < m->nothers && !seen; j++)
			seen = m->others[j].gen && m->others[j].pid == m->slots[i].pid;
		if (seen)
			i++;
		else
			m->slots[i] = m->slots[--m->nslots];
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->nothers; i++)
		if (m->others[i].gen)
			m->others[k++] = m->others[i];
	m->nothers = k;
	xpu_mbuf_free(&l.b);
}

static void gpu(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_gpu_model *g = &s->gpu;
	struct labels l = { 0 };
	kernels(m, s);
	for (uint32_t i = 0; i < g->nprocs; i++) {
		const struct xpu_gpu_proc *p = &g->procs[i];
		lab_reset(&l);
		if (proc_label(m, s, &l, p->pid, str(s, p->comm)) < 0)
			continue;
		counter(m, F_LAUNCHES, &l, (double)p->launches.total);
		if (!p->launch_only) {
			add(m, F_GPU_TRACED, SUF_NONE, &l, p->cover[XPU_WIN_ALL]);
			counter(m, F_GPU_LIB_DROPPED, &l, (double)p->dropped);
		}
	}
	for (int d = 0; d < XPU_GPU_MAX_DEVICES; d++) {
		const struct xpu_gpu_device *v = &g->dev[d];
		if (!v->used)
			continue;
		lab_reset(&l);
		lab_uint(&l, "device", (uint64_t)d);
		counter(m, F_GPU_BUSY, &l, (double)v->busy_all / 1e9);
		counter(m, F_GPU_MEMCPY_BYTES, &l, (double)v->memcpy_bytes.total);
		counter(m, F_GPU_MEMCPY_SECONDS, &l, (double)v->memcpy_ns.total / 1e9);
	}
	xpu_mbuf_free(&l.b);
}

/* ---- NPU ---- */

static void npu_calls(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_npu_model *n = &s->npu;
	struct labels l = { 0 };
	char code[16];
	for (uint32_t i = 0; i < n->ncalls; i++) {
		const struct xpu_npu_call *c = &n->calls[i];
		const char *name = NULL;
		lab_reset(&l);
		if (proc_label(m, s, &l, c->pid, str(s, c->comm)) < 0)
			continue;
		if (c->kind == XPU_NPU_KIND_IOCTL) {
			name = xpu_npu_ioctl_name(c->code);
			snprintf(code, sizeof(code), "0x%04x", c->code);
			lab_str(&l, "ioctl", name ? name : code);
			counter(m, F_NPU_IOCTLS, &l, (double)c->calls.total);
			counter(m, F_NPU_IOCTL_ERRORS, &l, (double)c->errors.total);
		} else if (c->kind == XPU_NPU_KIND_L0) {
			name = xpu_npu_l0_name(c->code);
			snprintf(code, sizeof(code), "%u", c->code);
			lab_str(&l, "api", name ? name : code);
			counter(m, F_NPU_L0, &l, (double)c->calls.total);
		}
	}
	xpu_mbuf_free(&l.b);
}

static void npu_ipc(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_npu_model *n = &s->npu;
	struct labels l = { 0 };
	char code[16];
	for (int dir = 0; dir < 2; dir++) {
		const char *dname = dir ? "rx" : "tx";
		lab_reset(&l);
		lab_str(&l, "direction", dname);
		lab_str(&l, "type", "all");
		counter(m, F_NPU_IPC, &l, (double)n->g[dir ? XPU_NPU_C_RX : XPU_NPU_C_TX].total);
		for (uint32_t i = 0; i < n->ntypes; i++) {
			const struct xpu_npu_type *t = &n->types[i];
			const char *name = xpu_npu_msg_name(t->code);
			snprintf(code, sizeof(code), "0x%04x", t->code);
			lab_reset(&l);
			lab_str(&l, "direction", dname);
			lab_str(&l, "type", name ? name : t->code ? code : "unknown");
			counter(m, F_NPU_IPC, &l, (double)(dir ? t->rx.total : t->tx.total));
		}
	}
	counter(m, F_NPU_IPC_TIMEOUTS, NULL, (double)n->g[XPU_NPU_C_TIMEOUT].total);
	xpu_mbuf_free(&l.b);
}

/* The since-start latency buckets, dense or parked (window.h), folded
 * into the exported bounds: a bucket counts under the first bound at or
 * above its upper edge (an eighth of an octave above its lower one), so no
 * job is ever counted faster than it was. */
static void npu_latency(struct xpu_metrics *m, const struct xpu_npu_model *n)
{
	const struct xpu_win_hist *lat = &n->job_lat;
	double cum[NLE + 1] = { 0 }, sum = 0;
	struct labels l = { 0 };
	uint32_t nb = lat->all ? XPU_NPU_HIST_BUCKETS : lat->parked.n;
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t b = lat->all ? i : lat->parked.b[i];
		uint64_t c = lat->all ? lat->all[i] : lat->parked.c[i];
		if (!c)
			continue;
		double lo = (double)xpu_npu_hist_lower(b) / 1e9;
		double hi = b + 1 < XPU_NPU_HIST_BUCKETS ? (double)xpu_npu_hist_lower(b + 1) / 1e9 : lo;
		size_t k = 0;
		while (k < NLE && lat_le[k] < hi)
			k++;
		cum[k] += (double)c;
		sum += (double)c * (lo + hi) / 2;
	}
	double run = 0;
	char le[32];
	for (size_t k = 0; k <= NLE; k++) {
		run += cum[k];
		if (k < NLE)
			snprintf(le, sizeof(le), lat_le[k] == floor(lat_le[k]) ? "%.1f" : "%g", lat_le[k]);
		lab_reset(&l);
		lab_str(&l, "le", k < NLE ? le : "+Inf");
		add(m, F_NPU_LATENCY, SUF_BUCKET, &l, monotonic(m, F_NPU_LATENCY, &l, run));
	}
	lab_reset(&l);
	lab_str(&l, "part", "sum");	/* a key of its own for the floor, not exported */
	add(m, F_NPU_LATENCY, SUF_SUM, NULL, monotonic(m, F_NPU_LATENCY, &l, sum));
	lab_reset(&l);
	lab_str(&l, "part", "count");
	add(m, F_NPU_LATENCY, SUF_COUNT, NULL, monotonic(m, F_NPU_LATENCY, &l, run));
	xpu_mbuf_free(&l.b);
}

static void npu(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_npu_model *n = &s->npu;
	struct labels l = { 0 };
	npu_calls(m, s);
	npu_ipc(m, s);
	counter(m, F_NPU_SUBMITTED, NULL, (double)n->g[XPU_NPU_C_SUBMIT].total);
	counter(m, F_NPU_COMPLETED, NULL, (double)n->g[XPU_NPU_C_DONE].total);
	counter(m, F_NPU_ABORTED, NULL, (double)n->g[XPU_NPU_C_ABORTED].total);
	add(m, F_NPU_OUTSTANDING, SUF_NONE, NULL, n->njobs);
	add(m, F_NPU_OLDEST, SUF_NONE, NULL,
	    n->njobs && n->now > n->jobs[0].submit_ns ? (double)(n->now - n->jobs[0].submit_ns) / 1e9 : 0);
	npu_latency(m, n);
	for (uint32_t k = 1; k < XPU_NPU_MEM_MAX; k++) {
		lab_reset(&l);
		lab_str(&l, "operation", xpu_npu_mem_name(k));
		counter(m, F_NPU_MEM, &l, (double)n->g[XPU_NPU_C_MEM0 + k].total);
	}
	static const struct { int code; const char *name; } pm[] = {
		{ XPU_NPU_PM_SUSPEND, "suspend" }, { XPU_NPU_PM_RESUME, "resume" },
		{ XPU_NPU_PM_RECOVERY, "recovery" },
	};
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++) {
		lab_reset(&l);
		lab_str(&l, "event", pm[i].name);
		counter(m, F_NPU_PM, &l, (double)n->g[XPU_NPU_C_PM0 + pm[i].code].total);
	}
	for (uint32_t d = 0; d < XPU_NPU_MAX_DEVICES; d++) {
		if (!n->dev[d].readings)
			continue;
		lab_reset(&l);
		lab_uint(&l, "device", d);
		counter(m, F_NPU_BUSY, &l, (double)n->dev[d].busy_us / 1e6);
	}
	xpu_mbuf_free(&l.b);
}

static void alerts(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_alerts *a = &s->alerts;
	struct labels l = { 0 };
	for (uint32_t i = 0; i < a->n; i++) {
		const struct xpu_alert *al = xpu_alerts_at(a, i);
		if (!al->active)
			continue;
		lab_reset(&l);
		lab_str(&l, "source", al->source);
		lab_str(&l, "rule", al->rule);
		lab_str(&l, "severity", xpu_alert_sev_name(al->sev));
		lab_uint(&l, "key", al->key);
		add(m, F_ALERT, SUF_NONE, &l, al->count);
	}
	for (int sev = 0; sev < XPU_ALERT_SEV_MAX; sev++) {
		lab_reset(&l);
		lab_str(&l, "severity", xpu_alert_sev_name(sev));
		add(m, F_ALERTS, SUF_NONE, &l, xpu_alerts_active(a, sev));
	}
	counter(m, F_ALERTS_RAISED, NULL, (double)a->raised_total);
	xpu_mbuf_free(&l.b);
}

/* ---- the exporter ---- */

struct xpu_metrics *xpu_metrics_new(uint32_t top_n)
{
	struct xpu_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->top_n = top_n;
	m->label = XPU_METRICS_BY_PID;
	m->expiry_ns = (uint64_t)XPU_METRICS_EXPIRY_DEFAULT * 1000000000ULL;
	m->max_values = XPU_METRICS_PROCESSES_DEFAULT;
	xpu_htab_init(&m->fidx);
	xpu_htab_init(&m->pidx);
	xpu_htab_init(&m->gidx);
	xpu_htab_init(&m->sidx);
	xpu_table_init(&m->gtab, xpu_gpu_cols, XPU_GPU_NCOLS);
	xpu_table_init(&m->gwin, xpu_gpu_cols, XPU_GPU_NCOLS);
	xpu_table_init(&m->ctab, xpu_cpu_cols, XPU_CPU_NCOLS);
	return m;
}

void xpu_metrics_set_processes(struct xpu_metrics *m, int label, double expiry_s, uint32_t max_values)
{
	if (label != m->label) {	/* the label values are others now */
		for (uint32_t i = 0; i < m->ngroups; i++)
			free(m->groups[i].value);
		m->ngroups = m->nprocs = m->nown = 0;
		xpu_htab_free(&m->pidx);
		xpu_htab_init(&m->pidx);
		xpu_htab_free(&m->gidx);
		xpu_htab_init(&m->gidx);
	}
	m->label = label;
	m->expiry_ns = (uint64_t)(expiry_s * 1e9);
	m->max_values = max_values;
}

void xpu_metrics_free(struct xpu_metrics *m)
{
	if (!m)
		return;
	free(m->s);
	xpu_mbuf_free(&m->arena);
	free(m->floors);
	xpu_htab_free(&m->fidx);
	free(m->slots);
	free(m->others);
	free(m->procs);
	for (uint32_t i = 0; i < m->ngroups; i++)
		free(m->groups[i].value);
	free(m->groups);
	xpu_htab_free(&m->pidx);
	xpu_htab_free(&m->gidx);
	xpu_htab_free(&m->sidx);
	xpu_table_free(&m->gtab);
	xpu_table_free(&m->gwin);
	xpu_table_free(&m->ctab);
	free(m);
}

/* ---- the GPU socket's peers (issue 24) ---- */

static void gpu_peers(struct xpu_metrics *m, const struct xpu_session *s)
{
	const struct xpu_gpu_peers *p = &s->gpu_peers;
	struct labels l = { 0 };
	for (int r = 0; r < XPU_PEER_REASONS; r++) {
		lab_reset(&l);
		lab_str(&l, "reason", xpu_peer_reason_name(r));
		counter(m, F_PEER_REFUSED, &l, (double)p->total[r]);
		for (int i = 0; i < p->nuids; i++) {
			if (!p->uids[i].n[r])
				continue;
			lab_reset(&l);
			lab_uint(&l, "uid", p->uids[i].uid);
			lab_str(&l, "reason", xpu_peer_reason_name(r));
			counter(m, F_PEER_REFUSED_UID, &l, (double)p->uids[i].n[r]);
		}
	}
	xpu_mbuf_free(&l.b);
}

int xpu_metrics_update(struct xpu_metrics *m, const struct xpu_session *sess,
		       const struct xpu_metrics_extra *x)
{
	m->gen++;
	m->ns = 0;
	m->arena.n = 0;
	m->arena.oom = 0;
	m->failed = 0;
	/* distinct from the last update's even where the clock stood still */
	m->now = sess->last_tick_wall > m->now ? sess->last_tick_wall : m->now + 1;
	xpu_htab_free(&m->sidx);
	xpu_htab_init(&m->sidx);
	self(m, sess, x);
	cpu(m, sess);
	gpudev(m, sess);
	gpu(m, sess);
	npu(m, sess);
	alerts(m, sess);
	gpu_peers(m, sess);
	if (prune_procs(m) < 0)
		m->failed = 1;
	process_stats(m);
	finish_counters(m);
	if (prune_floors(m) < 0)
		m->failed = 1;
	return m->failed ? -1 : 0;
}

static int by_family(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	if (x->fam != y->fam)
		return x->fam < y->fam ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void help_text(struct xpu_mbuf *b, const char *h)
{
	for (; *h; h++) {
		if (*h == '\\')
			mputs(b, "\\\\");
		else if (*h == '\n')
			mputs(b, "\\n");
		else
			mput(b, h, 1);
	}
}

int xpu_metrics_write(const struct xpu_metrics *m, int om, struct xpu_mbuf *out)
{
	static const char *const suffix[] = { "", "_bucket", "_sum", "_count" };
	static const char *const tname[] = { "gauge", "counter", "histogram" };
	/* sorted once per update would do, but a write is rarer than a scrape */
	struct sample *s = malloc((m->ns ? m->ns : 1) * sizeof(*s));
	if (!s)
		return -1;
	memcpy(s, m->s, m->ns * sizeof(*s));
	qsort(s, m->ns, sizeof(*s), by_family);
	int last = -1;
	for (uint32_t i = 0; i < m->ns; i++) {
		const struct family *f = &fams[s[i].fam];
		const char *total = f->type == COUNTER ? "_total" : "";
		if (s[i].fam != last) {
			last = s[i].fam;
			mprintf(out, "# HELP %s%s ", f->name, om ? "" : total);
			help_text(out, f->help);
			mprintf(out, "\n# TYPE %s%s %s\n", f->name, om ? "" : total, tname[f->type]);
		}
		const char *labels = m->arena.p + s[i].labels;
		mputs(out, f->name);
		mputs(out, total);
		mputs(out, suffix[s[i].suffix]);
		if (*labels) {
			mputs(out, "{");
			mputs(out, labels);
			mputs(out, "}");
		}
		mputs(out, " ");
		put_value(out, s[i].v);
		mputs(out, "\n");
	}
	if (om)
		mputs(out, "# EOF\n");
	free(s);
	return out->oom ? -1 : 0;
}
