/* SPDX-License-Identifier: GPL-2.0-only */
/* uprobe_multi links (Linux 6.6): one link, one system call, for any number
 * of functions of one file, each with its BPF cookie.  Debian's libbpf (1.1)
 * predates them, so the attribute is written here as the kernel's UAPI
 * (union bpf_attr, link_create.uprobe_multi) lays it out.  A program
 * attached this way is loaded with expected attach type
 * XPU_BPF_TRACE_UPROBE_MULTI; the same program text serves as a multi-kprobe
 * program (the kernel's intel_vpu functions) and, loaded so, as a
 * uprobe_multi one (the stand-in driver's). */
#ifndef XPU_UPROBE_MULTI_H
#define XPU_UPROBE_MULTI_H

#include <stdint.h>

#define XPU_BPF_TRACE_UPROBE_MULTI 48
#define XPU_BPF_F_UPROBE_MULTI_RETURN 1u

/* 0 when XPUTOP_NO_UPROBE_MULTI is set: callers then take the perf-event
 * uprobes they fall back to before Linux 6.6 (for testing that path). */
int xpu_uprobe_multi_allowed(void);

/* Attaches prog_fd to the functions at file offsets offs[0..n) of path, with
 * cookies[i] (NULL: none), as return probes when retprobe.  Returns the
 * link's fd (close it to detach), or -1 with errno. */
int xpu_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offs, const uint64_t *cookies,
			    uint32_t n, int retprobe);

#endif
