/* SPDX-License-Identifier: GPL-2.0-only */
#include "settings_table.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "err.h"
#include "metrics.h"
#include "opts.h"
#include "prom_http.h"

/* A make STATIC=1 xputop has no metrics server and cannot push profiles
 * (their libraries do not link statically): its --help says so. */
#ifdef XPU_NO_EXPORTERS
#define NOT_STATIC " (not in this STATIC=1 build)"
#else
#define NOT_STATIC ""
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

/* Decimal only: strtod would take -d 0x10 as 16 seconds. */
static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	if (!*s || s[strspn(s, "0123456789.")])
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ---- the options whose argument is more than a number or a name ---- */

static int parse_pids(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;
		if (*tok < '0' || *tok > '9') {	/* a name: which processes is known at start */
			if (o->npid_names == XPU_MAX_PID_NAMES)
				return xpu_err("-p: at most %d process names", XPU_MAX_PID_NAMES), -1;
			if (strlen(tok) >= sizeof(o->pid_names[0]))
				return xpu_err("-p: '%s' is too long for a process name", tok), -1;
			snprintf(o->pid_names[o->npid_names++], sizeof(o->pid_names[0]), "%s", tok);
			continue;
		}
		if (parse_long(tok, 1, 4194304, &v) < 0)
			return xpu_err("-p: '%s' is not a process id", tok), -1;
		if (o->npids == XPU_MAX_PIDS)
			return xpu_err("-p: at most %d processes", XPU_MAX_PIDS), -1;
		o->pids[o->npids++] = (uint32_t)v;
	}
	if (!o->npids && !o->npid_names)
		return xpu_err("-p needs at least one process id or name"), -1;
	return 0;
}

static int parse_json(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	o->json = o->batch = 1;
	return 0;
}

/* --gpu-exact[=SECS]: the seconds are a DOUBLE in gpu_exact_s. */
static int parse_gpu_exact(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	struct xpu_setting secs = *e;
	o->gpu_exact = 1;
	secs.kind = XPU_SK_DOUBLE;
	return arg ? xpu_setting_parse(&secs, o, arg) : 0;
}

/* --gpu-sample SLICE/PERIOD, in milliseconds. */
static int parse_sample(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	unsigned slice, period;
	char end;
	if (sscanf(arg, "%u/%u%c", &slice, &period, &end) != 2 || slice < 1 || period > 3600000 ||
	    slice >= period)
		return xpu_err("--gpu-sample: expected SLICE/PERIOD in milliseconds, the slice shorter "
			       "(for example 10/500)"), -1;
	o->gpu_slice_ms = slice;
	o->gpu_period_ms = period;
	return 0;
}

/* --gpu-waiters KIND:FILE:SYMBOL[,...] (gpu_stitch.h); checked here, parsed
 * again at start where the default applies. */
static int parse_waiters(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	char err[320];
	if (xpu_gpu_waiters_parse(arg, o->gpu_waiters, XPU_GPU_MAX_WAITERS, err, sizeof(err)) < 0)
		return xpu_err("--gpu-waiters: %s", err), -1;
	o->gpu_waiters_spec = arg;
	return 0;
}

/* --gpu-nodes[=LIST]: bare, PyTorch's (gpu_stitch.h). */
static int parse_nodes(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	char err[320];
	if (xpu_gpu_nodes_parse(arg ? arg : XPU_GPU_NODES_DEFAULT, &o->gpu_nodes, err, sizeof(err)) < 0)
		return xpu_err("--gpu-nodes: %s", err), -1;
	return 0;
}

static int parse_prometheus(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	char host[256], err[320];
	unsigned port;
	if (xpu_prom_http_parse(arg, host, sizeof(host), &port, err, sizeof(err)) < 0)
		return xpu_err("--prometheus: %s", err), -1;
	o->prometheus = arg;
	return 0;
}

static int parse_push(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0)
		return xpu_err("--pprof-push: expected an http:// or https:// URL, not '%s'", arg), -1;
	o->pprof_push = arg;
	return 0;
}

static int show_help(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	xpu_opts_usage(stdout);
	return 1;
}

static int show_version(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	printf("xputop %s\n", XPU_VERSION);
	return 1;
}

static int list_options(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	xpu_opts_list(stdout);
	return 1;
}

static int list_keys(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	xpu_config_keys(stdout);
	return 1;
}

static int list_sort_columns(struct xpu_opts *o, const struct xpu_setting *e, const char *arg)
{
	xpu_config_sort_cols(stdout);
	return 1;
}

/* ---- the table ---- */

