/* SPDX-License-Identifier: GPL-2.0-only */
/* NVIDIA's management library (NVML), loaded at run time with dlopen as
 * nvtop does: building xputop needs no NVML header or package, and a machine
 * without the driver has no device view instead of no xputop.  The few types
 * and functions used are declared in nvml.c, each looked up by its newest
 * versioned name first (nvmlInit_v2, then nvmlInit).
 *
 * Every call may block for milliseconds (the PCIe counters sample for 20 ms
 * each): only the poller thread (core/sources/source_nvml.c) calls these.
 */
#ifndef XPU_NVML_H
#define XPU_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "pidns.h"

/* What the loader tries, in order, when no path is given. */
#define XPU_NVML_SONAME "libnvidia-ml.so.1"
#define XPU_NVML_SONAME_DEV "libnvidia-ml.so"

#define XPU_NVML_NAME 96	/* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define XPU_NVML_BUS 32		/* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */
#define XPU_NVML_DRIVER 80	/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
#define XPU_NVML_PROCS 1024	/* processes kept from one poll, all devices */
#define XPU_NVML_NOTE 160

/* One process on one device. */
struct xpu_nvml_proc {
	uint32_t dev;			/* index into the sample's devices */
	uint32_t pid;			/* the host's pid, as NVML gives it */
	uint32_t flags;			/* XPU_GPU_DEVPROC_* */
	uint64_t mem;			/* bytes */
	uint32_t sm, mem_util, enc, dec;	/* % of the device, its latest sample */
	uint32_t gi, ci;		/* MIG instances */
	struct xpu_pidns_info ns;	/* filled by the poller from /proc */
};

/* One device as one poll found it. */
struct xpu_nvml_dev {
	uint32_t index;
	uint32_t flags;			/* XPU_GPU_DEV_* of the fields NVML gave */
	char name[XPU_NVML_NAME];	/* always NUL-terminated, "" = unknown */
	char bus[XPU_NVML_BUS];
	uint32_t util_gpu, util_mem, temp_c, sm_mhz, mem_mhz;
	uint64_t mem_used, mem_total;	/* bytes */
	uint32_t power_mw, power_limit_mw;
	uint32_t pcie_rx_kbs, pcie_tx_kbs;
	uint64_t nvlink_rx_kib, nvlink_tx_kib;
	uint32_t nvlinks;
	uint32_t procs_lost;		/* processes past XPU_NVML_PROCS */
	int err;			/* first NVML error but "not supported", 0 = none */
	const char *err_fn;		/* the function that returned it */
};

struct xpu_nvml_sample {
	uint64_t time;			/* CLOCK_MONOTONIC at the end of the poll */
	uint64_t took_ns;		/* how long the poll took */
	uint32_t ndev;
	uint32_t count;			/* devices NVML has (ndev may be fewer) */
	struct xpu_nvml_dev dev[XPU_GPU_DEV_MAX];
	uint32_t nproc;
	struct xpu_nvml_proc proc[XPU_NVML_PROCS];
};

struct xpu_nvml;

/* Loads the library at path (or XPU_NVML_SONAME, then XPU_NVML_SONAME_DEV)
 * and initializes it.  Returns NULL with a sentence in why, and *absent set
 * when no library was there to load (a machine without the NVIDIA driver). */
struct xpu_nvml *xpu_nvml_open(const char *path, char *why, size_t size, int *absent);
/* Which library and driver: "driver 580.95.05 (libnvidia-ml.so.1)". */
const char *xpu_nvml_describe(const struct xpu_nvml *n);
/* Reads every device, its links and its processes into *s (pidns is left
 * to the caller).  Returns 0, or -1 when NVML could not even count the
 * devices (why says so). */
int xpu_nvml_poll(struct xpu_nvml *n, struct xpu_nvml_sample *s, char *why, size_t size);
/* NVML's sentence for a return code. */
const char *xpu_nvml_error(const struct xpu_nvml *n, int rc);
/* Shuts NVML down and unloads it. */
void xpu_nvml_close(struct xpu_nvml *n);

#endif
