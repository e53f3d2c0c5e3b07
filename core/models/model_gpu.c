/* SPDX-License-Identifier: GPL-2.0-only */
#include "model_gpu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "grow.h"
#include "kname.h"
#include "trim.h"
#include "event.h"
#include "symbolize.h"

#define JOIN_CAP (1u << 20)	/* launches waiting for kernels, at most */
#define JOIN_START (1u << 12)	/* the ring grows by doubling up to JOIN_CAP */
/* A launch whose kernels have not all run after this long is forgotten. */
#define JOIN_KEEP_NS (10ULL * 1000000000ULL)
/* Kernel records arrive up to a flush period late; intervals are kept this
 * much longer than the window so late ones still merge correctly. */
#define LATE_NS (2ULL * 1000000000ULL)

/* The uncertainty of each row's total is on screen where a row is sampled
 * (and there is room); in JSON always, 0 when exact. */
#define GPU_COLS(total_err_flags)                                                                            \
	{                                                                                                    \
		[XPU_GPU_COL_KERNEL] = { "KERNEL", "kernel", XPU_CELL_STR, 24, XPU_COL_LEFT | XPU_COL_FLEX }, \
		[XPU_GPU_COL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },                                     \
		[XPU_GPU_COL_PROC] = { "PROCESS", "comm", XPU_CELL_STR, 12, XPU_COL_LEFT },                   \
		[XPU_GPU_COL_DEV] = { "DEV", "device", XPU_CELL_INT, 3, 0 },                                  \
		[XPU_GPU_COL_CALLS] = { "CALLS", "calls", XPU_CELL_INT, 8, 0 },                               \
		[XPU_GPU_COL_TOTAL] = { "TOTAL", "total_ns", XPU_CELL_NS, 9, 0 },                             \
		[XPU_GPU_COL_TOTAL_ERR] = { "+-", "total_ns_err_pct", XPU_CELL_ERR, 5, total_err_flags },     \
		[XPU_GPU_COL_AVG] = { "AVG", "avg_ns", XPU_CELL_NS, 9, 0 },                                   \
		[XPU_GPU_COL_MAX] = { "MAX", "max_ns", XPU_CELL_NS, 9, 0 },                                   \
		[XPU_GPU_COL_SHARE] = { "SHARE%", "share_pct", XPU_CELL_PCT, 6, 0 },                          \
		[XPU_GPU_COL_NAME] = { "NAME", "name", XPU_CELL_STR, 0, XPU_COL_JSON_ONLY },                  \
		[XPU_GPU_COL_MANGLED] = { "MANGLED", "mangled", XPU_CELL_STR, 0, XPU_COL_JSON_ONLY },         \
		[XPU_GPU_COL_CALLS_ERR] = { "CALLS+-", "calls_err_pct", XPU_CELL_ERR, 0, XPU_COL_JSON_ONLY }, \
		[XPU_GPU_COL_SHARE_ERR] = { "SHARE+-", "share_err_pct", XPU_CELL_ERR, 0, XPU_COL_JSON_ONLY }, \
	}
const struct xpu_col xpu_gpu_cols[XPU_GPU_NCOLS] = GPU_COLS(XPU_COL_SPARE);
static const struct xpu_col exact_cols[XPU_GPU_NCOLS] = GPU_COLS(XPU_COL_JSON_ONLY);

static void proc_free(struct xpu_gpu_proc *p)
{
	xpu_win_count_free(&p->traced);
	xpu_win_count_free(&p->sampled_slices);
	xpu_win_count_free(&p->own_in);
	xpu_win_count_free(&p->own_all);
	xpu_win_count_free(&p->cuda_in);
	xpu_win_count_free(&p->cuda_all);
	xpu_win_count_free(&p->pseen);
	xpu_win_count_free(&p->ptraced);
	xpu_win_count_free(&p->ptrap);
	xpu_win_count_free(&p->pover);
	xpu_win_count_free(&p->wseen);
	xpu_win_count_free(&p->wtime);
	xpu_win_count_free(&p->wtrap);
	xpu_win_count_free(&p->lwt);
	xpu_win_count_free(&p->pcpu);
	xpu_win_count_free(&p->wcpu);
	xpu_win_count_free(&p->acpu);
	xpu_win_count_free(&p->cpu_miss);
	xpu_win_count_free(&p->orphan);
	for (int e = 0; e < XPU_GPU_NEST; e++) {
		xpu_win_count_free(&p->seen[e]);
		xpu_win_count_free(&p->oseen[e]);
		xpu_win_count_free(&p->lw[e]);
	}
}

static void kernel_free(struct xpu_gpu_kernel *k)
{
	xpu_win_count_free(&k->calls);
	xpu_win_count_free(&k->ns);
	xpu_win_count_free(&k->wcalls);
	xpu_win_count_free(&k->wns);
	xpu_win_max_free(&k->max);
}

int xpu_gpu_model_init(struct xpu_gpu_model *m, struct xpu_dict *d, uint32_t window_ticks)
{
	memset(m, 0, sizeof(*m));
	m->dict = d;
	xpu_htab_init(&m->kidx);
	xpu_htab_init(&m->jidx);
	xpu_htab_init(&m->flame_idx);
	xpu_htab_init(&m->graph_api_idx);
	xpu_htab_init(&m->claim_idx);
	int rc = xpu_ticks_init(&m->ticks, window_ticks);
	if (rc == 0)
		rc = xpu_win_count_init(&m->joined, m->ticks.window);
	if (rc == 0)
		rc = xpu_win_count_init(&m->unjoined, m->ticks.window);
	m->joins = calloc(JOIN_START, sizeof(*m->joins));
	m->jcap = JOIN_START;
	m->trace = calloc(XPU_GPU_TRACE_MAX, sizeof(*m->trace));
	m->max_kernels = XPU_GPU_MAX_KERNEL_ROWS;
	m->max_procs = XPU_GPU_MAX_PROCS;
	if (rc < 0 || !m->joins || !m->trace ||
	    xpu_stacks_init(&m->stacks, m->ticks.window) < 0 ||
	    xpu_stacks_init(&m->launch_stacks, m->ticks.window) < 0) {
		xpu_gpu_model_free(m);
		return -ENOMEM;
	}
	uint32_t info = xpu_dict_cstr(d, "[no stack]");
	m->no_stack_frame = xpu_dict_frame(d, XPU_FRAME_INFO, info, 0);
	return 0;
}

void xpu_gpu_model_free(struct xpu_gpu_model *m)
{
	for (uint32_t i = 0; i < m->nkernels; i++)
		kernel_free(&m->kernels[i]);
	for (int i = 0; i < XPU_GPU_MAX_DEVICES; i++) {
		free(m->dev[i].iv);
		xpu_win_count_free(&m->dev[i].memcpy_ns);
		xpu_win_count_free(&m->dev[i].memcpy_bytes);
		xpu_win_count_free(&m->dev[i].kernels);
	}
	free(m->kernels);
	for (uint32_t i = 0; i < m->nprocs; i++)
		proc_free(&m->procs[i]);
	free(m->procs);
	free(m->joins);
	free(m->flame_cache);
	free(m->trace);
	free(m->claims);
	xpu_ticks_free(&m->ticks);
	xpu_win_count_free(&m->joined);
	xpu_win_count_free(&m->unjoined);
	xpu_htab_free(&m->kidx);
	xpu_htab_free(&m->jidx);
	xpu_htab_free(&m->flame_idx);
	xpu_htab_free(&m->graph_api_idx);
	free(m->graph_api);
	xpu_htab_free(&m->claim_idx);
	xpu_stacks_free(&m->stacks);
	xpu_stacks_free(&m->launch_stacks);
	memset(m, 0, sizeof(*m));
}

/* ---- names ---- */

static int claim_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_model *m = ctx;
	return m->claims[i].text == *(const uint32_t *)key;
}

/* Takes text for the kernel name owner: 1 when it is (now) the owner's, 0
 * when another name's, -1 when out of memory. */
static int claim(struct xpu_gpu_model *m, uint32_t text, uint32_t owner)
{
	uint64_t h = xpu_hash_u64(text);
	uint32_t i = xpu_htab_find(&m->claim_idx, h, claim_eq, m, &text);
	if (i != UINT32_MAX)
		return m->claims[i].owner == owner;
	if (!text || xpu_grow((void **)&m->claims, &m->claim_cap, m->nclaims + 1, sizeof(*m->claims)) ||
	    xpu_htab_put(&m->claim_idx, h, m->nclaims) < 0)
		return -1;
	m->claims[m->nclaims++] = (struct xpu_gpu_claim){ text, owner };
	return 1;
}

/* Kernel name `name` (full: demangled) in form 0, 1, ...: the short form, the
 * qualified form, the full name, the name as CUPTI gave it, then that
 * numbered. */
static uint32_t form_text(struct xpu_gpu_model *m, int form, uint32_t name, const char *full)
{
	char buf[1024];
	switch (form) {
	case 0:
		xpu_kname_short(full, buf, sizeof(buf));
		break;
	case 1:
		xpu_kname_qualified(full, buf, sizeof(buf));
		break;
	case 2:
		return xpu_dict_cstr(m->dict, full);
	case 3:
		return name;
	default:
		snprintf(buf, sizeof(buf), "%.1000s #%d", xpu_dict_str_get(m->dict, name), form - 2);
	}
	return xpu_dict_cstr(m->dict, buf);
}

/* The text a kernel name shows as: its first form that no other name shows
 * as.  The same name always comes out the same, in every process. */
static uint32_t unique_text(struct xpu_gpu_model *m, uint32_t name, const char *full)
{
	for (int form = 0;; form++) {
		uint32_t text = form_text(m, form, name, full);
		int rc = claim(m, text, name);
		if (rc != 0)
			return rc > 0 ? text : name;
	}
}

/* CUPTI gives mangled names: demangled for the full name, then shortened. */
static void name_kernel(struct xpu_gpu_model *m, struct xpu_gpu_kernel *k)
{
	char full[4096];
	xpu_demangle(xpu_dict_str_get(m->dict, k->name), full, sizeof(full));
	k->full_name = xpu_dict_cstr(m->dict, full);
	k->short_name = unique_text(m, k->name, full);
	k->frame = xpu_dict_frame(m->dict, XPU_FRAME_GPU, k->full_name, 0);
}

/* ---- kernels ---- */

struct kkey { uint32_t pid, name, device; };

static int kernel_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_model *m = ctx;
	const struct kkey *k = key;
	const struct xpu_gpu_kernel *r = &m->kernels[i];
	return r->pid == k->pid && r->name == k->name && r->device == k->device;
}

static struct xpu_gpu_kernel *kernel_get(struct xpu_gpu_model *m, uint32_t pid, uint32_t name,
					 uint32_t device, uint32_t comm)
{
	struct kkey k = { pid, name, device };
	uint64_t h = xpu_hash_u32s(&k.pid, 3, 0x6b65);
	uint32_t i = xpu_htab_find(&m->kidx, h, kernel_eq, m, &k);
	if (i != UINT32_MAX)
		return &m->kernels[i];
	if (xpu_grow((void **)&m->kernels, &m->kcap, m->nkernels + 1, sizeof(*m->kernels)))
		return NULL;
	struct xpu_gpu_kernel *r = &m->kernels[m->nkernels];
	*r = (struct xpu_gpu_kernel){ .pid = pid, .name = name, .device = device, .comm = comm };
	if (xpu_win_count_init(&r->calls, m->ticks.window) < 0 || xpu_win_count_init(&r->ns, m->ticks.window) < 0 ||
	    xpu_win_count_init(&r->wcalls, m->ticks.window) < 0 || xpu_win_count_init(&r->wns, m->ticks.window) < 0 ||
	    xpu_win_max_init(&r->max, m->ticks.window) < 0 || xpu_htab_put(&m->kidx, h, m->nkernels) < 0) {
		kernel_free(r);
		return NULL;
	}
	name_kernel(m, r);
	m->nkernels++;
	return r;
}

