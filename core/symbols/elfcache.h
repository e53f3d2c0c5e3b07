/* SPDX-License-Identifier: GPL-2.0-only */
/* The symbolizer's ELF cache: symbol tables by file identity (device +
 * inode), shared by every process that maps the file, and the names of
 * their symbols as dictionary strings.
 *
 * Nothing here blocks the caller for long (docs/architecture.md, rule 4).  A
 * file's table is read on the service thread (core/util/service.h); until it is
 * there, an address in it gets a pending frame "libfoo.so+0x1a2b"
 * (dict.h), expanded into the symbol once the table arrives.  A symbol's
 * name is read from the file and demangled inline while this refresh's
 * budget lasts (a few milliseconds), else on the service thread, with a
 * pending frame in the meantime.  Without a service (tests, tools) every
 * table is read and every name demangled inline, as before.
 *
 * Bounds: at most ELF_CACHE_MAX files holding at most the byte budget of
 * tables (an index of 16 bytes a function: names stay in the files), least
 * recently used dropped first; at most PENDING_MAX pending frames a file.
 */
#ifndef XPU_ELFCACHE_H
#define XPU_ELFCACHE_H

#include <stddef.h>
#include <stdint.h>

struct xpu_dict;
struct xpu_service;
struct xpu_elfcache;

struct xpu_elfcache_stats {
	uint64_t loaded, failed, evicted;	/* tables read, files that are not readable ELF, dropped */
	uint64_t cached, bytes;			/* files cached now, bytes their tables hold */
	uint64_t loading;			/* tables being read now */
	uint64_t names_inline, names_async;	/* names demangled in the caller, on the service thread */
	uint64_t pending;			/* pending frames made (addresses waiting for a table or a name) */
	uint64_t refused;			/* work the full service queue refused (frames stay pending until retried) */
	uint64_t overflow;			/* addresses that got an [unknown] frame: too many pending */
};

/* A mapping's file, as the caller can open it. */
struct xpu_elffile {
	uint64_t dev, ino;
	const char *path;	/* as the process sees it (for .gnu_debuglink) */
	uint32_t module;	/* dict string: the file's base name */
	/* Opens the file (read-only); -1 when it cannot be reached. */
	int (*open)(void *arg);
	void *arg;
};

struct xpu_elfcache *xpu_elfcache_new(struct xpu_dict *dict, struct xpu_service *svc, uint32_t unknown_name);
void xpu_elfcache_free(struct xpu_elfcache *c);
void xpu_elfcache_set_budget(struct xpu_elfcache *c, size_t bytes);

enum { XPU_ELF_OK = 0, XPU_ELF_NOT_ELF = 1 };
/* The frame of file offset off of f: a symbol's frame, the module's
 * [unknown] frame, or a pending frame (cacheable: it is expanded in place).
 * `verify`: the first use of a cached table by a mapping checks the file
 * is the one it was read from (an inode number is soon reused).  Returns
 * XPU_ELF_NOT_ELF (no frame) when the file is not a readable ELF, so the
 * caller can look elsewhere (JIT code in a memfd). */
int xpu_elfcache_frame(struct xpu_elfcache *c, const struct xpu_elffile *f, uint64_t off, int verify,
		       uint64_t clock, uint32_t *frame);
/* A new refresh interval of interval_ns: the inline naming budget is
 * refilled, and names asked for are sent to the service. */
void xpu_elfcache_tick(struct xpu_elfcache *c, uint64_t interval_ns);
/* Sends the names asked for so far to the service. */
void xpu_elfcache_flush(struct xpu_elfcache *c);
void xpu_elfcache_stats(const struct xpu_elfcache *c, struct xpu_elfcache_stats *st);

#endif
