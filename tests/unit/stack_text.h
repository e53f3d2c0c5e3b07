/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack of the dictionary as "outer;...;leaf", for comparing with what a
 * test expects (a static buffer: one result at a time). */
#ifndef XPU_TEST_STACK_TEXT_H
#define XPU_TEST_STACK_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "dict.h"

static inline const char *stack_text(const struct xpu_dict *d, uint32_t stack)
{
	static char buf[4096];
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(d, stack, &n);
	size_t at = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; f && i < n && at < sizeof(buf) - 300; i++) {
		if (i)
			buf[at++] = ';';
		at += xpu_frame_text(d, f[i], buf + at, sizeof(buf) - at);
	}
	return buf;
}

#endif