/* ---- processes ---- */

static struct xpu_gpu_proc *proc_find(const struct xpu_gpu_model *m, uint32_t pid)
{
	for (uint32_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static struct xpu_gpu_proc *proc_get(struct xpu_gpu_model *m, uint32_t pid, uint32_t comm)
{
	struct xpu_gpu_proc *q = proc_find(m, pid);
	if (q) {
		if (comm)
			q->comm = comm;
		return q;
	}
	if (xpu_grow((void **)&m->procs, &m->pcap, m->nprocs + 1, sizeof(*m->procs)))
		return NULL;
	struct xpu_gpu_proc *p = &m->procs[m->nprocs];
	*p = (struct xpu_gpu_proc){ .pid = pid, .comm = comm, .scale = { 1, 1 } };
	int bad = xpu_win_count_init(&p->traced, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->sampled_slices, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->own_in, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->own_all, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->cuda_in, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->cuda_all, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->pseen, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->ptraced, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->ptrap, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->pover, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->wseen, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->wtime, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->wtrap, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->lwt, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->pcpu, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->wcpu, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->acpu, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->cpu_miss, m->ticks.window) < 0 ||
		  xpu_win_count_init(&p->orphan, m->ticks.window) < 0;
	for (int e = 0; e < XPU_GPU_NEST; e++)
		bad |= xpu_win_count_init(&p->seen[e], m->ticks.window) < 0 ||
		       xpu_win_count_init(&p->oseen[e], m->ticks.window) < 0 ||
		       xpu_win_count_init(&p->lw[e], m->ticks.window) < 0;
	if (bad) {
		proc_free(p);
		return NULL;
	}
	m->nprocs++;
	return p;
}

/* ---- the launch/kernel join ---- */

struct jkey { uint32_t pid, corr; };

static int join_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_model *m = ctx;
	const struct jkey *k = key;
	const struct xpu_gpu_join *j = &m->joins[i];
	return j->pid == k->pid && j->corr == k->corr;
}

static uint64_t join_hash(uint32_t pid, uint32_t corr)
{
	return xpu_hash_u64(((uint64_t)pid << 32) | corr);
}

static void join_pop(struct xpu_gpu_model *m)
{
	uint32_t i = m->jhead % m->jcap;
	struct xpu_gpu_join *j = &m->joins[i];
	xpu_htab_del(&m->jidx, join_hash(j->pid, j->corr), i);
	m->jhead++;
}

/* Doubles the ring, its live part moved to the front in order. */
static int join_grow(struct xpu_gpu_model *m)
{
	uint32_t n = m->jtail - m->jhead, cap = m->jcap * 2;
	struct xpu_gpu_join *v = malloc((size_t)cap * sizeof(*v));
	if (!v)
		return -1;
	for (uint32_t k = 0; k < n; k++)
		v[k] = m->joins[(m->jhead + k) % m->jcap];
	free(m->joins);
	m->joins = v;
	m->jcap = cap;
	m->jhead = 0;
	m->jtail = n;
	xpu_htab_free(&m->jidx);
	xpu_htab_init(&m->jidx);
	for (uint32_t k = 0; k < n; k++)
		xpu_htab_put(&m->jidx, join_hash(v[k].pid, v[k].corr), k);
	return 0;
}

static void join_put(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct jkey k = { ev->pid, ev->launch.corr };
	uint64_t h = join_hash(k.pid, k.corr);
	uint32_t i = xpu_htab_find(&m->jidx, h, join_eq, m, &k);
	if (i == UINT32_MAX) {
		if (m->jtail - m->jhead == m->jcap && (m->jcap >= JOIN_CAP || join_grow(m) < 0))
			join_pop(m);
		i = m->jtail++ % m->jcap;
		if (xpu_htab_put(&m->jidx, h, i) < 0) {
			m->jtail--;
			return;
		}
	}
	m->joins[i] = (struct xpu_gpu_join){ ev->pid, ev->launch.corr, ev->tid, ev->launch.stack,
					     ev->launch.api, !!(ev->launch.flags & XPU_GPU_LAUNCH_WHOLE), ev->time };
}

static const struct xpu_gpu_join *join_find(const struct xpu_gpu_model *m, uint32_t pid, uint32_t corr)
{
	struct jkey k = { pid, corr };
	uint32_t i = xpu_htab_find(&m->jidx, join_hash(pid, corr), join_eq, m, &k);
	return i == UINT32_MAX ? NULL : &m->joins[i];
}

/* ---- flame stacks: launch stack + the kernel ---- */

static int flame_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_model *m = ctx;
	const uint32_t *k = key;
	return m->flame_cache[i][0] == k[0] && m->flame_cache[i][1] == k[1];
}

static uint32_t flame_stack(struct xpu_gpu_model *m, uint32_t launch_stack, uint32_t kframe)
{
	uint32_t key[2] = { launch_stack, kframe };
	uint64_t h = xpu_hash_u32s(key, 2, 0xf1);
	uint32_t i = xpu_htab_find(&m->flame_idx, h, flame_eq, m, key);
	if (i != UINT32_MAX)
		return m->flame_cache[i][2];
	uint32_t frames[XPU_DICT_MAX_DEPTH], n = 0;
	if (launch_stack) {
		const uint32_t *f = xpu_dict_stack_get(m->dict, launch_stack, &n);
		if (n >= XPU_DICT_MAX_DEPTH)
			n = XPU_DICT_MAX_DEPTH - 1;
		memcpy(frames, f, n * sizeof(uint32_t));
	} else {
		frames[n++] = m->no_stack_frame;
	}
	frames[n++] = kframe;
	uint32_t stack = xpu_dict_stack(m->dict, frames, n);
	if (xpu_grow((void **)&m->flame_cache, &m->flame_cap, m->nflame + 1, sizeof(*m->flame_cache)) == 0) {
		m->flame_cache[m->nflame][0] = launch_stack;
		m->flame_cache[m->nflame][1] = kframe;
		m->flame_cache[m->nflame][2] = stack;
		if (xpu_htab_put(&m->flame_idx, h, m->nflame) == 0)
			m->nflame++;
	}
	return stack;
}

void xpu_gpu_model_mark(const struct xpu_gpu_model *m)
{
	xpu_stacks_mark(&m->stacks, m->dict);
	xpu_stacks_mark(&m->launch_stacks, m->dict);
	for (uint32_t k = m->jhead; k != m->jtail; k++)
		xpu_dict_mark_stack(m->dict, m->joins[k % m->jcap].stack);
}

void xpu_gpu_model_prune(struct xpu_gpu_model *m)
{
	uint32_t n = 0;
	xpu_htab_free(&m->flame_idx);
	xpu_htab_init(&m->flame_idx);
	for (uint32_t i = 0; i < m->nflame; i++) {
		uint32_t *c = m->flame_cache[i];
		if ((c[0] && !xpu_dict_stack_marked(m->dict, c[0])) || !xpu_dict_stack_marked(m->dict, c[2]))
			continue;
		memmove(m->flame_cache[n], c, sizeof(m->flame_cache[n]));
		/* The index was just emptied and holds fewer entries than before,
		 * so a failure here can only be out of memory: the path is
		 * then simply built again on its next kernel. */
		if (xpu_htab_put(&m->flame_idx, xpu_hash_u32s(m->flame_cache[n], 2, 0xf1), n) == 0)
			n++;
	}
	m->nflame = n;
}

/* ---- devices ---- */

static struct xpu_gpu_device *device(struct xpu_gpu_model *m, uint32_t d)
{
	if (d >= XPU_GPU_MAX_DEVICES)
		return NULL;
	struct xpu_gpu_device *v = &m->dev[d];
	if (!v->used) {
		if (xpu_win_count_init(&v->memcpy_ns, m->ticks.window) < 0 ||
		    xpu_win_count_init(&v->memcpy_bytes, m->ticks.window) < 0 ||
		    xpu_win_count_init(&v->kernels, m->ticks.window) < 0)
			return NULL;
		v->used = 1;
	}
	return v;
}

/* Adds [s, e) to the device's merged, sorted intervals and to busy_all.
 * Records mostly arrive in order, so this is usually an append. */
