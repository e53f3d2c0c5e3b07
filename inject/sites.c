/* SPDX-License-Identifier: GPL-2.0-only */
/* Call sites: which CPU stack launched each kernel, without unwinding the
 * whole stack (or trapping into the kernel) on every launch.
 *
 * A site is one distinct stack of a launching thread.  When a stack is new,
 * its signature is taken once: the address of every return-address slot
 * (relative to this function's frame) and the return address in it, found
 * with the DWARF unwinder (_Unwind_Backtrace), continued with frame pointers
 * where code has no unwind tables (JIT code such as Python's perf
 * trampolines).  A later launch belongs to a site when every slot of its
 * signature holds the same address, which is exactly "the same call path"
 * even through libraries built without frame pointers, where a frame-pointer
 * walk would read garbage.  The stack depth indexes the candidates.
 *
 * The first launch from a site calls xputop_launch_site(), where xputop's BPF
 * uprobe captures the stack; later launches cost a depth lookup in a
 * per-thread cache and the signature compare. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "inject.h"

#define MAX_SITES 16384
#define MAX_SIG 128
#define BUCKETS 4096
#define TLS_SLOTS 64
#define TLS_WAYS 4

struct sig_slot {
	uint32_t off;		/* bytes above the frame of xpu_sites_current */
	uint64_t ra;
};

struct site {
	uintptr_t depth;	/* stack top - frame of xpu_sites_current */
	uint32_t id;
	uint32_t nsig;
	uint64_t announced;	/* generation it was last announced in */
	struct site *next;	/* same bucket */
	struct sig_slot sig[];
};

struct tls_sites {
	int init;
	uintptr_t hi;		/* top of this thread's stack */
	struct site *cache[TLS_SLOTS][TLS_WAYS];	/* most recently used first */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct site *buckets[BUCKETS];
static uint32_t nsites;
static uint64_t generation = 1;
static __thread struct tls_sites tls;

XPU_INJ_API __attribute__((noinline)) void xputop_launch_site(uint32_t site, uint32_t corr,
							      uint32_t cbid)
{
	/* Exists to be probed: keep the call and its arguments. */
	__asm__ volatile("" : : "r"(site), "r"(corr), "r"(cbid) : "memory");
}

void xpu_sites_init(void)
{
}

void xpu_sites_new_generation(void)
{
	__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
}

uint64_t xpu_sites_count(void)
{
	return __atomic_load_n(&nsites, __ATOMIC_RELAXED);
}

static void init_tls(struct tls_sites *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	t->init = 1;
	t->hi = 0;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0)
		t->hi = (uintptr_t)addr + size;
	pthread_attr_destroy(&attr);
}

static int sig_matches(const struct site *s, uintptr_t base, uintptr_t hi)
{
	if (s->depth != hi - base)
		return 0;
	for (uint32_t i = 0; i < s->nsig; i++) {
		uintptr_t at = base + s->sig[i].off;
		if (at + 8 > hi || *(const uint64_t *)at != s->sig[i].ra)
			return 0;
	}
	return 1;
}

struct sig_build {
	uintptr_t base, hi;
	uintptr_t last_cfa, last_rbp;
	uint32_t n;
	struct sig_slot sig[MAX_SIG];
};

/* Adds a slot if it is above our own frame (frames of the unwinding itself
 * are not part of the caller's stack).  Returns 0 when the walk must stop:
 * past the top of the stack, or the signature is full. */
static int add_slot(struct sig_build *b, uintptr_t slot, uint64_t ra)
{
	if (slot + 8 > b->hi || b->n == MAX_SIG)
		return 0;
	if (slot >= b->base + 8) {
		b->sig[b->n].off = (uint32_t)(slot - b->base);
		b->sig[b->n].ra = ra;
		b->n++;
	}
	return 1;
}

/* libgcc's CFA of a context is the stack pointer at its call into the frame
 * below, so the return address into this frame (its IP) sits just under it. */
