/* SPDX-License-Identifier: GPL-2.0-only */
#include "trim.h"

#include <stdlib.h>

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int xpu_trim_plan(uint32_t max, uint32_t busy, uint64_t *w, uint32_t nidle, struct xpu_trim *t)
{
	uint32_t target = max / 4 * 3;
	uint32_t room = busy < target ? target - busy : 0;

	t->cut = UINT64_MAX;
	t->ties = 0;
	if (room >= nidle)
		return 0;
	if (room) {
		qsort(w, nidle, sizeof(*w), cmp_desc);
		t->cut = w[room - 1];
		for (uint32_t j = 0; j < room; j++)
			t->ties += w[j] == t->cut;
	}
	return 1;
}
