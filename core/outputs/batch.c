#include "batch.h"
#include "batch_gpu.h"
#include "batch_gpudev.h"
#include "batch_npu.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "folded.h"
#include "json.h"
#include "session.h"
#include "snapshot.h"


void xpu_batch_wall_text(uint64_t ns, char *buf, size_t size, int iso)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	localtime_r(&t, &tm);
	if (!iso) {
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
		return;
	}
	char date[32], zone[8];
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(buf, size, "%s.%03u%.3s:%s", date, (unsigned)(ns / 1000000 % 1000), zone, zone + 3);
}

void xpu_batch_print_table(FILE *f, const struct xpu_table *t)
{
	char cell[256];
	for (uint32_t c = 0; c < t->ncols; c++) {
		const struct xpu_col *col = &t->cols[c];
		if (!xpu_col_shown(col))
			continue;
		fprintf(f, (col->flags & XPU_COL_LEFT) ? " %-*s" : " %*s", col->width, col->title);
	}
	fputc('\n', f);
	for (uint32_t r = 0; r < t->nrows; r++) {
		const struct xpu_cell *row = xpu_table_row(t, r);
		for (uint32_t c = 0; c < t->ncols; c++) {
			const struct xpu_col *col = &t->cols[c];
			if (!xpu_col_shown(col))
				continue;
			xpu_cell_format(col, &row[c], cell, sizeof(cell));
			fprintf(f, (col->flags & XPU_COL_LEFT) ? " %-*s" : " %*s", col->width, cell);
		}
		fputc('\n', f);
	}
}

/* perf top's list: where the CPUs were, whichever process. */
static void hot_text(FILE *f, const struct xpu_snapshot *s)
{
	char name[512];
	if (!s->ncpu_hot || !s->cpu_hot_all)
		return;
	fprintf(f, "Hottest functions, all processes (%" PRIu64 " samples):\n", s->cpu_hot_all);
	for (int i = 0; i < s->ncpu_hot; i++) {
		xpu_frame_text(s->dict, s->cpu_hot[i].frame, name, sizeof(name));
		fprintf(f, "  %5.1f%%  %s\n", 100.0 * (double)s->cpu_hot[i].samples / (double)s->cpu_hot_all, name);
	}
}

void xpu_batch_text(FILE *f, const struct xpu_snapshot *s)
{
	char when[64];
	xpu_batch_wall_text(s->wall_ns, when, sizeof(when), 0);
	fprintf(f, "xputop %s - %s - %s - refresh %.2fs - %.0f events/s - dropped %" PRIu64 "%s\n",
		XPU_VERSION, s->host, when, (double)s->interval_ns / 1e9, s->events_per_s,
		s->dropped_total, s->replay ? " - replay" : "");
	int all = s->only_view < 0 || s->only_view >= XPU_VIEW_MAX;
	if (all || s->only_view == XPU_VIEW_CPU) {
		fprintf(f, "CPU: %u Hz on %u CPUs, %" PRIu64 " samples in the last %.2fs\n", s->sample_hz,
			s->ncpus, s->cpu_samples_tick, (double)s->interval_ns / 1e9);
		char sys[160];
		xpu_cpu_sys_text(&s->cpu_sys, sys, sizeof(sys));
		if (sys[0])
			fprintf(f, "System: %s\n", sys);
		xpu_batch_print_table(f, &s->cpu);
		hot_text(f, s);
	}
	if (all || s->only_view == XPU_VIEW_GPU) {
		xpu_batch_gpu_text(f, s);
		xpu_batch_gpudev_text(f, s);
	}
	if (all || s->only_view == XPU_VIEW_NPU)
		xpu_batch_npu_text(f, s);
	xpu_batch_alerts_text(f, s);
	fputc('\n', f);
	fflush(f);
}

struct top_ctx {
	const struct xpu_table *t;
	uint64_t *sorted;	/* row keys, sorted */
	uint32_t *row_of;	/* sorted position -> row */
	struct xpu_batch_top *tops;	/* per row */
	xpu_batch_key_fn key_of;
	void *ctx;
};

