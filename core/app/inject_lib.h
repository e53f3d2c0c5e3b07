/* SPDX-License-Identifier: GPL-2.0-only */
/* The injection library that a user's program loads.
 *
 * CUDA loads CUDA_INJECTION64_PATH with the program's own credentials and
 * skips, without a word, a library its user cannot read: one in a build tree
 * under a 0700 home, or in a clone under `mktemp -d`.  So before `xputop --
 * CMD` starts the command, the library is tried as the command's user
 * (loadable.h), and where that user cannot load it, the command gets a copy
 * they can.
 *
 * A copy is made by root for someone else, so it is made so that nothing can
 * be slipped in its place: in a directory of root's alone (the GPU socket's,
 * /run/xputop, else /var/cache/xputop), as an anonymous file (O_TMPFILE)
 * linked under its name only once written and made read-only (root's, mode
 * 0644).  The name holds a hash of the content, so copies of one build are
 * shared by every run and user and a new build never changes a copy a
 * program may be loading; an entry under that name that is not exactly such
 * a copy (a symlink, another owner or mode, other bytes) is removed, never
 * followed or written through.  Copies stay until the machine restarts (/run)
 * or someone removes them (/var/cache/xputop): a program started long ago may
 * still be about to load one. */
#ifndef XPU_INJECT_LIB_H
#define XPU_INJECT_LIB_H

#include <stddef.h>

struct xpu_creds;

/* Where copies go when the socket's directory will not do. */
#define XPU_INJECT_CACHE_DIR "/var/cache/xputop"

/* The library next to the xputop binary (a build tree), or the installed one
 * (install.h); NULL if none. */
const char *xpu_inject_lib_path(void);

/* Copies lib into dir (made if missing; it must be root's alone) as
 * libxputop_inject-HASH.so, or finds the copy there already.  Returns 0 with
 * its path in copy, or -1 with why. */
int xpu_inject_lib_copy(const char *lib, const char *dir, char *copy, size_t size, char *why,
			size_t why_size);

/* The path who should be given in CUDA_INJECTION64_PATH: lib when who can
 * load it, else a copy they can load (said at the info level).  When nothing
 * works, says what stops each and what to fix, and returns lib all the same:
 * the GPU view then names the process and why its library never connected. */
const char *xpu_inject_lib_for(const char *lib, const struct xpu_creds *who, const char *cmd,
			       char *buf, size_t size);

#endif
