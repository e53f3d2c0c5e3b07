/* SPDX-License-Identifier: GPL-2.0-only */
/* CUPTI, reached through dlopen: launch callbacks on the launching thread and
 * kernel/memcpy activity records, turned into wire records.
 *
 * The libcupti used is the one the process already has (PyTorch brings its
 * own), else the system's; without one the library stays dormant.  Only the
 * stable leading fields of the activity records are read (see GPU.md).
 *
 * Between slices CUPTI is detached, not only switched off: once it has
 * traced, CUPTI leaves about 1.4 us on every launch until cuptiFinalize
 * (H100, docs/gpu-cost.md).  A slice's end turns kernel activity off (a
 * slice that launched a CUDA graph: once its kernels have run, the drain)
 * and, once the slice's kernels have their records, asks for the detach;
 * the next launch API call to return does it,
 * as CUPTI's header asks: a forced flush (without it the slice's last
 * records go with CUPTI), then cuptiFinalize.  The next slice attaches
 * again.  A process seen using CUDA graphs while CUPTI was attached is
 * never detached again: CUPTI re-attached after a teardown crashed graph
 * replays with an illegal address (PyTorch turns the teardown off where
 * graphs are used, pytorch/pytorch#112507), and the library's own first
 * detaching prototype failed 4 of 20 runs of bench/gpu/known.cu, which
 * replays a graph.  XPUTOP_CUPTI_DETACH=0 in the process's environment
 * keeps CUPTI attached for the whole connection. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "inject.h"
#include "launch_cbids.h"

/* Each activity buffer CUPTI fills.  A default flush hands a buffer over
 * only once every record in it is complete, so while a thread launches on
 * with kernel activity on, the buffer being filled comes only once full:
 * the drain after a slice that launched a CUDA graph lasts until then.
 * With 2 MB (9,700 kernel records) on the H200 a torch.compile loop
 * launching 134,000 graph kernels a second kept activity on 70-85 ms after
 * each 10 ms slice, 12-24% of the time, and CUPTI's activity costs such a
 * loop +4 to +38% a step; 128 KB (600 records) fill in 4.5 ms there
 * (docs/gpu-cost.md, "The drain's length").  A GPU far behind also gets
 * its records sooner: a buffer no longer waits for 9,700 kernels to run. */
#define BUF_SIZE (128u << 10)

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
	CUptiResult (*finalize)(void);		/* missing: never detached */
} api;

/* Where CUPTI is.  Only a launching thread, in a launch's EXIT callback
 * and holding st.lock, moves DETACH_ASKED to DETACHED. */
enum { DETACHED, ATTACHED, DETACH_ASKED };

static struct {
	/* Held by the agent (and the exit handler) around its CUPTI calls; a
	 * launching thread only tries it, to detach, and never waits. */
	pthread_mutex_t lock;
	int phase;		/* DETACHED, ATTACHED, DETACH_ASKED */
	int no_detach;		/* a CUDA graph seen, XPUTOP_CUPTI_DETACH=0 or no cuptiFinalize */
	int exiting;		/* the process exits: no detach, attach or agent flush any more */
	int marked;		/* mark_exiting is registered */
	uint32_t epoch;		/* attachments: correlation ids are compared within one */
	uint32_t detaches;
	/* What attaching again (agent) and detaching (a launching thread)
	 * took: XPUTOP_INJECT_STATS=1 prints them at exit. */
	uint64_t attach_ns, attach_max, attaches, fin_ns, fin_max;
	uint64_t enable_ns, enable_max, enables;	/* switching callbacks and activity on */
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
	int tracing;		/* launches are recorded: 1 a slice, 2 on throughout */
	int draining;		/* a slice ended; its kernels are awaited with activity on */
	int slice_graph;	/* the slice launched a CUDA graph: its kernels need the drain */
	uint64_t keep_until;	/* a graph call seen: kernel activity stays on until then (keep_activity) */
	uint64_t keep_ns;	/* after each graph call (XPUTOP_GRAPH_ACTIVITY_MS) */
	int awaiting;		/* activity off; the slice's kernels are awaited to detach */
	uint64_t detach_by;
	int resume_due;		/* a slice began; its first launch recorded ends the pause */
	int cb_on, act_on;	/* the launch callbacks, kernel (memcpy) activity: on */
	uint64_t act_until;
	uint32_t off_corr;	/* the slice's last launch */
	uint32_t last_record_corr;	/* the latest launch a complete record came for */
	/* CUPTI's correlation ids stuck (ids_stuck): 0 not, STUCK_WRITING while
	 * a launching thread fills in the id and time, STUCK_SEEN, then
	 * STUCK_TAKEN once the agent ended the span (xpu_cupti_stuck), until an
	 * attachment afresh. */
	int stuck;
	uint32_t stuck_id;	/* the id every call got; its kernels are dropped */
	uint64_t stuck_ns;	/* the first launch seen under it, about */
	uint64_t stucks;	/* times seen */
	/* XPUTOP_INJECT_STATS=1: what the launch callbacks and kernel records
	 * were, printed at exit (counted only then: relaxed adds). */
	int stats;
	struct {
		uint64_t traced, same_id, graph_launches, kernels, kernel_ids, graph_kernels;
		uint32_t last_kernel_corr;
		uint64_t first_graph_ns, loaded_ns;
	} n;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* How long kernel activity (and the launch callbacks, recording nothing)
 * stay on after a slice for its kernels to run: a graph kernel still
 * running when activity goes off gets a later flush's time as its end and
 * is dropped (inject/gaps.c).  Records come at the agent's flushes (every
 * 20 ms by default), so they stay on for at least one. */
