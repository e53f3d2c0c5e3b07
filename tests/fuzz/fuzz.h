/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c, libFuzzer).
 *
 * A harness feeds one input to the real parser, then checks what the parser
 * promises about its result; a broken promise aborts, which libFuzzer reports
 * as a crash with the input that caused it, like a sanitizer finding. */
#ifndef XPU_FUZZ_H
#define XPU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* Touches every byte of [p, p + n) so that ASan sees an over-read at once. */
static inline unsigned fuzz_touch(const void *p, size_t n)
{
	const volatile unsigned char *b = p;
	unsigned x = 0;
	for (size_t i = 0; i < n; i++)
		x += b[i];
	return x;
}

#endif
