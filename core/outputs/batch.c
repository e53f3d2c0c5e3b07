/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch.h"
#include "batch_alerts.h"
#include "batch_fmt.h"
#include "batch_view.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "json.h"
#include "session.h"
#include "snapshot.h"

/* Each view's part of a snapshot (batch_<view>.c), in the order they are
 * printed; --view keeps one view's text. */
static const struct xpu_batch_view *const views[] = {
	&xpu_batch_view_cpu,
	&xpu_batch_view_gpu,
	&xpu_batch_view_npu,
};
#define NVIEWS (sizeof(views) / sizeof(views[0]))
_Static_assert(NVIEWS == XPU_VIEW_MAX, "every view of view_list.h is printed");

void xpu_batch_text(FILE *f, const struct xpu_snapshot *s)
{
	char when[64];
	xpu_batch_wall_text(s->wall_ns, when, sizeof(when), 0);
	fprintf(f, "xputop %s - %s - %s - refresh %.2fs - %.0f events/s - dropped %" PRIu64 "%s\n",
		XPU_VERSION, s->host, when, (double)s->interval_ns / 1e9, s->events_per_s,
		s->dropped_total, s->replay ? " - replay" : "");
	for (size_t i = 0; i < NVIEWS; i++)
		if (s->only_view < 0 || s->only_view >= XPU_VIEW_MAX || s->only_view == (int)views[i]->view)
			views[i]->text(f, s);
	xpu_batch_alerts_text(f, s);
	fputc('\n', f);
	fflush(f);
}

/* A collector's clients: attached, dropped (for not reading, for a
 * malformed need) and turned away before attaching, by uid. */
