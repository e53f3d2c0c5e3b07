/* SPDX-License-Identifier: GPL-2.0-only */
/* Keys change the user's choices and say what the main loop must do; they
 * never draw, so they are tested without a terminal. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "draw.h"
#include "keys.h"
#include "tui.h"
#include "views.h"

static const struct xpu_col cols[] = {
	{ "PID", "pid", XPU_CELL_INT, 7, 0 },
	{ "CPU%", "cpu", XPU_CELL_PCT, 6, 0 },
	{ "SECRET", "secret", XPU_CELL_INT, 4, XPU_COL_HIDDEN },
	{ "COMMAND", "comm", XPU_CELL_STR, 10, XPU_COL_LEFT | XPU_COL_FLEX },
};

static struct xpu_snapshot snap;
static struct xpu_viewstate vs;
static struct xpu_ui ui;

/* A CPU table of `n` rows keyed 101, 102, ... sorted by CPU%. */
static void setup(int n)
{
	xpu_table_free(&snap.cpu.rows);	/* the previous test's */
	memset(&snap, 0, sizeof(snap));
	memset(&vs, 0, sizeof(vs));
	memset(&ui, 0, sizeof(ui));
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		vs.sort_col[v] = -1;
	vs.view = XPU_VIEW_CPU;
	ui.page = 10;
	xpu_table_init(&snap.cpu.rows, cols, 4);
	for (int i = 0; i < n; i++) {
		struct xpu_cell *c = xpu_table_add(&snap.cpu.rows, 101 + (uint64_t)i);
		c[0].i = 101 + i;
		c[1].d = 100.0 - i;
		c[3].s = "proc";
	}
	snap.cpu.rows.sort_col = 1;
}

static int key(int k)
{
	return xpu_keys_handle(&ui, &snap, &vs, k);
}

static void type(const char *s)
{
	while (*s)
		key((unsigned char)*s++);
}

