/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for NVIDIA's libnvidia-ml.so.1, for tests of the device view on
 * machines without a GPU.  xputop loads it through XPUTOP_NVML=path, exactly
 * as it loads the real one.  What it reports is read from the scenario file
 * named by FAKE_NVML (read again whenever the file changes), one line each:
 *
 *   init RC                 nvmlInit returns RC (9: driver not loaded)
 *   init_delay MS           nvmlInit takes MS milliseconds
 *   driver VERSION
 *   device                  starts the next device; then, for it:
 *   name TEXT               (up to 255 bytes, given to NVML's buffer as NVML would)
 *   name_unterminated       fill the name buffer with no NUL, as a broken library might
 *   bus TEXT
 *   util GPU MEM            percent
 *   memory TOTAL USED       bytes
 *   power MW | limit MW | temp C | clocks SM MEM | pcie RX TX (KB/s)
 *   mig                     MIG mode on: process utilization is "not supported"
 *   nvlink LINKS RX TX      active links; the data counters grow by RX and TX KiB/s
 *   proc compute|graphics PID MEM|na [GI CI]
 *   procutil PID SM MEM ENC DEC
 *   fail FUNCTION RC        FUNCTION returns RC for this device
 *   delay FUNCTION MS       FUNCTION takes MS milliseconds for this device
 *
 * A field a device does not name is "not supported".  Built twice: as is, it
 * exports the versioned functions a current driver has (its unversioned ones
 * fail, so a loader that picks them is caught); with FAKE_NVML_V1, only the
 * unversioned functions of an old driver, with the old process layout. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAXDEV 8
#define MAXPROC 128
#define MAXRULE 8

typedef int nvmlReturn_t;
typedef struct fdev *nvmlDevice_t;
enum { OK = 0, INVALID = 2, UNSUPPORTED = 3, NOT_FOUND = 6, SMALL = 7, UNINIT = 1, WRONG = 999 };

struct rule { char fn[64]; int value; };
struct fproc { int graphics; unsigned pid; unsigned long long mem; unsigned gi, ci; };
struct futil { unsigned pid, sm, mem, enc, dec; };

struct fdev {
	char name[256];
	int unterminated;
	char bus[64];
	int has_util, has_mem, has_power, has_limit, has_temp, has_clocks, has_pcie, mig;
	unsigned util_gpu, util_mem, power, limit, temp, sm, memclk, rx, tx;
	unsigned long long total, used;
	int nvlinks;
	unsigned long long nvl_rx, nvl_tx;
	struct rule fails[MAXRULE], delays[MAXRULE];
	int nfails, ndelays;
	struct fproc procs[MAXPROC];
	int nprocs;
	struct futil utils[MAXPROC];
	int nutils;
};

static struct {
	int init_rc, init_delay;
	char driver[80];
	struct fdev dev[MAXDEV];
	int ndev;
	struct timespec mtime;
	off_t size;
	int initialized;
	struct timespec start;
} S;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void rule(struct rule *r, int *n, const char *fn, int v)
{
	if (*n < MAXRULE) {
		snprintf(r[*n].fn, sizeof(r[*n].fn), "%s", fn);
		r[(*n)++].value = v;
	}
}

static void device_line(struct fdev *d, const char *key, const char *rest)
{
	char a[64];
	int v;
	if (!strcmp(key, "name"))
		snprintf(d->name, sizeof(d->name), "%s", rest);
	else if (!strcmp(key, "name_unterminated"))
		d->unterminated = 1;
	else if (!strcmp(key, "bus"))
		snprintf(d->bus, sizeof(d->bus), "%s", rest);
	else if (!strcmp(key, "util"))
		d->has_util = sscanf(rest, "%u %u", &d->util_gpu, &d->util_mem) == 2;
	else if (!strcmp(key, "memory"))
		d->has_mem = sscanf(rest, "%llu %llu", &d->total, &d->used) == 2;
	else if (!strcmp(key, "power"))
		d->has_power = sscanf(rest, "%u", &d->power) == 1;
	else if (!strcmp(key, "limit"))
		d->has_limit = sscanf(rest, "%u", &d->limit) == 1;
	else if (!strcmp(key, "temp"))
		d->has_temp = sscanf(rest, "%u", &d->temp) == 1;
	else if (!strcmp(key, "clocks"))
		d->has_clocks = sscanf(rest, "%u %u", &d->sm, &d->memclk) == 2;
	else if (!strcmp(key, "pcie"))
		d->has_pcie = sscanf(rest, "%u %u", &d->rx, &d->tx) == 2;
	else if (!strcmp(key, "mig"))
		d->mig = 1;
	else if (!strcmp(key, "nvlink"))
		sscanf(rest, "%d %llu %llu", &d->nvlinks, &d->nvl_rx, &d->nvl_tx);
	else if (!strcmp(key, "fail") && sscanf(rest, "%63s %d", a, &v) == 2)
		rule(d->fails, &d->nfails, a, v);
	else if (!strcmp(key, "delay") && sscanf(rest, "%63s %d", a, &v) == 2)
		rule(d->delays, &d->ndelays, a, v);
	else if (!strcmp(key, "proc") && d->nprocs < MAXPROC) {
		struct fproc *p = &d->procs[d->nprocs];
		char mem[32];
		p->gi = p->ci = 0xffffffffu;
		if (sscanf(rest, "%63s %u %31s %u %u", a, &p->pid, mem, &p->gi, &p->ci) >= 3) {
			p->graphics = !strcmp(a, "graphics");
			p->mem = strcmp(mem, "na") ? strtoull(mem, NULL, 10) : ~0ULL;
			d->nprocs++;
		}
	} else if (!strcmp(key, "procutil") && d->nutils < MAXPROC) {
		struct futil *u = &d->utils[d->nutils];
		if (sscanf(rest, "%u %u %u %u %u", &u->pid, &u->sm, &u->mem, &u->enc, &u->dec) == 5)
			d->nutils++;
	}
}

static void parse(FILE *f)
{
	char line[512];
	struct fdev *d = NULL;
	memset(&S.dev, 0, sizeof(S.dev));
	S.ndev = 0;
	S.init_rc = S.init_delay = 0;
	snprintf(S.driver, sizeof(S.driver), "999.99");
	while (fgets(line, sizeof(line), f)) {
		char key[32], *rest;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%31s", key) != 1 || key[0] == '#')
			continue;
		rest = line + strspn(line, " \t") + strlen(key);
		rest += strspn(rest, " \t");
		if (!strcmp(key, "device") && S.ndev < MAXDEV) {
			d = &S.dev[S.ndev++];
			d->nvlinks = -1;
		} else if (!strcmp(key, "init"))
			S.init_rc = atoi(rest);
		else if (!strcmp(key, "init_delay"))
			S.init_delay = atoi(rest);
		else if (!strcmp(key, "driver"))
			snprintf(S.driver, sizeof(S.driver), "%s", rest);
		else if (d)
			device_line(d, key, rest);
	}
}

/* Reads the scenario again if its file changed. */
static void reload(void)
{
	const char *path = getenv("FAKE_NVML");
	struct stat st;
	if (!path || stat(path, &st))
		return;
	if (st.st_mtim.tv_sec == S.mtime.tv_sec && st.st_mtim.tv_nsec == S.mtime.tv_nsec &&
	    st.st_size == S.size)
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	parse(f);
	fclose(f);
	S.mtime = st.st_mtim;
	S.size = st.st_size;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

/* What a device function does first: the scenario's failure or delay for it. */
static int enter(struct fdev *d, const char *fn)
{
	int delay = 0, rc = OK;
	pthread_mutex_lock(&lock);
	reload();
	for (int i = 0; i < d->ndelays; i++)
		if (!strcmp(d->delays[i].fn, fn))
			delay = d->delays[i].value;
	for (int i = 0; i < d->nfails; i++)
		if (!strcmp(d->fails[i].fn, fn))
			rc = d->fails[i].value;
	if (!S.initialized)
		rc = UNINIT;
	pthread_mutex_unlock(&lock);
	if (delay)
		sleep_ms(delay);
	return rc;
}

#define ENTER(d)                                    \
	do {                                        \
		int rc_ = enter((d), __func__);     \
		if (rc_)                            \
			return rc_;                 \
	} while (0)

static nvmlReturn_t do_init(void)
{
	pthread_mutex_lock(&lock);
	clock_gettime(CLOCK_MONOTONIC, &S.start);
	reload();
	int rc = S.init_rc, delay = S.init_delay;
	S.initialized = rc == OK;
	pthread_mutex_unlock(&lock);
	if (delay)
		sleep_ms(delay);
	return rc;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	S.initialized = 0;
	return OK;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case OK: return "Success";
	case UNINIT: return "Uninitialized";
	case INVALID: return "Invalid Argument";
	case UNSUPPORTED: return "Not Supported";
	case 4: return "Insufficient Permissions";
	case NOT_FOUND: return "Not Found";
	case SMALL: return "Insufficient Size";
	case 9: return "Driver Not Loaded";
	case 15: return "GPU is lost";
	case WRONG: return "fake NVML: the unversioned function was called, not the newest";
	default: return "Unknown Error";
	}
}

static nvmlReturn_t do_count(unsigned *n)
{
	pthread_mutex_lock(&lock);
	reload();
	*n = (unsigned)S.ndev;
	int rc = S.initialized ? OK : UNINIT;
	pthread_mutex_unlock(&lock);
	return rc;
}

static nvmlReturn_t do_handle(unsigned i, nvmlDevice_t *h)
{
	if (i >= (unsigned)S.ndev)
		return INVALID;
	*h = &S.dev[i];
	return OK;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	snprintf(buf, len, "%s", S.driver);
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len)
{
	ENTER(d);
	if (d->unterminated) {
		memset(buf, 'X', len);
		return OK;
	}
	if (!d->name[0])
		return UNSUPPORTED;
	snprintf(buf, len, "%s", d->name);
	return OK;
}

#define SIMPLE(fn, has, value)                                  \
	EXPORT nvmlReturn_t fn(nvmlDevice_t d, unsigned *v)     \
	{                                                       \
		ENTER(d);                                       \
		if (!d->has)                                    \
			return UNSUPPORTED;                     \
		*v = d->value;                                  \
		return OK;                                      \
	}
SIMPLE(nvmlDeviceGetPowerUsage, has_power, power)
SIMPLE(nvmlDeviceGetEnforcedPowerLimit, has_limit, limit)
#undef SIMPLE

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, unsigned *u)
{
	ENTER(d);
	if (!d->has_util)
		return UNSUPPORTED;
	u[0] = d->util_gpu;
	u[1] = d->util_mem;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
	ENTER(d);
	if (!d->has_temp || sensor != 0)
		return UNSUPPORTED;
	*t = d->temp;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
	ENTER(d);
	if (!d->has_clocks || (type != 1 && type != 2))
		return UNSUPPORTED;
	*mhz = type == 1 ? d->sm : d->memclk;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *kbs)
{
	ENTER(d);
	if (!d->has_pcie)
		return UNSUPPORTED;
	*kbs = counter == 1 ? d->rx : d->tx;
	return OK;
}

