/* SPDX-License-Identifier: GPL-2.0-only */
/* Command-line options: parsed, checked and printed by --help from the table
 * of settings (settings_table.h). */
#ifndef XPU_OPTS_H
#define XPU_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "gpu_stitch.h"
#include "settings_table.h"

#define XPU_MAX_PIDS 256
#define XPU_MAX_PID_NAMES 16

/* --gpu-own-hz when not given. */
#define XPU_GPU_OWN_HZ_DEFAULT 1000

struct xpu_opts {
	double delay_s;		/* -d */
	uint32_t pids[XPU_MAX_PIDS];	/* -p */
	uint32_t npids;
	char pid_names[XPU_MAX_PID_NAMES][64];	/* -p NAME: resolved at start */
	uint32_t npid_names;
	uint32_t hz;		/* -F */
	const char *outdir;	/* -o */
	const char *theme;	/* -t */
	int batch;		/* -b */
	int json;		/* -j */
	long iterations;	/* -n, 0 = forever */
	const char *record;	/* -w */
	const char *replay;	/* -r */
	int export_at_end;	/* --export */
	double window_s;	/* --window */
	int view;		/* --view, enum xpu_view; -1 = automatic */
	const char *sort;	/* --sort: a column of the view, by its JSON key */
	int threads;		/* -H: threads rather than processes (CPU view) */
	int verbose;		/* -v */
	int gpu_no_stacks;	/* --gpu-no-stacks */
	int gpu_exact;		/* --gpu-exact */
	double gpu_exact_s;	/* --gpu-exact=SECS, 0 = no limit */
	uint32_t gpu_slice_ms, gpu_period_ms;	/* --gpu-sample, 0 = the defaults */
	const char *gpu_waiters_spec;	/* --gpu-waiters, NULL = XPU_GPU_WAITERS_DEFAULT */
	struct xpu_gpu_waiter gpu_waiters[XPU_GPU_MAX_WAITERS];	/* parsed (set at start) */
	int ngpu_waiters;
	struct xpu_gpu_nodes gpu_nodes;	/* --gpu-nodes (off unless given) */
	uint32_t gpu_own_hz;	/* --gpu-own-hz, 0 = off */
	const char *npu_dev;	/* --npu-dev */
	const char *npu_probe_binary;	/* --npu-probe-binary */
	const char *npu_sysfs;		/* --npu-sysfs */
	int npu_no_latency;	/* --npu-no-latency */
	uint32_t npu_tdr_ms;	/* --npu-tdr, 0 = the driver's */
	double npu_storm;	/* --npu-storm, 0 = default */
	uint32_t npu_silence_ms;	/* --npu-silence, 0 = default */
	const char *config;	/* --config, NULL = the default settings file */
	int no_config;		/* --no-config */
	const char *prometheus;	/* --prometheus [ADDR:]PORT */
	uint32_t prometheus_top;	/* --prometheus-top, kernel series per process */
	int prometheus_label;		/* --prometheus-label, enum xpu_metrics_label */
	double prometheus_expiry_s;	/* --prometheus-expiry */
	uint32_t prometheus_processes;	/* --prometheus-processes */
	const char *pprof_dir;	/* --pprof DIR */
	double pprof_interval_s;	/* --pprof-interval */
	const char *pprof_push;	/* --pprof-push URL */
	const char *pprof_push_headers;	/* --pprof-headers FILE */
	unsigned given;		/* XPU_SET_* (config.h): the file's options given here */
	char **cmd;		/* -- CMD ARGS */
};

/* -d was given (the settings file and a replay's pace must not override it):
 * XPU_SET_DELAY of config.h, which includes this file. */
#define XPU_GIVEN_DELAY (1u << 2)

/* A documented interactive key: --help, the TUI's help screen and the man
 * page test all read this one table.  keys == NULL starts a section. */
struct xpu_keydoc {
	const char *keys;
	const char *help;
};
extern const struct xpu_keydoc xpu_keydocs[];
extern const unsigned xpu_nkeydocs;

/* Parses argv.  Returns 0 to run, 1 when it handled --help/--version (exit 0),
 * or -1 after reporting a usage error (exit 2). */
int xpu_opts_parse(struct xpu_opts *o, int argc, char **argv);
void xpu_opts_usage(FILE *f);
/* The options for the bash completion, one a line: SHORT|LONG[=ARG[ VALUE...]]
 * ("-d|--delay=SECS", "|--export", "|--view=VIEW gpu npu cpu"); an
 * optional argument ("--gpu-exact[=SECS]") is left out. */
void xpu_opts_list(FILE *f);

#endif