/* The views' names in the order of enum xpu_view (core/session/view_list.h). */
#define VIEW_NAME(ID, name) #name,
static const char *const views[] = { XPU_VIEW_LIST(VIEW_NAME) NULL };
/* " gpu npu cpu", for --help: a new view is named there too. */
#define VIEW_WORD(ID, name) " " #name
static const char *const labels[] = { "pid", "comm", "cgroup", "container", NULL };

#define O(field) .off = offsetof(struct xpu_opts, field)
#define FILE_KEY(b, field) .bit = (b), .soff = offsetof(struct xpu_settings, field)

/* In the order of --help. */
const struct xpu_setting xpu_settings_table[] = {
	{ "delay", 'd', "SECS", XPU_SK_DOUBLE, 0.05, 3600, "seconds (the refresh interval)", .def = "1.0",
	  O(delay_s), FILE_KEY(XPU_SET_DELAY, delay_s), .help = "refresh interval in seconds" },
	{ "pid", 'p', "PID|NAME[,...]", XPU_SK_HOOK, .parse = parse_pids,
	  .help = "watch only these processes (ids, or names as in top's COMMAND)" },
	{ "freq", 'F', "HZ", XPU_SK_U32, 1, 10000, "Hz (the sampling frequency)", .def = "99", O(hz),
	  FILE_KEY(XPU_SET_FREQ, hz), .help = "CPU sampling frequency" },
	{ "output-dir", 'o', "DIR", XPU_SK_STRING, O(outdir),
	  .help = "directory for exports (default: the current directory)" },
	{ "theme", 't', "NAME", XPU_SK_STRING, O(theme), FILE_KEY(XPU_SET_THEME, theme),
	  .help = "colour theme: dark, light, high-contrast, mono, or a theme file's path" },
	{ "batch", 'b', NULL, XPU_SK_FLAG, O(batch),
	  .help = "print text snapshots instead of the interactive screen" },
	{ "json", 'j', NULL, XPU_SK_HOOK, .parse = parse_json,
	  .help = "print one JSON object per refresh (NDJSON); implies -b" },
	{ "iterations", 'n', "N", XPU_SK_LONG, 1, 1L << 40, "refreshes", .flags = XPU_SF_OPEN, O(iterations),
	  .help = "stop after N refreshes" },
	{ "write", 'w', "FILE", XPU_SK_STRING, O(record), .help = "record the event stream to FILE" },
	{ "read", 'r', "FILE", XPU_SK_STRING, O(replay),
	  .help = "replay a recording instead of watching this machine" },
	{ "export", 0, NULL, XPU_SK_FLAG, O(export_at_end),
	  .help = "batch mode: write the current view's export on exit (NPU: functions, jobs trace, alerts)" },
	{ "window", 0, "SECS", XPU_SK_DOUBLE, 0.1, 86400, "seconds", .def = "10", O(window_s),
	  FILE_KEY(XPU_SET_WINDOW, window_s), .help = "length of the recent window" },
	{ "view", 0, "VIEW", XPU_SK_ENUM, .names = views, .flags = XPU_SF_UNSET, O(view),
	  FILE_KEY(XPU_SET_VIEW, view), .help = "view to start in:" XPU_VIEW_LIST(VIEW_WORD) },
	{ "sort", 's', "COL", XPU_SK_STRING, O(sort),
	  .help = "sort the view by this column (its JSON name: cpu_pct, samples, comm, total...)" },
	{ "threads", 'H', NULL, XPU_SK_FLAG, O(threads),
	  .help = "CPU view: one row per thread rather than per process" },
	{ "gpu-no-stacks", 0, NULL, XPU_SK_FLAG, O(gpu_no_stacks),
	  .help = "GPU view without launch stacks: CUPTI alone, the least overhead" },
	{ "gpu-exact", 0, "[=SECS]", XPU_SK_HOOK, 0.1, 1e7, "seconds", .flags = XPU_SF_OPEN, O(gpu_exact_s),
	  .parse = parse_gpu_exact,
	  .help = "trace every GPU kernel (for SECS, then sampled; also the e key's time)" },
	{ "gpu-sample", 0, "MS/MS", XPU_SK_HOOK, .parse = parse_sample,
	  .help = "sampled GPU tracing: a slice of MS every MS (default 10/500)" },
	{ "gpu-waiters", 0, "LIST", XPU_SK_HOOK, .parse = parse_waiters,
	  .help = "launches made while a thread waits in these show under its stack (default: autograd's)" },
	{ "gpu-nodes", 0, "[=LIST]", XPU_SK_HOOK, .flags = XPU_SF_OPEN, .parse = parse_nodes,
	  .help = "backward kernels show under the forward call that made their autograd node (off; a "
		  "uprobe trap a node made or run: ~+40% a step on a small launch-bound model)" },
	{ "gpu-own-hz", 0, "HZ", XPU_SK_U32, 0, 10000, "Hz (0 turns it off)",
	  .def = STR(XPU_GPU_OWN_HZ_DEFAULT), O(gpu_own_hz),
	  .help = "scale sampled GPU slices by launching threads' own CPU time, sampled at HZ (0: by time)" },
	{ "npu-dev", 0, "PATH", XPU_SK_STRING, O(npu_dev),
	  .help = "also count ioctls on this device node as NPU ioctls" },
	{ "npu-probe-binary", 0, "PATH", XPU_SK_STRING, O(npu_probe_binary),
	  .help = "attach the ivpu_* and driver function probes as uprobes to this binary (testing)" },
	{ "npu-no-latency", 0, NULL, XPU_SK_FLAG, O(npu_no_latency),
	  .help = "count NPU driver function calls without timing them (no return probes)" },
	{ "npu-sysfs", 0, "DIR", XPU_SK_STRING, O(npu_sysfs),
	  .help = "read the NPU's sysfs files and /proc fdinfo under DIR (testing)" },
	{ "npu-tdr", 0, "MS", XPU_SK_U32, 10, 3600000, "milliseconds", O(npu_tdr_ms),
	  FILE_KEY(XPU_SET_NPU_TDR, npu_tdr_ms), .zero = "driver",
	  .help = "NPU stall threshold (default: intel_vpu's tdr_timeout_ms, else 2000)" },
	{ "npu-storm", 0, "X", XPU_SK_DOUBLE, 1.5, 1000, "times the learned rate", .def = "5",
	  .flags = XPU_SF_MODEL_DEFAULT, O(npu_storm), FILE_KEY(XPU_SET_NPU_STORM, npu_storm),
	  .help = "warn when firmware IPC runs X times its learned rate" },
	{ "npu-silence", 0, "MS", XPU_SK_U32, 10, 3600000, "milliseconds", .def = "1000",
	  .flags = XPU_SF_MODEL_DEFAULT, O(npu_silence_ms), FILE_KEY(XPU_SET_NPU_SILENCE, npu_silence_ms),
	  .help = "warn after MS without IPC while NPU jobs wait" },
	{ "prometheus", 0, "[ADDR:]PORT", XPU_SK_HOOK, .parse = parse_prometheus,
	  .help = "serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR: localhost)" NOT_STATIC },
	{ "prometheus-top", 0, "N", XPU_SK_U32, 0, XPU_METRICS_TOP_MAX, "kernel series per process",
	  .def = STR(XPU_METRICS_TOP_DEFAULT), O(prometheus_top),
	  .help = "kernel series per process in the metrics, the rest as \"other\"" },
	{ "prometheus-label", 0, "BY", XPU_SK_ENUM, .names = labels, O(prometheus_label),
	  .help = "label process series by pid (default), comm, cgroup or container; sums share one" },
	{ "prometheus-expiry", 0, "SECS", XPU_SK_DOUBLE, 0, XPU_METRICS_EXPIRY_MAX, "seconds",
	  .def = STR(XPU_METRICS_EXPIRY_DEFAULT), O(prometheus_expiry_s),
	  .help = "seconds an exited process keeps its series" },
	{ "prometheus-processes", 0, "N", XPU_SK_U32, 1, XPU_METRICS_PROCESSES_MAX, "label values",
	  .def = STR(XPU_METRICS_PROCESSES_DEFAULT), O(prometheus_processes),
	  .help = "label values with series of their own, the rest summed as \"other\"" },
	{ "pprof", 0, "DIR", XPU_SK_STRING, O(pprof_dir),
	  .help = "write pprof profiles of CPU samples and GPU time into DIR (every 10 s, on s, at exit)" },
	{ "pprof-interval", 0, "SECS", XPU_SK_DOUBLE, 0.1, 86400, "seconds", .def = "10", O(pprof_interval_s),
	  .help = "seconds between pprof profiles" },
	{ "pprof-push", 0, "URL", XPU_SK_HOOK, .parse = parse_push,
	  .help = "also post the profiles to a Pyroscope-compatible server (e.g. http://host:4040)"
		  NOT_STATIC },
	{ "pprof-headers", 0, "FILE", XPU_SK_STRING, O(pprof_push_headers),
	  .help = "HTTP headers for the push, one 'Name: value' a line (tokens, tenant; mode 600)" },
	{ "config", 0, "FILE", XPU_SK_STRING, O(config),
	  .help = "read settings from FILE (default ~/.config/xputop/xputop.conf)" },
	{ "no-config", 0, NULL, XPU_SK_FLAG, O(no_config), .help = "ignore the settings file" },
	{ "verbose", 'v', NULL, XPU_SK_COUNT, O(verbose),
	  .help = "more messages (twice: libbpf's debug output too)" },
	{ "help", 'h', NULL, XPU_SK_HOOK, .parse = show_help, .help = "show this help and exit" },
	{ "version", 'V', NULL, XPU_SK_HOOK, .parse = show_version, .help = "show the version and exit" },
	/* For the build of the bash completion and the man page's test. */
	{ "list-options", 0, NULL, XPU_SK_HOOK, .parse = list_options },
	{ "list-keys", 0, NULL, XPU_SK_HOOK, .parse = list_keys },
	{ "list-sort-columns", 0, NULL, XPU_SK_HOOK, .parse = list_sort_columns },
};
const unsigned xpu_nsettings = sizeof(xpu_settings_table) / sizeof(xpu_settings_table[0]);

