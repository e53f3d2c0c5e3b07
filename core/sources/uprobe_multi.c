/* SPDX-License-Identifier: GPL-2.0-only */
#include "uprobe_multi.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid, pad;
};

int xpu_uprobe_multi_allowed(void)
{
	return getenv("XPUTOP_NO_UPROBE_MULTI") == NULL;
}

int xpu_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offs, const uint64_t *cookies,
			    uint32_t n, int retprobe)
{
	union {
		struct link_create_uprobe_multi l;
		char pad[128];
	} attr;
	memset(&attr, 0, sizeof(attr));
	attr.l.prog_fd = (uint32_t)prog_fd;
	attr.l.attach_type = XPU_BPF_TRACE_UPROBE_MULTI;
	attr.l.path = (uint64_t)(uintptr_t)path;
	attr.l.offsets = (uint64_t)(uintptr_t)offs;
	attr.l.cookies = (uint64_t)(uintptr_t)cookies;
	attr.l.cnt = n;
	attr.l.mflags = retprobe ? XPU_BPF_F_UPROBE_MULTI_RETURN : 0;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr.l));
}
