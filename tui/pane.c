/* SPDX-License-Identifier: GPL-2.0-only */
/* What every view draws its panes with (pane.h). */
#include "pane.h"

#include <stdio.h>

#include "draw.h"
#include "table_view.h"

const char *xpu_src_state_name(enum xpu_src_state st)
{
	switch (st) {
	case XPU_SRC_ACTIVE: return "active";
	case XPU_SRC_WAITING: return "waiting for data";
	case XPU_SRC_FAILED: return "failed";
	default: return "off";
	}
}

int xpu_src_state_role(enum xpu_src_state st)
{
	switch (st) {
	case XPU_SRC_ACTIVE: return XPU_ROLE_SRC_ACTIVE;
	case XPU_SRC_WAITING: return XPU_ROLE_SRC_WAITING;
	case XPU_SRC_FAILED: return XPU_ROLE_SRC_FAILED;
	default: return XPU_ROLE_SRC_OFF;
	}
}

void xpu_view_draw_table(const struct xpu_rect *r, const struct xpu_table *t,
			 const struct xpu_viewstate *vs, struct xpu_ui *ui, const char *empty)
{
	const char *filter = vs->filter[vs->view];
	char nomatch[XPU_FILTER_MAX + 64];

	if (filter[0]) {
		snprintf(nomatch, sizeof(nomatch), "no rows match the filter \"%s\"", filter);
		empty = nomatch;
	}
	ui->page = r->h - 1;
	int sel = xpu_tui_table_selected_row(t, vs->selected[vs->view]);
	xpu_tui_table_draw(r, t, sel, &ui->top[vs->view], empty);
	/* Where the cursor is when the rows do not all fit (htop shows it by
	 * its scroll bar), and that it follows its row (F). */
	int follow = vs->follow[vs->view];
	if (r->h > 1 && t->nrows && (follow || (int)t->nrows > r->h - 1)) {
		char pos[48];
		int n = snprintf(pos, sizeof(pos), " %s%d/%u ", follow ? "F " : "", sel + 1, t->nrows);
		if (n > 0 && n < r->w)
			xpu_put_text(r->y, r->x + r->w - n, n, pos, xpu_draw_attr(XPU_ROLE_TABLE_SORT), 1);
	}
}
