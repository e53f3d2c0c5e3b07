/* SPDX-License-Identifier: GPL-2.0-only */
#include "procs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long xpu_procs_tgid(uint32_t id)
{
	char path[64], line[256];
	long tgid = -1;
	snprintf(path, sizeof(path), "/proc/%u/status", id);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* The fields of root/pid/stat after the name, into line; NULL when none.
 * "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
static const char *stat_fields(const char *root, uint32_t pid, char *line, size_t size)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	int got = fgets(line, (int)size, f) != NULL;
	fclose(f);
	char *close = got ? strrchr(line, ')') : NULL;
	return close ? close + 1 : NULL;
}

long xpu_procs_ppid_at(const char *root, uint32_t pid)
{
	char line[512], state;
	const char *rest = stat_fields(root, pid, line, sizeof(line));
	long ppid;
	if (!rest || sscanf(rest, " %c %ld", &state, &ppid) != 2)
		return -1;
	return ppid;
}

int xpu_procs_exiting(uint32_t pid)
{
	char line[512];
	const char *rest = stat_fields("/proc", pid, line, sizeof(line));
	unsigned long flags;
	/* state ppid pgrp session tty_nr tpgid flags */
	if (!rest || sscanf(rest, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return -1;
	return (flags & 0x4) != 0;	/* PF_EXITING */
}

int xpu_procs_named(uint32_t pid, const char *name)
{
	char path[64], comm[64], exe[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		int got = fgets(comm, sizeof(comm), f) != NULL;
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		/* comm holds the first 15 bytes of the name */
		if (got && *comm && strncmp(comm, name, 15) == 0 && strlen(comm) == (strlen(name) < 15 ? strlen(name) : 15))
			return 1;
	}
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	const char *base = strrchr(exe, '/');
	return strcmp(base ? base + 1 : exe, name) == 0;
}

int xpu_procs_by_name(const char *name, uint32_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	uint32_t self = (uint32_t)getpid();
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		if (*end || !pid || pid > UINT32_MAX || pid == self || !xpu_procs_named((uint32_t)pid, name))
			continue;
		if (n < max)
			out[n] = (uint32_t)pid;
		n++;
	}
	closedir(d);
	return n;
}
