/* SPDX-License-Identifier: GPL-2.0-only */
/* Sweeping the dictionary's stacks (dict.h): a long session with ever new
 * call paths keeps a bounded dictionary, every stack a model or a source
 * still holds keeps its id and its frames, and a recording made across
 * sweeps replays to the very same picture, sweeping as it goes. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "record.h"
#include "session.h"

static uint32_t frame(struct xpu_dict *d, const char *name, uint32_t kind)
{
	return xpu_dict_frame(d, kind, xpu_dict_cstr(d, name), 0);
}

/* Stack number i: a path over 64 fixed functions, so frames stay few while
 * stacks are all different. */
static uint32_t path(struct xpu_dict *d, uint32_t i)
{
	uint32_t f[6];
	char name[16];
	f[0] = frame(d, "main", XPU_FRAME_USER);
	for (int k = 1; k < 6; k++, i /= 64) {
		snprintf(name, sizeof(name), "fn%u", i % 64);
		f[k] = frame(d, name, XPU_FRAME_USER);
	}
	return xpu_dict_stack(d, f, 6);
}

static void count_freed(void *arg, uint32_t id)
{
	(void)id;
	(*(uint32_t *)arg)++;
}

TEST(sweep_frees_unmarked_stacks_and_reuses_their_ids)
{
	struct xpu_dict d;
	uint32_t id[1000], freed = 0;
	xpu_dict_init(&d);
	for (uint32_t i = 0; i < 1000; i++)
		id[i] = path(&d, i);
	CHECK_INT(xpu_dict_live_stacks(&d), ==, 1000);
	REQUIRE(xpu_dict_sweep_begin(&d) == 0);
	for (uint32_t i = 0; i < 1000; i += 2)
		xpu_dict_mark_stack(&d, id[i]);
	CHECK_INT(xpu_dict_stack(&d, NULL, 0), ==, 0);	/* no interning mid-sweep */
	CHECK_INT(xpu_dict_sweep_end(&d, count_freed, &freed), ==, 500);
	CHECK_INT(freed, ==, 500);
	CHECK_INT(xpu_dict_live_stacks(&d), ==, 500);
	for (uint32_t i = 0; i < 1000; i++) {
		CHECK_INT(xpu_dict_stack_valid(&d, id[i]), ==, i % 2 == 0);
		if (i % 2 == 0)	/* a survivor: same id, same frames */
			CHECK_INT(path(&d, i), ==, id[i]);
	}
	uint32_t n;
	CHECK(xpu_dict_stack_get(&d, id[1], &n) == NULL && n == 0);
	/* New stacks take the freed ids, lowest first, so the ids stay dense. */
	uint32_t again = path(&d, 5000);
	CHECK_INT(again, ==, id[1]);
	CHECK_INT(xpu_dict_nstacks(&d), ==, 1000);
	const uint32_t *f = xpu_dict_stack_get(&d, again, &n);
	REQUIRE(f && n == 6);
	CHECK_STR(xpu_dict_str_get(&d, xpu_dict_frame_get(&d, f[1])->name), "fn8");	/* 5000 % 64 */
	/* A freed stack's frames come back under a valid id. */
	uint32_t back = path(&d, 3);
	CHECK(back != 0 && xpu_dict_stack_valid(&d, back));
	xpu_dict_free(&d);
}

TEST(a_stream_of_new_stacks_keeps_the_dictionary_bounded)
{
	struct xpu_dict d;
	uint32_t keep[100], freed = 0;
	xpu_dict_init(&d);
	/* 200 rounds of 1,000 new stacks; only the last 100 of each are held. */
	for (uint32_t r = 0; r < 200; r++) {
		for (uint32_t i = 0; i < 1000; i++) {
			uint32_t s = path(&d, r * 1000 + i);
			REQUIRE(s);
			if (i >= 900)
				keep[i - 900] = s;
		}
		REQUIRE(xpu_dict_sweep_begin(&d) == 0);
		for (int k = 0; k < 100; k++)
			xpu_dict_mark_stack(&d, keep[k]);
		xpu_dict_sweep_end(&d, count_freed, &freed);
		CHECK_INT(xpu_dict_live_stacks(&d), ==, 100);
	}
	CHECK_INT(freed, ==, 200 * 1000 - 100);
	CHECK_INT(xpu_dict_nstacks(&d), <=, 1100);	/* ids: what one round needs */
	CHECK_INT(d.stack_arena_len, ==, 100 * 6);	/* frames of the live stacks only */
	CHECK_INT(d.stacks_swept, ==, freed);
	xpu_dict_free(&d);
}

