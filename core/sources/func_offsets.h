/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a uprobe goes: the file offsets of named functions in an ELF file. */
#ifndef XPU_FUNC_OFFSETS_H
#define XPU_FUNC_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* Sets offs[i] to the file offset of the function names[i] defines in the
 * ELF file at path (.dynsym, then .symtab), 0 where it defines none.
 * Returns how many it found, or -1 (errno) when the file cannot be read as
 * ELF. */
int xpu_func_offsets(const char *path, const char *const *names, size_t n, uint64_t *offs);

#endif
