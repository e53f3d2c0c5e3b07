/* The symbolizer: per-process state (maps, perf map, address cache), the ELF
 * cache shared by all processes, and kernel symbols.  The parsing lives in
 * maps.c, elf.c, perfmap.c, kallsyms.c and demangle.c; this file decides what
 * to read when, and what to keep.
 *
 * Bounds: at most PROCS_MAX processes with state, of which XPU_SYM_DEAD_MAX exited
 * ones (each kept DEAD_GRACE_NS after its exit, least recently used freed
 * first); PROC_CACHE_MAX cached addresses per process and KERNEL_CACHE_MAX
 * kernel ones; ELF_CACHE_MAX files holding at most ELF_CACHE_BYTES of symbol
 * tables (least recently used freed first).
 */
#include "symbolize.h"

#include "addrcache.h"
#include "dict.h"
#include "err.h"
#include "readfile.h"
#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define PROCS_MAX 4096
#define DEAD_GRACE_NS (5 * NS_PER_S)
#define PROC_CACHE_MAX 4096
#define KERNEL_CACHE_MAX 65536
#define ELF_CACHE_MAX 512
#define ELF_CACHE_BYTES (64u << 20)	/* symbol tables kept, all files together */
/* Re-reading a process's maps or perf map on a miss happens at most this
 * often, and never more than 1/REREAD_COST_RATIO of the time: a 100 MB perf
 * map that takes 0.5 s to parse is re-read at most every 10 s. */
#define REREAD_MIN_NS (100 * NS_PER_MS)
#define REREAD_COST_RATIO 20
#define PERFMAP_ABSENT_WAIT_NS NS_PER_S
#define PERFMAP_MAX_BYTES (256u << 20)
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* Per mapping of a process, filled lazily. */
struct pmap {
	uint32_t module;	/* dict id of the mapping's name, 0 = not yet */
	uint8_t no_elf;		/* its file could not be opened or read */
	uint8_t checked;	/* the cached ELF was checked against its file */
};

/* When a file was last looked at, and whether it changed since. */
struct filesig {
	uint64_t ino, size, mtime_ns, ctime_ns;
};

struct proc {
	uint32_t pid;
	uint8_t dead;		/* exited (or vanished): never read /proc/PID again */
	uint64_t last_use;	/* s->clock at its last lookup */
	uint64_t died_ns;
	struct xpu_maps maps;
	struct pmap *pm;	/* one per mapping */
	uint64_t maps_ns, maps_wait_ns;	/* last read, and the wait before the next */
	struct xpu_perfmap *jit;
	struct filesig jit_sig;
	uint64_t jit_ns, jit_wait_ns;
	struct xpu_addrcache cache;	/* address (after the -1 of return addresses) -> frame */
};

struct elf_ent {
	uint64_t dev, ino;
	struct filesig sig;	/* of the file it was read from */
	struct xpu_elf *elf;	/* NULL: the file is not a readable ELF */
	uint32_t *names;	/* per symbol: dict id of its demangled name, 0 = not yet */
	uint64_t last_use;
};

struct xpu_symbolizer {
	struct xpu_dict *dict;
	struct xpu_sym_stats st;
	uint64_t clock;		/* counts calls, orders LRU eviction */

	struct proc **procs;
	uint32_t nprocs, ndead;
	struct xpu_htab proc_idx;
	struct proc *last;	/* the process of the previous call: stacks come in runs */

	struct elf_ent *elfs;
	uint32_t nelfs;
	size_t elf_budget;	/* bytes of symbol tables kept (ELF_CACHE_BYTES) */
	struct xpu_htab elf_idx;

	struct elf_ent vdso;
	uint64_t vdso_len;
	int vdso_tried;

	struct xpu_kallsyms *ksyms;
	int ksyms_tried;
	struct xpu_addrcache kcache;

