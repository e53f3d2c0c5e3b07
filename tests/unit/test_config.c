/* SPDX-License-Identifier: GPL-2.0-only */
/* The settings file: what a line sets, what a bad one does (one warning,
 * with the file and line, and nothing else), the version check, options
 * winning over the file, and saving whole or not at all. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "model_cpu.h"
#include "model_npu.h"
#include "snapshot.h"

static int nwarn;
static char warns[4096];

static void capture(void *ctx, int level, const char *msg)
{
	if (level != XPU_LOG_WARN && level != XPU_LOG_ERR)
		return;
	nwarn++;
	size_t n = strlen(warns);
	snprintf(warns + n, sizeof(warns) - n, "%s\n", msg);
}

static void listen(void)
{
	nwarn = 0;
	warns[0] = '\0';
	xpu_log_set_sink(capture, NULL);
}

static struct xpu_settings st;

static int parse(const char *text)
{
	xpu_settings_init(&st);
	listen();
	int r = xpu_config_parse(&st, text, "x.conf");
	xpu_log_set_sink(NULL, NULL);
	return r;
}

/* Parses a command line; its usage hint to stderr is kept off the test's output. */
static int parse_argv(struct xpu_opts *o, const char *a1, const char *a2)
{
	char *argv[] = { "xputop", (char *)a1, (char *)a2, NULL };
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	listen();
	int r = xpu_opts_parse(o, a2 ? 3 : a1 ? 2 : 1, argv);
	xpu_log_set_sink(NULL, NULL);
	dup2(saved, 2);
	close(saved);
	close(null);
	return r;
}

TEST(every_key_is_read)
{
	CHECK_INT(parse("version = 1\n"
			"view = npu\n"
			"theme = light\n"
			"sort-cpu = samples\n"
			"reverse-cpu = yes\n"
			"sort-npu = errors\n"
			"threads = yes\n"
			"since-start = on\n"
			"flame = no\n"
			"mouse = false\n"
			"delay = 0.5\n"
			"freq = 49\n"
			"window = 30\n"
			"npu-tdr = 5000\n"
			"npu-storm = 7.5\n"
			"npu-silence = 250\n"), ==, 0);
	CHECK_INT(st.view, ==, XPU_VIEW_NPU);
	CHECK_STR(st.theme, "light");
	CHECK_INT(st.sort_col[XPU_VIEW_CPU], ==, XPU_CPU_COL_SAMPLES);
	CHECK_INT(st.reverse[XPU_VIEW_CPU], ==, 1);
	CHECK_INT(st.sort_col[XPU_VIEW_NPU], ==, XPU_NPU_COL_ERRORS);
	CHECK_INT(st.sort_col[XPU_VIEW_GPU], ==, -1);
	CHECK_INT(st.threads, ==, 1);
	CHECK_INT(st.since_start, ==, 1);
	CHECK_INT(st.flame, ==, 0);
	CHECK_INT(st.mouse, ==, 0);
	CHECK(st.delay_s == 0.5);
	CHECK_INT(st.hz, ==, 49);
	CHECK(st.window_s == 30);
	CHECK_INT(st.npu_tdr_ms, ==, 5000);
	CHECK(st.npu_storm == 7.5);
	CHECK_INT(st.npu_silence_ms, ==, 250);
	CHECK(!(st.set & XPU_SET_SORT(XPU_VIEW_GPU)));
	CHECK(st.set & XPU_SET_SORT(XPU_VIEW_CPU));
	CHECK(st.set & XPU_SET_NPU_SILENCE);
}

TEST(comments_blank_lines_spaces_and_case_are_allowed)
{
	CHECK_INT(parse("# settings\n\n   \nversion=1\n  VIEW   =   GPU   # the GPU first\n"
			"theme = my#theme\n\tthreads\t=\tYes\n"), ==, 0);
	CHECK_INT(st.view, ==, XPU_VIEW_GPU);
	CHECK_STR(st.theme, "my#theme");
	CHECK_INT(st.threads, ==, 1);
}

