/* SPDX-License-Identifier: GPL-2.0-only */
/* Raw stacks from BPF (leaf-first instruction pointers) to dictionary stacks
 * (root-first frame ids): user frames, then kernel frames, so a folded line
 * reads main;...;write;entry_SYSCALL_64;...;leaf_[k]. */
#ifndef XPU_RAWSTACK_H
#define XPU_RAWSTACK_H

#include <stdint.h>

struct xpu_dict;
struct xpu_symbolizer;

/* User (and kernel) addresses symbolized of one stack, at most. */
#define XPU_RAWSTACK_MAX_IPS 256

/* Symbolizes into frames[] (root first, at most XPU_DICT_MAX_DEPTH) and
 * returns how many, without interning the stack. */
uint32_t xpu_rawstack_frames(struct xpu_symbolizer *sym, uint32_t pid, const uint64_t *uips,
			     uint32_t un, const uint64_t *kips, uint32_t kn, uint32_t *frames);

/* Extra frames appended after the kernel frames (e.g. a launch API and a GPU
 * kernel), root-first.  May be NULL/0. */
uint32_t xpu_rawstack_intern(struct xpu_symbolizer *sym, struct xpu_dict *d, uint32_t pid,
			     const uint64_t *uips, uint32_t un, const uint64_t *kips, uint32_t kn,
			     const uint32_t *tail, uint32_t ntail);

#endif
