/* SPDX-License-Identifier: GPL-2.0-only */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "metrics.h"
#include "prom_http.h"
#include "snapshot.h"

/* A make STATIC=1 xputop has no metrics server and cannot push profiles
 * (their libraries do not link statically): its --help says so. */
#ifdef XPU_NO_EXPORTERS
#define NOT_STATIC " (not in this STATIC=1 build)"
#else
#define NOT_STATIC ""
#endif

const struct xpu_optdoc xpu_optdocs[] = {
	{ "delay", 'd', "SECS", "refresh interval in seconds (default 1.0)" },
	{ "pid", 'p', "PID|NAME[,...]", "watch only these processes (ids, or names as in top's COMMAND)" },
	{ "freq", 'F', "HZ", "CPU sampling frequency (default 99)" },
	{ "output-dir", 'o', "DIR", "directory for exports (default: the current directory)" },
	{ "theme", 't', "NAME", "colour theme: dark, light, high-contrast, mono, or a theme file's path" },
	{ "batch", 'b', NULL, "print text snapshots instead of the interactive screen" },
	{ "json", 'j', NULL, "print one JSON object per refresh (NDJSON); implies -b" },
	{ "iterations", 'n', "N", "stop after N refreshes" },
	{ "write", 'w', "FILE", "record the event stream to FILE" },
	{ "read", 'r', "FILE", "replay a recording instead of watching this machine" },
	{ "export", 0, NULL, "batch mode: write the folded stack export on exit" },
	{ "window", 0, "SECS", "length of the recent window (default 10)" },
	{ "view", 0, "VIEW", "view to start in: gpu, npu or cpu" },
	{ "sort", 's', "COL", "sort the view by this column (its JSON name: cpu_pct, samples, comm, total...)" },
	{ "threads", 'H', NULL, "CPU view: one row per thread rather than per process" },
	{ "gpu-no-stacks", 0, NULL, "GPU view without launch stacks: CUPTI alone, the least overhead" },
	{ "gpu-exact", 0, "[=SECS]", "trace every GPU kernel (for SECS, then sampled; also the e key's time)" },
	{ "gpu-sample", 0, "MS/MS", "sampled GPU tracing: a slice of MS every MS (default 10/500)" },
	{ "npu-dev", 0, "PATH", "also count ioctls on this device node as NPU ioctls" },
	{ "npu-probe-binary", 0, "PATH", "attach the ivpu_* and driver function probes as uprobes to this binary (testing)" },
	{ "npu-sysfs", 0, "DIR", "read the NPU's sysfs files and /proc fdinfo under DIR (testing)" },
	{ "npu-tdr", 0, "MS", "NPU stall threshold (default: intel_vpu's tdr_timeout_ms, else 2000)" },
	{ "npu-storm", 0, "X", "warn when firmware IPC runs X times its learned rate (default 5)" },
	{ "npu-silence", 0, "MS", "warn after MS without IPC while NPU jobs wait (default 1000)" },
	{ "prometheus", 0, "[ADDR:]PORT", "serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR: localhost)" NOT_STATIC },
	{ "prometheus-top", 0, "N", "kernel series per process in the metrics, the rest as \"other\" (default 10)" },
	{ "prometheus-label", 0, "BY", "label process series by pid (default), comm, cgroup or container; sums share one" },
	{ "prometheus-expiry", 0, "SECS", "seconds an exited process keeps its series (default 300)" },
	{ "prometheus-processes", 0, "N", "label values with series of their own, the rest summed as \"other\" (default 500)" },
	{ "pprof", 0, "DIR", "write pprof profiles of CPU samples and GPU time into DIR (every 10 s, on s, at exit)" },
	{ "pprof-interval", 0, "SECS", "seconds between pprof profiles (default 10)" },
	{ "pprof-push", 0, "URL", "also post the profiles to a Pyroscope-compatible server (e.g. http://host:4040)" NOT_STATIC },
	{ "pprof-headers", 0, "FILE", "HTTP headers for the push, one 'Name: value' a line (tokens, tenant; mode 600)" },
	{ "config", 0, "FILE", "read settings from FILE (default ~/.config/xputop/xputop.conf)" },
	{ "no-config", 0, NULL, "ignore the settings file" },
	{ "verbose", 'v', NULL, "more messages (twice: libbpf's debug output too)" },
	{ "help", 'h', NULL, "show this help and exit" },
	{ "version", 'V', NULL, "show the version and exit" },
	{ NULL, 0, NULL, NULL },
};