TEST(letters_switch_views_and_digits_do_not)
{
	setup(3);
	CHECK_INT(key('g'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_GPU);
	CHECK_INT(key('n'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_NPU);
	CHECK_INT(key('c'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
	CHECK_INT(key('c'), ==, XPU_REACT_NONE);
	CHECK_INT(key('2'), ==, XPU_REACT_NONE);
	CHECK_INT(key('3'), ==, XPU_REACT_NONE);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
}

/* top's 1: a meter per CPU, in any view; the view stays. */
TEST(one_toggles_the_per_cpu_meters_not_the_view)
{
	setup(3);
	CHECK_INT(key('1'), ==, XPU_REACT_REDRAW);
	CHECK(vs.meters);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
	key('1');
	CHECK(!vs.meters);
}

/* A view is its descriptor (tui/views.h): registered in its place, named,
 * with a letter no other view has, a status, and a way to draw the table
 * or flame it has (without, the TUI draws the box with its status). */
TEST(every_view_is_registered_with_a_name_a_letter_of_its_own_a_status_and_a_draw)
{
	setup(3);
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		const struct xpu_view_desc *d = xpu_views[v];
		CHECK(d && d->name && d->no_data && d->status);
		CHECK(d->draw || (!d->table && !d->flame));
		for (int w = 0; w < v; w++)
			CHECK(d->key != xpu_views[w]->key);
		CHECK_INT(xpu_view_of_key(d->key), ==, v);
		CHECK_INT(xpu_view_of_key('1' + v), ==, -1);
		vs.view = (enum xpu_view)((v + 1) % XPU_VIEW_MAX);
		CHECK_INT(key(d->key), ==, XPU_REACT_REBUILD);
		CHECK_INT(vs.view, ==, v);
	}
}

/* H is the CPU view's own key: the other views leave it alone. */
TEST(h_upper_shows_threads_only_in_the_cpu_view)
{
	setup(3);
	vs.view = XPU_VIEW_NPU;
	CHECK_INT(key('H'), ==, XPU_REACT_NONE);
	CHECK(!vs.threads);
	vs.view = XPU_VIEW_CPU;
	CHECK_INT(key('H'), ==, XPU_REACT_REBUILD);
	CHECK(vs.threads);
}

/* o shows the CPU view's hottest functions; the other views have no such pane. */
TEST(o_shows_the_hottest_functions_only_in_the_cpu_view)
{
	setup(3);
	vs.view = XPU_VIEW_GPU;
	CHECK_INT(key('o'), ==, XPU_REACT_NONE);
	CHECK(!vs.hot);
	vs.view = XPU_VIEW_CPU;
	CHECK_INT(key('o'), ==, XPU_REACT_REBUILD);
	CHECK(vs.hot);
	CHECK_INT(key('o'), ==, XPU_REACT_REBUILD);
	CHECK(!vs.hot);
}

TEST(tab_and_shift_tab_cycle_the_views)
{
	setup(3);
	key('\t');
	CHECK_INT(vs.view, ==, XPU_VIEW_GPU);
	key('\t');
	CHECK_INT(vs.view, ==, XPU_VIEW_NPU);
	key(KEY_BTAB);
	key(KEY_BTAB);
	CHECK_INT(vs.view, ==, XPU_VIEW_CPU);
}

TEST(q_and_f10_quit_and_s_exports)
{
	setup(3);
	CHECK_INT(key('q'), ==, XPU_REACT_QUIT);
	CHECK_INT(key(KEY_F(10)), ==, XPU_REACT_QUIT);
	CHECK_INT(key('s'), ==, XPU_REACT_EXPORT);
}

TEST(space_pauses_and_resumes)
{
	setup(3);
	CHECK_INT(key(' '), ==, XPU_REACT_REDRAW);
	CHECK(vs.paused);
	CHECK_INT(key(' '), ==, XPU_REACT_REBUILD);
	CHECK(!vs.paused);
}

TEST(slash_filters_live_and_enter_keeps_it)
{
	setup(3);
	CHECK_INT(key('/'), ==, XPU_REACT_REDRAW);
	CHECK(ui.editing);
	CHECK_INT(key('p'), ==, XPU_REACT_REBUILD);
	CHECK_INT(key('q'), ==, XPU_REACT_REBUILD);	/* text, not quit */
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "pq");
	CHECK_INT(key(KEY_BACKSPACE), ==, XPU_REACT_REBUILD);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "p");
	key('\r');
	CHECK(!ui.editing);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "p");
}

TEST(esc_restores_the_previous_filter)
{
	setup(3);
	key('/');
	type("py\r");
	key('/');
	type("thon");
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "python");
	CHECK_INT(key(27), ==, XPU_REACT_REBUILD);
	CHECK(!ui.editing);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "py");
}

TEST(backspace_removes_a_whole_utf8_character)
{
	setup(3);
	key('/');
	type("a\xc3\xa9");	/* "aé" */
	key(127);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "a");
}

TEST(the_filter_stops_at_its_buffer_size)
{
	setup(3);
	key('/');
	for (int i = 0; i < 2 * XPU_FILTER_MAX; i++)
		key('x');
	CHECK_INT(strlen(vs.filter[XPU_VIEW_CPU]), ==, XPU_FILTER_MAX - 1);
}

TEST(arrows_move_the_selection_while_filtering)
{
	setup(3);
	key('/');
	CHECK_INT(key(KEY_DOWN), ==, XPU_REACT_REBUILD);
	CHECK(ui.editing);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 102);
}

TEST(sort_keys_start_from_the_tables_sort_column_and_skip_hidden_ones)
{
	setup(3);
	CHECK_INT(key('>'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 3);	/* CPU% -> COMMAND, over SECRET */
	key('>');
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 0);	/* wraps */
	key('<');
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 3);
	key('<');
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, 1);
	CHECK_INT(key('r'), ==, XPU_REACT_REBUILD);
	CHECK(vs.reverse[XPU_VIEW_CPU]);
	key('r');
	CHECK(!vs.reverse[XPU_VIEW_CPU]);
}

