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
	xpu_table_view_draw(r, t, xpu_table_selected_row(t, vs->selected[vs->view]),
			    &ui->top[vs->view], empty);
}
