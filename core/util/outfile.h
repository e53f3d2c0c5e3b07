/* SPDX-License-Identifier: GPL-2.0-only */
/* Files xputop writes for the user (exports), created so that a root process
 * cannot be tricked into clobbering anything: the data goes to an anonymous
 * file (O_TMPFILE) in the target directory, which is linked under a name that
 * does not exist yet only once it is complete and synced, so an export cut
 * short, even by SIGKILL or a crash, leaves no file at all.  Filesystems
 * without O_TMPFILE get a fresh named temporary file (O_EXCL|O_NOFOLLOW)
 * renamed with RENAME_NOREPLACE instead.  Nothing follows a symlink or
 * replaces an existing file.  Under sudo the file is given to the invoking
 * user. */
#ifndef XPU_OUTFILE_H
#define XPU_OUTFILE_H

#include <stdio.h>

struct xpu_outfile {
	int dirfd;
	int anon;		/* 1: an O_TMPFILE file, linked in by commit */
	FILE *f;
	char tmp[128];
	char dir[4096];
};

/* Opens a temporary file in dir (NULL = the current directory). Returns 0 or
 * -1 with the reason reported. */
int xpu_outfile_open(struct xpu_outfile *o, const char *dir);
/* Completes the file under "<stem>.<ext>" (or "<stem>-2.<ext>", ... if taken)
 * and writes the full path to path.  Returns 0 or -1 (reported; the temporary
 * file is removed). */
int xpu_outfile_commit(struct xpu_outfile *o, const char *stem, const char *ext, char *path,
		       size_t size);
/* Discards the temporary file. */
void xpu_outfile_abort(struct xpu_outfile *o);
/* "xputop-<what>-YYYYmmdd-HHMMSS" in local time. */
void xpu_outfile_stem(char *buf, size_t size, const char *what);

#endif