TEST(selection_keys_select_row_keys)
{
	setup(30);
	CHECK_INT(key(KEY_UP), ==, XPU_REACT_NONE);	/* already on the first row */
	CHECK_INT(key('j'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 102);
	key(KEY_DOWN);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 103);
	key(KEY_UP);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 102);
	key(KEY_NPAGE);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 102 + 9);
	key(KEY_END);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 130);
	CHECK_INT(key(KEY_DOWN), ==, XPU_REACT_NONE);
	key(KEY_PPAGE);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 130 - 9);
	key(KEY_HOME);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 101);
}

/* F follows the selected row; a rebuild that no longer has it stops that
 * (xpu_viewstate_settle takes what the build placed). */
TEST(f_follows_the_selected_row_until_it_is_gone)
{
	setup(5);
	key('j');
	key('j');
	CHECK_INT(vs.sel_row[XPU_VIEW_CPU], ==, 2);
	CHECK_INT(key('F'), ==, XPU_REACT_REBUILD);
	CHECK(vs.follow[XPU_VIEW_CPU]);
	/* the build found the row at the bottom now */
	snap.sel[XPU_VIEW_CPU] = (struct xpu_sel){ 4, 103, 0 };
	xpu_viewstate_settle(&vs, &snap);
	CHECK_INT(vs.sel_row[XPU_VIEW_CPU], ==, 4);
	CHECK(vs.follow[XPU_VIEW_CPU]);
	/* gone: the build kept the place and said so */
	snap.sel[XPU_VIEW_CPU] = (struct xpu_sel){ 4, 105, 1 };
	xpu_viewstate_settle(&vs, &snap);
	CHECK(!vs.follow[XPU_VIEW_CPU]);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 105);
	/* nothing to follow in a view without rows */
	vs.view = XPU_VIEW_GPU;
	CHECK_INT(key('F'), ==, XPU_REACT_NONE);
}

TEST(a_vanished_selection_moves_from_the_first_row)
{
	setup(5);
	vs.selected[XPU_VIEW_CPU] = 999;
	key(KEY_DOWN);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 102);
}

TEST(help_opens_and_a_key_closes_it_without_acting)
{
	setup(3);
	CHECK_INT(key('?'), ==, XPU_REACT_REDRAW);
	CHECK(ui.help);
	CHECK_INT(key('q'), ==, XPU_REACT_REDRAW);
	CHECK(!ui.help);
	key('h');
	CHECK(ui.help);
	CHECK_INT(key(KEY_RESIZE), ==, XPU_REACT_REDRAW);
	CHECK(ui.help);	/* a resize is not a key press */
}

TEST(display_toggles_rebuild)
{
	setup(3);
	CHECK_INT(key('f'), ==, XPU_REACT_REBUILD);
	CHECK(vs.flame);
	CHECK_INT(key('H'), ==, XPU_REACT_REBUILD);
	CHECK(vs.threads);
	CHECK_INT(key('w'), ==, XPU_REACT_REBUILD);
	CHECK_INT(vs.window, ==, XPU_WIN_ALL);
	key('w');
	CHECK_INT(vs.window, ==, XPU_WIN_RECENT);
}

/* e costs CUDA programs 30-100%: only in the GPU view, and only after a y;
 * back to sampled at once (issue 28). */
