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
 *
 * At exit it prints one JSON line on stderr: kernels recorded, launches seen
 * by the callbacks, how many launches fell inside slices, and what switching
 * cost (the time cuptiEnableCallback + cuptiActivityEnable took, and the
 * disables), so the cost of toggling is measured, not guessed.
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

#define BUF (4u << 20)

static struct {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*enable_cb)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
	CUptiResult (*act_enable)(CUpti_ActivityKind);
	CUptiResult (*act_disable)(CUpti_ActivityKind);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
} api;

static CUpti_SubscriberHandle sub;
static int use_cb, use_act, duty;
static long period_ms, slice_ms;
static volatile int tracing;
static uint64_t kernels, launches, launches_in, toggles;
static uint64_t en_ns, en_max, dis_ns, dis_max, on_ns, t_start;

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

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cd = data;
	if (cd->callbackSite != CUPTI_API_ENTER)
		return;
	__atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
	if (tracing)
		__atomic_add_fetch(&launches_in, 1, __ATOMIC_RELAXED);
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
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_add_fetch(&kernels, 1, __ATOMIC_RELAXED);
	free(b);
}

static void set(int on)
{
	uint64_t t0 = now();
	if (use_cb)
		for (size_t i = 0; i < NCB; i++)
			api.enable_cb(on, sub, cbids[i].dom, cbids[i].cbid);
	if (use_act)
		(on ? api.act_enable : api.act_disable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	uint64_t d = now() - t0;
	if (on) {
		en_ns += d;
		en_max = d > en_max ? d : en_max;
	} else {
		dis_ns += d;
		dis_max = d > dis_max ? d : dis_max;
	}
}

static void *agent(void *arg)
{
	uint64_t last_flush = now();
	for (;;) {
		if (duty) {
			usleep((useconds_t)((rand() % (period_ms - slice_ms + 1)) * 1000));
			uint64_t t0 = now();
			set(1);
			tracing = 1;
			usleep((useconds_t)(slice_ms * 1000));
			tracing = 0;
			set(0);
			on_ns += now() - t0;
			toggles++;
			api.flush(0);
			usleep((useconds_t)((period_ms - slice_ms) * 1000) / 2);
		} else {
			usleep(20000);
		}
		if (now() - last_flush > 20000000ULL) {
			api.flush(0);
			last_flush = now();
		}
	}
	return arg;
}

static void at_exit(void)
{
	tracing = 0;
	api.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	double secs = (double)(now() - t_start) / 1e9;
	fprintf(stderr, "{\"cost_mode\": \"%s\", \"kernels\": %llu, \"launches\": %llu, \"launches_in_slices\": %llu, "
		"\"toggles\": %llu, \"enable_us_avg\": %.1f, \"enable_us_max\": %.1f, \"disable_us_avg\": %.1f, "
		"\"disable_us_max\": %.1f, \"traced_frac\": %.4f}\n",
		getenv("XPU_COST"), (unsigned long long)kernels, (unsigned long long)launches,
		(unsigned long long)launches_in, (unsigned long long)toggles,
		toggles ? (double)en_ns / toggles / 1e3 : (double)en_ns / 1e3, (double)en_max / 1e3,
		toggles ? (double)dis_ns / toggles / 1e3 : 0.0, (double)dis_max / 1e3,
		duty ? (double)on_ns / 1e9 / secs : 1.0);
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
	*(void **)&api.enable_cb = dlsym(h, "cuptiEnableCallback");
	*(void **)&api.act_enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&api.act_disable = dlsym(h, "cuptiActivityDisable");
	*(void **)&api.reg = dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&api.flush = dlsym(h, "cuptiActivityFlushAll");
	*(void **)&api.next = dlsym(h, "cuptiActivityGetNextRecord");
	int only_sub = !strcmp(m, "subscribed");
	use_cb = only_sub || !strcmp(m, "callbacks") || !strcmp(m, "both") || !strncmp(m, "duty:", 5);
	use_act = !strcmp(m, "activity") || !strcmp(m, "both") || !strncmp(m, "duty:", 5);
	if (sscanf(m, "duty:%ld:%ld", &period_ms, &slice_ms) == 2 && period_ms > slice_ms && slice_ms > 0)
		duty = 1;
	t_start = now();
	api.reg(requested, completed);
	if (use_cb)
		api.subscribe(&sub, on_cb, NULL);
	if (!duty && !only_sub) {
		set(1);
		tracing = 1;
	}
	atexit(at_exit);
	pthread_t t;
	pthread_create(&t, NULL, agent, NULL);
	pthread_detach(t);
	return 1;
}
