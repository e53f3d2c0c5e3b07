/* SPDX-License-Identifier: GPL-2.0-only */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "readfile.h"
#include "userfile.h"

#define CONFIG_MAX_BYTES (64 * 1024)
#define LINE_MAX_BYTES 1024

/* ---- the keys ---- */

/* The keys that are no options: what was chosen on screen.  The others are
 * the file keys of the table of settings (settings_table.c). */
enum kind { K_BOOL, K_SORT };

struct key {
	const char *name;
	enum kind kind;
	unsigned bit;
	size_t off;		/* the field in struct xpu_settings */
	int view;		/* K_SORT */
};

#define F(field) offsetof(struct xpu_settings, field)

/* In the order they are written, after the table's keys without a default:
 * each view's sort-<name> and reverse-<name> (core/session/view_list.h), then
 * the others. */
static const struct key keys[] = {
#define VIEW_KEYS(ID, name)									\
	{ "sort-" #name, K_SORT, XPU_SET_SORT(XPU_VIEW_##ID), F(sort_col[XPU_VIEW_##ID]), XPU_VIEW_##ID },	\
	{ "reverse-" #name, K_BOOL, XPU_SET_REVERSE(XPU_VIEW_##ID), F(reverse[XPU_VIEW_##ID]) },
	XPU_VIEW_LIST(VIEW_KEYS)
	{ "threads", K_BOOL, XPU_SET_THREADS, F(threads) },
	{ "since-start", K_BOOL, XPU_SET_SINCE_START, F(since_start) },
	{ "flame", K_BOOL, XPU_SET_FLAME, F(flame) },
	{ "mouse", K_BOOL, XPU_SET_MOUSE, F(mouse) },
	{ "tree", K_BOOL, XPU_SET_TREE, F(tree) },
	{ "command-line", K_BOOL, XPU_SET_CMDLINE, F(cmdline) },
	{ "cpu-meters", K_BOOL, XPU_SET_METERS, F(meters) },
	{ "hot-functions", K_BOOL, XPU_SET_HOT, F(hot) },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* What a key of the table that only an option sets (the screen never
 * changes it) shows while the file does not set it; NULL for the others. */
static const char *shown_default(const struct xpu_setting *e)
{
	return e->def ? e->def : e->zero;
}

static void *field(struct xpu_settings *s, const struct key *k)
{
	return (char *)s + k->off;
}

static const void *cfield(const struct xpu_settings *s, const struct key *k)
{
	return (const char *)s + k->off;
}

static const struct xpu_col *view_cols(int view, uint32_t *n)
{
	*n = xpu_snap_views[view]->ncols;
	return xpu_snap_views[view]->cols;
}

/* Columns that can sort a view: those on screen in some mode of it. */
static int sortable(const struct xpu_col *c)
{
	return !(c->flags & XPU_COL_JSON_ONLY);
}

void xpu_settings_init(struct xpu_settings *s)
{
	memset(s, 0, sizeof(*s));
	xpu_setting_defaults(NULL, s);
	s->view = XPU_VIEW_DEFAULT;
	snprintf(s->theme, sizeof(s->theme), "dark");
	s->flame = 1;
	s->mouse = 1;
	for (int v = 0; v < XPU_VIEW_MAX; v++)
		s->sort_col[v] = -1;
}

/* ---- parsing ---- */

/* Text from the file as it may appear in a message: at most 40 bytes, no
 * control characters. */
static const char *shown(const char *v, char *buf, size_t size)
{
	size_t n = 0;
	for (; *v && n + 1 < size && n < 40; v++)
		buf[n++] = (unsigned char)*v < ' ' || *v == 0x7f ? '?' : *v;
	if (*v && n >= 3)
		memcpy(buf + n - 3, "...", 3);
	buf[n] = '\0';
	return buf;
}

static void warn(struct xpu_settings *s, const char *origin, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void warn(struct xpu_settings *s, const char *origin, int line, const char *fmt, ...)
{
	char what[256], msg[4096 + 300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(msg, sizeof(msg), "%s:%d: %s", origin, line, what);
	else
		snprintf(msg, sizeof(msg), "%s: %s", origin, what);
	if (!s->warnings++) {
		size_t n = strnlen(msg, sizeof(s->first_warning) - 1);
		memcpy(s->first_warning, msg, n);
		s->first_warning[n] = '\0';
	}
	xpu_warn("%s", msg);
}

static int parse_bool(const char *v, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]))
			return *out = 1, 0;
		if (!strcasecmp(v, no[i]))
			return *out = 0, 0;
	}
	return -1;
}

static int parse_number(const char *v, double lo, double hi, int integer, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	if (integer && d != floor(d))
		return -1;
	*out = d;
	return 0;
}

/* A view with further tables (the NPU's driver functions, clients and
 * chains) is sorted by their columns too, numbered after the first table's
 * in turn; a key two tables have sorts the first that has it. */
static int find_col(int view, const char *v)
{
	const struct xpu_snap_view *d = xpu_snap_views[view];
	for (uint32_t i = 0; i < d->ncols; i++)
		if (sortable(&d->cols[i]) && !strcasecmp(v, d->cols[i].key))
			return (int)i;
	int at = (int)d->ncols;
	for (int k = 0; k < XPU_SNAP_MORE_MAX; k++) {
		for (uint32_t i = 0; i < d->more[k].n; i++)
			if (sortable(&d->more[k].cols[i]) && !strcasecmp(v, d->more[k].cols[i].key))
				return at + (int)i;
		at += (int)d->more[k].n;
	}
	return -1;
}

static void col_list(int view, char *buf, size_t size)
{
	const struct xpu_snap_view *d = xpu_snap_views[view];
	size_t used = (size_t)snprintf(buf, size, "default");
	for (uint32_t i = 0; i < d->ncols && used < size; i++)
		if (sortable(&d->cols[i]))
			used += (size_t)snprintf(buf + used, size - used, ", %s", d->cols[i].key);
	int at = (int)d->ncols;
	for (int k = 0; k < XPU_SNAP_MORE_MAX; k++) {
		for (uint32_t i = 0; i < d->more[k].n && used < size; i++)
			if (find_col(view, d->more[k].cols[i].key) == at + (int)i)
				used += (size_t)snprintf(buf + used, size - used, ", %s",
							 d->more[k].cols[i].key);
		at += (int)d->more[k].n;
	}
}

void xpu_config_sort_cols(FILE *f)
{
	static const char *const names[XPU_VIEW_MAX] = { "gpu", "npu", "cpu" };
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		char list[2048];
		col_list(v, list, sizeof(list));
		for (char *save, *k = strtok_r(list, ", ", &save); k; k = strtok_r(NULL, ", ", &save))
			fprintf(f, "%s %s\n", names[v], k);
	}
}