/* ---- a whole session ---- */

#define TICKS 240
#define SAMPLES 120	/* per tick, each with a new call path */
#define LAUNCHES 20	/* per tick, from 60 call sites */

static const uint64_t SEC = 1000000000ULL;

static void mark_reader(void *arg, struct xpu_dict *d)
{
	xpu_rec_mark_stacks(arg, d);
}

static int start(struct xpu_session *s)
{
	struct xpu_session_cfg cfg = { .sample_hz = 99, .interval_ns = SEC, .window_ns = 3 * SEC };
	if (xpu_session_start(s, &cfg) < 0)
		return -1;
	s->sweep_min = 512;
	s->cpu.stacks.max = 1024;
	s->gpu.stacks.max = 256;
	return 0;
}

static uint32_t sites[120];

static void mark_sites(void *arg, struct xpu_dict *d)
{
	(void)arg;
	for (int i = 0; i < 120; i++)
		xpu_dict_mark_stack(d, sites[i]);
}

/* The live side: CPU samples, and GPU launches joined to their kernels. */
static void run_live(struct xpu_session *s)
{
	struct xpu_dict *d = &s->dict;
	for (uint32_t i = 0; i < 120; i++)
		sites[i] = path(d, 1000000 + i);
	REQUIRE(xpu_session_add_holder(s, mark_sites, NULL) == 0);
	uint32_t comm = xpu_dict_cstr(d, "app"), user = xpu_dict_cstr(d, "alice");
	uint32_t api = xpu_dict_cstr(d, "cudaLaunchKernel"), corr = 0, nlate = 0;
	struct xpu_event late[3];
	uint64_t t = SEC;
	for (uint32_t tick = 0; tick < TICKS; tick++) {
		for (uint32_t i = 0; i < SAMPLES; i++) {
			struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .source = XPU_SRC_CPU,
						.pid = 100 + tick % 7, .tid = 100 + tick % 7, .time = t + i };
			ev.cpu.stack = path(d, tick * SAMPLES + i);
			ev.cpu.comm = ev.cpu.tcomm = comm;
			ev.cpu.user = user;
			ev.cpu.uid = 1000;
			xpu_session_emit(s, &ev);
		}
		/* Last tick's late kernels: their launches waited in the join
		 * ring across the tick (and the sweep). */
		for (uint32_t i = 0; i < nlate; i++) {
			late[i].time = t + 500 + i;
			late[i].kernel.end = late[i].time + 3;
			xpu_session_emit(s, &late[i]);
		}
		nlate = 0;
		for (uint32_t i = 0; i < LAUNCHES; i++) {
			struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .source = XPU_SRC_GPU,
						.pid = 200, .tid = 200, .time = t + 1000 + i };
			char kname[32];
			ev.launch.corr = ++corr;
			/* The call sites' stacks are held by the source (as
			 * source_gpu.c holds them), in use or not: models
			 * forget them; one launch a tick is new. */
			ev.launch.stack = i == 0 ? path(d, 2000000 + tick) : sites[(tick / 40) * 17 % 60 + (tick * 7 + i) % 60];
			ev.launch.api = api;
			ev.launch.comm = comm;
			xpu_session_emit(s, &ev);
			ev = (struct xpu_event){ .type = XPU_EV_GPU_KERNEL, .source = XPU_SRC_GPU,
						 .pid = 200, .time = t + 2000 + i * 10 };
			snprintf(kname, sizeof(kname), "k%u", i % 5);
			ev.kernel.end = ev.time + 1 + i;
			ev.kernel.name = xpu_dict_cstr(d, kname);
			ev.kernel.corr = corr;
			ev.kernel.comm = comm;
			if (i < 3)
				late[nlate++] = ev;
			else
				xpu_session_emit(s, &ev);
		}
		t += SEC;
		xpu_session_tick(s, t, t);
		REQUIRE(xpu_dict_live_stacks(d) <= 8 * 1024);
	}
}

/* Whether every entry of a has an entry of b with the same process, thread,
 * frames and weights (and the tables are the same size). */