TEST(an_unknown_key_is_one_warning_with_file_and_line)
{
	CHECK_INT(parse("version = 1\nview = gpu\ncolour = blue\nthreads = yes\n"), ==, 1);
	CHECK_INT(nwarn, ==, 1);
	CHECK(strstr(warns, "x.conf:3: unknown key 'colour'") != NULL);
	CHECK_INT(st.view, ==, XPU_VIEW_GPU);
	CHECK_INT(st.threads, ==, 1);
}

TEST(a_bad_value_is_one_warning_and_the_setting_keeps_its_default)
{
	CHECK_INT(parse("version = 1\nview = tpu\ndelay = 0\nfreq = 99.5\nthreads = maybe\n"
			"sort-cpu = nosuchcolumn\nnpu-storm = 1\nwindow =\n"), ==, 7);
	CHECK(strstr(warns, "x.conf:2: bad value 'tpu' for view (expected gpu, npu or cpu)") != NULL);
	CHECK(strstr(warns, "x.conf:3: bad value '0' for delay (expected 0.05 to 3600)") != NULL);
	CHECK(strstr(warns, "x.conf:4: bad value '99.5' for freq") != NULL);
	CHECK(strstr(warns, "x.conf:5: bad value 'maybe' for threads (expected yes or no)") != NULL);
	CHECK(strstr(warns, "x.conf:6: bad value 'nosuchcolumn' for sort-cpu (expected default, pid,") != NULL);
	CHECK(strstr(warns, "x.conf:8: no value for window") != NULL);
	CHECK_INT(st.set, ==, 0);
	CHECK_INT(st.view, ==, XPU_VIEW_CPU);
	CHECK(st.delay_s == 1.0);
	CHECK_INT(st.hz, ==, 99);
}

TEST(a_line_without_an_equals_sign_is_a_warning)
{
	CHECK_INT(parse("version = 1\nview gpu\n= cpu\n"), ==, 2);
	CHECK(strstr(warns, "x.conf:2: expected 'key = value'") != NULL);
	CHECK(strstr(warns, "x.conf:3: expected 'key = value'") != NULL);
	CHECK(!(st.set & XPU_SET_VIEW));
}

TEST(an_over_long_line_is_a_warning_and_the_next_line_still_counts)
{
	char text[3000];
	int n = snprintf(text, sizeof(text), "version = 1\ntheme = ");
	memset(text + n, 'a', 2000);
	snprintf(text + n + 2000, sizeof(text) - (size_t)n - 2000, "\nview = npu\n");
	CHECK_INT(parse(text), ==, 1);
	CHECK(strstr(warns, "x.conf:2: line longer than") != NULL);
	CHECK_INT(st.view, ==, XPU_VIEW_NPU);
	CHECK_STR(st.theme, "dark");
}

TEST(control_characters_in_a_bad_value_are_not_echoed)
{
	CHECK_INT(parse("version = 1\nview = \033[2Jgpu\n"), ==, 1);
	CHECK(strchr(warns, '\033') == NULL);
	CHECK(strstr(warns, "'?[2Jgpu'") != NULL);
}

TEST(a_file_without_a_version_is_read_as_version_1_with_a_warning)
{
	CHECK_INT(parse("view = gpu\n"), ==, 1);
	CHECK(strstr(warns, "x.conf: no 'version = 1' line") != NULL);
	CHECK_INT(st.view, ==, XPU_VIEW_GPU);
	CHECK_INT(st.newer, ==, 0);
}

TEST(a_bad_version_is_a_warning)
{
	CHECK_INT(parse("version = one\nview = gpu\n"), ==, 1);
	CHECK(strstr(warns, "x.conf:1: bad version 'one'") != NULL);
	CHECK_INT(st.view, ==, XPU_VIEW_GPU);
	CHECK_INT(parse("version = 0\n"), ==, 1);
}

TEST(a_newer_version_is_read_as_far_as_known_and_never_overwritten)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[256], msg[512];
	REQUIRE(mkdtemp(dir));
	CHECK_INT(parse("view = npu\nversion = 2\nfuture-key = 1\nthreads = yes\n"), ==, 1);
	CHECK(strstr(warns, "x.conf:2: written by a newer xputop (settings version 2") != NULL);
	CHECK(strstr(warns, "future-key") == NULL);
	CHECK_INT(st.newer, ==, 1);
	CHECK_INT(st.view, ==, XPU_VIEW_NPU);
	CHECK_INT(st.threads, ==, 1);
	snprintf(path, sizeof(path), "%s/xputop.conf", dir);
	listen();
	CHECK_INT(xpu_config_save(&st, path, msg, sizeof(msg)), ==, -1);
	xpu_log_set_sink(NULL, NULL);
	CHECK(strstr(warns, "written by a newer xputop") != NULL);
	CHECK(access(path, F_OK) < 0);
	rmdir(dir);
}