static void add_interval(struct xpu_gpu_device *v, uint64_t s, uint64_t e)
{
	struct xpu_gpu_interval *iv = v->iv ? v->iv + v->head : NULL;	/* none yet */
	uint32_t n = v->n;
	if (e <= s)
		return;
	if (n && s <= iv[n - 1].end && e > iv[n - 1].end && s >= iv[n - 1].start) {
		v->busy_all += e - iv[n - 1].end;
		iv[n - 1].end = e;
		return;
	}
	if (!n || s > iv[n - 1].end) {
		if (v->head + n == v->cap) {
			if (v->head) {	/* slide the live part down before growing */
				memmove(v->iv, iv, n * sizeof(*iv));
				v->head = 0;
			} else if (xpu_grow((void **)&v->iv, &v->cap, n + 1, sizeof(*v->iv))) {
				return;
			}
			iv = v->iv + v->head;
		}
		iv[n] = (struct xpu_gpu_interval){ s, e };
		v->n++;
		v->busy_all += e - s;
		return;
	}
	/* Out of order: find the intervals it overlaps and merge them into one. */
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (iv[mid].end < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t first = lo, last = lo;
	uint64_t covered = 0, ns = s, ne = e;
	while (last < n && iv[last].start <= e) {
		covered += iv[last].end - iv[last].start;
		if (iv[last].start < ns)
			ns = iv[last].start;
		if (iv[last].end > ne)
			ne = iv[last].end;
		last++;
	}
	v->busy_all += (ne - ns) - covered;
	if (first == last) {	/* overlaps nothing: insert */
		if (v->head + n == v->cap && xpu_grow((void **)&v->iv, &v->cap, v->head + n + 1, sizeof(*v->iv)))
			return;
		iv = v->iv + v->head;
		memmove(iv + first + 1, iv + first, (n - first) * sizeof(*iv));
		iv[first] = (struct xpu_gpu_interval){ ns, ne };
		v->n++;
		return;
	}
	iv[first] = (struct xpu_gpu_interval){ ns, ne };
	memmove(iv + first + 1, iv + last, (n - last) * sizeof(*iv));
	v->n -= last - first - 1;
}

static void prune_intervals(struct xpu_gpu_device *v, uint64_t before)
{
	while (v->n && v->iv[v->head].end < before) {
		v->head++;
		v->n--;
	}
	if (!v->n)
		v->head = 0;
}

static uint64_t busy_since(const struct xpu_gpu_device *v, uint64_t from, uint64_t to)
{
	uint64_t busy = 0;
	for (uint32_t i = v->n; i-- > 0;) {
		const struct xpu_gpu_interval *x = &v->iv[v->head + i];
		if (x->end <= from)
			break;
		uint64_t s = x->start > from ? x->start : from, e = x->end < to ? x->end : to;
		if (e > s)
			busy += e - s;
	}
	return busy;
}

/* ---- events ---- */

static void trace_add(struct xpu_gpu_model *m, const struct xpu_gpu_trace_rec *r)
{
	m->trace[m->ntrace++ % XPU_GPU_TRACE_MAX] = *r;
}

/* The probes' spans that came before a launch-only process was one (the
 * model meets it with its first key's launches, a refresh or more after
 * the first span that counted it, and after any span in which it launched
 * nothing yet), from its start on: its time from its start is theirs too.
 * Without them that time counted as time none of theirs covered, estimated
 * at the pace of the slices after it (an H200 training run seen by the
 * probes only, on throughout for the 13 s it imported and built its model:
 * +182%).  What lies in the recent window goes to the open tick; what lies
 * before it, to the since-start figures alone.  Spans let go from the ring
 * move its start up to the oldest kept. */
static void credit_past(struct xpu_gpu_model *m, struct xpu_gpu_proc *p, uint64_t now)
{
	if (p->past_done || !p->started)
		return;
	p->past_done = 1;
	uint64_t n = p->hist_mark, first = n > XPU_GPU_PROBE_HIST ? n - XPU_GPU_PROBE_HIST : 0;
	uint64_t win = now > m->ticks.window_ns ? now - m->ticks.window_ns : 0;
	if (first && p->started < m->probe_hist[first % XPU_GPU_PROBE_HIST].start) {
		p->started = m->probe_hist[first % XPU_GPU_PROBE_HIST].start;
		p->since = p->started;
	}
	for (uint64_t i = first; i < n; i++) {
		const struct xpu_gpu_span *h = &m->probe_hist[i % XPU_GPU_PROBE_HIST];
		uint64_t a = h->start > p->started ? h->start : p->started;
		uint64_t b = p->left_at && p->left_at < h->end ? p->left_at : h->end;
		if (a >= b)
			continue;
		uint64_t in = b > win ? b - (a > win ? a : win) : 0, old = b - a - in;
		if (h->mode == XPU_GPU_MODE_WHOLE) {
			p->wtime.open += in;
			p->wtime.total += old;
			continue;
		}
		p->tracing = h->mode;
		p->traced.open += in;
		p->traced.total += old;
		if (h->mode == XPU_GPU_MODE_SAMPLED) {
			if (in)
				p->sampled_slices.open++;
			else
				p->sampled_slices.total++;
			p->sampled_all += b - a;
		}
	}
}

/* Seen by the launch probes, not the library: the time its launches are
 * estimated over begins where it started (GPU_BORN), where that is known,
 * not at the first span that counted one (which left out the launches
 * before it: -20% on a 4 s process counted in slices, tests/bpf/gpu.sh),
 * with the probes' spans before the model met it put to it. */
static void launch_only(struct xpu_gpu_model *m, struct xpu_gpu_proc *p, uint64_t now)
{
	if (!p->launch_only)
		p->hist_mark = m->nprobe_hist;
	p->launch_only = 1;
	if (p->started) {
		p->since = p->started;
		credit_past(m, p, now);
	}
}

static int on_launch(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	uint32_t calls = ev->launch.count ? ev->launch.count : 1;
	/* Counted while the probes were on throughout: every launch, as it
	 * is (a launch-only process's are in its launch events too). */
	if ((ev->launch.flags & (XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE)) ==
	    (XPU_GPU_LAUNCH_PROBED | XPU_GPU_LAUNCH_WHOLE)) {
		struct xpu_gpu_proc *q = proc_get(m, ev->pid, 0);
		if (!q)
			return -ENOMEM;
		/* its launch events may come later (a key waits for its stack):
		 * launch-only from now, so that the spans count for it */
		if (ev->launch.flags & XPU_GPU_LAUNCH_ONLY)
			launch_only(m, q, ev->time);
		q->wseen.open += ev->launch.count;
		q->wtrap.open += ev->launch.trap_ns;
		return 0;
	}
	/* The traps alone (a launch-only process's driver launches under its
	 * runtime ones): of a process already seen only. */
	if ((ev->launch.flags & XPU_GPU_LAUNCH_PROBED) && !ev->launch.count) {
		struct xpu_gpu_proc *q = proc_find(m, ev->pid);
		if (q)
			q->ptrap.open += ev->launch.trap_ns;
		return 0;
	}
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, ev->launch.comm);
	if (!p)
		return -ENOMEM;
	p->ptrap.open += ev->launch.trap_ns;
	if (ev->launch.flags & XPU_GPU_LAUNCH_PROBED) {
		p->pseen.open += ev->launch.count;
		return 0;
	}
	p->launches.open += calls;
	p->seen[XPU_GPU_EST_LAUNCHES].open += calls;
	/* Its library's, on throughout: counted as it is. */
	if ((ev->launch.flags & (XPU_GPU_LAUNCH_WHOLE | XPU_GPU_LAUNCH_ONLY)) == XPU_GPU_LAUNCH_WHOLE)
		p->lw[XPU_GPU_EST_LAUNCHES].open += calls;
	/* Launches seen by the launch-only probes are counted, not timed: they
	 * have no place in the trace. */
	if (ev->launch.flags & XPU_GPU_LAUNCH_ONLY) {
		launch_only(m, p, ev->time);
		return xpu_stacks_add(&m->launch_stacks, ev->pid, ev->tid, ev->launch.stack,
				      ev->launch.comm, calls);
	}
	trace_add(m, &(struct xpu_gpu_trace_rec){ .start = ev->time, .end = ev->time, .pid = ev->pid,
						   .tid = ev->tid, .name = ev->launch.api,
						   .corr = ev->launch.corr, .is_launch = 1 });
	join_put(m, ev);
	return 0;
}

static int graph_api_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_model *m = ctx;
	return m->graph_api[i][0] == *(const uint32_t *)key;
}

/* Whether a launch API replays a CUDA graph (cudaGraphLaunch, cuGraphLaunch
 * and their _ptsz twins), remembered per API string. */
static int graph_launch_api(struct xpu_gpu_model *m, uint32_t api)
{
	uint64_t h = xpu_hash_u64(api);
	uint32_t i = xpu_htab_find(&m->graph_api_idx, h, graph_api_eq, m, &api);
	if (i != UINT32_MAX)
		return (int)m->graph_api[i][1];
	int is = strstr(xpu_dict_str_get(m->dict, api), "GraphLaunch") != NULL;
	if (xpu_grow((void **)&m->graph_api, &m->graph_api_cap, m->ngraph_api + 1, sizeof(*m->graph_api)) == 0 &&
	    xpu_htab_put(&m->graph_api_idx, h, m->ngraph_api) == 0) {
		m->graph_api[m->ngraph_api][0] = api;
		m->graph_api[m->ngraph_api++][1] = (uint32_t)is;
	}
	return is;
}

/* A new kernel row: the ticks its process traced before saw none of it. */
static void kernel_seed(struct xpu_gpu_kernel *r, const struct xpu_gpu_proc *p)
{
	const struct xpu_gpu_sd *t = &p->sd[XPU_GPU_EST_KERNELS], *ns = &p->sd[XPU_GPU_EST_NS];
	r->sd[XPU_GPU_KEST_CALLS] = (struct xpu_gpu_sd){ .n = t->n, .t = t->t, .pt = t->pt, .dtt = t->dtt };
	r->sd[XPU_GPU_KEST_NS] = r->sd[XPU_GPU_KEST_CALLS];
	r->sd[XPU_GPU_KEST_SHARE] =
		(struct xpu_gpu_sd){ .n = ns->n, .t = ns->y, .pt = ns->py, .dtt = ns->dyy };
	t = &p->osd[XPU_GPU_EST_KERNELS];
	r->osd[XPU_GPU_KEST_CALLS] = (struct xpu_gpu_sd){ .n = t->n, .t = t->t, .pt = t->pt, .dtt = t->dtt };
	r->osd[XPU_GPU_KEST_NS] = r->osd[XPU_GPU_KEST_CALLS];
}

static int on_kernel(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_gpu_kernel *k = &ev->kernel;
	uint64_t dur = k->end > ev->time ? k->end - ev->time : 0;
	uint32_t rows = m->nkernels;
	struct xpu_gpu_kernel *r = kernel_get(m, ev->pid, k->name, k->device, k->comm);
	struct xpu_gpu_device *v = device(m, k->device);
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, k->comm);
	if (!r)
		return -ENOMEM;
	if (p && m->nkernels > rows)
		kernel_seed(r, p);
	if (p) {
		p->kernels++;
		p->seen[XPU_GPU_EST_KERNELS].open++;
		p->seen[XPU_GPU_EST_NS].open += dur;
	}
	r->calls.open++;
	r->ns.open += dur;
	xpu_win_max_add(&r->max, dur);
	const struct xpu_gpu_join *j = join_find(m, ev->pid, k->corr);
	if (p && !j)
		p->orphan.open++;
	uint32_t launch = j ? j->stack : 0;
	/* Launched while its library traced throughout: counted as it is (a
	 * kernel whose launch record was lost counts as the slices'). */
	if (j && j->whole) {
		r->wcalls.open++;
		r->wns.open += dur;
		if (p) {
			p->lw[XPU_GPU_EST_KERNELS].open++;
			p->lw[XPU_GPU_EST_NS].open += dur;
		}
	}
	if (k->graph) {
		m->graph_kernels++;
		m->graph_kernels_joined += j && j->api && graph_launch_api(m, j->api);
	}
	if (launch)
		m->joined.open += dur;
	else
		m->unjoined.open += dur;
	if (v) {
		add_interval(v, ev->time, k->end);
		v->kernels.open++;
	}
	trace_add(m, &(struct xpu_gpu_trace_rec){ .start = ev->time, .end = k->end, .pid = ev->pid,
						   .tid = j ? j->tid : 0, .name = r->full_name,
						   .device = k->device, .stream = k->stream, .corr = k->corr });
	return xpu_stacks_add(&m->stacks, ev->pid, j ? j->tid : 0, flame_stack(m, launch, r->frame),
			      k->comm, dur);
}

static void on_memcpy(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct xpu_gpu_device *v = device(m, ev->memcpy.device);
	uint64_t dur = ev->memcpy.end > ev->time ? ev->memcpy.end - ev->time : 0;
	if (!v)
		return;
	v->memcpy_ns.open += dur;
	v->memcpy_bytes.open += ev->memcpy.bytes;
}

/* The process's stacks merge by name once idle (stacks.h). */
static void retire(struct xpu_gpu_model *m, uint32_t pid)
{
	xpu_stacks_retire(&m->stacks, pid);
	xpu_stacks_retire(&m->launch_stacks, pid);
}

void xpu_gpu_model_exit(struct xpu_gpu_model *m, uint32_t pid, uint64_t time)
{
	struct xpu_gpu_proc *p = proc_find(m, pid);
	if (!p)
		return;
	retire(m, pid);
	/* A launch-only process's time ends where it exited: the probes'
	 * spans after it saw none of its launches and stand for none. */
	if (p->launch_only && !p->left_at)
		p->left_at = time;
}

static int on_born(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, 0);
	if (!p)
		return -ENOMEM;
	/* A process that took the id of one that exited: from its start on,
	 * the probes' spans since then its (they were the old one's, cut at
	 * its exit). */
	if (p->left_at && ev->time >= p->left_at) {
		p->left_at = 0;
		p->past_done = 0;
		p->hist_mark = m->nprobe_hist;
	}
	/* Each of its keys brings it: the first one's stands (credit_past
	 * may have moved it up to the oldest span kept). */
	if (p->past_done)
		return 0;
	p->started = ev->time;
	if (p->launch_only) {
		p->since = ev->time;
		credit_past(m, p, ev->time);
	}
	return 0;
}

static void on_proc(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, ev->gproc.comm);
	if (!p)
		return;
	p->state = ev->gproc.state;
	if (ev->gproc.state == XPU_GPU_PROC_CONNECTED) {
		if (!p->since)
			p->since = ev->time;
		p->left_at = 0;
	}
	if (ev->gproc.state == XPU_GPU_PROC_LEFT)
		p->left_at = ev->time;
	if (ev->gproc.state == XPU_GPU_PROC_LEFT)
		retire(m, ev->pid);
	if (ev->gproc.state == XPU_GPU_PROC_CONNECTED)
		p->launch_only = 0;
	if (ev->gproc.state == XPU_GPU_PROC_STATUS) {
		p->detail = ev->gproc.detail & XPU_GPU_DETAIL_STATE;
		p->cupti_attached = !!(ev->gproc.detail & XPU_GPU_DETAIL_ATTACHED);
		p->sites = ev->gproc.sites;
		p->dropped = ev->gproc.dropped;
		p->cupti_dropped = ev->gproc.cupti_dropped;
		p->kernels_dropped = ev->gproc.kernels_dropped;
	}
}

