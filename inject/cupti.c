/* SPDX-License-Identifier: GPL-2.0-only */
/* CUPTI, reached through dlopen: launch callbacks on the launching thread and
 * kernel/memcpy activity records, turned into wire records.
 *
 * The libcupti used is the one the process already has (PyTorch brings its
 * own), else the system's; without one the library stays dormant.  Only the
 * stable leading fields of the activity records are read (see GPU.md). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "inject.h"
#include "launch_cbids.h"

#define BUF_SIZE (2u << 20)

static struct {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				       CUpti_CallbackId);
	CUptiResult (*activity_enable)(CUpti_ActivityKind);
	CUptiResult (*activity_disable)(CUpti_ActivityKind);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*num_dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*get_version)(uint32_t *);
	CUptiResult (*result_string)(CUptiResult, const char **);
	CUptiResult (*hw_trace)(uint8_t);	/* CUPTI 12.8+, Blackwell: may be missing */
} api;

static struct {
	int loaded;
	int registered;
	CUpti_SubscriberHandle sub;
	int subscribed;
	struct xpu_chan *chan;
	uint32_t flags;
	uint32_t version;
	uint64_t dropped;
	uint32_t last_corr;	/* the latest launch the callbacks saw */
	struct xpu_gaps gaps;
	int tracing;		/* launches are recorded (a slice) */
	int draining;		/* a slice ended; its kernels are awaited with activity on */
	int resume_due;		/* a slice began; its first launch recorded ends the pause */
	int cb_on, act_on;	/* the launch callbacks, kernel (memcpy) activity: on */
	uint64_t act_until;
	uint32_t off_corr;	/* the slice's last launch */
	uint32_t last_record_corr;	/* the latest launch a complete record came for */
} st;

/* How long kernel activity (and the launch callbacks, recording nothing)
 * stay on after a slice for its kernels to run: a graph kernel still
 * running when activity goes off gets a later flush's time as its end and
 * is dropped (inject/gaps.c).  Records come at the agent's flushes (every
 * 20 ms by default), so they stay on for at least one. */
#define ACT_MAX_NS 100000000ULL


/* The correlation id of the launch this thread recorded last.  One API call
 * has one id and is recorded once: the driver launch nested in a runtime
 * launch carries the runtime's id, and on the H100 under PyTorch training
 * one launch's callback came 2, 3, once 36 times with its id (which, each
 * recorded, put the launches estimated 73-95% high; bench/RESULTS.md). */
static __thread uint32_t recorded_corr;
static __thread int recorded_any;

static void *open_cupti(void)
{
	static const char *names[] = {
		"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
	};
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	return h;
}

