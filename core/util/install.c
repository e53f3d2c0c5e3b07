/* SPDX-License-Identifier: GPL-2.0-only */
#include "install.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "install_dirs.h"

const char *xpu_install_dir(enum xpu_install_dir which)
{
	return which == XPU_INSTALL_LIB ? XPU_LIBDIR : XPU_DATADIR;
}

int xpu_install_root(const char *exe_dir, const char *bindir, char *root, size_t size)
{
	size_t n = strlen(exe_dir), b = strlen(bindir);
	while (b > 1 && bindir[b - 1] == '/')
		b--;
	if (!size || b == 0 || bindir[0] != '/' || n < b || strncmp(exe_dir + n - b, bindir, b) != 0 ||
	    n - b >= size)
		return -1;
	memcpy(root, exe_dir, n - b);
	root[n - b] = '\0';
	return 0;
}

static int readable_at(char *path, size_t size, const char *root, const char *dir, const char *rel)
{
	int n = snprintf(path, size, "%s%s/%s", root, dir, rel);
	return n > 0 && (size_t)n < size && access(path, R_OK) == 0;
}

int xpu_install_find(enum xpu_install_dir which, const char *rel, char *path, size_t size)
{
	const char *dir = xpu_install_dir(which);
	char exe[PATH_MAX], root[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (xpu_install_root(exe, XPU_BINDIR, root, sizeof(root)) == 0 && root[0] &&
			    readable_at(path, size, root, dir, rel))
				return 0;
		}
	}
	return readable_at(path, size, "", dir, rel) ? 0 : -ENOENT;
}
