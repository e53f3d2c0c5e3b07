/* SPDX-License-Identifier: GPL-2.0-only */
#include "chrome_trace.h"

#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "htab.h"
#include "json.h"
#include "model_gpu.h"

/* GPU tracks get thread ids of their own, far above real thread ids. */
#define GPU_TID_BASE 1000000000u

static uint64_t gpu_tid(const struct xpu_gpu_trace_rec *r)
{
	return GPU_TID_BASE + (uint64_t)r->device * 100000u + r->stream;
}

/* Launches go on the launching thread, kernels on their stream's track. */
static uint64_t track(const struct xpu_gpu_trace_rec *r)
{
	return r->is_launch ? r->tid : gpu_tid(r);
}

/* A launch is an instant (CUPTI gives its time, not its length), drawn 1 us
 * wide so that a flow can start in it. */
#define LAUNCH_NS 1000u

void xpu_chrome_trace_meta(struct xpu_json *j, const char *what, uint32_t pid, uint64_t tid,
			   const char *name)
{
	xpu_json_obj(j, NULL);
	xpu_json_str(j, "ph", "M");
	xpu_json_str(j, "name", what);
	xpu_json_uint(j, "pid", pid);
	if (tid)
		xpu_json_uint(j, "tid", tid);
	xpu_json_obj(j, "args");
	xpu_json_str(j, "name", name);
	xpu_json_end(j, '}');
	xpu_json_end(j, '}');
}

/* No "args": speedscope makes them part of the frame's name, and a
 * correlation id there would make every call a frame of its own.  The flows
 * carry the correlation, the track names the device and stream. */
static void event(struct xpu_json *j, const struct xpu_gpu_trace_rec *r, uint64_t dur,
		  const struct xpu_dict *d, uint64_t origin)
{
	xpu_json_obj(j, NULL);
	xpu_json_str(j, "name", xpu_dict_str_get(d, r->name));
	xpu_json_str(j, "cat", r->is_launch ? "launch" : "kernel");
	xpu_json_str(j, "ph", "X");
	xpu_json_uint(j, "pid", r->pid);
	xpu_json_uint(j, "tid", track(r));
	xpu_json_ns_as_us(j, "ts", r->start - origin);
	xpu_json_ns_as_us(j, "dur", dur);
	xpu_json_end(j, '}');
}

static void flow(struct xpu_json *j, const char *ph, const struct xpu_gpu_trace_rec *r, uint64_t tid,
		 uint64_t origin)
{
	xpu_json_obj(j, NULL);
	xpu_json_str(j, "name", "launch");
	xpu_json_str(j, "cat", "flow");
	xpu_json_str(j, "ph", ph);
	if (ph[0] == 'f')
		xpu_json_str(j, "bp", "e");
	xpu_json_uint(j, "id", ((uint64_t)r->pid << 32) | r->corr);
	xpu_json_uint(j, "pid", r->pid);
	xpu_json_uint(j, "tid", tid);
	xpu_json_ns_as_us(j, "ts", r->start - origin);
	xpu_json_end(j, '}');
}

struct corr_key { uint32_t pid, corr; };

static int by_track_and_time(const void *a, const void *b, void *ctx)
{
	const struct xpu_gpu_trace_rec *v = ctx, *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (track(x) != track(y))
		return track(x) < track(y) ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Each event's duration.  Events on one track must nest, or speedscope and
 * Perfetto misplace them; a thread's launches and a stream's kernels follow
 * each other, so each ends 1 ns before the next on its track begins (a
 * launch's 1 us often reaches the next launch; kernels' timestamps can touch,
 * and a viewer adding ts and dur in floating point then sees an overlap). */
static uint64_t *durations(const struct xpu_gpu_trace_rec *v, uint32_t n)
{
	uint64_t *dur = malloc(((size_t)n + 1) * sizeof(*dur));
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	if (!dur || !order) {
		free(dur);
		free(order);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		dur[i] = v[i].is_launch ? LAUNCH_NS : v[i].end > v[i].start ? v[i].end - v[i].start : 0;
		order[i] = i;
	}
	qsort_r(order, n, sizeof(*order), by_track_and_time, (void *)v);
	for (uint32_t k = 0; k + 1 < n; k++) {
		const struct xpu_gpu_trace_rec *a = &v[order[k]], *b = &v[order[k + 1]];
		uint64_t gap = b->start - a->start;
		if (a->pid == b->pid && track(a) == track(b) && dur[order[k]] >= gap)
			dur[order[k]] = gap ? gap - 1 : 0;
	}
	free(order);
	return dur;
}

/* Track names are written once per (process, device, stream). */
static int track_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_trace_rec *v = ctx, *r = key;
	return v[i].pid == r->pid && v[i].device == r->device && v[i].stream == r->stream;
}

