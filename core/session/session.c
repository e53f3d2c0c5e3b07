/* SPDX-License-Identifier: GPL-2.0-only */
#include "session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "record.h"
#include "source.h"
#include "sys.h"

void xpu_session_init(struct xpu_session *s)
{
	memset(s, 0, sizeof(*s));
	xpu_dict_init(&s->dict);
	gethostname(s->host, sizeof(s->host) - 1);
	snprintf(s->source_name, sizeof(s->source_name), "live");
	s->sweep_min = XPU_SWEEP_MIN;
}

int xpu_session_start(struct xpu_session *s, const struct xpu_session_cfg *cfg)
{
	s->cfg = *cfg;
	xpu_gpudev_model_init(&s->gpudev);
	if (xpu_cpu_model_init(&s->cpu, cfg->sample_hz, xpu_window_ticks(cfg)) < 0 ||
	    xpu_gpu_model_init(&s->gpu, &s->dict, xpu_window_ticks(cfg)) < 0 ||
	    xpu_npu_model_init(&s->npu, &cfg->npu, xpu_window_ticks(cfg), &s->alerts) < 0) {
		xpu_err("out of memory");
		return -1;
	}
	/* Weight of stacks aged out to bound memory lands on this label. */
	uint32_t f = xpu_dict_frame(&s->dict, XPU_FRAME_INFO, xpu_dict_cstr(&s->dict, "[aged out]"), 0);
	uint32_t aged = f ? xpu_dict_stack(&s->dict, &f, 1) : 0;
	s->cpu.stacks.aged_stack = aged;
	s->gpu.stacks.aged_stack = aged;
	s->gpu.launch_stacks.aged_stack = aged;
	return 0;
}

void xpu_session_free(struct xpu_session *s)
{
	for (int i = 0; i < s->nsources; i++)
		xpu_source_destroy(s->sources[i]);
	if (s->rec && xpu_rec_close(s->rec) < 0)
		xpu_err("the recording could not be completed (disk full?)");
	xpu_cpu_model_free(&s->cpu);
	xpu_gpu_model_free(&s->gpu);
	xpu_npu_model_free(&s->npu);
	xpu_dict_free(&s->dict);
	memset(s, 0, sizeof(*s));
}

int xpu_session_add_source(struct xpu_session *s, struct xpu_source *src)
{
	if (s->nsources == XPU_MAX_SOURCES)
		return -1;
	s->sources[s->nsources++] = src;
	return 0;
}

int xpu_session_add_holder(struct xpu_session *s, xpu_mark_fn fn, void *arg)
{
	if (s->nholders == XPU_MAX_HOLDERS)
		return -1;
	s->holders[s->nholders].fn = fn;
	s->holders[s->nholders].arg = arg;
	s->nholders++;
	return 0;
}

static void forget_stack(void *arg, uint32_t id)
{
	struct xpu_session *s = arg;
	if (s->rec && !s->rec_failed)
		xpu_rec_forget_stack(s->rec, id);
	if (s->tap.forget)
		s->tap.forget(s->tap.arg, id);
}

uint32_t xpu_session_sweep(struct xpu_session *s)
{
	struct xpu_dict *d = &s->dict;
	if (xpu_dict_live_stacks(d) < (s->sweep_at > s->sweep_min ? s->sweep_at : s->sweep_min))
		return 0;
	if (xpu_dict_sweep_begin(d) < 0)
		return 0;
	xpu_stacks_mark(&s->cpu.stacks, d);
	xpu_gpu_model_mark(&s->gpu);
	for (int i = 0; i < s->nholders; i++)
		s->holders[i].fn(s->holders[i].arg, d);
	xpu_gpu_model_prune(&s->gpu);
	uint32_t n = xpu_dict_sweep_end(d, forget_stack, s);
	s->sweep_at = 2 * xpu_dict_live_stacks(d);
	return n;
}

void xpu_session_status(struct xpu_session *s, enum xpu_src_id src, enum xpu_src_state state,
			const char *fmt, ...)
{
	va_list ap;
	if (src >= XPU_SRC_MAX)
		return;
	s->status[src].state = state;
	va_start(ap, fmt);
	vsnprintf(s->status[src].text, sizeof(s->status[src].text), fmt, ap);
	va_end(ap);
}

static void record(struct xpu_session *s, const struct xpu_event *ev)
{
	if (!s->rec || s->rec_failed)
		return;
	int rc = xpu_rec_write(s->rec, ev);
	if (rc == -EINVAL) {	/* one malformed event: leave it out, keep recording */
		s->rec_invalid++;
		return;
	}
	if (rc == 0 && ev->type == XPU_EV_TICK)
		rc = xpu_rec_flush(s->rec);
	if (rc < 0) {
		s->rec_failed = 1;
		xpu_err("recording stopped: cannot write the recording: %s", strerror(-rc));
	}
}

/* xputop's own CPU time (all its threads) over the last tick, measured
 * against the wall clock, not the recorded interval. */