	uint32_t unknown_name, unknown_frame, unknown_kframe;
	int warned_maps;
	char buf[8192];		/* demangled names */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static int reread_due(uint64_t last_ns, uint64_t wait_ns)
{
	return !last_ns || now_ns() - last_ns >= wait_ns;
}

/* The wait after a read that started at t0 and just ended at t1. */
static uint64_t reread_wait(uint64_t t0, uint64_t t1, uint64_t at_least)
{
	uint64_t wait = (t1 - t0) * REREAD_COST_RATIO;
	if (wait < at_least)
		wait = at_least;
	return wait > REREAD_MIN_NS ? wait : REREAD_MIN_NS;
}

static struct filesig file_sig(const struct stat *st)
{
	return (struct filesig){
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (uint64_t)st->st_mtim.tv_sec * NS_PER_S + (uint64_t)st->st_mtim.tv_nsec,
		/* ctime too: a chown that makes the file acceptable changes only it */
		.ctime_ns = (uint64_t)st->st_ctim.tv_sec * NS_PER_S + (uint64_t)st->st_ctim.tv_nsec,
	};
}

/* ---- frames ---- */

static uint32_t frame(struct xpu_symbolizer *s, uint32_t kind, uint32_t name, uint32_t module)
{
	uint32_t f = name ? xpu_dict_frame(s->dict, kind, name, module) : 0;
	return f ? f : s->unknown_frame;
}

static uint32_t unknown(struct xpu_symbolizer *s, uint32_t module)
{
	return module ? frame(s, XPU_FRAME_UNKNOWN, s->unknown_name, module) : s->unknown_frame;
}

/* The module of a mapping: the file's base name, a pseudo path such as
 * "[vdso]" as it is, none for anonymous memory. */
static uint32_t module_of(struct xpu_symbolizer *s, struct proc *p, size_t i)
{
	const char *path = p->maps.v[i].path;
	if (p->pm[i].module || !path[0])
		return p->pm[i].module;
	const char *base = path[0] == '/' ? strrchr(path, '/') + 1 : path;
	p->pm[i].module = xpu_dict_cstr(s->dict, base);
	return p->pm[i].module;
}

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
static void read_maps(struct xpu_symbolizer *s, struct proc *p)
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
	read_maps(s, p);
	return p;
}

static struct proc *proc_get(struct xpu_symbolizer *s, uint32_t pid)
{
	struct proc *p = s->last && s->last->pid == pid ? s->last : proc_find(s, pid);
	if (!p)
		p = proc_new(s, pid);
	s->last = p;
	return p;
}

/* ---- ELF files ---- */

struct file_id {
	uint64_t dev, ino;
};

static int elf_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_symbolizer *s = ctx;
	const struct file_id *k = key;
	return s->elfs[id].dev == k->dev && s->elfs[id].ino == k->ino;
}

static uint64_t file_hash(const struct file_id *k)
{
	return xpu_hash_u64(k->dev * 0x9e3779b97f4a7c15ULL ^ k->ino);
}

static int open_checked(const char *path, const struct file_id *id)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == id->dev &&
	    st.st_ino == id->ino)
		return fd;
	close(fd);
	return -1;
}

/* Opens the file behind a mapping: through map_files, which reaches deleted
 * and replaced files; else by path, accepted only if it is still the same
 * file.  A dead process's pid may be reused, so its /proc entries are not
 * used. */
static int open_mapped(const struct proc *p, const struct xpu_map *m, const struct file_id *id)
{
	char path[PATH_MAX + 64];
	int fd;
	if (!p->dead) {
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", p->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0)
			return fd;
		if ((size_t)snprintf(path, sizeof(path), "/proc/%u/root%s", p->pid, m->path) <
			    sizeof(path) &&
		    (fd = open_checked(path, id)) >= 0)
			return fd;
	}
	return open_checked(m->path, id);
}

static void elf_ent_free(struct elf_ent *e)
{
	xpu_elf_free(e->elf);
	free(e->names);
}

/* A slot for a new entry: a fresh one, or the least recently used one's
 * (taken out of the index; the caller refills it). */
static uint32_t elf_slot(struct xpu_symbolizer *s)
{
	if (s->nelfs < ELF_CACHE_MAX)
		return s->nelfs++;
	uint32_t best = 0;
	for (uint32_t i = 1; i < s->nelfs; i++)
		if (s->elfs[i].last_use < s->elfs[best].last_use)
			best = i;
	struct elf_ent *e = &s->elfs[best];
	xpu_htab_del(&s->elf_idx, file_hash(&(struct file_id){ e->dev, e->ino }), best);
	return best;
}

