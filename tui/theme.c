/* SPDX-License-Identifier: GPL-2.0-only */
#include "theme.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "userfile.h"
#include "err.h"
#include "install.h"
#include "readfile.h"

#define THEME_MAX_BYTES (64 * 1024)

enum { BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE,
       BRIGHT_BLACK, BRIGHT_RED, BRIGHT_GREEN, BRIGHT_YELLOW,
       BRIGHT_BLUE, BRIGHT_MAGENTA, BRIGHT_CYAN, BRIGHT_WHITE };

#define DEF XPU_COLOR_DEFAULT
#define RGB(v) (XPU_COLOR_RGB | (v))
#define B XPU_ATTR_BOLD
#define D XPU_ATTR_DIM
#define R XPU_ATTR_REVERSE
#define U XPU_ATTR_UNDERLINE
#define S(id, f, b, a) [XPU_ROLE_##id] = { (f), (b), (a) }

/* Keep in step with themes/dark.theme (a unit test compares them). */
const struct xpu_theme xpu_theme_default = { {
	S(DEFAULT, DEF, DEF, 0),
	S(HEADER, WHITE, BLUE, 0),
	S(BRAND, BRIGHT_WHITE, BLUE, B),
	S(DROPPED, BRIGHT_YELLOW, BLUE, B),
	S(PAUSED, BLACK, YELLOW, B),
	S(REPLAY, BLACK, MAGENTA, B),
	S(TAB, DEF, DEF, 0),
	S(TAB_ACTIVE, BLACK, CYAN, B),
	S(TAB_OFF, DEF, DEF, D),
	S(MODE, CYAN, DEF, 0),
	S(TABLE_HEAD, BLACK, GREEN, 0),
	S(TABLE_SORT, BLACK, CYAN, B),
	S(ROW, DEF, DEF, 0),
	S(ROW_SELECTED, BLACK, CYAN, 0),
	S(NA, DEF, DEF, D),
	S(EMPTY, YELLOW, DEF, 0),
	S(BOX, BLUE, DEF, 0),
	S(BOX_TITLE, BRIGHT_WHITE, DEF, B),
	S(SRC_ACTIVE, GREEN, DEF, 0),
	S(SRC_WAITING, YELLOW, DEF, 0),
	S(SRC_OFF, DEF, DEF, 0),
	S(SRC_FAILED, RED, DEF, B),
	S(FLAME_TITLE, BLACK, GREEN, 0),
	S(FLAME_USER, BLACK, RGB(0xffaf00), 0),
	S(FLAME_KERNEL, BLACK, RGB(0xff5f5f), 0),
	S(FLAME_JIT, BLACK, RGB(0x5fd75f), 0),
	S(FLAME_UNKNOWN, BLACK, RGB(0xa8a8a8), 0),
	S(FLAME_LAUNCH, BRIGHT_WHITE, RGB(0x5f5fff), 0),
	S(FLAME_GPU, BLACK, RGB(0xd75fff), 0),
	S(FLAME_INFO, BLACK, RGB(0x5fd7d7), 0),
	S(HINT_KEY, BLACK, CYAN, 0),
	S(HINT_TEXT, DEF, DEF, 0),
	S(STATUS_INFO, DEF, DEF, 0),
	S(STATUS_WARN, YELLOW, DEF, B),
	S(STATUS_ERR, BRIGHT_RED, DEF, B),
	S(PROMPT, DEF, DEF, B),
	S(HELP_TITLE, BRIGHT_WHITE, DEF, B),
	S(HELP_KEY, CYAN, DEF, B),
	S(HELP_TEXT, DEF, DEF, 0),
	S(ALERT_CRITICAL, BRIGHT_WHITE, RED, B),
	S(ALERT_STALL, BLACK, BRIGHT_MAGENTA, B),
	S(ALERT_WARN, BLACK, YELLOW, 0),
	S(ALERT_CLEARED, DEF, DEF, D),
	S(SPARKLINE, CYAN, DEF, 0),
	S(METER, GREEN, DEF, B),
} };

/* Keep in step with themes/mono.theme.  Kinds of frames differ by attribute,
 * and drawing leaves a gap between frames, so the flame still reads. */