int xpu_cupti_load(void)
{
	void *h = open_cupti();
	if (!h)
		return -1;
#define SYM(field, name)                                       \
	do {                                                   \
		*(void **)&api.field = dlsym(h, name);         \
		if (!api.field)                                \
			return -1;                             \
	} while (0)
	SYM(subscribe, "cuptiSubscribe");
	SYM(unsubscribe, "cuptiUnsubscribe");
	SYM(enable_callback, "cuptiEnableCallback");
	SYM(activity_enable, "cuptiActivityEnable");
	SYM(activity_disable, "cuptiActivityDisable");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(next_record, "cuptiActivityGetNextRecord");
	SYM(num_dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(get_version, "cuptiGetVersion");
	SYM(result_string, "cuptiGetResultString");
#undef SYM
	*(void **)&api.hw_trace = dlsym(h, "cuptiActivityEnableHWTrace");
	api.get_version(&st.version);
	st.loaded = 1;
	return 0;
}

uint32_t xpu_cupti_version(void)
{
	return st.version;
}

/* GPU timestamps in the clock bpf_ktime_get_ns() uses. */
static uint64_t CUPTIAPI timestamp(void)
{
	return xpu_inj_now();
}

/* *at = corr if corr is later (correlation ids grow; compared across a
 * wrap), from any thread. */
static void corr_max(uint32_t *at, uint32_t corr)
{
	uint32_t last = __atomic_load_n(at, __ATOMIC_RELAXED);
	while ((int32_t)(corr - last) > 0 &&
	       !__atomic_compare_exchange_n(at, &last, corr, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void CUPTIAPI on_launch(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			       const void *data)
{
	const CUpti_CallbackData *cd = data;
	if (cd->callbackSite != CUPTI_API_ENTER || !st.chan)
		return;
	/* Seen after a slice too, while its kernels are awaited: where the
	 * next slice's launches begin (inject/gaps.c). */
	corr_max(&st.last_corr, cd->correlationId);
	if (!__atomic_load_n(&st.tracing, __ATOMIC_ACQUIRE))
		return;
	if (recorded_any && cd->correlationId == recorded_corr)
		return;
	recorded_corr = cd->correlationId;
	recorded_any = 1;
	/* The pause ends at the slice's first launch recorded, not where the
	 * slice was switched on: a launch that entered with the callbacks
	 * still off can have its kernel queued once activity is on, and would
	 * come as a kernel without its launch (tests/bpf/cupti.sh). */
	if (__atomic_load_n(&st.resume_due, __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&st.resume_due, 0, __ATOMIC_ACQ_REL))
		xpu_gaps_resume(&st.gaps, cd->correlationId - 1);
	xpu_inj_launch(st.chan, cd->correlationId, cbid, dom, cd->functionName);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_SIZE);
	*size = *buffer ? BUF_SIZE : 0;
	*max_records = 0;
}

/* Whether a record of launch corr is sent on.  A complete one tells the
 * drain that every launch before it on its stream has run.  Left out: a
 * launch made after a slice, while its kernels were awaited (not traced);
 * and what a forced flush (at exit, when the monitor leaves) gives of work
 * not finished yet, without its times (CUPTI_TIMESTAMP_UNKNOWN), counted as
 * dropped with CUPTI's. */
static int kept(uint32_t corr, uint64_t start, uint64_t end)
{
	int complete = start && end >= start;
	if (complete)
		corr_max(&st.last_record_corr, corr);
	if (xpu_gaps_outside(&st.gaps, corr))
		return 0;
	if (!complete)
		__atomic_add_fetch(&st.dropped, 1, __ATOMIC_RELAXED);
	return complete;
}

static void put_kernel(const CUpti_ActivityKernel10 *k)
{
	if (!kept(k->correlationId, k->start, k->end))
		return;
	/* Its end is a later flush's (inject/gaps.c): dropped, counted as CUPTI's. */
	if (k->graphId && xpu_gaps_cut(&st.gaps, k->correlationId, k->end)) {
		__atomic_add_fetch(&st.dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	struct xpu_wire_kernel w = {
		.start = k->start, .end = k->end, .corr = k->correlationId,
		.device = k->deviceId, .context = k->contextId, .stream = k->streamId,
		.graph = k->graphId,
	};
	xpu_inj_kernel(st.chan, &w, k->name);
}

static void put_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	if (!kept(m->correlationId, m->start, m->end))
		return;
	struct xpu_wire_memcpy w = {
		.start = m->start, .end = m->end, .bytes = m->bytes, .corr = m->correlationId,
		.device = m->deviceId, .kind = m->copyKind, .stream = m->streamId,
	};
	xpu_chan_put(st.chan, XPU_WIRE_MEMCPY, &w, sizeof(w), NULL, 0);
}

static void put_memset(const CUpti_ActivityMemset4 *m)
{
	if (!kept(m->correlationId, m->start, m->end))
		return;
	struct xpu_wire_memcpy w = {
		.start = m->start, .end = m->end, .bytes = m->bytes, .corr = m->correlationId,
		.device = m->deviceId, .stream = m->streamId,
	};
	xpu_chan_put(st.chan, XPU_WIRE_MEMSET, &w, sizeof(w), NULL, 0);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	while (st.chan && api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL:
			put_kernel((const CUpti_ActivityKernel10 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			put_memcpy((const CUpti_ActivityMemcpy6 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			put_memset((const CUpti_ActivityMemset4 *)rec);
			break;
		default:
			break;
		}
	}
	size_t dropped = 0;
	if (api.num_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
		__atomic_add_fetch(&st.dropped, dropped, __ATOMIC_RELAXED);
	free(buffer);
}

/* Switched only when not so already: a slice starting while the last one's
 * kernels are awaited finds both on, and whether CUPTI counts an enable of
 * what is on (and then wants as many disables) is not documented. */
static int enable_all(uint32_t on)
{
	if (st.cb_on == (int)on)
		return 0;
	st.cb_on = (int)on;
	for (size_t i = 0; i < NCBIDS; i++)
		if (api.enable_callback(on, st.sub, launch_cbids[i].dom, launch_cbids[i].cbid) !=
		    CUPTI_SUCCESS && on)
			return -1;
	return 0;
}

int xpu_cupti_start(struct xpu_chan *chan, uint32_t flags)
{
	static int said_other, said_error;
	const char *why = "";
	if (!st.loaded)
		return XPU_WIRE_STATE_CUPTI_ERROR;
	if (!st.registered) {
		/* The clock must be set before callbacks and activity kinds. */
		if (api.register_timestamp(timestamp) != CUPTI_SUCCESS ||
		    api.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
			return XPU_WIRE_STATE_CUPTI_ERROR;
		st.registered = 1;
	}
	xpu_inj_new_monitor(flags);
	xpu_gaps_reset(&st.gaps);
	/* Nothing is traced before the first slice. */
	xpu_gaps_pause(&st.gaps, __atomic_load_n(&st.last_corr, __ATOMIC_RELAXED));
	__atomic_store_n(&st.resume_due, 0, __ATOMIC_RELAXED);
	st.chan = chan;
	st.flags = flags;
	CUptiResult r = api.subscribe(&st.sub, on_launch, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		xpu_inj_say_once(&said_other, "another CUPTI profiler is attached to this process; "
				 "xputop will not show its GPU kernels");
		st.chan = NULL;
		return XPU_WIRE_STATE_OTHER_SUBSCRIBER;
	}
	if (r != CUPTI_SUCCESS)
		goto fail;
	st.subscribed = 1;
	/* Kernel timestamps from hardware events where the GPU has them
	 * (Blackwell) cost far less than CUPTI's instrumentation; elsewhere the
	 * call fails and nothing changes. */
	if (api.hw_trace)
		api.hw_trace(1);
	return XPU_WIRE_STATE_OK;
fail:
	api.result_string(r, &why);
	xpu_inj_say_once(&said_error, "CUPTI refused to start (%s); xputop will not show this "
			 "process's GPU kernels", why ? why : "?");
	xpu_cupti_stop();
	return XPU_WIRE_STATE_CUPTI_ERROR;
}

static int activity(int on)
{
	if (st.act_on == on)
		return 0;
	st.act_on = on;
	CUptiResult (*f)(CUpti_ActivityKind) = on ? api.activity_enable : api.activity_disable;
	int bad = f(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS;
	if (st.flags & XPU_WIRE_START_MEMCPY)
		bad |= f(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS || f(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS;
	return bad && on ? -1 : 0;
}

/* A slice over: kernel activity and the launch callbacks stay on until a
 * kernel launched after the slice has run (or ACT_MAX_NS), so the slice's
 * kernels, a graph's included, are timed to their own ends; the kernels of
 * the launches made meanwhile are left out (put_kernel). */
static void drain(void)
{
	if (!st.draining)
		return;
	if ((int32_t)(__atomic_load_n(&st.last_record_corr, __ATOMIC_RELAXED) - st.off_corr) <= 0 &&
	    xpu_inj_now() < st.act_until)
		return;
	/* What is complete now gets its times while CUPTI still traces. */
	api.flush_all(0);
	activity(0);
	enable_all(0);
	st.draining = 0;
	xpu_gaps_activity_off(&st.gaps, xpu_inj_now());
}

/* Measured on the H100 (bench/gpu/cost.sh): switching on takes 30 to 55 us,
 * off 20 to 30 us; what CUPTI leaves on every launch once it has traced is
 * in docs/gpu-cost.md. */
int xpu_cupti_trace(int on)
{
	if (!st.subscribed)
		return -1;
	if (!on) {
		__atomic_store_n(&st.tracing, 0, __ATOMIC_RELEASE);
		st.off_corr = __atomic_load_n(&st.last_corr, __ATOMIC_RELAXED);
		/* A slice that recorded no launch. */
		if (__atomic_exchange_n(&st.resume_due, 0, __ATOMIC_ACQ_REL))
			xpu_gaps_resume(&st.gaps, st.off_corr);
		xpu_gaps_pause(&st.gaps, st.off_corr);
		st.act_until = xpu_inj_now() + ACT_MAX_NS;
		st.draining = 1;
		return 0;
	}
	/* The slice's first launch recorded ends the pause (on_launch). */
	__atomic_store_n(&st.resume_due, 1, __ATOMIC_RELEASE);
	st.draining = 0;
	__atomic_store_n(&st.tracing, 1, __ATOMIC_RELEASE);
	return enable_all(1) < 0 || activity(1) < 0 ? -1 : 0;
}

void xpu_cupti_flush(int forced)
{
	if (st.loaded && st.registered) {
		api.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
		drain();
	}
}

void xpu_cupti_stop(void)
{
	if (!st.loaded)
		return;
	__atomic_store_n(&st.tracing, 0, __ATOMIC_RELEASE);
	st.draining = 0;
	api.activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	api.activity_disable(CUPTI_ACTIVITY_KIND_MEMCPY);
	api.activity_disable(CUPTI_ACTIVITY_KIND_MEMSET);
	st.act_on = 0;
	if (st.subscribed) {
		enable_all(0);
		api.unsubscribe(st.sub);
		st.subscribed = 0;
		st.cb_on = 0;
	}
	/* Records still in flight go nowhere once the channel is detached. */
	xpu_cupti_flush(1);
	st.chan = NULL;
}

void xpu_cupti_detach(void)
{
	st.chan = NULL;
}

uint64_t xpu_cupti_dropped(void)
{
	return __atomic_load_n(&st.dropped, __ATOMIC_RELAXED);
}

void xpu_cupti_reset_counts(void)
{
	__atomic_store_n(&st.dropped, 0, __ATOMIC_RELAXED);
}