static struct xpu_elf *load_fd(struct xpu_symbolizer *s, int fd, const char *path)
{
	char err[256];
	struct xpu_elf *e = xpu_elf_load_fd_path(fd, path, err, sizeof(err));
	if (e)
		s->st.elf_loaded++;
	else {
		s->st.elf_failed++;
		xpu_debug("no symbols from %s: %s", path, err);
	}
	return e;
}

static size_t elf_ent_bytes(const struct elf_ent *e)
{
	if (!e->elf)
		return 0;
	const struct xpu_symtab *t = xpu_elf_symtab(e->elf);
	return t->cap * sizeof(*t->v) + t->names_cap + (e->names ? t->n * sizeof(*e->names) : 0);
}

/* Keeps the cached symbol tables within ELF_CACHE_BYTES: the least recently
 * used files other than slot `keep` are dropped (a file bigger than the
 * whole budget still stays while it is the one in use). */
static void elf_budget(struct xpu_symbolizer *s, uint32_t keep)
{
	size_t total = 0;
	for (uint32_t i = 0; i < s->nelfs; i++)
		total += elf_ent_bytes(&s->elfs[i]);
	while (total > s->elf_budget) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < s->nelfs; i++)
			if (i != keep && s->elfs[i].elf &&
			    (best == UINT32_MAX || s->elfs[i].last_use < s->elfs[best].last_use))
				best = i;
		if (best == UINT32_MAX)
			return;
		struct elf_ent *e = &s->elfs[best];
		total -= elf_ent_bytes(e);
		xpu_htab_del(&s->elf_idx, file_hash(&(struct file_id){ e->dev, e->ino }), best);
		elf_ent_free(e);
		*e = (struct elf_ent){ 0 };	/* a free slot: last_use 0, taken first */
		s->st.elf_evicted++;
	}
}

/* Reads the file into slot i, replacing what it held. */
static void elf_fill(struct xpu_symbolizer *s, uint32_t i, int fd, const struct file_id *id,
		     const char *path)
{
	struct stat st;
	struct elf_ent *e = &s->elfs[i];
	elf_ent_free(e);
	*e = (struct elf_ent){ .dev = id->dev, .ino = id->ino };
	if (fstat(fd, &st) == 0)
		e->sig = file_sig(&st);
	e->elf = load_fd(s, fd, path);
	elf_budget(s, i);
}

/* A freed inode number is soon given to a new file (a rebuilt library): the
 * first time a process's mapping uses a cached entry, the file's size and
 * times must still match. */
static int elf_stale(const struct elf_ent *e, int fd)
{
	struct stat st;
	struct filesig sig;
	if (fstat(fd, &st) < 0)
		return 0;
	sig = file_sig(&st);
	return memcmp(&sig, &e->sig, sizeof(sig)) != 0;
}

/* The cache entry for mapping i's file, loading it on first use; NULL when
 * the file cannot be opened (not cached: another process may reach it). */
static struct elf_ent *elf_get(struct xpu_symbolizer *s, struct proc *p, size_t mi)
{
	const struct xpu_map *m = &p->maps.v[mi];
	struct file_id id = { makedev(m->dev_major, m->dev_minor), m->inode };
	uint64_t h = file_hash(&id);
	uint32_t i = xpu_htab_find(&s->elf_idx, h, elf_eq, s, &id);
	if (i == UINT32_MAX || !p->pm[mi].checked) {
		int fd = open_mapped(p, m, &id);
		if (fd < 0 && i == UINT32_MAX)
			return NULL;
		if (i == UINT32_MAX) {
			i = elf_slot(s);
			elf_fill(s, i, fd, &id, m->path);
			if (xpu_htab_put(&s->elf_idx, h, i) < 0) {
				elf_ent_free(&s->elfs[i]);
				memset(&s->elfs[i], 0, sizeof(s->elfs[i]));
				close(fd);
				return NULL;
			}
		} else if (fd >= 0 && elf_stale(&s->elfs[i], fd)) {
			elf_fill(s, i, fd, &id, m->path);
		}
		if (fd >= 0)
			close(fd);
		p->pm[mi].checked = 1;
	}
	s->elfs[i].last_use = s->clock;
	return &s->elfs[i];
}