const struct xpu_theme xpu_theme_mono = { {
	S(DEFAULT, DEF, DEF, 0),
	S(HEADER, DEF, DEF, R),
	S(BRAND, DEF, DEF, R | B),
	S(DROPPED, DEF, DEF, R | B | U),
	S(PAUSED, DEF, DEF, B),
	S(REPLAY, DEF, DEF, B),
	S(TAB, DEF, DEF, 0),
	S(TAB_ACTIVE, DEF, DEF, R | B),
	S(TAB_OFF, DEF, DEF, D),
	S(MODE, DEF, DEF, 0),
	S(TABLE_HEAD, DEF, DEF, R),
	S(TABLE_SORT, DEF, DEF, R | B | U),
	S(ROW, DEF, DEF, 0),
	S(ROW_SELECTED, DEF, DEF, R),
	S(NA, DEF, DEF, D),
	S(EMPTY, DEF, DEF, B),
	S(BOX, DEF, DEF, 0),
	S(BOX_TITLE, DEF, DEF, B),
	S(SRC_ACTIVE, DEF, DEF, B),
	S(SRC_WAITING, DEF, DEF, B),
	S(SRC_OFF, DEF, DEF, 0),
	S(SRC_FAILED, DEF, DEF, B | U),
	S(FLAME_TITLE, DEF, DEF, R),
	S(FLAME_USER, DEF, DEF, R),
	S(FLAME_KERNEL, DEF, DEF, R | B),
	S(FLAME_JIT, DEF, DEF, R | U),
	S(FLAME_UNKNOWN, DEF, DEF, R | D),
	S(FLAME_LAUNCH, DEF, DEF, B | U),
	S(FLAME_GPU, DEF, DEF, R | B | U),
	S(FLAME_INFO, DEF, DEF, U),
	S(HINT_KEY, DEF, DEF, R),
	S(HINT_TEXT, DEF, DEF, 0),
	S(STATUS_INFO, DEF, DEF, 0),
	S(STATUS_WARN, DEF, DEF, B),
	S(STATUS_ERR, DEF, DEF, B | U),
	S(PROMPT, DEF, DEF, B),
	S(HELP_TITLE, DEF, DEF, B | U),
	S(HELP_KEY, DEF, DEF, B),
	S(HELP_TEXT, DEF, DEF, 0),
	S(ALERT_CRITICAL, DEF, DEF, R | B),
	S(ALERT_STALL, DEF, DEF, R | B | U),
	S(ALERT_WARN, DEF, DEF, R),
	S(ALERT_CLEARED, DEF, DEF, D),
	S(SPARKLINE, DEF, DEF, B),
	S(METER, DEF, DEF, B),
} };

static const char *const role_names[XPU_ROLE_MAX] = {
#define XPU_ROLE_NAME(id, name) [XPU_ROLE_##id] = name,
	XPU_ROLES(XPU_ROLE_NAME)
#undef XPU_ROLE_NAME
};

static const char *const color_names[16] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"bright-black", "bright-red", "bright-green", "bright-yellow",
	"bright-blue", "bright-magenta", "bright-cyan", "bright-white",
};

static const struct { const char *name; uint8_t bit; } attr_names[] = {
	{ "bold", XPU_ATTR_BOLD }, { "dim", XPU_ATTR_DIM },
	{ "reverse", XPU_ATTR_REVERSE }, { "underline", XPU_ATTR_UNDERLINE },
};

const char *xpu_role_name(enum xpu_role r)
{
	return (unsigned)r < XPU_ROLE_MAX ? role_names[r] : "?";
}

static int find_role(const char *name)
{
	for (int r = 0; r < XPU_ROLE_MAX; r++)
		if (!strcasecmp(name, role_names[r]))
			return r;
	return -1;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Parses one colour word; returns 0 and *out, or -1. */
static int parse_color(const char *w, int32_t *out)
{
	if (!strcasecmp(w, "default")) {
		*out = XPU_COLOR_DEFAULT;
		return 0;
	}
	for (int i = 0; i < 16; i++)
		if (!strcasecmp(w, color_names[i])) {
			*out = i;
			return 0;
		}
	if (w[0] == '#') {
		uint32_t rgb = 0;
		if (strlen(w) != 7)
			return -1;
		for (int i = 1; i < 7; i++) {
			if (!isxdigit((unsigned char)w[i]))
				return -1;
			rgb = rgb << 4 | (uint32_t)hexval((unsigned char)w[i]);
		}
		*out = RGB((int32_t)rgb);
		return 0;
	}
	char *end;
	long v = strtol(w, &end, 10);
	if (isdigit((unsigned char)w[0]) && !*end && v <= 255) {
		*out = (int32_t)v;
		return 0;
	}
	return -1;
}

static int attr_bit(const char *w)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++)
		if (!strcasecmp(w, attr_names[i].name))
			return attr_names[i].bit;
	return 0;
}

/* A '#' token is a colour when a hex digit follows it; otherwise it starts
 * a comment. */