int xpu_config_sort_col(int view, const char *name, char *expect, size_t size)
{
	int i = find_col(view, name);
	if (i < 0)
		col_list(view, expect, size);
	return i;
}

static void bad_value(struct xpu_settings *s, const char *name, const char *v, const char *expect,
		      const char *origin, int line)
{
	char b[64];
	warn(s, origin, line, "bad value '%s' for %s (expected %s), line ignored", shown(v, b, sizeof(b)),
	     name, expect);
}

/* Sets a key of the screen's; returns 0, or -1 after the warning. */
static int set_key(struct xpu_settings *s, const struct key *k, const char *v, const char *origin,
		   int line)
{
	char expect[256];
	int i;

	switch (k->kind) {
	case K_BOOL:
		if (parse_bool(v, field(s, k)) == 0)
			return 0;
		snprintf(expect, sizeof(expect), "yes or no");
		break;
	case K_SORT:
		if (!strcasecmp(v, "default")) {
			s->sort_col[k->view] = -1;
			return 0;
		}
		if ((i = find_col(k->view, v)) >= 0) {
			s->sort_col[k->view] = i;
			return 0;
		}
		col_list(k->view, expect, sizeof(expect));
		break;
	}
	bad_value(s, k->name, v, expect, origin, line);
	return -1;
}

/* The one text key, theme: printable, and it fits. */
static int set_text(char *to, size_t size, const char *v)
{
	size_t n = 0;
	for (; v[n]; n++)
		if ((unsigned char)v[n] < ' ' || v[n] == 0x7f)
			return -1;
	if (n >= size)
		return -1;
	memcpy(to, v, n + 1);
	return 0;
}

