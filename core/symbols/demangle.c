/* SPDX-License-Identifier: GPL-2.0-only */
/* C++ (Itanium ABI) and Rust (legacy and v0) names through libiberty's
 * demangler, the one binutils and gdb use.  For C++ it is the same code as
 * the C++ runtime's __cxa_demangle, so names read as they always did. */
#include "symfiles.h"

#include <string.h>

#include <libiberty/demangle.h>

/* The demangler keeps arrays sized by the name's length on the stack; names
 * from a hostile file could be megabytes long, so longer ones stay mangled.
 * Real names this long are rare and still readable mangled. */
#define DEMANGLE_MAX_LEN 8192

struct sink {
	char *buf;
	size_t size, n;
};

/* The demangler's output callback: appends what fits. */
static void append(const char *s, size_t len, void *opaque)
{
	struct sink *k = opaque;
	if (!k->size || !len)	/* the Rust demangler passes (NULL, 0) for an empty identifier */
		return;
	if (len > k->size - 1 - k->n)
		len = k->size - 1 - k->n;
	memcpy(k->buf + k->n, s, len);
	k->n += len;
	k->buf[k->n] = '\0';
}

/* Rust first: a legacy Rust name is also valid C++, which would keep its
 * hash as a path component ("::h0123456789abcdef"). */
static int demangle(const char *name, struct sink *k)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	if (rust_demangle_callback(name, opts, append, k))
		return 1;
	k->n = 0;	/* whatever a failed attempt wrote */
	if (cplus_demangle_v3_callback(name, opts, append, k))
		return 1;
	k->n = 0;
	return 0;
}

/* "_Z..." is C++, or Rust's legacy mangling; "_R..." is Rust's v0. */
static int is_mangled(const char *name)
{
	return strncmp(name, "_Z", 2) == 0 || strncmp(name, "_R", 2) == 0;
}

size_t xpu_demangle(const char *name, char *buf, size_t size)
{
	struct sink k = { buf, size, 0 };
	if (size)
		buf[0] = '\0';
	if (is_mangled(name) && strnlen(name, DEMANGLE_MAX_LEN + 1) <= DEMANGLE_MAX_LEN && demangle(name, &k))
		return k.n;
	append(name, strlen(name), &k);
	return k.n;
}