TEST(the_file_fills_what_the_command_line_left_unset)
{
	struct xpu_opts o;
	struct xpu_viewstate vs;
	REQUIRE(parse_argv(&o, NULL, NULL) == 0);
	xpu_viewstate_init(&vs);
	CHECK_INT(parse("version = 1\nview = gpu\ntheme = light\ndelay = 2\nfreq = 49\nwindow = 30\n"
			"npu-tdr = 5000\nnpu-storm = 7\nnpu-silence = 300\nsort-cpu = samples\n"
			"reverse-cpu = yes\nthreads = yes\nsince-start = yes\nflame = no\n"
			"tree = yes\ncommand-line = yes\ncpu-meters = yes\nhot-functions = yes\n"), ==, 0);
	xpu_config_apply(&st, &o, &vs);
	CHECK_INT(o.view, ==, XPU_VIEW_GPU);
	CHECK_STR(o.theme, "light");
	CHECK(o.delay_s == 2);
	CHECK_INT(o.hz, ==, 49);
	CHECK(o.window_s == 30);
	CHECK_INT(o.npu_tdr_ms, ==, 5000);
	CHECK(o.npu_storm == 7);
	CHECK_INT(o.npu_silence_ms, ==, 300);
	CHECK_INT(vs.sort_col[XPU_VIEW_CPU], ==, XPU_CPU_COL_SAMPLES);
	CHECK_INT(vs.reverse[XPU_VIEW_CPU], ==, 1);
	CHECK_INT(vs.threads, ==, 1);
	CHECK_INT(vs.window, ==, XPU_WIN_ALL);
	CHECK_INT(vs.flame, ==, 0);
	CHECK_INT(vs.tree, ==, 1);
	CHECK_INT(vs.cmdline, ==, 1);
	CHECK_INT(vs.meters, ==, 1);
	CHECK_INT(vs.hot, ==, 1);
}

TEST(command_line_options_override_the_file)
{
	static const char *const args[][2] = {
		{ "--view", "cpu" }, { "-t", "mono" }, { "-d", "1" }, { "-F", "99" }, { "--window", "10" },
		{ "--npu-tdr", "2000" }, { "--npu-storm", "5" }, { "--npu-silence", "1000" },
	};
	CHECK_INT(parse("version = 1\nview = gpu\ntheme = light\ndelay = 2\nfreq = 49\nwindow = 30\n"
			"npu-tdr = 5000\nnpu-storm = 7\nnpu-silence = 300\n"), ==, 0);
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		struct xpu_opts o, plain;
		struct xpu_viewstate vs;
		REQUIRE(parse_argv(&o, args[i][0], args[i][1]) == 0);
		REQUIRE(parse_argv(&plain, args[i][0], args[i][1]) == 0);
		xpu_viewstate_init(&vs);
		xpu_config_apply(&st, &o, &vs);
		/* The option's own setting is untouched (values given equal the defaults,
		 * so only a "given" mark can protect them). */
		if (i == 0)
			CHECK_INT(o.view, ==, plain.view);
		if (i == 1)
			CHECK_STR(o.theme, plain.theme);
		if (i == 2)
			CHECK(o.delay_s == plain.delay_s);
		if (i == 3)
			CHECK_INT(o.hz, ==, plain.hz);
		if (i == 4)
			CHECK(o.window_s == plain.window_s);
		if (i == 5)
			CHECK_INT(o.npu_tdr_ms, ==, plain.npu_tdr_ms);
		if (i == 6)
			CHECK(o.npu_storm == plain.npu_storm);
		if (i == 7)
			CHECK_INT(o.npu_silence_ms, ==, plain.npu_silence_ms);
		if (i != 0)
			CHECK_INT(o.view, ==, XPU_VIEW_GPU);	/* the rest still comes from the file */
	}
}