/* A slice (of ev's mode) p traced from `from` to `to`. */
static void slice_add(struct xpu_gpu_proc *p, const struct xpu_event *ev, uint64_t from, uint64_t to)
{
	if (!p->since || p->since > from)
		p->since = from;
	uint64_t len = to - from;
	p->tracing = ev->slice.mode;
	p->traced.open += len;
	if (ev->slice.mode == XPU_GPU_MODE_SAMPLED) {
		p->sampled_slices.open++;
		p->sampled_all += len;
	}
}

/* The time [lo, hi) shares with the spans v[0..n). */
static uint64_t overlap(uint64_t lo, uint64_t hi, const uint64_t (*v)[2], uint32_t n)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < n && i < XPU_GPU_SPANS_KEPT; i++) {
		uint64_t a = v[i][0] > lo ? v[i][0] : lo, b = v[i][1] < hi ? v[i][1] : hi;
		t += b > a ? b - a : 0;
	}
	return t;
}

static void keep_span(uint64_t (*v)[2], uint32_t *n, uint64_t lo, uint64_t hi)
{
	v[*n % XPU_GPU_SPANS_KEPT][0] = lo;
	v[*n % XPU_GPU_SPANS_KEPT][1] = hi;
	++*n;
}

/* Where a span of the probes ends for process p: its end, or where p left. */
static uint64_t span_end(const struct xpu_gpu_proc *p, const struct xpu_event *ev)
{
	return p->left_at && p->left_at < ev->slice.end ? p->left_at : ev->slice.end;
}

/* A span a process traced; pid 0: the launch-only probes were on, for
 * every process they count.  Where a probes' span and a process's sampled
 * slice overlap, the later of the two to come finds the other kept. */
static int on_slice(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	int sampled = ev->slice.mode == XPU_GPU_MODE_SAMPLED;
	if (ev->slice.end < ev->time)
		return 0;
	if (ev->pid == 0) {
		m->probe_hist[m->nprobe_hist++ % XPU_GPU_PROBE_HIST] =
			(struct xpu_gpu_span){ ev->time, ev->slice.end, ev->slice.mode };
	}
	/* The probes' spans come at the refresh after they end: a process
	 * that left meanwhile has the part up to its leaving (dropped whole,
	 * its last second on throughout was estimated at their pace, 2-5% high
	 * on the H200's mostly idle process). */
	if (ev->pid == 0 && ev->slice.mode == XPU_GPU_MODE_WHOLE) {
		for (uint32_t i = 0; i < m->nprocs; i++) {
			struct xpu_gpu_proc *p = &m->procs[i];
			if (p->launch_only && !p->started && (!p->since || p->since > ev->time))
				p->since = ev->time;
			uint64_t from = p->since > ev->time ? p->since : ev->time, to = span_end(p, ev);
			if ((p->launch_only || p->since) && from < to)
				p->wtime.open += to - from;
		}
		return 0;
	}
	if (ev->pid == 0) {
		for (uint32_t i = 0; i < m->nprocs; i++) {
			struct xpu_gpu_proc *p = &m->procs[i];
			uint64_t from = p->since > ev->time ? p->since : ev->time, to = span_end(p, ev);
			if (p->launch_only) {
				/* from its start, to where it exited */
				uint64_t a = p->started > ev->time ? p->started : ev->time;
				if (a < to)
					slice_add(p, ev, a, to);
			} else if (sampled && p->since && from < to) {
				p->ptraced.open += to - from;
				p->pover.open += overlap(from, to, p->slice_at, p->nslice_at);
			}
		}
		if (sampled)
			keep_span(m->probe_at, &m->nprobe_at, ev->time, ev->slice.end);
		return 0;
	}
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, ev->slice.comm);
	if (!p)
		return -ENOMEM;
	/* Its library on throughout: not a slice, and not traced time the
	 * rest is scaled by. */
	if (ev->slice.mode == XPU_GPU_MODE_WHOLE) {
		if (!p->since || p->since > ev->time)
			p->since = ev->time;
		p->lwt.open += ev->slice.end - ev->time;
		return 0;
	}
	slice_add(p, ev, ev->time, ev->slice.end);
	if (sampled && !p->launch_only) {
		p->pover.open += overlap(ev->time, ev->slice.end, m->probe_at, m->nprobe_at);
		keep_span(p->slice_at, &p->nslice_at, ev->time, ev->slice.end);
	}
	return 0;
}

/* The since-watched counts of a process's launching threads: what came
 * since the last event goes into the open tick.  A count that went back (the
 * sampler began again) starts from zero. */
static int on_own(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct xpu_gpu_proc *p = proc_get(m, ev->pid, 0);
	if (!p)
		return -ENOMEM;
	const struct xpu_ev_gpu_own *o = &ev->gown;
	uint64_t d_own[2], d_cuda[2];
	for (int i = 0; i < 2; i++) {
		d_own[i] = o->own[i] >= p->own_last[i] ? o->own[i] - p->own_last[i] : o->own[i];
		d_cuda[i] = o->cuda[i] >= p->cuda_last[i] ? o->cuda[i] - p->cuda_last[i] : o->cuda[i];
		p->own_last[i] = o->own[i];
		p->cuda_last[i] = o->cuda[i];
	}
	p->own_in.open += d_own[1];
	p->own_all.open += d_own[0] + d_own[1];
	p->cuda_in.open += d_cuda[1];
	p->cuda_all.open += d_cuda[0] + d_cuda[1];
	p->own_hz = o->hz;
	p->own_threads = o->threads;
	p->own_on = 1;
	return 0;
}

/* An injected process's CPU time by the probes' state since the last
 * event: into the open tick. */
static int on_cpu(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	struct xpu_gpu_proc *p = proc_find(m, ev->pid);
	if (!p || p->launch_only)
		return 0;
	p->pcpu.open += ev->gcpu.slice_ns;
	p->wcpu.open += ev->gcpu.whole_ns;
	p->acpu.open += ev->gcpu.all_ns;
	if (!p->cpu_on)
		p->cpu_on = 1;
	return 0;
}

int xpu_gpu_model_event(struct xpu_gpu_model *m, const struct xpu_event *ev)
{
	switch (ev->type) {
	case XPU_EV_GPU_LAUNCH:
		return on_launch(m, ev);
	case XPU_EV_GPU_KERNEL:
		return on_kernel(m, ev);
	case XPU_EV_GPU_MEMCPY:
		on_memcpy(m, ev);
		return 0;
	case XPU_EV_GPU_PROC:
		on_proc(m, ev);
		return 0;
	case XPU_EV_GPU_SLICE:
		return on_slice(m, ev);
	case XPU_EV_GPU_OWN:
		return on_own(m, ev);
	case XPU_EV_GPU_CPU:
		return on_cpu(m, ev);
	case XPU_EV_GPU_BORN:
		return on_born(m, ev);
	default:
		return 0;
	}
}

/* ---- bounded memory (trim.h) ---- */

static int kernel_idle(const struct xpu_gpu_kernel *k)
{
	return !k->calls.open && !k->calls.recent;
}

static void trim_kernels(struct xpu_gpu_model *m)
{
	uint32_t busy = 0, nidle = 0, n = 0;
	uint64_t *w = malloc((size_t)m->nkernels * sizeof(*w));
	struct xpu_trim plan;

	if (!w)
		return;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		if (kernel_idle(&m->kernels[i]))
			w[nidle++] = m->kernels[i].ns.total;
		else
			busy++;
	}
	int go = xpu_trim_plan(m->max_kernels, busy, w, nidle, &plan);
	free(w);
	if (!go)
		return;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		struct xpu_gpu_kernel *k = &m->kernels[i];
		if (!kernel_idle(k) || xpu_trim_keeps(&plan, k->ns.total)) {
			m->kernels[n++] = *k;
			continue;
		}
		kernel_free(k);
		m->kernels_aged_out++;
	}
	m->nkernels = n;
	xpu_htab_free(&m->kidx);
	xpu_htab_init(&m->kidx);
	for (uint32_t i = 0; i < n; i++) {
		struct kkey k = { m->kernels[i].pid, m->kernels[i].name, m->kernels[i].device };
		xpu_htab_put(&m->kidx, xpu_hash_u32s(&k.pid, 3, 0x6b65), i);
	}
}

/* A process may go once it left (or, seen only by the launch probes, has
 * been quiet for a tick). */
static int proc_idle(const struct xpu_gpu_proc *p)
{
	return !p->launches.open && !p->launches.last &&
	       (p->state == XPU_GPU_PROC_LEFT || p->launch_only);
}

static void trim_procs(struct xpu_gpu_model *m)
{
	uint32_t busy = 0, nidle = 0, n = 0;
	uint64_t *w = malloc((size_t)m->nprocs * sizeof(*w));
	struct xpu_trim plan;

	if (!w)
		return;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		if (proc_idle(&m->procs[i]))
			w[nidle++] = m->procs[i].launches.total;
		else
			busy++;
	}
	int go = xpu_trim_plan(m->max_procs, busy, w, nidle, &plan);
	free(w);
	if (!go)
		return;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		struct xpu_gpu_proc *p = &m->procs[i];
		if (!proc_idle(p) || xpu_trim_keeps(&plan, p->launches.total)) {
			m->procs[n++] = *p;
		} else {
			proc_free(p);
			m->procs_aged_out++;
		}
	}
	m->nprocs = n;
}

/* a - b, not below 0 */
static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* What a process's slices saw of figure e in the open tick: not what its
 * library saw on throughout. */
static uint64_t rest_open(const struct xpu_gpu_proc *p, int e)
{
	return less(p->seen[e].open, p->lw[e].open);
}

/* Adds a tick that traced t and saw y (things: count of them seen);
 * sampled: the tick had a slice even where t is 0 (CPU time: the process
 * idled through it). */
static void sd_add_tick(struct xpu_gpu_sd *s, double y, double t, uint64_t count, int sampled)
{
	if (y <= 0 && t <= 0 && !sampled)
		return;		/* nothing traced, nothing seen: no sample */
	if (s->n) {
		double dy = y - s->py, dt = t - s->pt;
		s->dyy += dy * dy;
		s->dyt += dy * dt;
		s->dtt += dt * dt;
	}
	s->py = y;
	s->pt = t;
	s->y += y;
	s->t += t;
	s->seen += count;
	s->hits += y > 0;
	s->n++;
}

static void sd_add(struct xpu_gpu_sd *s, double y, double t, uint64_t count)
{
	sd_add_tick(s, y, t, count, 0);
}

/* The uncertainty (percent, one standard error; -1: too few ticks) of the
 * ratio seen per traced ns, from the successive differences of its ticks,
 * as for a systematic sample (one slice at a random point of each period),
 * and a Poisson term for the things seen, added in quadrature. */
static double sd_err_pct(const struct xpu_gpu_sd *s)
{
	if (s->n < XPU_GPU_EST_MIN_TICKS || s->hits < XPU_GPU_EST_MIN_HITS || !s->seen || s->t <= 0 ||
	    s->y <= 0)
		return -1;
	double r = s->y / s->t, q = s->dyy - 2 * r * s->dyt + r * r * s->dtt;
	double var = q > 0 ? (double)s->n * q / (2.0 * (double)(s->n - 1) * s->t * s->t) : 0;
	return 100 * sqrt(var / (r * r) + 1.0 / (double)s->seen);
}

