/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU device model: each NVIDIA GPU as its driver (NVML) last described
 * it, and the processes on it, from the XPU_EV_GPU_DEV* events (event.h).
 * No injection and no cost to any application: this is nvidia-smi's,
 * nvtop's and nvitop's picture, beside the kernels of the GPU model.
 *
 * Gauges are shown as last sampled; NVLink traffic is a rate between two
 * samples of the driver's counters.  A field the driver did not give has its
 * bit clear in `valid` and is shown N/A, never 0.
 */
#ifndef XPU_MODEL_GPUDEV_H
#define XPU_MODEL_GPUDEV_H

#include <stdint.h>

#include "event.h"

#define XPU_GPUDEV_PROCS 256	/* processes kept over all devices */
/* A device not sampled for this many poll periods is shown stale. */
#define XPU_GPUDEV_STALE_POLLS 3
#define XPU_GPUDEV_POLL_NS 1000000000ULL	/* the poller's period (at least) */

/* One device.  `valid` holds XPU_GPU_DEV_* bits (event.h); for NVLink the
 * RX/TX bits mean that the rates are known (two samples of the counters). */
struct xpu_gpudev {
	uint32_t index;
	uint32_t name, bus;		/* dict strings, 0 = unknown */
	uint32_t valid;
	int mig;			/* MIG mode on: per-process shares are not given */
	int stale;			/* no sample for XPU_GPUDEV_STALE_POLLS periods */
	double util_gpu, util_mem;	/* % */
	uint64_t mem_used, mem_total;	/* bytes */
	double mem_pct;			/* used / total */
	double power_w, power_limit_w;
	uint32_t temp_c, sm_mhz, mem_mhz;
	double pcie_rx, pcie_tx;	/* bytes/s */
	double nvlink_rx, nvlink_tx;	/* bytes/s */
	uint32_t nvlinks;
	uint32_t nprocs;		/* processes on it, shown or not (XPU_GPUDEV_PROCS) */
	uint64_t sampled;		/* CLOCK_MONOTONIC of the sample */
	double age_s;			/* at the snapshot's tick */
	/* the counters of the last LINK event, for the next rate */
	uint64_t nvlink_rx_kib, nvlink_tx_kib, link_time;
	uint32_t link_valid;
};

/* A process on a device.  `valid` holds XPU_GPU_DEVPROC_* bits. */
struct xpu_gpudev_proc {
	uint32_t index;			/* device */
	uint32_t pid;			/* the host's */
	uint32_t nspid;			/* in its own pid namespace */
	uint32_t comm, user;		/* dict strings, 0 = unknown */
	uint32_t valid;
	uint64_t mem;			/* bytes */
	uint32_t sm_pct, mem_pct, enc_pct, dec_pct;
	uint32_t gi, ci;
};

/* What the snapshot shows, in one piece (the exporters read it too):
 * devices by index, processes by device then GPU memory, largest first. */
struct xpu_gpudev_snap {
	int state;			/* enum xpu_src_state (snapshot.h) */
	char status[320];		/* what NVML is doing, or why it is not */
	uint32_t ndev;
	struct xpu_gpudev dev[XPU_GPU_DEV_MAX];
	uint32_t nproc;
	struct xpu_gpudev_proc proc[XPU_GPUDEV_PROCS];
	uint64_t refused;		/* events for a device not sampled yet */
};

struct xpu_gpudev_model {
	struct xpu_gpudev_snap s;
	uint64_t tick_ns;		/* the last tick */
	uint64_t interval_ns;
};

void xpu_gpudev_model_init(struct xpu_gpudev_model *m);
/* One XPU_EV_GPU_DEV* event. */
void xpu_gpudev_model_event(struct xpu_gpudev_model *m, const struct xpu_event *ev);
void xpu_gpudev_model_tick(struct xpu_gpudev_model *m, uint64_t now, uint64_t interval_ns);
/* The state line of the device view (printf-style). */
void xpu_gpudev_model_status(struct xpu_gpudev_model *m, int state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies what the snapshot shows, sorted, with each device's age. */
void xpu_gpudev_model_snapshot(const struct xpu_gpudev_model *m, struct xpu_gpudev_snap *out);

#endif
