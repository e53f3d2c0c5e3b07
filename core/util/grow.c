/* SPDX-License-Identifier: GPL-2.0-only */
#include "grow.h"

#include <errno.h>
#include <stdlib.h>

int xpu_grow(void **p, uint32_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX || n > SIZE_MAX / elem)
		return -ENOMEM;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = (uint32_t)n;
	return 0;
}
