/* SPDX-License-Identifier: GPL-2.0-only */
#include "nvml.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"

/* The parts of nvml.h used here, as the driver's library lays them out. */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3 };
enum { NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139 };
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_SCOPE_ALL_LINKS 0xffffffffu	/* scopeId: the sum over every link */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_NO_INSTANCE 0xffffffffu		/* gpuInstanceId without MIG */

struct nvml_pci {
	char bus_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};
struct nvml_util { unsigned gpu, memory; };
struct nvml_mem_v1 { unsigned long long total, free, used; };
struct nvml_mem_v2 { unsigned version; unsigned long long total, reserved, free, used; };
struct nvml_proc_v1 { unsigned pid; unsigned long long mem; };
struct nvml_proc_v2 { unsigned pid; unsigned long long mem; unsigned gi, ci; };
struct nvml_proc_util { unsigned pid; unsigned long long ts_us; unsigned sm, mem, enc, dec; };
struct nvml_field {
	unsigned field_id, scope_id;
	long long ts_us, latency_us;
	int value_type;
	nvmlReturn_t ret;
	union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } value;
};
_Static_assert(sizeof(struct nvml_pci) == 68 && offsetof(struct nvml_pci, bus_id) == 36, "nvmlPciInfo_t");
_Static_assert(sizeof(struct nvml_mem_v2) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(struct nvml_proc_v1) == 16 && sizeof(struct nvml_proc_v2) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(struct nvml_proc_util) == 32, "nvmlProcessUtilizationSample_t");
_Static_assert(sizeof(struct nvml_field) == 40, "nvmlFieldValue_t");
#define NVML_MEMORY_V2 ((unsigned)(sizeof(struct nvml_mem_v2) | 2u << 24))

/* Bounds on what one device's lists may make us allocate. */
#define PROC_CAP_MAX 4096
#define UTIL_CAP_MAX 16384

typedef nvmlReturn_t (*proc_list_fn)(nvmlDevice_t, unsigned *, void *);

struct xpu_nvml {
	void *lib;
	char desc[160];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*pci)(nvmlDevice_t, struct nvml_pci *);
	nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*util)(nvmlDevice_t, struct nvml_util *);
	nvmlReturn_t (*mem_v2)(nvmlDevice_t, struct nvml_mem_v2 *);
	nvmlReturn_t (*mem_v1)(nvmlDevice_t, struct nvml_mem_v1 *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*fields)(nvmlDevice_t, unsigned, struct nvml_field *);
	proc_list_fn compute, graphics;
	int compute_v1, graphics_v1;	/* the unversioned functions: nvmlProcessInfo_v1_t */
	nvmlReturn_t (*proc_util)(nvmlDevice_t, struct nvml_proc_util *, unsigned *, unsigned long long);
	unsigned long long last_seen_us[XPU_GPU_DEV_MAX];	/* newest process sample read */
	uint8_t *pbuf;			/* process lists, in either layout */
	unsigned pcap;			/* entries of the v2 layout it holds */
	struct nvml_proc_util *ubuf;
	unsigned ucap;
};

/* A function and its names, newest version first. */
struct sym {
	size_t off;
	const char *names[3];
	int required;
};

#define FN(f) offsetof(struct xpu_nvml, f)
static const struct sym syms[] = {
	{ FN(init), { "nvmlInit_v2", "nvmlInit" }, 1 },
	{ FN(shutdown), { "nvmlShutdown" }, 1 },
	{ FN(error_string), { "nvmlErrorString" }, 1 },
	{ FN(count), { "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount" }, 1 },
	{ FN(handle), { "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex" }, 1 },
	{ FN(driver_version), { "nvmlSystemGetDriverVersion" }, 0 },
	{ FN(name), { "nvmlDeviceGetName" }, 0 },
	{ FN(pci), { "nvmlDeviceGetPciInfo_v3" }, 0 },
	{ FN(mig_mode), { "nvmlDeviceGetMigMode" }, 0 },
	{ FN(util), { "nvmlDeviceGetUtilizationRates" }, 0 },
	{ FN(mem_v2), { "nvmlDeviceGetMemoryInfo_v2" }, 0 },
	{ FN(mem_v1), { "nvmlDeviceGetMemoryInfo" }, 0 },
	{ FN(power), { "nvmlDeviceGetPowerUsage" }, 0 },
	{ FN(power_limit), { "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit" }, 0 },
	{ FN(temp), { "nvmlDeviceGetTemperature" }, 0 },
	{ FN(clock), { "nvmlDeviceGetClockInfo" }, 0 },
	{ FN(pcie), { "nvmlDeviceGetPcieThroughput" }, 0 },
	{ FN(nvlink_state), { "nvmlDeviceGetNvLinkState" }, 0 },
	{ FN(fields), { "nvmlDeviceGetFieldValues" }, 0 },
	{ FN(proc_util), { "nvmlDeviceGetProcessUtilization" }, 0 },
};
/* The process lists change layout with their version: which one was found matters. */
static const struct sym compute_sym = {
	FN(compute),
	{ "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
	  "nvmlDeviceGetComputeRunningProcesses" }, 0,
};
static const struct sym graphics_sym = {
	FN(graphics),
	{ "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
	  "nvmlDeviceGetGraphicsRunningProcesses" }, 0,
};
#undef FN

