/* SPDX-License-Identifier: GPL-2.0-only */
/* The perf-map parser (core/symbols/perfmap.c): one input is a /tmp/perf-PID.map,
 * written by whatever JIT runs in a monitored process.  Checks the parser's
 * promises: it parses any bytes (NULL only when memory runs out); bad lines
 * are counted, never more than there are lines; and lookups, at and around
 * every address the text names, return either nothing or a non-empty name of
 * at most 4096 bytes that is taken from the text. */
#include "fuzz.h"

#include <string.h>

#include "symbolize.h"

/* Searching the text for every name found would make large inputs slow
 * (lines x bytes): the first few names found are searched for. */
#define SEARCHED 16

static void check_lookup(const struct xpu_perfmap *m, uint64_t addr, const char *text, size_t size,
			 int *searched)
{
	const char *name = xpu_perfmap_lookup(m, addr);
	if (!name)
		return;
	size_t len = strlen(name);
	FUZZ_CHECK(len > 0 && len <= 4096 && !memchr(name, '\n', len));
	if ((*searched)++ < SEARCHED)
		FUZZ_CHECK(memmem(text, size, name, len) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	FUZZ_CHECK(text);
	memcpy(text, data, size);
	size_t bad = SIZE_MAX, lines = 0;
	int searched = 0;
	struct xpu_perfmap *m = xpu_perfmap_parse(text, size, &bad);
	FUZZ_CHECK(m);
	for (size_t i = 0; i < size; i++)
		lines += text[i] == '\n';
	lines += size && text[size - 1] != '\n';
	FUZZ_CHECK(bad <= lines);
	FUZZ_CHECK(xpu_perfmap_nsyms(m) + bad <= lines);

	/* Every line's two leading numbers, read loosely, as addresses to try. */
	for (const char *s = text, *end = text + size; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char line[64];
		size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		memcpy(line, s, k);
		line[k] = '\0';
		char *p;
		uint64_t start = strtoull(line, &p, 16), len = strtoull(p, NULL, 16);
		uint64_t probes[] = { start - 1, start, start + len / 2, start + len - 1, start + len };
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			check_lookup(m, probes[i], text, size, &searched);
		s += n + 1;
	}
	check_lookup(m, 0, text, size, &searched);
	check_lookup(m, UINT64_MAX, text, size, &searched);
	xpu_perfmap_free(m);
	free(text);
	return 0;
}