/* Each numeric key of the file takes exactly what its option takes: the
 * two parse apart (the file, strtod; options, decimal only) from one table. */
TEST(numeric_keys_accept_the_ranges_of_their_options)
{
	int n = 0;
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		if (!e->bit || (e->kind != XPU_SK_DOUBLE && e->kind != XPU_SK_U32))
			continue;
		double step = e->kind == XPU_SK_DOUBLE ? 0.01 : 1;
		const double ok[2] = { e->lo, e->hi }, bad[2] = { e->lo - step, e->hi + step };
		char opt[64], text[128], v[32];
		xpu_setting_optname(e, opt, sizeof(opt));
		for (int k = 0; k < 2; k++) {
			struct xpu_opts o;
			snprintf(v, sizeof(v), "%.15g", ok[k]);
			snprintf(text, sizeof(text), "version = 1\n%s = %s\n", e->name, v);
			CHECK_INT(parse(text), ==, 0);
			CHECK_INT(parse_argv(&o, opt, v), ==, 0);
			snprintf(v, sizeof(v), "%.15g", bad[k]);
			snprintf(text, sizeof(text), "version = 1\n%s = %s\n", e->name, v);
			CHECK_INT(parse(text), ==, 1);
			CHECK_INT(parse_argv(&o, opt, v), ==, -1);
		}
		n++;
	}
	CHECK_INT(n, ==, 6);	/* delay, freq, window, npu-tdr, npu-storm, npu-silence */
}

/* Each key of the file that is also an option sets what the option sets. */
TEST(a_key_and_its_option_set_the_same)
{
	int n = 0;
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		struct xpu_opts by_opt, by_file;
		struct xpu_viewstate vs;
		char opt[64], text[128], v[32];
		if (!e->bit)
			continue;
		if (e->kind == XPU_SK_ENUM)
			snprintf(v, sizeof(v), "%s", e->names[1]);
		else if (e->kind == XPU_SK_STRING)
			snprintf(v, sizeof(v), "light");
		else
			snprintf(v, sizeof(v), "%.15g", e->hi);
		REQUIRE(parse_argv(&by_opt, xpu_setting_optname(e, opt, sizeof(opt)), v) == 0);
		REQUIRE(parse_argv(&by_file, NULL, NULL) == 0);
		snprintf(text, sizeof(text), "version = 1\n%s = %s\n", e->name, v);
		CHECK_INT(parse(text), ==, 0);
		xpu_viewstate_init(&vs);
		xpu_config_apply(&st, &by_file, &vs);
		if (e->kind == XPU_SK_STRING)
			CHECK_STR(*(const char **)((char *)&by_file + e->off), v);
		else
			CHECK(memcmp((char *)&by_file + e->off, (char *)&by_opt + e->off,
				     e->kind == XPU_SK_DOUBLE ? sizeof(double) : sizeof(uint32_t)) == 0);
		n++;
	}
	CHECK_INT(n, ==, 8);	/* view, theme and the six numbers */
}

/* -s and sort-npu name a column of any NPU table shown: the driver
 * functions', the clients', the chains' (numbered after the first table's in
 * turn), and what is saved reads back as the same column. */
