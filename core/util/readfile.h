/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading a whole file whose size is not known in advance (/proc files
 * report 0), with a cap so a huge or endless file cannot exhaust memory.
 */
#ifndef XPU_READFILE_H
#define XPU_READFILE_H

#include <stddef.h>
#include <stdint.h>

struct stat;

/* What tells a file from the one that was there before: a freed inode
 * number is soon given to a new file (a rebuilt library), so the size and
 * times must match too. */
struct xpu_filesig {
	uint64_t ino, size, mtime_ns, ctime_ns;
};
struct xpu_filesig xpu_filesig_of(const struct stat *st);

/* Reads fd to its end, at most max bytes, into a new NUL-terminated buffer
 * (*len excludes the NUL).  Returns 0 when the end was reached, 1 when it
 * stopped at max (the text is then cut after its last complete line), or
 * -errno with *buf NULL. */
int xpu_read_fd(int fd, size_t max, char **buf, size_t *len);
/* The same for a path (opened read-only, close-on-exec). */
int xpu_read_path(const char *path, size_t max, char **buf, size_t *len);
/* A small file (a /proc file of a few lines) into buf of size bytes, in
 * one read, NUL-terminated.  Returns the bytes read, or -1 where the file
 * cannot be opened or read or is empty. */
long xpu_read_small(const char *path, char *buf, size_t size);
/* s without its leading and trailing white space (cut in place), for the
 * `key = value` lines of the settings and theme files. */
char *xpu_strip(char *s);

#endif
