/* SPDX-License-Identifier: GPL-2.0-only */
#include "readfile.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Drops a trailing partial line so a parser never sees a line cut short. */
static void cut_partial_line(char *buf, size_t *len)
{
	char *nl = memrchr(buf, '\n', *len);
	*len = nl ? (size_t)(nl - buf) + 1 : 0;
	buf[*len] = '\0';
}

int xpu_read_fd(int fd, size_t max, char **out, size_t *outlen)
{
	size_t cap = max < 65536 ? max : 65536, len = 0;
	char *buf = malloc(cap + 1);
	*out = NULL;
	*outlen = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap >= max)
				break;
			cap = cap * 2 < max ? cap * 2 : max;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0) {
			buf[len] = '\0';
			*out = buf;
			*outlen = len;
			return 0;
		}
		len += (size_t)r;
	}
	cut_partial_line(buf, &len);
	*out = buf;
	*outlen = len;
	return 1;
}

int xpu_read_path(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*buf = NULL;
		*len = 0;
		return -errno;
	}
	int r = xpu_read_fd(fd, max, buf, len);
	close(fd);
	return r;
}

long xpu_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

char *xpu_strip(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

struct xpu_filesig xpu_filesig_of(const struct stat *st)
{
	return (struct xpu_filesig){
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec,
		/* ctime too: a chown that makes a file acceptable changes only it */
		.ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec,
	};
}