static int same_stacks(const struct xpu_stacks *a, const struct xpu_dict *da,
		       const struct xpu_stacks *b, const struct xpu_dict *db)
{
	if (a->n != b->n || a->sum_total != b->sum_total || a->sum_recent != b->sum_recent)
		return 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct xpu_stack_entry *e = &a->v[i], *g = &b->v[i];
		uint32_t na, nb;
		const uint32_t *fa = xpu_dict_stack_get(da, e->stack, &na);
		const uint32_t *fb = xpu_dict_stack_get(db, g->stack, &nb);
		if (e->pid != g->pid || e->tid != g->tid || e->total != g->total || e->recent != g->recent ||
		    na != nb || (na && (!fa || !fb)))
			return 0;
		for (uint32_t k = 0; k < na; k++) {
			char x[64], y[64];
			xpu_frame_text(da, fa[k], x, sizeof(x));
			xpu_frame_text(db, fb[k], y, sizeof(y));
			if (strcmp(x, y))
				return 0;
		}
	}
	return 1;
}

/* Every GPU path reads the launch's stack frames, then its kernel. */
static int gpu_paths_whole(const struct xpu_session *s)
{
	for (uint32_t i = 0; i < s->gpu.stacks.n; i++) {
		const struct xpu_stack_entry *e = &s->gpu.stacks.v[i];
		uint32_t n;
		const uint32_t *f = xpu_dict_stack_get(&s->dict, e->stack, &n);
		if (e->stack == s->gpu.stacks.aged_stack)
			continue;
		if (!f || n != 7 || xpu_dict_frame_get(&s->dict, f[0])->kind != XPU_FRAME_USER ||
		    xpu_dict_frame_get(&s->dict, f[5])->kind != XPU_FRAME_USER ||
		    xpu_dict_frame_get(&s->dict, f[6])->kind != XPU_FRAME_GPU) {
			fprintf(stderr, "  GPU path %u has %u frames\n", e->stack, n);
			return 0;
		}
	}
	return 1;
}

TEST(a_long_session_sweeps_its_stacks_and_its_recording_replays_the_same)
{
	char path[] = "/tmp/xputop-test-sweep-XXXXXX", err[256];
	struct xpu_session live, replay;
	struct xpu_rec_meta meta = { .sample_hz = 99, .ncpus = 2, .interval_ns = SEC };
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(path);

	xpu_session_init(&live);
	REQUIRE(start(&live) == 0);
	live.rec = xpu_rec_create(path, &live.dict, &meta, err, sizeof(err));
	REQUIRE(live.rec);
	run_live(&live);
	/* 28,800 call paths went through, and the flame paths of the GPU. */
	CHECK_INT(live.dict.sweeps, >=, 5);
	CHECK_INT(live.dict.stacks_swept, >, 20000);
	CHECK_INT(xpu_dict_nstacks(&live.dict), <, 8 * 1024);
	CHECK_INT(live.gpu.stacks.sum_total, >, 0);
	CHECK(gpu_paths_whole(&live));
	REQUIRE(xpu_rec_close(live.rec) == 0);
	live.rec = NULL;

	xpu_session_init(&replay);
	struct xpu_rec_reader *r = xpu_rec_open(path, &replay.dict, err, sizeof(err));
	REQUIRE(r);
	REQUIRE(start(&replay) == 0);
	REQUIRE(xpu_session_add_holder(&replay, mark_reader, r) == 0);
	struct xpu_event ev;
	int rc;
	while ((rc = xpu_rec_next(r, &ev)) > 0)
		xpu_session_emit(&replay, &ev);
	CHECK_INT(rc, ==, 0);
	CHECK_STR(xpu_rec_error(r), "");
	/* The replay forgot what the live session swept, and swept too. */
	CHECK_INT(replay.dict.sweeps, >=, 5);
	CHECK_INT(xpu_dict_nstacks(&replay.dict), <, 8 * 1024);
	CHECK_INT(replay.events_total, ==, live.events_total);
	CHECK(same_stacks(&live.cpu.stacks, &live.dict, &replay.cpu.stacks, &replay.dict));
	CHECK(same_stacks(&live.gpu.stacks, &live.dict, &replay.gpu.stacks, &replay.dict));
	CHECK(gpu_paths_whole(&replay));
	CHECK_INT(replay.cpu.samples_total, ==, (uint64_t)TICKS * SAMPLES);
	xpu_rec_close_reader(r);
	xpu_session_free(&replay);
	xpu_session_free(&live);
	unlink(path);
}

