/* SPDX-License-Identifier: GPL-2.0-only */
/* Pending frames (core/util/dict.h): frames that stand in for what is not known
 * yet, expanded in place later, in the dictionary and through a recording. */
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "record.h"
#include "stack_text.h"

static uint32_t fr(struct xpu_dict *d, const char *name)
{
	return xpu_dict_frame(d, XPU_FRAME_USER, xpu_dict_cstr(d, name), 0);
}

static uint32_t pend(struct xpu_dict *d, const char *label)
{
	return xpu_dict_frame_pending(d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(d, label),
				      xpu_dict_cstr(d, "libx.so"));
}

/* The stack's frames as "a;b;c". */
TEST(a_pending_frame_is_never_shared)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t a = pend(&d, "libx.so+0x10"), b = pend(&d, "libx.so+0x10");
	uint32_t plain = xpu_dict_frame(&d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(&d, "libx.so+0x10"),
					xpu_dict_cstr(&d, "libx.so"));
	CHECK(a && b && plain);
	CHECK(a != b && plain != a && plain != b);
	CHECK_INT(xpu_dict_frame_state(&d, a), ==, XPU_FRAME_PENDING);
	CHECK_INT(xpu_dict_frame_state(&d, plain), ==, XPU_FRAME_PLAIN);
	char buf[64];
	xpu_frame_text(&d, a, buf, sizeof(buf));
	CHECK_STR(buf, "libx.so+0x10");	/* its label, not "[unknown] (libx.so)" */
	xpu_dict_free(&d);
}

TEST(expanding_rewrites_every_stack_that_holds_it_keeping_its_id)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t main_ = fr(&d, "main"), leaf = fr(&d, "leaf"), p = pend(&d, "libx.so+0x10");
	uint32_t s1 = xpu_dict_stack(&d, (uint32_t[]){ main_, p, leaf }, 3);
	uint32_t s2 = xpu_dict_stack(&d, (uint32_t[]){ p }, 1);
	CHECK_STR(stack_text(&d, s1), "main;libx.so+0x10;leaf");
	uint32_t exp[2] = { fr(&d, "torch::forward"), fr(&d, "at::mm") };
	CHECK_INT(xpu_dict_frame_expand(&d, p, exp, 2), ==, 0);
	CHECK_STR(stack_text(&d, s1), "main;torch::forward;at::mm;leaf");
	CHECK_STR(stack_text(&d, s2), "torch::forward;at::mm");
	/* Interned again, old or new spelling, it is the same stack. */
	CHECK_INT(xpu_dict_stack(&d, (uint32_t[]){ main_, p, leaf }, 3), ==, s1);
	CHECK_INT(xpu_dict_stack(&d, (uint32_t[]){ main_, exp[0], exp[1], leaf }, 4), ==, s1);
	CHECK_INT(d.pending_now, ==, 0);
	CHECK_INT(xpu_dict_frame_expand(&d, p, exp, 1), ==, -EINVAL);	/* once only */
	CHECK_INT(xpu_dict_frame_expand(&d, main_, exp, 1), ==, -EINVAL);	/* not pending */
	xpu_dict_free(&d);
}

TEST(stacks_that_become_alike_both_stay_valid)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t a = fr(&d, "a"), g = fr(&d, "g");
	uint32_t p1 = pend(&d, "libx.so+0x10"), p2 = pend(&d, "libx.so+0x14");
	uint32_t s1 = xpu_dict_stack(&d, (uint32_t[]){ a, p1 }, 2);
	uint32_t s2 = xpu_dict_stack(&d, (uint32_t[]){ a, p2 }, 2);
	CHECK(s1 != s2);
	xpu_dict_frame_expand(&d, p1, &g, 1);
	xpu_dict_frame_expand(&d, p2, &g, 1);
	CHECK_STR(stack_text(&d, s1), "a;g");
	CHECK_STR(stack_text(&d, s2), "a;g");
	uint32_t again = xpu_dict_stack(&d, (uint32_t[]){ a, g }, 2);
	CHECK(again == s1 || again == s2);
	xpu_dict_free(&d);
}

