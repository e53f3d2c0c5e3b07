/* SPDX-License-Identifier: GPL-2.0-only */
/* /tmp/perf-PID.map: symbols that JIT compilers write for their generated
 * code, one "START SIZE name" line each (hex, START without 0x by convention
 * though perf accepts it).
 */
#include "symfiles.h"

#include "readfile.h"
#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LEN 4096

struct xpu_perfmap {
	struct xpu_symtab syms;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int hex(const char **p, const char *e, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d;
	if (e - s > 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	const char *digits = s;
	while (s < e && (d = hexval(*s)) >= 0) {
		if (s - digits == 16)
			return -1;
		x = x << 4 | (uint64_t)d;
		s++;
	}
	if (s == digits)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int blanks(const char **p, const char *e)
{
	const char *s = *p;
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
	return *p == s ? -1 : 0;
}

static int parse_line(const char *p, const char *e, struct xpu_symtab *t, uint32_t seq)
{
	uint64_t start, size;
	while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (memchr(p, '\0', (size_t)(e - p)) || hex(&p, e, &start) || blanks(&p, e) ||
	    hex(&p, e, &size) || blanks(&p, e) || p == e || e - p > NAME_MAX_LEN || size == 0 ||
	    start + size < start)
		return -EINVAL;
	/* A JIT that rewrites code at an address appends a new line: the later
	 * line wins. */
	return xpu_symtab_add(t, start, size, p, (size_t)(e - p), 0, seq);
}

struct xpu_perfmap *xpu_perfmap_parse(const char *text, size_t len, size_t *bad)
{
	struct xpu_perfmap *m = calloc(1, sizeof(*m));
	size_t nbad = 0;
	uint32_t seq = 0;
	if (!m)
		return NULL;
	for (const char *s = text, *end = text + len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		int r = e > s ? parse_line(s, e, &m->syms, seq++) : 0;
		if (r == -ENOMEM) {
			xpu_perfmap_free(m);
			return NULL;
		}
		nbad += r < 0;
		s = e + 1;
	}
	xpu_symtab_finish(&m->syms);
	if (bad)
		*bad = nbad;
	return m;
}

void xpu_perfmap_free(struct xpu_perfmap *m)
{
	if (!m)
		return;
	xpu_symtab_free(&m->syms);
	free(m);
}

const char *xpu_perfmap_lookup(const struct xpu_perfmap *m, uint64_t addr)
{
	uint32_t i = xpu_symtab_find(&m->syms, addr);
	return i == UINT32_MAX ? NULL : xpu_symtab_name(&m->syms, i);
}

size_t xpu_perfmap_nsyms(const struct xpu_perfmap *m)
{
	return m->syms.n;
}

static int parse_u32(const char **p, uint32_t *v)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(*p, &end, 10);
	if (end == *p || errno || x > UINT32_MAX)
		return -1;
	*p = end;
	*v = (uint32_t)x;
	return 0;
}

/* From /proc/PID/status: the effective uid ("Uid:" real effective saved fs)
 * and the pid in the process's own namespace (last field of "NSpid:"). */
static int proc_ids(uint32_t pid, uint32_t *euid, uint32_t *nspid)
{
	char path[64], *text;
	size_t len;
	int have_uid = 0;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	int r = xpu_read_path(path, 1u << 20, &text, &len);
	if (r < 0)
		return r;
	*nspid = pid;
	for (char *line = text, *nl; line; line = nl ? nl + 1 : NULL) {
		const char *p = line;
		uint32_t v, ignored;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (strncmp(line, "Uid:", 4) == 0) {
			p += 4;
			have_uid = parse_u32(&p, &ignored) == 0 && parse_u32(&p, euid) == 0;
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			for (p += 6; parse_u32(&p, &v) == 0;)
				*nspid = v;
		}
	}
	free(text);
	return have_uid ? 0 : -EIO;
}

int xpu_perfmap_open(uint32_t pid, struct stat *st)
{
	char path[96];
	uint32_t euid, nspid;
	memset(st, 0, sizeof(*st));
	int r = proc_ids(pid, &euid, &nspid);
	if (r < 0)
		return r;
	/* Through the process's root: right for containers (other pid and mount
	 * namespaces) and for a private /tmp, and the same file otherwise. */
	snprintf(path, sizeof(path), "/proc/%u/root/tmp/perf-%u.map", pid, nspid);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		return lstat(path, st) == 0 ? -EINVAL : -ENOENT;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		r = -errno;
	else if (!S_ISREG(st->st_mode))
		r = -EINVAL;
	else if (st->st_uid != euid)
		r = -EPERM;
	else
		return fd;
	close(fd);
	return r;
}
