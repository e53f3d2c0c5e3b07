/* SPDX-License-Identifier: GPL-2.0-only */
/* Stitched launch stacks (issue 26): the waits of core/sources/gpu_waits.c
 * and the waiter list and kinds of core/models/gpu_stitch.c, fed by hand. */
#include "check.h"

#include "dict.h"
#include "gpu_stitch.h"
#include "gpu_waits.h"
#include "stack_text.h"

#define MS 1000000ULL
#define PID 100
#define MAIN 100
#define ENGINE 101

static uint32_t fr(struct xpu_dict *d, const char *name)
{
	return xpu_dict_frame(d, XPU_FRAME_USER, xpu_dict_cstr(d, name), 0);
}

static uint32_t libc(struct xpu_dict *d, const char *name)
{
	return xpu_dict_frame(d, XPU_FRAME_USER, xpu_dict_cstr(d, name), xpu_dict_cstr(d, "libc.so.6"));
}

/* The engine thread's call site, expanded as source_gpu.c's are. */
static uint32_t engine_site(struct xpu_dict *d)
{
	uint32_t site = xpu_dict_frame_pending(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[call site]"), 0);
	uint32_t f[] = { libc(d, "clone3"), libc(d, "start_thread"),
			 fr(d, "torch::autograd::python::PythonEngine::thread_init(int)"),
			 fr(d, "torch::autograd::Engine::thread_main(std::shared_ptr<GraphTask> const&)"),
			 fr(d, "torch::autograd::Engine::evaluate_function(...)"),
			 fr(d, "torch::autograd::generated::MmBackward0::apply(...)"), fr(d, "at::mm") };
	xpu_dict_frame_expand(d, site, f, sizeof(f) / sizeof(f[0]));
	return site;
}

static uint32_t api(struct xpu_dict *d)
{
	return xpu_dict_frame(d, XPU_FRAME_LAUNCH, xpu_dict_cstr(d, "cudaLaunchKernel"), 0);
}

static void main_frames(struct xpu_gpu_waits *w, struct xpu_dict *d, uint64_t token)
{
	uint32_t f[] = { fr(d, "train.py:step"), fr(d, "THPEngine_run_backward"),
			 fr(d, "torch::autograd::Engine::execute") };
	xpu_gpu_waits_frames(w, token, f, 3);
}

#define STITCHED "train.py:step;THPEngine_run_backward;torch::autograd::Engine::execute;[backward of];" \
		 "torch::autograd::generated::MmBackward0::apply(...);at::mm;cudaLaunchKernel"

TEST(a_launch_by_another_thread_inside_a_wait_is_stitched_without_the_engines_plumbing)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	main_frames(w, &d, 1);
	uint32_t st = xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, engine_site(&d), api(&d));
	CHECK_STR(stack_text(&d, st), STITCHED);
	CHECK_INT(xpu_gpu_stack_stitch(&d, st), ==, XPU_STITCH_BACKWARD);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(launches_before_the_wait_after_it_by_the_waiter_or_of_another_process_are_not)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	main_frames(w, &d, 1);
	xpu_gpu_waits_end(w, PID, MAIN, 200 * MS, 0x7008);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 99 * MS, site, a), ==, 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 200 * MS, site, a), ==, 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, MAIN, 150 * MS, site, a), ==, 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID + 1, ENGINE, 150 * MS, site, a), ==, 0);
	/* A launch read after the wait ended, made inside it, still is. */
	CHECK(xpu_gpu_waits_stitch(w, PID, ENGINE, 199 * MS, site, a) != 0);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(a_wait_whose_stack_comes_after_the_launch_is_filled_in_place)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 7);
	uint32_t st = xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, engine_site(&d), api(&d));
	CHECK(strncmp(stack_text(&d, st), "[waiting thread's stack];[backward of];", 39) == 0);
	main_frames(w, &d, 7);
	CHECK_STR(stack_text(&d, st), STITCHED);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(a_site_whose_names_are_still_coming_is_trimmed_once_they_came)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = xpu_dict_frame_pending(&d, XPU_FRAME_INFO, xpu_dict_cstr(&d, "[call site]"), 0);
	uint32_t name = xpu_dict_frame_pending(&d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(&d, "libtorch_cpu.so+0x10"), 0);
	uint32_t f[] = { libc(&d, "start_thread"), name, fr(&d, "MmBackward0::apply") };
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_FOR, 0, 1);
	main_frames(w, &d, 1);
	xpu_dict_frame_expand(&d, site, f, 3);
	uint32_t st = xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, site, api(&d));
	CHECK(strstr(stack_text(&d, st), "[launched for];[launching thread's frames];cudaLaunchKernel") != NULL);
	xpu_gpu_waits_tick(w, 102 * MS);
	CHECK(strstr(stack_text(&d, st), "[launching thread's frames]") != NULL);	/* not yet */
	uint32_t thread_main = fr(&d, "torch::autograd::Engine::thread_main()");
	xpu_dict_frame_expand(&d, name, &thread_main, 1);
	xpu_gpu_waits_tick(w, 103 * MS);
	CHECK(strstr(stack_text(&d, st), "[launched for];MmBackward0::apply;cudaLaunchKernel") != NULL);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(a_wait_left_by_an_exception_ends_at_the_next_entry_or_an_outer_return)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	uint32_t first[] = { fr(&d, "train.py:first") }, second[] = { fr(&d, "train.py:second") };
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	xpu_gpu_waits_frames(w, 1, first, 1);
	/* No return seen: the next backward() enters at the same depth, so
	 * the first is over. */
	xpu_gpu_waits_begin(w, PID, MAIN, 300 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 2);
	xpu_gpu_waits_frames(w, 2, second, 1);
	CHECK(strncmp(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 250 * MS, site, a)), "train.py:first;", 15) == 0);
	CHECK(strncmp(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 350 * MS, site, a)), "train.py:second;", 16) == 0);
	/* A nested wait whose return was lost ends with the outer one's. */
	xpu_gpu_waits_begin(w, PID, MAIN, 360 * MS, 0x6000, XPU_STITCH_BACKWARD, 0, 3);
	xpu_gpu_waits_end(w, PID, MAIN, 400 * MS, 0x7008);
	CHECK(xpu_gpu_waits_stitch(w, PID, ENGINE, 399 * MS, site, a) != 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 401 * MS, site, a), ==, 0);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(an_ended_wait_is_forgotten_after_a_while_and_with_its_process)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	xpu_gpu_waits_end(w, PID, MAIN, 200 * MS, 0x7008);
	xpu_gpu_waits_begin(w, PID + 1, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 2);
	xpu_gpu_waits_tick(w, 200 * MS + 6000 * MS);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 150 * MS, site, a), ==, 0);
	CHECK(xpu_gpu_waits_stitch(w, PID + 1, ENGINE, 150 * MS, site, a) != 0);	/* open: kept */
	xpu_gpu_waits_forget(w, PID + 1);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID + 1, ENGINE, 150 * MS, site, a), ==, 0);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(the_waiter_list_reads_kind_file_and_symbol)
{
	struct xpu_gpu_waiter v[XPU_GPU_MAX_WAITERS];
	char err[256];
	CHECK_INT(xpu_gpu_waiters_parse(XPU_GPU_WAITERS_DEFAULT, v, XPU_GPU_MAX_WAITERS, err, sizeof(err)), ==, 1);
	CHECK_INT(v[0].kind, ==, XPU_STITCH_BACKWARD);
	CHECK_STR(v[0].file, "libtorch_cpu.so");
	CHECK_STR(v[0].sym, "_ZN5torch8autograd6Engine7execute");
	CHECK_INT(v[0].prefix, ==, 1);
	CHECK_INT(xpu_gpu_waiters_parse("for:a.out:wait,backward:libx.so:f*", v, 16, err, sizeof(err)), ==, 2);
	CHECK_INT(v[0].kind, ==, XPU_STITCH_FOR);
	CHECK_INT(v[0].prefix, ==, 0);
	CHECK_INT(xpu_gpu_waiters_parse("none", v, 16, err, sizeof(err)), ==, 0);
	CHECK_INT(xpu_gpu_waiters_parse("after:a.out:wait", v, 16, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_gpu_waiters_parse("for:a.out", v, 16, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_gpu_waiters_parse("for:a.out:w*x", v, 16, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_gpu_waiters_parse("for::wait", v, 16, err, sizeof(err)), ==, -1);
}

TEST(a_wait_whose_end_may_go_unseen_stitches_nothing_but_ends_the_one_before)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	xpu_gpu_waits_begin(w, PID, MAIN, 300 * MS, 0x7000, XPU_STITCH_BACKWARD, 1, 2);
	main_frames(w, &d, 1);
	main_frames(w, &d, 2);
	CHECK(xpu_gpu_waits_stitch(w, PID, ENGINE, 200 * MS, site, a) != 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 310 * MS, site, a), ==, 0);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(a_site_whose_names_never_all_come_is_stitched_whole_after_10s)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = xpu_dict_frame_pending(&d, XPU_FRAME_INFO, xpu_dict_cstr(&d, "[call site]"), 0);
	uint32_t name = xpu_dict_frame_pending(&d, XPU_FRAME_UNKNOWN, xpu_dict_cstr(&d, "libx.so+0x10"), 0);
	uint32_t f[] = { libc(&d, "start_thread"), name, fr(&d, "work") };
	xpu_dict_frame_expand(&d, site, f, 3);
	xpu_gpu_waits_begin(w, PID, MAIN, 100 * MS, 0x7000, XPU_STITCH_FOR, 0, 1);
	main_frames(w, &d, 1);
	uint32_t st = xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, site, api(&d));
	xpu_gpu_waits_tick(w, 102 * MS);
	xpu_gpu_waits_tick(w, 102 * MS + 10001 * MS);
	CHECK(strstr(stack_text(&d, st), "[launched for];start_thread;libx.so+0x10;work;cudaLaunchKernel") != NULL);
	uint32_t later = xpu_gpu_waits_stitch(w, PID, ENGINE, 102 * MS, site, api(&d));
	CHECK(strstr(stack_text(&d, later), "[launched for];start_thread;libx.so+0x10;work;cudaLaunchKernel") != NULL);
	struct xpu_gpu_waits_stats ws;
	xpu_gpu_waits_stats(w, &ws);
	CHECK_INT(ws.untrimmed, ==, 1);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

/* The node probes: a node's making site, by the BPF program's key; its
 * frames come once, with the first making of the site (token). */
static void made_at(struct xpu_gpu_waits *w, struct xpu_dict *d, uint64_t token, const char *layer)
{
	uint32_t f[] = { fr(d, "train.py:step"), fr(d, layer), fr(d, "torch::autograd::impl::set_gradient_edge") };
	xpu_gpu_waits_frames(w, token, f, 3);
}

#define MADE(layer) "train.py:step;" layer ";torch::autograd::impl::set_gradient_edge;[backward];" \
		    "torch::autograd::generated::MmBackward0::apply(...);at::mm;cudaLaunchKernel"

/* The main thread waits in the backward (from 90 ms); step 1 made nodes
 * 0xa0 (site 11, model.py:attn) and 0xb0 (site 12, model.py:mlp), their
 * stacks sent. */
static void first_step(struct xpu_gpu_waits *w, struct xpu_dict *d)
{
	xpu_gpu_waits_begin(w, PID, MAIN, 90 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	main_frames(w, d, 1);
	xpu_gpu_waits_node(w, PID, MAIN, 80 * MS, 0xa0, 11, 2);
	made_at(w, d, 2, "model.py:attn");
	xpu_gpu_waits_node(w, PID, MAIN, 81 * MS, 0xb0, 12, 3);
	made_at(w, d, 3, "model.py:mlp");
}

TEST(a_nodes_launches_go_under_its_making_site_and_a_known_site_needs_no_stack_again)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	first_step(w, &d);
	xpu_gpu_waits_run(w, PID, ENGINE, 100 * MS, 0x5000, 0xa0, 0);
	uint32_t st = xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, site, a);
	CHECK_STR(stack_text(&d, st), MADE("model.py:attn"));
	CHECK_INT(xpu_gpu_stack_stitch(&d, st), ==, XPU_STITCH_NODE);
	xpu_gpu_waits_end(w, PID, ENGINE, 102 * MS, 0x5008);
	/* Outside a run: the waiter's stack. */
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 103 * MS, site, a)), STITCHED);
	/* Step 2: the same sites make nodes at other addresses, keys alone. */
	xpu_gpu_waits_node(w, PID, MAIN, 180 * MS, 0xc0, 12, 0);
	xpu_gpu_waits_node(w, PID, MAIN, 181 * MS, 0xd0, 11, 0);
	xpu_gpu_waits_run(w, PID, ENGINE, 200 * MS, 0x5000, 0xc0, 0);
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 201 * MS, site, a)), MADE("model.py:mlp"));
	xpu_gpu_waits_run(w, PID, ENGINE, 202 * MS, 0x5000, 0xd0, 0);
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 203 * MS, site, a)), MADE("model.py:attn"));
	struct xpu_gpu_waits_stats s;
	xpu_gpu_waits_stats(w, &s);
	CHECK_INT(s.nodes, ==, 4);
	CHECK_INT(s.node_stitched, ==, 3);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