struct mem_v1 { unsigned long long total, free, used; };

struct proc_v1 { unsigned pid; unsigned long long mem; };
struct proc_v2 { unsigned pid; unsigned long long mem; unsigned gi, ci; };

static nvmlReturn_t procs(nvmlDevice_t d, int graphics, unsigned *count, void *buf, int v1)
{
	unsigned n = 0, cap = *count;
	for (int i = 0; i < d->nprocs; i++)
		n += d->procs[i].graphics == graphics;
	*count = n;
	if (n > cap)
		return SMALL;
	n = 0;
	for (int i = 0; i < d->nprocs; i++) {
		const struct fproc *p = &d->procs[i];
		if (p->graphics != graphics)
			continue;
		if (v1)
			((struct proc_v1 *)buf)[n++] = (struct proc_v1){ p->pid, p->mem };
		else
			((struct proc_v2 *)buf)[n++] = (struct proc_v2){ p->pid, p->mem, p->gi, p->ci };
	}
	return OK;
}

#ifdef FAKE_NVML_V1
/* An old driver: unversioned functions only. */
static nvmlReturn_t mem_v1(nvmlDevice_t d, struct mem_v1 *m)
{
	if (!d->has_mem)
		return UNSUPPORTED;
	m->total = d->total;
	m->used = d->used;
	m->free = d->total - d->used;
	return OK;
}

