/* SPDX-License-Identifier: GPL-2.0-only */
#include "loadable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "creds.h"
#include "sys.h"

/* A few system calls: anything slower is a hung file system. */
#define ANSWER_MS 2000

enum step { LOADS, BECOME, OPEN, NOT_ELF, MAP, NO_ANSWER };

struct report {
	int step;
	int err;
	int closed;	/* length of the first directory it cannot search, 0 = none */
};

/* As the user: the first directory along p (after skip) they cannot search. */
static int first_closed_dir(char *p, size_t skip)
{
	for (size_t i = skip + 1; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		int closed = access(p, X_OK) < 0 && errno == EACCES;
		p[i] = '/';
		if (closed)
			return (int)i;
	}
	return 0;
}

static struct report try_load(char *path, size_t skip, const struct xpu_creds *who)
{
	char elf[4];
	if (xpu_creds_become(who) < 0)
		return (struct report){ BECOME, errno, 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return (struct report){ OPEN, errno, errno == EACCES ? first_closed_dir(path, skip) : 0 };
	ssize_t n = read(fd, elf, sizeof(elf));
	if (n < 0)
		return (struct report){ OPEN, errno, 0 };
	if (n != sizeof(elf) || memcmp(elf, "\177ELF", 4) != 0)
		return (struct report){ NOT_ELF, 0, 0 };
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return (struct report){ MAP, errno, 0 };
	return (struct report){ LOADS, 0, 0 };
}

/* "mode 0700, owner ann" of path, as root sees it. */
static const char *mode_owner(const char *path, char *buf, size_t size)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return strerror(errno);
	snprintf(buf, size, "mode %04o, owner %s", (unsigned)(st.st_mode & 07777),
		 xpu_sys_user_name(st.st_uid));
	return buf;
}

static void explain(const struct report *r, char *path, size_t skip, char *why, size_t size)
{
	char mo[96];
	const char *shown = path + skip;
	struct statvfs vfs;

	if (r->step == OPEN && r->closed) {
		path[r->closed] = '\0';
		snprintf(why, size, "%s is not searchable by it: %s", shown, mode_owner(path, mo, sizeof(mo)));
		path[r->closed] = '/';
	} else if (r->step == OPEN && r->err == EACCES) {
		snprintf(why, size, "%s is not readable by it: %s", shown, mode_owner(path, mo, sizeof(mo)));
	} else if (r->step == MAP && statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, size, "%s is on a file system mounted noexec", shown);
	} else if (r->step == NOT_ELF) {
		snprintf(why, size, "%s is not a shared library", shown);
	} else if (r->step == BECOME) {
		snprintf(why, size, "cannot take on its identity: %s", strerror(r->err));
	} else if (r->step == NO_ANSWER) {
		snprintf(why, size, "no answer about %s within %d ms (a hung file system?)", shown, ANSWER_MS);
	} else {
		snprintf(why, size, "%s: %s", shown, strerror(r->err));
	}
}

/* The child's report, or NO_ANSWER after ANSWER_MS. */
static struct report await(int fd)
{
	struct report r = { NO_ANSWER, ETIMEDOUT, 0 };
	uint64_t end = xpu_now_mono() + ANSWER_MS * 1000000ULL;
	for (;;) {
		uint64_t now = xpu_now_mono();
		struct pollfd p = { fd, POLLIN, 0 };
		int n = now < end ? poll(&p, 1, (int)((end - now) / 1000000) + 1) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 1 && read(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
			r = (struct report){ BECOME, ECHILD, 0 };	/* it died before saying */
		return r;
	}
}

int xpu_loadable(const char *path, size_t skip, const struct xpu_creds *who, char *why, size_t size)
{
	char copy[PATH_MAX];
	int p[2];
	if (strlen(path) >= sizeof(copy) || skip > strlen(path)) {
		snprintf(why, size, "%s", strerror(ENAMETOOLONG));
		return -1;
	}
	strcpy(copy, path);
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(why, size, "cannot check: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, size, "cannot check: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		struct report r = try_load(copy, skip, who);
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	struct report r = await(p[0]);
	close(p[0]);
	if (r.step == NO_ANSWER)
		kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (r.step == LOADS)
		return 0;
	explain(&r, copy, skip, why, size);
	return -1;
}