const struct xpu_keydoc xpu_keydocs[] = {
	{ NULL, "Views" },
	{ "g  n  c", "GPU, NPU or CPU view" },
	{ "1  2  3", "GPU, NPU or CPU view" },
	{ "Tab  Shift-Tab", "next or previous view" },
	{ NULL, "Table" },
	{ "Up Down  j k", "move the selection (the flamegraph follows it)" },
	{ "PgUp  PgDn", "move the selection by a page" },
	{ "Home  End", "first or last row" },
	{ "<  >", "sort by the previous or next column" },
	{ "r", "reverse the sort order" },
	{ "/", "filter rows as you type; Enter keeps, Esc restores" },
	{ NULL, "Display" },
	{ "f", "show or hide the flamegraph" },
	{ "H", "processes or threads (CPU view)" },
	{ "F", "follow the selected row as rows re-sort, until it ends (else the cursor keeps its place)" },
	{ "w", "recent window or since start" },
	{ "Space", "pause or resume the display" },
	{ "s", "export the current view to a file" },
	{ "e", "GPU: exact tracing of every kernel for a while (60 s, or --gpu-exact's), or back to sampled" },
	{ "T", "next colour theme" },
	{ "S", "save the settings (view, sort, theme...) in xputop.conf" },
	{ "Ctrl-L", "redraw the screen" },
	{ "?  h", "this help" },
	{ "q  F10", "quit" },
	{ NULL, "Flamegraph" },
	{ "Enter", "zoom onto the heaviest callee below (the hot path, while callees outweigh the frame)" },
	{ "z  Backspace", "zoom out one level" },
	{ NULL, "Mouse" },
	{ "click a tab", "switch to its view" },
	{ "click a row", "select it; on a heading: sort by it, again: reverse" },
	{ "click a frame", "zoom the flamegraph onto it; its title: zoom out" },
	{ "wheel", "move the selection" },
};
const unsigned xpu_nkeydocs = sizeof(xpu_keydocs) / sizeof(xpu_keydocs[0]);

/* An optional argument ("[=SECS]") follows its option without a space. */
static const char *space(const struct xpu_optdoc *d)
{
	return d->arg && strncmp(d->arg, "[=", 2) != 0 ? " " : "";
}

void xpu_opts_usage(FILE *f)
{
	fprintf(f, "Usage: xputop [OPTIONS] [-- CMD [ARGS...]]\n"
		   "A top-like live monitor for accelerators: GPU kernels and the CPU stacks that\n"
		   "launched them, Intel NPU driver and firmware activity, and on-CPU samples.\n\n"
		   "Options:\n");
	for (const struct xpu_optdoc *d = xpu_optdocs; d->lng; d++) {
		char left[64];
		if (d->shrt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->shrt, d->lng, space(d), d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->lng, space(d), d->arg ? d->arg : "");
		fprintf(f, "  %-28s %s\n", left, d->help);
	}
	fprintf(f, "\nInteractive keys:\n");
	for (unsigned i = 0; i < xpu_nkeydocs; i++) {
		const struct xpu_keydoc *k = &xpu_keydocs[i];
		if (k->keys)
			fprintf(f, "  %-28s %s\n", k->keys, k->help);
	}
	fprintf(f, "\nExamples:\n"
		   "  sudo xputop                      watch this machine\n"
		   "  sudo xputop -b -j -n 3           three JSON snapshots, then exit\n"
		   "  sudo xputop -w run.xpr           watch and record\n"
		   "  xputop -r run.xpr                replay a recording\n"
		   "\nSee xputop(8) for the fields of each view and what the alerts mean.\n");
}

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

static int parse_pids(struct xpu_opts *o, const char *arg)
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
		if (parse_long(tok, 1, 4194304, &v) < 0) {
			xpu_err("-p: '%s' is not a process id", tok);
			return -1;
		}
		if (o->npids == XPU_MAX_PIDS) {
			xpu_err("-p: at most %d processes", XPU_MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (uint32_t)v;
	}
	if (!o->npids && !o->npid_names) {
		xpu_err("-p needs at least one process id or name");
		return -1;
	}
	return 0;
}

