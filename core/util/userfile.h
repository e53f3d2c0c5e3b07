/* SPDX-License-Identifier: GPL-2.0-only */
/* The invoking user's files: the settings file and themes live in the user's
 * xputop directory and are read and written as that user (under sudo, not as
 * root), so that a root xputop reads nothing the user could not and leaves
 * no root-owned file in the user's home.  Shared by the settings
 * (core/settings/config.c) and the TUI's themes (tui/theme.c). */
#ifndef XPU_USERFILE_H
#define XPU_USERFILE_H

#include <stddef.h>

/* The user's xputop configuration directory, "<config home>/xputop".
 * Returns 0, or -1 when there is no home directory to put it in. */
int xpu_config_dir(char *buf, size_t size);

/* File access as the invoking user: between begin and end, under sudo, this
 * thread's filesystem identity is SUDO_UID/SUDO_GID; otherwise nothing
 * changes.  Calls do not nest. */
void xpu_as_user_begin(void);
void xpu_as_user_end(void);
/* Reads a regular file of at most max bytes as the invoking user into a new
 * NUL-terminated string.  Returns 0 or -errno (-EFBIG when larger, -EINVAL
 * when not a regular file). */
int xpu_user_read(const char *path, size_t max, char **text);
/* Writes text to path (creating the directories above it when create_dirs
 * is set, private to the user): a temporary file next to the target (a
 * symbolic link is followed), written and synced, then renamed over it, so a
 * reader sees the old file or the new one, never a part.  Call it between
 * xpu_as_user_begin() and xpu_as_user_end().  Returns 0 or errno. */
int xpu_user_save(const char *path, int create_dirs, const char *text);

#endif
