/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a user can load a shared library, found out the way CUDA loads
 * CUDA_INJECTION64_PATH: a short-lived child takes on the user's credentials,
 * opens the file and maps it executable.  Exact where reading modes would
 * guess: groups, ACLs, security modules and noexec mounts all have their say. */
#ifndef XPU_LOADABLE_H
#define XPU_LOADABLE_H

#include <stddef.h>

struct xpu_creds;

/* 0 when who can open and map path.  Else -1 with why saying what stops them,
 * naming the first directory they cannot search or the file, with its mode and
 * owner ("/home/ann is not searchable by it: mode 0700, owner ann"), or the
 * noexec mount.  The first skip bytes of path are a prefix that messages leave
 * out and that is not looked at (/proc/PID/root: another process's view). */
int xpu_loadable(const char *path, size_t skip, const struct xpu_creds *who, char *why, size_t size);

#endif