/* Sets the function pointer s names; returns which of its names was found,
 * or -1. */
static int resolve(struct xpu_nvml *n, const struct sym *s)
{
	for (int i = 0; i < 3 && s->names[i]; i++) {
		void *f = dlsym(n->lib, s->names[i]);
		if (f) {
			*(void **)((char *)n + s->off) = f;
			return i;
		}
	}
	return -1;
}

static int resolve_all(struct xpu_nvml *n, const char *lib, char *why, size_t size)
{
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (resolve(n, &syms[i]) < 0 && syms[i].required) {
			snprintf(why, size, "%s has no %s: it is not NVIDIA's management library", lib,
				 syms[i].names[0]);
			return -1;
		}
	}
	n->compute_v1 = resolve(n, &compute_sym) == 2;
	n->graphics_v1 = resolve(n, &graphics_sym) == 2;
	return 0;
}

/* NVML's sentence for rc, read with a bound: it comes from another library. */
const char *xpu_nvml_error(const struct xpu_nvml *n, int rc)
{
	static __thread char buf[96];
	const char *s = n->error_string ? n->error_string(rc) : NULL;
	if (!s)
		snprintf(buf, sizeof(buf), "NVML error %d", rc);
	else
		snprintf(buf, sizeof(buf), "%.*s", (int)strnlen(s, sizeof(buf) - 1), s);
	return buf;
}

static void *load(const char *path, const char **used, char *why, size_t size, int *absent)
{
	static const char *const defaults[] = { XPU_NVML_SONAME, XPU_NVML_SONAME_DEV };
	void *lib = NULL;
	*absent = 0;
	if (path) {
		*used = path;
		if ((lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL)))
			return lib;
		snprintf(why, size, "cannot load %s: %s", path, dlerror());
		return NULL;
	}
	for (int i = 0; i < 2 && !lib; i++)
		lib = dlopen(*used = defaults[i], RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		*absent = 1;
		snprintf(why, size, "no NVIDIA driver here: %s is not installed", XPU_NVML_SONAME);
	}
	return lib;
}

static void describe(struct xpu_nvml *n, const char *lib)
{
	char ver[XPU_NVML_DRIVER];
	memset(ver, 0, sizeof(ver));
	if (!n->driver_version || n->driver_version(ver, sizeof(ver)) != NVML_SUCCESS)
		snprintf(ver, sizeof(ver), "version unknown");
	ver[sizeof(ver) - 1] = '\0';
	snprintf(n->desc, sizeof(n->desc), "driver %s (%s)", ver, lib);
}

struct xpu_nvml *xpu_nvml_open(const char *path, char *why, size_t size, int *absent)
{
	struct xpu_nvml *n = calloc(1, sizeof(*n));
	const char *lib = path;
	if (!n) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	n->lib = load(path, &lib, why, size, absent);
	if (!n->lib || resolve_all(n, lib, why, size) < 0)
		goto fail;
	int rc = n->init();
	if (rc != NVML_SUCCESS) {
		snprintf(why, size, "%s: nvmlInit failed: %s", lib, xpu_nvml_error(n, rc));
		goto fail;
	}
	describe(n, lib);
	return n;
fail:
	if (n->lib)
		dlclose(n->lib);
	free(n);
	return NULL;
}

const char *xpu_nvml_describe(const struct xpu_nvml *n)
{
	return n->desc;
}

void xpu_nvml_close(struct xpu_nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n->pbuf);
	free(n->ubuf);
	free(n);
}

