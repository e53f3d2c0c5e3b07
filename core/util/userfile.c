/* SPDX-License-Identifier: GPL-2.0-only */
/* The invoking user's files (userfile.h): where they are, and reading and
 * writing them as that user. */
#include "userfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readfile.h"
#include "sys.h"

static int user_home(char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	uid_t uid;
	gid_t gid;
	int sudo = xpu_sys_invoking_user(&uid, &gid) == 0;
	const char *home = getenv("HOME");

	if (!sudo && home && home[0] == '/')
		return snprintf(buf, size, "%s", home) < (int)size ? 0 : -1;
	if (getpwuid_r(sudo ? uid : geteuid(), &pw, pwbuf, sizeof(pwbuf), &res) != 0 || !res ||
	    !res->pw_dir || res->pw_dir[0] != '/')
		return -1;
	return snprintf(buf, size, "%s", res->pw_dir) < (int)size ? 0 : -1;
}

int xpu_config_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char home[PATH_MAX];

	/* The XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored. */
	if (xdg && xdg[0] == '/')
		return snprintf(buf, size, "%s/xputop", xdg) < (int)size ? 0 : -1;
	if (user_home(home, sizeof(home)) < 0)
		return -1;
	return snprintf(buf, size, "%s/.config/xputop", home) < (int)size ? 0 : -1;
}

/* ---- acting as the invoking user ---- */

static int as_user_on;

void xpu_as_user_begin(void)
{
	uid_t uid;
	gid_t gid;
	if (as_user_on || xpu_sys_invoking_user(&uid, &gid) < 0)
		return;
	setfsgid(gid);
	setfsuid(uid);
	as_user_on = 1;
}

void xpu_as_user_end(void)
{
	if (!as_user_on)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	as_user_on = 0;
}

int xpu_user_read(const char *path, size_t max, char **text)
{
	struct stat st;
	size_t len;
	int err = 0;

	*text = NULL;
	xpu_as_user_begin();
	/* Non-blocking, so that a FIFO in the file's place cannot hang xputop. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		err = -errno;
	xpu_as_user_end();
	if (err)
		return err;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if ((size_t)st.st_size > max)
		err = -EFBIG;
	if (!err) {
		int r = xpu_read_fd(fd, max, text, &len);
		if (r < 0)
			err = r;
		else if (r > 0 || memchr(*text, '\0', len))
			err = r > 0 ? -EFBIG : -EINVAL;	/* grew meanwhile, or binary */
		if (err) {
			free(*text);
			*text = NULL;
		}
	}
	close(fd);
	return err;
}

/* Creates the directories above a file, as needed, private to the user. */
static int make_parents(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = '\0';
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* Where the file really is: a symbolic link (a dotfiles checkout) is
 * followed, even to a file that does not exist yet, so that saving writes
 * there instead of replacing the link.  Returns 0, or -1 with errno. */
static int follow_links(const char *path, char *out, size_t size)
{
	char cur[PATH_MAX], link[PATH_MAX];
	struct stat st;

	snprintf(cur, sizeof(cur), "%s", path);
	for (int hops = 0;; hops++) {
		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			break;
		if (hops == 8)
			return errno = ELOOP, -1;
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -1;
		link[n] = '\0';
		char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			memcpy(cur, link, (size_t)n + 1);
		} else {
			slash[1] = '\0';
			if (strlen(cur) + (size_t)n >= sizeof(cur))
				return errno = ENAMETOOLONG, -1;
			strcat(cur, link);
		}
	}
	if (strlen(cur) >= size)
		return errno = ENAMETOOLONG, -1;
	memcpy(out, cur, strlen(cur) + 1);
	return 0;
}

int xpu_user_save(const char *path, int create_dirs, const char *text)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[NAME_MAX + 1];
	struct stat st;
	int fd = -1, dirfd = -1, err = 0;
	mode_t mask = umask(0), mode = 0666 & ~mask;

	umask(mask);

	if (create_dirs && make_parents(path) < 0)
		return errno;
	if (follow_links(path, target, sizeof(target)) < 0)
		return errno;
	if (stat(target, &st) == 0)
		mode = st.st_mode & 0777;
	snprintf(dir, sizeof(dir), "%s", target);
	char *slash = strrchr(dir, '/');
	const char *base = target;
	if (slash) {
		base = target + (slash - dir) + 1;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno;
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(tmp, sizeof(tmp), ".%.200s.%d-%ld.tmp", base, (int)getpid(), random() % 1000000);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = errno;
		close(dirfd);
		return err;
	}
	if (fchmod(fd, mode) < 0 || xpu_sys_write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && renameat(dirfd, tmp, dirfd, base) < 0)
		err = errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	else
		fsync(dirfd);	/* the rename itself; a failure here loses nothing */
	close(dirfd);
	return err;
}
