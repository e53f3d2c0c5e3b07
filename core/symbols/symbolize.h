/* SPDX-License-Identifier: GPL-2.0-only */
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

#include "symfiles.h"

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

#endif
