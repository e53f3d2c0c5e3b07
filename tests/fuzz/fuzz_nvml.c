/* SPDX-License-Identifier: GPL-2.0-only */
/* What NVML and /proc hand the device view: one input is a poll's devices
 * and processes as the NVML layer fills them (names and bus ids possibly
 * without their NUL, values out of any range), then the text of a
 * /proc/PID/status.  The poll goes through the ingest path's conversion
 * (xpu_nvml_events) into the device model, the text through the pid
 * namespace parser.  Checks: every event passes xpu_event_check; strings are
 * cut to their buffers; one DEV and one LINK per device of a valid index and
 * one PROC per process of such a device; the model keeps its bounds; the
 * parser's comm is terminated and its pid found only with an answer. */
#include "fuzz.h"

#include <string.h>

#include "dict.h"
#include "event.h"
#include "model_gpudev.h"
#include "pidns.h"
#include "source_nvml.h"

#define MAX_DEV 4
#define MAX_PROC 16

static struct xpu_nvml_sample smp;

struct seen {
	struct xpu_dict *d;
	struct xpu_gpudev_model *m;
	uint32_t devs, links, procs;
};

static void sink(void *ctx, const struct xpu_event *ev)
{
	struct seen *s = ctx;
	const char *why;
	FUZZ_CHECK(xpu_event_check(ev, s->d, &why) == 0);
	if (ev->type == XPU_EV_GPU_DEV) {
		FUZZ_CHECK(xpu_dict_str_len(s->d, ev->gdev.name) < XPU_NVML_NAME);
		FUZZ_CHECK(xpu_dict_str_len(s->d, ev->gdev.bus) < XPU_NVML_BUS);
		s->devs++;
	} else if (ev->type == XPU_EV_GPU_DEV_LINK) {
		s->links++;
	} else {
		FUZZ_CHECK(ev->type == XPU_EV_GPU_DEV_PROC);
		FUZZ_CHECK(xpu_dict_str_len(s->d, ev->gdproc.comm) < XPU_PIDNS_COMM);
		s->procs++;
	}
	xpu_gpudev_model_event(s->m, ev);
}

/* Copies up to n bytes of input into dst (the rest stays zero); returns what it took. */
static size_t take(void *dst, size_t n, const uint8_t **p, size_t *left)
{
	size_t k = n < *left ? n : *left;
	memcpy(dst, *p, k);
	*p += k;
	*left -= k;
	return k;
}

static void check_pidns(const uint8_t *p, size_t n)
{
	struct xpu_pidns_info i;
	char *text = malloc(n ? n : 1);
	FUZZ_CHECK(text);
	memcpy(text, p, n);
	int rc = xpu_pidns_parse(text, n, &i);
	FUZZ_CHECK(memchr(i.comm, '\0', sizeof(i.comm)) != NULL);
	FUZZ_CHECK(rc == 0 || i.nspid == 0);
	FUZZ_CHECK(i.depth < 32);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct xpu_gpudev_model m;
	static struct xpu_gpudev_snap snap;
	struct xpu_dict d;
	struct seen s = { .d = &d, .m = &m };
	uint8_t counts[2] = { 0, 0 };
	uint32_t want_devs = 0, want_procs = 0;

	memset(&smp, 0, sizeof(smp));
	take(counts, 2, &data, &size);
	smp.ndev = counts[0] % (MAX_DEV + 1);
	smp.nproc = counts[1] % (MAX_PROC + 1);
	for (uint32_t i = 0; i < smp.ndev; i++) {
		take(&smp.dev[i], sizeof(smp.dev[i]), &data, &size);
		smp.dev[i].err_fn = NULL;
		want_devs += smp.dev[i].index < XPU_GPU_DEV_MAX;
	}
	for (uint32_t i = 0; i < smp.nproc; i++) {
		take(&smp.proc[i], sizeof(smp.proc[i]), &data, &size);
		want_procs += smp.proc[i].dev < smp.ndev && smp.dev[smp.proc[i].dev].index < XPU_GPU_DEV_MAX;
	}
	xpu_dict_init(&d);
	xpu_gpudev_model_init(&m);
	uint64_t refused = 0;
	xpu_nvml_events(&smp, &d, sink, &s, &refused);
	FUZZ_CHECK(s.devs == want_devs && s.links == want_devs && s.procs == want_procs);
	xpu_gpudev_model_tick(&m, smp.time, 1000000000);
	xpu_gpudev_model_snapshot(&m, &snap);
	FUZZ_CHECK(snap.ndev <= want_devs && snap.nproc <= want_procs);
	for (uint32_t i = 0; i < snap.ndev; i++)
		FUZZ_CHECK(snap.dev[i].util_gpu <= 100 && (!(snap.dev[i].valid & XPU_GPU_DEV_MEM) ||
							    snap.dev[i].mem_pct <= 100));
	xpu_dict_free(&d);
	check_pidns(data, size);
	return 0;
}
