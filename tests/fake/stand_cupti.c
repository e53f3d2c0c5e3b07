/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for libcupti.so.13, so that the injection library's own CUPTI
 * layer (inject/cupti.c) runs in tests on machines without a GPU: the fake
 * library (tests/fake/fake_cupti.c) replaces that layer, this replaces only
 * CUPTI beneath it.  It keeps the rules of CUPTI's headers that cupti.c
 * relies on, and counts what a real CUPTI would cost or lose:
 *
 *  - one subscriber (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED for a second);
 *    callbacks only for the (domain, cbid) pairs enabled;
 *  - kernel records only while CONCURRENT_KERNEL is enabled, timed by the
 *    registered timestamp callback (CLOCK_REALTIME without one, as CUPTI
 *    on Linux: a library that forgot to register it gets foreign times);
 *  - a default flush hands over only the buffers whose records are all
 *    complete, a forced flush every buffer, a record of a kernel still
 *    running with start = end = CUPTI_TIMESTAMP_UNKNOWN;
 *  - cuptiFinalize forgets the subscriber, callbacks, activity kinds and
 *    registered functions, and loses the records not handed over yet.  The
 *    header asks that it be called at the exit of a CUDA API call: a call
 *    made anywhere else is counted as a violation;
 *  - CUPTI's cost on every launch stays from the first thing subscribed,
 *    registered or enabled until cuptiFinalize (docs/gpu-cost.md): launches
 *    made meanwhile are counted as having found CUPTI attached.
 *
 * The test program plays CUDA: stand_cuda_launch() is one cudaLaunchKernel
 * on a simulated GPU that runs kernels one after another,
 * stand_cuda_graph_instantiate() and stand_cuda_graph_launch() a graph of
 * one kernel, stand_cuda_sync() one cudaDeviceSynchronize; stand_cupti_stat() and
 * stand_cupti_stats() read the counters.
 *
 * STAND_CUPTI_ATTACH_MS=N: cuptiSubscribe takes N ms (about 10 on the H100).
 * STAND_CUPTI_NOTINIT=N: the first N cuptiSubscribe calls after each
 * cuptiFinalize answer CUPTI_ERROR_NOT_INITIALIZED (the H100 did now and
 * then).
 * STAND_CUPTI_FLUSH_US=N: cuptiActivityFlushAll takes N us more before it
 * hands anything over (CUPTI's own work on its buffers, not measured on the
 * H100), so that what launches do during a flush shows.
 *  - CUDA graphs: a cuptiFinalize after CUPTI saw a graph made or replayed
 *    is counted (graph_teardowns): CUPTI attached again after such a
 *    teardown crashed graph replays with an illegal address
 *    (pytorch/pytorch#112507), so the library must not make one.
 *
 *  - correlation ids: once a callback that was on is switched off (or its
 *    subscriber unsubscribed) while CUPTI stays attached, every later API
 *    call gets the id of the last one numbered, until cuptiFinalize
 *    (stale_ids counts them).  On the H200, a 128x128 PyTorch loop under a
 *    library staying attached and switching the launch callbacks off after
 *    each slice recorded 5 and 795 launches in 8 s, its 406,566 kernels all
 *    under 5 ids; with the callbacks left on, 71,214 launches, every kernel
 *    its own id (docs/gpu-cost.md, issue 25).
 *
 * STAND_CUPTI_STICK_AFTER=N: the ids stick as well, with nothing switched
 * off, once N API calls have been numbered in the process's first
 * attachment (until cuptiFinalize), and a graph's kernels get no record
 * meanwhile.  On the H200 9 of 17 torch.compile runs under the default mode
 * did so from their 350th-490th call, the library's callbacks on throughout:
 * 69,360 launch callbacks under one id in one, no graph kernel record
 * (inject/cupti.c, docs/gpu-cost.md).
 * STAND_CUPTI_GRAPH_STICK_MS=N: the ids stick (as above, until
 * cuptiFinalize) when kernel activity is switched on within N ms of a
 * graph made while attached: on the H200 they did, in 4 of 7 torch.compile
 * runs, within 2 ms of a switch-on 85-314 ms after the graphs were
 * captured, and never at a switch-on seconds after (nor where activity
 * stayed on from before the capture, the exact mode).
 * STAND_CUPTI_REPEAT=N: a launch's ENTER callback comes N times with its one
 * correlation id (as a runtime launch's nested driver launch carries the
 * runtime's id).
 * STAND_CUPTI_ENABLE_MS=N: switching kernel activity on takes N ms on the
 * calling thread (the library's agent), launches going on meanwhile
 * without it, so that what the library counts as traced then shows.
 * STAND_CUPTI_SLOW_US=N: a launch made with kernel activity on spins N us
 * more on its thread, here in "CUDA's" code (this library is libcupti.so.13
 * to xputop's own-time sampler): tracing's cost on a launching thread (on
 * an H200 a GPT-2 training thread launched at 0.69 of its untraced pace
 * inside slices, docs/gpu-cost.md). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#define STAND_API __attribute__((visibility("default")))

#define MAX_CBID 1024	 /* above every runtime and driver cbid of CUDA 13 */
#define MAX_QUEUED 65536 /* records CUPTI holds; more are dropped (and counted) */
#define BUF_RECORDS 256	 /* records in a buffer until the client gives one (its size) */
#define REC_MAGIC 0x53544e44u

/* A record not handed over yet.  done is when the simulated GPU finishes
 * the kernel (CLOCK_MONOTONIC), start and end the same in the clock of the
 * timestamp function of the time. */
struct rec {
	uint64_t start, end, done;
	const char *name;
	uint32_t corr, graph;
	uint32_t buf; /* which of CUPTI's buffers it is in */
};

/* What precedes each record in a buffer handed over: its size, for
 * cuptiActivityGetNextRecord's walk. */
struct hdr {
	uint32_t size;
	uint32_t magic;
};
#define REC_SIZE (sizeof(struct hdr) + sizeof(CUpti_ActivityKernel10))
_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0, "records keep 8-byte alignment");

/* The counters, each named as stand_cupti_stat() and the JSON know it. */
#define COUNTERS(X)                                                                                        \
	X(launches)	    /* launch API calls */                                                         \
	X(attached)	    /* of them, made while CUPTI was attached (its cost on them) */                \
	X(traced)	    /* of them, made while kernel activity was on (a record queued) */             \
	X(complete)	    /* records handed over complete */                                             \
	X(incomplete)	    /* records handed over without times (a forced flush) */                       \
	X(lost)		    /* records cuptiFinalize discarded */                                          \
	X(no_room)	    /* records dropped for want of a buffer (cuptiActivityGetNumDroppedRecords) */ \
	X(finalizes)	    /* cuptiFinalize calls */                                                      \
	X(violations)	    /* of them, made outside the EXIT callback of an API call */                   \
	X(finalize_tracing) /* of them, made with kernel activity still on */                              \
	X(subscribe_calls)  /* cuptiSubscribe calls */                                                     \
	X(subscriptions)    /* of them, successful */                                                      \
	X(not_initialized)  /* of them, answered CUPTI_ERROR_NOT_INITIALIZED */                            \
	X(misuse)	    /* calls a real CUPTI refuses or warns against (a stale handle...) */              \
	X(reenables)	    /* a callback or activity kind enabled while it was on already */              \
	X(graph_launches)   /* cudaGraphLaunch calls */                                                    \
	X(graph_teardowns)  /* cuptiFinalize calls after CUPTI saw a graph (pytorch#112507) */     \
	X(in_teardown)	    /* calls that change CUPTI's state while CUDA tears down at exit */            \
	X(stale_ids)	    /* API calls given the last call's correlation id (a callback switched off) */

#define FIELD(name) uint64_t name;
static struct {
	pthread_mutex_t lock;
	uint64_t attach_ns, flush_ns;
	uint32_t notinit, notinit_left, repeat;
	uint64_t slow_ns;	/* STAND_CUPTI_SLOW_US */
	uint64_t enable_ns;	/* STAND_CUPTI_ENABLE_MS */
	uint64_t stick_after;	/* STAND_CUPTI_STICK_AFTER */
	uint64_t graph_stick_ns;	/* STAND_CUPTI_GRAPH_STICK_MS */
	uint64_t graph_made;	/* when a graph was last made while attached */
	int stuck_by_knob;	/* the ids stuck by one of the two: no graph kernel record */
	uint64_t numbered;	/* API calls numbered in the first attachment */
	/* What cuptiFinalize forgets. */
	int subscribed;
	CUpti_SubscriberHandle sub;
	CUpti_CallbackFunc cb;
	void *ud;
	uint8_t enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
	uint8_t kinds[CUPTI_ACTIVITY_KIND_COUNT];
	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	CUpti_TimestampCallbackFunc timestamp;
	int attached; /* anything of the above since the last cuptiFinalize */
	int saw_graph; /* a graph made or replayed while attached */
	int ids_stuck; /* a callback was switched off while attached: ids no longer advance */
	int tearing;   /* CUDA's exit teardown runs (stand_cuda_teardown_at_exit) */
	/* The records held, oldest first, in a ring. */
	struct rec q[MAX_QUEUED];
	uint32_t qhead, qlen;
	uint32_t buf, buf_n;	 /* the buffer being filled, and its records */
	uint32_t buf_recs;	 /* records a buffer holds: the client's size */
	uint64_t no_room_unread; /* for cuptiActivityGetNumDroppedRecords */
	/* The simulated GPU. */
	uint64_t gpu_free; /* when the last kernel queued ends (CLOCK_MONOTONIC) */
	uint32_t corr;
	uint32_t handles;
	struct {
		COUNTERS(FIELD)
	} n;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };
#undef FIELD

/* Set while this thread runs the EXIT callback of an API call: the one
 * place CUPTI asks cuptiFinalize to be called from. */
static __thread int in_exit;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Busy on the CPU for ns, in this library's code: the clock (the vDSO's
 * code, not this library's) read once in 4,096 turns. */
static __attribute__((noinline)) void spin_ns(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + ns;
	volatile uint64_t x = 0;
	do {
		for (int i = 0; i < 4096; i++)
			x = x + 1;
	} while (clock_ns(CLOCK_MONOTONIC) < end);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((constructor)) static void knobs(void)
{
	const char *a = getenv("STAND_CUPTI_ATTACH_MS"), *n = getenv("STAND_CUPTI_NOTINIT");
	const char *f = getenv("STAND_CUPTI_FLUSH_US"), *r = getenv("STAND_CUPTI_REPEAT");
	S.attach_ns = a ? strtoull(a, NULL, 10) * 1000000ULL : 0;
	S.flush_ns = f ? strtoull(f, NULL, 10) * 1000ULL : 0;
	S.notinit = n ? (uint32_t)strtoul(n, NULL, 10) : 0;
	S.repeat = r ? (uint32_t)strtoul(r, NULL, 10) : 1;
	const char *w = getenv("STAND_CUPTI_SLOW_US");
	S.slow_ns = w ? strtoull(w, NULL, 10) * 1000ULL : 0;
	const char *e = getenv("STAND_CUPTI_ENABLE_MS");
	S.enable_ns = e ? strtoull(e, NULL, 10) * 1000000ULL : 0;
	const char *gs = getenv("STAND_CUPTI_GRAPH_STICK_MS");
	S.graph_stick_ns = gs ? strtoull(gs, NULL, 10) * 1000000ULL : 0;
	const char *k = getenv("STAND_CUPTI_STICK_AFTER");
	S.stick_after = k ? strtoull(k, NULL, 10) : 0;
}

static int kernel_activity(void)
{
	return S.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] || S.kinds[CUPTI_ACTIVITY_KIND_KERNEL];
}

static int any_activity(void)
{
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		if (S.kinds[k])
			return 1;
	return 0;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		CUptiResult r;
		const char *s;
	} names[] = {
		{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
		{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
		{ CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION" },
		{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
		{ CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
		{ CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND" },
		{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
	};
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*str = "CUPTI_ERROR_UNKNOWN";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].r == result)
			*str = names[i].s;
	return CUPTI_SUCCESS;
}

/* Attaching takes its time outside the lock: launches go on meanwhile,
 * without callbacks, as on the H100. */
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
				    void *userdata)
{
	if (!subscriber || !callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	S.n.subscribe_calls++;
	CUptiResult r = CUPTI_SUCCESS;
	if (S.notinit_left) {
		S.notinit_left--;
		S.n.not_initialized++;
		r = CUPTI_ERROR_NOT_INITIALIZED;
	} else if (S.subscribed) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	pthread_mutex_unlock(&S.lock);
	if (r != CUPTI_SUCCESS)
		return r;
	sleep_ns(S.attach_ns);
	pthread_mutex_lock(&S.lock);
	if (S.subscribed) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		/* A new handle each time: one kept from before a detach is stale. */
		S.sub = (CUpti_SubscriberHandle)(uintptr_t)(0x5000u + 16u * ++S.handles);
		S.subscribed = 1;
		S.cb = callback;
		S.ud = userdata;
		S.attached = 1;
		S.n.subscriptions++;
		*subscriber = S.sub;
	}
	pthread_mutex_unlock(&S.lock);
	return r;
}

static int current(CUpti_SubscriberHandle h)
{
	if (S.subscribed && h == S.sub)
		return 1;
	S.n.misuse++;
	return 0;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	if (current(subscriber)) {
		/* The subscriber's callbacks go; CUPTI's cost does not, and an
		 * enabled one leaves the ids stuck. */
		for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
			for (int c = 0; c < MAX_CBID; c++)
				S.ids_stuck |= S.enabled[d][c];
		S.subscribed = 0;
		S.cb = NULL;
		memset(S.enabled, 0, sizeof(S.enabled));
		r = CUPTI_SUCCESS;
	}
	pthread_mutex_unlock(&S.lock);
	return r;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					 CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	if (current(subscriber)) {
		S.n.reenables += enable && S.enabled[domain][cbid];
		S.ids_stuck |= !enable && S.enabled[domain][cbid];
		S.enabled[domain][cbid] = enable != 0;
		S.attached |= enable != 0;
		r = CUPTI_SUCCESS;
	}
	pthread_mutex_unlock(&S.lock);
	return r;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on)
{
	if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	S.n.reenables += on && S.kinds[kind];
	S.kinds[kind] = (uint8_t)on;
	S.attached |= on;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	/* Taking its time without the lock: launches go on meanwhile. */
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
	    !__atomic_load_n(&S.kinds[kind], __ATOMIC_RELAXED)) {
		sleep_ns(S.enable_ns);
		pthread_mutex_lock(&S.lock);
		if (S.graph_stick_ns && S.graph_made && mono() - S.graph_made < S.graph_stick_ns)
			S.ids_stuck = S.stuck_by_knob = 1;
		pthread_mutex_unlock(&S.lock);
	}
	return set_kind(kind, 1);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 0);
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
						    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	if (!funcBufferRequested || !funcBufferCompleted)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* CUPTI writes its records into the client's buffers, so a buffer
	 * holds what the client's size holds, and a default flush waits for
	 * one to be full, or all of it complete: with a thread still launching
	 * the first (on the H200 a 2 MB buffer kept kernel activity on 70-85
	 * ms after each slice of a CUDA-graph loop, 134,000 kernels a second:
	 * docs/gpu-cost.md).  The size is asked for once, here, and the
	 * buffer given back empty (as CUPTI may hand one over). */
	uint8_t *b = NULL;
	size_t size = 0, max = 0;
	funcBufferRequested(&b, &size, &max);
	if (b)
		funcBufferCompleted(NULL, 0, b, size, 0);
	uint64_t recs = b ? size / REC_SIZE : 0;
	if (max && max < recs)
		recs = max;
	pthread_mutex_lock(&S.lock);
	S.buf_recs = recs ? (uint32_t)(recs < MAX_QUEUED ? recs : MAX_QUEUED) : BUF_RECORDS;
	S.n.in_teardown += S.tearing;
	S.requested = funcBufferRequested;
	S.completed = funcBufferCompleted;
	S.attached = 1;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

/* CUPTI asks for the clock before any activity kind is enabled: records
 * made before would keep the old one. */
CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	if (!funcTimestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	if (any_activity())
		S.n.misuse++;
	S.timestamp = funcTimestamp;
	S.attached = 1;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

/* Under S.lock: the oldest n records leave the ring, into out. */
static void take(struct rec *out, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = S.q[(S.qhead + i) % MAX_QUEUED];
	S.qhead = (S.qhead + n) % MAX_QUEUED;
	S.qlen -= n;
}

/* Under S.lock: how many of the oldest records a flush hands over.  A
 * default flush stops at the first buffer holding a kernel still running
 * (the GPU runs them in order, so every later one is running or queued);
 * a buffer it hands over is closed, and later records start a new one. */
static uint32_t ready(int forced, uint64_t now)
{
	if (forced || !S.qlen) {
		S.buf++;
		S.buf_n = 0;
		return S.qlen;
	}
	for (uint32_t i = 0; i < S.qlen; i++) {
		const struct rec *r = &S.q[(S.qhead + i) % MAX_QUEUED];
		if (r->done > now) {
			uint32_t first = i;
			while (first > 0 && S.q[(S.qhead + first - 1) % MAX_QUEUED].buf == r->buf)
				first--;
			return first;
		}
	}
	S.buf++;
	S.buf_n = 0;
	return S.qlen;
}

static void put_record(uint8_t *at, const struct rec *r, int complete)
{
	struct hdr h = { (uint32_t)sizeof(CUpti_ActivityKernel10), REC_MAGIC };
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = complete ? r->start : CUPTI_TIMESTAMP_UNKNOWN;
	k.end = complete ? r->end : CUPTI_TIMESTAMP_UNKNOWN;
	k.completed = k.end;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 7;
	k.correlationId = r->corr;
	k.graphId = r->graph;
	k.name = r->name;
	k.gridX = k.blockX = 1;
	k.gridY = k.gridZ = k.blockY = k.blockZ = 1;
	memcpy(at, &h, sizeof(h));
	memcpy(at + sizeof(h), &k, sizeof(k));
}

/* Hands the records over on the flushing thread, in buffers the client
 * gives: bufferRequested, fill, bufferCompleted, as CUPTI does.  A record
 * is complete when its kernel has ended by now. */
static void hand_over(const struct rec *r, uint32_t n, uint64_t now,
		      CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed)
{
	uint32_t i = 0;
	while (i < n) {
		uint8_t *buf = NULL;
		size_t size = 0, max = 0;
		requested(&buf, &size, &max);
		if (!buf || (uintptr_t)buf % 8 || size < REC_SIZE) {
			pthread_mutex_lock(&S.lock);
			S.n.no_room += n - i;
			S.no_room_unread += n - i;
			pthread_mutex_unlock(&S.lock);
			return;
		}
		size_t valid = 0, k = 0;
		uint64_t done = 0, undone = 0;
		for (; i < n && valid + REC_SIZE <= size && (!max || k < max); i++, k++, valid += REC_SIZE) {
			int complete = r[i].done <= now;
			put_record(buf + valid, &r[i], complete);
			done += complete;
			undone += !complete;
		}
		pthread_mutex_lock(&S.lock);
		S.n.complete += done;
		S.n.incomplete += undone;
		pthread_mutex_unlock(&S.lock);
		completed(NULL, 0, buf, size, valid);
	}
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	pthread_mutex_lock(&S.lock);
	if (!S.requested || !S.completed) {
		S.n.misuse++;
		pthread_mutex_unlock(&S.lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	uint64_t now = mono();
	uint32_t n = ready(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, now);
	struct rec *out = n ? malloc(n * sizeof(*out)) : NULL;
	if (n && !out) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_ERROR_UNKNOWN;
	}
	take(out, n);
	CUpti_BuffersCallbackRequestFunc requested = S.requested;
	CUpti_BuffersCallbackCompleteFunc completed = S.completed;
	pthread_mutex_unlock(&S.lock);
	sleep_ns(S.flush_ns);
	/* The client's callbacks run without the lock: they call back into
	 * CUPTI (cuptiActivityGetNextRecord, GetNumDroppedRecords). */
	hand_over(out, n, now, requested, completed);
	free(out);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
						CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t at = 0;
	struct hdr h;
	if (*record) {
		const uint8_t *p = (const uint8_t *)*record;
		if (p < buffer + sizeof(h) || p > buffer + validBufferSizeBytes)
			return CUPTI_ERROR_INVALID_PARAMETER;
		memcpy(&h, p - sizeof(h), sizeof(h));
		at = (size_t)(p - buffer) + h.size;
	}
	if (at + sizeof(h) > validBufferSizeBytes)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	memcpy(&h, buffer + at, sizeof(h));
	if (h.magic != REC_MAGIC || h.size > validBufferSizeBytes - at - sizeof(h))
		return CUPTI_ERROR_INVALID_KIND;
	*record = (CUpti_Activity *)(void *)(buffer + at + sizeof(h));
	return CUPTI_SUCCESS;
}

/* Records dropped for want of a buffer since the last call: cupti.c asks
 * after each buffer. */
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	*dropped = S.no_room_unread;
	S.no_room_unread = 0;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
	pthread_mutex_lock(&S.lock);
	S.n.in_teardown += S.tearing;
	S.n.finalizes++;
	S.n.violations += !in_exit;
	S.n.finalize_tracing += kernel_activity();
	S.n.lost += S.qlen;
	S.n.graph_teardowns += S.saw_graph;
	S.saw_graph = 0;
	S.ids_stuck = S.stuck_by_knob = 0;
	S.graph_made = 0;
	S.qhead = S.qlen = 0;
	S.buf++;
	S.buf_n = 0;
	S.subscribed = 0;
	S.cb = NULL;
	S.ud = NULL;
	memset(S.enabled, 0, sizeof(S.enabled));
	memset(S.kinds, 0, sizeof(S.kinds));
	S.requested = NULL;
	S.completed = NULL;
	S.timestamp = NULL;
	S.attached = 0;
	S.notinit_left = S.notinit;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

/* Under S.lock: the subscriber's callback for (domain, cbid), if enabled. */
static CUpti_CallbackFunc callback_for(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, void **ud)
{
	*ud = S.ud;
	return S.subscribed && S.enabled[domain][cbid] ? S.cb : NULL;
}

static void call_site(CUpti_CallbackData *cd, CUpti_ApiCallbackSite site, CUpti_CallbackId cbid)
{
	void *ud;
	pthread_mutex_lock(&S.lock);
	CUpti_CallbackFunc cb = callback_for(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &ud);
	pthread_mutex_unlock(&S.lock);
	if (!cb)
		return;
	cd->callbackSite = site;
	in_exit = site == CUPTI_API_EXIT;
	for (uint32_t i = 0; i < (site == CUPTI_API_ENTER && S.repeat > 1 ? S.repeat : 1); i++)
		cb(ud, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, cd);
	in_exit = 0;
}

/* Under S.lock: the kernel goes on the GPU's time line, and its record in
 * CUPTI's queue while kernel activity is on.  The timestamp function is
 * called under the lock, as CUPTI calls it from its own internals: it
 * must only read a clock. */
static void run_kernel(const char *name, uint64_t gpu_ns, uint32_t corr, uint32_t graph)
{
	uint64_t now = mono();
	uint64_t start = S.gpu_free > now ? S.gpu_free : now;
	S.gpu_free = start + gpu_ns;
	if (!kernel_activity() || (graph && S.stuck_by_knob))
		return;
	S.n.traced++;
	if (S.qlen == MAX_QUEUED) {
		S.n.no_room++;
		S.no_room_unread++;
		return;
	}
	/* The record's times in the client's clock: the same distance from its now. */
	int64_t shift = (int64_t)(S.timestamp ? S.timestamp() : clock_ns(CLOCK_REALTIME)) - (int64_t)mono();
	if (S.buf_n >= (S.buf_recs ? S.buf_recs : BUF_RECORDS)) {
		S.buf++;
		S.buf_n = 0;
	}
	S.buf_n++;
	S.q[(S.qhead + S.qlen++) % MAX_QUEUED] = (struct rec){
		.start = (uint64_t)((int64_t)start + shift),
		.end = (uint64_t)((int64_t)(start + gpu_ns) + shift),
		.done = start + gpu_ns,
		.name = name,
		.corr = corr,
		.graph = graph,
		.buf = S.buf,
	};
}

/* One runtime API call: its correlation id, the ENTER callback, the call
 * itself (body, under the lock), the EXIT callback.  graph: the graph id
 * of a graph call (a launch when kernel is set), 0 for none. */
static void api_call(CUpti_CallbackId cbid, const char *function, const char *symbol, const char *kernel,
		     uint64_t gpu_ns, uint32_t graph)
{
	CUpti_CallbackData cd;
	memset(&cd, 0, sizeof(cd));
	cd.functionName = function;
	cd.symbolName = symbol;
	pthread_mutex_lock(&S.lock);
	if (S.stick_after && S.attached && !S.n.finalizes && ++S.numbered > S.stick_after)
		S.ids_stuck = S.stuck_by_knob = 1;
	if (S.ids_stuck && S.corr)
		S.n.stale_ids++;
	else
		S.corr++;
	cd.correlationId = S.corr;
	pthread_mutex_unlock(&S.lock);
	call_site(&cd, CUPTI_API_ENTER, cbid);
	pthread_mutex_lock(&S.lock);
	S.saw_graph |= graph && S.attached;
	if (graph && !kernel && S.attached)
		S.graph_made = mono();
	if (kernel) {
		S.n.launches++;
		S.n.graph_launches += graph != 0;
		S.n.attached += S.attached;
		run_kernel(kernel, gpu_ns, cd.correlationId, graph);
	}
	int slow = kernel && S.slow_ns && kernel_activity();
	pthread_mutex_unlock(&S.lock);
	if (slow) {	/* 0.5 to 1.5 times slow_ns, at random (cupti_standin's jitter()) */
		static __thread uint64_t r = 0x2545F4914F6CDD1DULL;
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		spin_ns(S.slow_ns / 2 + r % (S.slow_ns + 1));
	}
	call_site(&cd, CUPTI_API_EXIT, cbid);
}

/* cudaLaunchKernel of a kernel that runs gpu_ns on the GPU.  The name must
 * stay valid while the process runs (records point to it, as CUPTI's do to
 * its own copies). */
STAND_API void stand_cuda_launch(const char *kernel, uint64_t gpu_ns)
{
	api_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", kernel, kernel, gpu_ns, 0);
}

/* cudaGraphInstantiate of graph 1. */
STAND_API void stand_cuda_graph_instantiate(void)
{
	api_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040, "cudaGraphInstantiateWithFlags",
		 NULL, NULL, 0, 1);
}

/* cudaGraphLaunch of graph 1: one kernel of gpu_ns. */
STAND_API void stand_cuda_graph_launch(const char *kernel, uint64_t gpu_ns)
{
	api_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", NULL, kernel, gpu_ns, 1);
}

/* CUDA's runtime tears down at exit, in an atexit handler registered when
 * the program starts (after the injection library's, before anything the
 * library registers later): for ms, a call that changes CUPTI's state is
 * counted (in_teardown); a real one then crashed a PyTorch process. */
static uint64_t teardown_ns;

static void teardown(void)
{
	pthread_mutex_lock(&S.lock);
	S.tearing = 1;
	pthread_mutex_unlock(&S.lock);
	sleep_ns(teardown_ns);
}

STAND_API void stand_cuda_teardown_at_exit(uint64_t ms)
{
	teardown_ns = ms * 1000000ULL;
	atexit(teardown);
}

/* cudaDeviceSynchronize: returns once the GPU has run every kernel. */
STAND_API void stand_cuda_sync(void)
{
	pthread_mutex_lock(&S.lock);
	uint64_t until = S.gpu_free;
	pthread_mutex_unlock(&S.lock);
	uint64_t now = mono();
	if (until > now)
		sleep_ns(until - now);
	api_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize", NULL, NULL,
		 0, 0);
}

/* One counter by name (and "kernel_activity": whether it is on now); 0
 * for a name it does not know. */
STAND_API uint64_t stand_cupti_stat(const char *name)
{
	uint64_t v = 0;
	pthread_mutex_lock(&S.lock);
#define GET(field)                     \
	if (strcmp(name, #field) == 0) \
		v = S.n.field;
	COUNTERS(GET)
#undef GET
	if (strcmp(name, "kernel_activity") == 0)
		v = (uint64_t)kernel_activity();
	pthread_mutex_unlock(&S.lock);
	return v;
}

/* Every counter as one JSON object; returns what snprintf would. */
STAND_API int stand_cupti_stats(char *json, size_t size)
{
	int n = 0;
	const char *sep = "{";
	pthread_mutex_lock(&S.lock);
#define PUT(field)                                                                                     \
	n += snprintf(json + (n < (int)size ? n : (int)size), (size_t)n < size ? size - (size_t)n : 0, \
		      "%s\"" #field "\":%llu", sep, (unsigned long long)S.n.field);                    \
	sep = ",";
	COUNTERS(PUT)
#undef PUT
	pthread_mutex_unlock(&S.lock);
	n += snprintf(json + (n < (int)size ? n : (int)size), (size_t)n < size ? size - (size_t)n : 0, "}");
	return n;
}
