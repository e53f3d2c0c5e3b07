/* SPDX-License-Identifier: GPL-2.0-only */
/* The symbolizer: per-process state (maps, perf map, address cache), the ELF
 * cache shared by all processes (core/symbols/elfcache.c), and kernel symbols.  The
 * parsing lives in maps.c, elf.c, perfmap.c, kallsyms.c and demangle.c; this
 * file decides what to read when; symbolize_cache.c keeps what was read.
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
#include "symbolize_int.h"

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
		xpu_sym_read_maps(s, p);
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
	struct proc *p = xpu_sym_proc_get(s, pid);
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

void xpu_sym_start_kallsyms(struct xpu_symbolizer *s)
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
		xpu_sym_start_kallsyms(s);
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
