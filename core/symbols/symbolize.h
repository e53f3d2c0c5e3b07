/* Turning raw addresses into frames.
 *
 * User addresses: /proc/PID/maps gives the mapping, the ELF file (opened
 * through /proc/PID/map_files so deleted or replaced files still resolve) gives
 * .symtab or .dynsym (or a debug file found by build-id), C++ names are
 * demangled, and anonymous executable memory is looked up in /tmp/perf-PID.map
 * when that file is owned by the process's user.  Kernel addresses come from
 * /proc/kallsyms.  Results are interned in the session dictionary as frame ids,
 * so a process that has exited keeps its frames.
 *
 * Caches: ELF symbol tables by file identity (device + inode, checked against
 * the build-id; core/symbols/elfcache.h), maps per process (re-read when an address
 * falls outside them, dropped on exec), and (pid, address) -> frame per
 * process.  With a service thread, what is slow happens there and a frame
 * not known yet is a pending frame, expanded in place later (dict.h).
 */
#ifndef XPU_SYMBOLIZE_H
#define XPU_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct xpu_dict;
struct xpu_service;
struct xpu_symbolizer;

struct xpu_sym_stats {
	uint64_t lookups;	/* addresses asked for */
	uint64_t cache_hits;	/* answered from the (pid, address) cache */
	uint64_t unknown;	/* addresses that got an [unknown] frame */
	uint64_t elf_loaded;	/* ELF files parsed */
	uint64_t elf_failed;	/* ELF files that could not be read */
	uint64_t maps_reads;	/* /proc/PID/maps reads */
	uint64_t maps_missing;	/* processes gone before their maps were read */
	uint64_t maps_bad;	/* maps lines that did not parse */
	uint64_t perfmap_loaded;	/* perf maps read */
	uint64_t perfmap_rejected;	/* perf maps ignored: wrong owner or type */
	uint64_t perfmap_bad;	/* perf map lines that did not parse */
	uint64_t procs;		/* processes with state now, dead ones included */
	uint64_t procs_dead;	/* of which exited, kept for their queued samples */
	uint64_t elf_cached;	/* ELF files in the cache now */
	uint64_t elf_evicted;	/* dropped to keep the cache within its byte budget */
	uint64_t elf_bytes;	/* bytes of symbol tables the cache holds now */
	uint64_t elf_loading;	/* tables being read on the service thread now */
	uint64_t names_inline;	/* symbol names demangled on the caller's path */
	uint64_t names_async;	/* ... and on the service thread */
	uint64_t pending;	/* pending frames made while tables or names were on their way */
	uint64_t overflow;	/* addresses given [unknown]: too much was pending */
	uint64_t refused;	/* work the service's full queue refused (tried again later) */
};

/* With a service (core/util/service.h), slow work goes there and pending frames
 * stand in meanwhile (symbolize.c); NULL does everything inline. */
struct xpu_symbolizer *xpu_sym_new(struct xpu_dict *dict, struct xpu_service *svc);
void xpu_sym_free(struct xpu_symbolizer *s);

/* Symbolizes a user stack of process `pid` as captured by bpf_get_stack():
 * ips[0] is the interrupted instruction, ips[1..] are return addresses (looked
 * up at address - 1 so a call at the end of a function names its caller).
 * Writes one frame id per address to out[] in the same order and returns n.
 * Never fails: an address that cannot be resolved gets an [unknown] frame
 * naming its module where one is known. */
uint32_t xpu_sym_user(struct xpu_symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
		      uint32_t *out);
/* The same for kernel addresses (frames of kind XPU_FRAME_KERNEL). */
uint32_t xpu_sym_kernel(struct xpu_symbolizer *s, const uint64_t *ips, uint32_t n, uint32_t *out);

/* Process lifecycle hints from the CPU source: exec invalidates the maps and
 * the address cache; exit lets the process's caches be freed later (they are
 * kept for a grace period, since samples may still be queued). */
void xpu_sym_proc_exec(struct xpu_symbolizer *s, uint32_t pid);
void xpu_sym_proc_exit(struct xpu_symbolizer *s, uint32_t pid);
/* At most this many exited processes keep their state (for a few seconds);
 * beyond it the least recently used are freed. */
#define XPU_SYM_DEAD_MAX 64

void xpu_sym_stats(const struct xpu_symbolizer *s, struct xpu_sym_stats *st);
/* Where a module (the dict string frames carry) was first seen: its path in
 * the mount namespace of process *pid, or NULL (a kernel module, anonymous
 * memory, a replay). */
const char *xpu_sym_module_path(const struct xpu_symbolizer *s, uint32_t module, uint32_t *pid);
/* Each refresh: refills the inline naming budget (a share of interval_ns)
 * and sends the names asked for to the service. */
void xpu_sym_tick(struct xpu_symbolizer *s, uint64_t interval_ns);
/* Sends the names asked for so far to the service (after a burst of input). */
void xpu_sym_flush(struct xpu_symbolizer *s);
/* The bytes of symbol tables the ELF cache keeps (default 64 MiB); the least
 * recently used files beyond it are dropped and read again when needed. */
void xpu_sym_set_elf_budget(struct xpu_symbolizer *s, size_t bytes);

/* ---- Lower layers, public for tests, benchmarks and fuzzers ---- */

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