TEST(the_npu_views_further_tables_sort_and_save_by_their_keys)
{
	const struct xpu_snap_view *d = xpu_snap_views[XPU_VIEW_NPU];
	char expect[1024], text[8192];
	struct xpu_viewstate vs;
	struct xpu_settings back;
	static const struct {
		const char *key;
		int table, col;
	} cases[] = {
		{ "category", 0, XPU_NPU_FCOL_CAT }, { "resident_bytes", 1, XPU_NPU_KCOL_RESIDENT },
		{ "engine_pct", 1, XPU_NPU_KCOL_ENGINE }, { "l0", 2, XPU_NPU_CCOL_L0 },
		{ "ioctl", 2, XPU_NPU_CCOL_IOCTL },
	};

	CHECK_INT(xpu_config_sort_col(XPU_VIEW_NPU, "comm", expect, sizeof(expect)), ==, XPU_NPU_COL_COMM);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int col = xpu_config_sort_col(XPU_VIEW_NPU, cases[i].key, expect, sizeof(expect));
		CHECK_INT(col, >=, XPU_NPU_NCOLS);
		CHECK_INT(xpu_snap_more_col(d, cases[i].table, col), ==, cases[i].col);
		for (int k = 0; k < XPU_SNAP_MORE_MAX; k++)
			if (k != cases[i].table)
				CHECK_INT(xpu_snap_more_col(d, k, col), ==, -1);
		xpu_settings_init(&st);
		xpu_viewstate_init(&vs);
		vs.sort_col[XPU_VIEW_NPU] = col;
		xpu_config_capture(&st, &vs, "dark");
		xpu_config_format(&st, text, sizeof(text));
		char want[64];
		snprintf(want, sizeof(want), "sort-npu = %s\n", cases[i].key);
		CHECK(strstr(text, want) != NULL);
		xpu_settings_init(&back);
		CHECK_INT(xpu_config_parse(&back, text, "saved"), ==, 0);
		CHECK_INT(back.sort_col[XPU_VIEW_NPU], ==, col);
	}
	CHECK_INT(xpu_config_sort_col(XPU_VIEW_NPU, "nosuch", expect, sizeof(expect)), ==, -1);
	CHECK(strstr(expect, ", l0, ioctl") != NULL);
	CHECK(strstr(expect, "resident_bytes") != NULL);
}

TEST(what_is_saved_reads_back_the_same)
{
	struct xpu_viewstate vs;
	struct xpu_settings back;
	char text[8192];

	xpu_settings_init(&st);
	st.set |= XPU_SET_DELAY;
	st.delay_s = 0.25;
	xpu_viewstate_init(&vs);
	vs.view = XPU_VIEW_NPU;
	vs.sort_col[XPU_VIEW_NPU] = XPU_NPU_COL_P99;
	vs.reverse[XPU_VIEW_CPU] = 1;
	vs.threads = 1;
	vs.window = XPU_WIN_ALL;
	vs.flame = 0;
	vs.tree = 1;
	vs.meters = 1;
	vs.hot = 1;
	xpu_config_capture(&st, &vs, "high-contrast");
	xpu_config_format(&st, text, sizeof(text));
	CHECK(strstr(text, "version = 1\n") != NULL);
	CHECK(strstr(text, "sort-npu = p99_ns\n") != NULL);
	CHECK(strstr(text, "# freq = 99\n") != NULL);	/* not set: shown commented out */
	xpu_settings_init(&back);
	listen();
	CHECK_INT(xpu_config_parse(&back, text, "saved"), ==, 0);
	xpu_log_set_sink(NULL, NULL);
	CHECK_INT(back.view, ==, XPU_VIEW_NPU);
	CHECK_INT(back.sort_col[XPU_VIEW_NPU], ==, XPU_NPU_COL_P99);
	CHECK_INT(back.sort_col[XPU_VIEW_CPU], ==, -1);
	CHECK_INT(back.reverse[XPU_VIEW_CPU], ==, 1);
	CHECK_INT(back.threads, ==, 1);
	CHECK_INT(back.since_start, ==, 1);
	CHECK_INT(back.flame, ==, 0);
	CHECK_INT(back.tree, ==, 1);
	CHECK_INT(back.cmdline, ==, 0);
	CHECK_INT(back.meters, ==, 1);
	CHECK_INT(back.hot, ==, 1);
	CHECK(strstr(text, "command-line = no\n") != NULL);
	CHECK_STR(back.theme, "high-contrast");
	CHECK(back.delay_s == 0.25);
	CHECK(!(back.set & XPU_SET_FREQ));
}

static int count_entries(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

TEST(saving_replaces_the_file_whole_and_keeps_its_permissions)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[256], msg[512];
	struct stat sb;
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xputop.conf", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	REQUIRE(fd >= 0);
	CHECK_INT(write(fd, "version = 1\nview = gpu\n", 23), ==, 23);
	close(fd);
	chmod(path, 0600);
	xpu_settings_init(&st);
	st.view = XPU_VIEW_NPU;
	st.set |= XPU_SET_VIEW;
	CHECK_INT(xpu_config_save(&st, path, msg, sizeof(msg)), ==, 0);
	CHECK(strstr(msg, "settings saved to ") != NULL);
	CHECK_INT(stat(path, &sb), ==, 0);
	CHECK_INT(sb.st_mode & 0777, ==, 0600);
	struct xpu_settings back;
	xpu_settings_init(&back);
	CHECK_INT(xpu_config_load(&back, path), ==, 0);
	CHECK_INT(back.view, ==, XPU_VIEW_NPU);
	CHECK_INT(count_entries(dir), ==, 1);	/* no temporary file left behind */
	unlink(path);
	rmdir(dir);
}

