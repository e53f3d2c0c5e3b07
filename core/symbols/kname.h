/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel names short enough for a table column that still tell kernels apart.
 *
 * A demangled CUDA kernel name is mostly plumbing: the return type, the
 * parameter list, namespaces at every level, lambdas nested in lambdas, and
 * template arguments that only say how the kernel moves its data.  What tells
 * two kernels apart is the kernel's own name and what it was instantiated
 * with: a functor (FillFunctor<int>), a lambda of some operator
 * (rsqrt_kernel_cuda::{lambda(float)#1}), vector sizes, dtypes.  Both
 * functions are pure: they read a demangled name and write text. */
#ifndef XPU_KNAME_H
#define XPU_KNAME_H

#include <stddef.h>

/* The short form: no return type, no parameter list, no namespace qualifiers
 * at any nesting level; a lambda becomes its enclosing function plus the
 * innermost lambda; template arguments are kept except the plumbing ones
 * (the table in kname.c).  Names that are not C++ (triton_*, nvjet_*,
 * cudnn_*) come back unchanged.  Returns the length written to out
 * (truncated to fit, always NUL-terminated when size > 0). */
size_t xpu_kname_short(const char *name, char *out, size_t size);

/* The qualified form: the name as demangled, namespaces and every template
 * argument included, without the return type and the parameter list.  For
 * when two names' short forms are alike. */
size_t xpu_kname_qualified(const char *name, char *out, size_t size);

#endif
