/* SPDX-License-Identifier: GPL-2.0-only */
/* What CUPTI costs a CUDA program, part by part: an injection library for
 * measurements only (bench/gpu/cost.sh), loaded with CUDA_INJECTION64_PATH.
 * It does what xputop's library does with CUPTI, but chosen by XPU_COST:
 *
 *   subscribed     a CUPTI subscriber with nothing enabled
 *   callbacks      launch API callbacks only (empty)
 *   activity       CONCURRENT_KERNEL activity only
 *   both           both, all the time (xputop's exact mode)
 *   duty:P:S       both, switched on for S ms every P ms (slices start at a
 *                  random point of each period), off in between
 *   registered     activity buffer callbacks registered and the flush thread,
 *                  nothing enabled (no subscriber)
 *   once:D:S       both, switched on once, for S ms at D ms after start, then
 *                  off for good: what is left behind after a slice
 *
 * followed by flags, comma-separated (XPU_COST=once:100:10,unsub,act):
 *
 *   cb / act       in once and duty: callbacks only / activity only
 *   unsub          subscribe when a slice starts, unsubscribe when it ends
 *                  (else the subscriber stays between slices)
 *   domain         enable callbacks a whole domain at a time (runtime and
 *                  driver) instead of one launch cbid at a time
 *   noflush        no cuptiActivityFlushAll every 20 ms between slices
 *   hw             ask for hardware kernel timestamps (cuptiActivityEnableHWTrace)
 *   ts             register a CLOCK_MONOTONIC timestamp callback, as xputop does
 *   fin            in once and duty: detach CUPTI after each slice
 *                  (cuptiFinalize, from the exit of the next launch API call
 *                  on the application's thread, as CUPTI's documentation
 *                  asks) and attach again for the next
 *   sync           with fin: cuCtxSynchronize just before cuptiFinalize, so
 *                  no kernel CUPTI instrumented is still queued or running
 *                  when CUPTI lets go (does detaching then stop failing?)
 *   ff             with fin: a forced flush just before cuptiFinalize (else
 *                  the records CUPTI still holds are lost with it)
 *   ffend          with fin: the forced flush at the slice's end, on the agent
 *                  thread, and none just before cuptiFinalize (the prototype's way)
 *   late           with fin: CUPTI is attached only at the first slice, 1 s
 *                  (XPU_COST_LATE_MS) after start, on the agent thread, as
 *                  xputop's library attaches when an xputop connects; the
 *                  first slice starts then
 *   mem            MEMCPY and MEMSET activity too, switched with the kernels'
 *                  (as xputop's library does)
 *   allcb          the launch callbacks of all 25 launch cbids xputop's library
 *                  enables, not 8
 *   dropped        cuptiActivityGetNumDroppedRecords for each buffer completed
 *   sub1st         with fin: when attaching again, subscribe first, then the
 *                  clock and buffer callbacks (xputop's detaching prototype's
 *                  order), and with hw ask for hardware timestamps again
 *
 * At exit it prints one JSON line on stderr: kernels recorded, launches seen
 * by the callbacks, how many launches fell inside slices, and what switching
 * cost (the time cuptiEnableCallback + cuptiActivityEnable took, and the
 * disables; cuptiSubscribe and cuptiUnsubscribe with unsub), so the cost of
 * toggling is measured, not guessed.
 *
 * With XPU_COST_KERNELS=1 it also prints, per kernel name, one JSON line:
 * records, their summed and largest duration, how many came from graphs,
 * and how many of them started before the slice they were recorded in was
 * switched on ("early": what toggling does to kernels already queued).
 *
 *   cc -O2 -shared -fPIC -I/usr/local/cuda/include bench/gpu/cupti_cost.c -o cupti_cost.so -ldl -lpthread
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../inject/launch_cbids.h"	/* allcb: the library's launch cbids */

#define BUF (4u << 20)

static struct {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*reg_ts)(CUpti_TimestampCallbackFunc);
	CUptiResult (*hw)(uint8_t);
	CUptiResult (*finalize)(void);
	CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*enable_cb)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
	CUptiResult (*act_enable)(CUpti_ActivityKind);
	CUptiResult (*act_disable)(CUpti_ActivityKind);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*num_dropped)(CUcontext, uint32_t, size_t *);
} api;