TEST(saving_through_a_symbolic_link_writes_the_file_it_points_to)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[256], real[256], msg[512];
	struct stat sb;
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xputop.conf", dir);
	snprintf(real, sizeof(real), "%s/dotfiles.conf", dir);
	REQUIRE(symlink("dotfiles.conf", path) == 0);
	xpu_settings_init(&st);
	CHECK_INT(xpu_config_save(&st, path, msg, sizeof(msg)), ==, 0);
	CHECK_INT(lstat(path, &sb), ==, 0);
	CHECK(S_ISLNK(sb.st_mode));
	CHECK_INT(stat(real, &sb), ==, 0);
	CHECK(sb.st_size > 0);
	unlink(path);
	unlink(real);
	rmdir(dir);
}

TEST(a_save_that_cannot_happen_says_why_and_leaves_nothing)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[256], msg[512];
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing/xputop.conf", dir);
	xpu_settings_init(&st);
	listen();
	CHECK_INT(xpu_config_save(&st, path, msg, sizeof(msg)), ==, -1);
	xpu_log_set_sink(NULL, NULL);
	CHECK(strstr(warns, "cannot save settings to ") != NULL);
	CHECK(strstr(warns, "No such file or directory") != NULL);
	CHECK_INT(count_entries(dir), ==, 0);
	rmdir(dir);
}

TEST(the_default_file_is_under_xdg_config_home_and_its_directories_are_made)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[512], want[512], msg[600];
	struct stat sb;
	REQUIRE(mkdtemp(dir));
	setenv("XDG_CONFIG_HOME", dir, 1);
	CHECK_INT(xpu_config_path(path, sizeof(path)), ==, 0);
	snprintf(want, sizeof(want), "%s/xputop/xputop.conf", dir);
	CHECK_STR(path, want);
	xpu_settings_init(&st);
	CHECK_INT(xpu_config_load(&st, NULL), ==, 0);	/* none yet: no error */
	CHECK_INT(xpu_config_save(&st, NULL, msg, sizeof(msg)), ==, 0);
	CHECK_INT(stat(want, &sb), ==, 0);
	snprintf(path, sizeof(path), "%s/xputop", dir);
	CHECK_INT(stat(path, &sb), ==, 0);
	CHECK_INT(sb.st_mode & 0777, ==, 0700);
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);	/* invalid: ignored */
	setenv("HOME", dir, 1);
	CHECK_INT(xpu_config_path(path, sizeof(path)), ==, 0);
	snprintf(want, sizeof(want), "%s/.config/xputop/xputop.conf", dir);
	CHECK_STR(path, want);
	unsetenv("XDG_CONFIG_HOME");
	snprintf(want, sizeof(want), "rm -rf %s", dir);
	CHECK_INT(system(want), ==, 0);
}

TEST(a_named_file_must_exist_and_be_a_small_text_file)
{
	char dir[] = "/tmp/xputop-config-XXXXXX", path[256];
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nope.conf", dir);
	xpu_settings_init(&st);
	listen();
	CHECK_INT(xpu_config_load(&st, path), ==, -1);
	CHECK(strstr(warns, "cannot read the settings file ") != NULL);
	CHECK_INT(xpu_config_load(&st, dir), ==, -1);
	CHECK(strstr(warns, "not a text file") != NULL);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	REQUIRE(fd >= 0);
	CHECK_INT(ftruncate(fd, 65 * 1024), ==, 0);
	close(fd);
	CHECK_INT(xpu_config_load(&st, path), ==, -1);
	CHECK(strstr(warns, "larger than 64 KiB") != NULL);
	xpu_log_set_sink(NULL, NULL);
	unlink(path);
	rmdir(dir);
}
