/* SPDX-License-Identifier: GPL-2.0-only */
/* Starting what feeds the session: a replay (a recording or a bpftrace
 * log), or live, the service thread, the symbolizer, the command (-- CMD)
 * and this xputop's own probes (CPU sampling, GPU, NPU, NVML), which a
 * client of another xputop loads ahead, for a takeover. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "child.h"
#include "err.h"
#include "gpu_probes.h"
#include "import_bpftrace.h"
#include "inject_lib.h"
#include "record.h"
#include "service.h"
#include "source.h"
#include "source_cpu.h"
#include "source_gpu.h"
#include "source_npu.h"
#include "source_nvml.h"
#include "symbolize.h"
#include "sys.h"

/* Jobs waiting for the service thread at most (service.h). */
#define SERVICE_QUEUE 4096

struct xpu_session_cfg app_session_cfg(const struct xpu_opts *o, uint32_t hz, uint64_t interval)
{
	struct xpu_session_cfg c = {
		.sample_hz = hz,
		.interval_ns = interval,
		.window_ns = (uint64_t)(o->window_s * 1e9),
		.npu = { .tdr_ms = o->npu_tdr_ms, .storm_factor = o->npu_storm,
			 .silence_ms = o->npu_silence_ms },
		.gpu = { .mode = o->gpu_exact ? XPU_GPU_MODE_EXACT : XPU_GPU_MODE_SAMPLED,
			 .slice_ms = o->gpu_slice_ms ? o->gpu_slice_ms : XPU_GPU_SLICE_MS,
			 .period_ms = o->gpu_period_ms ? o->gpu_period_ms : XPU_GPU_PERIOD_MS,
			 .exact_until = o->gpu_exact && o->gpu_exact_s > 0 ?
						xpu_now_mono() + (uint64_t)(o->gpu_exact_s * 1e9) : 0 },
	};
	return c;
}

int app_open_replay(struct app *a)
{
	char err[512];
	a->replay = xpu_rec_open(a->o.replay, &a->sess.dict, err, sizeof(err));
	if (!a->replay) {
		/* Not a recording: perhaps the text of the NPU tutorial's bpftrace script. */
		char ierr[256];
		a->import = xpu_import_bpftrace(a->o.replay, (uint64_t)(a->o.delay_s * 1e9), &a->sess.dict,
					       ierr, sizeof(ierr));
		if (a->import)
			return 0;
		/* A file that is no recording at all was perhaps meant as a log:
		 * the importer says what it looked like and why it is not one. */
		xpu_err("%s: %s", a->o.replay, strstr(err, "not an xputop recording") ? ierr : err);
		return -1;
	}
	if (xpu_rec_verify(a->replay) < 0) {
		xpu_err("%s: %s", a->o.replay, xpu_rec_error(a->replay));
		return -1;
	}
	if (*xpu_rec_warning(a->replay))
		xpu_warn("%s: %s", a->o.replay, xpu_rec_warning(a->replay));
	return 0;
}