/* A stated uncertainty with own-time scaling's bias (XPU_GPU_OWN_SYS_PCT)
 * added in quadrature where own time scaled it; -1 stays none. */
static double with_own_bias(double err_pct, int by_own)
{
	return err_pct >= 0 && by_own ? sqrt(err_pct * err_pct + XPU_GPU_OWN_SYS_PCT * XPU_GPU_OWN_SYS_PCT)
				       : err_pct;
}

/* The uncertainty of the part of an estimate that was scaled (rest: its
 * share of it; the rest is a count taken as it is): err of it, or, where
 * that part came at the pace of the counted one (by_pace) or its own
 * cannot be had, cap (percent of the whole estimate; -1: none). */
static double rest_err(double err, double rest, int by_pace, double cap)
{
	if (!by_pace && err >= 0 && rest > 1e-9)
		return err * rest;
	if (cap >= 0)		/* a rest estimated at nothing may still hold some */
		return cap;
	return rest <= 1e-9 ? 0 : -1;
}

/* total seen, scaled up by scale when sampled, with its uncertainty: of
 * the share rest of it that was scaled (the rest counted whole). */
static struct xpu_gpu_est estimate(const struct xpu_gpu_sd *s, uint64_t total, double scale, int sampled,
				   int by_own, double trap_share, double rest, int by_pace, double cap)
{
	if (!sampled)
		return (struct xpu_gpu_est){ (double)total, 0, 1 };
	struct xpu_gpu_est e = { (double)total * scale, 0, 0 };
	double err = scale > 0 ? with_own_bias(sd_err_pct(s), by_own) : -1, te = 100 * trap_share;
	err = rest_err(err >= 0 ? sqrt(err * err + te * te) : -1, rest, by_pace, cap);
	if (err >= 0) {
		e.err_pct = err;
		e.ok = 1;
	}
	return e;
}

/* A ring of the window's slots, less another (NULL: none). */
struct ring_less { const uint64_t *a, *b; };

static uint64_t ring_at(struct ring_less r, uint32_t slot)
{
	return less(r.a[slot], r.b ? r.b[slot] : 0);
}

/* The series of the window's ticks: y seen in t, count things; a tick
 * with when (NULL: none) above 0 is a sample whatever it traced
 * (sd_add_tick). */
static struct xpu_gpu_sd sd_window_at(const struct xpu_ticks *ticks, struct ring_less y, struct ring_less t,
				      struct ring_less count, const uint64_t *when)
{
	struct xpu_gpu_sd w = { 0 };
	uint32_t n = ticks->filled, first = (ticks->head + ticks->window - n) % ticks->window;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = (first + i) % ticks->window;
		sd_add_tick(&w, (double)ring_at(y, slot), (double)ring_at(t, slot), ring_at(count, slot),
			    when && when[slot] > 0);
	}
	return w;
}

static struct xpu_gpu_sd sd_window_less(const struct xpu_ticks *ticks, struct ring_less y, struct ring_less t,
					struct ring_less count)
{
	return sd_window_at(ticks, y, t, count, NULL);
}

static struct xpu_gpu_sd sd_window(const struct xpu_ticks *ticks, const uint64_t *y, const uint64_t *t,
				   const uint64_t *count)
{
	return sd_window_less(ticks, (struct ring_less){ y, NULL }, (struct ring_less){ t, NULL },
			      (struct ring_less){ count, NULL });
}

/* A process's figure e's series as its slices saw it (not its library on
 * throughout). */
static struct ring_less rest_ring(const struct xpu_gpu_proc *p, int e)
{
	return (struct ring_less){ p->seen[e].ring, p->lw[e].ring };
}

/* A figure of p over window w that its library saw `whole` of on
 * throughout and its slices `rest` of: the first as it is, the rest
 * scaled; with no slice to scale it by, at the pace on throughout (where
 * that was at least half the time: lib_cap). */
static double with_whole(const struct xpu_gpu_proc *p, int w, double whole, double rest)
{
	if (p->flat[w])
		return (whole + rest) * p->scale[w];
	if (p->scale[w] > 0)
		return whole + rest * p->scale[w];
	return whole + (p->lib_cap[w] ? whole * p->lib_pace[w] : 0);
}

/* Its uncertainty (percent of it; -1: none), from err, the rest's (-1:
 * none): that part's alone; where it has none and lib_cap holds, as
 * uncertain as the rest's estimate or its pace on throughout, whichever is
 * more. */
static double with_whole_err(const struct xpu_gpu_proc *p, int w, double err, double whole, double rest)
{
	if (whole <= 0 || p->flat[w])
		return err;
	double all = with_whole(p, w, whole, rest), part = all - whole;
	if (all <= 0)
		return err;
	if (err >= 0 && p->scale[w] > 0)
		return err * part / all;
	if (p->lib_cap[w])
		return 100 * fmin(1, fmax(part, whole * p->lib_pace[w]) / all);
	return -1;
}

/* An estimate of the rest made whole: its library's count on throughout
 * added. */
static struct xpu_gpu_est est_whole(const struct xpu_gpu_proc *p, int w, struct xpu_gpu_est rest,
				    uint64_t whole, uint64_t seen_rest)
{
	if (!whole)
		return rest;
	double err = with_whole_err(p, w, rest.ok ? rest.err_pct : -1, (double)whole, (double)seen_rest);
	return (struct xpu_gpu_est){ with_whole(p, w, (double)whole, (double)seen_rest), err >= 0 ? err : 0,
				     err >= 0 };
}

/* The uncertainty of the probes' estimate of p's launches over window w
 * (ps: their count against their sampled time), its scaled part's only,
 * with the traps' share and XPU_GPU_PROBE_SYS_PCT; -1: none. */
static double probe_err(const struct xpu_gpu_sd *ps, const struct xpu_gpu_proc *p, int w)
{
	double pe = sd_err_pct(ps), te = 100 * p->trap_share[w];
	return rest_err(pe >= 0 ? sqrt(pe * pe + te * te + XPU_GPU_PROBE_SYS_PCT * XPU_GPU_PROBE_SYS_PCT) : -1,
			p->rest_share[w], p->rest_by_pace[w], p->rest_cap[w]);
}

/* An estimate scaled by the probes' count (by_probe): what the slices saw
 * times scale (for the launches, the probes' count scaled by their time),
 * with the count's error against the probes' time (ps) and, for kernels and
 * GPU time, that of their ratio to the launches the slices saw (rs; as,
 * all it traced, where they give none), independent.  flat: the slices saw
 * none, rs has no launch and as is what was traced throughout. */
static struct xpu_gpu_est probe_estimate(const struct xpu_gpu_sd *ps, const struct xpu_gpu_sd *rs,
					 const struct xpu_gpu_sd *as, int e, uint64_t total,
					 const struct xpu_gpu_proc *p, int w)
{
	double scale = p->scale[w];
	struct xpu_gpu_est est = { (double)total * scale, 0, 0 };
	double pe = probe_err(ps, p, w), re = e == XPU_GPU_EST_LAUNCHES ? 0 : sd_err_pct(rs);
	/* too few slices for their ratio's own: that of all it traced (as) */
	if (re < 0 && as)
		re = sd_err_pct(as);
	/* The probes' count less its library's on throughout: their
	 * uncertainty (of all its launches) is of that part alone (flat
	 * scales all of them). */
	double all = p->probe_launches[w], part = all - (double)xpu_win_count_get(&p->lw[XPU_GPU_EST_LAUNCHES], w);
	if (pe >= 0 && part < all && !p->flat[w])
		pe = part > 0 ? pe * all / part : -1;
	if (pe >= 0 && re >= 0 && scale > 0) {
		est.err_pct = sqrt(pe * pe + re * re);
		est.ok = 1;
	}
	return est;
}

/* An injected process's launches as the probes counted them, where their
 * count can be had but the slices saw too few to scale the rest by it
 * (a mostly idle process the probes counted on throughout). */
static struct xpu_gpu_est probe_count(const struct xpu_gpu_proc *p, int w, struct xpu_gpu_sd ps)
{
	struct xpu_gpu_est est = { p->probe_launches[w], 0, 0 };
	double pe = probe_err(&ps, p, w);
	if (pe >= 0) {
		est.err_pct = pe;
		est.ok = 1;
	}
	return est;
}

/* The probes' count against their sampled time: the window's ticks, or
 * since the start. */
static struct xpu_gpu_sd probe_sd(const struct xpu_gpu_model *m, const struct xpu_gpu_proc *p, int recent)
{
	if (p->by_cpu[recent ? XPU_WIN_RECENT : XPU_WIN_ALL])
		return recent ? sd_window_at(&m->ticks, (struct ring_less){ p->pseen.ring, NULL },
					     (struct ring_less){ p->pcpu.ring, NULL },
					     (struct ring_less){ p->pseen.ring, NULL }, p->ptraced.ring)
			      : p->pcsd;
	return recent ? sd_window(&m->ticks, p->pseen.ring, p->ptraced.ring, p->pseen.ring) : p->psd;
}

/* Each figure's estimate over the window and since the start: what the
 * slices saw against the time they traced, against the own CPU time
 * sampled in them (by_own), or against the launches the probes counted
 * (by_probe). */
static void estimates(const struct xpu_gpu_model *m, struct xpu_gpu_proc *p)
{
	/* Scaled by time or own time, an injected process's figures are its
	 * slices' alone: the probes' count on throughout is a launch-only
	 * process's part (or an injected one's launches, probe_count).  What
	 * its library saw on throughout is added as it is (est_whole): the
	 * series are the rest's. */
	int lo = p->launch_only;
	for (int e = 0; e < XPU_GPU_NEST; e++) {
		int c = e == XPU_GPU_EST_NS ? XPU_GPU_EST_KERNELS : e;
		for (int w = 0; w < 2; w++) {
			int own = p->by_own[w], recent = w == XPU_WIN_RECENT;
			uint64_t lw = xpu_win_count_get(&p->lw[e], w);
			uint64_t rest = own ? xpu_win_count_get(&p->oseen[e], w)
					    : less(xpu_win_count_get(&p->seen[e], w), lw);
			struct xpu_gpu_est est;
			if (p->by_probe[w]) {
				struct xpu_gpu_sd ps = probe_sd(m, p, recent);
				struct xpu_gpu_sd rs = recent ? sd_window_less(&m->ticks, rest_ring(p, e),
									       rest_ring(p, XPU_GPU_EST_LAUNCHES),
									       rest_ring(p, c))
							      : p->rsd[e];
				struct xpu_gpu_sd as = recent ? sd_window(&m->ticks, p->seen[e].ring,
									  p->seen[XPU_GPU_EST_LAUNCHES].ring,
									  p->seen[c].ring)
							      : p->asd[e];
				est = probe_estimate(&ps, &rs, lw ? &as : NULL, e, rest, p, w);
			} else {
				struct xpu_gpu_sd sd = !recent ? (own ? p->osd[e] : p->sd[e])
						       : own ? sd_window(&m->ticks, p->oseen[e].ring, p->own_in.ring,
									 p->oseen[c].ring)
						       : sd_window_less(&m->ticks, rest_ring(p, e),
									(struct ring_less){ p->traced.ring, NULL },
									rest_ring(p, c));
				est = estimate(&sd, rest, p->scale[w], p->sampled[w], own,
					       lo ? p->trap_share[w] : 0, lo ? p->rest_share[w] : 1,
					       lo && p->rest_by_pace[w], lo ? p->rest_cap[w] : -1);
			}
			p->est[w][e] = est_whole(p, w, est, lw, rest);
			/* Kernels that came without their launches: no ratio to
			 * scale them by; what came, not estimated. */
			if (e != XPU_GPU_EST_LAUNCHES && p->orphaned[w])
				p->est[w][e] = (struct xpu_gpu_est){ (double)xpu_win_count_get(&p->seen[e], w), 0, 0 };
			if (e == XPU_GPU_EST_LAUNCHES && !p->by_probe[w] && p->probe_ok[w])
				p->est[w][e] = probe_count(p, w, probe_sd(m, p, recent));
		}
	}
}