static CUpti_SubscriberHandle sub;
static int use_cb, use_act, duty, once, unsub, by_domain, noflush;
static long period_ms, slice_ms, once_at_ms;
static volatile int tracing;
static uint64_t kernels, launches, launches_in, toggles;
static uint64_t en_ns, en_max, dis_ns, dis_max, on_ns, t_start, sub_ns, unsub_ns;
static int hw_result = -1;
/* fin: CUPTI's state between slices */
enum { ATTACHED, DETACH_ASKED, DETACHING, DETACHED };
static int fin, cupti_state = ATTACHED, reg_ts;
static uint64_t fin_ns, fin_max, nfin, sync_ns, sync_max;
static int (*ctx_sync)(void);	/* cuCtxSynchronize, with sync */
static int fin_flush, sub_first, use_hw, ff_end, late, use_mem;	/* ff, sub1st, hw, ffend, late, mem */

/* XPU_COST_KERNELS: per-kernel durations, and the slices in CUPTI's clock */
static int per_kernel;
static CUptiResult (*get_ts)(uint64_t *);
#define MAXSLICES 100000
static uint64_t slice_on[MAXSLICES];
static volatile uint32_t nslices;
#define MAXK 256
static struct kstat {
	char name[96];
	uint64_t n, sum, max, graph, early, early_sum, corr_unseen, unseen_sum;
} kst[MAXK];
static uint32_t nk;
static pthread_mutex_t klock = PTHREAD_MUTEX_INITIALIZER;
/* correlation ids of the launches the callbacks saw, a bit each */
#define CORRBITS (1u << 26)
static uint8_t *corr_seen;

static void note_kernel(const CUpti_ActivityKernel10 *k)
{
	uint64_t d = k->end > k->start ? k->end - k->start : 0;
	/* the last slice switched on before this record's start */
	uint32_t lo = 0, hi = nslices;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (slice_on[mid] <= k->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	int early = duty && (lo == 0 || k->start - slice_on[lo - 1] > (uint64_t)(period_ms) * 1000000ULL);
	static uint32_t last_slice = UINT32_MAX, in_slice;
	in_slice = lo - 1 == last_slice ? in_slice + 1 : 0;
	last_slice = lo - 1;
	if (getenv("XPU_COST_DUMP") && lo > 0 && (d > 100000 || in_slice < 2)) {
		static int dumped;
		if (dumped < 400 && __atomic_fetch_add(&dumped, 1, __ATOMIC_RELAXED) < 400)
			fprintf(stderr, "rec slice %u start+%.1fus end+%.1fus dur %.1fus corr %u graph %u node %llu %.20s\n", lo - 1,
				(k->start - slice_on[lo - 1]) / 1e3, (k->end - slice_on[lo - 1]) / 1e3, d / 1e3,
				k->correlationId, k->graphId, (unsigned long long)k->graphNodeId, k->name ? k->name : "?");
	}
	int unseen = corr_seen && !(corr_seen[(k->correlationId % CORRBITS) / 8] & (1u << (k->correlationId % 8)));
	pthread_mutex_lock(&klock);
	struct kstat *s = NULL;
	for (uint32_t i = 0; i < nk; i++)
		if (!strncmp(kst[i].name, k->name ? k->name : "?", sizeof(kst[i].name) - 1)) {
			s = &kst[i];
			break;
		}
	if (!s && nk < MAXK) {
		s = &kst[nk++];
		snprintf(s->name, sizeof(s->name), "%s", k->name ? k->name : "?");
	}
	if (s) {
		s->n++;
		s->sum += d;
		s->max = d > s->max ? d : s->max;
		s->graph += k->graphId != 0;
		s->early += early;
		s->early_sum += early ? d : 0;
		s->corr_unseen += unseen;
		s->unseen_sum += unseen ? d : 0;
	}
	pthread_mutex_unlock(&klock);
}

static const struct { CUpti_CallbackDomain dom; CUpti_CallbackId cbid; } cbids[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch },
};
#define NCB (sizeof(cbids) / sizeof(cbids[0]))
static int all_cb, call_dropped;	/* allcb, dropped */

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI ts_now(void)
{
	return now();
}

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cd = data;
	int asked = DETACH_ASKED;
	if (cd->callbackSite == CUPTI_API_EXIT &&
	    __atomic_compare_exchange_n(&cupti_state, &asked, DETACHING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		uint64_t t0 = now();
		if (ctx_sync) {
			ctx_sync();
			uint64_t ds = now() - t0;
			sync_ns += ds;
			sync_max = ds > sync_max ? ds : sync_max;
		}
		if (fin_flush)
			api.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		api.finalize();
		uint64_t d = now() - t0;
		fin_ns += d;
		fin_max = d > fin_max ? d : fin_max;
		nfin++;
		__atomic_store_n(&cupti_state, DETACHED, __ATOMIC_RELEASE);
		return;
	}
	if (cd->callbackSite != CUPTI_API_ENTER)
		return;
	__atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
	if (tracing)
		__atomic_add_fetch(&launches_in, 1, __ATOMIC_RELAXED);
	if (corr_seen)
		__atomic_fetch_or(&corr_seen[(cd->correlationId % CORRBITS) / 8], (uint8_t)(1u << (cd->correlationId % 8)),
				  __ATOMIC_RELAXED);
}

