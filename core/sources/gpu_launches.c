/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_launches.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "dict.h"
#include "gpu.h"
#include "grow.h"
#include "htab.h"

/* A key's stack is sent just before the key is first counted, so it can
 * miss the refresh that sees the count; after this many refreshes its
 * launches go on without it. */
#define STACK_WAIT 3
/* An idle key's thread is checked for exit this often. */
#define ALIVE_CHECK_NS 2000000000ULL
#define BATCH 1024

struct key_state {
	struct xpu_gpu_launch_key key;
	uint64_t seen;		/* calls handed on */
	uint64_t checked;	/* when its thread last counted or was found alive */
	uint32_t stack, comm;
	uint16_t waited;	/* refreshes its calls waited for the stack */
	uint16_t lost;		/* went on without it */
};

struct xpu_gpu_launches {
	struct xpu_dict *dict;
	int counts_fd, procs_fd;
	struct key_state *v;
	uint32_t n, cap;
	struct xpu_htab index;
	struct xpu_gpu_launch_key *keys;	/* one batch read from the map */
	struct xpu_gpu_launch_count *vals;
	uint32_t batch;
	struct xpu_gpu_launches_stats st;
};

struct xpu_gpu_launches *xpu_gpu_launches_new(struct xpu_dict *d, int counts_fd, int procs_fd)
{
	struct xpu_gpu_launches *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->dict = d;
	l->counts_fd = counts_fd;
	l->procs_fd = procs_fd;
	l->batch = BATCH;
	xpu_htab_init(&l->index);
	l->keys = malloc(BATCH * sizeof(*l->keys));
	l->vals = malloc(BATCH * sizeof(*l->vals));
	if (!l->keys || !l->vals) {
		xpu_gpu_launches_free(l);
		return NULL;
	}
	return l;
}

void xpu_gpu_launches_free(struct xpu_gpu_launches *l)
{
	if (!l)
		return;
	xpu_htab_free(&l->index);
	free(l->v);
	free(l->keys);
	free(l->vals);
	free(l);
}

static uint64_t key_hash(const struct xpu_gpu_launch_key *k)
{
	return xpu_hash_bytes(k, sizeof(*k), 0);
}

static int key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_gpu_launches *l = ctx;
	return memcmp(&l->v[id].key, key, sizeof(struct xpu_gpu_launch_key)) == 0;
}

static struct key_state *key_get(struct xpu_gpu_launches *l, const struct xpu_gpu_launch_key *k,
				 uint64_t now)
{
	uint64_t h = key_hash(k);
	uint32_t id = xpu_htab_find(&l->index, h, key_eq, l, k);
	if (id != UINT32_MAX)
		return &l->v[id];
	if (xpu_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) || xpu_htab_put(&l->index, h, l->n))
		return NULL;
	l->v[l->n] = (struct key_state){ .key = *k, .checked = now };
	l->st.keys = l->n + 1;
	return &l->v[l->n++];
}

static void key_drop(struct xpu_gpu_launches *l, uint32_t id)
{
	xpu_htab_del(&l->index, key_hash(&l->v[id].key), id);
	if (id != --l->n) {
		xpu_htab_del(&l->index, key_hash(&l->v[l->n].key), l->n);
		l->v[id] = l->v[l->n];
		xpu_htab_put(&l->index, key_hash(&l->v[id].key), id);
	}
	l->st.keys = l->n;
}

void xpu_gpu_launches_stack(struct xpu_gpu_launches *l, const struct xpu_gpu_launch_key *k,
			    uint32_t stack)
{
	struct key_state *s = key_get(l, k, 0);
	if (s)
		s->stack = stack;
}

/* Hands on what the key's count grew by.  A key counted with a stack waits
 * a few refreshes for it (not at its final reading); a nested driver
 * launch's is handed on as such, at once. */
