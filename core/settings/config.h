/* SPDX-License-Identifier: GPL-2.0-only */
/* The user's settings file: $XDG_CONFIG_HOME/xputop/xputop.conf
 * (~/.config/xputop/xputop.conf without XDG_CONFIG_HOME; under sudo, the
 * invoking user's).
 *
 *     # comment
 *     version = 1
 *     view = cpu
 *     sort-cpu = cpu_pct
 *
 * The keys that are also options (view, theme, delay...) are those of the
 * table of settings (settings_table.h), with its ranges and defaults; the
 * others keep what was chosen on screen.
 *
 * Read with a version check.  An unknown key or a bad value is one warning,
 * "FILE:LINE: ...", and its line is ignored: a settings file never stops
 * xputop.  Command-line options override the file.  The TUI saves the file
 * whole and atomically (temporary file, fsync, rename).
 *
 * Under sudo every access to the user's files is made with the invoking
 * user's identity (setfsuid), so root reads and writes there only what the
 * user could, and what it creates belongs to the user.
 */
#ifndef XPU_CONFIG_H
#define XPU_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opts.h"
#include "snapshot.h"

#define XPU_CONFIG_VERSION 1
#define XPU_CONFIG_NAME "xputop.conf"

/* Which settings the file gave (struct xpu_settings.set), and which of
 * those the command line did (struct xpu_opts.given). */
enum {
	XPU_SET_VIEW = 1u << 0,
	XPU_SET_THEME = 1u << 1,
	XPU_SET_DELAY = 1u << 2,
	XPU_SET_FREQ = 1u << 3,
	XPU_SET_WINDOW = 1u << 4,
	XPU_SET_NPU_TDR = 1u << 5,
	XPU_SET_NPU_STORM = 1u << 6,
	XPU_SET_NPU_SILENCE = 1u << 7,
	XPU_SET_THREADS = 1u << 8,
	XPU_SET_SINCE_START = 1u << 9,
	XPU_SET_FLAME = 1u << 10,
	XPU_SET_MOUSE = 1u << 11,
	XPU_SET_TREE = 1u << 12,
	XPU_SET_CMDLINE = 1u << 13,
	XPU_SET_METERS = 1u << 14,
	XPU_SET_HOT = 1u << 15,
};
/* Each view's sort-<name> and reverse-<name> (up to 8 views). */
#define XPU_SET_SORT(view) (1u << (16 + (view)))
#define XPU_SET_REVERSE(view) (1u << (24 + (view)))
_Static_assert(XPU_VIEW_MAX <= 8, "a bit for each view's sort and reverse keys");

struct xpu_settings {
	unsigned set;			/* XPU_SET_* */
	int version;			/* of the file read, 0 = none */
	int newer;			/* written by a newer xputop: not overwritten */
	int warnings;
	char first_warning[256];	/* "FILE:LINE: ..." of the first one */

	enum xpu_view view;
	char theme[256];
	double delay_s;
	uint32_t hz;
	double window_s;
	uint32_t npu_tdr_ms;		/* 0 = the driver's */
	double npu_storm;
	uint32_t npu_silence_ms;
	int threads, since_start, flame, mouse;
	int tree, cmdline, meters, hot;	/* t, p, 1, o */
	int sort_col[XPU_VIEW_MAX];	/* column index, -1 = the view's default */
	int reverse[XPU_VIEW_MAX];
};

/* Nothing set; values are the built-in defaults. */
void xpu_settings_init(struct xpu_settings *s);

/* Parses a settings file's text over s.  Each problem is one warning through
 * the error channel, "ORIGIN:LINE: ...".  Returns the warning count. */
int xpu_config_parse(struct xpu_settings *s, const char *text, const char *origin);

/* The default settings file. */
int xpu_config_path(char *buf, size_t size);

/* Reads the settings file at path (NULL = the default one) into s.  A
 * missing default file is no error; a missing named one is.  Returns 0 or -1
 * (reported). */
int xpu_config_load(struct xpu_settings *s, const char *path);

/* Applies what the file set and the command line did not. */
/* The column of view that sorts by name (its JSON key, as sort-cpu = takes),
 * or -1 with the names there are in expect. */
int xpu_config_sort_col(int view, const char *name, char *expect, size_t size);
/* What --sort takes in each view, "VIEW NAME" a line (--list-sort-columns,
 * for the bash completion). */
void xpu_config_sort_cols(FILE *f);
void xpu_config_apply(const struct xpu_settings *s, struct xpu_opts *o, struct xpu_viewstate *vs);
/* Takes the choices made on screen into s: view, sort orders, threads,
 * window, flame pane, theme. */
void xpu_config_capture(struct xpu_settings *s, const struct xpu_viewstate *vs, const char *theme);

/* Every key the file takes, one a line (xputop --list-keys: the man page
 * test). */
void xpu_config_keys(FILE *f);

/* The file's text for s. */
void xpu_config_format(const struct xpu_settings *s, char *buf, size_t size);
/* Writes s to path (NULL = the default file, creating its directories):
 * a temporary file next to it, fsync, rename.  Returns 0 with "settings
 * saved to PATH" in msg, or -1 with the reason reported (the old file, if
 * any, is left as it was and no temporary file remains). */
int xpu_config_save(const struct xpu_settings *s, const char *path, char *msg, size_t size);

#endif