static void CUPTIAPI requested(uint8_t **b, size_t *size, size_t *max)
{
	*b = aligned_alloc(8, BUF);
	*size = BUF;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	while (api.next(b, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			__atomic_add_fetch(&kernels, 1, __ATOMIC_RELAXED);
			if (per_kernel)
				note_kernel((const CUpti_ActivityKernel10 *)r);
		}
	size_t dropped = 0;
	if (call_dropped && api.num_dropped)
		api.num_dropped(c, s, &dropped);
	free(b);
}

static void callbacks(int on)
{
	if (by_domain) {
		api.enable_domain(on, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
		api.enable_domain(on, sub, CUPTI_CB_DOMAIN_DRIVER_API);
		return;
	}
	if (all_cb) {
		for (size_t i = 0; i < NCBIDS; i++)
			api.enable_cb(on, sub, launch_cbids[i].dom, launch_cbids[i].cbid);
		return;
	}
	for (size_t i = 0; i < NCB; i++)
		api.enable_cb(on, sub, cbids[i].dom, cbids[i].cbid);
}

/* fin: attached again for a slice (or the detach asked for is called off). */
static void attach(void)
{
	int asked = DETACH_ASKED;
	if (__atomic_compare_exchange_n(&cupti_state, &asked, ATTACHED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	while (__atomic_load_n(&cupti_state, __ATOMIC_ACQUIRE) == DETACHING)
		usleep(100);
	if (__atomic_load_n(&cupti_state, __ATOMIC_ACQUIRE) != DETACHED)
		return;
	uint64_t s0 = now();
	if (sub_first) {
		CUptiResult r = api.subscribe(&sub, on_cb, NULL);
		for (int i = 0; r == CUPTI_ERROR_NOT_INITIALIZED && i < 5; i++) {
			usleep(1000);
			r = api.subscribe(&sub, on_cb, NULL);
		}
		if (reg_ts)
			api.reg_ts(ts_now);
		api.reg(requested, completed);
		if (use_hw && api.hw)
			api.hw(1);
	} else {
		if (reg_ts)
			api.reg_ts(ts_now);
		api.reg(requested, completed);
		api.subscribe(&sub, on_cb, NULL);
	}
	sub_ns += now() - s0;
	__atomic_store_n(&cupti_state, ATTACHED, __ATOMIC_RELEASE);
}

static void set(int on)
{
	if (fin && on)
		attach();
	if (use_cb && unsub && on) {
		uint64_t s0 = now();
		api.subscribe(&sub, on_cb, NULL);
		sub_ns += now() - s0;
	}
	uint64_t t0 = now();
	if (use_cb && !(fin && !on))	/* fin: they stay on to detach at a launch's exit */
		callbacks(on);
	if (use_act)
		(on ? api.act_enable : api.act_disable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (use_act && use_mem) {
		(on ? api.act_enable : api.act_disable)(CUPTI_ACTIVITY_KIND_MEMCPY);
		(on ? api.act_enable : api.act_disable)(CUPTI_ACTIVITY_KIND_MEMSET);
	}
	uint64_t d = now() - t0;
	if (use_cb && unsub && !on) {
		uint64_t s0 = now();
		api.unsubscribe(sub);
		unsub_ns += now() - s0;
	}
	if (on) {
		en_ns += d;
		en_max = d > en_max ? d : en_max;
	} else {
		dis_ns += d;
		dis_max = d > dis_max ? d : dis_max;
	}
}

/* One slice: on for slice_ms, off, and the completed records flushed. */
static void slice(void)
{
	uint64_t t0 = now();
	if (per_kernel && get_ts && nslices < MAXSLICES) {
		get_ts(&slice_on[nslices]);
		__atomic_store_n(&nslices, nslices + 1, __ATOMIC_RELEASE);
	}
	set(1);
	tracing = 1;
	usleep((useconds_t)(slice_ms * 1000));
	tracing = 0;
	set(0);
	on_ns += now() - t0;
	toggles++;
	api.flush(ff_end ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	if (fin)
		__atomic_store_n(&cupti_state, DETACH_ASKED, __ATOMIC_RELEASE);
}

static void *agent(void *arg)
{
	uint64_t last_flush = now();
	if (late) {
		const char *ms = getenv("XPU_COST_LATE_MS");
		usleep((useconds_t)(ms ? atol(ms) : 1000) * 1000);
	}
	if (once) {
		usleep((useconds_t)(once_at_ms * 1000));
		slice();
	}
	for (;;) {
		if (duty) {
			if (!late || toggles)	/* late: the first slice right away */
				usleep((useconds_t)((rand() % (period_ms - slice_ms + 1)) * 1000));
			slice();
			usleep((useconds_t)((period_ms - slice_ms) * 1000) / 2);
		} else {
			usleep(20000);
		}
		if (!noflush && __atomic_load_n(&cupti_state, __ATOMIC_ACQUIRE) == ATTACHED &&
		    now() - last_flush > 20000000ULL) {
			api.flush(0);
			last_flush = now();
		}
	}
	return arg;
}

static void at_exit(void)
{
	tracing = 0;
	if (__atomic_load_n(&cupti_state, __ATOMIC_ACQUIRE) != DETACHED)
		api.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	double secs = (double)(now() - t_start) / 1e9;
	fprintf(stderr, "{\"cost_mode\": \"%s\", \"kernels\": %llu, \"launches\": %llu, \"launches_in_slices\": %llu, "
		"\"toggles\": %llu, \"enable_us_avg\": %.1f, \"enable_us_max\": %.1f, \"disable_us_avg\": %.1f, "
		"\"disable_us_max\": %.1f, \"subscribe_us_avg\": %.1f, \"unsubscribe_us_avg\": %.1f, "
		"\"hw_trace\": %d, \"finalized\": %llu, \"finalize_us_avg\": %.1f, \"finalize_us_max\": %.1f, "
		"\"sync_us_avg\": %.1f, \"sync_us_max\": %.1f, \"traced_frac\": %.4f}\n",
		getenv("XPU_COST"), (unsigned long long)kernels, (unsigned long long)launches,
		(unsigned long long)launches_in, (unsigned long long)toggles,
		toggles ? (double)en_ns / toggles / 1e3 : (double)en_ns / 1e3, (double)en_max / 1e3,
		toggles ? (double)dis_ns / toggles / 1e3 : 0.0, (double)dis_max / 1e3,
		toggles ? (double)sub_ns / toggles / 1e3 : 0.0, toggles ? (double)unsub_ns / toggles / 1e3 : 0.0,
		hw_result, (unsigned long long)nfin, nfin ? (double)fin_ns / nfin / 1e3 : 0.0, (double)fin_max / 1e3,
		nfin ? (double)sync_ns / nfin / 1e3 : 0.0, (double)sync_max / 1e3, duty || once ? (double)on_ns / 1e9 / secs : 1.0);
	for (uint32_t i = 0; per_kernel && i < nk; i++)
		fprintf(stderr, "{\"kernel\": \"%.60s\", \"records\": %llu, \"sum_us\": %.1f, \"avg_us\": %.2f, "
			"\"max_us\": %.1f, \"graph\": %llu, \"early\": %llu, \"early_avg_us\": %.2f, "
			"\"launch_unseen\": %llu, \"unseen_avg_us\": %.2f}\n",
			kst[i].name, (unsigned long long)kst[i].n, kst[i].sum / 1e3, kst[i].n ? kst[i].sum / 1e3 / kst[i].n : 0,
			kst[i].max / 1e3, (unsigned long long)kst[i].graph, (unsigned long long)kst[i].early,
			kst[i].early ? kst[i].early_sum / 1e3 / kst[i].early : 0, (unsigned long long)kst[i].corr_unseen,
			kst[i].corr_unseen ? kst[i].unseen_sum / 1e3 / kst[i].corr_unseen : 0);
}

/* Whether the comma-separated flags after XPU_COST's mode hold f. */
static int has_flag(const char *m, const char *f)
{
	size_t n = strlen(f);
	for (const char *p = strchr(m, ','); p; p = strchr(p + 1, ','))
		if (!strncmp(p + 1, f, n) && (p[1 + n] == ',' || p[1 + n] == '\0'))
			return 1;
	return 0;
}

int InitializeInjection(void)
{
	const char *m = getenv("XPU_COST");
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcupti.so.13", RTLD_NOW);
	if (!h || !m)
		return 1;
	*(void **)&api.subscribe = dlsym(h, "cuptiSubscribe");
	*(void **)&api.unsubscribe = dlsym(h, "cuptiUnsubscribe");
	*(void **)&api.enable_domain = dlsym(h, "cuptiEnableDomain");
	*(void **)&api.reg_ts = dlsym(h, "cuptiActivityRegisterTimestampCallback");
	*(void **)&api.hw = dlsym(h, "cuptiActivityEnableHWTrace");
	*(void **)&api.finalize = dlsym(h, "cuptiFinalize");
	*(void **)&api.enable_cb = dlsym(h, "cuptiEnableCallback");
	*(void **)&api.act_enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&api.act_disable = dlsym(h, "cuptiActivityDisable");
	*(void **)&api.reg = dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&api.flush = dlsym(h, "cuptiActivityFlushAll");
	*(void **)&api.next = dlsym(h, "cuptiActivityGetNextRecord");
	*(void **)&api.num_dropped = dlsym(h, "cuptiActivityGetNumDroppedRecords");
	*(void **)&get_ts = dlsym(h, "cuptiGetTimestamp");
	per_kernel = getenv("XPU_COST_KERNELS") && *getenv("XPU_COST_KERNELS") == '1';
	if (per_kernel)
		corr_seen = calloc(CORRBITS / 8, 1);
	int only_sub = !strcmp(m, "subscribed") || !strncmp(m, "subscribed,", 11);
	int only_reg = !strncmp(m, "registered", 10);
	int timed = !strncmp(m, "duty:", 5) || !strncmp(m, "once:", 5);
	int cb_only = has_flag(m, "cb"), act_only = has_flag(m, "act");
	unsub = has_flag(m, "unsub");
	by_domain = has_flag(m, "domain");
	noflush = has_flag(m, "noflush");
	reg_ts = has_flag(m, "ts");
	use_cb = only_sub || !strncmp(m, "callbacks", 9) || !strncmp(m, "both", 4) || (timed && !act_only);
	use_act = !strncmp(m, "activity", 8) || !strncmp(m, "both", 4) || (timed && !cb_only);
	if (sscanf(m, "duty:%ld:%ld", &period_ms, &slice_ms) == 2 && period_ms > slice_ms && slice_ms > 0)
		duty = 1;
	if (sscanf(m, "once:%ld:%ld", &once_at_ms, &slice_ms) == 2 && slice_ms > 0)
		once = 1;
	t_start = now();
	fin = has_flag(m, "fin") && !!api.finalize;
	fin_flush = fin && has_flag(m, "ff");
	ff_end = fin && has_flag(m, "ffend");
	sub_first = fin && has_flag(m, "sub1st");
	use_hw = has_flag(m, "hw");
	late = fin && has_flag(m, "late");
	use_mem = has_flag(m, "mem");
	all_cb = has_flag(m, "allcb");
	call_dropped = has_flag(m, "dropped");
	if (fin && has_flag(m, "sync")) {
		void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (cu)
			*(void **)&ctx_sync = dlsym(cu, "cuCtxSynchronize");
	}
	if (late)	/* attach() does it all at the first slice */
		cupti_state = DETACHED;
	if (reg_ts && !late)
		api.reg_ts(ts_now);
	if (!late)
		api.reg(requested, completed);
	if (has_flag(m, "hw") && api.hw && !late)
		hw_result = api.hw(1);
	if (use_cb && !(unsub && (duty || once)) && !late)
		api.subscribe(&sub, on_cb, NULL);
	if (!duty && !once && !only_sub && !only_reg) {
		set(1);
		tracing = 1;
	}
	atexit(at_exit);
	pthread_t t;
	pthread_create(&t, NULL, agent, NULL);
	pthread_detach(t);
	return 1;
}
