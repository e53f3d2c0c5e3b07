/* SPDX-License-Identifier: GPL-2.0-only */
#include "event.h"

#include <stddef.h>

#include "dict.h"

/* A tick longer than a day is not a refresh interval but a damaged field; a
 * tick of zero length would make every rate a division by zero. */
#define TICK_MAX_NS (24ULL * 3600 * 1000000000)

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

/* Which fields of each event type are dictionary ids. */
struct id_field {
	uint16_t off;
	uint8_t kind;
};

#define STR(f) { offsetof(struct xpu_event, f), XPU_ID_STRING }
#define STK(f) { offsetof(struct xpu_event, f), XPU_ID_STACK }
static const struct id_field cpu_ids[] = { STK(cpu.stack), STR(cpu.comm), STR(cpu.tcomm), STR(cpu.user) };
static const struct id_field launch_ids[] = { STK(launch.stack), STR(launch.api), STR(launch.comm) };
static const struct id_field kernel_ids[] = { STR(kernel.name), STR(kernel.comm) };
static const struct id_field memcpy_ids[] = { STR(memcpy.comm) };
static const struct id_field gproc_ids[] = { STR(gproc.comm) };
static const struct id_field slice_ids[] = { STR(slice.comm) };
static const struct id_field npu_ids[] = { STR(npu.comm) };
static const struct id_field gdev_ids[] = { STR(gdev.name), STR(gdev.bus) };
static const struct id_field gdproc_ids[] = { STR(gdproc.comm), STR(gdproc.user) };
/* A power event's aux names its reason or event in the dictionary. */
static const struct id_field npu_pm_ids[] = { STR(npu.comm), STR(npu.aux) };
/* A driver function event's code names the function. */
static const struct id_field npu_fn_ids[] = { STR(npu.comm), STR(npu.code) };
static const struct id_field nclient_ids[] = { STR(nclient.comm) };
static const struct id_field pcmd_ids[] = { STR(pcmd.cmdline) };
#undef STR
#undef STK

static int fields(uint16_t type, const struct id_field **f, size_t *n)
{
	switch (type) {
	case XPU_EV_TICK:
	case XPU_EV_DROP:
	case XPU_EV_PROC_EXIT:
	case XPU_EV_PROC_STAT:
	case XPU_EV_THREAD_STAT:
	case XPU_EV_SYS_STAT:
	case XPU_EV_CPU_STAT:
	case XPU_EV_GPU_OWN:
	case XPU_EV_GPU_CPU:
	case XPU_EV_GPU_BORN:
		*n = 0;
		return 0;
	case XPU_EV_CPU_SAMPLE: *f = cpu_ids; *n = sizeof(cpu_ids) / sizeof(cpu_ids[0]); return 0;
	case XPU_EV_GPU_LAUNCH: *f = launch_ids; *n = sizeof(launch_ids) / sizeof(launch_ids[0]); return 0;
	case XPU_EV_GPU_KERNEL: *f = kernel_ids; *n = sizeof(kernel_ids) / sizeof(kernel_ids[0]); return 0;
	case XPU_EV_GPU_MEMCPY: *f = memcpy_ids; *n = 1; return 0;
	case XPU_EV_GPU_PROC: *f = gproc_ids; *n = 1; return 0;
	case XPU_EV_GPU_SLICE: *f = slice_ids; *n = 1; return 0;
	case XPU_EV_NPU_PM: *f = npu_pm_ids; *n = 2; return 0;
	case XPU_EV_NPU_FUNC:
	case XPU_EV_NPU_FUNC_LAT:
		*f = npu_fn_ids;
		*n = 2;
		return 0;
	case XPU_EV_NPU_DEV: *n = 0; return 0;
	case XPU_EV_NPU_CLIENT: *f = nclient_ids; *n = 1; return 0;
	case XPU_EV_PROC_CMDLINE: *f = pcmd_ids; *n = 1; return 0;
	case XPU_EV_GPU_DEV: *f = gdev_ids; *n = 2; return 0;
	case XPU_EV_GPU_DEV_LINK: *n = 0; return 0;
	case XPU_EV_GPU_DEV_PROC: *f = gdproc_ids; *n = 2; return 0;
	case XPU_EV_NPU_IOCTL:
	case XPU_EV_NPU_IPC:
	case XPU_EV_NPU_JOB:
	case XPU_EV_NPU_MEM:
	case XPU_EV_NPU_L0:
	case XPU_EV_NPU_BUSY:
		*f = npu_ids;
		*n = 1;
		return 0;
	default:
		return -1;
	}
}

