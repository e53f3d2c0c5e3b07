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

/* Leaves out (sets to 0) each offs[i] whose function only jumps to another
 * of offs (an optional endbr64 and an empty frame, then a jmp): one probe
 * there would count each call twice (CUDA 13's __cudaLaunchKernel, which
 * nvcc's <<<>>> calls, jumps to cudaLaunchKernel).  Returns how many. */
int xpu_func_drop_jumps(const char *path, uint64_t *offs, size_t n);

/* The distinct file offsets (at most max) of the functions whose names
 * start with prefix, or equal it when exact; names with a '.' (gcc's
 * "fn.cold" parts, which are no function's entry) are left out, so a
 * uretprobe can go on each.  Returns how many, or -1 (errno) when the file
 * cannot be read as ELF. */
int xpu_func_offsets_prefix(const char *path, const char *prefix, int exact, uint64_t *offs, size_t max);

/* Where the data object name (from the dynamic symbol table) lies from the
 * start of the file's first mapping (the one at file offset 0): its address
 * in a process is that mapping's start plus *rel.  Returns 0, or -1 (errno)
 * when the file is not ELF or exports no such object. */
int xpu_func_object_offset(const char *path, const char *name, uint64_t *rel);

#endif
