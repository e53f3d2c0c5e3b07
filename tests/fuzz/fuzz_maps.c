/* SPDX-License-Identifier: GPL-2.0-only */
/* The /proc/PID/maps parser (core/symbols/maps.c): one input is a maps file.  The
 * kernel writes it, but its paths are file names anyone chooses (spaces,
 * newlines, " (deleted)" at the end).  Checks the parser's promises: any
 * bytes parse; bad lines are counted, never more than there are lines; each
 * mapping has start < end, valid permissions and a terminated path inside the
 * parser's own copy of the text; mappings are sorted; and a lookup returns
 * only a mapping that holds the address. */
#include "fuzz.h"

#include <string.h>

#include "symbolize.h"

static int one_of(char c, const char *set)
{
	return c && strchr(set, c);
}

static void check_find(const struct xpu_maps *m, uint64_t addr)
{
	const struct xpu_map *f = xpu_maps_find(m, addr);
	if (f)
		FUZZ_CHECK(f >= m->v && f < m->v + m->n && f->start <= addr && addr < f->end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	FUZZ_CHECK(text);
	memcpy(text, data, size);
	struct xpu_maps maps;
	size_t bad = SIZE_MAX, lines = 0;
	FUZZ_CHECK(xpu_maps_parse(text, size, &maps, &bad) == 0);
	free(text);	/* the paths point into the parser's copy, not ours */
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines += size && data[size - 1] != '\n';
	FUZZ_CHECK(bad <= lines && maps.n + bad <= lines);
	for (size_t i = 0; i < maps.n; i++) {
		const struct xpu_map *m = &maps.v[i];
		FUZZ_CHECK(m->start < m->end);
		FUZZ_CHECK(one_of(m->perms[0], "r-") && one_of(m->perms[1], "w-") &&
			   one_of(m->perms[2], "x-") && one_of(m->perms[3], "ps") && !m->perms[4]);
		FUZZ_CHECK(m->path >= maps.text && m->path <= maps.text + size);
		size_t len = strlen(m->path);
		FUZZ_CHECK(m->path + len <= maps.text + size);
		FUZZ_CHECK(!memchr(m->path, '\n', len));
		FUZZ_CHECK(i == 0 || maps.v[i - 1].start <= m->start);
		check_find(&maps, m->start);
		check_find(&maps, m->end - 1);
		check_find(&maps, m->end);
		check_find(&maps, m->start - 1);
	}
	check_find(&maps, 0);
	check_find(&maps, UINT64_MAX);
	xpu_maps_free(&maps);
	return 0;
}
