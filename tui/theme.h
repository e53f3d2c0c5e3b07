/* SPDX-License-Identifier: GPL-2.0-only */
/* Colour roles and themes.
 *
 * Drawing code names a role (what a thing is), never a colour.  A theme is a
 * table of styles, one per role; theme files are text:
 *
 *     # comment
 *     role = fg [on bg] [bold] [dim] [reverse] [underline]
 *
 * Colours are names (default, black, red, green, yellow, blue, magenta, cyan,
 * white, bright-black ... bright-white), a 0-255 index, or #RRGGBB, mapped to
 * the nearest colour the terminal has.  No curses here: parsing and colour
 * matching are tested without a terminal.
 */
#ifndef XPU_TUI_THEME_H
#define XPU_TUI_THEME_H

#include <stddef.h>
#include <stdint.h>

#define XPU_ROLES(X)                                                             \
	X(DEFAULT, "default")		/* anything without a role of its own */  \
	X(HEADER, "header")		/* the header bar */                      \
	X(BRAND, "brand")		/* "xputop" in the header */              \
	X(DROPPED, "dropped")		/* the dropped-events count when nonzero */ \
	X(PAUSED, "paused")		/* the PAUSED marker */                   \
	X(REPLAY, "replay")		/* the REPLAY marker */                   \
	X(TAB, "tab")			/* an inactive view tab */                \
	X(TAB_ACTIVE, "tab_active")	/* the current view's tab */              \
	X(TAB_OFF, "tab_off")		/* the tab of a view with no data source */ \
	X(MODE, "mode")			/* the view's modes on the tab line */    \
	X(TABLE_HEAD, "table_head")	/* column headings */                     \
	X(TABLE_SORT, "table_sort")	/* the heading of the sort column */      \
	X(ROW, "row")			/* a table row */                         \
	X(ROW_SELECTED, "row_selected")	/* the selected row */                    \
	X(NA, "na")			/* a value that is not known ("N/A") */   \
	X(EMPTY, "empty")		/* the message in an empty pane */        \
	X(BOX, "box")			/* message box border */                  \
	X(BOX_TITLE, "box_title")	/* message box title */                   \
	X(SRC_ACTIVE, "src_active")	/* a data source that delivers */         \
	X(SRC_WAITING, "src_waiting")	/* a source waiting for data */           \
	X(SRC_OFF, "src_off")		/* a source that is not running */        \
	X(SRC_FAILED, "src_failed")	/* a source that failed */                \
	X(FLAME_TITLE, "flame_title")	/* the flame pane's title line */         \
	X(FLAME_USER, "flame_user")	/* user-space frame */                    \
	X(FLAME_KERNEL, "flame_kernel")	/* kernel frame */                        \
	X(FLAME_JIT, "flame_jit")	/* JIT frame */                           \
	X(FLAME_UNKNOWN, "flame_unknown") /* frame without a symbol */            \
	X(FLAME_LAUNCH, "flame_launch")	/* GPU launch API call */                 \
	X(FLAME_GPU, "flame_gpu")	/* GPU kernel */                          \
	X(FLAME_INFO, "flame_info")	/* root, process names, labels */         \
	X(HINT_KEY, "hint_key")		/* a key on the hint line */              \
	X(HINT_TEXT, "hint_text")	/* its meaning */                         \
	X(STATUS_INFO, "status_info")	/* status line: information */            \
	X(STATUS_WARN, "status_warn")	/* status line: warning */                \
	X(STATUS_ERR, "status_err")	/* status line: error */                  \
	X(PROMPT, "prompt")		/* the filter prompt */                   \
	X(HELP_TITLE, "help_title")	/* help overlay title */                  \
	X(HELP_KEY, "help_key")		/* a key in the help */                   \
	X(HELP_TEXT, "help_text")	/* its description */                     \
	X(ALERT_CRITICAL, "alert_critical") /* a CRITICAL alert (recovery, aborts) */ \
	X(ALERT_STALL, "alert_stall")	/* a STALL alert */                       \
	X(ALERT_WARN, "alert_warn")	/* a WARN alert */                        \
	X(ALERT_CLEARED, "alert_cleared") /* an alert that no longer holds */     \
	X(SPARKLINE, "sparkline")	/* a rate's recent history */            \
	X(METER, "meter")		/* the filled part of a device gauge */

enum xpu_role {
#define XPU_ROLE_ENUM(id, name) XPU_ROLE_##id,
	XPU_ROLES(XPU_ROLE_ENUM)
#undef XPU_ROLE_ENUM
	XPU_ROLE_MAX
};

/* Attribute bits of a style (mapped to curses attributes when applied). */
enum {
	XPU_ATTR_BOLD = 1,
	XPU_ATTR_DIM = 2,
	XPU_ATTR_REVERSE = 4,
	XPU_ATTR_UNDERLINE = 8,
};

/* A colour as written in a theme: XPU_COLOR_DEFAULT, an index 0-255, or
 * XPU_COLOR_RGB | 0xRRGGBB. */
#define XPU_COLOR_DEFAULT (-1)
#define XPU_COLOR_RGB 0x1000000

struct xpu_style {
	int32_t fg, bg;
	uint8_t attr;
};

struct xpu_theme {
	struct xpu_style role[XPU_ROLE_MAX];
};

extern const struct xpu_theme xpu_theme_default;	/* dark; themes/dark.theme */
extern const struct xpu_theme xpu_theme_mono;		/* attributes only; themes/mono.theme */

const char *xpu_role_name(enum xpu_role r);

/* Parses theme text over t (roles it does not name keep their style).  Each
 * unknown role, colour or word is one warning through the error channel,
 * "ORIGIN:LINE: ...", and its line is skipped.  Returns the warning count. */
int xpu_theme_parse(struct xpu_theme *t, const char *text, const char *origin);
/* The same; *good is set to the number of lines that set a role. */
int xpu_theme_parse_counted(struct xpu_theme *t, const char *text, const char *origin, unsigned *good);

/* Finds theme NAME: a path if it contains '/', else NAME.theme in
 * $XDG_CONFIG_HOME/xputop/themes (~/.config/...; the invoking user's under
 * sudo), the installation's themes (core/util/install.h), <dir of the
 * executable>/../themes (a build tree) and ./themes.  Returns 0 and the
 * path, or -ENOENT. */
int xpu_theme_find(const char *name, char *path, size_t size);
/* Reads a theme file (at most 64 KiB; as the invoking user under sudo) into
 * a malloc'd string.  Returns 0 or -errno. */
int xpu_theme_read(const char *path, char **text);

/* The names of the themes in those directories, each once: the shipped ones
 * first (dark, light, high-contrast, mono), then the others A to Z.  Returns
 * how many were put in names[]. */
#define XPU_THEME_NAME_MAX 64
int xpu_theme_list(char (*names)[XPU_THEME_NAME_MAX], int max);

/* Terminals with more colours than this take colours as 0xRRGGBB (direct
 * colour, e.g. TERM=xterm-direct). */
#define XPU_COLORS_INDEXED_MAX 256

/* The colour to use on a terminal with `ncolors` colours: the colour itself
 * when it exists, otherwise the nearest one (from the 256-colour cube and
 * grey ramp when ncolors is 256, else from the first 16 or 8).  On a
 * direct-colour terminal: 0-7 as they are, anything else as 0xRRGGBB. */
int xpu_color_resolve(int32_t color, int ncolors);

#endif