static int top_one(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct top_ctx *c = arg;
	uint64_t key = c->key_of(e, c->ctx);
	uint32_t lo = 0, hi = c->t->nrows;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (c->sorted[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!key || lo == c->t->nrows || c->sorted[lo] != key)
		return 0;
	struct xpu_batch_top *t = &c->tops[c->row_of[lo]];
	for (int i = 0; i < XPU_BATCH_TOP; i++) {
		if (weight > t->weight[i] || (weight == t->weight[i] && t->stack[i] == 0)) {
			size_t rest = XPU_BATCH_TOP - 1 - i;
			memmove(&t->weight[i + 1], &t->weight[i], rest * sizeof(uint64_t));
			memmove(&t->stack[i + 1], &t->stack[i], rest * sizeof(uint32_t));
			memmove(&t->comm[i + 1], &t->comm[i], rest * sizeof(uint32_t));
			t->weight[i] = weight;
			t->stack[i] = e->stack;
			t->comm[i] = e->comm;
			break;
		}
	}
	return 0;
}

static int by_key(const void *a, const void *b, void *arg)
{
	const uint64_t *keys = arg;
	uint64_t x = keys[*(const uint32_t *)a], y = keys[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

struct xpu_batch_top *xpu_batch_top_stacks(const struct xpu_table *t, const struct xpu_stacks *st,
					   int window, xpu_batch_key_fn key_of, void *ctx)
{
	struct top_ctx c = { .t = t, .key_of = key_of, .ctx = ctx };
	uint32_t n = t->nrows;
	c.tops = calloc(n + 1, sizeof(*c.tops));
	c.sorted = malloc((n + 1) * sizeof(uint64_t));
	c.row_of = malloc((n + 1) * sizeof(uint32_t));
	if (c.tops && c.sorted && c.row_of) {
		for (uint32_t i = 0; i < n; i++)
			c.row_of[i] = i;
		qsort_r(c.row_of, n, sizeof(uint32_t), by_key, t->keys);
		for (uint32_t i = 0; i < n; i++)
			c.sorted[i] = t->keys[c.row_of[i]];
		xpu_stacks_each(st, (enum xpu_window)window, 0, 0, top_one, &c);
	}
	free(c.sorted);
	free(c.row_of);
	return c.tops;
}

void xpu_batch_json_frames(struct xpu_json *j, const struct xpu_dict *d, uint32_t comm,
			   uint32_t stack)
{
	char frame[1100];
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(d, stack, &n);
	xpu_json_arr(j, "frames");
	xpu_json_str(j, NULL, xpu_dict_str_get(d, comm));
	for (uint32_t i = 0; i < n; i++) {
		xpu_folded_frame(d, frames[i], frame, sizeof(frame));
		xpu_json_str(j, NULL, frame);
	}
	xpu_json_end(j, ']');
}

void xpu_batch_json_cells(struct xpu_json *j, const struct xpu_table *t, uint32_t r)
{
	const struct xpu_cell *row = xpu_table_row(t, r);
	for (uint32_t c = 0; c < t->ncols; c++) {
		const struct xpu_col *col = &t->cols[c];
		if (col->flags & XPU_COL_HIDDEN)
			continue;
		if (row[c].na)
			xpu_json_null(j, col->key);
		else if (col->kind == XPU_CELL_STR)
			xpu_json_str(j, col->key, row[c].s);
		else if (col->kind == XPU_CELL_PCT || col->kind == XPU_CELL_RATE)
			xpu_json_num(j, col->key, row[c].d);
		else
			xpu_json_int(j, col->key, row[c].i);
	}
}

static uint64_t pid_of(const struct xpu_stack_entry *e, void *ctx)
{
	return e->pid;
}

static uint64_t tid_of(const struct xpu_stack_entry *e, void *ctx)
{
	return e->tid;
}

static void json_cpu(struct xpu_json *j, const struct xpu_snapshot *s,
		     const struct xpu_session *sess, const struct xpu_viewstate *vs)
{
	const struct xpu_table *t = &s->cpu;
	struct xpu_batch_top *tops = xpu_batch_top_stacks(t, &sess->cpu.stacks, vs->window,
							  vs->threads ? tid_of : pid_of, NULL);
	xpu_json_arr(j, "cpu");
	for (uint32_t r = 0; r < t->nrows; r++) {
		xpu_json_obj(j, NULL);
		xpu_batch_json_cells(j, t, r);
		uint32_t pid = (uint32_t)xpu_table_row(t, r)[XPU_CPU_COL_PID].i;
		const struct xpu_cpu_task *proc = xpu_cpu_model_task(&sess->cpu, pid, 0);
		xpu_json_arr(j, "stacks");
		for (int k = 0; tops && k < XPU_BATCH_TOP && tops[r].stack[k]; k++) {
			xpu_json_obj(j, NULL);
			xpu_batch_json_frames(j, s->dict, proc ? proc->comm : 0, tops[r].stack[k]);
			xpu_json_uint(j, "samples", tops[r].weight[k]);
			xpu_json_end(j, '}');
		}
		xpu_json_end(j, ']');
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
	free(tops);
	xpu_json_arr(j, "cpu_functions");
	for (int i = 0; i < s->ncpu_hot; i++) {
		char name[512];
		xpu_frame_text(s->dict, s->cpu_hot[i].frame, name, sizeof(name));
		xpu_json_obj(j, NULL);
		xpu_json_str(j, "function", name);
		xpu_json_uint(j, "samples", s->cpu_hot[i].samples);
		xpu_json_num(j, "pct", s->cpu_hot_all ? 100.0 * (double)s->cpu_hot[i].samples / (double)s->cpu_hot_all : 0);
		xpu_json_end(j, '}');
	}
	xpu_json_end(j, ']');
}

/* The machine as /proc says (the CPU view's summary line); null where unknown. */
static void json_system(struct xpu_json *j, const struct xpu_cpu_sys *y)
{
	xpu_json_obj(j, "system");
	if (y->flags & XPU_SYS_LOAD) {
		xpu_json_arr(j, "load");
		for (int i = 0; i < 3; i++)
			xpu_json_num(j, NULL, y->load[i]);
		xpu_json_end(j, ']');
	} else {
		xpu_json_null(j, "load");
	}
	if (y->flags & XPU_SYS_BUSY)
		xpu_json_num(j, "cpu_busy_pct", y->busy_pct);
	else
		xpu_json_null(j, "cpu_busy_pct");
	if (y->flags & XPU_SYS_MEM) {
		xpu_json_uint(j, "mem_used_bytes", y->mem_used);
		xpu_json_uint(j, "mem_total_bytes", y->mem_total);
	} else {
		xpu_json_null(j, "mem_used_bytes");
		xpu_json_null(j, "mem_total_bytes");
	}
	xpu_json_end(j, '}');
}

const char *xpu_batch_state_name(int st)
{
	static const char *names[] = { "off", "active", "waiting", "failed" };
	return st >= 0 && st <= XPU_SRC_FAILED ? names[st] : "off";
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
	xpu_json_uint(&j, "events", s->events_total);
	xpu_json_num(&j, "events_per_s", s->events_per_s);
	xpu_json_uint(&j, "dropped", s->dropped_total);
	xpu_json_uint(&j, "dropped_tick", s->dropped_tick);
	json_self_cpu(&j);
	xpu_json_str(&j, "window", vs->window == XPU_WIN_ALL ? "all" : "recent");
	xpu_json_num(&j, "window_s", (double)s->window_ns / 1e9);
	json_cpu(&j, s, sess, vs);
	json_system(&j, &s->cpu_sys);
	xpu_json_obj(&j, "cpu_info");
	xpu_json_uint(&j, "hz", s->sample_hz);
	xpu_json_uint(&j, "ncpus", s->ncpus);
	xpu_json_uint(&j, "samples_tick", s->cpu_samples_tick);
	xpu_json_str(&j, "view", vs->threads ? "threads" : "processes");
	xpu_json_str(&j, "state", xpu_batch_state_name(s->cpu_status.state));
	xpu_json_str(&j, "status", s->cpu_status.text);
	/* What bounded memory has aged out so far (model_cpu.h, stacks.h). */
	xpu_json_uint(&j, "rows_aged_out", sess->cpu.tasks_aged_out);
	xpu_json_uint(&j, "stacks_aged_out", sess->cpu.stacks.aged_out);
	xpu_json_end(&j, '}');
	/* The session dictionary: what a long run's memory is made of. */
	xpu_json_obj(&j, "dict");
	xpu_json_uint(&j, "strings", xpu_dict_nstr(&sess->dict));
	xpu_json_uint(&j, "frames", xpu_dict_nframes(&sess->dict));
	xpu_json_uint(&j, "stacks", xpu_dict_live_stacks(&sess->dict));
	xpu_json_uint(&j, "stacks_swept", sess->dict.stacks_swept);
	xpu_json_uint(&j, "sweeps", sess->dict.sweeps);
	xpu_json_uint(&j, "stack_entries", sess->cpu.stacks.n);
	xpu_json_uint(&j, "gpu_stack_entries", sess->gpu.stacks.n + sess->gpu.launch_stacks.n);
	xpu_json_uint(&j, "cpu_rows", sess->cpu.ntasks);
	xpu_json_uint(&j, "gpu_rows", sess->gpu.nkernels);
	xpu_json_uint(&j, "npu_rows", sess->npu.ncalls);
	xpu_json_end(&j, '}');
	json_memory(&j, s);
	json_symbolizer(&j, s);
	xpu_batch_gpu_json(&j, s, sess, vs);
	xpu_batch_gpudev_json(&j, s);
	xpu_batch_npu_json(&j, s);
	xpu_batch_alerts_json(&j, s);
	xpu_json_end(&j, '}');
	fputc('\n', f);
	fflush(f);
}
