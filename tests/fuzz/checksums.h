/* SPDX-License-Identifier: GPL-2.0-only */
/* Recomputes a recording's checksums, for the harnesses that read
 * recordings: random bytes almost never pass a CRC, so without this
 * everything behind the checksums would go unfuzzed. */
#ifndef XPU_FUZZ_CHECKSUMS_H
#define XPU_FUZZ_CHECKSUMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"

/* The format's numbers (docs/recording-format.md). */
#define HDR_FIXED 20
#define BLK_HDR 16

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Rewrites the header's and each block's CRC to match their bytes; returns
 * whether anything changed. */
static inline int fix_checksums(uint8_t *b, size_t size)
{
	int changed = 0;
	if (size < HDR_FIXED || memcmp(b, "XPUTOPRC", 8) != 0)
		return 0;
	uint32_t hsize = get32(b + 12);
	if (hsize < HDR_FIXED || hsize > size)
		return 0;
	uLong c = crc32(crc32(0L, Z_NULL, 0), b, 16);
	c = crc32(c, b + HDR_FIXED, hsize - HDR_FIXED);
	changed |= get32(b + 16) != (uint32_t)c;
	put32(b + 16, (uint32_t)c);
	for (size_t off = hsize; size - off >= BLK_HDR;) {
		uint32_t len = get32(b + off + 4);
		if (len > size - off - BLK_HDR)
			break;
		c = crc32(crc32(crc32(0L, Z_NULL, 0), b + off, 12), b + off + BLK_HDR, len);
		changed |= get32(b + off + 12) != (uint32_t)c;
		put32(b + off + 12, (uint32_t)c);
		off += BLK_HDR + (size_t)len;
	}
	return changed;
}

/* Runs read() on an exact-size copy of the input (so that reading past the
 * end is an ASan report), then again once its checksums are made right. */
static inline void fuzz_recording(const uint8_t *data, size_t size, void (*read)(const uint8_t *, size_t))
{
	uint8_t *buf = malloc(size ? size : 1);
	FUZZ_CHECK(buf);
	memcpy(buf, data, size);
	read(buf, size);
	if (fix_checksums(buf, size))
		read(buf, size);
	free(buf);
}

#endif