/* The dict id of symbol i's display name: demangled once per symbol. */
static uint32_t sym_name(struct xpu_symbolizer *s, struct elf_ent *e, uint32_t i)
{
	const struct xpu_symtab *t = xpu_elf_symtab(e->elf);
	if (!e->names)
		e->names = calloc(t->n, sizeof(*e->names));
	if (e->names && e->names[i])
		return e->names[i];
	size_t len = xpu_demangle(xpu_symtab_name(t, i), s->buf, sizeof(s->buf));
	uint32_t id = xpu_dict_str(s->dict, s->buf, len);
	if (e->names)
		e->names[i] = id;
	return id;
}

/* ---- JIT code: /tmp/perf-PID.map ---- */

static void load_perfmap(struct xpu_symbolizer *s, struct proc *p, int fd)
{
	char *text;
	size_t len, bad = 0;
	if (xpu_read_fd(fd, PERFMAP_MAX_BYTES, &text, &len) < 0)
		return;
	struct xpu_perfmap *m = xpu_perfmap_parse(text, len, &bad);
	free(text);
	if (!m)
		return;
	xpu_perfmap_free(p->jit);
	p->jit = m;
	s->st.perfmap_loaded++;
	s->st.perfmap_bad += bad;
	/* A JIT may have put new code where cached addresses were. */
	xpu_addrcache_clear(&p->cache);
}

/* Opens the perf map if it changed since the last look and may be used.  A
 * refused file is remembered like a read one, so it is counted once. */
static int open_changed_perfmap(struct xpu_symbolizer *s, struct proc *p, int *absent)
{
	struct stat st;
	int fd = xpu_perfmap_open(p->pid, &st);
	struct filesig sig = file_sig(&st);
	int changed = memcmp(&sig, &p->jit_sig, sizeof(sig)) != 0;
	p->jit_sig = sig;
	*absent = fd == -ENOENT;
	if (fd >= 0 && !changed) {
		close(fd);
		return -1;
	}
	if (changed && (fd == -EPERM || fd == -EINVAL)) {
		s->st.perfmap_rejected++;
		xpu_debug("ignoring the perf map of pid %u: %s", p->pid,
			  fd == -EPERM ? "not owned by the process's user" : "not a regular file");
	}
	return fd;
}

/* Re-reads the perf map if it is due and changed; returns 1 if it did. */
static int refresh_perfmap(struct xpu_symbolizer *s, struct proc *p)
{
	int absent;
	if (p->dead || !reread_due(p->jit_ns, p->jit_wait_ns))
		return 0;
	uint64_t t0 = now_ns();
	int fd = open_changed_perfmap(s, p, &absent);
	if (fd >= 0) {
		load_perfmap(s, p, fd);
		close(fd);
	}
	p->jit_ns = now_ns();
	/* Most processes have no perf map: look for one less often. */
	p->jit_wait_ns = reread_wait(t0, p->jit_ns, absent ? PERFMAP_ABSENT_WAIT_NS : 0);
	return fd >= 0;
}

/* Anonymous executable memory, or a mapping with no usable file: JIT code
 * if the perf map names it.  Misses are not cached: the JIT may write the
 * line later. */
static uint32_t jit_frame(struct xpu_symbolizer *s, struct proc *p, uint64_t addr,
			  uint32_t module, int *cacheable)
{
	const char *name = p->jit ? xpu_perfmap_lookup(p->jit, addr) : NULL;
	if (!name && refresh_perfmap(s, p) && p->jit)
		name = xpu_perfmap_lookup(p->jit, addr);
	*cacheable = name != NULL;
	if (!name)
		return unknown(s, module);
	return frame(s, XPU_FRAME_JIT, xpu_dict_cstr(s->dict, name), module);
}

/* ---- user addresses ---- */

static uint32_t elf_frame(struct xpu_symbolizer *s, struct proc *p, size_t i, uint64_t addr,
			  struct elf_ent *e)
{
	const struct xpu_map *m = &p->maps.v[i];
	uint64_t vaddr;
	uint32_t si;
	if (xpu_elf_offset_to_vaddr(e->elf, addr - m->start + m->pgoff, &vaddr) < 0 ||
	    (si = xpu_symtab_find(xpu_elf_symtab(e->elf), vaddr)) == UINT32_MAX)
		return unknown(s, module_of(s, p, i));
	return frame(s, XPU_FRAME_USER, sym_name(s, e, si), module_of(s, p, i));
}

