/* SPDX-License-Identifier: GPL-2.0-only */
/* What the symbolizer keeps (symbolize_int.h): each process's state (its
 * maps, perf map and address cache), found by pid, kept a grace period after
 * the process exits and the least recently used freed first past PROCS_MAX;
 * and the symbolizer's lifecycle.  The lookups that read it are symbolize.c's. */
#include "symbolize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrcache.h"
#include "dict.h"
#include "elfcache.h"
#include "err.h"
#include "grow.h"
#include "service.h"
#include "symbolize_int.h"

/* ---- processes ---- */

static int proc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_symbolizer *s = ctx;
	return s->procs[id]->pid == *(const uint32_t *)key;
}

static struct proc *proc_find(struct xpu_symbolizer *s, uint32_t pid)
{
	uint32_t i = xpu_htab_find(&s->proc_idx, xpu_hash_u64(pid), proc_eq, s, &pid);
	return i == UINT32_MAX ? NULL : s->procs[i];
}

static void proc_free(struct proc *p)
{
	xpu_maps_free(&p->maps);
	free(p->pm);
	xpu_perfmap_free(p->jit);
	xpu_addrcache_clear(&p->cache);
	free(p);
}

/* Removes procs[i], moving the last one into its slot. */
static void proc_remove(struct xpu_symbolizer *s, uint32_t i)
{
	struct proc *p = s->procs[i];
	uint32_t last = s->nprocs - 1;
	xpu_htab_del(&s->proc_idx, xpu_hash_u64(p->pid), i);
	if (i != last) {
		uint64_t h = xpu_hash_u64(s->procs[last]->pid);
		xpu_htab_del(&s->proc_idx, h, last);
		s->procs[i] = s->procs[last];
		/* out of memory only makes it unreachable: it is read anew */
		xpu_htab_put(&s->proc_idx, h, i);
	}
	s->nprocs--;
	s->ndead -= p->dead;
	if (s->last == p)
		s->last = NULL;
	proc_free(p);
}

/* Index of the least recently used process, dead ones only if asked. */
static uint32_t proc_lru(const struct xpu_symbolizer *s, int dead_only)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; i < s->nprocs; i++)
		if ((!dead_only || s->procs[i]->dead) &&
		    (best == UINT32_MAX || s->procs[i]->last_use < s->procs[best]->last_use))
			best = i;
	return best;
}

/* Frees exited processes past their grace period, then the least recently
 * used ones while too many remain. */
static void reap(struct xpu_symbolizer *s)
{
	uint64_t now = now_ns();
	for (uint32_t i = s->ndead ? s->nprocs : 0; i-- > 0;)
		if (s->procs[i]->dead && now - s->procs[i]->died_ns >= DEAD_GRACE_NS)
			proc_remove(s, i);
	while (s->ndead > XPU_SYM_DEAD_MAX)
		proc_remove(s, proc_lru(s, 1));
	while (s->nprocs >= PROCS_MAX)
		proc_remove(s, proc_lru(s, 0));
}

static void mark_dead(struct xpu_symbolizer *s, struct proc *p)
{
	if (p->dead)
		return;
	p->dead = 1;
	p->died_ns = now_ns();
	s->ndead++;
}

static int same_maps(const struct xpu_maps *a, const struct xpu_maps *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct xpu_map *x = &a->v[i], *y = &b->v[i];
		if (x->start != y->start || x->end != y->end || x->pgoff != y->pgoff ||
		    x->inode != y->inode || x->dev_major != y->dev_major ||
		    x->dev_minor != y->dev_minor || strcmp(x->perms, y->perms) ||
		    strcmp(x->path, y->path))
			return 0;
	}
	return 1;
}

static void maps_failed(struct xpu_symbolizer *s, struct proc *p, int err)
{
	if (err == -ENOENT || err == -ESRCH) {
		/* Gone: its pid may be reused, so nothing more is read for it. */
		s->st.maps_missing += p->maps.n == 0;
		mark_dead(s, p);
		return;
	}
	if (!s->warned_maps++)
		xpu_warn("cannot read /proc/%u/maps: %s — user frames show as [unknown]%s", p->pid,
			 strerror(-err), err == -EACCES ? "; run as root" : "");
}

/* Reads the process's maps; when they changed, cached addresses may now be
 * wrong (a library unmapped, another mapped there), so the cache goes. */
void xpu_sym_read_maps(struct xpu_symbolizer *s, struct proc *p)
{
	struct xpu_maps m;
	size_t bad = 0;
	uint64_t t0 = now_ns();
	int r = xpu_maps_read(p->pid, &m, &bad);
	struct pmap *pm = r < 0 ? NULL : calloc(m.n ? m.n : 1, sizeof(*pm));
	p->maps_ns = now_ns();
	p->maps_wait_ns = reread_wait(t0, p->maps_ns, 0);
	s->st.maps_reads++;
	s->st.maps_bad += bad;
	if (r < 0 || !pm) {
		if (r == 0)
			xpu_maps_free(&m);
		maps_failed(s, p, r < 0 ? r : -ENOMEM);
		return;
	}
	if (same_maps(&p->maps, &m)) {
		xpu_maps_free(&m);
		free(pm);
		return;
	}
	xpu_maps_free(&p->maps);
	free(p->pm);
	p->maps = m;
	p->pm = pm;
	xpu_addrcache_clear(&p->cache);
}

