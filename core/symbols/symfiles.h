/* SPDX-License-Identifier: GPL-2.0-only */
/* What the symbolizer reads, each parser on its own: /proc/PID/maps
 * (maps.c), ELF symbol tables (elf.c), JIT perf maps (perfmap.c),
 * /proc/kallsyms (kallsyms.c) and the demangler (demangle.c).  None keeps
 * state between calls: the caches and the lookups built on them are
 * symbolize.c's and elfcache.c's.  Public for those two, and for tests,
 * benchmarks and fuzzers. */
#ifndef XPU_SYMFILES_H
#define XPU_SYMFILES_H

#include <stddef.h>
#include <stdint.h>

/* One line of /proc/PID/maps. */
struct xpu_map {
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];		/* "r-xp" */
	uint8_t deleted;	/* the path ended in " (deleted)", which is cut off */
	const char *path;	/* points into the parsed text's copy; "" if none */
};

struct xpu_maps {
	struct xpu_map *v;
	size_t n;
	char *text;		/* owned copy the paths point into */
};

/* Parses maps text (any length, need not be NUL-terminated).  Lines that do not
 * parse are skipped and counted in *bad (may be NULL).  Returns 0 or -errno. */
int xpu_maps_parse(const char *text, size_t len, struct xpu_maps *out, size_t *bad);
void xpu_maps_free(struct xpu_maps *m);
/* The mapping holding addr, or NULL (maps are sorted by start). */
const struct xpu_map *xpu_maps_find(const struct xpu_maps *m, uint64_t addr);
/* Reads and parses /proc/PID/maps.  Returns 0 or -errno (-ENOENT: no such
 * process). */
int xpu_maps_read(uint32_t pid, struct xpu_maps *out, size_t *bad);

/* A loaded ELF symbol table: an index of the file's functions whose names
 * stay in the file (read on demand; the file is kept open).  Read-only once
 * loaded and reference-counted, so a worker thread may read names from it. */
struct xpu_elf;
/* Loads symbols from an open file descriptor (not closed).  On failure returns
 * NULL and writes a reason to err. */
struct xpu_elf *xpu_elf_load_fd(int fd, char *err, size_t errlen);
struct xpu_elf *xpu_elf_load(const char *path, char *err, size_t errlen);
/* As xpu_elf_load_fd; path (may be NULL) names the file as its process sees
 * it, for finding a .gnu_debuglink file under the debug directory. */
struct xpu_elf *xpu_elf_load_fd_path(int fd, const char *path, char *err, size_t errlen);
/* Loads symbols from an ELF image in memory (copied; e.g. the vDSO). */
struct xpu_elf *xpu_elf_load_mem(const void *image, size_t len, char *err, size_t errlen);
/* Where separate debug files are looked for (default /usr/lib/debug); a
 * process-wide setting.  Returns 0 or -ENAMETOOLONG. */
int xpu_elf_set_debug_dir(const char *dir);
void xpu_elf_free(struct xpu_elf *e);
/* Maps a file offset (from a mapping: addr - start + pgoff) to the ELF virtual
 * address through the PT_LOAD segments.  Returns 0 or -1 if no segment holds it. */
int xpu_elf_offset_to_vaddr(const struct xpu_elf *e, uint64_t off, uint64_t *vaddr);
/* Index of the symbol covering vaddr, or UINT32_MAX; *start (may be NULL)
 * receives its address. */
uint32_t xpu_elf_find(const struct xpu_elf *e, uint64_t vaddr, uint64_t *start);
/* The (mangled) name of symbol i, read from the file, into buf; returns its
 * length, 0 when it has none.  Safe from any thread. */
size_t xpu_elf_sym_name(const struct xpu_elf *e, uint32_t i, char *buf, size_t size);
/* The symbol covering vaddr: its name in buf, or NULL. */
const char *xpu_elf_lookup(const struct xpu_elf *e, uint64_t vaddr, uint64_t *start, char *buf,
			   size_t size);
/* Another reference to e (xpu_elf_free drops one). */
struct xpu_elf *xpu_elf_ref(struct xpu_elf *e);
/* Bytes of memory the table holds (its index; names stay in the file). */
size_t xpu_elf_bytes(const struct xpu_elf *e);
/* The GNU build-id, or NULL. */
const uint8_t *xpu_elf_build_id(const struct xpu_elf *e, size_t *len);
/* The GNU build-id of the ELF file open on fd (its notes only, no symbols):
 * 0, or -1 when it has none that fits in max bytes. */
int xpu_elf_fd_build_id(int fd, uint8_t *id, size_t max, size_t *len);
size_t xpu_elf_nsyms(const struct xpu_elf *e);
/* The table behind the lookups (core/symbols/symtab.h), for callers that keep data per
 * symbol. */
struct xpu_symtab;
const struct xpu_symtab *xpu_elf_symtab(const struct xpu_elf *e);

/* A /tmp/perf-PID.map symbol table ("START SIZE name" lines, hex). */
struct xpu_perfmap;
struct xpu_perfmap *xpu_perfmap_parse(const char *text, size_t len, size_t *bad);
void xpu_perfmap_free(struct xpu_perfmap *m);
const char *xpu_perfmap_lookup(const struct xpu_perfmap *m, uint64_t addr);
size_t xpu_perfmap_nsyms(const struct xpu_perfmap *m);
/* Opens process pid's perf map under perf's rule: a regular file owned by the
 * process's effective uid (a root monitor must not trust a file another user
 * planted), found through /proc/PID/root with the pid as the process's own
 * namespace sees it.  Returns an fd or -errno: -ENOENT none, -EPERM wrong
 * owner, -EINVAL not a regular file (a symlink, say).  st receives the file's
 * status whenever it exists (zeros otherwise), so callers can tell a change. */
struct stat;
int xpu_perfmap_open(uint32_t pid, struct stat *st);

/* /proc/kallsyms: text symbols, with the module of each ("[nvidia]"). */
struct xpu_kallsyms;
struct xpu_kallsyms *xpu_kallsyms_parse(const char *text, size_t len, size_t *bad);
/* Reads /proc/kallsyms; NULL with a reason in err on failure. */
struct xpu_kallsyms *xpu_kallsyms_load(char *err, size_t errlen);
void xpu_kallsyms_free(struct xpu_kallsyms *k);
/* The symbol covering addr, or NULL; *module receives the module's name, or
 * NULL for the kernel image itself. */
const char *xpu_kallsyms_lookup(const struct xpu_kallsyms *k, uint64_t addr, const char **module);
/* Nonzero when every address read 0: kptr_restrict hides them from us. */
int xpu_kallsyms_hidden(const struct xpu_kallsyms *k);
size_t xpu_kallsyms_nsyms(const struct xpu_kallsyms *k);

/* Demangles a C++ (Itanium ABI) name into buf; copies the name unchanged when
 * it is not mangled.  Returns the length written. */
size_t xpu_demangle(const char *name, char *buf, size_t size);

#endif