/* A file that is not a readable ELF may still hold JIT code (a memfd, say). */
static uint32_t file_frame(struct xpu_symbolizer *s, struct proc *p, size_t i, uint64_t addr,
			   int *cacheable)
{
	struct elf_ent *e = p->pm[i].no_elf ? NULL : elf_get(s, p, i);
	if (!e || !e->elf) {
		p->pm[i].no_elf = 1;
		return jit_frame(s, p, addr, module_of(s, p, i), cacheable);
	}
	return elf_frame(s, p, i, addr, e);
}

/* Our own vDSO, from the auxiliary vector and our maps. */
static void load_own_vdso(struct xpu_symbolizer *s)
{
	char err[256];
	struct xpu_maps maps;
	const struct xpu_map *m;
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	if (!base || xpu_maps_read((uint32_t)getpid(), &maps, NULL) < 0)
		return;
	if ((m = xpu_maps_find(&maps, base)) && m->start == base) {
		s->vdso_len = m->end - m->start;
		s->vdso.elf = xpu_elf_load_mem((const void *)(uintptr_t)base, s->vdso_len, err,
					       sizeof(err));
	}
	xpu_maps_free(&maps);
}

/* The vDSO is the kernel's, the same image in every process of our ABI: our
 * own is read once.  A mapping of another size (a 32-bit process) is not it. */
static struct elf_ent *vdso_get(struct xpu_symbolizer *s, const struct xpu_map *m)
{
	if (!s->vdso_tried) {
		s->vdso_tried = 1;
		load_own_vdso(s);
	}
	return s->vdso.elf && m->end - m->start == s->vdso_len ? &s->vdso : NULL;
}

static int is_file(const struct xpu_map *m)
{
	return m->path[0] == '/' && m->inode != 0;
}

/* Executable memory with no file: where JITs put their code.  Kernel-made
 * regions such as [vdso] are not JIT code. */
static int is_anon_exec(const struct xpu_map *m)
{
	return m->perms[2] == 'x' && (m->path[0] == '\0' || strncmp(m->path, "[anon", 5) == 0);
}

static uint32_t resolve_user(struct xpu_symbolizer *s, struct proc *p, uint64_t addr,
			     int *cacheable)
{
	const struct xpu_map *m = xpu_maps_find(&p->maps, addr);
	struct elf_ent *e;
	/* Outside every mapping: maybe mapped since we read the maps. */
	if (!m && !p->dead && reread_due(p->maps_ns, p->maps_wait_ns)) {
		read_maps(s, p);
		m = xpu_maps_find(&p->maps, addr);
	}
	*cacheable = 1;
	if (!m)
		return jit_frame(s, p, addr, 0, cacheable);
	size_t i = (size_t)(m - p->maps.v);
	if (is_file(m) && m->perms[2] == 'x')
		return file_frame(s, p, i, addr, cacheable);
	if (strcmp(m->path, "[vdso]") == 0 && (e = vdso_get(s, m)))
		return elf_frame(s, p, i, addr, e);
	if (is_anon_exec(m))
		return jit_frame(s, p, addr, module_of(s, p, i), cacheable);
	return unknown(s, module_of(s, p, i));
}

static int is_unknown(const struct xpu_symbolizer *s, uint32_t f)
{
	const struct xpu_frame *fr = xpu_dict_frame_get(s->dict, f);
	return !fr || fr->name == s->unknown_name;
}

static uint32_t lookup_user(struct xpu_symbolizer *s, struct proc *p, uint64_t addr)
{
	int cacheable = 0;
	if (!p)
		return s->unknown_frame;
	uint32_t f = xpu_addrcache_get(&p->cache, addr);
	if (f) {
		s->st.cache_hits++;
		return f;
	}
	f = resolve_user(s, p, addr, &cacheable);
	if (cacheable)
		xpu_addrcache_put(&p->cache, addr, f);
	return f;
}

