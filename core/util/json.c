/* SPDX-License-Identifier: GPL-2.0-only */
#include "json.h"

#include <math.h>
#include <string.h>

#include "utf8.h"

void xpu_json_init(struct xpu_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t left = strlen((const char *)p);
	fputc('"', f);
	for (; *p; p++, left--) {
		if (*p >= 0x80) {	/* JSON is UTF-8: what is not becomes U+FFFD */
			size_t n = xpu_utf8_len(p, left);
			if (n)
				fwrite(p, 1, n, f);
			else
				fputs(XPU_UTF8_REPLACEMENT, f);
			if (n > 1) {
				p += n - 1;
				left -= n - 1;
			}
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void prefix(struct xpu_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = 1;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_(struct xpu_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < XPU_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = 0;
}

void xpu_json_obj(struct xpu_json *j, const char *key) { open_(j, key, '{'); }
void xpu_json_arr(struct xpu_json *j, const char *key) { open_(j, key, '['); }

void xpu_json_end(struct xpu_json *j, char close)
{
	fputc(close, j->f);
	if (j->depth > 0)
		j->depth--;
}

void xpu_json_str(struct xpu_json *j, const char *key, const char *v)
{
	prefix(j, key);
	put_string(j->f, v);
}

void xpu_json_int(struct xpu_json *j, const char *key, long long v)
{
	prefix(j, key);
	fprintf(j->f, "%lld", v);
}

void xpu_json_uint(struct xpu_json *j, const char *key, unsigned long long v)
{
	prefix(j, key);
	fprintf(j->f, "%llu", v);
}

void xpu_json_num(struct xpu_json *j, const char *key, double v)
{
	prefix(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void xpu_json_ns_as_us(struct xpu_json *j, const char *key, uint64_t ns)
{
	prefix(j, key);
	fprintf(j->f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

void xpu_json_null(struct xpu_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void xpu_json_bool(struct xpu_json *j, const char *key, int v)
{
	prefix(j, key);
	fputs(v ? "true" : "false", j->f);
}