/* Whether a call gave its value.  "Not supported" is an answer (the field
 * shows N/A); any other failure is also remembered to be shown. */
static int ok(struct xpu_nvml_dev *d, const char *fn, nvmlReturn_t rc)
{
	if (rc == NVML_SUCCESS)
		return 1;
	if (rc != NVML_ERROR_NOT_SUPPORTED && !d->err) {
		d->err = rc;
		d->err_fn = fn;
	}
	return 0;
}

static void read_identity(struct xpu_nvml *n, nvmlDevice_t h, struct xpu_nvml_dev *d)
{
	struct nvml_pci pci;
	unsigned cur, pending;
	memset(&pci, 0, sizeof(pci));
	if (n->name && ok(d, "nvmlDeviceGetName", n->name(h, d->name, sizeof(d->name))))
		d->name[sizeof(d->name) - 1] = '\0';
	else
		d->name[0] = '\0';
	if (n->pci && ok(d, "nvmlDeviceGetPciInfo_v3", n->pci(h, &pci))) {
		pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
		memcpy(d->bus, pci.bus_id, sizeof(d->bus));
	}
	if (n->mig_mode && ok(d, "nvmlDeviceGetMigMode", n->mig_mode(h, &cur, &pending)) && cur == 1)
		d->flags |= XPU_GPU_DEV_MIG;
}

/* The v2 call, whose "used" leaves out what the driver reserves; v1 where a
 * driver lacks it or knows another struct version. */
static void read_memory(struct xpu_nvml *n, nvmlDevice_t h, struct xpu_nvml_dev *d)
{
	struct nvml_mem_v2 m2 = { .version = NVML_MEMORY_V2 };
	struct nvml_mem_v1 m1;
	if (!n->mem_v2 && !n->mem_v1)
		return;
	nvmlReturn_t rc = n->mem_v2 ? n->mem_v2(h, &m2) : NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH && n->mem_v1) {
		if (ok(d, "nvmlDeviceGetMemoryInfo", n->mem_v1(h, &m1))) {
			d->mem_used = m1.used;
			d->mem_total = m1.total;
			d->flags |= XPU_GPU_DEV_MEM;
		}
	} else if (ok(d, "nvmlDeviceGetMemoryInfo_v2", rc)) {
		d->mem_used = m2.used;
		d->mem_total = m2.total;
		d->flags |= XPU_GPU_DEV_MEM;
	}
}

/* Reads one unsigned field into d->dst; sets bit when NVML answered. */
#define READ_U32(fnptr, name, bit, dst, ...)                                      \
	do {                                                                      \
		unsigned v_;                                                      \
		if (n->fnptr && ok(d, name, n->fnptr(__VA_ARGS__, &v_))) {        \
			d->dst = v_;                                              \
			d->flags |= (bit);                                        \
		}                                                                 \
	} while (0)

static void read_state(struct xpu_nvml *n, nvmlDevice_t h, struct xpu_nvml_dev *d)
{
	struct nvml_util u;
	if (n->util && ok(d, "nvmlDeviceGetUtilizationRates", n->util(h, &u))) {
		d->util_gpu = u.gpu;
		d->util_mem = u.memory;
		d->flags |= XPU_GPU_DEV_UTIL | XPU_GPU_DEV_MEM_UTIL;
	}
	read_memory(n, h, d);
	READ_U32(power, "nvmlDeviceGetPowerUsage", XPU_GPU_DEV_POWER, power_mw, h);
	READ_U32(power_limit, "nvmlDeviceGetEnforcedPowerLimit", XPU_GPU_DEV_POWER_LIMIT, power_limit_mw, h);
	READ_U32(temp, "nvmlDeviceGetTemperature", XPU_GPU_DEV_TEMP, temp_c, h, NVML_TEMPERATURE_GPU);
	READ_U32(clock, "nvmlDeviceGetClockInfo", XPU_GPU_DEV_SM_CLOCK, sm_mhz, h, NVML_CLOCK_SM);
	READ_U32(clock, "nvmlDeviceGetClockInfo", XPU_GPU_DEV_MEM_CLOCK, mem_mhz, h, NVML_CLOCK_MEM);
	READ_U32(pcie, "nvmlDeviceGetPcieThroughput", XPU_GPU_DEV_PCIE_RX, pcie_rx_kbs, h,
		 NVML_PCIE_UTIL_RX_BYTES);
	READ_U32(pcie, "nvmlDeviceGetPcieThroughput", XPU_GPU_DEV_PCIE_TX, pcie_tx_kbs, h,
		 NVML_PCIE_UTIL_TX_BYTES);
}
#undef READ_U32

