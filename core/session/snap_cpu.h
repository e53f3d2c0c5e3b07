/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPU view's part of the snapshot (snap->cpu), built by snap_cpu.c. */
#ifndef XPU_SNAP_CPU_H
#define XPU_SNAP_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "flame.h"
#include "model_cpu.h"
#include "snap_view.h"
#include "table.h"

struct xpu_snap_cpu {
	struct xpu_src_status status;
	struct xpu_table rows;		/* processes or threads, sorted and filtered */
	struct xpu_flame flame;		/* stacks of the selected row */
	uint64_t flame_key;		/* pid (or tid in thread mode) the flame shows, 0 = none */
	char flame_title[128];
	uint64_t samples_tick;		/* samples in the last tick, all processes */
	struct xpu_cpu_sys sys;		/* load, CPU busy, memory: flags 0 = none read */
	struct xpu_cpu_hot hot[XPU_CPU_HOT_MAX];	/* machine-wide hottest functions */
	int nhot;
	uint64_t hot_all;		/* the samples they are a share of */
};

/* The CPU view's summary line, as htop's meters say it:
 * "load 0.52 0.40 0.33  cpu 12.3%  mem 3.2G/15.6G" (N/A for what is unknown).
 * Empty when nothing was read (a recording made before these figures). */
void xpu_cpu_sys_text(const struct xpu_cpu_sys *y, char *buf, size_t size);

#endif
