/* SPDX-License-Identifier: GPL-2.0-only */
/* pprof profiles (profile.proto, gzipped) of what the models hold, for
 * go tool pprof, Pyroscope and Parca: CPU samples by stack, and GPU time by
 * CPU->GPU stack (the launching code, the launch API, the kernel).
 *
 * Each profile holds what was added since the previous profile of its kind
 * (a continuous profiler adds them up), per (process name, stack) as the
 * folded export groups them, the process name as the root frame and a
 * "comm" label.  Frames are named as in the folded export (kernel code
 * "_[k]", GPU kernels "_[g]").  Each module a frame comes from is a mapping
 * with the file's path and GNU build-id where the symbolizer saw the file.
 * Encoded with protobuf-c's code generated from core/outputs/profile.proto.
 */
#ifndef XPU_PPROF_H
#define XPU_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct xpu_session;
struct xpu_symbolizer;

enum xpu_pprof_kind { XPU_PPROF_CPU = 0, XPU_PPROF_GPU = 1, XPU_PPROF_KINDS };

struct xpu_pprof;

/* recent: every profile comes at most a stack table window after the last
 * one (--pprof-interval and a refresh <= --window), so only entries with
 * weight in the window can have changed: the others are not visited.
 * Otherwise every entry is, and the weight that a full table moves to its
 * "[aged out]" entries (stacks.h) shows a second time. */
struct xpu_pprof *xpu_pprof_new(int recent);
void xpu_pprof_free(struct xpu_pprof *p);
/* The kind's profile since its last one, gzipped, in *out (malloc'd; the
 * caller frees it), and the samples it holds in *samples.  sym may be NULL
 * (a replay): mappings then carry module names only.  now_wall: CLOCK_REALTIME
 * ns, the profile's end.  Returns 0, or -1 when out of memory. */
int xpu_pprof_encode(struct xpu_pprof *p, const struct xpu_session *sess, const struct xpu_symbolizer *sym,
		     enum xpu_pprof_kind kind, uint64_t now_wall, uint8_t **out, size_t *len, uint64_t *samples);
/* "cpu" or "gpu". */
const char *xpu_pprof_kind_name(enum xpu_pprof_kind kind);
/* The start of the kind's next profile (CLOCK_REALTIME ns; 0 before the first). */
uint64_t xpu_pprof_since(const struct xpu_pprof *p, enum xpu_pprof_kind kind);

#endif