/* Sets a key of the table of settings; returns 0, or -1 after the warning. */
static int set_option_key(struct xpu_settings *s, const struct xpu_setting *e, const char *v,
			  const char *origin, int line)
{
	char expect[256], range[128];
	void *f = (char *)s + e->soff;
	double d;

	switch (e->kind) {
	case XPU_SK_ENUM:
		for (int i = 0; e->names[i]; i++)
			if (!strcasecmp(v, e->names[i])) {
				*(int *)f = i;
				return 0;
			}
		xpu_setting_expect(e, expect, sizeof(expect));
		break;
	case XPU_SK_STRING:
		if (set_text(f, sizeof(s->theme), v) == 0)
			return 0;
		snprintf(expect, sizeof(expect), "a %s name or path", e->name);
		break;
	default:
		if (e->zero && !strcasecmp(v, e->zero)) {
			*(uint32_t *)f = 0;
			return 0;
		}
		if (parse_number(v, e->lo, e->hi, e->kind != XPU_SK_DOUBLE, &d) == 0) {
			if (e->kind == XPU_SK_DOUBLE)
				*(double *)f = d;
			else
				*(uint32_t *)f = (uint32_t)d;
			return 0;
		}
		xpu_setting_expect(e, range, sizeof(range));
		snprintf(expect, sizeof(expect), "%s%s%s%s",
			 e->kind == XPU_SK_DOUBLE ? "" : "a whole number from ", range,
			 e->zero ? ", or " : "", e->zero ? e->zero : "");
		break;
	}
	bad_value(s, e->name, v, expect, origin, line);
	return -1;
}

/* Splits "key = value" in place; returns 0, or -1 when the line is not one. */
static int split(char *s, char **key, char **val)
{
	char *eq = strchr(s, '=');
	if (!eq)
		return -1;
	*eq = '\0';
	*key = xpu_strip(s);
	char *v = eq + 1;
	/* A comment may follow a value after white space. */
	for (char *h = strchr(v, '#'); h; h = strchr(h + 1, '#'))
		if (h > v && isspace((unsigned char)h[-1])) {
			*h = '\0';
			break;
		}
	*val = xpu_strip(v);
	return **key ? 0 : -1;
}

/* Calls fn on each line: its text (trimmed, NUL-terminated, at most
 * LINE_MAX_BYTES) and its number.  Over-long lines are warned about. */
static void each_line(struct xpu_settings *s, const char *text, const char *origin,
		      void (*fn)(struct xpu_settings *, char *, int, const char *, void *), void *ctx,
		      int report)
{
	char line[LINE_MAX_BYTES];
	int lineno = 0;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (n >= sizeof(line)) {
			if (report)
				warn(s, origin, lineno, "line longer than %d bytes, ignored", LINE_MAX_BYTES - 1);
		} else {
			memcpy(line, p, n);
			line[n] = '\0';
			char *t = xpu_strip(line);
			if (*t && *t != '#')
				fn(s, t, lineno, origin, ctx);
		}
		p = nl ? nl + 1 : NULL;
	}
}

struct version_scan {
	int line;
	char value[64];
};

static void find_version(struct xpu_settings *s, char *t, int lineno, const char *origin, void *ctx)
{
	struct version_scan *v = ctx;
	char *key, *val;
	if (split(t, &key, &val) == 0 && !strcasecmp(key, "version") && !v->line) {
		v->line = lineno;
		snprintf(v->value, sizeof(v->value), "%s", val);
	}
}

static const struct key *screen_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcasecmp(name, keys[i].name))
			return &keys[i];
	return NULL;
}

static void parse_line(struct xpu_settings *s, char *t, int lineno, const char *origin, void *ctx)
{
	char *key, *val, b[64];
	if (split(t, &key, &val) < 0) {
		warn(s, origin, lineno, "expected 'key = value', line ignored");
		return;
	}
	if (!strcasecmp(key, "version"))
		return;
	const struct xpu_setting *e = xpu_setting_key(key);
	const struct key *k = e ? NULL : screen_key(key);
	if (!e && !k) {
		/* A newer xputop's keys are expected in its files. */
		if (!s->newer)
			warn(s, origin, lineno, "unknown key '%s', line ignored", shown(key, b, sizeof(b)));
		return;
	}
	if (!*val)
		warn(s, origin, lineno, "no value for %s, line ignored", e ? e->name : k->name);
	else if ((e ? set_option_key(s, e, val, origin, lineno) : set_key(s, k, val, origin, lineno)) == 0)
		s->set |= e ? e->bit : k->bit;
}

int xpu_config_parse(struct xpu_settings *s, const char *text, const char *origin)
{
	struct version_scan v = { 0, "" };
	int before = s->warnings;
	double d;
	char b[64];

	each_line(s, text, origin, find_version, &v, 0);
	s->version = XPU_CONFIG_VERSION;
	if (!v.line) {
		warn(s, origin, 0, "no 'version = %d' line; read as version %d", XPU_CONFIG_VERSION,
		     XPU_CONFIG_VERSION);
	} else if (parse_number(v.value, 1, INT_MAX, 1, &d) < 0) {
		warn(s, origin, v.line, "bad version '%s' (expected %d); read as version %d",
		     shown(v.value, b, sizeof(b)), XPU_CONFIG_VERSION, XPU_CONFIG_VERSION);
	} else if ((s->version = (int)d) > XPU_CONFIG_VERSION) {
		s->newer = 1;
		warn(s, origin, v.line, "written by a newer xputop (settings version %d; this one "
		     "knows %d): only the keys it knows are read, and it is not overwritten",
		     s->version, XPU_CONFIG_VERSION);
	}
	each_line(s, text, origin, parse_line, NULL, 1);
	return s->warnings - before;
}

