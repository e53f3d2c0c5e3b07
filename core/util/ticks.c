/* SPDX-License-Identifier: GPL-2.0-only */
#include "ticks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xpu_ticks_init(struct xpu_ticks *t, uint32_t window)
{
	memset(t, 0, sizeof(*t));
	t->window = window ? window : 1;
	t->lens = calloc(t->window, sizeof(uint64_t));
	return t->lens ? 0 : -ENOMEM;
}

void xpu_ticks_free(struct xpu_ticks *t)
{
	free(t->lens);
	memset(t, 0, sizeof(*t));
}

uint32_t xpu_ticks_close(struct xpu_ticks *t, uint64_t interval_ns, int *full)
{
	uint32_t slot = t->head;
	*full = t->filled == t->window;
	if (*full)
		t->window_ns -= t->lens[slot];
	else
		t->filled++;
	t->lens[slot] = interval_ns;
	t->window_ns += interval_ns;
	t->tick_ns = interval_ns;
	t->total_ns += interval_ns;
	t->head = (slot + 1) % t->window;
	return slot;
}
