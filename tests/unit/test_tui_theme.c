/* SPDX-License-Identifier: GPL-2.0-only */
/* Theme files: parsed into a role table without a terminal, with one warning
 * per bad line; colours mapped to the nearest the terminal has. */
#include "check.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

#include "theme.h"

static int nwarn;
static char last_warn[512];

static void capture(void *ctx, int level, const char *msg)
{
	if (level == XPU_LOG_WARN)
		nwarn++;
	snprintf(last_warn, sizeof(last_warn), "%s", msg);
}

static int parse(struct xpu_theme *t, const char *text)
{
	*t = xpu_theme_default;
	nwarn = 0;
	last_warn[0] = '\0';
	xpu_log_set_sink(capture, NULL);
	int r = xpu_theme_parse(t, text, "test.theme");
	xpu_log_set_sink(NULL, NULL);
	return r;
}

/* themes/NAME.theme of this source tree. */
static char *read_shipped(const char *name)
{
	char path[1024], *text = NULL;
	const char *file = __FILE__, *slash = strrchr(file, '/');
	int dir = slash ? (int)(slash - file) : 0;
	snprintf(path, sizeof(path), "%.*s%s../../themes/%s.theme", dir, file, dir ? "/" : "", name);
	if (xpu_theme_read(path, &text) != 0) {
		snprintf(path, sizeof(path), "themes/%s.theme", name);
		if (xpu_theme_read(path, &text) != 0)
			return NULL;
	}
	return text;
}

static int same_theme(const struct xpu_theme *a, const struct xpu_theme *b)
{
	int same = 1;
	for (int r = 0; r < XPU_ROLE_MAX; r++) {
		const struct xpu_style *x = &a->role[r], *y = &b->role[r];
		if (x->fg != y->fg || x->bg != y->bg || x->attr != y->attr) {
			fprintf(stderr, "  role %s differs\n", xpu_role_name(r));
			same = 0;
		}
	}
	return same;
}

TEST(dark_theme_file_is_the_built_in_default)
{
	struct xpu_theme t;
	char *text = read_shipped("dark");
	REQUIRE(text);
	memset(&t, 0, sizeof(t));
	xpu_log_set_sink(capture, NULL);
	nwarn = 0;
	xpu_theme_parse(&t, text, "dark.theme");
	xpu_log_set_sink(NULL, NULL);
	CHECK_INT(nwarn, ==, 0);
	CHECK(same_theme(&t, &xpu_theme_default));
	free(text);
}

TEST(mono_theme_file_is_the_no_color_look)
{
	struct xpu_theme t;
	char *text = read_shipped("mono");
	REQUIRE(text);
	memset(&t, 0, sizeof(t));
	CHECK_INT(xpu_theme_parse(&t, text, "mono.theme"), ==, 0);
	CHECK(same_theme(&t, &xpu_theme_mono));
	for (int r = 0; r < XPU_ROLE_MAX; r++) {
		CHECK_INT(xpu_theme_mono.role[r].fg, ==, XPU_COLOR_DEFAULT);
		CHECK_INT(xpu_theme_mono.role[r].bg, ==, XPU_COLOR_DEFAULT);
	}
	free(text);
}

TEST(light_theme_file_names_every_role_without_warnings)
{
	struct xpu_theme t;
	char *text = read_shipped("light");
	REQUIRE(text);
	CHECK_INT(parse(&t, text), ==, 0);
	for (int r = 0; r < XPU_ROLE_MAX; r++)
		CHECK(strstr(text, xpu_role_name(r)) != NULL);
	free(text);
}

TEST(a_line_sets_foreground_background_and_attributes)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "header = bright-white on blue bold underline\n"), ==, 0);
	CHECK_INT(t.role[XPU_ROLE_HEADER].fg, ==, 15);
	CHECK_INT(t.role[XPU_ROLE_HEADER].bg, ==, 4);
	CHECK_INT(t.role[XPU_ROLE_HEADER].attr, ==, XPU_ATTR_BOLD | XPU_ATTR_UNDERLINE);
}

TEST(colours_are_names_indexes_or_rgb)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "row = 208 on #1a2B3c\nna = default dim reverse\n"), ==, 0);
	CHECK_INT(t.role[XPU_ROLE_ROW].fg, ==, 208);
	CHECK_INT(t.role[XPU_ROLE_ROW].bg, ==, XPU_COLOR_RGB | 0x1a2b3c);
	CHECK_INT(t.role[XPU_ROLE_NA].fg, ==, XPU_COLOR_DEFAULT);
	CHECK_INT(t.role[XPU_ROLE_NA].attr, ==, XPU_ATTR_DIM | XPU_ATTR_REVERSE);
}