/* A bpftrace log replays into the NPU model only, paced at -d. */
static int start_import(struct app *a)
{
	const struct xpu_import_stats *st = xpu_import_stats(a->import);
	struct xpu_session_cfg cfg = app_session_cfg(&a->o, a->o.hz, (uint64_t)(a->o.delay_s * 1e9));
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	a->sess.replay = 1;
	snprintf(a->sess.host, sizeof(a->sess.host), "bpftrace log");
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "%s", a->o.replay);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_OFF, "a bpftrace log holds no CPU samples");
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_OFF, "a bpftrace log holds no GPU activity");
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_OFF, "a bpftrace log holds no GPU devices");
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE, "replaying the bpftrace log %s%s",
			   a->o.replay, st->untimed ? " (counts only: it has no times, so no rates, jobs or alerts)" : "");
	a->sess.npu.untimed = st->untimed;
	a->sess.npu.fn_lat_absent = 1;	/* calls and returns are not paired: no durations */
	xpu_npu_model_source(&a->sess.npu, "function latency", XPU_SRC_OFF, "no latency in this log");
	if (st->untimed)
		xpu_npu_model_source(&a->sess.npu, "bpftrace log", XPU_SRC_ACTIVE,
				     "%llu calls as %s: counts only, the log has no times (no rates, jobs or "
				     "alerts), %llu lines not understood%s",
				     (unsigned long long)st->calls, st->form, (unsigned long long)st->bad,
				     st->truncated ? ", cut at 512 MiB" : "");
	else
		xpu_npu_model_source(&a->sess.npu, "bpftrace log", XPU_SRC_ACTIVE,
				     "%llu %s over %.1f s (%llu of them also job, IPC, memory or power events), "
				     "%llu lines not understood%s",
				     (unsigned long long)st->calls, st->form, (double)(st->last_ms - st->first_ms) / 1e3,
				     (unsigned long long)st->mapped, (unsigned long long)st->bad,
				     st->truncated ? ", cut at 512 MiB" : "");
	if (st->bad)
		xpu_warn("%s: %llu lines not understood (the first is line %llu); they are left out",
			 a->o.replay, (unsigned long long)st->bad, (unsigned long long)st->first_bad);
	if (st->summary_mismatch)
		xpu_warn("%s: the @calls map disagrees with the lines for %llu functions (%s)", a->o.replay,
			 (unsigned long long)st->summary_mismatch, st->first_mismatch);
	return 0;
}

static void mark_replay(void *arg, struct xpu_dict *d)
{
	xpu_rec_mark_stacks(arg, d);
}

int app_start_replay(struct app *a)
{
	if (a->import)
		return start_import(a);
	const struct xpu_rec_meta *m = xpu_rec_meta(a->replay);
	struct xpu_session_cfg cfg = app_session_cfg(&a->o, m->sample_hz, m->interval_ns);
	if (xpu_session_start(&a->sess, &cfg) < 0)
		return -1;
	a->sess.replay = 1;
	a->sess.ncpus = m->ncpus;
	if (xpu_session_add_holder(&a->sess, mark_replay, a->replay) < 0)
		return -1;
	snprintf(a->sess.host, sizeof(a->sess.host), "%s", m->host);
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "%s", a->o.replay);
	xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_ACTIVE, "replaying %s (recorded on %s, %s)",
			   a->o.replay, m->host, m->kernel);
	xpu_session_status(&a->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE, "replaying %s: GPU activity as recorded",
			   a->o.replay);
	xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_ACTIVE, "replaying %s: GPU devices as NVML "
				"reported them on %s", a->o.replay, m->host);
	xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_ACTIVE, "replaying %s: NPU activity as recorded",
			   a->o.replay);
	xpu_npu_model_source(&a->sess.npu, "replay", XPU_SRC_ACTIVE, "events recorded on %s (%s)",
			     m->host, m->kernel);
	if (!(a->o.given & XPU_GIVEN_DELAY) && m->interval_ns)	/* replay at the recorded pace by default */
		a->o.delay_s = (double)m->interval_ns / 1e9;
	return 0;
}

/* The GPU device view: NVML, unless XPUTOP_NVML=off. */
static int start_nvml(struct app *a)
{
	const char *lib = xpu_nvml_lib_path();
	if (lib && strcmp(lib, "off") == 0) {
		xpu_gpudev_model_status(&a->sess.gpudev, XPU_SRC_OFF, "turned off by XPUTOP_NVML=off");
		return 0;
	}
	struct xpu_source *src = xpu_source_nvml_new(&a->sess, lib, a->sess.cfg.interval_ns);
	if (src && xpu_session_add_source(&a->sess, src) == 0)
		return 0;
	xpu_source_destroy(src);
	xpu_err("cannot start the GPU device view: out of memory");
	return -1;
}

/* The command waits at its gate until every source is ready. */
int app_start_child(struct app *a, const char *lib)
{
	if (!lib)
		xpu_warn("libxputop_inject.so was not found next to xputop or in its library directory: "
			 "%s runs without it, so only its launches are seen", a->o.cmd[0]);
	if (a->o.npids == XPU_MAX_PIDS) {
		xpu_err("too many processes to watch with -p and a command");
		return -1;
	}
	if (xpu_child_spawn(&a->child, a->o.cmd, lib, a->tui ? (a->o.outdir ? a->o.outdir : ".") : NULL) < 0)
		return -1;
	a->o.pids[a->o.npids++] = (uint32_t)a->child.pid;
	return 0;
}

