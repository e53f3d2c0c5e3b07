/* SPDX-License-Identifier: GPL-2.0-only */
/* The recording format's numbers and byte order (docs/recording-format.md),
 * shared by its writer (record_write.c) and its reader (record.c); no one
 * else includes this. */
#ifndef XPU_RECORD_FMT_H
#define XPU_RECORD_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "event.h"

/* The numbers of docs/recording-format.md. */
static const char rec_magic[8] = "XPUTOPRC";
#define REC_MINOR 10			/* raised for additions an older reader can skip */
#define HDR_FIXED 20			/* magic, version, header size, header checksum */
#define HDR_META 44			/* where the metadata strings start */
#define HDR_MIN (HDR_META + 3 * 2)	/* a version 1.0 header with empty strings */
#define HDR_MAX 65536
#define BLK_MAGIC 0x4b4c4258u		/* "XBLK" */
#define BLK_HDR 16
#define BLK_TARGET 65536		/* the writer closes a block before its payload passes this */
#define BLK_MAX (4u << 20)		/* the largest payload a reader accepts */
#define REC_HDR 4
/* The refresh intervals -d allows; 0 means not recorded.  The replay sizes
 * its windows by the interval: a damaged one must not ask for gigabytes. */
#define INTERVAL_MIN_NS 50000000ULL
#define INTERVAL_MAX_NS 3600000000000ULL

enum rec_type {
	REC_STRING = 1, REC_FRAME = 2, REC_STACK = 3, REC_EVENT = 4, REC_FORGET = 5,
	REC_PENDING = 6, REC_EXPAND = 7,
	REC_LAST = REC_EXPAND
};
#define FORGET_MAX 1024			/* stack ids in one FORGET record */

/* Events are stored as the struct is laid out in memory; that is the format
 * only on a little-endian host with this layout. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the recording format is little-endian");
_Static_assert(offsetof(struct xpu_event, time) == 16 && offsetof(struct xpu_event, raw) == 24,
	       "struct xpu_event's layout is part of the recording format");

static inline void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The header's checksum covers the whole header but the checksum field. */
static inline uint32_t header_crc(const uint8_t *h, uint32_t n)
{
	uLong c = crc32(crc32(0L, Z_NULL, 0), h, 16);
	return (uint32_t)crc32(c, h + HDR_FIXED, n - HDR_FIXED);
}

/* A block's checksum covers its header's magic, length and count, then the payload. */
static inline uint32_t block_crc(const uint8_t *hdr, const uint8_t *payload, uint32_t len)
{
	uLong c = crc32(crc32(0L, Z_NULL, 0), hdr, 12);
	return (uint32_t)crc32(c, payload, len);
}

#endif
