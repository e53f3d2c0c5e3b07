/* SPDX-License-Identifier: GPL-2.0-only */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "sys.h"

/* Hands fd to the invoking user and wraps it in o->f (NULL on failure, fd closed). */
static void give_and_open(struct xpu_outfile *o, int fd)
{
	uid_t uid;
	gid_t gid;
	if (xpu_sys_invoking_user(&uid, &gid) == 0 && fchown(fd, uid, gid) < 0)
		xpu_warn("cannot give the export to uid %u: %s", (unsigned)uid, strerror(errno));
	o->f = fdopen(fd, "w");
	if (!o->f)
		close(fd);
}

int xpu_outfile_open(struct xpu_outfile *o, const char *dir)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->dir, sizeof(o->dir), "%s", dir && *dir ? dir : ".");
	o->dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		xpu_err("cannot export to %s: %s", o->dir, strerror(errno));
		return -1;
	}
	int fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		o->anon = 1;
		snprintf(o->tmp, sizeof(o->tmp), "(anonymous)");
		give_and_open(o, fd);
		if (o->f)
			return 0;
		errno = ENOMEM;
		goto fail;
	}
	for (int tries = 0; tries < 100; tries++) {
		snprintf(o->tmp, sizeof(o->tmp), ".xputop-export-%d-%ld.tmp", (int)getpid(),
			 random() % 1000000);
		int fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			break;
		give_and_open(o, fd);
		if (o->f)
			return 0;
		unlinkat(o->dirfd, o->tmp, 0);
		break;
	}
fail:
	xpu_err("cannot create a file in %s: %s", o->dir, strerror(errno));
	close(o->dirfd);
	o->dirfd = -1;
	return -1;
}

void xpu_outfile_abort(struct xpu_outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->dirfd >= 0) {
		if (!o->anon)
			unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
	}
	o->f = NULL;
	o->dirfd = -1;
}

/* rename that never replaces an existing file. */
static int place(int dirfd, const char *from, const char *to)
{
	if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* Filesystems without RENAME_NOREPLACE: link() refuses existing names too. */
	if (linkat(dirfd, from, dirfd, to, 0) < 0)
		return -1;
	unlinkat(dirfd, from, 0);
	return 0;
}

int xpu_outfile_commit(struct xpu_outfile *o, const char *stem, const char *ext, char *path,
		       size_t size)
{
	char name[256];
	int err = 0;

	if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) < 0)
		err = errno ? errno : EIO;
	/* An anonymous file is named through /proc while still open. */
	char fdpath[64];
	int keep = o->anon && !err ? dup(fileno(o->f)) : -1;
	if (o->anon && !err && keep < 0)
		err = errno;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (err) {
		if (keep >= 0)
			close(keep);
		xpu_err("cannot write the export in %s: %s", o->dir, strerror(err));
		xpu_outfile_abort(o);
		return -1;
	}
	for (int n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(name, sizeof(name), "%s.%s", stem, ext);
		else
			snprintf(name, sizeof(name), "%s-%d.%s", stem, n, ext);
		int r;
		if (o->anon) {
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", keep);
			r = linkat(AT_FDCWD, fdpath, o->dirfd, name, AT_SYMLINK_FOLLOW);
		} else {
			r = place(o->dirfd, o->tmp, name);
		}
		if (r == 0) {
			if (keep >= 0)
				close(keep);
			snprintf(path, size, "%s/%s", o->dir, name);
			close(o->dirfd);
			o->dirfd = -1;
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	xpu_err("cannot name the export in %s: %s", o->dir, strerror(errno));
	if (keep >= 0)
		close(keep);
	xpu_outfile_abort(o);
	return -1;
}

void xpu_outfile_stem(char *buf, size_t size, const char *what)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, size, "xputop-%s-%s", what, ts);
}
