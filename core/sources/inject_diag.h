/* SPDX-License-Identifier: GPL-2.0-only */
/* Why a CUDA process's injection library never connected.
 *
 * A program started by hand with CUDA_INJECTION64_PATH cannot be given a
 * library it can load (inject_lib.h does that for `xputop -- CMD`), and CUDA
 * skips one it cannot load without a word.  So a process that the launch
 * probes see launching kernels, and whose library has not connected a few
 * seconds later, is looked at once, off the ingest path: its environment
 * (CUDA_INJECTION64_PATH, XPUTOP_SOCKET), whether its user can load that
 * library (loadable.h) and whether it did.  What is found is shown in the GPU
 * view's status for as long as the process lives.  The environment and maps
 * are the process's own data: values are bounded, and control characters
 * never reach a message. */
#ifndef XPU_INJECT_DIAG_H
#define XPU_INJECT_DIAG_H

#include <stdint.h>

struct xpu_inject_diag;

/* sock: the socket this xputop listens on. */
struct xpu_inject_diag *xpu_inject_diag_new(const char *sock);
void xpu_inject_diag_free(struct xpu_inject_diag *d);
/* The probes saw pid launch without the library (cheap: on the ingest path). */
void xpu_inject_diag_launch(struct xpu_inject_diag *d, uint32_t pid, uint64_t now);
/* pid's library connected: nothing to say about it. */
void xpu_inject_diag_connected(struct xpu_inject_diag *d, uint32_t pid);
/* Forgets processes that ended, and looks at one whose library is overdue. */
void xpu_inject_diag_tick(struct xpu_inject_diag *d, uint64_t now);
/* The newest finding about a live process ("" when none); *more: how many
 * other processes have one. */
const char *xpu_inject_diag_text(const struct xpu_inject_diag *d, int *more);

#endif
