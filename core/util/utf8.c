/* SPDX-License-Identifier: GPL-2.0-only */
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t xpu_utf8_len(const unsigned char *s, size_t left)
{
	size_t n;
	uint32_t c;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

char *xpu_utf8_dup(const char *s)
{
	size_t left = strlen(s), bad = 0;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < left;) {
		size_t n = xpu_utf8_len(p + i, left - i);
		bad += !n;
		i += n ? n : 1;
	}
	char *out = malloc(left + bad * 2 + 1), *o = out;
	if (!out)
		return NULL;
	while (left) {
		size_t n = xpu_utf8_len(p, left);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			memcpy(o, XPU_UTF8_REPLACEMENT, 3);
			o += 3;
		}
		p += n ? n : 1;
		left -= n ? n : 1;
	}
	*o = '\0';
	return out;
}