TEST(comments_and_blank_lines_are_ignored)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "# a comment\n\n   \n  # indented\nrow = #ff0000 # red rows\n"), ==, 0);
	CHECK_INT(t.role[XPU_ROLE_ROW].fg, ==, XPU_COLOR_RGB | 0xff0000);
	CHECK_INT(t.role[XPU_ROLE_ROW].attr, ==, 0);
}

TEST(an_unknown_role_is_one_warning_and_its_line_is_skipped)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "nosuchrole = red\nrow = green\n"), ==, 1);
	CHECK_INT(nwarn, ==, 1);
	CHECK(strstr(last_warn, "test.theme:1") != NULL);
	CHECK(strstr(last_warn, "nosuchrole") != NULL);
	CHECK_INT(t.role[XPU_ROLE_ROW].fg, ==, 2);
}

TEST(an_unknown_colour_is_one_warning_and_the_role_keeps_its_style)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "row = green\nheader = purple on blue\nbrand = red on #12345\n"), ==, 2);
	CHECK_INT(nwarn, ==, 2);
	CHECK(strstr(last_warn, "test.theme:3") != NULL);
	CHECK_INT(t.role[XPU_ROLE_HEADER].fg, ==, xpu_theme_default.role[XPU_ROLE_HEADER].fg);
	CHECK_INT(t.role[XPU_ROLE_BRAND].bg, ==, xpu_theme_default.role[XPU_ROLE_BRAND].bg);
	CHECK_INT(t.role[XPU_ROLE_ROW].fg, ==, 2);
}

TEST(malformed_lines_are_warnings_not_errors)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "row green\nrow =\nrow = red on\nrow = red blue\nrow = 256\n"), ==, 5);
	CHECK(same_theme(&t, &xpu_theme_default));
}

TEST(missing_roles_keep_the_built_in_default)
{
	struct xpu_theme t;
	CHECK_INT(parse(&t, "row = red\n"), ==, 0);
	for (int r = 0; r < XPU_ROLE_MAX; r++)
		if (r != XPU_ROLE_ROW)
			CHECK_INT(t.role[r].bg, ==, xpu_theme_default.role[r].bg);
}

TEST(every_role_has_a_distinct_name)
{
	for (int r = 0; r < XPU_ROLE_MAX; r++)
		for (int q = 0; q < r; q++)
			CHECK(strcmp(xpu_role_name(r), xpu_role_name(q)) != 0);
}

TEST(colours_the_terminal_has_are_used_as_they_are)
{
	CHECK_INT(xpu_color_resolve(XPU_COLOR_DEFAULT, 8), ==, -1);
	CHECK_INT(xpu_color_resolve(3, 8), ==, 3);
	CHECK_INT(xpu_color_resolve(208, 256), ==, 208);
	CHECK_INT(xpu_color_resolve(12, 16), ==, 12);
}

TEST(rgb_maps_to_the_256_colour_cube_or_grey_ramp)
{
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xff0000, 256), ==, 196);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xffaf00, 256), ==, 214);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x808080, 256), ==, 244);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x000000, 256), ==, 16);
}

TEST(rgb_and_high_indexes_map_to_the_nearest_of_eight)
{
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xff0000, 8), ==, 1);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x0000ff, 8), ==, 4);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x5fd75f, 8), ==, 2);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xffaf00, 8), ==, 3);
	CHECK_INT(xpu_color_resolve(9, 8), ==, 1);	/* bright-red */
	CHECK_INT(xpu_color_resolve(51, 8), ==, 6);	/* cube cyan */
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xffffff, 8), ==, 7);
}

TEST(a_name_with_a_slash_is_a_path)
{
	char path[256];
	CHECK_INT(xpu_theme_find("/nonexistent/x.theme", path, sizeof(path)), ==, -ENOENT);
	CHECK_INT(xpu_theme_find("/dev/null", path, sizeof(path)), ==, 0);
	CHECK_STR(path, "/dev/null");
}

