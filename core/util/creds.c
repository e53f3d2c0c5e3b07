/* SPDX-License-Identifier: GPL-2.0-only */
#include "creds.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

static int user_groups(struct xpu_creds *c)
{
	int n = 32;
	for (int tries = 0; tries < 16; tries++) {
		gid_t *g = realloc(c->groups, (size_t)n * sizeof(*g));
		if (!g)
			return -1;
		c->groups = g;
		int want = n;
		if (getgrouplist(c->user, c->gid, g, &want) >= 0) {
			c->ngroups = want;
			return 0;
		}
		n = want > n ? want : n * 2;
	}
	errno = E2BIG;
	return -1;
}

int xpu_creds_invoker(struct xpu_creds *c)
{
	memset(c, 0, sizeof(*c));
	if (xpu_sys_invoking_user(&c->uid, &c->gid) < 0) {
		c->keep = 1;
		c->uid = geteuid();
		c->gid = getegid();
		return 0;
	}
	struct passwd pw, *res = NULL;
	char buf[8192];
	if (getpwuid_r(c->uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return 0;	/* a uid without a name: no supplementary groups */
	if (strlen(pw.pw_name) >= sizeof(c->user) || strlen(pw.pw_dir) >= sizeof(c->home)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(c->user, pw.pw_name);
	strcpy(c->home, pw.pw_dir);
	return user_groups(c);
}

/* "1 20 1000" into c->groups. */
static int parse_groups(struct xpu_creds *c, const char *s)
{
	size_t cap = 0;
	for (;;) {
		char *end;
		while (*s == ' ' || *s == '\t')
			s++;
		unsigned long g = strtoul(s, &end, 10);
		if (end == s)
			return 0;
		if ((size_t)c->ngroups == cap) {
			cap = cap ? cap * 2 : 16;
			gid_t *v = realloc(c->groups, cap * sizeof(*v));
			if (!v)
				return -1;
			c->groups = v;
		}
		c->groups[c->ngroups++] = (gid_t)g;
		s = end;
	}
}

/* The fourth id of "Uid:\tR\tE\tS\tFS": the one file access is checked with. */
static int fs_id(const char *s, unsigned *id)
{
	unsigned v[4];
	if (sscanf(s, "%u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	*id = v[3];
	return 0;
}

int xpu_creds_of_pid(uint32_t pid, struct xpu_creds *c)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	unsigned uid = 0, gid = 0;
	int have = 0, rc = 0;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "Uid:", 4) == 0 && fs_id(line + 4, &uid) == 0)
			have |= 1;
		else if (strncmp(line, "Gid:", 4) == 0 && fs_id(line + 4, &gid) == 0)
			have |= 2;
		else if (strncmp(line, "Groups:", 7) == 0)
			rc = parse_groups(c, line + 7);
	}
	free(line);
	fclose(f);
	if (rc == 0 && have != 3) {
		errno = ESRCH;
		rc = -1;
	}
	if (rc < 0) {
		xpu_creds_free(c);
		return -1;
	}
	c->uid = uid;
	c->gid = gid;
	return 0;
}

void xpu_creds_free(struct xpu_creds *c)
{
	free(c->groups);
	c->groups = NULL;
	c->ngroups = 0;
}

int xpu_creds_become(const struct xpu_creds *c)
{
	if (c->keep)
		return 0;
	if (setgroups((size_t)c->ngroups, c->groups) < 0 || setgid(c->gid) < 0 || setuid(c->uid) < 0)
		return -1;
	if (c->uid != 0 && setuid(0) == 0) {	/* root must be gone for good */
		errno = EPERM;
		return -1;
	}
	return 0;
}