/* The time in [from, to) that a process was connected. */
static uint64_t connected(const struct xpu_gpu_proc *p, uint64_t from, uint64_t to)
{
	uint64_t lo = p->since > from ? p->since : from;
	uint64_t hi = p->left_at && p->left_at < to ? p->left_at : to;
	return p->since && hi > lo ? hi - lo : 0;
}

/* The share of its time a process traced, and the scale of its figures:
 * over the window and since the start, counting only the time it was
 * connected. */
static void coverage(const struct xpu_gpu_model *m, struct xpu_gpu_proc *p, uint64_t now)
{
	uint64_t span[2] = { connected(p, now > m->ticks.window_ns ? now - m->ticks.window_ns : 0, now),
			     connected(p, 0, now) };
	uint64_t got[2] = { p->traced.recent, p->traced.total };
	int was_sampled[2] = { p->sampled_slices.recent != 0, p->sampled_all != 0 };
	uint64_t own_in[2] = { p->own_in.recent, p->own_in.total };
	uint64_t own_all[2] = { p->own_all.recent, p->own_all.total };
	/* Own time scales once its own series could give an estimate: a
	 * short-lived process, watched from its first launch seen, keeps the
	 * time's (estimate()'s too few ticks). */
	const struct xpu_gpu_sd *os = &p->osd[XPU_GPU_EST_LAUNCHES];
	int own_ready = p->own_on && os->n >= XPU_GPU_EST_MIN_TICKS && os->hits >= XPU_GPU_EST_MIN_HITS;
	/* The probes' count scales once they were on in a few ticks: whatever
	 * they counted (a choice by the count, say 30 launches at the least,
	 * picks the runs whose probes caught a burst: +16% on a mostly idle
	 * process, tests/unit/test_gpu_estimates.c).  Too little counted
	 * states no uncertainty ("?"), as any estimate. */
	int probe_ready = !p->launch_only && p->psd.n >= XPU_GPU_EST_MIN_TICKS;
	uint64_t pgot[2] = { p->pseen.recent, p->pseen.total }, pt[2] = { p->ptraced.recent, p->ptraced.total };
	uint64_t trap[2] = { p->ptrap.recent, p->ptrap.total };
	uint64_t lseen[2] = { p->seen[XPU_GPU_EST_LAUNCHES].recent, p->seen[XPU_GPU_EST_LAUNCHES].total };
	uint64_t ws[2] = { p->wseen.recent, p->wseen.total }, wt[2] = { p->wtime.recent, p->wtime.total };
	uint64_t wtrap[2] = { p->wtrap.recent, p->wtrap.total };
	uint64_t lwt[2] = { p->lwt.recent, p->lwt.total };
	uint64_t lwl[2] = { p->lw[XPU_GPU_EST_LAUNCHES].recent, p->lw[XPU_GPU_EST_LAUNCHES].total };
	uint64_t pc[2] = { p->pcpu.recent, p->pcpu.total }, wc[2] = { p->wcpu.recent, p->wcpu.total };
	uint64_t ac[2] = { p->acpu.recent, p->acpu.total }, miss[2] = { p->cpu_miss.recent, p->cpu_miss.total };
	uint64_t orph[2] = { p->orphan.recent, p->orphan.total };
	/* Its library says CUPTI's ids stuck and stay so: not estimated, as
	 * orphans, for as long as it says it (a detach that ended them took
	 * the stuck span out of what it traced); as it was when it left. */
	if (p->state != XPU_GPU_PROC_LEFT)
		p->ids_stuck = p->detail == XPU_GPU_DETAIL_IDS_STUCK;
	uint64_t kseen[2] = { p->seen[XPU_GPU_EST_KERNELS].recent, p->seen[XPU_GPU_EST_KERNELS].total };
	for (int w = 0; w < 2; w++) {
		/* Its library on throughout: what it saw there is taken as it
		 * is, only the rest of the time (lib_rest) is scaled, by the
		 * slices in it: its launches seen there are the rest's. */
		if (lwt[w] > span[w])
			lwt[w] = span[w];
		uint64_t lib_rest = span[w] - lwt[w];
		lseen[w] = less(lseen[w], lwl[w]);
		p->lib_whole_cover[w] = span[w] ? (double)lwt[w] / (double)span[w] : 0;
		/* With no slice there to scale it by, the rest is estimated at
		 * the pace on throughout, where it is at most half the time. */
		p->lib_cap[w] = lwt[w] && lib_rest * 2 <= span[w];
		p->lib_pace[w] = lwt[w] ? (double)lib_rest / (double)lwt[w] : 0;
		/* On throughout: its count is taken as it is; the rest of the
		 * time is estimated from the sampled slices in it.  A
		 * launch-only process's traps there are in its launch events'
		 * time too. */
		if (wt[w] > span[w])
			wt[w] = span[w];
		uint64_t rest = span[w] - wt[w];
		if (p->launch_only) {
			trap[w] = trap[w] > wtrap[w] ? trap[w] - wtrap[w] : 0;
			lseen[w] = lseen[w] > ws[w] ? lseen[w] - ws[w] : 0;
		}
		p->whole_cover[w] = span[w] ? (double)wt[w] / (double)span[w] : 0;
		p->rest_share[w] = 1;
		/* The probes' count is what their time less their traps' launched
		 * (a launching thread that waits for nothing else; at most 90%
		 * of it taken off): a launch-only process's time traced is theirs.
		 * An injected one's time inside its own slices (pover, where CUPTI
		 * slowed what they counted) is told, not taken off: its pace there
		 * is not known (docs/gpu-estimates.md). */
		/* An injected process's CPU time where it came: the probes'
		 * count scales by it, their traps' share of it taken off. */
		p->by_cpu[w] = !p->launch_only && p->cpu_on && pc[w] && ac[w] && pt[w] && !miss[w];
		p->cpu_cover[w] = ac[w] ? fmin((double)pc[w] / (double)ac[w], 1) : 0;
		p->cpu_whole_cover[w] = ac[w] ? fmin((double)wc[w] / (double)ac[w], 1) : 0;
		uint64_t base = p->launch_only ? got[w] : p->by_cpu[w] ? pc[w] : pt[w];
		p->trap_share[w] = base && was_sampled[w] ? fmin((double)trap[w] / (double)base, 0.9) : 0;
		/* The share counted: in slices and throughout (a launch-only
		 * process's probes', an injected one's library's). */
		double c = span[w] ? (double)(got[w] + (p->launch_only ? wt[w] : lwt[w])) / (double)span[w] : 0;
		p->cover[w] = c > 1 ? 1 : c;
		p->span_s[w] = (double)span[w] / 1e9;
		/* Sampled: slices in it, or time neither in one nor on
		 * throughout (before its library's first span, or between a
		 * cut and its first slice): estimated then, never exact. */
		was_sampled[w] |= lwt[w] && lib_rest;
		p->sampled[w] = was_sampled[w];
		/* Its slices' share of the time they stand for. */
		double rc = p->launch_only ? c : lib_rest ? (double)got[w] / (double)lib_rest : 0;
		p->own_cover[w] = own_all[w] ? (double)own_in[w] / (double)own_all[w] : 0;
		p->probe_cover[w] = span[w] ? (double)pt[w] / (double)span[w] : 0;
		double untrapped = (double)(p->by_cpu[w] ? pc[w] : pt[w]) * (1 - p->trap_share[w]);
		/* the rest of the time, or of its CPU time (what on throughout took off) */
		double rest_for = p->by_cpu[w] ? (double)less(ac[w], wc[w]) : (double)rest;
		/* The probes' launches: those on throughout, and the rest of
		 * the time's from the sampled slices' count (or, with no slice
		 * in it, at the pace on throughout); too little counted there,
		 * the rest at most half the time, it is taken to be as
		 * uncertain as rest_cap says. */
		int sampled_count = probe_ready && pt[w] && pgot[w] >= XPU_GPU_PROBE_MIN;
		/* the probes on throughout at least half the time */
		int rest_half = rest * 2 <= span[w];
		int whole_enough = wt[w] && rest_half;
		/* As many launches as at the pace on throughout. */
		double by_pace = wt[w] ? (double)ws[w] * (double)rest / (double)wt[w] : 0;
		double rest_est = pt[w] && untrapped > 0 ? (double)pgot[w] * rest_for / untrapped : by_pace;
		double probe_launches = (double)ws[w] + rest_est;
		p->by_probe[w] = was_sampled[w] && !p->launch_only && span[w] && lseen[w] >= XPU_GPU_PROBE_MIN &&
				 (sampled_count || whole_enough) && probe_launches > 0;
		p->by_own[w] = was_sampled[w] && !p->by_probe[w] && own_ready && own_in[w] >= XPU_GPU_OWN_MIN_IN;
		/* A launch-only process's slices: the rest of the time's. */
		double lo_cover = rest ? (double)got[w] / (double)rest : 0;
		double lo_rest = lo_cover > 0 ? (double)lseen[w] / (lo_cover * (1 - p->trap_share[w])) : 0;
		p->rest_by_pace[w] = 0;
		p->rest_cap[w] = -1;
		p->probe_ok[w] = 0;
		/* As many launches as at the pace on throughout, or as its own
		 * count gives, whichever is more: the uncertainty of the rest
		 * (one standard error), at most half the time, where its own
		 * count is too little to give one. */
		if (!p->launch_only && (sampled_count || whole_enough) && probe_launches > 0) {
			p->probe_ok[w] = was_sampled[w];
			p->probe_launches[w] = probe_launches;
			p->rest_share[w] = rest_est / probe_launches;
			p->rest_by_pace[w] = !sampled_count;
			if (rest_half)
				p->rest_cap[w] = 100 * fmin(1, fmax(rest_est, by_pace) / probe_launches);
		} else if (p->launch_only && wt[w]) {
			p->probe_launches[w] = (double)ws[w] + (got[w] ? lo_rest : by_pace);
			p->rest_share[w] = p->probe_launches[w] > 0 ? 1 - (double)ws[w] / p->probe_launches[w] : 0;
			p->rest_by_pace[w] = !got[w];
			if (rest_half && p->probe_launches[w] > 0)
				p->rest_cap[w] = 100 * fmin(1, fmax(p->probe_launches[w] - (double)ws[w], by_pace) /
								   p->probe_launches[w]);
		}
		/* Its library on throughout and the probes' count to be had:
		 * the rest's launches are that count less those traced
		 * throughout, and its other figures are them times what its
		 * slices saw of each launch, however few they saw (by_probe);
		 * where they saw none, times what was seen of each on
		 * throughout (flat).  Scaled by time where its slices saw fewer
		 * than XPU_GPU_PROBE_MIN launches and by the probes' count
		 * where they saw more, the runs whose slices caught the tail of
		 * a burst that cut the span were the ones counted right, the
		 * others short: the harness's mostly idle process with larger
		 * bursts came out 8% low.  (All that was traced over all the
		 * launches traced, times the count, put the many launches
		 * traced throughout as much in the ratio as the few slices
		 * stand for: torch.compile's graphs came out -15.7 and -6.6% on
		 * the H200, their warm-up traced throughout.) */
		if (p->probe_ok[w] && lwl[w]) {
			p->flat[w] = !lseen[w];
			p->by_probe[w] = 1;
			p->by_own[w] = 0;
		} else {
			p->flat[w] = 0;
		}
		/* Kernels not joined to a launch cannot be told a span on
		 * throughout's from a slice's, nor scaled by their launches:
		 * where that is how the figures are made and they are many, not
		 * estimated.  (Scaled by time alone, the kernels are a sample of
		 * themselves.) */
		p->orphaned[w] = was_sampled[w] && (lwt[w] || p->by_probe[w]) &&
				 (double)orph[w] * 100 > XPU_GPU_ORPHAN_PCT * (double)kseen[w];
		p->orphaned[w] |= was_sampled[w] && p->ids_stuck;
		double all_seen = (double)lseen[w] + (p->launch_only ? (double)ws[w] : 0);
		p->scale[w] = !was_sampled[w] ? 1
			      : p->flat[w] ? probe_launches / (double)lwl[w]
			      /* the probes' count scaled by their time, over the launches seen
			       * (those on throughout of its library's taken off both) */
			      : p->by_probe[w] ? fmax(probe_launches - (double)lwl[w], 0) / (double)lseen[w]
			      : p->launch_only && wt[w] ? (all_seen > 0 ? p->probe_launches[w] / all_seen : 1)
			      : p->by_own[w] ? 1 / p->own_cover[w]
			      : rc > 0 ? 1 / (fmin(rc, 1) * (1 - (p->launch_only ? p->trap_share[w] : 0))) : 0;
		if (p->scale[w] > XPU_GPU_SCALE_MAX)
			p->scale[w] = XPU_GPU_SCALE_MAX;
	}
	estimates(m, p);
}