static _Unwind_Reason_Code sig_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct sig_build *b = arg;
	uintptr_t cfa = _Unwind_GetCFA(ctx), ip = _Unwind_GetIP(ctx);
	if (!ip || !add_slot(b, cfa - 8, ip))
		return _URC_END_OF_STACK;
	b->last_cfa = cfa;
	b->last_rbp = _Unwind_GetGR(ctx, 6);	/* DWARF register 6: rbp */
	return _URC_NO_REASON;
}

/* Where the unwind tables end (code without them), frame pointers carry on,
 * inside the stack and strictly upwards, so a bad chain just ends. */
static void continue_with_frame_pointers(struct sig_build *b)
{
	uintptr_t fp = b->last_rbp;
	while (fp >= b->last_cfa && fp + 16 <= b->hi && !(fp & 7) && b->n < MAX_SIG) {
		const uintptr_t *f = (const uintptr_t *)fp;
		if (!f[1] || !add_slot(b, fp + 8, f[1]) || f[0] <= fp)
			break;
		fp = f[0];
	}
}

static struct site *new_site(uintptr_t base, uintptr_t hi)
{
	struct sig_build b = { .base = base, .hi = hi };
	if (nsites >= MAX_SITES)
		return NULL;
	_Unwind_Backtrace(sig_frame, &b);
	if (b.last_cfa)
		continue_with_frame_pointers(&b);
	struct site *s = malloc(sizeof(*s) + b.n * sizeof(struct sig_slot));
	if (!s)
		return NULL;
	s->depth = hi - base;
	s->id = ++nsites;
	s->nsig = b.n;
	s->announced = 0;
	memcpy(s->sig, b.sig, b.n * sizeof(struct sig_slot));
	if (!sig_matches(s, base, hi)) {	/* the stack moved under us: give up on it */
		nsites--;
		free(s);
		return NULL;
	}
	s->next = buckets[s->depth % BUCKETS];
	buckets[s->depth % BUCKETS] = s;
	return s;
}

static struct site *find_or_add(uintptr_t base, uintptr_t hi)
{
	pthread_mutex_lock(&lock);
	struct site *s = buckets[(hi - base) % BUCKETS];
	while (s && !sig_matches(s, base, hi))
		s = s->next;
	if (!s)
		s = new_site(base, hi);
	pthread_mutex_unlock(&lock);
	return s;
}

/* The per-thread cache: a few recently used sites per depth. */
static struct site *cached(struct tls_sites *t, uintptr_t base)
{
	struct site **way = t->cache[(t->hi - base) % TLS_SLOTS];
	for (int i = 0; i < TLS_WAYS && way[i]; i++) {
		if (!sig_matches(way[i], base, t->hi))
			continue;
		struct site *s = way[i];
		memmove(way + 1, way, (size_t)i * sizeof(*way));
		way[0] = s;
		return s;
	}
	return NULL;
}

static void remember(struct tls_sites *t, uintptr_t base, struct site *s)
{
	struct site **way = t->cache[(t->hi - base) % TLS_SLOTS];
	memmove(way + 1, way, (TLS_WAYS - 1) * sizeof(*way));
	way[0] = s;
}

__attribute__((noinline)) uint32_t xpu_sites_current(uint32_t corr, uint32_t cbid)
{
	struct tls_sites *t = &tls;
	uintptr_t base = (uintptr_t)__builtin_frame_address(0);

	if (!t->init)
		init_tls(t);
	/* Not on the thread's own stack (a fiber, a signal stack): no site. */
	if (base >= t->hi || t->hi - base > (1u << 30))
		return 0;
	struct site *s = cached(t, base);
	if (!s) {
		s = find_or_add(base, t->hi);
		if (!s)
			return 0;
		remember(t, base, s);
	}
	uint64_t gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
	/* A plain load first: the locked exchange only when it is news. */
	if (__atomic_load_n(&s->announced, __ATOMIC_RELAXED) != gen &&
	    __atomic_exchange_n(&s->announced, gen, __ATOMIC_ACQ_REL) != gen)
		xputop_launch_site(s->id, corr, cbid);
	return s->id;
}