int xpu_event_type_known(uint16_t type)
{
	const struct id_field *f;
	size_t n;
	return fields(type, &f, &n) == 0;
}

int xpu_event_ids(struct xpu_event *ev, xpu_event_id_fn fn, void *ctx)
{
	const struct id_field *f = NULL;
	size_t n;
	if (fields(ev->type, &f, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t *id = (uint32_t *)((char *)ev + f[i].off);
		int r = fn(ctx, id, f[i].kind);
		if (r)
			return r;
	}
	return 0;
}

/* Id 0 means "none" everywhere; any other id must already be in the dictionary. */
static int defined(void *ctx, uint32_t *id, int kind)
{
	const struct xpu_dict *d = ctx;
	if (kind == XPU_ID_STACK)
		return *id && !xpu_dict_stack_valid(d, *id) ? kind + 1 : 0;
	return *id > xpu_dict_nstr(d) ? kind + 1 : 0;
}

static int check_tick(const struct xpu_ev_tick *t, const char **why)
{
	if (t->interval_ns == 0 || t->interval_ns > TICK_MAX_NS)
		return bad(why, "tick interval is zero or longer than a day");
	if (t->sample_hz > 1000000 || (t->collect & ~XPU_TICK_BITS))
		return bad(why, "tick with a sampling rate over 1 MHz or unknown collection flags");
	return 0;
}

/* Device samples: an index the models can hold, shares that are shares. */
static int check_gpu_dev(const struct xpu_event *ev, const char **why)
{
	const struct xpu_ev_gpu_dev *g = &ev->gdev;
	const struct xpu_ev_gpu_dev_proc *p = &ev->gdproc;
	switch (ev->type) {
	case XPU_EV_GPU_DEV:
		if (g->index >= XPU_GPU_DEV_MAX)
			return bad(why, "GPU device index over 63");
		if (g->util_gpu > 100 || g->util_mem > 100)
			return bad(why, "GPU utilization over 100%");
		if ((g->flags & XPU_GPU_DEV_MEM) && g->mem_used_mib > g->mem_total_mib)
			return bad(why, "GPU memory used is more than its total");
		return 0;
	case XPU_EV_GPU_DEV_LINK:
		return ev->glink.index >= XPU_GPU_DEV_MAX ? bad(why, "GPU device index over 63") : 0;
	case XPU_EV_GPU_DEV_PROC:
		if (p->index >= XPU_GPU_DEV_MAX)
			return bad(why, "GPU device index over 63");
		if (p->sm_pct > 100 || p->mem_pct > 100 || p->enc_pct > 100 || p->dec_pct > 100)
			return bad(why, "a process's GPU share over 100%");
		return 0;
	}
	return 0;
}

/* What /proc can say: a state letter, a busy share that is a share, memory
 * used within the total. */
static int check_stat(const struct xpu_event *ev, const char **why)
{
	if (ev->type == XPU_EV_PROC_STAT &&
	    (ev->pstat.state < 'A' || ev->pstat.state > 'z' || !ev->pid || ev->tid))
		return bad(why, "a process stat without a process or a state letter");
	if (ev->type == XPU_EV_THREAD_STAT &&
	    (ev->pstat.state < 'A' || ev->pstat.state > 'z' || !ev->pid || !ev->tid || ev->pstat.rss_bytes))
		return bad(why, "a thread stat without a process, a thread or a state letter");
	if ((ev->type == XPU_EV_PROC_STAT || ev->type == XPU_EV_THREAD_STAT) &&
	    ((ev->pstat.flags & ~XPU_PSTAT_NICE_VIRT) || ev->pstat.nice < -20 || ev->pstat.nice > 19))
		return bad(why, "a process stat with unknown flags or a nice value out of -20..19");
	if (ev->type == XPU_EV_PROC_CMDLINE && (!ev->pid || ev->tid))
		return bad(why, "a command line without a process");
	if (ev->type == XPU_EV_CPU_STAT &&
	    (ev->pid || ev->tid >= XPU_CPU_STAT_MAX || ev->sys.flags != XPU_SYS_BUSY || ev->sys.busy_pct100 > 10000))
		return bad(why, "a CPU's stat without a CPU number under 1024 or a busy share");
	if (ev->type != XPU_EV_SYS_STAT)
		return 0;
	const struct xpu_ev_sys_stat *y = &ev->sys;
	if (y->flags & ~XPU_SYS_BITS)
		return bad(why, "unknown machine stat flags");
	if ((y->flags & XPU_SYS_BUSY) && y->busy_pct100 > 10000)
		return bad(why, "machine CPU busy over 100%");
	if ((y->flags & XPU_SYS_MEM) && y->mem_used_kib > y->mem_total_kib)
		return bad(why, "memory used is more than its total");
	return 0;
}

int xpu_event_check(const struct xpu_event *ev, const struct xpu_dict *d, const char **why)
{
	struct xpu_event copy = *ev;
	if (ev->source >= XPU_SRC_MAX)
		return bad(why, "unknown source");
	if (ev->type == XPU_EV_TICK)
		return check_tick(&ev->tick, why);
	if (check_gpu_dev(ev, why) || check_stat(ev, why))
		return -1;
	if ((ev->type == XPU_EV_NPU_DEV && ev->ndev.index >= XPU_NPU_DEV_MAX) ||
	    (ev->type == XPU_EV_NPU_CLIENT && ev->nclient.index >= XPU_NPU_DEV_MAX))
		return bad(why, "NPU device index over 3");
	if (ev->type == XPU_EV_DROP && ev->drop.source >= XPU_SRC_MAX)
		return bad(why, "drop names an unknown source");
	/* The NPU model tracks each job on its own: an event standing for
	 * 4 billion of them would take it minutes. */
	if (ev->type == XPU_EV_NPU_JOB && ev->npu.count > 1)
		return bad(why, "a job event stands for more than one job");
	/* A slice's length weighs every estimate of its process. */
	if (ev->type == XPU_EV_GPU_SLICE && (ev->slice.end < ev->time || ev->slice.end - ev->time > TICK_MAX_NS))
		return bad(why, "a traced slice ends before it starts or lasts more than a day");
	if (ev->type == XPU_EV_GPU_SLICE && ev->slice.mode > XPU_GPU_MODE_WHOLE)
		return bad(why, "a traced slice of an unknown mode");
	/* Own-time samples weigh every estimate of their process; a thread is
	 * sampled at most at 100 kHz (core/sources/gpu_own.h). */
	if (ev->type == XPU_EV_GPU_OWN && (!ev->pid || ev->gown.hz == 0 || ev->gown.hz > 100000))
		return bad(why, "own-time samples without a process or with a rate of 0 or over 100 kHz");
	/* CPU time weighs every estimate of its process. */
	if (ev->type == XPU_EV_GPU_CPU &&
	    (!ev->pid || ev->gcpu.slice_ns > ev->gcpu.all_ns || ev->gcpu.whole_ns > ev->gcpu.all_ns - ev->gcpu.slice_ns))
		return bad(why, "CPU time without a process, or more of it in the probes' spans than in all");
	/* A process's start bounds the time its launches are estimated over. */
	if (ev->type == XPU_EV_GPU_BORN && !ev->pid)
		return bad(why, "a process's start without the process");
	switch (xpu_event_ids(&copy, defined, (void *)d)) {
	case 0:
		return 0;
	case -1:
		return bad(why, "unknown event type");
	case XPU_ID_STACK + 1:
		return bad(why, "refers to a stack id not defined yet");
	default:
		return bad(why, "refers to a string id not defined yet");
	}
}