/* -p (with -- CMD, the command and what it starts): 0, or -1 out of memory. */
int app_watch_pids(struct app *a, uint64_t types)
{
	if (!a->o.npids)
		return 0;
	if (xpu_pidset_init(&a->watch, a->o.pids, a->o.npids, a->o.cmd != NULL) < 0) {
		xpu_err("out of memory");
		return -1;
	}
	xpu_session_watch(&a->sess, &a->watch, types);
	return 0;
}

/* The session, the service thread and the symbolizer: a client has them
 * too, to take over. */
int app_start_services(struct app *a, const struct xpu_session_cfg *cfg)
{
	if (xpu_session_start(&a->sess, cfg) < 0)
		return -1;
	a->svc = xpu_service_new(SERVICE_QUEUE);
	if (!a->svc) {
		xpu_err("cannot start the service thread: %s", strerror(errno));
		return -1;
	}
	a->sym = xpu_sym_new(&a->sess.dict, a->svc);
	return a->sym ? 0 : -1;
}

static struct xpu_cpu_source_opts cpu_opts(const struct app *a)
{
	return (struct xpu_cpu_source_opts){
		.hz = a->o.hz, .pids = a->o.pids, .npids = a->o.npids, .follow_forks = a->o.cmd != NULL,
	};
}

static struct xpu_npu_source_opts npu_opts(const struct app *a)
{
	return (struct xpu_npu_source_opts){
		.dev_path = a->o.npu_dev, .probe_binary = a->o.npu_probe_binary, .sysfs_root = a->o.npu_sysfs,
		.pids = a->o.pids, .npids = a->o.npids, .no_latency = a->o.npu_no_latency,
	};
}

static uint32_t online_cpus(void)
{
	int *cpus = NULL;
	int n = xpu_sys_online_cpus(&cpus);
	free(cpus);
	return n > 0 ? (uint32_t)n : 0;
}

/* The CPU sampler: attached from the preload where there is one. */
static struct xpu_source *start_cpu(struct app *a, const struct xpu_cpu_source_opts *co)
{
	struct xpu_source *cpu = a->pre.cpu;
	a->pre.cpu = NULL;
	if (!cpu)
		return xpu_source_cpu_new(&a->sess, a->sym, co);
	if (xpu_source_cpu_attach(cpu) == 0)
		return cpu;
	xpu_source_destroy(cpu);
	return NULL;
}

static struct xpu_source *start_npu(struct app *a, const struct xpu_npu_source_opts *no)
{
	struct xpu_source *npu = a->pre.npu;
	a->pre.npu = NULL;
	if (!npu)
		return xpu_source_npu_new(&a->sess, no);
	xpu_source_npu_attach(npu);
	return npu;
}

/* This xputop's own probes: CPU sampling, the GPU socket and probes, NPU
 * tracing, NVML. */