/* A call site expands into frames some of which still wait for their names. */
TEST(an_expansion_may_hold_pending_frames_expanded_later)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t site = xpu_dict_frame_pending(&d, XPU_FRAME_INFO, xpu_dict_cstr(&d, "[call site 1]"), 0);
	uint32_t api = fr(&d, "cudaLaunchKernel"), kern = fr(&d, "gemm");
	uint32_t launch = xpu_dict_stack(&d, (uint32_t[]){ site, api }, 2);
	uint32_t flame = xpu_dict_stack(&d, (uint32_t[]){ site, api, kern }, 3);
	uint32_t q = pend(&d, "libx.so+0x20");
	uint32_t exp[2] = { fr(&d, "main"), q };
	CHECK_INT(xpu_dict_frame_expand(&d, site, exp, 2), ==, 0);
	CHECK_STR(stack_text(&d, flame), "main;libx.so+0x20;cudaLaunchKernel;gemm");
	/* Interned with the old frame after its expansion: gets it too. */
	uint32_t late = xpu_dict_stack(&d, (uint32_t[]){ site, kern }, 2);
	CHECK_STR(stack_text(&d, late), "main;libx.so+0x20;gemm");
	uint32_t named = fr(&d, "model_forward");
	CHECK_INT(xpu_dict_frame_expand(&d, q, &named, 1), ==, 0);
	CHECK_STR(stack_text(&d, launch), "main;model_forward;cudaLaunchKernel");
	CHECK_STR(stack_text(&d, flame), "main;model_forward;cudaLaunchKernel;gemm");
	CHECK_STR(stack_text(&d, late), "main;model_forward;gemm");
	CHECK_INT(xpu_dict_stack(&d, (uint32_t[]){ site, kern }, 2), ==, late);
	xpu_dict_free(&d);
}

TEST(an_expansion_too_deep_keeps_the_leaf_end)
{
	struct xpu_dict d;
	uint32_t exp[XPU_DICT_MAX_DEPTH];
	char name[32];
	xpu_dict_init(&d);
	for (uint32_t i = 0; i < XPU_DICT_MAX_DEPTH; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		exp[i] = fr(&d, name);
	}
	uint32_t p = pend(&d, "libx.so+0x10"), leaf = fr(&d, "leaf");
	uint32_t s = xpu_dict_stack(&d, (uint32_t[]){ p, leaf }, 2);
	CHECK_INT(xpu_dict_frame_expand(&d, p, exp, XPU_DICT_MAX_DEPTH), ==, 0);
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(&d, s, &n);
	CHECK_INT(n, ==, XPU_DICT_MAX_DEPTH);
	CHECK_INT(f[n - 1], ==, leaf);
	CHECK_INT(f[0], ==, exp[1]);	/* the root-most frame went */
	xpu_dict_free(&d);
}

/* Expansions nested in expansions, as a recording may hold: 512 frames that
 * each expand to 512 that each expand to 512 ...  The stack keeps its leaf
 * end, and getting it costs no more than filling it (the walk used to visit
 * every path: 512^7 here, which never ended; fuzz_record timed out in CI on
 * an input that was likely this).  Seven levels, below the eight that expand. */
TEST(nested_expansions_keep_the_leaf_end_without_walking_every_path)
{
	struct xpu_dict d;
	uint32_t exp[XPU_DICT_MAX_DEPTH], rep[XPU_DICT_MAX_DEPTH];
	char name[32];
	xpu_dict_init(&d);
	for (uint32_t i = 0; i < XPU_DICT_MAX_DEPTH; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		exp[i] = fr(&d, name);
	}
	uint32_t inner = pend(&d, "libx.so+0x10");
	CHECK_INT(xpu_dict_frame_expand(&d, inner, exp, XPU_DICT_MAX_DEPTH), ==, 0);
	for (int level = 0; level < 6; level++) {
		uint32_t outer = pend(&d, "libx.so+0x20");
		for (uint32_t i = 0; i < XPU_DICT_MAX_DEPTH; i++)
			rep[i] = inner;
		CHECK_INT(xpu_dict_frame_expand(&d, outer, rep, XPU_DICT_MAX_DEPTH), ==, 0);
		inner = outer;
	}
	uint32_t p = pend(&d, "libx.so+0x30"), leaf = fr(&d, "leaf");
	uint32_t s = xpu_dict_stack(&d, (uint32_t[]){ p, leaf }, 2);
	CHECK_INT(xpu_dict_frame_expand(&d, p, &inner, 1), ==, 0);
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(&d, s, &n);
	CHECK_INT(n, ==, XPU_DICT_MAX_DEPTH);
	CHECK_INT(f[n - 1], ==, leaf);
	CHECK_INT(f[n - 2], ==, exp[XPU_DICT_MAX_DEPTH - 1]);
	CHECK_INT(f[0], ==, exp[1]);
	/* Interning it again walks the same way. */
	uint32_t again = xpu_dict_stack(&d, (uint32_t[]){ inner, leaf }, 2);
	CHECK_INT(again, ==, s);
	xpu_dict_free(&d);
}