/* Active NVLinks.  A device without NVLink answers "not supported" for
 * link 0; past its last link a device answers "not supported" or "invalid
 * argument". */
static void count_nvlinks(struct xpu_nvml *n, nvmlDevice_t h, struct xpu_nvml_dev *d)
{
	unsigned links = 0;
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		unsigned active = 0;
		nvmlReturn_t rc = n->nvlink_state(h, l, &active);
		if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_ERROR_INVALID_ARGUMENT && l))
			break;
		if (!ok(d, "nvmlDeviceGetNvLinkState", rc))
			return;
		links += active == 1;
	}
	d->nvlinks = links;
	d->flags |= XPU_GPU_DEV_NVLINKS;
}

static void read_nvlink(struct xpu_nvml *n, nvmlDevice_t h, struct xpu_nvml_dev *d)
{
	struct nvml_field f[2];
	if (!n->nvlink_state)
		return;
	count_nvlinks(n, h, d);
	if (!d->nvlinks || !n->fields)
		return;
	memset(f, 0, sizeof(f));
	f[0].field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
	f[1].field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
	f[0].scope_id = f[1].scope_id = NVML_SCOPE_ALL_LINKS;
	if (!ok(d, "nvmlDeviceGetFieldValues", n->fields(h, 2, f)))
		return;
	for (int i = 0; i < 2; i++) {
		if (f[i].ret != NVML_SUCCESS || f[i].value_type != NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
			continue;
		*(i ? &d->nvlink_tx_kib : &d->nvlink_rx_kib) = f[i].value.ull;
		d->flags |= i ? XPU_GPU_DEV_NVLINK_TX : XPU_GPU_DEV_NVLINK_RX;
	}
}

/* One of a device's process lists into n->pbuf; returns the entries read. */
static unsigned list_procs(struct xpu_nvml *n, struct xpu_nvml_dev *d, proc_list_fn fn,
			   const char *name, nvmlDevice_t h)
{
	for (int tries = 0; tries < 2; tries++) {
		unsigned c = n->pcap;
		nvmlReturn_t rc = fn(h, &c, n->pbuf);
		if (rc == NVML_ERROR_INSUFFICIENT_SIZE && c > n->pcap && tries == 0) {
			unsigned cap = c < PROC_CAP_MAX ? c + 16 : PROC_CAP_MAX;
			uint8_t *b = realloc(n->pbuf, (size_t)cap * sizeof(struct nvml_proc_v2));
			if (!b)
				return 0;
			n->pbuf = b;
			n->pcap = cap;
			continue;
		}
		return ok(d, name, rc) ? (c < n->pcap ? c : n->pcap) : 0;
	}
	return 0;
}

static struct xpu_nvml_proc *proc_of(struct xpu_nvml_sample *s, uint32_t first, uint32_t pid)
{
	for (uint32_t i = first; i < s->nproc; i++)
		if (s->proc[i].pid == pid)
			return &s->proc[i];
	return NULL;
}

/* Adds one list's entries to the device's processes (first..nproc in s). */
static void add_procs(struct xpu_nvml *n, struct xpu_nvml_sample *s, uint32_t first, unsigned c,
		      int v1, uint32_t type)
{
	struct xpu_nvml_dev *d = &s->dev[s->ndev];
	for (unsigned i = 0; i < c; i++) {
		struct nvml_proc_v2 e = { .gi = NVML_NO_INSTANCE, .ci = NVML_NO_INSTANCE };
		if (v1)
			memcpy(&e, n->pbuf + i * sizeof(struct nvml_proc_v1), sizeof(struct nvml_proc_v1));
		else
			memcpy(&e, n->pbuf + i * sizeof(struct nvml_proc_v2), sizeof(e));
		struct xpu_nvml_proc *p = proc_of(s, first, e.pid);
		if (!p && s->nproc == XPU_NVML_PROCS) {
			d->procs_lost++;
			continue;
		}
		if (!p) {
			p = &s->proc[s->nproc++];
			memset(p, 0, sizeof(*p));
			p->dev = s->ndev;
			p->pid = e.pid;
		}
		p->flags |= type;
		if (e.mem != NVML_VALUE_NOT_AVAILABLE && (!(p->flags & XPU_GPU_DEVPROC_MEM) || e.mem > p->mem)) {
			p->mem = e.mem;
			p->flags |= XPU_GPU_DEVPROC_MEM;
		}
		if (e.gi != NVML_NO_INSTANCE && e.ci != NVML_NO_INSTANCE) {
			p->gi = e.gi;
			p->ci = e.ci;
			p->flags |= XPU_GPU_DEVPROC_MIG;
		}
	}
}

/* Samples newer than the last poll's; each process keeps its newest. */
static void read_proc_util(struct xpu_nvml *n, struct xpu_nvml_sample *s, uint32_t first,
			   nvmlDevice_t h)
{
	struct xpu_nvml_dev *d = &s->dev[s->ndev];
	unsigned long long *seen = &n->last_seen_us[d->index];
	unsigned long long newest[XPU_NVML_PROCS];
	unsigned c = 0;
	nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
	for (int tries = 0; tries < 2 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
		if (c > n->ucap) {
			unsigned cap = c < UTIL_CAP_MAX ? c + 16 : UTIL_CAP_MAX;
			struct nvml_proc_util *b = realloc(n->ubuf, (size_t)cap * sizeof(*b));
			if (!b)
				return;
			n->ubuf = b;
			n->ucap = cap;
		}
		c = n->ucap;
		rc = n->proc_util(h, n->ubuf, &c, *seen);
	}
	if (rc == NVML_ERROR_NOT_FOUND || !ok(d, "nvmlDeviceGetProcessUtilization", rc))
		return;	/* not found: no sample since the last poll */
	for (unsigned i = 0; i < c && i < n->ucap; i++) {
		const struct nvml_proc_util *u = &n->ubuf[i];
		struct xpu_nvml_proc *p = proc_of(s, first, u->pid);
		if (u->ts_us > *seen)
			*seen = u->ts_us;
		if (!p || ((p->flags & XPU_GPU_DEVPROC_UTIL) && u->ts_us <= newest[p - s->proc]))
			continue;
		newest[p - s->proc] = u->ts_us;
		p->sm = u->sm;
		p->mem_util = u->mem;
		p->enc = u->enc;
		p->dec = u->dec;
		p->flags |= XPU_GPU_DEVPROC_UTIL;
	}
}

static void read_procs(struct xpu_nvml *n, struct xpu_nvml_sample *s, nvmlDevice_t h)
{
	struct xpu_nvml_dev *d = &s->dev[s->ndev];
	uint32_t first = s->nproc;
	if (!n->pbuf && !(n->pbuf = malloc(64 * sizeof(struct nvml_proc_v2))))
		return;
	if (!n->pcap)
		n->pcap = 64;
	if (n->compute)
		add_procs(n, s, first, list_procs(n, d, n->compute, "nvmlDeviceGetComputeRunningProcesses", h),
			  n->compute_v1, XPU_GPU_DEVPROC_COMPUTE);
	if (n->graphics)
		add_procs(n, s, first, list_procs(n, d, n->graphics, "nvmlDeviceGetGraphicsRunningProcesses", h),
			  n->graphics_v1, XPU_GPU_DEVPROC_GRAPHICS);
	if (n->proc_util && s->nproc > first)
		read_proc_util(n, s, first, h);
}

int xpu_nvml_poll(struct xpu_nvml *n, struct xpu_nvml_sample *s, char *why, size_t size)
{
	uint64_t start = xpu_now_mono();
	unsigned count = 0;
	nvmlReturn_t rc = n->count(&count);
	s->ndev = s->nproc = 0;
	if (rc != NVML_SUCCESS) {
		snprintf(why, size, "nvmlDeviceGetCount failed: %s", xpu_nvml_error(n, rc));
		return -1;
	}
	s->count = count;
	for (unsigned i = 0; i < count && i < XPU_GPU_DEV_MAX; i++) {
		struct xpu_nvml_dev *d = &s->dev[s->ndev];
		nvmlDevice_t h;
		memset(d, 0, sizeof(*d));
		d->index = i;
		if (ok(d, "nvmlDeviceGetHandleByIndex", n->handle(i, &h))) {
			read_identity(n, h, d);
			read_state(n, h, d);
			read_nvlink(n, h, d);
			read_procs(n, s, h);
		}
		s->ndev++;
	}
	s->time = xpu_now_mono();
	s->took_ns = s->time - start;
	return 0;
}