static int launch_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_gpu_trace_rec *v = ctx;
	const struct corr_key *k = key;
	return v[i].pid == k->pid && v[i].corr == k->corr;
}

long xpu_chrome_trace_write(FILE *f, const struct xpu_gpu_model *m, const struct xpu_dict *d)
{
	uint64_t n = m->ntrace < XPU_GPU_TRACE_MAX ? m->ntrace : XPU_GPU_TRACE_MAX;
	uint64_t first = m->ntrace - n, origin = UINT64_MAX;
	struct xpu_gpu_trace_rec *v = malloc((n + 1) * sizeof(*v));
	struct xpu_htab launches, tracks;
	struct xpu_json j;
	uint64_t *dur;
	long count = 0;
	if (!v)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		v[i] = m->trace[(first + i) % XPU_GPU_TRACE_MAX];
		if (v[i].start < origin)
			origin = v[i].start;
	}
	if (!(dur = durations(v, (uint32_t)n))) {
		free(v);
		return -1;
	}
	xpu_htab_init(&launches);
	xpu_htab_init(&tracks);
	xpu_json_init(&j, f);
	xpu_json_obj(&j, NULL);
	xpu_json_str(&j, "displayTimeUnit", "ms");
	xpu_json_arr(&j, "traceEvents");
	for (uint32_t p = 0; p < m->nprocs; p++) {
		char name[64];
		snprintf(name, sizeof(name), "%s (%u)", xpu_dict_str_get(d, m->procs[p].comm), m->procs[p].pid);
		xpu_chrome_trace_meta(&j, "process_name", m->procs[p].pid, 0, name);
	}
	for (uint64_t i = 0; i < n; i++) {
		struct xpu_gpu_trace_rec *r = &v[i];
		struct corr_key k = { r->pid, r->corr };
		uint64_t h = xpu_hash_u64(((uint64_t)r->pid << 32) | r->corr);
		event(&j, r, dur[i], d, origin);
		count++;
		if (r->is_launch) {
			if (r->corr && xpu_htab_put(&launches, h, (uint32_t)i) == 0)
				flow(&j, "s", r, r->tid, origin);
			continue;
		}
		uint64_t th = xpu_hash_u64(gpu_tid(r) ^ ((uint64_t)r->pid << 40));
		if (xpu_htab_find(&tracks, th, track_eq, v, r) == UINT32_MAX &&
		    xpu_htab_put(&tracks, th, (uint32_t)i) == 0) {
			char track[64];
			snprintf(track, sizeof(track), "GPU %u stream %u", r->device, r->stream);
			xpu_chrome_trace_meta(&j, "thread_name", r->pid, gpu_tid(r), track);
		}
		/* One arrow per launch: to its first kernel (a graph has several). */
		uint32_t at = xpu_htab_find(&launches, h, launch_eq, v, &k);
		if (at != UINT32_MAX) {
			flow(&j, "f", r, gpu_tid(r), origin);
			xpu_htab_del(&launches, h, at);
		}
	}
	xpu_json_end(&j, ']');
	xpu_json_end(&j, '}');
	fputc('\n', f);
	xpu_htab_free(&launches);
	xpu_htab_free(&tracks);
	free(dur);
	free(v);
	return ferror(f) ? -1 : count;
}