static struct proc *proc_new(struct xpu_symbolizer *s, uint32_t pid)
{
	reap(s);
	struct proc **v = realloc(s->procs, (s->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->procs = v;
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	xpu_addrcache_init(&p->cache, PROC_CACHE_MAX);
	if (xpu_htab_put(&s->proc_idx, xpu_hash_u64(pid), s->nprocs) < 0) {
		free(p);
		return NULL;
	}
	s->procs[s->nprocs++] = p;
	xpu_sym_read_maps(s, p);
	return p;
}

struct proc *xpu_sym_proc_get(struct xpu_symbolizer *s, uint32_t pid)
{
	struct proc *p = s->last && s->last->pid == pid ? s->last : proc_find(s, pid);
	if (!p)
		p = proc_new(s, pid);
	s->last = p;
	return p;
}

/* ---- lifecycle ---- */

struct xpu_symbolizer *xpu_sym_new(struct xpu_dict *dict, struct xpu_service *svc)
{
	struct xpu_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dict = dict;
	s->svc = svc;
	xpu_htab_init(&s->proc_idx);
	xpu_addrcache_init(&s->kcache, KERNEL_CACHE_MAX);
	s->unknown_name = xpu_dict_cstr(dict, "[unknown]");
	s->unknown_frame = xpu_dict_frame(dict, XPU_FRAME_UNKNOWN, s->unknown_name, 0);
	s->unknown_kframe = xpu_dict_frame(dict, XPU_FRAME_KERNEL, s->unknown_name, 0);
	s->elfs = xpu_elfcache_new(dict, svc, s->unknown_name);
	if (!s->elfs || !s->unknown_frame || !s->unknown_kframe) {
		xpu_sym_free(s);
		return NULL;
	}
	/* Read early, off the path, so the first kernel frames wait less. */
	if (svc)
		xpu_sym_start_kallsyms(s);
	return s;
}

const char *xpu_sym_module_path(const struct xpu_symbolizer *s, uint32_t module, uint32_t *pid)
{
	for (uint32_t i = 0; s && i < s->nmods; i++)
		if (s->mods[i].module == module) {
			if (pid)
				*pid = s->mods[i].pid;
			return s->mods[i].path;
		}
	return NULL;
}

void xpu_sym_free(struct xpu_symbolizer *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nprocs; i++)
		proc_free(s->procs[i]);
	free(s->procs);
	xpu_htab_free(&s->proc_idx);
	xpu_elfcache_free(s->elfs);
	xpu_elf_free(s->vdso.elf);
	free(s->vdso.names);
	xpu_kallsyms_free(s->ksyms);
	free(s->kwaits);
	xpu_addrcache_clear(&s->kcache);
	for (uint32_t i = 0; i < s->nmods; i++)
		free(s->mods[i].path);
	free(s->mods);
	free(s);
}

void xpu_sym_proc_exec(struct xpu_symbolizer *s, uint32_t pid)
{
	uint32_t i = xpu_htab_find(&s->proc_idx, xpu_hash_u64(pid), proc_eq, s, &pid);
	if (i != UINT32_MAX)
		proc_remove(s, i);
}

void xpu_sym_set_elf_budget(struct xpu_symbolizer *s, size_t bytes)
{
	xpu_elfcache_set_budget(s->elfs, bytes);
}

void xpu_sym_proc_exit(struct xpu_symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);
	if (p)
		mark_dead(s, p);
	reap(s);
}

void xpu_sym_tick(struct xpu_symbolizer *s, uint64_t interval_ns)
{
	xpu_elfcache_tick(s->elfs, interval_ns);
}

void xpu_sym_flush(struct xpu_symbolizer *s)
{
	xpu_elfcache_flush(s->elfs);
}

void xpu_sym_stats(const struct xpu_symbolizer *s, struct xpu_sym_stats *st)
{
	struct xpu_elfcache_stats e;
	xpu_elfcache_stats(s->elfs, &e);
	*st = s->st;
	st->procs = s->nprocs;
	st->procs_dead = s->ndead;
	st->elf_loaded = e.loaded;
	st->elf_failed = e.failed;
	st->elf_cached = e.cached;
	st->elf_evicted = e.evicted;
	st->elf_bytes = e.bytes;
	st->elf_loading = e.loading;
	st->names_inline = e.names_inline;
	st->names_async = e.names_async;
	st->pending = e.pending + s->nkwaits;
	st->overflow = e.overflow;
	st->refused = e.refused;
}