/* ---- where the file is ---- */

int xpu_config_path(char *buf, size_t size)
{
	char dir[PATH_MAX];
	if (xpu_config_dir(dir, sizeof(dir)) < 0)
		return -1;
	return snprintf(buf, size, "%s/" XPU_CONFIG_NAME, dir) < (int)size ? 0 : -1;
}

static const char *read_error(int err)
{
	switch (err) {
	case -EFBIG: return "larger than 64 KiB";
	case -EINVAL: return "not a text file";
	default: return strerror(-err);
	}
}

int xpu_config_load(struct xpu_settings *s, const char *path)
{
	char def[PATH_MAX], *text;
	int named = path != NULL;

	if (!named) {
		if (xpu_config_path(def, sizeof(def)) < 0)
			return 0;	/* no home directory: nothing to read */
		path = def;
	}
	int err = xpu_user_read(path, CONFIG_MAX_BYTES, &text);
	if (err == -ENOENT && !named)
		return 0;
	if (err && named) {
		xpu_err("cannot read the settings file %s: %s", path, read_error(err));
		return -1;
	}
	if (err) {
		warn(s, path, 0, "cannot read it (%s); started without it", read_error(err));
		return 0;
	}
	xpu_config_parse(s, text, path);
	free(text);
	return 0;
}

/* ---- between the file and the running program ---- */

/* The table's keys: the file's value, unless the option was given. */
static void apply_option(const struct xpu_settings *s, const struct xpu_setting *e, struct xpu_opts *o)
{
	void *to = (char *)o + e->off;
	const void *from = (const char *)s + e->soff;
	switch (e->kind) {
	case XPU_SK_STRING:
		*(const char **)to = from;
		break;
	case XPU_SK_DOUBLE:
		*(double *)to = *(const double *)from;
		break;
	case XPU_SK_U32:
		*(uint32_t *)to = *(const uint32_t *)from;
		break;
	default:
		*(int *)to = *(const int *)from;
		break;
	}
}

void xpu_config_apply(const struct xpu_settings *s, struct xpu_opts *o, struct xpu_viewstate *vs)
{
	unsigned set = s->set;

	for (unsigned i = 0; i < xpu_nsettings; i++)
		if (set & ~o->given & xpu_settings_table[i].bit)
			apply_option(s, &xpu_settings_table[i], o);
	if (set & XPU_SET_THREADS)
		vs->threads = s->threads;
	if (set & XPU_SET_SINCE_START)
		vs->window = s->since_start ? XPU_WIN_ALL : XPU_WIN_RECENT;
	if (set & XPU_SET_FLAME)
		vs->flame = s->flame;
	if (set & XPU_SET_TREE)
		vs->tree = s->tree;
	if (set & XPU_SET_CMDLINE)
		vs->cmdline = s->cmdline;
	if (set & XPU_SET_METERS)
		vs->meters = s->meters;
	if (set & XPU_SET_HOT)
		vs->hot = s->hot;
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		if (set & XPU_SET_SORT(v))
			vs->sort_col[v] = s->sort_col[v];
		if (set & XPU_SET_REVERSE(v))
			vs->reverse[v] = s->reverse[v];
	}
}

void xpu_config_capture(struct xpu_settings *s, const struct xpu_viewstate *vs, const char *theme)
{
	s->view = vs->view;
	s->threads = vs->threads;
	s->since_start = vs->window == XPU_WIN_ALL;
	s->flame = vs->flame;
	s->tree = vs->tree;
	s->cmdline = vs->cmdline;
	s->meters = vs->meters;
	s->hot = vs->hot;
	s->set |= XPU_SET_VIEW | XPU_SET_THREADS | XPU_SET_SINCE_START | XPU_SET_FLAME | XPU_SET_TREE |
		  XPU_SET_CMDLINE | XPU_SET_METERS | XPU_SET_HOT;
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		s->sort_col[v] = vs->sort_col[v];
		s->reverse[v] = vs->reverse[v];
		s->set |= XPU_SET_SORT(v) | XPU_SET_REVERSE(v);
	}
	if (theme && *theme) {
		snprintf(s->theme, sizeof(s->theme), "%s", theme);
		s->set |= XPU_SET_THEME;
	}
}

