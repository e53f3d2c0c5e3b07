/* SPDX-License-Identifier: GPL-2.0-only */
/* A minimal streaming JSON writer: commas and escaping handled, nothing kept. */
#ifndef XPU_JSON_H
#define XPU_JSON_H

#include <stdint.h>
#include <stdio.h>

#define XPU_JSON_MAX_DEPTH 32

struct xpu_json {
	FILE *f;
	int depth;
	uint8_t need_comma[XPU_JSON_MAX_DEPTH];
};

void xpu_json_init(struct xpu_json *j, FILE *f);
/* key may be NULL inside arrays. */
void xpu_json_obj(struct xpu_json *j, const char *key);
void xpu_json_arr(struct xpu_json *j, const char *key);
void xpu_json_end(struct xpu_json *j, char close);	/* '}' or ']' */
void xpu_json_str(struct xpu_json *j, const char *key, const char *v);
void xpu_json_int(struct xpu_json *j, const char *key, long long v);
void xpu_json_uint(struct xpu_json *j, const char *key, unsigned long long v);
void xpu_json_num(struct xpu_json *j, const char *key, double v);	/* non-finite -> null */
/* Nanoseconds written as microseconds with all three decimals: exact at any
 * magnitude, unlike a double with six significant digits. */
void xpu_json_ns_as_us(struct xpu_json *j, const char *key, uint64_t ns);
void xpu_json_null(struct xpu_json *j, const char *key);
void xpu_json_bool(struct xpu_json *j, const char *key, int v);

#endif