uint32_t xpu_sym_user(struct xpu_symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
		      uint32_t *out)
{
	struct proc *p = proc_get(s, pid);
	s->clock++;
	if (p)
		p->last_use = s->clock;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = lookup_user(s, p, i ? ips[i] - 1 : ips[i]);
		s->st.lookups++;
		s->st.unknown += is_unknown(s, f);
		out[i] = f;
	}
	return n;
}

/* ---- kernel addresses ---- */

static void load_kallsyms(struct xpu_symbolizer *s)
{
	char err[256];
	s->ksyms_tried = 1;
	s->ksyms = xpu_kallsyms_load(err, sizeof(err));
	if (!s->ksyms)
		xpu_warn("%s — kernel frames show as [unknown]; run as root", err);
	else if (xpu_kallsyms_hidden(s->ksyms))
		xpu_warn("kernel symbols are hidden: every /proc/kallsyms address reads 0 "
			 "(kernel.kptr_restrict) — kernel frames show as [unknown]; run as root "
			 "with kernel.kptr_restrict at most 1");
}

static uint32_t resolve_kernel(struct xpu_symbolizer *s, uint64_t addr)
{
	const char *module, *name;
	if (!s->ksyms_tried)
		load_kallsyms(s);
	if (!s->ksyms || !(name = xpu_kallsyms_lookup(s->ksyms, addr, &module)))
		return s->unknown_kframe;
	uint32_t mod = module ? xpu_dict_cstr(s->dict, module) : 0;
	return frame(s, XPU_FRAME_KERNEL, xpu_dict_cstr(s->dict, name), mod);
}

uint32_t xpu_sym_kernel(struct xpu_symbolizer *s, const uint64_t *ips, uint32_t n, uint32_t *out)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = i ? ips[i] - 1 : ips[i];
		uint32_t f = xpu_addrcache_get(&s->kcache, addr);
		s->st.lookups++;
		if (f)
			s->st.cache_hits++;
		else
			xpu_addrcache_put(&s->kcache, addr, f = resolve_kernel(s, addr));
		s->st.unknown += is_unknown(s, f);
		out[i] = f;
	}
	return n;
}

/* ---- lifecycle ---- */

struct xpu_symbolizer *xpu_sym_new(struct xpu_dict *dict)
{
	struct xpu_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dict = dict;
	xpu_htab_init(&s->proc_idx);
	xpu_htab_init(&s->elf_idx);
	xpu_addrcache_init(&s->kcache, KERNEL_CACHE_MAX);
	s->elfs = calloc(ELF_CACHE_MAX, sizeof(*s->elfs));
	s->elf_budget = ELF_CACHE_BYTES;
	s->unknown_name = xpu_dict_cstr(dict, "[unknown]");
	s->unknown_frame = xpu_dict_frame(dict, XPU_FRAME_UNKNOWN, s->unknown_name, 0);
	s->unknown_kframe = xpu_dict_frame(dict, XPU_FRAME_KERNEL, s->unknown_name, 0);
	if (!s->elfs || !s->unknown_frame || !s->unknown_kframe) {
		xpu_sym_free(s);
		return NULL;
	}
	return s;
}

void xpu_sym_free(struct xpu_symbolizer *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nprocs; i++)
		proc_free(s->procs[i]);
	free(s->procs);
	xpu_htab_free(&s->proc_idx);
	for (uint32_t i = 0; i < s->nelfs; i++)
		elf_ent_free(&s->elfs[i]);
	free(s->elfs);
	xpu_htab_free(&s->elf_idx);
	elf_ent_free(&s->vdso);
	xpu_kallsyms_free(s->ksyms);
	xpu_addrcache_clear(&s->kcache);
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
	s->elf_budget = bytes;
}

void xpu_sym_proc_exit(struct xpu_symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);
	if (p)
		mark_dead(s, p);
	reap(s);
}

void xpu_sym_stats(const struct xpu_symbolizer *s, struct xpu_sym_stats *st)
{
	*st = s->st;
	st->procs = s->nprocs;
	st->procs_dead = s->ndead;
	st->elf_cached = 0;
	st->elf_bytes = 0;
	for (uint32_t i = 0; i < s->nelfs; i++) {
		st->elf_cached += s->elfs[i].dev || s->elfs[i].ino;
		st->elf_bytes += elf_ent_bytes(&s->elfs[i]);
	}
}