TEST(a_name_is_looked_up_in_the_user_config_dir_first)
{
	char dir[] = "/tmp/xputop-theme-XXXXXX", sub[300], file[350], path[512];
	REQUIRE(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/xputop", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/xputop/themes", dir);
	mkdir(sub, 0700);
	snprintf(file, sizeof(file), "%s/dark.theme", sub);
	FILE *f = fopen(file, "w");
	REQUIRE(f);
	fputs("row = red\n", f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", dir, 1);
	CHECK_INT(xpu_theme_find("dark", path, sizeof(path)), ==, 0);
	CHECK_STR(path, file);
	CHECK_INT(xpu_theme_find("no-such-theme-anywhere", path, sizeof(path)), ==, -ENOENT);
	unsetenv("XDG_CONFIG_HOME");
	unlink(file);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/xputop", dir);
	rmdir(sub);
	rmdir(dir);
}

TEST(every_shipped_theme_names_every_role_without_warnings)
{
	static const char *const names[] = { "dark", "light", "high-contrast", "mono" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct xpu_theme t;
		char *text = read_shipped(names[i]);
		REQUIRE(text);
		CHECK_INT(parse(&t, text), ==, 0);
		for (int r = 0; r < XPU_ROLE_MAX; r++) {
			char line[64];
			snprintf(line, sizeof(line), "\n%s ", xpu_role_name(r));
			if (!strstr(text, line))
				fprintf(stderr, "  %s.theme lacks %s\n", names[i], xpu_role_name(r));
			CHECK(strstr(text, line) != NULL);
		}
		free(text);
	}
}

TEST(high_contrast_gives_every_role_its_own_background_and_nothing_dim)
{
	struct xpu_theme t;
	char *text = read_shipped("high-contrast");
	REQUIRE(text);
	CHECK_INT(parse(&t, text), ==, 0);
	for (int r = 0; r < XPU_ROLE_MAX; r++) {
		CHECK(t.role[r].bg != XPU_COLOR_DEFAULT);
		CHECK(t.role[r].fg != XPU_COLOR_DEFAULT);
		CHECK(!(t.role[r].attr & XPU_ATTR_DIM));
	}
	free(text);
}

TEST(rgb_and_high_indexes_map_to_the_nearest_of_sixteen)
{
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xff0000, 16), ==, 9);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xcd0000, 16), ==, 1);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x000000, 16), ==, 0);
	CHECK_INT(xpu_color_resolve(231, 16), ==, 15);	/* cube white */
}

TEST(a_direct_colour_terminal_gets_rgb_and_keeps_the_eight_ansi_colours)
{
	int direct = 1 << 24;
	CHECK_INT(xpu_color_resolve(XPU_COLOR_DEFAULT, direct), ==, -1);
	CHECK_INT(xpu_color_resolve(4, direct), ==, 4);	/* blue: the user's blue */
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0xffaf00, direct), ==, 0xffaf00);
	CHECK_INT(xpu_color_resolve(214, direct), ==, 0xffaf00);	/* cube index as RGB */
	CHECK_INT(xpu_color_resolve(9, direct), ==, 0xff0000);	/* bright red: xterm's */
	CHECK_INT(xpu_color_resolve(244, direct), ==, 0x808080);	/* grey ramp */
	/* Below 256 a value would be a palette index: a trace of green keeps it RGB. */
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x0000ff, direct), ==, 0x0001ff);
	CHECK_INT(xpu_color_resolve(XPU_COLOR_RGB | 0x000000, direct), ==, 0x000100);
}

TEST(the_theme_list_puts_the_shipped_ones_first_and_each_once)
{
	char dir[] = "/tmp/xputop-theme-XXXXXX", sub[300], file[400];
	char names[32][XPU_THEME_NAME_MAX];
	REQUIRE(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/xputop", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/xputop/themes", dir);
	mkdir(sub, 0700);
	static const char *const files[] = { "zebra.theme", "dark.theme", "amber.theme", "notes.txt",
					     ".hidden.theme" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", sub, files[i]);
		FILE *f = fopen(file, "w");
		REQUIRE(f);
		fclose(f);
	}
	setenv("XDG_CONFIG_HOME", dir, 1);
	int n = xpu_theme_list(names, 32);
	unsetenv("XDG_CONFIG_HOME");
	/* The shipped four come from the source tree's themes/ (the test runs in it). */
	REQUIRE(n == 6);
	CHECK_STR(names[0], "dark");
	CHECK_STR(names[1], "light");
	CHECK_STR(names[2], "high-contrast");
	CHECK_STR(names[3], "mono");
	CHECK_STR(names[4], "amber");
	CHECK_STR(names[5], "zebra");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", sub, files[i]);
		unlink(file);
	}
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/xputop", dir);
	rmdir(sub);
	rmdir(dir);
}