/* The tick's figures of a kernel row, before its process's tick closes:
 * its slices' (the rest of the time's). */
static void kernel_sd_add(struct xpu_gpu_kernel *k, const struct xpu_gpu_proc *p)
{
	uint64_t n = less(k->calls.open, k->wcalls.open);
	double calls = (double)n, ns = (double)less(k->ns.open, k->wns.open);
	double launches = (double)rest_open(p, XPU_GPU_EST_LAUNCHES);
	sd_add(&k->sd[XPU_GPU_KEST_CALLS], calls, (double)p->traced.open, n);
	sd_add(&k->sd[XPU_GPU_KEST_NS], ns, (double)p->traced.open, n);
	sd_add(&k->sd[XPU_GPU_KEST_SHARE], ns, (double)rest_open(p, XPU_GPU_EST_NS), n);
	sd_add(&k->rsd[XPU_GPU_KEST_CALLS], calls, launches, n);
	sd_add(&k->rsd[XPU_GPU_KEST_NS], ns, launches, n);
	double all_launches = (double)p->seen[XPU_GPU_EST_LAUNCHES].open;
	sd_add(&k->asd[XPU_GPU_KEST_CALLS], (double)k->calls.open, all_launches, k->calls.open);
	sd_add(&k->asd[XPU_GPU_KEST_NS], (double)k->ns.open, all_launches, k->calls.open);
	if (p->own_on) {
		sd_add(&k->osd[XPU_GPU_KEST_CALLS], calls, (double)p->own_in.open, n);
		sd_add(&k->osd[XPU_GPU_KEST_NS], ns, (double)p->own_in.open, n);
	}
}

void xpu_gpu_model_tick(struct xpu_gpu_model *m, uint64_t now, uint64_t interval_ns)
{
	int full;
	uint32_t slot = xpu_ticks_close(&m->ticks, interval_ns, &full);
	m->now = now;
	const struct xpu_gpu_proc *kp = NULL;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		struct xpu_gpu_kernel *k = &m->kernels[i];
		if (!kp || kp->pid != k->pid)
			kp = proc_find(m, k->pid);
		if (kp)
			kernel_sd_add(k, kp);
		xpu_win_count_close(&k->calls, slot, full);
		xpu_win_count_close(&k->ns, slot, full);
		xpu_win_count_close(&k->wcalls, slot, full);
		xpu_win_count_close(&k->wns, slot, full);
		xpu_win_max_close(&k->max, slot);
	}
	for (int d = 0; d < XPU_GPU_MAX_DEVICES; d++) {
		struct xpu_gpu_device *v = &m->dev[d];
		if (!v->used)
			continue;
		xpu_win_count_close(&v->kernels, slot, full);
		xpu_win_count_close(&v->memcpy_ns, slot, full);
		xpu_win_count_close(&v->memcpy_bytes, slot, full);
		prune_intervals(v, now > m->ticks.window_ns + LATE_NS ? now - m->ticks.window_ns - LATE_NS : 0);
	}
	for (uint32_t i = 0; i < m->nprocs; i++) {
		struct xpu_gpu_proc *p = &m->procs[i];
		xpu_win_count_close(&p->launches, slot, full);
		/* A launch-only process's slices saw what it launched less what
		 * the probes counted on throughout (not a sample). */
		uint64_t lo_whole = p->launch_only ? p->wseen.open : 0;
		/* Its series are its slices': not what its library saw on
		 * throughout. */
		for (int e = 0; e < XPU_GPU_NEST; e++) {
			uint64_t k = rest_open(p, e == XPU_GPU_EST_NS ? XPU_GPU_EST_KERNELS : e);
			uint64_t y = rest_open(p, e);
			if (e == XPU_GPU_EST_LAUNCHES) {
				y = less(y, lo_whole);
				k = y;
			}
			sd_add(&p->sd[e], (double)y, (double)p->traced.open, k);
			sd_add(&p->rsd[e], (double)rest_open(p, e), (double)rest_open(p, XPU_GPU_EST_LAUNCHES), k);
			sd_add(&p->asd[e], (double)p->seen[e].open, (double)p->seen[XPU_GPU_EST_LAUNCHES].open,
			       p->seen[e == XPU_GPU_EST_NS ? XPU_GPU_EST_KERNELS : e].open);
			if (p->own_on) {
				sd_add(&p->osd[e], (double)rest_open(p, e), (double)p->own_in.open, k);
				p->oseen[e].open = rest_open(p, e);
			}
		}
		sd_add(&p->psd, (double)p->pseen.open, (double)p->ptraced.open, p->pseen.open);
		if (p->cpu_on) {
			sd_add_tick(&p->pcsd, (double)p->pseen.open, (double)p->pcpu.open, p->pseen.open,
				    p->ptraced.open > 0);
			/* not in the tick its first came: a thread counted before
			 * its time was kept */
			p->cpu_miss.open += p->cpu_on > 1 && p->pseen.open && !p->pcpu.open;
			p->cpu_on = 2;
		}
		xpu_win_count_close(&p->pseen, slot, full);
		xpu_win_count_close(&p->pcpu, slot, full);
		xpu_win_count_close(&p->wcpu, slot, full);
		xpu_win_count_close(&p->acpu, slot, full);
		xpu_win_count_close(&p->cpu_miss, slot, full);
		xpu_win_count_close(&p->orphan, slot, full);
		xpu_win_count_close(&p->wseen, slot, full);
		xpu_win_count_close(&p->wtime, slot, full);
		xpu_win_count_close(&p->wtrap, slot, full);
		xpu_win_count_close(&p->lwt, slot, full);
		xpu_win_count_close(&p->ptraced, slot, full);
		xpu_win_count_close(&p->ptrap, slot, full);
		xpu_win_count_close(&p->pover, slot, full);
		xpu_win_count_close(&p->traced, slot, full);
		xpu_win_count_close(&p->sampled_slices, slot, full);
		xpu_win_count_close(&p->own_in, slot, full);
		xpu_win_count_close(&p->own_all, slot, full);
		xpu_win_count_close(&p->cuda_in, slot, full);
		xpu_win_count_close(&p->cuda_all, slot, full);
		for (int e = 0; e < XPU_GPU_NEST; e++) {
			xpu_win_count_close(&p->seen[e], slot, full);
			xpu_win_count_close(&p->oseen[e], slot, full);
			xpu_win_count_close(&p->lw[e], slot, full);
		}
		coverage(m, p, now);
	}
	xpu_win_count_close(&m->joined, slot, full);
	xpu_win_count_close(&m->unjoined, slot, full);
	while (m->jhead != m->jtail && m->joins[m->jhead % m->jcap].time + JOIN_KEEP_NS < now)
		join_pop(m);
	xpu_stacks_tick(&m->stacks);
	xpu_stacks_tick(&m->launch_stacks);
	if (m->max_kernels && m->nkernels > m->max_kernels)
		trim_kernels(m);
	if (m->max_procs && m->nprocs > m->max_procs)
		trim_procs(m);
}

/* ---- snapshot queries ---- */

static struct xpu_gpu_counts kernel_counts(const struct xpu_gpu_model *m,
					   const struct xpu_gpu_kernel *k, enum xpu_window w)
{
	return (struct xpu_gpu_counts){ xpu_win_count_get(&k->calls, w), xpu_win_count_get(&k->ns, w),
					xpu_win_max_get(&k->max, w, m->ticks.window) };
}

uint64_t xpu_gpu_model_gpu_ns(const struct xpu_gpu_model *m, enum xpu_window w)
{
	return xpu_win_count_get(&m->joined, w) + xpu_win_count_get(&m->unjoined, w);
}

double xpu_gpu_model_joined_pct(const struct xpu_gpu_model *m, enum xpu_window w)
{
	uint64_t joined = xpu_win_count_get(&m->joined, w);
	uint64_t all = xpu_gpu_model_gpu_ns(m, w);
	return all ? 100.0 * (double)joined / (double)all : -1;
}

int xpu_gpu_model_sampled(const struct xpu_gpu_model *m, enum xpu_window w, double *cover)
{
	double sum = 0;
	int n = 0;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].sampled[w]) {
			sum += m->procs[i].cover[w];
			n++;
		}
	}
	if (cover)
		*cover = n ? sum / n : 1;
	return n > 0;
}

/* A kernel row's calls and GPU time in window w, estimated (with_whole):
 * what its library saw on throughout as it is, the rest scaled. */
static void row_est(const struct xpu_gpu_kernel *k, const struct xpu_gpu_proc *p, enum xpu_window w,
		    struct xpu_gpu_counts c, double *calls, double *ns)
{
	uint64_t wc = xpu_win_count_get(&k->wcalls, w), wn = xpu_win_count_get(&k->wns, w);
	if (!p || p->orphaned[w]) {	/* what came (orphaned: not estimated) */
		*calls = (double)c.calls;
		*ns = (double)c.ns;
		return;
	}
	*calls = with_whole(p, w, (double)wc, (double)less(c.calls, wc));
	*ns = with_whole(p, w, (double)wn, (double)less(c.ns, wn));
}

double xpu_gpu_model_gpu_ns_est(const struct xpu_gpu_model *m, enum xpu_window w)
{
	double all = 0, calls, ns;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const struct xpu_gpu_kernel *k = &m->kernels[i];
		row_est(k, proc_find(m, k->pid), w, kernel_counts(m, k, w), &calls, &ns);
		all += ns;
	}
	return all;
}

struct xpu_gpu_est xpu_gpu_model_gpu_ns_err(const struct xpu_gpu_model *m, enum xpu_window w)
{
	double all = 0, var = 0;
	int ok = 1;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct xpu_gpu_est *e = &m->procs[i].est[w][XPU_GPU_EST_NS];
		if (m->procs[i].launch_only)
			continue;
		if (!e->ok && e->value > 0)
			ok = 0;
		all += e->value;
		var += (e->value * e->err_pct / 100) * (e->value * e->err_pct / 100);
	}
	return (struct xpu_gpu_est){ all, all > 0 ? 100 * sqrt(var) / all : 0, ok && all > 0 };
}

/* An estimate rounded and held within int64_t: a recording may make a
 * scale anything up to XPU_GPU_SCALE_MAX and a count anything at all. */
static int64_t rounded_i64(double v)
{
	double x = v + 0.5;
	return x >= 9.2e18 ? INT64_MAX : (int64_t)x;
}

