/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel names (core/symbols/demangle.c, core/symbols/kname.c): one input is a kernel name as
 * a CUDA process's injection library sends it, mangled or not, and it goes
 * the GPU model's way: demangled into 4096 bytes, then shortened and
 * qualified into 1024.  Checks the promises: each result is terminated inside
 * its buffer and as long as returned; into a small buffer, the same text cut
 * short; a name that is not C++ comes back as it is. */
#include "fuzz.h"

#include <string.h>

#include "kname.h"
#include "symbolize.h"

#define MAX_NAME 4096	/* XPU_WIRE_MAX_NAME: longer names never arrive */

static void check_form(size_t (*form)(const char *, char *, size_t), const char *full)
{
	char out[1024], small[16];
	size_t n = form(full, out, sizeof(out));
	FUZZ_CHECK(n < sizeof(out) && strlen(out) == n);
	size_t k = form(full, small, sizeof(small));
	FUZZ_CHECK(k < sizeof(small) && strlen(small) == k);
	FUZZ_CHECK(k == (n < sizeof(small) - 1 ? n : sizeof(small) - 1) && memcmp(small, out, k) == 0);
	if (!strpbrk(full, "<(: "))
		FUZZ_CHECK(strncmp(out, full, sizeof(out) - 1) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[MAX_NAME + 1], full[4096];
	if (size > MAX_NAME)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	size_t n = xpu_demangle(name, full, sizeof(full));
	FUZZ_CHECK(n < sizeof(full) && strlen(full) == n);
	check_form(xpu_kname_short, full);
	check_form(xpu_kname_qualified, full);
	return 0;
}