static void self_cpu(struct xpu_session *s)
{
	struct rusage ru;
	struct timespec ts;
	if (getrusage(RUSAGE_SELF, &ru) < 0 || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return;
	uint64_t cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (s->self_at && now > s->self_at)
		s->self_cpu_pct = 100.0 * (double)(cpu - s->self_cpu_ns) / (double)(now - s->self_at);
	s->self_cpu_ns = cpu;
	s->self_at = now;
}

static void on_tick(struct xpu_session *s, const struct xpu_event *ev)
{
	s->ticks++;
	self_cpu(s);
	s->last_tick_mono = ev->time;
	s->last_tick_wall = ev->tick.wall_ns;
	s->last_interval = ev->tick.interval_ns;
	s->events_last = s->events_open;
	s->events_open = 0;
	s->dropped_last = s->dropped_open;
	s->dropped_open = 0;
	xpu_cpu_model_tick(&s->cpu, ev->tick.interval_ns);
	xpu_gpu_model_tick(&s->gpu, ev->time, ev->tick.interval_ns);
	xpu_gpudev_model_tick(&s->gpudev, ev->time, ev->tick.interval_ns);
	xpu_npu_model_tick(&s->npu, ev->time, ev->tick.interval_ns);
	xpu_alerts_expire(&s->alerts, ev->time);
}

void xpu_session_begin(struct xpu_session *s, uint64_t mono)
{
	s->start_mono = s->last_tick_mono = s->stream_last = mono;
}

void xpu_session_watch(struct xpu_session *s, struct xpu_pidset *ps, uint64_t types)
{
	s->watch = ps;
	s->watch_types = types;
}

int xpu_session_watches(struct xpu_session *s, uint32_t pid)
{
	if (s->collect_set)
		return s->collect_all || (s->collect && xpu_pidset_has(s->collect, pid)) ||
		       (s->watch && xpu_pidset_has(s->watch, pid));
	return !s->watch || xpu_pidset_has(s->watch, pid);
}

void xpu_session_collect(struct xpu_session *s, int all, struct xpu_pidset *ps)
{
	s->collect_set = 1;
	s->collect_all = all;
	s->collect = ps;
}

/* Samples come at stream_hz, this xputop shows cfg.sample_hz: each CPU
 * keeps sample_hz of every stream_hz of its samples, evenly spaced, so the
 * counts mean what this xputop's -F says (1 if ev is left out). */
static int thin(struct xpu_session *s, const struct xpu_event *ev)
{
	if (!s->stream_hz || s->stream_hz <= s->cfg.sample_hz)
		return 0;
	uint32_t *acc = &s->thin_acc[ev->cpu.cpu % XPU_THIN_SLOTS];
	*acc += s->cfg.sample_hz;
	if (*acc >= s->stream_hz) {
		*acc -= s->stream_hz;
		return 0;
	}
	s->thinned++;
	return 1;
}

/* What is recorded is what this xputop shows: its own rate. */
static void record_tick(struct xpu_session *s, const struct xpu_event *ev)
{
	struct xpu_event t = *ev;
	if (t.tick.sample_hz > s->cfg.sample_hz)
		t.tick.sample_hz = s->cfg.sample_hz;
	record(s, &t);
}

/* Whether the stream's tick ev is also this view's (session.h: pace); *v
 * is the view's, with the time of every tick it merged. */
static int view_tick(struct xpu_session *s, const struct xpu_event *ev, struct xpu_event *v)
{
	int64_t d = (int64_t)s->cfg.interval_ns, step = (int64_t)ev->tick.interval_ns;
	*v = *ev;
	s->stream_ticks++;
	s->stream_last = ev->time;
	s->stream_interval = ev->tick.interval_ns;
	if (!s->pace || d <= 0)
		return 1;
	s->merged_ns += ev->tick.interval_ns;
	s->pace_lag += step;
	if (s->pace_lag + step / 2 < d) {	/* the nearest stream tick to the view's is later */
		s->merged_ticks++;
		return 0;
	}
	v->tick.interval_ns = s->merged_ns;
	s->merged_ns = 0;
	s->pace_lag -= d;
	/* A late tick (a pause, a takeover) is no debt to catch up on. */
	if (s->pace_lag > d / 2 || s->pace_lag < -d / 2)
		s->pace_lag = 0;
	return 1;
}

void xpu_session_emit(struct xpu_session *s, const struct xpu_event *ev)
{
	struct xpu_event v;
	/* The collector's clients get the whole stream: this xputop's -p and
	 * -F narrow only what it shows itself. */
	if (s->tap.event)
		s->tap.event(s->tap.arg, ev);
	if (s->collect && ev->type == XPU_EV_PROC_EXIT)
		xpu_pidset_forget(s->collect, ev->pid);
	if (s->watch && ev->pid && ev->type < 64 && (s->watch_types >> ev->type & 1) &&
	    !xpu_pidset_has(s->watch, ev->pid))
		return;
	if (s->watch && ev->type == XPU_EV_PROC_EXIT)
		xpu_pidset_forget(s->watch, ev->pid);
	if (ev->type == XPU_EV_CPU_SAMPLE && thin(s, ev))
		return;
	if (ev->type == XPU_EV_TICK && s->attached && ev->tick.sample_hz) {
		s->stream_hz = ev->tick.sample_hz;	/* the collector's, for the next interval */
		s->stream_collect = ev->tick.collect;
	}
	if (ev->type == XPU_EV_TICK) {
		if (view_tick(s, ev, &v)) {	/* what is recorded is this view's */
			record_tick(s, &v);
			on_tick(s, &v);
		}
		xpu_session_sweep(s);	/* at the stream's pace: a long -d must not hold the dictionary */
		return;
	}
	record(s, ev);
	switch (ev->type) {
	case XPU_EV_DROP:
		s->dropped_total += ev->drop.count;
		s->dropped_open += ev->drop.count;
		if (ev->drop.source < XPU_SRC_MAX)
			s->dropped_by_src[ev->drop.source] += ev->drop.count;
		return;
	case XPU_EV_CPU_SAMPLE:
		if (xpu_cpu_model_sample(&s->cpu, ev) < 0)
			xpu_err("out of memory in the CPU model");
		break;
	case XPU_EV_PROC_STAT:
	case XPU_EV_THREAD_STAT:
	case XPU_EV_SYS_STAT:
	case XPU_EV_CPU_STAT:
	case XPU_EV_PROC_CMDLINE:
		xpu_cpu_model_stat(&s->cpu, ev);
		break;
	case XPU_EV_PROC_EXIT:
		xpu_cpu_model_exit(&s->cpu, ev->pid, ev->time);
		xpu_gpu_model_exit(&s->gpu, ev->pid, ev->time);
		xpu_npu_model_exit(&s->npu, ev->pid, ev->time);
		break;
	case XPU_EV_GPU_LAUNCH:
	case XPU_EV_GPU_KERNEL:
	case XPU_EV_GPU_MEMCPY:
	case XPU_EV_GPU_PROC:
	case XPU_EV_GPU_SLICE:
	case XPU_EV_GPU_OWN:
	case XPU_EV_GPU_CPU:
	case XPU_EV_GPU_BORN:
		if (xpu_gpu_model_event(&s->gpu, ev) < 0)
			xpu_err("out of memory in the GPU model");
		break;
	case XPU_EV_GPU_DEV:
	case XPU_EV_GPU_DEV_LINK:
	case XPU_EV_GPU_DEV_PROC:
		xpu_gpudev_model_event(&s->gpudev, ev);
		break;
	case XPU_EV_NPU_IOCTL:
	case XPU_EV_NPU_IPC:
	case XPU_EV_NPU_JOB:
	case XPU_EV_NPU_MEM:
	case XPU_EV_NPU_PM:
	case XPU_EV_NPU_L0:
	case XPU_EV_NPU_BUSY:
	case XPU_EV_NPU_FUNC:
	case XPU_EV_NPU_FUNC_LAT:
	case XPU_EV_NPU_DEV:
	case XPU_EV_NPU_CLIENT:
		if (xpu_npu_model_event(&s->npu, &s->dict, ev) < 0)
			xpu_err("out of memory in the NPU model");
		break;
	default:
		break;
	}
	s->events_total++;
	s->events_open++;
}

void xpu_session_drops(struct xpu_session *s, enum xpu_src_id src, uint64_t total, uint64_t *seen)
{
	if (total <= *seen)
		return;
	struct xpu_event ev = { .type = XPU_EV_DROP, .source = src, .time = xpu_now_mono() };
	ev.drop.source = src;
	ev.drop.count = total - *seen;
	*seen = total;
	xpu_session_emit(s, &ev);
}

void xpu_session_tick(struct xpu_session *s, uint64_t mono, uint64_t wall)
{
	struct xpu_event ev = { .type = XPU_EV_TICK, .time = mono };
	ev.tick.wall_ns = wall;
	ev.tick.sample_hz = s->stream_hz ? s->stream_hz : s->cfg.sample_hz;
	ev.tick.collect = s->replay ? 0 : s->stream_collect | XPU_TICK_KNOWN |
			  (s->cfg.gpu.mode == XPU_GPU_MODE_EXACT ? XPU_TICK_GPU_EXACT : 0);
	ev.tick.interval_ns = s->stream_last && mono > s->stream_last ? mono - s->stream_last : s->cfg.interval_ns;
	xpu_session_emit(s, &ev);
}

void xpu_session_gpu_exact(struct xpu_session *s, int exact, double seconds, uint64_t now)
{
	struct xpu_gpu_tracing *t = &s->cfg.gpu;
	t->mode = exact ? XPU_GPU_MODE_EXACT : XPU_GPU_MODE_SAMPLED;
	t->exact_until = exact && seconds > 0 ? now + (uint64_t)(seconds * 1e9) : 0;
	t->gen++;
}