/* The ring gives makings and runs in their order, a library's launches
 * come later (its batches, behind the ring on a busy machine): by the time
 * a step's launch is read, a later step may have made a node at the same
 * address from another site.  The run keeps the making it began after
 * (beside gpu.sh, stitch.sh's first refresh lost every forward site so:
 * "made after their run began"). */
TEST(a_launch_read_after_its_nodes_address_was_made_again_keeps_the_making_its_run_began_after)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	first_step(w, &d);
	xpu_gpu_waits_run(w, PID, ENGINE, 100 * MS, 0x5000, 0xa0, 0);
	xpu_gpu_waits_end(w, PID, ENGINE, 110 * MS, 0x5008);
	/* the next step: 0xa0 made again, by the other site, and run */
	xpu_gpu_waits_node(w, PID, MAIN, 180 * MS, 0xa0, 12, 0);
	xpu_gpu_waits_run(w, PID, ENGINE, 200 * MS, 0x5000, 0xa0, 0);
	/* then the first step's launch is read, and the second's */
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, site, a)), MADE("model.py:attn"));
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 201 * MS, site, a)), MADE("model.py:mlp"));
	struct xpu_gpu_waits_stats s;
	xpu_gpu_waits_stats(w, &s);
	CHECK_INT(s.run_made_late, ==, 0);
	CHECK_INT(s.node_stitched, ==, 2);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(a_node_without_a_known_site_or_made_after_its_run_began_keeps_the_waiters_stack)
{
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_gpu_waits *w = xpu_gpu_waits_new(&d);
	uint32_t site = engine_site(&d), a = api(&d);
	xpu_gpu_waits_begin(w, PID, MAIN, 90 * MS, 0x7000, XPU_STITCH_BACKWARD, 0, 1);
	main_frames(w, &d, 1);
	xpu_gpu_waits_node(w, PID, MAIN, 80 * MS, 0xa0, 0, 0);		/* key 0: no stack taken */
	xpu_gpu_waits_node(w, PID, MAIN, 81 * MS, 0xb0, 99, 0);		/* a site never sent */
	xpu_gpu_waits_run(w, PID, ENGINE, 100 * MS, 0x5000, 0xa0, 0);
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 101 * MS, site, a)), STITCHED);
	xpu_gpu_waits_run(w, PID, ENGINE, 102 * MS, 0x5000, 0xb0, 0);
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 103 * MS, site, a)), STITCHED);
	/* A node at an address made again after its run began: not that one. */
	xpu_gpu_waits_node(w, PID, MAIN, 110 * MS, 0xe0, 13, 2);
	made_at(w, &d, 2, "model.py:attn");
	xpu_gpu_waits_run(w, PID, ENGINE, 105 * MS, 0x5000, 0xe0, 0);
	CHECK_STR(stack_text(&d, xpu_gpu_waits_stitch(w, PID, ENGINE, 111 * MS, site, a)), STITCHED);
	/* Another process's site of the same key is its own. */
	xpu_gpu_waits_node(w, PID + 1, MAIN, 120 * MS, 0xf0, 13, 0);
	xpu_gpu_waits_run(w, PID + 1, ENGINE, 121 * MS, 0x5000, 0xf0, 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID + 1, ENGINE, 122 * MS, site, a), ==, 0);
	/* A process that ends takes its sites along. */
	xpu_gpu_waits_node(w, PID, MAIN, 130 * MS, 0xe0, 13, 0);
	xpu_gpu_waits_forget(w, PID);
	xpu_gpu_waits_run(w, PID, ENGINE, 140 * MS, 0x5000, 0xe0, 0);
	CHECK_INT(xpu_gpu_waits_stitch(w, PID, ENGINE, 141 * MS, site, a), ==, 0);
	xpu_gpu_waits_free(w);
	xpu_dict_free(&d);
}