/* ---- writing ---- */

static int format_value(const struct xpu_settings *s, const struct key *k, char *buf, size_t size)
{
	uint32_t n;
	if (k->kind == K_BOOL)
		return snprintf(buf, size, "%s", *(const int *)cfield(s, k) ? "yes" : "no");
	const struct xpu_col *c = view_cols(k->view, &n);
	const struct xpu_snap_view *d = xpu_snap_views[k->view];
	int col = s->sort_col[k->view];
	if (col >= 0 && (uint32_t)col < n)
		return snprintf(buf, size, "%s", c[col].key);
	for (int m = 0; m < XPU_SNAP_MORE_MAX; m++) {
		int i = xpu_snap_more_col(d, m, col);
		if (i >= 0)
			return snprintf(buf, size, "%s", d->more[m].cols[i].key);
	}
	return snprintf(buf, size, "default");
}

static int format_option(const struct xpu_settings *s, const struct xpu_setting *e, char *buf, size_t size)
{
	const void *f = (const char *)s + e->soff;
	switch (e->kind) {
	case XPU_SK_ENUM: {
		int n = 0, i = *(const int *)f;
		while (e->names[n])
			n++;
		return snprintf(buf, size, "%s", e->names[i >= 0 && i < n ? i : 0]);
	}
	case XPU_SK_STRING: return snprintf(buf, size, "%s", (const char *)f);
	case XPU_SK_DOUBLE: return snprintf(buf, size, "%g", *(const double *)f);
	default:
		if (e->zero && !*(const uint32_t *)f)
			return snprintf(buf, size, "%s", e->zero);
		return snprintf(buf, size, "%u", *(const uint32_t *)f);
	}
}

static void put(char *buf, size_t size, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
	va_list ap;
	if (*used >= size)
		return;
	va_start(ap, fmt);
	*used += (size_t)vsnprintf(buf + *used, size - *used, fmt, ap);
	va_end(ap);
}

/* The table's keys: those the screen sets (no default shown), or those only
 * an option sets, commented out with their default while the file has none. */
static void put_options(const struct xpu_settings *s, int option_only, char *buf, size_t size, size_t *used)
{
	char v[300];
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		if (!e->bit || !shown_default(e) != !option_only)
			continue;
		if (option_only && !(s->set & e->bit)) {
			put(buf, size, used, "# %s = %s\n", e->name, shown_default(e));
			continue;
		}
		format_option(s, e, v, sizeof(v));
		put(buf, size, used, "%s = %s\n", e->name, v);
	}
}

void xpu_config_format(const struct xpu_settings *s, char *buf, size_t size)
{
	size_t used = 0;
	char v[300];

	put(buf, size, &used, "# xputop settings, saved with S in the interactive screen; see xputop(8),\n"
	    "# CONFIGURATION FILE.  Command-line options override what is here.\n"
	    "version = %d\n\n", XPU_CONFIG_VERSION);
	put_options(s, 0, buf, size, &used);
	for (size_t i = 0; i < NKEYS; i++) {
		format_value(s, &keys[i], v, sizeof(v));
		put(buf, size, &used, "%s = %s\n", keys[i].name, v);
	}
	put(buf, size, &used, "\n# Also options (-d, -F, --window, --npu-*); commented out: the default.\n");
	put_options(s, 1, buf, size, &used);
}

void xpu_config_keys(FILE *f)
{
	for (unsigned i = 0; i < xpu_nsettings; i++)
		if (xpu_settings_table[i].bit)
			fprintf(f, "%s\n", xpu_settings_table[i].name);
	for (size_t i = 0; i < NKEYS; i++)
		fprintf(f, "%s\n", keys[i].name);
}

int xpu_config_save(const struct xpu_settings *s, const char *path, char *msg, size_t size)
{
	char def[PATH_MAX], text[8192];
	int create = !path;

	if (!path) {
		if (xpu_config_path(def, sizeof(def)) < 0) {
			xpu_err("cannot save settings: no home directory (set XDG_CONFIG_HOME or HOME)");
			return -1;
		}
		path = def;
	}
	if (s->newer) {
		xpu_err("%s was written by a newer xputop (settings version %d): not overwritten", path,
			s->version);
		return -1;
	}
	xpu_config_format(s, text, sizeof(text));
	xpu_as_user_begin();
	int err = xpu_user_save(path, create, text);
	xpu_as_user_end();
	if (err) {
		xpu_err("cannot save settings to %s: %s", path, strerror(err));
		return -1;
	}
	snprintf(msg, size, "settings saved to %s", path);
	return 0;
}
