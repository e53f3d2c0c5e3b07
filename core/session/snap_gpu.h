/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU view's part of the snapshot (snap->gpu), built by snap_gpu.c, and
 * what the injection socket refused of its peers, which it shows. */
#ifndef XPU_SNAP_GPU_H
#define XPU_SNAP_GPU_H

#include <stdint.h>

#include "flame.h"
#include "model_gpu.h"
#include "model_gpudev.h"
#include "snap_view.h"
#include "table.h"

#define XPU_SNAP_GPU_DEVICES 16
#define XPU_SNAP_GPU_PROCS 32

/* What the GPU injection socket refused of its peers (any local user's
 * process may connect: core/sources/gpu_peers.h), by reason, in all, per uid
 * and for the processes refused most recently. */
enum xpu_peer_reason {
	XPU_PEER_CONNS = 0,	/* connections over the uid's quota or the total */
	XPU_PEER_HELLO_LATE,	/* closed: no HELLO within the deadline */
	XPU_PEER_BAD_HELLO,	/* claimed another process, or its process was gone */
	XPU_PEER_NAMES,		/* kernel or API names over a budget */
	XPU_PEER_SERIES,	/* kernels of a (name, device) over the series budget */
	XPU_PEER_DEVICES,	/* records naming a device this machine does not have */
	XPU_PEER_RECORDS,	/* records over the uid's rate */
	XPU_PEER_REASONS
};
#define XPU_PEER_SHOWN 16	/* uids and processes listed */

struct xpu_peer_count {
	uint32_t uid, pid;	/* pid 0: the uid's line */
	char comm[16];		/* the kernel's name of the process (/proc), never the peer's word */
	uint64_t n[XPU_PEER_REASONS];
};

struct xpu_gpu_peers {
	uint64_t total[XPU_PEER_REASONS];
	struct xpu_peer_count uids[XPU_PEER_SHOWN];	/* most refused first */
	int nuids;
	struct xpu_peer_count procs[XPU_PEER_SHOWN];	/* most recent first */
	int nprocs;
	uint32_t devices;	/* device ids accepted: 0 .. devices - 1 */
	uint64_t name_bytes;	/* bytes of names peers added to the dictionary */
	uint32_t conns;		/* connections open */
};

const char *xpu_peer_reason_name(enum xpu_peer_reason r);

struct xpu_snap_gpu {
	struct xpu_src_status status;
	struct xpu_gpu_peers peers;	/* what the injection socket refused */
	struct xpu_table rows;		/* kernels, sorted and filtered */
	struct xpu_flame flame;		/* CPU -> launch API -> kernel, by GPU time */
	int flame_launches;		/* no GPU time: the flame counts launch-only calls */
	struct xpu_gpu_device_sum devices[XPU_SNAP_GPU_DEVICES];
	int ndevices;
	double joined_pct;		/* GPU time with a complete launch stack, -1 = none */
	uint64_t ns;			/* GPU time traced in the window */
	double ns_est;			/* the same, sampled processes' scaled up */
	struct xpu_gpu_est ns_err;	/* ns_est's uncertainty; ok 0: not estimated */
	struct xpu_gpu_proc procs[XPU_SNAP_GPU_PROCS];	/* processes seen, connected first */
	int nprocs;
	const char *selected;		/* full name of the selected kernel, or NULL */
	struct xpu_gpudev_snap dev;	/* GPU devices as NVML reports them */
	/* GPU tracing: the mode asked of the libraries (live), whether this
	 * xputop asks for exact tracing, and whether the figures shown are
	 * sampled estimates with the share of time traced. */
	struct xpu_gpu_tracing tracing;
	int exact_asked;
	double exact_left_s;		/* exact mode's time left, 0 = no limit */
	int sampled;
	double cover;			/* 0..1 */
	/* Sampled processes whose figures scale by their launching threads'
	 * own CPU time (model_gpu.h by_own), and its mean share traced. */
	int by_own;
	double own_cover;
	/* Processes scaled by the launch probes' count (model_gpu.h by_probe),
	 * and the mean share of the time the probes were on. */
	int by_probe;
	double probe_cover;
	/* Of them, those whose count scales by their launching threads' CPU
	 * time (model_gpu.h by_cpu), and its mean share counted. */
	int by_cpu;
	double cpu_cover;
	/* Sampled processes whose kernels came without their launch records
	 * (model_gpu.h orphaned): their kernels and GPU time not estimated. */
	int orphaned;
	int ids_stuck;	/* of them, with CUPTI's ids stuck (model_gpu.h) */
};

/* A GPU device process's kind from its valid bits, as both front-ends say it:
 * "compute", "graphics" or "compute+graphics". */
const char *xpu_gpudev_proc_type(uint32_t valid);

#endif
