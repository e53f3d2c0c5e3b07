/* SPDX-License-Identifier: GPL-2.0-only */
/* UTF-8 checks for what xputop writes for other programs to parse (JSON,
 * Prometheus labels, pprof's string table): a process or thread name, a
 * path or a symbol is whatever bytes the watched program chose, and those
 * formats must be valid UTF-8.  An invalid byte becomes U+FFFD. */
#ifndef XPU_UTF8_H
#define XPU_UTF8_H

#include <stddef.h>

#define XPU_UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

/* Length of the valid UTF-8 sequence at s (at most left bytes; left > 0),
 * or 0 where s[0] starts none (overlong forms, surrogates and code points
 * beyond U+10FFFF are not UTF-8). */
size_t xpu_utf8_len(const unsigned char *s, size_t left);

/* A malloc'd copy of s with each invalid byte replaced by U+FFFD; NULL when
 * out of memory. */
char *xpu_utf8_dup(const char *s);

#endif