TEST(e_asks_for_exact_gpu_tracing_only_in_the_gpu_view)
{
	setup(3);
	CHECK_INT(key('e'), ==, XPU_REACT_NONE);
	vs.view = XPU_VIEW_NPU;
	CHECK_INT(key('e'), ==, XPU_REACT_NONE);
	vs.view = XPU_VIEW_GPU;
	CHECK_INT(key('e'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.act.ask, ==, XPU_ASK_CONFIRM);
	CHECK_INT(key('n') & XPU_REACT_GPU_EXACT, ==, 0);
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	key('e');
	CHECK_INT(key('y') & XPU_REACT_GPU_EXACT, ==, XPU_REACT_GPU_EXACT);
	snap.gpu.exact_asked = 1;
	CHECK_INT(key('e'), ==, XPU_REACT_GPU_EXACT);
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	snap.gpu.exact_asked = 0;
}

TEST(table_keys_do_nothing_in_a_view_without_a_table)
{
	setup(3);
	vs.view = XPU_VIEW_GPU;
	CHECK_INT(key('/'), ==, XPU_REACT_NONE);
	CHECK(!ui.editing);
	CHECK_INT(key('>'), ==, XPU_REACT_NONE);
	CHECK_INT(key('j'), ==, XPU_REACT_NONE);
	CHECK_INT(key('r'), ==, XPU_REACT_NONE);
	CHECK_INT(key('H'), ==, XPU_REACT_NONE);
}

TEST(ctrl_l_and_resize_repaint_everything)
{
	setup(3);
	CHECK_INT(key(12), ==, XPU_REACT_REDRAW);
	CHECK(ui.relayout);
}

TEST(every_hint_is_in_the_help)
{
	for (unsigned i = 0; i < xpu_key_nhints; i++) {
		int found = 0;
		for (unsigned j = 0; j < xpu_nkeydocs; j++)
			found |= xpu_keydocs[j].keys &&
				 strstr(xpu_keydocs[j].keys, xpu_key_hints[i].key) != NULL;
		found |= !strcmp(xpu_key_hints[i].key, "<>");
		if (!found)
			fprintf(stderr, "  hint %s is not in the help\n", xpu_key_hints[i].key);
		CHECK(found);
	}
}

TEST(s_upper_asks_the_main_loop_to_save_the_settings)
{
	setup(3);
	CHECK_INT(key('S'), ==, XPU_REACT_SAVE | XPU_REACT_REDRAW);
	CHECK_INT(key('s'), ==, XPU_REACT_EXPORT);
}

TEST(t_upper_asks_for_the_next_theme_and_changes_no_choice)
{
	setup(3);
	struct xpu_viewstate before = vs;
	CHECK_INT(key('T'), ==, XPU_REACT_REDRAW);
	CHECK(ui.next_theme);
	CHECK(memcmp(&before, &vs, sizeof(vs)) == 0);
}

TEST(enter_and_backspace_still_edit_the_filter_while_it_is_open)
{
	setup(3);
	type("/ab");
	CHECK_INT(key(KEY_BACKSPACE), ==, XPU_REACT_REBUILD);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "a");
	CHECK_INT(key('\n'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.editing, ==, 0);
	CHECK_STR(vs.filter[XPU_VIEW_CPU], "a");
}

TEST(the_help_scrolls_with_the_arrows_and_pages_and_other_keys_close_it)
{
	setup(3);
	key('?');
	CHECK_INT(key(KEY_DOWN), ==, XPU_REACT_REDRAW);
	CHECK_INT(key('j'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.help_top, ==, 2);
	key(KEY_NPAGE);
	key(KEY_UP);
	CHECK_INT(ui.help_top, ==, 11);
	CHECK(ui.help);
	CHECK_INT(vs.selected[XPU_VIEW_CPU], ==, 0);	/* the table did not move */
	key('x');
	CHECK(!ui.help);
	key('?');
	CHECK_INT(ui.help_top, ==, 0);	/* it opens at the top */
}

/* The NPU view's t moves the table keys to the driver functions (then the
 * chains, then back); Enter opens its alert card, only with an alert. */
TEST(t_moves_the_npu_table_keys_to_the_driver_functions_and_enter_opens_the_alert_card)
{
	setup(3);
	vs.view = XPU_VIEW_NPU;
	xpu_table_init(&snap.npu.model.funcs, cols, 4);
	for (int i = 0; i < 20; i++)
		xpu_table_add(&snap.npu.model.funcs, 1 + (uint64_t)i);
	ui.funcs_page = 8;
	CHECK_INT(key('t'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.funcs_focus, ==, 1);
	CHECK_INT(key(KEY_DOWN), ==, XPU_REACT_REDRAW);
	CHECK_INT(key(KEY_NPAGE), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.funcs_sel, ==, 8);
	CHECK_INT(key(KEY_END), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.funcs_sel, ==, 19);
	CHECK_INT(vs.sel_row[XPU_VIEW_NPU], ==, 0);	/* the calls table's cursor stays */
	key('t');
	key('t');
	CHECK_INT(ui.funcs_focus, ==, 0);
	CHECK_INT(key('\n'), ==, XPU_REACT_REDRAW);
	CHECK(!ui.card);	/* no alert: nothing to show */
	snap.nalerts = 1;
	snap.alert_top = 0;
	key('\n');
	CHECK(ui.card);
	key(27);
	CHECK(!ui.card);
	xpu_table_free(&snap.npu.model.funcs);
}

/* A child of the test, shown as the CPU table's only row under the name
 * /proc gives it. */
static pid_t child_row(void)
{
	static char comm[32];
	pid_t pid = fork();
	if (pid == 0) {
		/* Whatever the test runner ignored or blocked, SIGTERM kills it. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTERM, SIG_DFL);
		pause();
		_exit(0);
	}
	/* The child's name is the test's (no exec). */
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		fprintf(stderr, "  /proc/self/comm: %s\n", n < 0 ? strerror(errno) : "empty");
	comm[n > 0 ? n : 0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	setup(1);
	snap.cpu.rows.keys[0] = (uint64_t)pid;
	xpu_table_row(&snap.cpu.rows, 0)[XPU_CPU_COL_COMM].s = comm;
	xpu_table_row(&snap.cpu.rows, 0)[XPU_CPU_COL_COMM].na = 0;	/* a name, not "n/a" */
	return pid;
}

/* The child's end, 5 s at most (then it is killed and the test fails):
 * its wait status, or -1. */
static int reap(pid_t pid)
{
	int st;
	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* htop's k and F9: a menu of signals at SIGTERM, Enter, then y. */
TEST(k_sends_the_signal_chosen_in_its_menu_after_y)
{
	pid_t pid = child_row();
	int st;
	CHECK_INT(key('k'), ==, XPU_REACT_REDRAW);
	CHECK_INT(ui.act.ask, ==, XPU_ASK_SIGNAL);
	CHECK_STR(xpu_act_signals[ui.act.sig_row].name, "SIGTERM");
	CHECK_INT(key('j'), ==, XPU_REACT_REDRAW);	/* the menu's, not the table's */
	key(KEY_UP);
	key('\r');
	CHECK_INT(ui.act.ask, ==, XPU_ASK_CONFIRM);
	key('y');
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	st = reap(pid);
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

TEST(any_answer_but_y_and_esc_in_the_menu_send_nothing)
{
	pid_t pid = child_row();
	int st;
	key(KEY_F(9));
	key(27);
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	key('k');
	key('\r');
	key('n');
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	CHECK_INT(waitpid(pid, &st, WNOHANG), ==, 0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* htop's F8 and [ lower the priority a step, F7 and ] raise it. */
TEST(f8_renices_the_selected_process_one_step_after_y)
{
	pid_t pid = child_row();
	int st;
	/* From the nice value the tests run at (a niced lane's, say). */
	int nice0 = getpriority(PRIO_PROCESS, (id_t)pid);
	key(KEY_F(8));
	CHECK_INT(ui.act.ask, ==, XPU_ASK_CONFIRM);
	CHECK_INT(ui.act.nice, ==, nice0 + 1);
	key('y');
	CHECK_INT(getpriority(PRIO_PROCESS, (id_t)pid), ==, nice0 + 1);
	key('[');
	key('x');	/* no */
	CHECK_INT(getpriority(PRIO_PROCESS, (id_t)pid), ==, nice0 + 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

TEST(kill_is_refused_in_a_replay_and_outside_the_cpu_view)
{
	setup(3);
	snap.replay = 1;
	key('k');
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
	snap.replay = 0;
	vs.view = XPU_VIEW_GPU;
	key(KEY_F(7));
	CHECK_INT(ui.act.ask, ==, XPU_ASK_NONE);
}
