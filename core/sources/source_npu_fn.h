/* SPDX-License-Identifier: GPL-2.0-only */
/* The NPU source's driver function counting (core/sources/source_npu_fn.c): the
 * ivpu_* functions of the kernel (kprobes) or of a stand-in binary
 * (uprobes), attached as one multi link, and the `funcs` map read each
 * refresh into NPU_FUNC events. */
#ifndef XPU_SOURCE_NPU_FN_H
#define XPU_SOURCE_NPU_FN_H

#include <stddef.h>
#include <stdint.h>

struct bpf_link;
struct bpf_program;
struct xpu_session;
struct xpu_npu_fns;

#define XPU_NPU_FNS_MAX 4096		/* functions attached at most */

/* The ivpu_* functions of binary (NULL: of the running kernel's intel_vpu,
 * from available_filter_functions).  Returns the table (possibly empty), or
 * NULL with a reason in why. */
struct xpu_npu_fns *xpu_npu_fns_find(const char *binary, char *why, size_t size);
size_t xpu_npu_fns_count(const struct xpu_npu_fns *f);
/* Attaches entry to every function and ret to the ioctl handlers' returns
 * (with latency, to every function's return), with the same cookies: in the kernel one multi-kprobe link each (entry
 * loaded as a kprobe.multi program); on a stand-in binary one uprobe_multi
 * link each when multi (entry and ret loaded with expected attach type
 * XPU_BPF_TRACE_UPROBE_MULTI, Linux 6.6), else one perf-event uprobe per
 * function (loaded as plain kprobe programs).  Returns 0, or -errno with
 * nothing attached.  xpu_npu_fns_free detaches. */
int xpu_npu_fns_attach(struct xpu_npu_fns *f, struct bpf_program *entry, struct bpf_program *ret,
		       const char *binary, int multi, int latency);
/* Emits the calls counted in the map since the last read as NPU_FUNC events. */
void xpu_npu_fns_read(struct xpu_npu_fns *f, int mapfd, struct xpu_session *s, uint64_t now);
/* Emits the calls timed in the `fn_lat` array since the last read as
 * NPU_FUNC_LAT events, one per function and histogram bucket that moved,
 * and the returns that could not be timed. */
void xpu_npu_fns_read_lat(struct xpu_npu_fns *f, int mapfd, struct xpu_session *s, uint64_t now);
void xpu_npu_fns_free(struct xpu_npu_fns *f);

#endif