/* Expansions to nothing, nested: nothing to keep, and the walk still ends. */
TEST(nested_empty_expansions_end)
{
	struct xpu_dict d;
	uint32_t rep[XPU_DICT_MAX_DEPTH];
	xpu_dict_init(&d);
	uint32_t inner = pend(&d, "libx.so+0x10");
	CHECK_INT(xpu_dict_frame_expand(&d, inner, rep, 0), ==, 0);
	for (int level = 0; level < 8; level++) {
		uint32_t outer = pend(&d, "libx.so+0x20");
		for (uint32_t i = 0; i < XPU_DICT_MAX_DEPTH; i++)
			rep[i] = inner;
		CHECK_INT(xpu_dict_frame_expand(&d, outer, rep, XPU_DICT_MAX_DEPTH), ==, 0);
		inner = outer;
	}
	uint32_t leaf = fr(&d, "leaf");
	uint32_t s = xpu_dict_stack(&d, (uint32_t[]){ inner, leaf }, 2);
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(&d, s, &n);
	CHECK_INT(n, ==, 1);
	CHECK_INT(f[0], ==, leaf);
	xpu_dict_free(&d);
}

TEST(a_sweep_forgets_freed_stacks_so_a_reused_id_is_left_alone)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	uint32_t p = pend(&d, "libx.so+0x10"), a = fr(&d, "a"), b = fr(&d, "b"), g = fr(&d, "g");
	uint32_t dead = xpu_dict_stack(&d, (uint32_t[]){ p, a }, 2);
	uint32_t kept = xpu_dict_stack(&d, (uint32_t[]){ p, b }, 2);
	REQUIRE(xpu_dict_sweep_begin(&d) == 0);
	xpu_dict_mark_stack(&d, kept);
	CHECK_INT(xpu_dict_sweep_end(&d, NULL, NULL), ==, 1);
	uint32_t reused = xpu_dict_stack(&d, (uint32_t[]){ a, b }, 2);
	CHECK_INT(reused, ==, dead);
	CHECK_INT(d.pend[0].nstacks, ==, 1);
	xpu_dict_frame_expand(&d, p, &g, 1);
	CHECK_STR(stack_text(&d, kept), "g;b");
	CHECK_STR(stack_text(&d, reused), "a;b");
	xpu_dict_free(&d);
}

static struct xpu_event sample(uint32_t stack)
{
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .source = XPU_SRC_CPU, .pid = 7, .tid = 7,
				.time = 1000 };
	ev.cpu.stack = stack;
	return ev;
}

/* The recording holds the labels, then the expansions made after the events
 * that used them: a replay shows what the live session showed at the end. */
TEST(a_recording_replays_the_expansions)
{
	char path[] = "/tmp/xputop-pending-XXXXXX", err[512];
	struct xpu_dict d, r;
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	xpu_dict_init(&d);
	struct xpu_rec_meta meta = { .sample_hz = 99, .ncpus = 1 };
	struct xpu_rec_writer *w = xpu_rec_create(path, &d, &meta, err, sizeof(err));
	REQUIRE(w);
	uint32_t site = xpu_dict_frame_pending(&d, XPU_FRAME_INFO, xpu_dict_cstr(&d, "[call site 3]"), 0);
	uint32_t q = pend(&d, "libx.so+0x20"), main_ = fr(&d, "main");
	struct xpu_event e1 = sample(xpu_dict_stack(&d, (uint32_t[]){ main_, q }, 2));
	struct xpu_event e2 = sample(xpu_dict_stack(&d, (uint32_t[]){ site, main_ }, 2));
	CHECK_INT(xpu_rec_write(w, &e1), ==, 0);
	uint32_t exp[2] = { main_, q };
	xpu_dict_frame_expand(&d, site, exp, 2);
	CHECK_INT(xpu_rec_write(w, &e2), ==, 0);
	uint32_t named = fr(&d, "forward");
	xpu_dict_frame_expand(&d, q, &named, 1);	/* after the last event */
	CHECK_INT(xpu_rec_close(w), ==, 0);
	CHECK_STR(stack_text(&d, e1.cpu.stack), "main;forward");
	CHECK_STR(stack_text(&d, e2.cpu.stack), "main;forward;main");

	xpu_dict_init(&r);
	struct xpu_rec_reader *rd = xpu_rec_open(path, &r, err, sizeof(err));
	REQUIRE(rd);
	struct xpu_event got[2];
	CHECK_INT(xpu_rec_next(rd, &got[0]), ==, 1);
	CHECK_STR(stack_text(&r, got[0].cpu.stack), "main;libx.so+0x20");
	CHECK_INT(xpu_rec_next(rd, &got[1]), ==, 1);
	CHECK_STR(stack_text(&r, got[1].cpu.stack), "main;libx.so+0x20;main");
	CHECK_INT(xpu_rec_next(rd, &(struct xpu_event){ 0 }), ==, 0);
	CHECK_STR(stack_text(&r, got[0].cpu.stack), "main;forward");
	CHECK_STR(stack_text(&r, got[1].cpu.stack), "main;forward;main");
	CHECK_INT(r.pending_now, ==, 0);
	xpu_rec_close_reader(rd);
	xpu_dict_free(&r);
	xpu_dict_free(&d);
	unlink(path);
}
