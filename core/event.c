#include "event.h"

#include "dict.h"

/* A tick longer than a day is not a refresh interval but a damaged field; a
 * tick of zero length would make every rate a division by zero. */
#define TICK_MAX_NS (24ULL * 3600 * 1000000000)

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

/* Id 0 means "none" everywhere; any other id must already be in the dictionary. */
static int check_ids(const struct xpu_dict *d, uint32_t stack, const uint32_t *strs, int n,
		     const char **why)
{
	if (stack > xpu_dict_nstacks(d))
		return bad(why, "refers to a stack id not defined yet");
	for (int i = 0; i < n; i++)
		if (strs[i] > xpu_dict_nstr(d))
			return bad(why, "refers to a string id not defined yet");
	return 0;
}

static int check_tick(const struct xpu_ev_tick *t, const char **why)
{
	if (t->interval_ns == 0 || t->interval_ns > TICK_MAX_NS)
		return bad(why, "tick interval is zero or longer than a day");
	return 0;
}

int xpu_event_check(const struct xpu_event *ev, const struct xpu_dict *d, const char **why)
{
	if (ev->source >= XPU_SRC_MAX)
		return bad(why, "unknown source");
	switch (ev->type) {
	case XPU_EV_TICK:
		return check_tick(&ev->tick, why);
	case XPU_EV_CPU_SAMPLE:
		return check_ids(d, ev->cpu.stack,
				 (const uint32_t[]){ ev->cpu.comm, ev->cpu.tcomm, ev->cpu.user }, 3, why);
	case XPU_EV_DROP:
		return ev->drop.source < XPU_SRC_MAX ? 0 : bad(why, "drop names an unknown source");
	case XPU_EV_PROC_EXIT:
		return 0;
	case XPU_EV_GPU_LAUNCH:
		return check_ids(d, ev->launch.stack,
				 (const uint32_t[]){ ev->launch.api, ev->launch.comm }, 2, why);
	case XPU_EV_GPU_KERNEL:
		return check_ids(d, 0, (const uint32_t[]){ ev->kernel.name, ev->kernel.comm }, 2, why);
	case XPU_EV_GPU_MEMCPY:
		return check_ids(d, 0, &ev->memcpy.comm, 1, why);
	case XPU_EV_GPU_PROC:
		return check_ids(d, 0, &ev->gproc.comm, 1, why);
	case XPU_EV_NPU_IOCTL:
	case XPU_EV_NPU_IPC:
	case XPU_EV_NPU_JOB:
	case XPU_EV_NPU_MEM:
	case XPU_EV_NPU_PM:
	case XPU_EV_NPU_L0:
	case XPU_EV_NPU_BUSY:
		return check_ids(d, 0, &ev->npu.comm, 1, why);
	default:
		return bad(why, "unknown event type");
	}
}