static void json_clients(struct xpu_json *j, const struct xpu_share_counts *c)
{
	xpu_json_obj(j, "clients");
	xpu_json_uint(j, "attached", c->attached);
	xpu_json_uint(j, "dropped_not_reading", c->dropped);
	xpu_json_uint(j, "dropped_bad_need", c->refused);
	xpu_json_uint(j, "turned_away", c->turned_away);
	xpu_json_uint(j, "turned_away_full", c->full);
	xpu_json_uint(j, "turned_away_not_allowed", c->not_allowed);
	xpu_json_arr(j, "turned_away_by_uid");
	for (unsigned i = 0; i <= XPU_SHARE_UIDS; i++) {
		if (i >= c->nuids && (i < XPU_SHARE_UIDS || !c->uids[i].n))
			continue;
		xpu_json_obj(j, NULL);
		if (i < XPU_SHARE_UIDS && c->uids[i].uid != (uint32_t)-1)
			xpu_json_uint(j, "uid", c->uids[i].uid);
		else
			xpu_json_null(j, "uid");	/* unknown, or one of the others */
		xpu_json_uint(j, "count", c->uids[i].n);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

/* Where the data comes from and how it is collected, as against how this
 * xputop shows it (core/sources/share.h). */
static void json_collection(struct xpu_json *j, const struct xpu_snapshot *s)
{
	if (s->replay)
		return;
	xpu_json_obj(j, "collection");
	xpu_json_str(j, "by", s->attached ? "collector" : "own probes");
	if (s->attached)
		xpu_json_uint(j, "collector_pid", (uint64_t)s->collector_pid);
	xpu_json_uint(j, "sample_hz", s->collect_hz);
	xpu_json_uint(j, "shown_hz", s->sample_hz);
	if (s->collect & XPU_TICK_KNOWN) {
		xpu_json_str(j, "gpu_mode", s->collect & XPU_TICK_GPU_EXACT ? "exact" : "sampled");
		xpu_json_bool(j, "all_processes", (s->collect & XPU_TICK_ALL_PIDS) != 0);
	} else {
		xpu_json_str(j, "gpu_mode", "unknown");
	}
	xpu_json_bool(j, "gpu_exact_asked", s->gpu.exact_asked);
	/* The stream ticks at the shortest -d of all, this view at its own. */
	if (s->collect_interval_ns)
		xpu_json_num(j, "interval_s", (double)(s->collect_interval_ns / 1000000) / 1e3);
	else
		xpu_json_null(j, "interval_s");
	xpu_json_num(j, "shown_interval_s", (double)s->view_interval_ns / 1e9);
	xpu_json_uint(j, "ticks_merged", s->merged_ticks);
	if (!s->attached)
		json_clients(j, &s->clients);
	xpu_json_end(j, '}');
}

/* The CPU time xputop itself has used, all its threads, since it started. */
static void json_self_cpu(struct xpu_json *j)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		xpu_json_num(j, "self_cpu_s", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
						(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
}

/* xputop's own memory: resident pages, and the heap in use against the heap
 * held free by the allocator (what fragmentation would show as). */
static void json_memory(struct xpu_json *j, const struct xpu_snapshot *s)
{
	unsigned long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	struct mallinfo2 mi = mallinfo2();
	xpu_json_obj(j, "memory");
	xpu_json_uint(j, "rss_kb", (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
	xpu_json_uint(j, "heap_used_kb", (uint64_t)(mi.uordblks + mi.hblkhd) / 1024);
	xpu_json_uint(j, "heap_free_kb", (uint64_t)mi.fordblks / 1024);
	xpu_json_uint(j, "elf_cache_kb", s->sym.elf_bytes / 1024);
	xpu_json_uint(j, "symbolized_procs", s->sym.procs);
	xpu_json_end(j, '}');
}

/* The symbolizer's work off the ingest path (symbolize.h): what waited for
 * a symbol table or a name, and the service thread's load. */
static void json_symbolizer(struct xpu_json *j, const struct xpu_snapshot *s)
{
	if (!s->have_sym)
		return;
	xpu_json_obj(j, "symbolizer");
	xpu_json_uint(j, "lookups", s->sym.lookups);
	xpu_json_uint(j, "elf_loaded", s->sym.elf_loaded);
	xpu_json_uint(j, "elf_loading", s->sym.elf_loading);
	xpu_json_uint(j, "elf_evicted", s->sym.elf_evicted);
	xpu_json_uint(j, "names_inline", s->sym.names_inline);
	xpu_json_uint(j, "names_async", s->sym.names_async);
	xpu_json_uint(j, "pending_frames", s->sym.pending);
	xpu_json_uint(j, "overflow", s->sym.overflow);
	xpu_json_uint(j, "refused", s->sym.refused + s->svc.refused);
	xpu_json_uint(j, "service_queued", s->svc.queued);
	xpu_json_uint(j, "service_busy_ms", s->svc.busy_ns / 1000000);
	xpu_json_end(j, '}');
}

/* The session dictionary: what a long run's memory is made of. */
static void json_dict(struct xpu_json *j, const struct xpu_session *sess)
{
	xpu_json_obj(j, "dict");
	xpu_json_uint(j, "strings", xpu_dict_nstr(&sess->dict));
	xpu_json_uint(j, "frames", xpu_dict_nframes(&sess->dict));
	xpu_json_uint(j, "stacks", xpu_dict_live_stacks(&sess->dict));
	xpu_json_uint(j, "stacks_swept", sess->dict.stacks_swept);
	xpu_json_uint(j, "sweeps", sess->dict.sweeps);
	xpu_json_uint(j, "stack_entries", sess->cpu.stacks.n);
	xpu_json_uint(j, "gpu_stack_entries", sess->gpu.stacks.n + sess->gpu.launch_stacks.n);
	xpu_json_uint(j, "cpu_rows", sess->cpu.ntasks);
	xpu_json_uint(j, "gpu_rows", sess->gpu.nkernels);
	xpu_json_uint(j, "npu_rows", sess->npu.ncalls);
	xpu_json_end(j, '}');
}

void xpu_batch_json(FILE *f, const struct xpu_snapshot *s, const struct xpu_session *sess,
		    const struct xpu_viewstate *vs)
{
	struct xpu_json j;
	char when[64];
	xpu_batch_wall_text(s->wall_ns, when, sizeof(when), 1);
	xpu_json_init(&j, f);
	xpu_json_obj(&j, NULL);
	xpu_json_str(&j, "time", when);
	xpu_json_uint(&j, "mono_ns", s->mono_ns);
	xpu_json_num(&j, "interval_s", (double)s->interval_ns / 1e9);
	xpu_json_str(&j, "host", s->host);
	xpu_json_str(&j, "source", s->source_name);
	json_collection(&j, s);
	xpu_json_uint(&j, "events", s->events_total);
	xpu_json_num(&j, "events_per_s", s->events_per_s);
	xpu_json_uint(&j, "dropped", s->dropped_total);
	xpu_json_uint(&j, "dropped_tick", s->dropped_tick);
	json_self_cpu(&j);
	xpu_json_str(&j, "window", vs->window == XPU_WIN_ALL ? "all" : "recent");
	xpu_json_num(&j, "window_s", (double)s->window_ns / 1e9);
	json_dict(&j, sess);
	json_memory(&j, s);
	json_symbolizer(&j, s);
	for (size_t i = 0; i < NVIEWS; i++)
		views[i]->json(&j, s, sess, vs);
	xpu_batch_alerts_json(&j, s);
	xpu_json_end(&j, '}');
	fputc('\n', f);
	fflush(f);
}