int app_start_probes(struct app *a)
{
	/* Without BTF no BPF program loads; the rest still works (one message). */
	int bpf = xpu_sys_check_btf() == 0;
	xpu_sys_libbpf_logging(a->o.verbose);
	a->sess.ncpus = online_cpus();
	const char *lib = xpu_inject_lib_path();
	struct xpu_cpu_source_opts co = cpu_opts(a);
	/* A CPU sampler that cannot load (said why) leaves the other views. */
	uint64_t t0 = xpu_now_mono();
	struct xpu_source *cpu = bpf ? start_cpu(a, &co) : NULL;
	uint64_t t1 = xpu_now_mono();
	if (cpu && xpu_session_add_source(&a->sess, cpu) == 0)
		a->role.cpu = cpu;
	else
		xpu_session_status(&a->sess, XPU_SRC_CPU, XPU_SRC_FAILED, "%s",
				   bpf ? "CPU sampling is off: its BPF program did not load (see the message at start)"
				       : "CPU sampling is off: this kernel has no usable BTF for BPF programs");
	char werr[320];
	const char *waiters = a->o.gpu_waiters_spec ? a->o.gpu_waiters_spec : XPU_GPU_WAITERS_DEFAULT;
	a->o.ngpu_waiters = xpu_gpu_waiters_parse(waiters, a->o.gpu_waiters, XPU_GPU_MAX_WAITERS, werr, sizeof(werr));
	struct xpu_gpu_source_opts go = {
		.inject_lib = lib, .no_stacks = a->o.gpu_no_stacks, .no_bpf = !bpf, .locked = a->role.locked,
		.probes = a->pre.gpu, .waiters = a->o.gpu_waiters,
		.nwaiters = a->o.ngpu_waiters > 0 ? a->o.ngpu_waiters : 0,
		.nodes = a->o.gpu_nodes.on ? &a->o.gpu_nodes : NULL, .own_hz = a->o.gpu_own_hz,
	};
	a->pre.gpu = NULL;
	struct xpu_source *gpu = xpu_source_gpu_new(&a->sess, a->sym, a->svc, &go);
	uint64_t t2 = xpu_now_mono();
	if (!gpu)
		return -1;
	xpu_session_add_source(&a->sess, gpu);
	a->role.gpu = gpu;
	struct xpu_npu_source_opts no = npu_opts(a);
	struct xpu_source *npu = bpf ? start_npu(a, &no) : NULL;
	uint64_t t3 = xpu_now_mono();
	if (npu)
		xpu_session_add_source(&a->sess, npu);
	else if (bpf && (a->o.npu_dev || a->o.npu_probe_binary))
		return -1;	/* what was asked for by name cannot be done */
	else if (!bpf)
		xpu_session_status(&a->sess, XPU_SRC_NPU, XPU_SRC_FAILED, "%s",
				   "NPU tracing is off: this kernel has no usable BTF for BPF programs");
	if (start_nvml(a) < 0)
		return -1;
	xpu_debug("the probes started in %.0f ms: CPU sampling %.0f, GPU %.0f, NPU %.0f, NVML %.0f",
		  (double)(xpu_now_mono() - t0) / 1e6, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
		  (double)(t3 - t2) / 1e6, (double)(xpu_now_mono() - t3) / 1e6);
	a->role.collecting = 1;
	snprintf(a->sess.source_name, sizeof(a->sess.source_name), "own probes");
	return 0;
}

/* What a preload says goes to -v only: a load that failed is tried again,
 * and said, when this xputop takes over. */
static void preload_sink(void *ctx, int level, const char *msg)
{
	const struct app *a = ctx;
	if (a->o.verbose)
		fprintf(stderr, "xputop: (loading the probes to take over with) %s%s\n",
			level == XPU_LOG_WARN ? "warning: " : "", msg);
}

/* A client loads its own probes at the start, attaching none: nothing runs
 * in the watched programs, but a takeover then only attaches, skipping the
 * verifier (most of an xputop's start, seconds on a loaded machine). */
void app_preload_probes(struct app *a)
{
	uint64_t t0 = xpu_now_mono();
	xpu_log_set_sink(preload_sink, a);	/* before the screen: no sink to keep */
	if (xpu_sys_check_btf() == 0) {
		xpu_sys_libbpf_logging(a->o.verbose);
		struct xpu_cpu_source_opts co = cpu_opts(a);
		struct xpu_npu_source_opts no = npu_opts(a);
		co.ncpus = online_cpus();	/* this machine's CPUs size the ring, as at the takeover */
		a->pre.cpu = xpu_source_cpu_load(&a->sess, a->sym, &co);
		a->pre.gpu = xpu_gpu_probes_load(a->sym, &a->sess.dict, a->svc);
		a->pre.npu = xpu_source_npu_load(&a->sess, &no);
	}
	xpu_log_set_sink(NULL, NULL);
	xpu_debug("loaded the probes to take over with in %.0f ms (CPU %s, GPU %s, NPU %s): attached only if "
		  "the collector goes", (double)(xpu_now_mono() - t0) / 1e6, a->pre.cpu ? "ready" : "failed",
		  a->pre.gpu ? "ready" : "failed", a->pre.npu ? "ready" : "failed");
}
