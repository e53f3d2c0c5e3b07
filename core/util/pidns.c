/* SPDX-License-Identifier: GPL-2.0-only */
#include "pidns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

/* A status file is about 1.5 KiB; anything longer is not one. */
#define STATUS_MAX 16384

/* The value of the line "key:\t..." that starts at p (before end), or NULL. */
static const char *value_of(const char *p, const char *end, const char *key)
{
	size_t k = strlen(key);
	if ((size_t)(end - p) <= k || memcmp(p, key, k) != 0 || p[k] != ':')
		return NULL;
	p += k + 1;
	while (p < end && (*p == '\t' || *p == ' '))
		p++;
	return p;
}

/* Reads the unsigned numbers of a line into v (at most max); returns how
 * many.  A number too large for 32 bits ends the list. */
static int numbers(const char *p, const char *eol, uint32_t *v, int max)
{
	int n = 0;
	while (p < eol && n < max) {
		uint64_t x = 0;
		const char *start = p;
		while (p < eol && *p >= '0' && *p <= '9' && x <= UINT32_MAX)
			x = x * 10 + (uint64_t)(*p++ - '0');
		if (p == start || x > UINT32_MAX)
			break;
		v[n++] = (uint32_t)x;
		while (p < eol && (*p == '\t' || *p == ' '))
			p++;
	}
	return n;
}

static void take_comm(const char *p, const char *eol, char *comm)
{
	size_t n = (size_t)(eol - p);
	if (n > XPU_PIDNS_COMM - 1)
		n = XPU_PIDNS_COMM - 1;
	memcpy(comm, p, n);
	comm[n] = '\0';
}

int xpu_pidns_parse(const char *text, size_t len, struct xpu_pidns_info *out)
{
	const char *p = text, *end = text + len, *v;
	uint32_t pids[32], uid;
	int have = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((v = value_of(p, eol, "Name")))
			take_comm(v, eol, out->comm);
		else if ((v = value_of(p, eol, "Uid")) && numbers(v, eol, &uid, 1) == 1)
			out->uid = uid;
		else if ((v = value_of(p, eol, "NSpid"))) {
			int n = numbers(v, eol, pids, 32);
			if (n > 0) {
				out->nspid = pids[n - 1];
				out->depth = (uint32_t)n - 1;
				have = 2;
			}
		} else if (have < 2 && (v = value_of(p, eol, "Pid")) && numbers(v, eol, pids, 1) == 1) {
			out->nspid = pids[0];
			have = 1;
		}
		p = eol + 1;
	}
	return have ? 0 : -1;
}

static int read_status(const char *path, struct xpu_pidns_info *out)
{
	char *buf;
	size_t len;
	if (xpu_read_path(path, STATUS_MAX, &buf, &len) < 0)
		return -1;
	int rc = xpu_pidns_parse(buf, len, out);
	free(buf);
	return rc;
}

int xpu_pidns_is_host(void)
{
	struct xpu_pidns_info self;
	return read_status("/proc/self/status", &self) == 0 && self.depth == 0;
}

int xpu_pidns_lookup(uint32_t pid, struct xpu_pidns_info *out)
{
	char path[32];
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (read_status(path, out) < 0)
		return -1;
	return 0;
}