static int starts_comment(const char *w)
{
	return w[0] == '#' && !isxdigit((unsigned char)w[1]);
}

/* Parses "fg [on bg] [attr...]"; on error returns -1 with the bad word in *bad. */
static int parse_style(char *v, struct xpu_style *st, const char **bad)
{
	struct xpu_style s = { XPU_COLOR_DEFAULT, XPU_COLOR_DEFAULT, 0 };
	int have_fg = 0, words = 0;
	char *save;

	for (char *w = strtok_r(v, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		int bit;
		if (starts_comment(w))
			break;
		words++;
		if ((bit = attr_bit(w))) {
			s.attr |= (uint8_t)bit;
		} else if (!strcasecmp(w, "on")) {
			char *c = strtok_r(NULL, " \t", &save);
			if (!c || starts_comment(c) || parse_color(c, &s.bg)) {
				*bad = c && !starts_comment(c) ? c : "on";
				return -1;
			}
		} else if (!have_fg && !s.attr && !parse_color(w, &s.fg)) {
			have_fg = 1;
		} else {
			*bad = w;
			return -1;
		}
	}
	if (!words) {
		*bad = "";
		return -1;
	}
	*st = s;
	return 0;
}

static int parse_line(struct xpu_theme *t, char *line, const char *origin, int lineno)
{
	char *s = xpu_strip(line);
	const char *bad;

	if (!*s || *s == '#')
		return 0;
	char *eq = strchr(s, '=');
	if (!eq) {
		xpu_warn("%s:%d: expected 'role = colour', line skipped", origin, lineno);
		return 1;
	}
	*eq = '\0';
	char *name = xpu_strip(s);
	int role = find_role(name);
	if (role < 0) {
		xpu_warn("%s:%d: unknown role '%s', line skipped", origin, lineno, name);
		return 1;
	}
	struct xpu_style st;
	if (parse_style(eq + 1, &st, &bad)) {
		if (*bad)
			xpu_warn("%s:%d: unknown colour or attribute '%s', line skipped", origin,
				 lineno, bad);
		else
			xpu_warn("%s:%d: no colour for '%s', line skipped", origin, lineno, name);
		return 1;
	}
	t->role[role] = st;
	return 0;
}

int xpu_theme_parse(struct xpu_theme *t, const char *text, const char *origin)
{
	return xpu_theme_parse_counted(t, text, origin, NULL);
}

int xpu_theme_parse_counted(struct xpu_theme *t, const char *text, const char *origin, unsigned *good)
{
	char line[512];
	int warnings = 0, lineno = 0;
	unsigned ok = 0;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (n >= sizeof(line)) {
			xpu_warn("%s:%d: line too long, skipped", origin, lineno);
			warnings++;
		} else {
			memcpy(line, p, n);
			line[n] = '\0';
			int bad = parse_line(t, line, origin, lineno);
			warnings += bad;
			ok += !bad && *xpu_strip(line) && *xpu_strip(line) != '#';
		}
		p = nl ? nl + 1 : NULL;
	}
	if (good)
		*good = ok;
	return warnings;
}

/* Readable by the invoking user (the effective and filesystem ids, which
 * xpu_as_user_begin sets; access() would ask for the real one). */
static int readable(const char *path)
{
	xpu_as_user_begin();
	int ok = faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0;
	xpu_as_user_end();
	return ok;
}

#define THEME_DIRS 4

/* Where themes are looked for, in order; returns how many there are. */
static int theme_dirs(char dirs[THEME_DIRS][PATH_MAX])
{
	char exe[PATH_MAX];
	int n = 0;

	if (xpu_config_dir(dirs[n], PATH_MAX) == 0 && strlen(dirs[n]) + 8 < PATH_MAX)
		strcat(dirs[n++], "/themes");
	xpu_install_find(XPU_INSTALL_DATA, "themes", dirs[n++], PATH_MAX);
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(dirs[n], PATH_MAX, "%s/../themes", exe) < PATH_MAX)
				n++;
		}
	}
	snprintf(dirs[n++], PATH_MAX, "./themes");
	return n;
}

int xpu_theme_find(const char *name, char *path, size_t size)
{
	char dirs[THEME_DIRS][PATH_MAX];

	if (!name || !*name || !size)
		return -ENOENT;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(path, size, "%s", name) >= size)
			return -ENOENT;
		return readable(path) ? 0 : -ENOENT;
	}
	int n = theme_dirs(dirs);
	for (int i = 0; i < n; i++) {
		int w = snprintf(path, size, "%s/%s.theme", dirs[i], name);
		if (w > 0 && (size_t)w < size && readable(path))
			return 0;
	}
	return -ENOENT;
}

