/* SPDX-License-Identifier: GPL-2.0-only */
/* The ELF symbolizer (core/symbols/elf.c, core/symbols/symtab.c, core/symbols/demangle.c): one input
 * is a file mapped by a monitored process, anyone's, truncated or corrupt.
 * It goes through the path the symbolizer takes (xpu_elf_load_fd_path on an
 * open file: a memfd holding the input), then the lookups the symbolizer
 * makes: file offset -> virtual address through the PT_LOAD segments, the
 * symbol covering it, its demangled name.
 *
 * Checks the loader's promises: failure comes with a reason; the table is
 * sorted with one entry per address; every entry has a non-empty name and is
 * found again by looking up its own address; the build-id fits its buffer. */
#include "fuzz.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize.h"
#include "symtab.h"

static int memfd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Debug files are looked up by build-id and .gnu_debuglink: in a
	 * directory that does not exist, so no real file joins in. */
	FUZZ_CHECK(xpu_elf_set_debug_dir("/nonexistent/xputop-fuzz/debug") == 0);
	memfd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	FUZZ_CHECK(memfd >= 0);
	return 0;
}

static char demangled[8192];	/* the symbolizer's buffer size */

static void check_symbol(const struct xpu_elf *e, const char *name)
{
	size_t len = strlen(name);
	FUZZ_CHECK(len > 0);
	size_t n = xpu_demangle(name, demangled, sizeof(demangled));
	FUZZ_CHECK(n < sizeof(demangled) && demangled[n] == '\0');
}

static void lookup_offset(const struct xpu_elf *e, uint64_t off)
{
	uint64_t vaddr, start;
	if (xpu_elf_offset_to_vaddr(e, off, &vaddr) < 0)
		return;
	static char buf[8192];
	const char *name = xpu_elf_lookup(e, vaddr, &start, buf, sizeof(buf));
	if (name) {
		FUZZ_CHECK(start <= vaddr);
		check_symbol(e, name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	/* A path as a process would see it, so that .gnu_debuglink is followed. */
	struct xpu_elf *e = xpu_elf_load_fd_path(memfd, "/usr/lib/fuzz/libfuzz.so", err, sizeof(err));
	if (!e) {
		FUZZ_CHECK(err[0]);
		return 0;
	}
	size_t idlen;
	const uint8_t *id = xpu_elf_build_id(e, &idlen);
	FUZZ_CHECK(idlen <= 64 && !id == !idlen);
	fuzz_touch(id, idlen);

	const struct xpu_symtab *t = xpu_elf_symtab(e);
	FUZZ_CHECK(t->n == xpu_elf_nsyms(e));
	for (size_t i = 0; i < t->n; i++) {
		const struct xpu_sym *s = &t->v[i];
		FUZZ_CHECK(i == 0 || t->v[i - 1].start < s->start);
		uint64_t start;
		static char name[8192], again[8192];
		FUZZ_CHECK(xpu_elf_find(e, s->start, &start) == i && start == s->start);
		size_t n = xpu_elf_sym_name(e, (uint32_t)i, name, sizeof(name));
		FUZZ_CHECK(n < sizeof(name) && name[n] == '\0' && strlen(name) == n);
		if (n) {
			FUZZ_CHECK(xpu_elf_lookup(e, s->start, &start, again, sizeof(again)) &&
				   strcmp(again, name) == 0);
			check_symbol(e, name);
		}
		uint64_t last = s->start + s->size - 1;	/* may wrap past 2^64 */
		if (s->size && last >= s->start && xpu_elf_find(e, last, &start) != UINT32_MAX)
			FUZZ_CHECK(start >= s->start);
	}
	/* File offsets as a mapping's addr - start + pgoff gives them. */
	uint64_t offs[] = { 0, 0x40, 0x1000, 0x1040, size / 2, size ? size - 1 : 0, UINT64_MAX };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		lookup_offset(e, offs[i]);
	xpu_elf_free(e);
	return 0;
}