#define ACT_MAX_NS 100000000ULL

/* How long CUPTI stays attached after a slice for the slice's kernels to
 * run, when they have not by the time activity goes off: detaching takes
 * what CUPTI holds with a forced flush, and a kernel not run yet comes
 * without its times (dropped).  A GPU further behind than this keeps CUPTI
 * attached from slice to slice: the cost of not detaching, nothing lost. */
#define DETACH_WAIT_NS 2000000000ULL


enum { STUCK_NOT, STUCK_WRITING, STUCK_SEEN, STUCK_TAKEN };

/* XPUTOP_INJECT_STATS=1: the library's and the graph calls' last events
 * before CUPTI's ids stuck (kept until a few after it), printed at exit:
 * what came just before is what sets it off.  Its times line up with
 * another clock's (CLOCK_MONOTONIC) through its zero, printed with it:
 * bench/gpu/empty.cu's stalls of a launching thread against the attaches
 * and detaches (docs/gpu-cost.md). */
#define TRAIL 128
static struct {
	uint64_t t;
	char what;	/* g graph call (arg: cbid, +10000 driver), a/A activity
			 * off/on, t/T/W tracing off/slice/throughout, f/F/x a
			 * detach's start, its flush's end and its end (its
			 * cuptiFinalize's; on a launching thread), b/s an
			 * attach's start and end (cuptiSubscribe and the rest;
			 * on the agent), S ids stuck (arg: the id) */
	uint32_t arg;
} trail[TRAIL];
static uint32_t trail_n, trail_after;

static void note(char what, uint32_t arg)
{
	if (!st.stats || __atomic_load_n(&trail_after, __ATOMIC_RELAXED) > 8)
		return;
	if (__atomic_load_n(&st.stuck, __ATOMIC_RELAXED) != STUCK_NOT)
		__atomic_add_fetch(&trail_after, 1, __ATOMIC_RELAXED);
	uint32_t i = __atomic_fetch_add(&trail_n, 1, __ATOMIC_RELAXED) % TRAIL;
	trail[i].t = xpu_inj_now();
	trail[i].what = what;
	trail[i].arg = arg;
}

/* Launch callbacks in a row on one thread with the id it recorded last,
 * past which CUPTI's ids are taken as stuck: a runtime launch and its
 * nested driver launch are two.  (On the H200, 9 of 17 torch.compile runs
 * under the default mode gave every API call from the 350th-490th on one
 * id, the callbacks on and nothing switched off: after kernel activity was
 * switched on again shortly after the graphs were made, see keep_activity;
 * no graph kernel got a record.  A cuptiFinalize ends it.) */
#define STUCK_RUN 8

/* The correlation id of the launch this thread recorded last.  One API call
 * has one id and is recorded once: the driver launch nested in a runtime
 * launch carries the runtime's id.  (On the H100 under PyTorch training
 * one id came 2, 3, once 36 times; each recorded, the launches were
 * estimated 73-95% high.  That was CUPTI's ids stuck after the library
 * switched the callbacks off while staying attached, see ask_detach.) */
static __thread uint32_t recorded_corr, recorded_epoch;

/* Whether launches are being recorded (st.tracing: 1 in a slice, 2 on
 * throughout), where xputop's CPU sampler can read it: at each sample of a
 * launching thread its BPF program reads this word of the sampled process
 * (core/sources/gpu_own.h), to tell the thread's own CPU time inside slices
 * from that outside them (on throughout, neither: that time is not
 * sampled).  Found by its symbol, never by what the library says. */
XPU_INJ_API volatile uint32_t xputop_tracing;

static void note(char what, uint32_t arg);

static void set_tracing(int on)
{
	note(on == 2 ? 'W' : on ? 'T' : 't', 0);
	__atomic_store_n(&st.tracing, on, __ATOMIC_RELEASE);
	__atomic_store_n(&xputop_tracing, (uint32_t)on, __ATOMIC_RELEASE);
}
static __thread int recorded_any;
static __thread uint32_t same_run;	/* callbacks in a row under recorded_corr */

/* A launching thread saw STUCK_RUN callbacks under one id: the first to see
 * it says so, for the agent (xpu_cupti_stuck).  Never waits. */