TEST(the_node_probes_list_reads_both_functions_and_their_argument)
{
	struct xpu_gpu_nodes n;
	char err[256];
	CHECK_INT(xpu_gpu_nodes_parse(XPU_GPU_NODES_DEFAULT, &n, err, sizeof(err)), ==, 0);
	CHECK_INT(n.on, ==, 1);
	CHECK_STR(n.create.file, "libtorch_cpu.so");
	CHECK_INT(n.create.arg, ==, 1);
	CHECK_INT(n.create.deref, ==, 1);
	CHECK_INT(n.run.arg, ==, 2);
	CHECK_INT(n.run.deref, ==, 0);
	CHECK_INT(xpu_gpu_nodes_parse("off", &n, err, sizeof(err)), ==, 0);
	CHECK_INT(n.on, ==, 0);
	CHECK_INT(xpu_gpu_nodes_parse("create=a.so:f:arg0", &n, err, sizeof(err)), ==, -1);
	CHECK(strstr(err, "both") != NULL);
	CHECK_INT(xpu_gpu_nodes_parse("create=a.so:f:arg9,run=a.so:g:arg1", &n, err, sizeof(err)), ==, -1);
	CHECK_INT(xpu_gpu_nodes_parse("make=a.so:f:arg0,run=a.so:g:arg1", &n, err, sizeof(err)), ==, -1);
	CHECK(strstr(err, "make=a.so") != NULL);
}