_Static_assert(sizeof(enum xpu_view) == sizeof(int), "--view's ENUM is an int in both structs");
_Static_assert(XPU_GIVEN_DELAY == XPU_SET_DELAY, "one bit for -d given and delay set");

/* ---- reading it ---- */

const struct xpu_setting *xpu_setting_key(const char *key)
{
	for (unsigned i = 0; i < xpu_nsettings; i++)
		if (xpu_settings_table[i].bit && !strcasecmp(key, xpu_settings_table[i].name))
			return &xpu_settings_table[i];
	return NULL;
}

const char *xpu_setting_optname(const struct xpu_setting *e, char *buf, size_t size)
{
	if (e->shrt)
		snprintf(buf, size, "-%c", e->shrt);
	else
		snprintf(buf, size, "--%s", e->name);
	return buf;
}

void xpu_setting_expect(const struct xpu_setting *e, char *buf, size_t size)
{
	size_t used = 0;
	if (e->kind == XPU_SK_ENUM) {
		buf[0] = '\0';
		for (unsigned i = 0; e->names[i] && used < size; i++)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", i == 0 ? "" :
						 e->names[i + 1] ? ", " : " or ", e->names[i]);
	} else if (e->flags & XPU_SF_OPEN) {
		snprintf(buf, size, "%.15g or more", e->lo);
	} else {
		snprintf(buf, size, "%.15g to %.15g", e->lo, e->hi);
	}
}