static void on_count(struct xpu_gpu_launches *l, const struct xpu_gpu_launch_key *k,
		     const struct xpu_gpu_launch_count *c, uint64_t now, int final, xpu_gpu_launches_fn fn,
		     void *arg)
{
	struct key_state *s = key_get(l, k, now);
	if (!s)
		return;		/* out of memory: handed on at a later refresh */
	if (!s->comm)
		s->comm = xpu_dict_str(l->dict, c->comm, strnlen(c->comm, sizeof(c->comm)));
	if (c->calls < s->seen)	/* the key was made anew */
		s->seen = 0;
	if (c->calls == s->seen)
		return;
	if (c->flags & XPU_GPU_LAUNCH_NESTED) {
		fn(arg, k, s->comm, 0, c->calls - s->seen, 1, 0);
		s->seen = c->calls;
		return;
	}
	if (k->site && !s->stack && s->waited < STACK_WAIT && !final) {
		s->waited++;
		return;
	}
	if (k->site && !s->stack && !s->lost) {
		s->lost = 1;
		l->st.stacks_lost++;
	}
	/* its process's start with its first launches handed on */
	fn(arg, k, s->comm, s->stack, c->calls - s->seen, 0, s->seen ? 0 : c->born);
	s->seen = c->calls;
	s->checked = now;
}

/* One batch from bpf_map_lookup_batch; a hash bucket larger than the
 * buffer (ENOSPC) doubles it.  Returns the entries read, setting *last on
 * the map's last batch, or -1 on an error. */
static int read_batch(struct xpu_gpu_launches *l, const void *in, void *out, int *last)
{
	for (;;) {
		__u32 n = l->batch;
		int err = bpf_map_lookup_batch(l->counts_fd, (void *)in, out, l->keys, l->vals, &n, NULL);
		if (err < 0 && errno == ENOSPC && l->batch < (1u << 20)) {
			void *k = realloc(l->keys, 2 * l->batch * sizeof(*l->keys));
			void *v = k ? realloc(l->vals, 2 * l->batch * sizeof(*l->vals)) : NULL;
			if (k)
				l->keys = k;
			if (!v)
				return -1;
			l->vals = v;
			l->batch *= 2;
			continue;
		}
		*last = err < 0 && errno == ENOENT;
		return err < 0 && !*last ? -1 : (int)n;
	}
}

static int thread_gone(uint32_t pid, uint32_t tid)
{
	return syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, 0) < 0 && errno == ESRCH;
}

/* A sited key leaves its process's allowance of keys (proc_sites). */
static void proc_release(struct xpu_gpu_launches *l, uint32_t pid)
{
	__u32 n;
	if (bpf_map_lookup_elem(l->procs_fd, &pid, &n) < 0)
		return;
	if (n <= 1 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		bpf_map_delete_elem(l->procs_fd, &pid);
		return;
	}
	n = n ? n - 1 : 0;
	bpf_map_update_elem(l->procs_fd, &pid, &n, BPF_EXIST);
}

/* Keys of exited threads: their last launches are handed on, then the key
 * leaves the map; no launch can come after the thread's exit. */
static void retire(struct xpu_gpu_launches *l, uint64_t now, xpu_gpu_launches_fn fn, void *arg)
{
	for (uint32_t i = 0; i < l->n;) {
		struct key_state *s = &l->v[i];
		struct xpu_gpu_launch_count c;
		if (now - s->checked < ALIVE_CHECK_NS || !thread_gone(s->key.pid, s->key.tid)) {
			if (now - s->checked >= ALIVE_CHECK_NS)
				s->checked = now;
			i++;
			continue;
		}
		if (bpf_map_lookup_elem(l->counts_fd, &s->key, &c) == 0) {
			on_count(l, &s->key, &c, now, 1, fn, arg);
			bpf_map_delete_elem(l->counts_fd, &s->key);
			if (s->key.site && !(c.flags & XPU_GPU_LAUNCH_NESTED))
				proc_release(l, s->key.pid);
		}
		key_drop(l, i);
		l->st.retired++;
	}
}

int xpu_gpu_launches_collect(struct xpu_gpu_launches *l, uint64_t now, xpu_gpu_launches_fn fn, void *arg)
{
	/* The batch token of a hash map is a bucket number (a __u32). */
	__u64 in = 0, out = 0;
	int last = 0, n;
	for (int first = 1; !last; first = 0, in = out) {
		if ((n = read_batch(l, first ? NULL : &in, &out, &last)) < 0)
			return -1;
		for (int i = 0; i < n; i++)
			on_count(l, &l->keys[i], &l->vals[i], now, 0, fn, arg);
	}
	retire(l, now, fn, arg);
	return 0;
}

void xpu_gpu_launches_mark(const struct xpu_gpu_launches *l, struct xpu_dict *d)
{
	for (uint32_t i = 0; i < l->n; i++)
		xpu_dict_mark_stack(d, l->v[i].stack);
}

void xpu_gpu_launches_stats(const struct xpu_gpu_launches *l, struct xpu_gpu_launches_stats *st)
{
	*st = l->st;
}