static int parse_view(const char *s)
{
	static const char *names[XPU_VIEW_MAX] = { "gpu", "npu", "cpu" };
	for (int i = 0; i < XPU_VIEW_MAX; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

enum {
	OPT_EXPORT = 256, OPT_WINDOW, OPT_VIEW, OPT_GPU_NO_STACKS, OPT_NPU_DEV, OPT_NPU_PROBE_BINARY, OPT_NPU_SYSFS, OPT_NPU_TDR,
	OPT_NPU_STORM, OPT_NPU_SILENCE, OPT_CONFIG, OPT_NO_CONFIG, OPT_GPU_EXACT, OPT_GPU_SAMPLE,
	OPT_PROMETHEUS, OPT_PROMETHEUS_TOP, OPT_PPROF, OPT_PPROF_INTERVAL, OPT_PPROF_PUSH, OPT_PPROF_PUSH_HEADERS, OPT_PROM_LABEL, OPT_PROM_EXPIRY, OPT_PROM_PROCESSES,
};

/* --gpu-sample SLICE/PERIOD, in milliseconds. */
static int parse_sample(struct xpu_opts *o, const char *arg)
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

static int parse_one(struct xpu_opts *o, int c, const char *arg)
{
	long l;
	switch (c) {
	case 'd':
		if (parse_double(arg, 0.05, 3600, &o->delay_s) < 0)
			return xpu_err("-d: the refresh interval must be 0.05 to 3600 seconds"), -1;
		o->given |= XPU_GIVEN_DELAY;
		return 0;
	case 'p':
		return parse_pids(o, arg);
	case 'F':
		if (parse_long(arg, 1, 10000, &l) < 0)
			return xpu_err("-F: the sampling frequency must be 1 to 10000 Hz"), -1;
		o->hz = (uint32_t)l;
		o->given |= XPU_GIVEN_FREQ;
		return 0;
	case 'o':
		o->outdir = arg;
		return 0;
	case 't':
		o->theme = arg;
		return 0;
	case 'b':
		o->batch = 1;
		return 0;
	case 'j':
		o->json = o->batch = 1;
		return 0;
	case 'n':
		if (parse_long(arg, 1, 1L << 40, &o->iterations) < 0)
			return xpu_err("-n: expected a positive number of refreshes"), -1;
		return 0;
	case 'w':
		o->record = arg;
		return 0;
	case 'r':
		o->replay = arg;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	case 's':
		o->sort = arg;
		return 0;
	case 'H':
		o->threads = 1;
		return 0;
	case OPT_GPU_NO_STACKS:
		o->gpu_no_stacks = 1;
		return 0;
	case OPT_GPU_EXACT:
		o->gpu_exact = 1;
		if (arg && parse_double(arg, 0.1, 1e7, &o->gpu_exact_s) < 0)
			return xpu_err("--gpu-exact: expected 0.1 or more seconds"), -1;
		return 0;
	case OPT_GPU_SAMPLE:
		return parse_sample(o, arg);
	case OPT_EXPORT:
		o->export_at_end = 1;
		return 0;
	case OPT_WINDOW:
		if (parse_double(arg, 0.1, 86400, &o->window_s) < 0)
			return xpu_err("--window: expected 0.1 to 86400 seconds"), -1;
		o->given |= XPU_GIVEN_WINDOW;
		return 0;
	case OPT_VIEW:
		if ((o->view = parse_view(arg)) < 0)
			return xpu_err("--view: expected gpu, npu or cpu"), -1;
		return 0;
	case OPT_NPU_DEV:
		o->npu_dev = arg;
		return 0;
	case OPT_NPU_PROBE_BINARY:
		o->npu_probe_binary = arg;
		return 0;
	case OPT_NPU_SYSFS:
		o->npu_sysfs = arg;
		return 0;
	case OPT_NPU_TDR:
		if (parse_long(arg, 10, 3600000, &l) < 0)
			return xpu_err("--npu-tdr: expected 10 to 3600000 milliseconds"), -1;
		o->npu_tdr_ms = (uint32_t)l;
		return 0;
	case OPT_NPU_STORM:
		if (parse_double(arg, 1.5, 1000, &o->npu_storm) < 0)
			return xpu_err("--npu-storm: expected a factor of 1.5 to 1000"), -1;
		return 0;
	case OPT_NPU_SILENCE:
		if (parse_long(arg, 10, 3600000, &l) < 0)
			return xpu_err("--npu-silence: expected 10 to 3600000 milliseconds"), -1;
		o->npu_silence_ms = (uint32_t)l;
		return 0;
	case OPT_PROMETHEUS: {
		char host[256], err[320];
		unsigned port;
		if (xpu_prom_http_parse(arg, host, sizeof(host), &port, err, sizeof(err)) < 0)
			return xpu_err("--prometheus: %s", err), -1;
		o->prometheus = arg;
		return 0;
	}
	case OPT_PROMETHEUS_TOP:
		if (parse_long(arg, 0, XPU_METRICS_TOP_MAX, &l) < 0)
			return xpu_err("--prometheus-top: expected 0 to %d kernel series per process",
				       XPU_METRICS_TOP_MAX), -1;
		o->prometheus_top = (uint32_t)l;
		return 0;
	case OPT_PROM_LABEL: {
		static const char *const by[] = { "pid", "comm", "cgroup", "container" };
		for (int i = 0; i < 4; i++)
			if (strcmp(arg, by[i]) == 0)
				return o->prometheus_label = i, 0;
		return xpu_err("--prometheus-label: expected pid, comm, cgroup or container, not '%s'", arg), -1;
	}
	case OPT_PROM_EXPIRY:
		if (parse_double(arg, 0, XPU_METRICS_EXPIRY_MAX, &o->prometheus_expiry_s) < 0)
			return xpu_err("--prometheus-expiry: expected 0 to %d seconds", XPU_METRICS_EXPIRY_MAX), -1;
		return 0;
	case OPT_PROM_PROCESSES:
		if (parse_long(arg, 1, XPU_METRICS_PROCESSES_MAX, &l) < 0)
			return xpu_err("--prometheus-processes: expected 1 to %d", XPU_METRICS_PROCESSES_MAX), -1;
		o->prometheus_processes = (uint32_t)l;
		return 0;
	case OPT_PPROF:
		o->pprof_dir = arg;
		return 0;
	case OPT_PPROF_INTERVAL:
		if (parse_double(arg, 0.1, 86400, &o->pprof_interval_s) < 0)
			return xpu_err("--pprof-interval: expected 0.1 to 86400 seconds"), -1;
		return 0;
	case OPT_PPROF_PUSH:
		if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0)
			return xpu_err("--pprof-push: expected an http:// or https:// URL, not '%s'", arg), -1;
		o->pprof_push = arg;
		return 0;
	case OPT_PPROF_PUSH_HEADERS:
		o->pprof_push_headers = arg;
		return 0;
	case OPT_CONFIG:
		o->config = arg;
		return 0;
	case OPT_NO_CONFIG:
		o->no_config = 1;
		return 0;
	default:
		return -1;
	}
}

int xpu_opts_parse(struct xpu_opts *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "theme", required_argument, NULL, 't' },
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "write", required_argument, NULL, 'w' },
		{ "read", required_argument, NULL, 'r' },
		{ "export", no_argument, NULL, OPT_EXPORT },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "view", required_argument, NULL, OPT_VIEW },
		{ "sort", required_argument, NULL, 's' },
		{ "threads", no_argument, NULL, 'H' },
		{ "gpu-no-stacks", no_argument, NULL, OPT_GPU_NO_STACKS },
		{ "gpu-exact", optional_argument, NULL, OPT_GPU_EXACT },
		{ "gpu-sample", required_argument, NULL, OPT_GPU_SAMPLE },
		{ "npu-dev", required_argument, NULL, OPT_NPU_DEV },
		{ "npu-probe-binary", required_argument, NULL, OPT_NPU_PROBE_BINARY },
		{ "npu-sysfs", required_argument, NULL, OPT_NPU_SYSFS },
		{ "npu-tdr", required_argument, NULL, OPT_NPU_TDR },
		{ "npu-storm", required_argument, NULL, OPT_NPU_STORM },
		{ "npu-silence", required_argument, NULL, OPT_NPU_SILENCE },
		{ "prometheus", required_argument, NULL, OPT_PROMETHEUS },
		{ "prometheus-top", required_argument, NULL, OPT_PROMETHEUS_TOP },
		{ "prometheus-label", required_argument, NULL, OPT_PROM_LABEL },
		{ "prometheus-expiry", required_argument, NULL, OPT_PROM_EXPIRY },
		{ "prometheus-processes", required_argument, NULL, OPT_PROM_PROCESSES },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "pprof-interval", required_argument, NULL, OPT_PPROF_INTERVAL },
		{ "pprof-push", required_argument, NULL, OPT_PPROF_PUSH },
		{ "pprof-headers", required_argument, NULL, OPT_PPROF_PUSH_HEADERS },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "no-config", no_argument, NULL, OPT_NO_CONFIG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->delay_s = 1.0;
	o->hz = 99;
	o->window_s = 10;
	o->view = -1;
	o->prometheus_top = XPU_METRICS_TOP_DEFAULT;
	o->prometheus_expiry_s = XPU_METRICS_EXPIRY_DEFAULT;
	o->prometheus_processes = XPU_METRICS_PROCESSES_DEFAULT;
	o->pprof_interval_s = 10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+d:p:F:o:t:bjn:w:r:s:HvhV", longs, NULL)) != -1) {
		if (c == 'h') {
			xpu_opts_usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("xputop %s\n", XPU_VERSION);
			return 1;
		}
		if (c == '?' || parse_one(o, c, optarg) < 0) {
			fprintf(stderr, "Try 'xputop --help' for more information.\n");
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->replay && o->cmd) {
		xpu_err("a command to run (-- CMD) cannot be combined with replaying a recording (-r)");
		return -1;
	}
	if ((o->pprof_push || o->pprof_interval_s != 10) && !o->pprof_dir) {
		xpu_err("--pprof-push and --pprof-interval go with --pprof DIR");
		return -1;
	}
	if (o->pprof_push_headers && !o->pprof_push) {
		xpu_err("--pprof-headers goes with --pprof-push URL");
		return -1;
	}
	if (o->config && o->no_config) {
		xpu_err("--config and --no-config contradict each other");
		return -1;
	}
	if (o->replay && o->record && strcmp(o->replay, o->record) == 0) {
		xpu_err("-r and -w name the same file");
		return -1;
	}
	return 0;
}
