/* The symbolizer: per-process state (maps, perf map, address cache), the ELF
 * cache shared by all processes (core/symbols/elfcache.c), and kernel symbols.  The
 * parsing lives in maps.c, elf.c, perfmap.c, kallsyms.c and demangle.c; this
 * file decides what to read when, and what to keep.
 *
 * With a service thread (core/util/service.h), what can be slow is done there:
 * symbol tables and /proc/kallsyms are read, and names beyond this refresh's
 * budget demangled; pending frames stand in meanwhile (dict.h).  What stays
 * on the caller's path is bounded: cache lookups, a binary search, and maps
 * and perf-map re-reads limited to a share of the time (REREAD_COST_RATIO).
 *
 * Bounds: at most PROCS_MAX processes with state, of which XPU_SYM_DEAD_MAX exited
 * ones (each kept DEAD_GRACE_NS after its exit, least recently used freed
 * first); PROC_CACHE_MAX cached addresses per process and KERNEL_CACHE_MAX
 * kernel ones; the ELF cache's own (elfcache.h); KWAIT_MAX kernel addresses
 * waiting for /proc/kallsyms.
 */
#include "symbolize.h"

#include "addrcache.h"
#include "dict.h"
#include "elfcache.h"
#include "err.h"
#include "grow.h"
#include "readfile.h"
#include "service.h"

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
#define KWAIT_MAX 65536
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

struct proc {
	uint32_t pid;
	uint8_t dead;		/* exited (or vanished): never read /proc/PID again */
	uint64_t last_use;	/* s->clock at its last lookup */
	uint64_t died_ns;
	struct xpu_maps maps;
	struct pmap *pm;	/* one per mapping */
	uint64_t maps_ns, maps_wait_ns;	/* last read, and the wait before the next */
	struct xpu_perfmap *jit;
	struct xpu_filesig jit_sig;
	uint64_t jit_ns, jit_wait_ns;
	struct xpu_addrcache cache;	/* address (after the -1 of return addresses) -> frame */
};

/* Our own vDSO: a small image in memory, named inline. */
struct vdso {
	struct xpu_elf *elf;
	uint32_t *names;
	uint64_t len;
	int tried;
};

/* A kernel address waiting for /proc/kallsyms. */
struct kwait {
	uint64_t addr;
	uint32_t frame;
};

struct xpu_symbolizer {
	struct xpu_dict *dict;
	struct xpu_service *svc;	/* NULL: everything inline */
	struct xpu_sym_stats st;
	uint64_t clock;		/* counts calls, orders LRU eviction */

	struct proc **procs;
	uint32_t nprocs, ndead;
	struct xpu_htab proc_idx;
	struct proc *last;	/* the process of the previous call: stacks come in runs */

	struct xpu_elfcache *elfs;
	struct vdso vdso;

	struct xpu_kallsyms *ksyms;
	int ksyms_state;	/* KSYMS_* */
	struct kwait *kwaits;
	uint32_t nkwaits, kwait_cap;
	struct xpu_addrcache kcache;

	uint32_t unknown_name, unknown_frame, unknown_kframe;
	/* each module's path where it was first seen, for the pprof mappings */
	struct modpath { uint32_t module, pid; char *path; } *mods;
	uint32_t nmods, modcap;
	int warned_maps;
	char buf[8192];		/* demangled names */
};

enum { KSYMS_NONE, KSYMS_LOADING, KSYMS_READY };

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
	char *copy;
	if (path[0] == '/' && p->pm[i].module && !xpu_sym_module_path(s, p->pm[i].module, NULL) &&
	    xpu_grow((void **)&s->mods, &s->modcap, (size_t)s->nmods + 1, sizeof(*s->mods)) == 0 &&
	    (copy = strdup(path)))
		s->mods[s->nmods++] = (struct modpath){ p->pm[i].module, p->pid, copy };
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

/* ---- files ---- */

struct file_id {
	uint64_t dev, ino;
};

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

struct mapped_file {
	const struct proc *p;
	const struct xpu_map *m;
	struct file_id id;
};

static int open_mapped_file(void *arg)
{
	const struct mapped_file *f = arg;
	return open_mapped(f->p, f->m, &f->id);
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
	struct xpu_filesig sig = xpu_filesig_of(&st);
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

/* A file that is not a readable ELF may still hold JIT code (a memfd, say). */
static uint32_t file_frame(struct xpu_symbolizer *s, struct proc *p, size_t i, uint64_t addr,
			   int *cacheable)
{
	const struct xpu_map *m = &p->maps.v[i];
	struct mapped_file mf = { p, m, { makedev(m->dev_major, m->dev_minor), m->inode } };
	struct xpu_elffile f = { mf.id.dev, mf.id.ino, m->path, module_of(s, p, i), open_mapped_file, &mf };
	uint32_t fr = 0;
	if (!p->pm[i].no_elf &&
	    xpu_elfcache_frame(s->elfs, &f, addr - m->start + m->pgoff, !p->pm[i].checked, s->clock,
			       &fr) == XPU_ELF_OK) {
		p->pm[i].checked = 1;
		return fr;
	}
	p->pm[i].no_elf = 1;
	return jit_frame(s, p, addr, f.module, cacheable);
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
		s->vdso.len = m->end - m->start;
		s->vdso.elf = xpu_elf_load_mem((const void *)(uintptr_t)base, s->vdso.len, err,
					       sizeof(err));
		if (s->vdso.elf)
			s->vdso.names = calloc(xpu_elf_nsyms(s->vdso.elf) + 1, sizeof(uint32_t));
	}
	xpu_maps_free(&maps);
}

