/* SPDX-License-Identifier: GPL-2.0-only */
/* A sorted address -> name table: the shape shared by ELF symbol tables,
 * /tmp/perf-PID.map and /proc/kallsyms.
 *
 * Built by adding entries in any order, then finished once: entries are sorted
 * by start and, where several share a start (aliases), the best ranked one is
 * kept.  Names are copied into one arena so the source text can be freed.
 */
#ifndef XPU_SYMTAB_H
#define XPU_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct xpu_sym {
	uint64_t start;
	uint32_t size;		/* 0 = unknown: the symbol runs to the next one */
	uint32_t name;		/* offset into the names arena */
	uint32_t aux;		/* owner's data (kallsyms: module index + 1) */
	uint32_t rank;		/* among aliases the highest rank wins */
};

struct xpu_symtab {
	struct xpu_sym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

void xpu_symtab_init(struct xpu_symtab *t);
void xpu_symtab_free(struct xpu_symtab *t);
/* Adds one entry; len bytes of name are copied.  Sizes above 4 GiB are
 * clamped.  Returns 0 or -ENOMEM. */
int xpu_symtab_add(struct xpu_symtab *t, uint64_t start, uint64_t size, const char *name,
		   size_t len, uint32_t aux, uint32_t rank);
/* Adds an entry whose name lives elsewhere (an ELF string table): name is
 * the owner's reference, rank the caller's priority alone. */
int xpu_symtab_add_ref(struct xpu_symtab *t, uint64_t start, uint64_t size, uint32_t name,
		       uint32_t rank);
/* Whether the entries are sorted by start with no two at one address. */
int xpu_symtab_sorted_unique(const struct xpu_symtab *t);
/* Gives back the room reserved for growth. */
void xpu_symtab_shrink(struct xpu_symtab *t);
/* Sorts and drops aliases; call once, after the last add. */
void xpu_symtab_finish(struct xpu_symtab *t);
/* Index of the entry covering addr, or UINT32_MAX: the last entry starting at
 * or below addr, unless it has a size and addr lies past its end. */
uint32_t xpu_symtab_find(const struct xpu_symtab *t, uint64_t addr);

static inline const char *xpu_symtab_name(const struct xpu_symtab *t, uint32_t i)
{
	return t->names + t->v[i].name;
}

/* A rank for C-level symbol names: fewer leading underscores, then shorter
 * names win (malloc over __libc_malloc), above the caller's own priority. */
uint32_t xpu_symtab_name_rank(const char *name, size_t len, uint32_t prio);

#endif