EXPORT nvmlReturn_t nvmlInit(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned *n) { return do_count(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t *h) { return do_handle(i, h); }
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, struct mem_v1 *m)
{
	ENTER(d);
	return mem_v1(d, m);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned *c, void *b)
{
	ENTER(d);
	return procs(d, 0, c, b, 1);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned *c, void *b)
{
	ENTER(d);
	return procs(d, 1, c, b, 1);
}
#else
/* A current driver.  Its unversioned functions are there too, but fail. */
EXPORT nvmlReturn_t nvmlInit(void) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned *n) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t *h) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, struct mem_v1 *m) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned *c, void *b) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned *c, void *b) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned *c, void *b) { return WRONG; }
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned *c, void *b) { return WRONG; }

EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n) { return do_count(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *h) { return do_handle(i, h); }

struct mem_v2 { unsigned version; unsigned long long total, reserved, free, used; };

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, struct mem_v2 *m)
{
	ENTER(d);
	if (m->version != (unsigned)(sizeof(*m) | 2u << 24))
		return 25;	/* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
	if (!d->has_mem)
		return UNSUPPORTED;
	m->total = d->total;
	m->used = d->used;
	m->reserved = 0;
	m->free = d->total - d->used;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *c, void *b)
{
	ENTER(d);
	return procs(d, 0, c, b, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *c, void *b)
{
	ENTER(d);
	return procs(d, 1, c, b, 0);
}

struct pci { char legacy[16]; unsigned domain, bus, device, id, subsys; char bus_id[32]; };

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, struct pci *p)
{
	ENTER(d);
	if (!d->bus[0])
		return UNSUPPORTED;
	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "%.31s", d->bus);
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pending)
{
	ENTER(d);
	*cur = *pending = (unsigned)d->mig;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, unsigned *active)
{
	ENTER(d);
	if (d->nvlinks < 0)
		return UNSUPPORTED;
	if (link >= 18)
		return INVALID;
	*active = link < (unsigned)d->nvlinks;
	return OK;
}

struct field {
	unsigned id, scope;
	long long ts, latency;
	int type, ret;
	unsigned long long value;
};

static unsigned long long since_init_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned long long)(now.tv_sec - S.start.tv_sec) * 1000 +
	       (unsigned long long)((now.tv_nsec - S.start.tv_nsec) / 1000000);
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, unsigned n, struct field *f)
{
	ENTER(d);
	for (unsigned i = 0; i < n; i++) {
		int rx = f[i].id == 139;
		if ((f[i].id != 138 && !rx) || d->nvlinks <= 0 || f[i].scope != 0xffffffffu) {
			f[i].ret = UNSUPPORTED;
			continue;
		}
		f[i].ret = OK;
		f[i].type = 3;
		f[i].value = (1ULL << 40) + (rx ? d->nvl_rx : d->nvl_tx) * since_init_ms() / 1000;
	}
	return OK;
}

struct util_sample { unsigned pid; unsigned long long ts; unsigned sm, mem, enc, dec; };

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, struct util_sample *s,
						     unsigned *count, unsigned long long last_seen)
{
	struct timespec now;
	ENTER(d);
	if (d->mig)
		return UNSUPPORTED;
	clock_gettime(CLOCK_REALTIME, &now);
	unsigned long long ts = (unsigned long long)now.tv_sec * 1000000 + (unsigned long long)now.tv_nsec / 1000;
	if (!d->nutils || ts <= last_seen)
		return NOT_FOUND;
	/* Each process has an older sample first: the newest must win. */
	unsigned n = 2 * (unsigned)d->nutils;
	if (!s || *count < n) {
		*count = n;
		return SMALL;
	}
	for (int i = 0; i < d->nutils; i++) {
		const struct futil *u = &d->utils[i];
		s[2 * i] = (struct util_sample){ u->pid, ts - 500000, 100, 100, 100, 100 };
		s[2 * i + 1] = (struct util_sample){ u->pid, ts, u->sm, u->mem, u->enc, u->dec };
	}
	*count = n;
	return OK;
}
#endif
