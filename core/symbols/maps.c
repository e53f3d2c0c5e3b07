/* SPDX-License-Identifier: GPL-2.0-only */
/* /proc/PID/maps: which file (and where in it) backs each address range. */
#include "symfiles.h"

#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A process with more text than this in its maps is cut (the rest of its
 * mappings stay unknown) rather than allowed to exhaust our memory. */
#define MAPS_MAX_BYTES (64u << 20)

static const char deleted_suffix[] = " (deleted)";

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 1..maxdig hex digits at *p, then *p points past them. */
static int hex(const char **p, const char *e, int maxdig, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d;
	while (s < e && s - *p < maxdig && (d = hexval(*s)) >= 0) {
		x = x << 4 | (uint64_t)d;
		s++;
	}
	if (s == *p || (s < e && hexval(*s) >= 0))
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int dec(const char **p, const char *e, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	while (s < e && *s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int expect(const char **p, const char *e, char c)
{
	if (*p >= e || **p != c)
		return -1;
	(*p)++;
	return 0;
}

static int parse_perms(const char **p, const char *e, char perms[5])
{
	static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
	if (e - *p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = (*p)[i];
		if (c != allowed[i][0] && c != allowed[i][1])
			return -1;
		perms[i] = c;
	}
	perms[4] = '\0';
	*p += 4;
	return 0;
}

/* Parses the fixed fields of one line [p, e); leaves *p at the path. */
static int parse_fields(const char **p, const char *e, struct xpu_map *m)
{
	uint64_t major, minor;
	if (hex(p, e, 16, &m->start) || expect(p, e, '-') || hex(p, e, 16, &m->end) ||
	    expect(p, e, ' ') || parse_perms(p, e, m->perms) || expect(p, e, ' ') ||
	    hex(p, e, 16, &m->pgoff) || expect(p, e, ' ') || hex(p, e, 8, &major) ||
	    expect(p, e, ':') || hex(p, e, 8, &minor) || expect(p, e, ' ') ||
	    dec(p, e, &m->inode) || m->start >= m->end)
		return -1;
	if (*p < e && **p != ' ')
		return -1;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	return 0;
}

/* Line [s, e) of the owned copy; e is a byte we may overwrite with NUL. */
static int parse_line(char *s, char *e, struct xpu_map *m)
{
	const char *p = s;
	memset(m, 0, sizeof(*m));
	if (memchr(s, '\0', (size_t)(e - s)) || parse_fields(&p, e, m))
		return -1;
	while (p < e && *p == ' ')
		p++;
	size_t len = (size_t)(e - p), sl = sizeof(deleted_suffix) - 1;
	if (len > sl && memcmp(e - sl, deleted_suffix, sl) == 0) {
		m->deleted = 1;
		e -= sl;
	}
	*e = '\0';
	m->path = p;
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct xpu_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The kernel writes maps sorted; other text (tests, fuzzers) may not be. */
static void sort_maps(struct xpu_maps *out)
{
	for (size_t i = 1; i < out->n; i++)
		if (out->v[i - 1].start > out->v[i].start) {
			qsort(out->v, out->n, sizeof(*out->v), cmp_map);
			return;
		}
}

static int push(struct xpu_maps *out, size_t *cap, const struct xpu_map *m)
{
	if (out->n == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct xpu_map *v = realloc(out->v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		out->v = v;
		*cap = n;
	}
	out->v[out->n++] = *m;
	return 0;
}

int xpu_maps_parse(const char *text, size_t len, struct xpu_maps *out, size_t *bad)
{
	size_t cap = 0, nbad = 0;
	memset(out, 0, sizeof(*out));
	if (len == SIZE_MAX || !(out->text = malloc(len + 1)))
		return -ENOMEM;
	memcpy(out->text, text, len);
	out->text[len] = '\0';
	for (char *s = out->text, *end = out->text + len; s < end;) {
		char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		struct xpu_map m;
		if (parse_line(s, e, &m) < 0)
			nbad += e > s;
		else if (push(out, &cap, &m) < 0) {
			xpu_maps_free(out);
			return -ENOMEM;
		}
		s = e + 1;
	}
	if (bad)
		*bad = nbad;
	sort_maps(out);
	return 0;
}

void xpu_maps_free(struct xpu_maps *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

const struct xpu_map *xpu_maps_find(const struct xpu_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= m->v[lo - 1].end)
		return NULL;
	return &m->v[lo - 1];
}

int xpu_maps_read(uint32_t pid, struct xpu_maps *out, size_t *bad)
{
	char path[64], *text;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	memset(out, 0, sizeof(*out));
	int r = xpu_read_path(path, MAPS_MAX_BYTES, &text, &len);
	if (r < 0)
		return r;
	r = xpu_maps_parse(text, len, out, bad);
	free(text);
	return r;
}