int xpu_theme_read(const char *path, char **text)
{
	return xpu_user_read(path, THEME_MAX_BYTES, text);
}

static const char *const shipped[] = { "dark", "light", "high-contrast", "mono" };
#define NSHIPPED (int)(sizeof(shipped) / sizeof(shipped[0]))

static int rank(const char *name)
{
	for (int i = 0; i < NSHIPPED; i++)
		if (!strcmp(name, shipped[i]))
			return i;
	return NSHIPPED;
}

static int by_rank(const void *a, const void *b)
{
	const char *x = a, *y = b;
	int rx = rank(x), ry = rank(y);
	return rx != ry ? rx - ry : strcmp(x, y);
}

int xpu_theme_list(char (*names)[XPU_THEME_NAME_MAX], int max)
{
	char dirs[THEME_DIRS][PATH_MAX];
	int n = 0, ndirs = theme_dirs(dirs);

	for (int i = 0; i < ndirs && n < max; i++) {
		xpu_as_user_begin();
		DIR *d = opendir(dirs[i]);
		xpu_as_user_end();
		if (!d)
			continue;
		for (struct dirent *e; n < max && (e = readdir(d));) {
			size_t len = strlen(e->d_name);
			if (e->d_name[0] == '.' || len <= 6 || len - 6 >= XPU_THEME_NAME_MAX ||
			    strcmp(e->d_name + len - 6, ".theme"))
				continue;
			char name[XPU_THEME_NAME_MAX];
			memcpy(name, e->d_name, len - 6);
			name[len - 6] = '\0';
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = !strcmp(names[k], name);
			if (!dup)
				memcpy(names[n++], name, sizeof(name));
		}
		closedir(d);
	}
	qsort(names, (size_t)n, sizeof(names[0]), by_rank);
	return n;
}

/* xterm's default palette for the 16 named colours. */
static const uint8_t base16[16][3] = {
	{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
	{ 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 }, { 0, 255, 0 }, { 255, 255, 0 },
	{ 92, 92, 255 }, { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
};

static const uint8_t cube_level[6] = { 0, 95, 135, 175, 215, 255 };

static void index_rgb(int i, int rgb[3])
{
	if (i < 16) {
		for (int k = 0; k < 3; k++)
			rgb[k] = base16[i][k];
	} else if (i < 232) {
		i -= 16;
		rgb[0] = cube_level[i / 36];
		rgb[1] = cube_level[i / 6 % 6];
		rgb[2] = cube_level[i % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (i - 232);
	}
}

/* Squared distance weighted roughly by how the eye weighs the channels. */
static long dist(const int a[3], const int b[3])
{
	long r = a[0] - b[0], g = a[1] - b[1], bl = a[2] - b[2];
	return 2 * r * r + 4 * g * g + 3 * bl * bl;
}

/* Direct colour: the 8 ANSI colours keep the user's palette; the others are
 * sent as RGB.  Values below 256 would be read as palette indexes by
 * terminals that keep 16 or 256 of them, so such a blue gets a trace of green. */
static int direct(int32_t color)
{
	int rgb[3];
	if (!(color & XPU_COLOR_RGB)) {
		if (color < 8)
			return color;
		index_rgb(color & 255, rgb);
		color = rgb[0] << 16 | rgb[1] << 8 | rgb[2];
	}
	color &= 0xffffff;
	return color < 256 ? color | 0x100 : color;
}

int xpu_color_resolve(int32_t color, int ncolors)
{
	int rgb[3], lo, hi;

	if (color < 0)
		return -1;
	if (ncolors > XPU_COLORS_INDEXED_MAX)
		return direct(color);
	if (!(color & XPU_COLOR_RGB)) {
		if (color < ncolors)
			return color;
		index_rgb(color & 255, rgb);
	} else {
		rgb[0] = (color >> 16) & 255;
		rgb[1] = (color >> 8) & 255;
		rgb[2] = color & 255;
	}
	/* The first 16 colours are whatever the user's terminal made them, so
	 * exact colours come from the cube and the grey ramp when there is one. */
	if (ncolors >= 256) {
		lo = 16;
		hi = 256;
	} else {
		lo = 0;
		hi = ncolors >= 16 ? 16 : ncolors >= 8 ? 8 : ncolors;
	}
	int best = -1;
	long best_d = 0;
	for (int i = lo; i < hi; i++) {
		int c[3];
		index_rgb(i, c);
		long d = dist(rgb, c);
		if (best < 0 || d < best_d) {
			best = i;
			best_d = d;
		}
	}
	return best;
}