/* A cell of a row's uncertainty: 0 when exact, N/A where none can be
 * stated. */
static void err_cell(struct xpu_cell *c, int sampled, double err_pct)
{
	c->d = !sampled ? 0 : err_pct >= 0 ? err_pct : 0;
	c->na = sampled && err_pct < 0;
}

/* The uncertainties of a kernel row's calls, GPU time and share in window
 * w (percent; -1: none), as the process figures' (estimate()).  The share
 * is the kernel's part of its process's GPU time (seen in the same slices),
 * times the process's part of all of it: with the process's GPU time P
 * (relative error e_P), the others' O (variance V_O) and T = P + O, the
 * share's relative variance is e_kP^2 + (O/T)^2 e_P^2 + V_O / T^2. */
static void kernel_errs(const struct xpu_gpu_model *m, const struct xpu_gpu_kernel *k,
			const struct xpu_gpu_proc *p, enum xpu_window w, struct xpu_gpu_est all, double err[3])
{
	struct xpu_gpu_sd sd[XPU_GPU_NKEST];
	const struct xpu_gpu_est *pe = &p->est[w][XPU_GPU_EST_NS];
	const uint64_t *t = p->by_own[w] ? p->own_in.ring : p->traced.ring;
	if (w == XPU_WIN_ALL) {
		memcpy(sd, k->sd, sizeof(sd));
		if (p->by_own[w])
			memcpy(sd, k->osd, sizeof(k->osd));
	} else {
		/* the rest's (not its library's on throughout) */
		struct ring_less calls = { k->calls.ring, k->wcalls.ring }, ns = { k->ns.ring, k->wns.ring };
		struct ring_less tr = { t, NULL };
		sd[XPU_GPU_KEST_CALLS] = sd_window_less(&m->ticks, calls, tr, calls);
		sd[XPU_GPU_KEST_NS] = sd_window_less(&m->ticks, ns, tr, calls);
		sd[XPU_GPU_KEST_SHARE] = sd_window_less(&m->ticks, ns, rest_ring(p, XPU_GPU_EST_NS), calls);
	}
	/* A row's share is of its process's GPU time, seen in the same slices:
	 * own-time scaling's bias cancels there, not in its calls and total. */
	/* Scaled by the probes' count, a row's calls and total are their ratio
	 * to the launches seen times the launches estimated (errors
	 * independent; the launches' carries XPU_GPU_PROBE_SYS_PCT). */
	const struct xpu_gpu_est *pl = &p->est[w][XPU_GPU_EST_LAUNCHES];
	/* The launches' uncertainty is of all of them: of those its slices
	 * stand for, it is that much more. */
	double lw = (double)xpu_win_count_get(&p->lw[XPU_GPU_EST_LAUNCHES], w);
	double pl_err = p->flat[w] ? pl->err_pct : pl->value > lw ? pl->err_pct * pl->value / (pl->value - lw) : -1;
	struct xpu_gpu_counts c = kernel_counts(m, k, w);
	uint64_t whole[2] = { xpu_win_count_get(&k->wcalls, w), xpu_win_count_get(&k->wns, w) };
	for (int e = 0; e < XPU_GPU_NKEST; e++) {
		if (!p->sampled[w] || p->scale[w] <= 0 || p->orphaned[w]) {
			err[e] = p->sampled[w] ? -1 : 0;
		} else if (p->by_probe[w] && e != XPU_GPU_KEST_SHARE) {
			struct xpu_gpu_sd r = w == XPU_WIN_ALL
						      ? k->rsd[e]
						      : sd_window_less(&m->ticks,
								       e == XPU_GPU_KEST_CALLS
									       ? (struct ring_less){ k->calls.ring, k->wcalls.ring }
									       : (struct ring_less){ k->ns.ring, k->wns.ring },
								       rest_ring(p, XPU_GPU_EST_LAUNCHES),
								       (struct ring_less){ k->calls.ring, k->wcalls.ring });
			double re = sd_err_pct(&r);
			if (re < 0 && lw > 0) {	/* too few slices: the ratio of all it traced */
				struct xpu_gpu_sd a = w == XPU_WIN_ALL ? k->asd[e]
						      : sd_window(&m->ticks, e == XPU_GPU_KEST_CALLS ? k->calls.ring : k->ns.ring,
								  p->seen[XPU_GPU_EST_LAUNCHES].ring, k->calls.ring);
				re = sd_err_pct(&a);
			}
			err[e] = re >= 0 && pl->ok && pl_err >= 0 ? sqrt(re * re + pl_err * pl_err) : -1;
		} else {
			err[e] = with_own_bias(sd_err_pct(&sd[e]), p->by_own[w] && e != XPU_GPU_KEST_SHARE);
		}
		/* what its library saw on throughout is counted as it is */
		uint64_t all = e == XPU_GPU_KEST_CALLS ? c.calls : c.ns;
		uint64_t wh = whole[e == XPU_GPU_KEST_CALLS ? 0 : 1];
		if (p->sampled[w])
			err[e] = with_whole_err(p, w, err[e], (double)wh, (double)less(all, wh));
	}
	double v_all = all.value * all.err_pct / 100, v_p = pe->value * pe->err_pct / 100;
	double others = v_all * v_all - v_p * v_p, o = all.value - pe->value;
	if (err[XPU_GPU_KEST_SHARE] < 0 || !all.ok || !pe->ok || all.value <= 0) {
		err[XPU_GPU_KEST_SHARE] = p->sampled[w] || !all.ok ? -1 : 0;
		return;
	}
	double e_kp = err[XPU_GPU_KEST_SHARE] / 100, f = o > 0 ? o / all.value : 0;
	double var = e_kp * e_kp + f * f * pe->err_pct * pe->err_pct / 1e4 +
		     (others > 0 ? others : 0) / (all.value * all.value);
	err[XPU_GPU_KEST_SHARE] = 100 * sqrt(var);
}

int xpu_gpu_model_table(const struct xpu_gpu_model *m, const struct xpu_dict *d,
			struct xpu_table *t, enum xpu_window w)
{
	double all = xpu_gpu_model_gpu_ns_est(m, w);
	struct xpu_gpu_est all_err = xpu_gpu_model_gpu_ns_err(m, w);
	xpu_table_reset(t);
	t->cols = xpu_gpu_model_sampled(m, w, NULL) ? xpu_gpu_cols : exact_cols;
	t->ncols = XPU_GPU_NCOLS;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const struct xpu_gpu_kernel *k = &m->kernels[i];
		struct xpu_gpu_counts c = kernel_counts(m, k, w);
		if (!c.calls)
			continue;
		struct xpu_cell *r = xpu_table_add(t, i + 1);
		if (!r)
			return -ENOMEM;
		const struct xpu_gpu_proc *p = proc_find(m, k->pid);
		double calls, ns;
		row_est(k, p, w, c, &calls, &ns);
		r[XPU_GPU_COL_KERNEL].s = xpu_table_strdup(t, xpu_dict_str_get(d, k->short_name));
		r[XPU_GPU_COL_PID].i = k->pid;
		r[XPU_GPU_COL_PROC].s = xpu_table_strdup(t, xpu_dict_str_get(d, k->comm));
		r[XPU_GPU_COL_DEV].i = k->device;
		r[XPU_GPU_COL_CALLS].i = rounded_i64(calls);
		r[XPU_GPU_COL_TOTAL].i = rounded_i64(ns);
		r[XPU_GPU_COL_AVG].i = (int64_t)(c.ns / c.calls);
		r[XPU_GPU_COL_MAX].i = (int64_t)c.max;
		r[XPU_GPU_COL_SHARE].d = all > 0 ? 100.0 * ns / all : 0;
		r[XPU_GPU_COL_NAME].s = xpu_table_strdup(t, xpu_dict_str_get(d, k->full_name));
		r[XPU_GPU_COL_MANGLED].s = xpu_table_strdup(t, xpu_dict_str_get(d, k->name));
		double err[3] = { 0, 0, 0 };
		if (p)
			kernel_errs(m, k, p, w, all_err, err);
		int sampled = p && p->sampled[w];
		err_cell(&r[XPU_GPU_COL_CALLS_ERR], sampled, err[XPU_GPU_KEST_CALLS]);
		err_cell(&r[XPU_GPU_COL_TOTAL_ERR], sampled, err[XPU_GPU_KEST_NS]);
		err_cell(&r[XPU_GPU_COL_SHARE_ERR], sampled || err[XPU_GPU_KEST_SHARE] < 0,
			 err[XPU_GPU_KEST_SHARE]);
	}
	return 0;
}

/* The scale of a device's figures: its kernels' estimated GPU time over
 * what was seen of it (1 when none was sampled); *err_pct, the uncertainty
 * of its estimated GPU time: each process's part of it carries the
 * process's GPU time's (its kernels' together, one scale), the processes
 * independent (0 exact, -1 where a sampled one has none). */
static double device_scale(const struct xpu_gpu_model *m, uint32_t d, enum xpu_window w, double *err_pct)
{
	double raw = 0, scaled = 0, var = 0, calls, ns;
	int unknown = 0;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const struct xpu_gpu_kernel *k = &m->kernels[i];
		if (k->device != d)
			continue;
		struct xpu_gpu_counts c = kernel_counts(m, k, w);
		row_est(k, proc_find(m, k->pid), w, c, &calls, &ns);
		raw += (double)c.ns;
		scaled += ns;
	}
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct xpu_gpu_proc *p = &m->procs[i];
		const struct xpu_gpu_est *e = &p->est[w][XPU_GPU_EST_NS];
		double sum = 0;
		for (uint32_t j = 0; p->sampled[w] && j < m->nkernels; j++)
			if (m->kernels[j].device == d && m->kernels[j].pid == p->pid) {
				row_est(&m->kernels[j], p, w, kernel_counts(m, &m->kernels[j], w), &calls, &ns);
				sum += ns;
			}
		var += (sum * e->err_pct / 100) * (sum * e->err_pct / 100);
		unknown |= sum > 0 && !e->ok;
	}
	*err_pct = unknown ? -1 : scaled > 0 ? 100 * sqrt(var) / scaled : 0;
	return raw > 0 ? scaled / raw : 1;
}

int xpu_gpu_model_devices(const struct xpu_gpu_model *m, enum xpu_window w,
			  struct xpu_gpu_device_sum *out, int max)
{
	int n = 0;
	uint64_t span = xpu_win_span(&m->ticks, w);
	for (int d = 0; d < XPU_GPU_MAX_DEVICES && n < max; d++) {
		const struct xpu_gpu_device *v = &m->dev[d];
		if (!v->used)
			continue;
		uint64_t busy = w == XPU_WIN_ALL ? v->busy_all
						 : busy_since(v, m->now > span ? m->now - span : 0, m->now);
		double err;
		double f = device_scale(m, (uint32_t)d, w, &err);
		struct xpu_gpu_device_sum *s = &out[n++];
		s->device = (uint32_t)d;
		s->kernel_pct = span ? 100.0 * (double)busy * f / (double)span : 0;
		if (s->kernel_pct > 100)
			s->kernel_pct = 100;
		s->kernel_err_pct = err;
		s->kernels_per_s = xpu_win_per_s(v->kernels.last, m->ticks.tick_ns);
		if (f != 1)	/* sampled: one tick's count says little, the window's says more */
			s->kernels_per_s = span ? (double)v->kernels.recent * f * 1e9 / (double)m->ticks.window_ns : 0;
		s->memcpy_ns = xpu_win_count_get(&v->memcpy_ns, w);
		s->memcpy_bytes = xpu_win_count_get(&v->memcpy_bytes, w);
		uint64_t k = xpu_win_count_get(&v->kernels, w);
		s->kernels = (uint64_t)((double)k * f + 0.5);
	}
	return n;
}