static void ids_stuck(uint32_t id)
{
	int z = STUCK_NOT;
	if (!__atomic_compare_exchange_n(&st.stuck, &z, STUCK_WRITING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	st.stuck_id = id;
	st.stuck_ns = xpu_inj_now();
	__atomic_store_n(&st.stuck, STUCK_SEEN, __ATOMIC_RELEASE);
	note('S', id);
}

static void graph_kinds_init(void);

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
	*(void **)&api.finalize = dlsym(h, "cuptiFinalize");
	const char *ka = getenv("XPUTOP_GRAPH_ACTIVITY_MS");
	unsigned long long keep_ms = ka && *ka ? strtoull(ka, NULL, 10) : 2000;
	st.keep_ns = (keep_ms < 3600000 ? keep_ms : 3600000) * 1000000ULL;
	const char *sv = getenv("XPUTOP_INJECT_STATS");
	st.stats = sv && *sv && strcmp(sv, "0") != 0;
	st.n.loaded_ns = xpu_inj_now();
	const char *d = getenv("XPUTOP_CUPTI_DETACH");
	st.no_detach = !api.finalize || (d && strcmp(d, "0") == 0);
	api.get_version(&st.version);
	graph_kinds_init();
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

/* The graph calls the library watches besides the launches: a graph made
 * while CUPTI is attached keeps it attached (the top of this file). */
static const struct {
	CUpti_CallbackDomain dom;
	CUpti_CallbackId cbid;
} graph_cbids[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_ptsz_v12000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphUpload_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphUpload_ptsz_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz },
};
#define NGRAPH_CBIDS (sizeof(graph_cbids) / sizeof(graph_cbids[0]))

/* What each runtime and driver cbid is to graph_call(): 1 a graph launch,
 * 2 another graph call watched, 0 neither.  Looked up on every launch
 * callback (a staying-attached process has them on between slices). */
#define GRAPH_KINDS 1024
_Static_assert((int)CUPTI_RUNTIME_TRACE_CBID_SIZE <= GRAPH_KINDS && (int)CUPTI_DRIVER_TRACE_CBID_SIZE <= GRAPH_KINDS,
	       "graph_kind holds every cbid");
static uint8_t graph_kind[2][GRAPH_KINDS];

static void graph_kinds_init(void)
{
	for (size_t i = 0; i < NGRAPH_CBIDS; i++)
		graph_kind[graph_cbids[i].dom == CUPTI_CB_DOMAIN_DRIVER_API][graph_cbids[i].cbid] = 2;
	graph_kind[0][CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000] = 1;
	graph_kind[0][CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000] = 1;
	graph_kind[1][CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch] = 1;
	graph_kind[1][CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz] = 1;
}

static int graph_call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return 0;
	int d = dom == CUPTI_CB_DOMAIN_DRIVER_API;
	return cbid < GRAPH_KINDS ? graph_kind[d][cbid] : 0;
}

/* At a launch's return on a launching thread, the detach asked for: never
 * waits (the agent in CUPTI: a later launch does it), never while the
 * process exits (cuptiFinalize races CUPTI's own exit there, GPU.md). */
static void detach_here(void)
{
	if (__atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE) || pthread_mutex_trylock(&st.lock))
		return;
	if (st.phase == DETACH_ASKED && !__atomic_load_n(&st.no_detach, __ATOMIC_ACQUIRE)) {
		/* What CUPTI still holds: cuptiFinalize would lose it. */
		note('f', 0);
		uint64_t t0 = xpu_inj_now();
		api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		note('F', 0);
		api.finalize();
		note('x', 0);
		uint64_t d = xpu_inj_now() - t0;
		st.fin_ns += d;
		st.fin_max = d > st.fin_max ? d : st.fin_max;
		st.subscribed = st.registered = st.cb_on = 0;
		__atomic_store_n(&st.act_on, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&st.detaches, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&st.phase, DETACHED, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&st.lock);
}

static int activity(int on);

/* A process using CUDA graphs keeps kernel activity on from each graph
 * call the callbacks see (on its own thread, before the call) for
 * keep_ns (XPUTOP_GRAPH_ACTIVITY_MS, 2 s) while xputop watches: switched
 * on 85-314 ms after the graphs were captured, activity left CUPTI's ids
 * stuck (every API call under one id, no graph kernel recorded) in 4 of 7
 * torch.compile runs on an H200, within 2 ms of the switch-on; later
 * switch-ons, seconds after, never did, nor did the exact mode, which never
 * switches it; kept on, 0 of 17 runs stuck (docs/gpu-cost.md "Ids stuck by
 * CUDA graphs").  The kernels of launches made between slices meanwhile
 * are left out (inject/gaps.c), at the cost of CUPTI timing them.  Where
 * the agent's lock is not had within 50 ms, the agent switches it on at its
 * next flush. */
