/* SPDX-License-Identifier: GPL-2.0-only */
/* The flamegraph widget: an icicle graph of any struct xpu_flame (CPU stacks
 * now, GPU launch stacks later), coloured by frame kind. */
#ifndef XPU_TUI_FLAME_VIEW_H
#define XPU_TUI_FLAME_VIEW_H

#include "flame.h"
#include "flame_layout.h"
#include "layout.h"
#include "theme.h"

struct xpu_dict;

/* The role a node is drawn in: its frame's kind; the root and labels (process
 * names) are "info". */
enum xpu_role xpu_tui_flame_role(const struct xpu_flame *f, const struct xpu_dict *d,
				  uint32_t node);
/* The text a node shows: its label, its frame, or "all" for an unlabelled root. */
void xpu_tui_flame_text(const struct xpu_flame *f, const struct xpu_dict *d, uint32_t node,
			 char *buf, size_t size);

/* Draws a title line (title left, info right) and the icicle below it,
 * zoomed as `zoom` says (NULL: not zoomed).  `empty` is shown when the tree
 * has no weight. */
void xpu_tui_flame_draw(const struct xpu_rect *r, const struct xpu_flame *f,
			 const struct xpu_dict *d, const struct xpu_tui_flame_zoom *zoom,
			 const char *title, const char *info, const char *empty);

/* The title line of a pane drawn with it (title left, info right where
 * both fit whole, else the title alone), for the panes beside it too. */
void xpu_tui_flame_title(const struct xpu_rect *r, const char *title, const char *info);

/* Frees the widget's scratch memory. */
void xpu_tui_flame_free(void);

#endif
