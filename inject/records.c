/* SPDX-License-Identifier: GPL-2.0-only */
/* The records the library produces from what CUPTI reports, independent of
 * CUPTI itself: launch records with their call site, kernel records with
 * their names sent once, launch API names sent once. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#define MAX_NAMES 65536
#define NAME_SLOTS (2 * MAX_NAMES)

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
/* kernel name -> id, open addressing on the string's hash; `epoch`: the
 * channel's names epoch when the name was last sent (0 = never) */
static struct { uint64_t hash; char *name; uint32_t id, epoch; } *names;
static uint32_t nnames;
/* Which callback ids' names this connection was told (epoch + 1), per domain. */
static uint32_t api_named[2][XPU_WIRE_MAX_CBID];
static uint64_t launches, kernels, graph_kernels;
static int want_sites = 1;
static __thread uint32_t my_tid;

uint64_t xpu_inj_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t xpu_inj_launches(void)
{
	return __atomic_load_n(&launches, __ATOMIC_RELAXED);
}

uint64_t xpu_inj_kernels(void)
{
	return __atomic_load_n(&kernels, __ATOMIC_RELAXED);
}

uint64_t xpu_inj_graph_kernels(void)
{
	return __atomic_load_n(&graph_kernels, __ATOMIC_RELAXED);
}

void xpu_inj_new_monitor(uint32_t flags)
{
	want_sites = !(flags & XPU_WIRE_START_NO_SITES);
	pthread_mutex_lock(&names_lock);
	for (uint32_t i = 0; names && i < NAME_SLOTS; i++)
		free(names[i].name);
	if (names)
		memset(names, 0, NAME_SLOTS * sizeof(*names));
	nnames = 0;
	memset(api_named, 0, sizeof(api_named));
	__atomic_store_n(&launches, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&kernels, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&graph_kernels, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&names_lock);
	xpu_sites_new_generation();
}

/* Sent once per callback id, and again after names were dropped. */
static void name_api(struct xpu_chan *chan, uint32_t domain, uint32_t cbid, const char *name)
{
	int d = domain == XPU_INJ_DRIVER;
	uint32_t now = xpu_chan_names_epoch(chan) + 1;
	if (cbid >= XPU_WIRE_MAX_CBID || !name || __atomic_load_n(&api_named[d][cbid], __ATOMIC_RELAXED) == now ||
	    __atomic_exchange_n(&api_named[d][cbid], now, __ATOMIC_RELAXED) == now)
		return;
	struct xpu_wire_api w = { .domain = domain, .cbid = cbid };
	if (xpu_chan_put(chan, XPU_WIRE_API, &w, sizeof(w), name, (uint16_t)strnlen(name, XPU_WIRE_MAX_NAME)))
		__atomic_store_n(&api_named[d][cbid], 0, __ATOMIC_RELAXED);
}

void xpu_inj_launch(struct xpu_chan *chan, uint32_t corr, uint32_t cbid, uint32_t domain,
		    const char *api, int whole)
{
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	name_api(chan, domain, cbid, api);
	struct xpu_wire_launch l = {
		.time = xpu_inj_now(),
		.corr = corr,
		.tid = my_tid,
		.site = want_sites ? xpu_sites_current(corr, cbid) : 0,
		.cbid = cbid,
		.domain = domain,
		.flags = whole ? XPU_WIRE_LAUNCH_WHOLE : 0,
	};
	__atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
	xpu_chan_put(chan, XPU_WIRE_LAUNCH, &l, sizeof(l), NULL, 0);
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* Sends a name under its id, remembering in which names epoch it went. */
static void send_name(struct xpu_chan *chan, uint32_t slot, const char *name, size_t n, uint32_t epoch)
{
	struct xpu_wire_name w = { .id = names[slot].id };
	if (xpu_chan_put(chan, XPU_WIRE_NAME, &w, sizeof(w), name, (uint16_t)n) == 0)
		names[slot].epoch = epoch;
}

/* The id of a kernel name, sending the name the first time (and again when
 * names were dropped since: a kernel record must never refer to a name
 * xputop did not get); 0 when there are too many names. */
static uint32_t name_id(struct xpu_chan *chan, const char *name)
{
	size_t n = name ? strnlen(name, XPU_WIRE_MAX_NAME) : 0;
	if (!n)
		return 0;
	uint64_t h = str_hash(name, n);
	uint32_t id = 0, epoch = xpu_chan_names_epoch(chan) + 1;
	pthread_mutex_lock(&names_lock);
	if (!names)
		names = calloc(NAME_SLOTS, sizeof(*names));
	for (uint32_t i = (uint32_t)(h % NAME_SLOTS); names; i = (i + 1) % NAME_SLOTS) {
		if (!names[i].name) {
			if (nnames == MAX_NAMES || !(names[i].name = strndup(name, n)))
				break;
			names[i].hash = h;
			id = names[i].id = ++nnames;
			send_name(chan, i, name, n, epoch);
			break;
		}
		if (names[i].hash == h && strncmp(names[i].name, name, n) == 0 && names[i].name[n] == '\0') {
			id = names[i].id;
			if (names[i].epoch != epoch)
				send_name(chan, i, name, n, epoch);
			break;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return id;
}

void xpu_inj_kernel(struct xpu_chan *chan, const struct xpu_wire_kernel *k, const char *name)
{
	struct xpu_wire_kernel w = *k;
	w.name = name_id(chan, name);
	__atomic_add_fetch(&kernels, 1, __ATOMIC_RELAXED);
	if (k->graph)
		__atomic_add_fetch(&graph_kernels, 1, __ATOMIC_RELAXED);
	xpu_chan_put(chan, XPU_WIRE_KERNEL, &w, sizeof(w), NULL, 0);
}