/* The vDSO is the kernel's, the same image in every process of our ABI: our
 * own is read once and named inline (a handful of symbols).  A mapping of
 * another size (a 32-bit process) is not it. */
static uint32_t vdso_frame(struct xpu_symbolizer *s, struct proc *p, size_t i, uint64_t addr)
{
	const struct xpu_map *m = &p->maps.v[i];
	struct vdso *v = &s->vdso;
	uint64_t vaddr;
	uint32_t si;
	if (!v->tried) {
		v->tried = 1;
		load_own_vdso(s);
	}
	if (!v->elf || !v->names || m->end - m->start != v->len ||
	    xpu_elf_offset_to_vaddr(v->elf, addr - m->start + m->pgoff, &vaddr) < 0 ||
	    (si = xpu_elf_find(v->elf, vaddr, NULL)) == UINT32_MAX)
		return unknown(s, module_of(s, p, i));
	if (!v->names[si] && xpu_elf_sym_name(v->elf, si, s->buf, sizeof(s->buf)))
		v->names[si] = xpu_dict_cstr(s->dict, s->buf);
	return frame(s, XPU_FRAME_USER, v->names[si], module_of(s, p, i));
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
	if (strcmp(m->path, "[vdso]") == 0)
		return vdso_frame(s, p, i, addr);
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

static void warn_kallsyms(const struct xpu_kallsyms *k, const char *err)
{
	if (!k)
		xpu_warn("%s — kernel frames show as [unknown]; run as root", err);
	else if (xpu_kallsyms_hidden(k))
		xpu_warn("kernel symbols are hidden: every /proc/kallsyms address reads 0 "
			 "(kernel.kptr_restrict) — kernel frames show as [unknown]; run as root "
			 "with kernel.kptr_restrict at most 1");
}

static uint32_t kernel_frame(struct xpu_symbolizer *s, uint64_t addr)
{
	const char *module, *name;
	if (!s->ksyms || !(name = xpu_kallsyms_lookup(s->ksyms, addr, &module)))
		return s->unknown_kframe;
	uint32_t mod = module ? xpu_dict_cstr(s->dict, module) : 0;
	return frame(s, XPU_FRAME_KERNEL, xpu_dict_cstr(s->dict, name), mod);
}

struct ksyms_job {
	struct xpu_service_job job;
	struct xpu_symbolizer *s;
	struct xpu_kallsyms *k;
	char err[256];
};

static void ksyms_work(struct xpu_service_job *job)
{
	struct ksyms_job *j = (struct ksyms_job *)job;
	j->k = xpu_kallsyms_load(j->err, sizeof(j->err));
}

/* /proc/kallsyms is there: every kernel address that waited gets its frame. */
static void ksyms_done(struct xpu_service_job *job)
{
	struct ksyms_job *j = (struct ksyms_job *)job;
	struct xpu_symbolizer *s = j->s;
	if (job->ran)
		warn_kallsyms(j->k, j->err);
	s->ksyms = j->k;
	s->ksyms_state = KSYMS_READY;
	for (uint32_t i = 0; i < s->nkwaits; i++) {
		uint32_t f = kernel_frame(s, s->kwaits[i].addr);
		xpu_dict_frame_expand(s->dict, s->kwaits[i].frame, &f, 1);
	}
	free(s->kwaits);
	s->kwaits = NULL;
	s->nkwaits = s->kwait_cap = 0;
	free(j);
}

static void start_kallsyms(struct xpu_symbolizer *s)
{
	struct ksyms_job *j = s->svc ? calloc(1, sizeof(*j)) : NULL;
	s->ksyms_state = KSYMS_LOADING;
	if (j) {
		*j = (struct ksyms_job){ .job = { .work = ksyms_work, .done = ksyms_done }, .s = s };
		if (xpu_service_submit(s->svc, &j->job) == 0)
			return;
		free(j);
	}
	char err[256];
	s->ksyms = xpu_kallsyms_load(err, sizeof(err));
	warn_kallsyms(s->ksyms, err);
	s->ksyms_state = KSYMS_READY;
}

/* A pending frame "0xffffffff81234567" until /proc/kallsyms is read. */
static uint32_t kernel_wait(struct xpu_symbolizer *s, uint64_t addr)
{
	char label[32];
	uint32_t f;
	snprintf(label, sizeof(label), "0x%llx", (unsigned long long)addr);
	if (s->nkwaits >= KWAIT_MAX ||
	    xpu_grow((void **)&s->kwaits, &s->kwait_cap, s->nkwaits + 1, sizeof(*s->kwaits)) ||
	    !(f = xpu_dict_frame_pending(s->dict, XPU_FRAME_KERNEL, xpu_dict_cstr(s->dict, label), 0)))
		return s->unknown_kframe;
	s->kwaits[s->nkwaits++] = (struct kwait){ addr, f };
	return f;
}

static uint32_t resolve_kernel(struct xpu_symbolizer *s, uint64_t addr)
{
	if (s->ksyms_state == KSYMS_NONE)
		start_kallsyms(s);
	return s->ksyms_state == KSYMS_LOADING ? kernel_wait(s, addr) : kernel_frame(s, addr);
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
		start_kallsyms(s);
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