static void keep_activity(void)
{
	if (!st.keep_ns)	/* XPUTOP_GRAPH_ACTIVITY_MS=0 */
		return;
	__atomic_store_n(&st.keep_until, xpu_inj_now() + st.keep_ns, __ATOMIC_RELEASE);
	if (__atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE) || __atomic_load_n(&st.act_on, __ATOMIC_RELAXED))
		return;
	/* Graph calls are few and slow themselves: this one waits for the
	 * agent's lock, 50 ms at most (the agent may be in CUPTI waiting for
	 * this thread's callback to end). */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 50000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&st.lock, &until))
		return;
	if (st.phase == ATTACHED && st.chan && !st.act_on)
		activity(1);
	pthread_mutex_unlock(&st.lock);
}

static void CUPTIAPI on_launch(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			       const void *data)
{
	const CUpti_CallbackData *cd = data;
	if (cd->callbackSite == CUPTI_API_EXIT) {
		if (__atomic_load_n(&st.phase, __ATOMIC_ACQUIRE) == DETACH_ASKED)
			detach_here();
		return;
	}
	int graph = graph_call(dom, cbid);
	if (graph && !__atomic_load_n(&st.no_detach, __ATOMIC_RELAXED))
		__atomic_store_n(&st.no_detach, 1, __ATOMIC_RELEASE);
	if (graph == 2 || (graph && !__atomic_load_n(&st.keep_until, __ATOMIC_RELAXED)))
		keep_activity();
	if (graph == 2 && cd->callbackSite == CUPTI_API_ENTER)
		note('g', cbid + (dom == CUPTI_CB_DOMAIN_DRIVER_API ? 10000 : 0));
	if (st.stats && graph && cd->callbackSite == CUPTI_API_ENTER) {
		if (graph == 1)
			__atomic_add_fetch(&st.n.graph_launches, 1, __ATOMIC_RELAXED);
		if (!__atomic_load_n(&st.n.first_graph_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&st.n.first_graph_ns, xpu_inj_now(), __ATOMIC_RELAXED);
	}
	if (graph == 1 && __atomic_load_n(&st.tracing, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&st.slice_graph, __ATOMIC_RELAXED))
		__atomic_store_n(&st.slice_graph, 1, __ATOMIC_RELEASE);
	if (graph == 2 || cd->callbackSite != CUPTI_API_ENTER || !st.chan)
		return;
	/* Seen after a slice too, while its kernels are awaited: where the
	 * next slice's launches begin (inject/gaps.c). */
	corr_max(&st.last_corr, cd->correlationId);
	if (!__atomic_load_n(&st.tracing, __ATOMIC_ACQUIRE))
		return;
	uint32_t epoch = __atomic_load_n(&st.epoch, __ATOMIC_RELAXED);
	if (st.stats)
		__atomic_add_fetch(&st.n.traced, 1, __ATOMIC_RELAXED);
	if (recorded_any && cd->correlationId == recorded_corr && recorded_epoch == epoch) {
		if (st.stats)
			__atomic_add_fetch(&st.n.same_id, 1, __ATOMIC_RELAXED);
		if (++same_run == STUCK_RUN)
			ids_stuck(cd->correlationId);
		return;
	}
	same_run = 0;
	recorded_corr = cd->correlationId;
	recorded_epoch = epoch;
	recorded_any = 1;
	/* The pause ends at the slice's first launch recorded, not where the
	 * slice was switched on: a launch that entered with the callbacks
	 * still off can have its kernel queued once activity is on, and would
	 * come as a kernel without its launch (tests/bpf/cupti.sh). */
	if (__atomic_load_n(&st.resume_due, __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&st.resume_due, 0, __ATOMIC_ACQ_REL))
		xpu_gaps_resume(&st.gaps, cd->correlationId - 1);
	xpu_inj_launch(st.chan, cd->correlationId, cbid, dom, cd->functionName,
		       __atomic_load_n(&st.tracing, __ATOMIC_RELAXED) == 2);
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
	/* Every launch since the ids stuck, of any slice, under one id: not
	 * one of them can be told from another, nor from the one launch
	 * recorded with it.  Dropped, counted as CUPTI's. */
	int stuck = __atomic_load_n(&st.stuck, __ATOMIC_ACQUIRE);
	if ((stuck == STUCK_SEEN || stuck == STUCK_TAKEN) && corr == st.stuck_id)
		complete = 0;
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
	if (st.stats) {	/* the agent's thread alone reads records */
		st.n.kernels++;
		st.n.graph_kernels += k->graphId != 0;
		st.n.kernel_ids += k->correlationId != st.n.last_kernel_corr;
		st.n.last_kernel_corr = k->correlationId;
	}
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

/* The launch callbacks, switched on once per attach (a slice starting
 * while the last one's kernels are awaited finds them on, and whether CUPTI
 * counts an enable of what is on, and then wants as many disables, is not
 * documented).  They are never switched off while attached: where CUPTI
 * stays attached that made its correlation ids stick ("Staying attached" in
 * docs/gpu-cost.md); a detach takes them with the subscriber. */
static int enable_launch_callbacks(void)
{
	if (st.cb_on)
		return 0;
	st.cb_on = 1;
	for (size_t i = 0; i < NCBIDS; i++)
		if (api.enable_callback(1, st.sub, launch_cbids[i].dom, launch_cbids[i].cbid) != CUPTI_SUCCESS)
			return -1;
	return 0;
}

/* Under st.lock: CUPTI attached, as it was or again after a detach (a
 * detach asked for is called off).  Returns XPU_WIRE_STATE_*. */
static int attach(void)
{
	static int said_other, said_error;
	const char *why = "", *step = "cuptiSubscribe";
	/* Ids stuck: nothing until a detach has ended them (a detach asked for
	 * is not called off). */
	if (__atomic_load_n(&st.stuck, __ATOMIC_ACQUIRE) == STUCK_TAKEN) {
		if (st.phase != DETACHED)
			return XPU_WIRE_STATE_IDS_STUCK;
		__atomic_store_n(&st.stuck, STUCK_NOT, __ATOMIC_RELEASE);
	}
	if (st.phase == DETACH_ASKED)
		__atomic_store_n(&st.phase, ATTACHED, __ATOMIC_RELEASE);
	if (st.phase == ATTACHED)
		return XPU_WIRE_STATE_OK;
	note('b', 0);
	uint64_t t0 = xpu_inj_now();
	/* Subscribing first: after a detach it is what brings CUPTI back
	 * (registering the clock first answered CUPTI_ERROR_NOT_INITIALIZED on
	 * the H100), and right after one CUPTI may still be finishing it: a
	 * few tries, 1 ms apart, on the agent's thread. */
	CUptiResult r = api.subscribe(&st.sub, on_launch, NULL);
	for (int i = 0; r == CUPTI_ERROR_NOT_INITIALIZED && i < 5; i++) {
		usleep(1000);
		r = api.subscribe(&st.sub, on_launch, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		xpu_inj_say_once(&said_other, "another CUPTI profiler is attached to this process; "
				 "xputop will not show its GPU kernels");
		return XPU_WIRE_STATE_OTHER_SUBSCRIBER;
	}
	if (r == CUPTI_SUCCESS && !st.registered) {
		/* The clock must be set before activity kinds are enabled. */
		if ((r = api.register_timestamp(timestamp)) != CUPTI_SUCCESS)
			step = "cuptiActivityRegisterTimestampCallback";
		else if ((r = api.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
			step = "cuptiActivityRegisterCallbacks";
		else
			st.registered = 1;
		if (r != CUPTI_SUCCESS)	/* subscribed, but no use without the rest */
			api.unsubscribe(st.sub);
	}
	st.subscribed = r == CUPTI_SUCCESS;
	note('s', r);
	if (r != CUPTI_SUCCESS) {
		api.result_string(r, &why);
		xpu_inj_say_once(&said_error, "CUPTI refused to start (%s: %s); xputop will not show this "
				 "process's GPU kernels", step, why ? why : "?");
		return XPU_WIRE_STATE_CUPTI_ERROR;
	}
	/* A new attachment may number its launches afresh (whether CUPTI does
	 * is not documented): what was left of the last one was flushed before
	 * it was finalized, so the ids are compared from here on, and nothing
	 * is traced until the slice's first launch recorded. */
	if (__atomic_fetch_add(&st.epoch, 1, __ATOMIC_RELEASE)) {
		__atomic_store_n(&st.last_corr, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&st.last_record_corr, 0, __ATOMIC_RELAXED);
		xpu_gaps_reset(&st.gaps);
		xpu_gaps_pause(&st.gaps, 0);
	}
	/* Kernel timestamps from hardware events where the GPU has them
	 * (Blackwell) cost far less than CUPTI's instrumentation; elsewhere the
	 * call fails and nothing changes. */
	if (api.hw_trace)
		api.hw_trace(1);
	/* Graphs made or replayed while attached keep CUPTI attached, and
	 * kernel activity on for a while (keep_activity); these calls are
	 * rare, their callbacks cost nothing that matters. */
	for (size_t i = 0; i < NGRAPH_CBIDS; i++)
		api.enable_callback(1, st.sub, graph_cbids[i].dom, graph_cbids[i].cbid);
	__atomic_store_n(&st.phase, ATTACHED, __ATOMIC_RELEASE);
	uint64_t d = xpu_inj_now() - t0;
	st.attach_ns += d;
	st.attach_max = d > st.attach_max ? d : st.attach_max;
	st.attaches++;
	return XPU_WIRE_STATE_OK;
}

/* The process exits.  Registered with atexit at the first slice, after
 * CUDA's runtime registered its own teardown, so it runs before it: the
 * agent must not be attaching CUPTI (10-120 ms, twice a second) while CUDA
 * tears down (a PyTorch loop died with SIGSEGV at its exit, 1 run in 6 on
 * the H100).  Waits for a CUPTI call of the agent's in progress. */
static void mark_exiting(void)
{
	__atomic_store_n(&st.exiting, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&st.lock);
	pthread_mutex_unlock(&st.lock);
}

int xpu_cupti_start(struct xpu_chan *chan, uint32_t flags)
{
	if (!st.loaded)
		return XPU_WIRE_STATE_CUPTI_ERROR;
	pthread_mutex_lock(&st.lock);
	xpu_inj_new_monitor(flags);
	xpu_gaps_reset(&st.gaps);
	/* Nothing is traced before the first slice. */
	xpu_gaps_pause(&st.gaps, __atomic_load_n(&st.last_corr, __ATOMIC_RELAXED));
	__atomic_store_n(&st.resume_due, 0, __ATOMIC_RELAXED);
	st.chan = chan;
	st.flags = flags;
	int state = attach();
	if (state != XPU_WIRE_STATE_OK && state != XPU_WIRE_STATE_IDS_STUCK)
		st.chan = NULL;
	pthread_mutex_unlock(&st.lock);
	return state;
}

static int activity(int on)
{
	if (st.act_on == on)
		return 0;
	__atomic_store_n(&st.act_on, on, __ATOMIC_RELAXED);	/* read by keep_activity */
	note(on ? 'A' : 'a', 0);
	CUptiResult (*f)(CUpti_ActivityKind) = on ? api.activity_enable : api.activity_disable;
	int bad = f(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS;
	if (st.flags & XPU_WIRE_START_MEMCPY)
		bad |= f(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS || f(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS;
	return bad && on ? -1 : 0;
}

/* Under st.lock: the launch callbacks, recording nothing, stay on for the
 * next launch to return to detach CUPTI in.  Where CUPTI stays attached
 * they stay on too: once a callback is switched off while CUPTI is
 * attached, CUPTI stops numbering API calls, and every later launch and
 * kernel carries one stale correlation id until cuptiFinalize (on the
 * H200 a 128x128 PyTorch loop recorded 5 launches in 8 s, its 406,566
 * kernels under 5 ids; unsubscribing and subscribing again did the same;
 * docs/gpu-cost.md).  The cost: about 1.1 us a launch between slices, in a
 * process that uses CUDA graphs or asked for XPUTOP_CUPTI_DETACH=0. */
static void ask_detach(void)
{
	if (__atomic_load_n(&st.no_detach, __ATOMIC_ACQUIRE))
		return;
	enable_launch_callbacks();
	__atomic_store_n(&st.phase, DETACH_ASKED, __ATOMIC_RELEASE);
}

/* Under st.lock: kernel activity off, the slice's kernels awaited to
 * detach. */
static int keeping(void)
{
	return __atomic_load_n(&st.stuck, __ATOMIC_ACQUIRE) == STUCK_NOT &&
	       xpu_inj_now() < __atomic_load_n(&st.keep_until, __ATOMIC_ACQUIRE);
}

static void activity_done(void)
{
	/* What is complete now gets its times while CUPTI still traces. */
	api.flush_all(0);
	if (keeping()) {
		/* On, as it stays (keep_activity): its kernels keep their own
		 * ends; nothing to detach (graphs). */
		st.draining = st.awaiting = 0;
		return;
	}
	activity(0);
	st.draining = 0;
	xpu_gaps_activity_off(&st.gaps, xpu_inj_now());
	st.awaiting = 1;
	st.detach_by = xpu_inj_now() + DETACH_WAIT_NS;
}

/* Under st.lock, a slice over that launched a CUDA graph: kernel activity
 * and the launch callbacks stay on until a kernel launched after the slice
 * has run (or ACT_MAX_NS), so the graph's kernels are timed to their own ends;
 * the kernels of the launches made meanwhile are left out (put_kernel).
 * Then CUPTI is detached at the next launch's return, once the slice's
 * last launch has its record (or DETACH_WAIT_NS). */
static void drain(void)
{
	int ran = (int32_t)(__atomic_load_n(&st.last_record_corr, __ATOMIC_RELAXED) - st.off_corr) > 0;
	if (st.draining) {
		if (!ran && xpu_inj_now() < st.act_until)
			return;
		activity_done();
	}
	if (st.awaiting &&
	    ((int32_t)(__atomic_load_n(&st.last_record_corr, __ATOMIC_RELAXED) - st.off_corr) >= 0 ||
	     xpu_inj_now() >= st.detach_by)) {
		st.awaiting = 0;
		ask_detach();
	}
}

/* Measured on the H100 (bench/gpu/cost.sh): switching on takes 30 to 55 us
 * while attached, attaching again after a detach about 10 ms, off 20 to 30
 * us; what CUPTI leaves on every launch once it has traced is in
 * docs/gpu-cost.md. */
int xpu_cupti_trace(int on)
{
	int state = XPU_WIRE_STATE_OK;
	pthread_mutex_lock(&st.lock);
	if (!on) {
		if (__atomic_load_n(&st.tracing, __ATOMIC_ACQUIRE)) {
			set_tracing(0);
			st.off_corr = __atomic_load_n(&st.last_corr, __ATOMIC_RELAXED);
			/* A slice that recorded no launch. */
			if (__atomic_exchange_n(&st.resume_due, 0, __ATOMIC_ACQ_REL))
				xpu_gaps_resume(&st.gaps, st.off_corr);
			xpu_gaps_pause(&st.gaps, st.off_corr);
			/* Only a graph's kernels need activity on to their ends
			 * (the drain, inject/gaps.c); a kernel launched by itself
			 * keeps the times it runs at with activity off.  The drain
			 * for every slice kept activity on until a default flush
			 * found a buffer with every record complete, which a thread
			 * still launching seldom leaves: some 20 ms after each
			 * slice on the stand-in, up to ACT_MAX_NS for a GPU-bound
			 * one.  (While the process exits CUPTI is not called: CUDA
			 * may be torn down; the exit flush takes what is left.) */
			if ((__atomic_load_n(&st.slice_graph, __ATOMIC_ACQUIRE) && !keeping()) ||
			    __atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE)) {
				st.act_until = xpu_inj_now() + ACT_MAX_NS;
				st.draining = 1;
			} else {
				activity_done();
			}
		}
		pthread_mutex_unlock(&st.lock);
		return state;
	}
	if (!st.marked) {
		st.marked = 1;
		atexit(mark_exiting);
	}
	if (__atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&st.lock);
		return state;
	}
	state = attach();
	if (state == XPU_WIRE_STATE_OK) {
		/* The slice's first launch recorded ends the pause (on_launch). */
		__atomic_store_n(&st.resume_due, 1, __ATOMIC_RELEASE);
		st.draining = st.awaiting = 0;
		__atomic_store_n(&st.slice_graph, 0, __ATOMIC_RELEASE);
		uint64_t t0 = xpu_inj_now();
		if (enable_launch_callbacks() < 0 || activity(1) < 0)
			state = XPU_WIRE_STATE_CUPTI_ERROR;
		uint64_t d = xpu_inj_now() - t0;
		st.enable_ns += d;
		st.enable_max = d > st.enable_max ? d : st.enable_max;
		st.enables++;
		/* Only now: the launching threads' CPU time is counted inside the
		 * slice from here (xputop_tracing), as its time is (inject.c's
		 * slice starts when this returns).  Before, the word was up while
		 * CUPTI switched callbacks and activity on, launches not yet
		 * recorded: that own time was counted traced with no launch. */
		set_tracing(on == 2 ? 2 : 1);
	}
	pthread_mutex_unlock(&st.lock);
	return state;
}

int xpu_cupti_settling(void)
{
	pthread_mutex_lock(&st.lock);
	int r = st.phase == ATTACHED && (st.draining || st.awaiting);
	pthread_mutex_unlock(&st.lock);
	return r;
}

void xpu_cupti_flush(int forced)
{
	pthread_mutex_lock(&st.lock);
	/* While the process exits only its exit handler's forced flush, and
	 * nothing switched: CUDA may be torn down already. */
	int exiting = __atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE);
	if (st.loaded && st.phase == ATTACHED && (forced || !exiting)) {
		/* keep_activity's, where a launching thread found the lock taken */
		if (!exiting && st.chan && !st.act_on && keeping())
			activity(1);
		/* kept on past its time, between slices: off */
		if (!exiting && st.act_on && __atomic_load_n(&st.keep_until, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&st.tracing, __ATOMIC_ACQUIRE) && !st.draining && !keeping())
			activity_done();
		api.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
		if (!exiting)
			drain();
	}
	pthread_mutex_unlock(&st.lock);
}

/* CUPTI's ids stuck: the span traced was ended by the caller (at *at);
 * what the slice's kernels are awaited for is of no use (they all carry the
 * one id, dropped), so activity goes off and CUPTI is detached at the next
 * launch's return, as between slices, and attached afresh for the next
 * (attach).  Where it may not be detached (CUDA graphs seen, or
 * XPUTOP_CUPTI_DETACH=0) it stays as it is, tracing nothing: the state says
 * IDS_STUCK from then on. */
int xpu_cupti_stuck(uint64_t *at)
{
	if (__atomic_load_n(&st.stuck, __ATOMIC_ACQUIRE) != STUCK_SEEN)
		return 0;
	pthread_mutex_lock(&st.lock);
	*at = st.stuck_ns;
	st.stucks++;
	static int said;
	xpu_inj_say_once(&said, "CUPTI gave every API call one correlation id (%u) from about %.3f s ago; "
		    "%s", st.stuck_id, (double)(xpu_inj_now() - st.stuck_ns) / 1e9,
		    __atomic_load_n(&st.no_detach, __ATOMIC_ACQUIRE)
			    ? "it cannot be detached in this process (CUDA graphs, or XPUTOP_CUPTI_DETACH=0): "
			      "xputop will not trace its GPU kernels until it restarts"
			    : "detaching it to trace afresh");
	__atomic_store_n(&st.stuck, STUCK_TAKEN, __ATOMIC_RELEASE);
	if (st.phase == ATTACHED && !__atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE)) {
		if (st.act_on)
			activity_done();
		st.draining = st.awaiting = 0;
		ask_detach();
	}
	pthread_mutex_unlock(&st.lock);
	return 1;
}

int xpu_cupti_recovering(void)
{
	return __atomic_load_n(&st.stuck, __ATOMIC_ACQUIRE) == STUCK_TAKEN &&
	       __atomic_load_n(&st.phase, __ATOMIC_ACQUIRE) != DETACHED &&
	       !__atomic_load_n(&st.no_detach, __ATOMIC_ACQUIRE);
}

void xpu_cupti_stop(void)
{
	if (!st.loaded)
		return;
	pthread_mutex_lock(&st.lock);
	set_tracing(0);
	st.draining = st.awaiting = 0;
	if (st.phase == ATTACHED && !__atomic_load_n(&st.exiting, __ATOMIC_ACQUIRE)) {
		api.activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		api.activity_disable(CUPTI_ACTIVITY_KIND_MEMCPY);
		api.activity_disable(CUPTI_ACTIVITY_KIND_MEMSET);
		__atomic_store_n(&st.act_on, 0, __ATOMIC_RELAXED);
		/* Records still in flight go nowhere once the channel is detached. */
		api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		/* Staying attached, the callbacks stay on for the next xputop
		 * (ask_detach): recording nothing without a channel. */
		ask_detach();
	}
	st.chan = NULL;
	pthread_mutex_unlock(&st.lock);
}

void xpu_cupti_at_exit(void)
{
	__atomic_store_n(&st.exiting, 1, __ATOMIC_RELEASE);
}

void xpu_cupti_detach(void)
{
	__atomic_store_n(&st.exiting, 1, __ATOMIC_RELEASE);
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

void xpu_cupti_print_stats(void)
{
	pthread_mutex_lock(&st.lock);
	uint32_t n = __atomic_load_n(&st.detaches, __ATOMIC_RELAXED);
	fprintf(stderr, "{\"xputop_inject\": {\"pid\": %d, \"attaches\": %llu, \"attach_ms_avg\": %.3f, "
		"\"attach_ms_max\": %.3f, \"detaches\": %u, \"detach_ms_avg\": %.3f, \"detach_ms_max\": %.3f, "
		"\"enable_ms_avg\": %.3f, \"enable_ms_max\": %.3f, \"stays_attached\": %d, "
		"\"launch_callbacks_traced\": %llu, \"same_id_not_recorded\": %llu, \"ids_stuck\": %llu, "
		"\"graph_launches\": %llu, \"first_graph_s\": %.3f, \"kernels\": %llu, \"graph_kernels\": %llu, "
		"\"kernel_id_changes\": %llu, \"activity_kept\": %d}}\n",
		(int)getpid(), (unsigned long long)st.attaches,
		st.attaches ? (double)st.attach_ns / (double)st.attaches / 1e6 : 0.0, (double)st.attach_max / 1e6, n,
		n ? (double)st.fin_ns / n / 1e6 : 0.0, (double)st.fin_max / 1e6,
		st.enables ? (double)st.enable_ns / (double)st.enables / 1e6 : 0.0, (double)st.enable_max / 1e6,
		__atomic_load_n(&st.no_detach, __ATOMIC_RELAXED),
		(unsigned long long)st.n.traced, (unsigned long long)st.n.same_id, (unsigned long long)st.stucks,
		(unsigned long long)st.n.graph_launches,
		st.n.first_graph_ns ? (double)(st.n.first_graph_ns - st.n.loaded_ns) / 1e9 : -1.0,
		(unsigned long long)st.n.kernels, (unsigned long long)st.n.graph_kernels,
		(unsigned long long)st.n.kernel_ids, __atomic_load_n(&st.keep_until, __ATOMIC_RELAXED) != 0);
	if (st.stats && trail_n) {
		fprintf(stderr, "{\"xputop_inject_trail\": [");
		uint32_t n = trail_n < TRAIL ? trail_n : TRAIL;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t i = (trail_n - n + k) % TRAIL;
			fprintf(stderr, "%s[%.4f, \"%c\", %u]", k ? ", " : "",
				(double)(trail[i].t - st.n.loaded_ns) / 1e9, trail[i].what, trail[i].arg);
		}
		/* its times' zero, CLOCK_MONOTONIC: to line them up with another's */
		fprintf(stderr, "], \"from_s\": %.6f}\n", (double)st.n.loaded_ns / 1e9);
	}
	pthread_mutex_unlock(&st.lock);
}

uint32_t xpu_cupti_detach_state(void)
{
	uint32_t n = __atomic_load_n(&st.detaches, __ATOMIC_RELAXED) & 0x7fffffffu;
	return n | (__atomic_load_n(&st.no_detach, __ATOMIC_RELAXED) ? 0x80000000u : 0);
}
