/* SPDX-License-Identifier: GPL-2.0-only */
#include "inject_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "creds.h"
#include "err.h"
#include "htab.h"
#include "install.h"
#include "loadable.h"
#include "readfile.h"
#include "source_gpu.h"
#include "sys.h"

#define MAX_LIB (256u << 20)
#define COPY_MODE 0644

const char *xpu_inject_lib_path(void)
{
	static char path[4200];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libxputop_inject.so", exe);
			if (access(path, R_OK) == 0)
				return path;
		}
	}
	return xpu_install_find(XPU_INSTALL_LIB, "libxputop_inject.so", path, sizeof(path)) == 0 ? path : NULL;
}

/* 1 when the entry name in dfd is a copy of data exactly as we make them. */
static int is_our_copy(int dfd, const char *name, const char *data, size_t len)
{
	struct stat st;
	char *have = NULL;
	size_t n = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		 (st.st_mode & 07777) == COPY_MODE && st.st_nlink == 1 && (size_t)st.st_size == len &&
		 xpu_read_fd(fd, MAX_LIB, &have, &n) == 0 && n == len && memcmp(have, data, len) == 0;
	free(have);
	close(fd);
	return ok;
}

/* Writes data to an anonymous file in dfd and links it as name, which must be
 * free.  Returns 0, or -1 with errno (EEXIST: someone was quicker). */
static int place(int dfd, const char *name, const char *data, size_t len)
{
	char fdpath[64];
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, COPY_MODE);
	if (fd < 0)
		return -1;
	int rc = -1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (xpu_sys_write_all(fd, data, len) == 0 && fchmod(fd, COPY_MODE) == 0 && fsync(fd) == 0)
		rc = linkat(AT_FDCWD, fdpath, dfd, name, AT_SYMLINK_FOLLOW);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* The copy named name in dfd: the one there if it is exactly ours, else a new
 * one in place of whatever held the name. */
static int copy_into(int dfd, const char *name, const char *data, size_t len)
{
	if (is_our_copy(dfd, name, data, len))
		return 0;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		return -1;
	if (place(dfd, name, data, len) == 0)
		return 0;
	/* Another xputop may have placed the same copy meanwhile. */
	return errno == EEXIST && is_our_copy(dfd, name, data, len) ? 0 : -1;
}

int xpu_inject_lib_copy(const char *lib, const char *dir, char *copy, size_t size, char *why,
			size_t why_size)
{
	char *data = NULL, name[64];
	size_t len = 0;
	int rc = xpu_read_path(lib, MAX_LIB, &data, &len);
	if (rc != 0) {
		snprintf(why, why_size, "cannot read %s: %s", lib, strerror(rc > 0 ? EFBIG : -rc));
		free(data);
		return -1;
	}
	int dfd = xpu_sys_own_dir(dir);
	if (dfd < 0) {
		snprintf(why, why_size, "%s: %s", dir,
			 errno == EPERM ? "not a directory of root's alone" : strerror(errno));
		free(data);
		return -1;
	}
	snprintf(name, sizeof(name), "libxputop_inject-%016" PRIx64 ".so", xpu_hash_bytes(data, len, 0));
	rc = copy_into(dfd, name, data, len);
	if (rc < 0)
		snprintf(why, why_size, "cannot make a copy in %s: %s", dir, strerror(errno));
	else if (snprintf(copy, size, "%s/%s", dir, name) >= (int)size)
		rc = -1, snprintf(why, why_size, "%s/%s: %s", dir, name, strerror(ENAMETOOLONG));
	close(dfd);
	free(data);
	return rc;
}

/* The directory of the GPU socket, where xputop keeps its runtime files. */
static void socket_dir(char *dir, size_t size)
{
	snprintf(dir, size, "%s", xpu_gpu_socket_path());
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		snprintf(dir, size, ".");
}

const char *xpu_inject_lib_for(const char *lib, const struct xpu_creds *who, const char *cmd,
			       char *buf, size_t size)
{
	char why[600], dirs[2][4096], copy_why[2][600];
	if (xpu_loadable(lib, 0, who, why, sizeof(why)) == 0)
		return lib;
	socket_dir(dirs[0], sizeof(dirs[0]));
	snprintf(dirs[1], sizeof(dirs[1]), "%s", XPU_INJECT_CACHE_DIR);
	for (int i = 0; i < 2; i++) {
		if (xpu_inject_lib_copy(lib, dirs[i], buf, size, copy_why[i], sizeof(copy_why[i])) == 0 &&
		    xpu_loadable(buf, 0, who, copy_why[i], sizeof(copy_why[i])) == 0) {
			xpu_info("uid %u cannot load %s (%s); %s gets a copy it can load: %s",
				 (unsigned)who->uid, lib, why, cmd, buf);
			return buf;
		}
	}
	xpu_warn("uid %u cannot load %s (%s), nor a copy of it (%s; %s): until it can, only %s's launches "
		 "are seen, not its GPU kernels: let uid %u reach the library, or install xputop "
		 "(make install)", (unsigned)who->uid, lib, why, copy_why[0], copy_why[1], cmd,
		 (unsigned)who->uid);
	return lib;
}
