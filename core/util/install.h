/* SPDX-License-Identifier: GPL-2.0-only */
/* Where make install puts xputop's files, and how a running xputop finds the
 * ones it needs: the CUPTI injection library and the themes.
 *
 * The directories are compiled in from PREFIX (make writes them to
 * $(OUTPUT)/install_dirs.h).  A copy of the installation that was moved
 * under another root (make install DESTDIR=..., a package's staging tree)
 * finds its own files first: when the binary runs from ROOT/XPU_BINDIR, the
 * files are looked for under ROOT too.
 */
#ifndef XPU_INSTALL_H
#define XPU_INSTALL_H

#include <stddef.h>

enum xpu_install_dir {
	XPU_INSTALL_LIB,	/* the injection library: $(PREFIX)/lib/xputop */
	XPU_INSTALL_DATA,	/* themes/: $(PREFIX)/share/xputop */
};

/* The compiled-in directory. */
const char *xpu_install_dir(enum xpu_install_dir which);

/* Puts the path of REL (e.g. "themes/dark.theme") in the installation this
 * binary belongs to into path.  Returns 0 when that file is readable, else
 * -ENOENT (path then holds the compiled-in candidate). */
int xpu_install_find(enum xpu_install_dir which, const char *rel, char *path, size_t size);

/* The root an installation was moved under: exe_dir without its bindir
 * suffix ("" when exe_dir is bindir).  Returns 0, or -1 when exe_dir does not
 * end in bindir (a build tree, or a binary copied elsewhere). */
int xpu_install_root(const char *exe_dir, const char *bindir, char *root, size_t size);

#endif