static void *at(void *base, size_t off)
{
	return (char *)base + off;
}

static int expected(const struct xpu_setting *e)
{
	char opt[64], what[256];
	xpu_setting_expect(e, what, sizeof(what));
	xpu_err("%s: expected %s%s%s", xpu_setting_optname(e, opt, sizeof(opt)), what, e->unit ? " " : "",
		e->unit ? e->unit : "");
	return -1;
}

int xpu_setting_parse(const struct xpu_setting *e, struct xpu_opts *o, const char *arg)
{
	void *f = at(o, e->off);
	long l;
	switch (e->kind) {
	case XPU_SK_FLAG:
		*(int *)f = 1;
		break;
	case XPU_SK_COUNT:
		++*(int *)f;
		break;
	case XPU_SK_U32:
		if (parse_long(arg, (long)e->lo, (long)e->hi, &l) < 0)
			return expected(e);
		*(uint32_t *)f = (uint32_t)l;
		break;
	case XPU_SK_LONG:
		if (parse_long(arg, (long)e->lo, (long)e->hi, f) < 0)
			return expected(e);
		break;
	case XPU_SK_DOUBLE:
		if (parse_double(arg, e->lo, e->hi, f) < 0)
			return expected(e);
		break;
	case XPU_SK_STRING:
		*(const char **)f = arg;
		break;
	case XPU_SK_ENUM:
		for (int i = 0; e->names[i]; i++)
			if (strcmp(arg, e->names[i]) == 0) {
				*(int *)f = i;
				goto given;
			}
		return expected(e);
	case XPU_SK_HOOK:
		return e->parse(o, e, arg);
	}
given:
	o->given |= e->bit;
	return 0;
}

/* The number def names, where it is one and the field starts there. */
static void set_default(const struct xpu_setting *e, void *f)
{
	if (e->kind == XPU_SK_ENUM)
		*(int *)f = e->flags & XPU_SF_UNSET ? -1 : 0;
	if (!e->def || (e->flags & XPU_SF_MODEL_DEFAULT))
		return;
	double v = strtod(e->def, NULL);
	if (e->kind == XPU_SK_DOUBLE)
		*(double *)f = v;
	else if (e->kind == XPU_SK_U32)
		*(uint32_t *)f = (uint32_t)v;
	else if (e->kind == XPU_SK_LONG)
		*(long *)f = (long)v;
}

void xpu_setting_defaults(struct xpu_opts *o, void *s)
{
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		if (o)
			set_default(e, at(o, e->off));
		if (s && e->bit)
			set_default(e, at(s, e->soff));
	}
}
