/* SPDX-License-Identifier: GPL-2.0-only */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dict.h"
#include "err.h"
#include "event.h"
#include "grow.h"
#include "record_fmt.h"

/* The recording's reader (record.h): a file, a buffer in memory, or a
 * stream fed as it comes; its writer is record_write.c. */

struct xpu_rec_reader {
	int fd;				/* the file, or -1 when reading mem */
	const uint8_t *mem;
	uint64_t size;
	/* A stream (xpu_rec_open_stream): mem is sbuf, which xpu_rec_feed
	 * fills; blocks are read once they have come whole. */
	int stream, have_header;
	uint8_t *sbuf;
	size_t scap;
	uint8_t *buf;			/* what fetch() read from the file */
	size_t buf_cap;
	struct xpu_dict *dict;
	/* The file's ids -> the dictionary's: models may intern entries of
	 * their own while a replay runs, so the two numberings can differ. */
	struct id_map { uint32_t *v; uint32_t n, cap; } map[3];
	struct xpu_rec_meta meta;
	uint32_t next_pending;		/* file id of the frame a PENDING record announced */
	int newer;			/* written by a newer minor version */
	uint64_t skipped;
	uint64_t first;			/* offset of the first block */
	uint64_t next;			/* offset of the next block */
	uint64_t block;			/* number of the current block (from 1), 0 before */
	const uint8_t *pay, *p, *end;	/* the current payload and the cursor in it */
	uint64_t pay_off;		/* file offset of pay */
	uint32_t count, seen;		/* records the block says it holds, records read */
	int failed;
	char err[512];
	char warning[512];		/* what verify left out at the end, "" if nothing */
};

struct block {
	const uint8_t *pay;
	uint32_t len, count;
};

static int fail(struct xpu_rec_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct xpu_rec_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

#define damage(r, no, at, fmt, ...)                                                       \
	fail(r, "damaged recording: block %llu at byte %llu: " fmt, (unsigned long long)(no), \
	     (unsigned long long)(at), ##__VA_ARGS__)

/* Returns len bytes at off (the caller checked that they lie inside the
 * file), valid until the next fetch; NULL on a read error. */
static const uint8_t *fetch(struct xpu_rec_reader *r, uint64_t off, size_t len)
{
	size_t got = 0;

	if (r->fd < 0)
		return r->mem + off;
	if (len > r->buf_cap) {
		uint8_t *b = realloc(r->buf, len);
		if (!b) {
			fail(r, "out of memory reading %zu bytes", len);
			return NULL;
		}
		r->buf = b;
		r->buf_cap = len;
	}
	while (got < len) {
		ssize_t k = pread(r->fd, r->buf + got, len - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fail(r, "cannot read at byte %llu: %s", (unsigned long long)(off + got),
			     k ? strerror(errno) : "the file has become shorter");
			return NULL;
		}
		got += (size_t)k;
	}
	return r->buf;
}

static int get_str(const uint8_t **p, const uint8_t *end, char *dst, size_t size)
{
	if (end - *p < 2)
		return -1;
	size_t n = get16(*p);
	if ((size_t)(end - *p - 2) < n)
		return -1;
	size_t keep = n < size - 1 ? n : size - 1;
	memcpy(dst, *p + 2, keep);
	dst[keep] = '\0';
	*p += 2 + n;
	return 0;
}

/* Bytes after the strings belong to newer minor versions and are ignored. */
static int read_meta(struct xpu_rec_reader *r, const uint8_t *h, uint32_t hsize)
{
	struct xpu_rec_meta *m = &r->meta;
	const uint8_t *p = h + HDR_META, *end = h + hsize;

	m->sample_hz = get32(h + 20);
	m->ncpus = get32(h + 24);
	m->start_wall_ns = get64(h + 28);
	m->interval_ns = get64(h + 36);
	if (m->interval_ns && (m->interval_ns < INTERVAL_MIN_NS || m->interval_ns > INTERVAL_MAX_NS))
		return fail(r, "damaged recording: the header's refresh interval of %llu ns is not "
			    "0.05 to 3600 s", (unsigned long long)m->interval_ns);
	if (get_str(&p, end, m->host, sizeof(m->host)) ||
	    get_str(&p, end, m->kernel, sizeof(m->kernel)) ||
	    get_str(&p, end, m->version, sizeof(m->version)))
		return fail(r, "damaged recording: a string in the header runs past its end");
	return 0;
}

static int read_header(struct xpu_rec_reader *r)
{
	size_t have = r->size < HDR_MAX ? (size_t)r->size : HDR_MAX;
	const uint8_t *h;

	if (r->size == 0)
		return fail(r, "the file is empty; it is not an xputop recording");
	if (!(h = fetch(r, 0, have)))
		return -1;
	if (memcmp(h, rec_magic, have < sizeof(rec_magic) ? have : sizeof(rec_magic)))
		return fail(r, "not an xputop recording (it does not start with \"XPUTOPRC\")");
	if (have < HDR_FIXED)
		return fail(r, "truncated recording: the file ends at byte %zu, inside the header", have);
	unsigned major = get16(h + 8);
	uint32_t hsize = get32(h + 12);
	if (major > XPU_REC_VERSION)
		return fail(r, "recording format version %u is newer than this xputop understands (%u)",
			    major, XPU_REC_VERSION);
	if (major < XPU_REC_VERSION)
		return fail(r, "recording format version %u is not supported (this xputop reads %u)",
			    major, XPU_REC_VERSION);
	if (hsize < HDR_MIN || hsize > HDR_MAX)
		return fail(r, "damaged recording: header size %u is impossible", hsize);
	if (hsize > have)
		return fail(r, "truncated recording: the header needs %u bytes, the file has %zu",
			    hsize, have);
	if (header_crc(h, hsize) != get32(h + 16))
		return fail(r, "damaged recording: header checksum mismatch");
	r->newer = get16(h + 10) > REC_MINOR;
	r->first = r->next = hsize;
	return read_meta(r, h, hsize);
}

/* Opening ends here: on failure the message goes to err and r is freed. */
static struct xpu_rec_reader *finish_open(struct xpu_rec_reader *r, char *err, size_t errlen)
{
	if (!r->failed && read_header(r) == 0)
		return r;
	snprintf(err, errlen, "%s", r->err);
	xpu_rec_close_reader(r);
	return NULL;
}

struct xpu_rec_reader *xpu_rec_open(const char *path, struct xpu_dict *dict, char *err,
				    size_t errlen)
{
	struct xpu_rec_reader *r = calloc(1, sizeof(*r));
	struct stat st;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->dict = dict;
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused next. */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0 || fstat(r->fd, &st))
		fail(r, "cannot open: %s", strerror(errno));
	else if (S_ISDIR(st.st_mode))
		fail(r, "a directory, not a recording");
	else if (!S_ISREG(st.st_mode))
		fail(r, "not a regular file (a pipe or device cannot be replayed)");
	else
		r->size = (uint64_t)st.st_size;
	return finish_open(r, err, errlen);
}

struct xpu_rec_reader *xpu_rec_open_mem(const void *buf, size_t len, struct xpu_dict *dict,
					char *err, size_t errlen)
{
	struct xpu_rec_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->fd = -1;
	r->mem = buf;
	r->size = len;
	r->dict = dict;
	return finish_open(r, err, errlen);
}

/* Block no, at off, needs `need` bytes but the file ends first. */
static int truncated(struct xpu_rec_reader *r, uint64_t off, uint64_t no, uint64_t need)
{
	char intact[64] = "no block is intact";

	if (no == 2)
		snprintf(intact, sizeof(intact), "the first block is intact");
	else if (no > 2)
		snprintf(intact, sizeof(intact), "the first %llu blocks are intact",
			 (unsigned long long)(no - 1));
	return fail(r, "truncated recording: ends inside block %llu at byte %llu (the block starts "
		    "at byte %llu and needs %llu bytes); %s", (unsigned long long)no,
		    (unsigned long long)r->size, (unsigned long long)off, (unsigned long long)need,
		    intact);
}

/* Reads block number no at off and checks its framing and checksum. */
static int load_block(struct xpu_rec_reader *r, uint64_t off, uint64_t no, struct block *b)
{
	uint8_t h[BLK_HDR];
	uint64_t left = r->size - off;
	const uint8_t *p;

	if (left < BLK_HDR)
		return truncated(r, off, no, BLK_HDR);
	if (!(p = fetch(r, off, BLK_HDR)))
		return -1;
	memcpy(h, p, BLK_HDR);
	if (get32(h) != BLK_MAGIC)
		return damage(r, no, off, "no block starts here");
	b->len = get32(h + 4);
	b->count = get32(h + 8);
	if (b->len > BLK_MAX)
		return damage(r, no, off, "block length %u is over the limit of %u bytes", b->len,
			      BLK_MAX);
	if (b->len > left - BLK_HDR)
		return truncated(r, off, no, BLK_HDR + (uint64_t)b->len);
	if (!(b->pay = fetch(r, off + BLK_HDR, b->len)))
		return -1;
	if (block_crc(h, b->pay, b->len) != get32(h + 12))
		return damage(r, no, off, "checksum mismatch");
	return 0;
}

static int len_ok(enum rec_type type, uint32_t len)
{
	switch (type) {
	case REC_STRING:
		return len >= 4;
	case REC_FRAME:
		return len == 16;
	case REC_STACK:
		return len >= 8 && (len - 8) % 4 == 0 && (len - 8) / 4 <= XPU_DICT_MAX_DEPTH;
	case REC_EVENT:
		return len == sizeof(struct xpu_event);
	case REC_FORGET:
		return len >= 4 && len % 4 == 0 && len / 4 <= FORGET_MAX;
	case REC_PENDING:
		return len == 4;
	case REC_EXPAND:
		return len >= 8 && (len - 8) % 4 == 0 && (len - 8) / 4 <= XPU_DICT_MAX_DEPTH;
	}
	return 1;
}

/* Checks the record at p (file offset at) in block no: that it lies inside
 * the block and that its type and length go together. */
static int record_at(struct xpu_rec_reader *r, uint64_t no, uint64_t at, const uint8_t *p,
		     const uint8_t *end, uint32_t *type, uint32_t *len)
{
	if (end - p < REC_HDR)
		return damage(r, no, at, "record header crosses the end of the block");
	uint32_t word = get32(p);
	*type = word & 0xff;
	*len = word >> 8;
	if (*len > (size_t)(end - p - REC_HDR))
		return damage(r, no, at, "record of %u bytes crosses the end of the block", *len);
	if (*type < REC_STRING || (*type > REC_LAST && !r->newer))
		return damage(r, no, at, "unknown record type %u", *type);
	if (!len_ok(*type, *len))
		return damage(r, no, at, "record of type %u cannot be %u bytes long", *type, *len);
	return 0;
}

/* Checks that the block's records fill its payload exactly. */
static int check_framing(struct xpu_rec_reader *r, uint64_t off, uint64_t no, const struct block *b)
{
	const uint8_t *p = b->pay, *end = b->pay + b->len;
	uint32_t n = 0, type, len;

	for (; p < end; p += REC_HDR + len, n++)
		if (record_at(r, no, off + BLK_HDR + (uint64_t)(p - b->pay), p, end, &type, &len))
			return -1;
	if (n != b->count)
		return damage(r, no, off, "the block says it holds %u records but holds %u", b->count, n);
	return 0;
}

/* Whether the bytes at off, where block no would start, are a torn tail (the
 * file ends inside the block: a full disk, a crash) or not a block at all
 * (garbage appended): everything before them is intact. */
static int torn_tail(struct xpu_rec_reader *r, uint64_t off)
{
	uint64_t left = r->size - off;
	const uint8_t *p;

	if (left < BLK_HDR)
		return 1;
	if (!(p = fetch(r, off, BLK_HDR)))
		return 0;
	uint32_t len = get32(p + 4);
	return get32(p) != BLK_MAGIC || (len <= BLK_MAX && len > left - BLK_HDR);
}

/* The replay ends at off, before block no; the rest is named in the warning. */
static void keep_intact(struct xpu_rec_reader *r, uint64_t off, uint64_t no)
{
	snprintf(r->warning, sizeof(r->warning),
		 "the recording ends in %llu bytes that are not a whole block (from byte %llu, where "
		 "block %llu would start: a full disk or a crash while recording?); the %llu intact "
		 "block%s before them are replayed", (unsigned long long)(r->size - off),
		 (unsigned long long)off, (unsigned long long)no, (unsigned long long)(no - 1),
		 no == 2 ? "" : "s");
	r->size = off;
}

int xpu_rec_verify(struct xpu_rec_reader *r)
{
	struct block b;
	uint64_t off = r->first, no = 1;

	if (r->failed)
		return -1;
	if (r->block)
		return fail(r, "xpu_rec_verify must come before the first xpu_rec_next");
	for (; off < r->size; off += BLK_HDR + (uint64_t)b.len, no++) {
		if (torn_tail(r, off)) {
			keep_intact(r, off, no);
			return 0;
		}
		if (r->failed || load_block(r, off, no, &b) || check_framing(r, off, no, &b))
			return -1;
	}
	return 0;
}

const char *xpu_rec_warning(const struct xpu_rec_reader *r)
{
	return r->warning;
}

/* In a stream: whether the next block has come whole (a bad length is
 * load_block's to report). */
static int block_whole(const struct xpu_rec_reader *r)
{
	uint64_t left = r->size - r->next;
	if (left < BLK_HDR)
		return 0;
	uint32_t len = get32(r->mem + r->next + 4);
	return len > BLK_MAX || left - BLK_HDR >= len;
}

/* Moves to the next block: 1, 0 at the end of the recording, -1 on damage. */
static int next_block(struct xpu_rec_reader *r)
{
	struct block b;

	if (r->block && r->seen != r->count)
		return damage(r, r->block, r->pay_off - BLK_HDR,
			      "the block says it holds %u records but holds %u", r->count, r->seen);
	if (r->next == r->size || (r->stream && !block_whole(r)))
		return 0;
	if (load_block(r, r->next, r->block + 1, &b))
		return -1;
	r->block++;
	r->pay_off = r->next + BLK_HDR;
	r->next = r->pay_off + b.len;
	r->pay = r->p = b.pay;
	r->end = b.pay + b.len;
	r->count = b.count;
	r->seen = 0;
	return 1;
}

enum { MAP_STR, MAP_FRAME, MAP_STACK };

/* A dictionary record must carry the file's next id. */
static int check_seq(struct xpu_rec_reader *r, uint64_t at, const char *what, uint32_t id, int map)
{
	uint32_t want = r->map[map].n + 1;
	if (id != want)
		return damage(r, r->block, at, "%s id %u is out of sequence (expected %u)", what, id, want);
	return 0;
}

/* Records the dictionary id a file id became. */
static int mapped(struct xpu_rec_reader *r, int map, uint32_t got)
{
	struct id_map *m = &r->map[map];
	if (got == 0)
		return fail(r, "out of memory reading the dictionary");
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 1024;
		uint32_t *v = realloc(m->v, (size_t)cap * sizeof(uint32_t));
		if (!v)
			return fail(r, "out of memory reading the dictionary");
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = got;
	return 0;
}

/* A file id (defined already) as a dictionary id; 0 stays 0. */
static uint32_t translate(const struct xpu_rec_reader *r, int map, uint32_t id)
{
	return id ? r->map[map].v[id - 1] : 0;
}

static int read_string(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p, uint32_t len)
{
	uint32_t id = get32(p);
	if (check_seq(r, at, "string", id, MAP_STR))
		return -1;
	return mapped(r, MAP_STR, xpu_dict_str(r->dict, (const char *)p + 4, len - 4));
}

static int read_frame(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p)
{
	uint32_t id = get32(p), kind = get32(p + 4), name = get32(p + 8), module = get32(p + 12);
	uint32_t nstr = r->map[MAP_STR].n;

	if (check_seq(r, at, "frame", id, MAP_FRAME))
		return -1;
	if (kind >= XPU_FRAME_KIND_MAX)
		return damage(r, r->block, at, "frame %u has unknown kind %u", id, kind);
	if (name > nstr || module > nstr)
		return damage(r, r->block, at, "frame %u refers to a string id not defined yet", id);
	name = translate(r, MAP_STR, name);
	module = translate(r, MAP_STR, module);
	int pend = r->next_pending == id;
	r->next_pending = 0;
	return mapped(r, MAP_FRAME, pend ? xpu_dict_frame_pending(r->dict, kind, name, module)
					 : xpu_dict_frame(r->dict, kind, name, module));
}

/* The frame record that follows is a pending frame (dict.h). */
static int read_pending(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p)
{
	uint32_t id = get32(p);
	if (id != r->map[MAP_FRAME].n + 1)
		return damage(r, r->block, at, "announces pending frame %u, not the next frame (%u)", id,
			      r->map[MAP_FRAME].n + 1);
	r->next_pending = id;
	return 0;
}

/* A pending frame's expansion: the stacks holding it are rewritten. */
static int read_expand(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p, uint32_t len)
{
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	uint32_t id = get32(p), n = get32(p + 4), nframes = r->map[MAP_FRAME].n;
	if (len != 8 + 4 * (uint64_t)n)
		return damage(r, r->block, at, "expansion record of %u bytes cannot hold %u frames", len, n);
	if (id == 0 || id > nframes)
		return damage(r, r->block, at, "expands frame %u, not defined yet", id);
	for (uint32_t i = 0; i < n; i++) {
		frames[i] = get32(p + 8 + 4 * i);
		if (frames[i] == 0 || frames[i] > nframes)
			return damage(r, r->block, at, "expansion of frame %u refers to frame id %u, not defined yet",
				      id, frames[i]);
		frames[i] = translate(r, MAP_FRAME, frames[i]);
	}
	int rc = xpu_dict_frame_expand(r->dict, translate(r, MAP_FRAME, id), frames, n);
	if (rc == -ENOMEM)
		return fail(r, "out of memory reading the dictionary");
	if (rc < 0)
		return damage(r, r->block, at, "expands frame %u, which is not pending", id);
	return 0;
}

static int read_stack(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p, uint32_t len)
{
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	uint32_t id = get32(p), n = get32(p + 4);

	if (len != 8 + 4 * (uint64_t)n)
		return damage(r, r->block, at, "stack record of %u bytes cannot hold %u frames", len, n);
	if (check_seq(r, at, "stack", id, MAP_STACK))
		return -1;
	memcpy(frames, p + 8, (size_t)n * 4);
	for (uint32_t i = 0; i < n; i++) {
		if (frames[i] == 0 || frames[i] > r->map[MAP_FRAME].n)
			return damage(r, r->block, at, "stack %u refers to frame id %u, not defined yet",
				      id, frames[i]);
		frames[i] = translate(r, MAP_FRAME, frames[i]);
	}
	return mapped(r, MAP_STACK, xpu_dict_stack(r->dict, frames, n));
}

/* A FORGET record: the writer's session swept these stacks, so the file
 * will not use their ids again and the replay need not hold them. */
static int read_forget(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p, uint32_t len)
{
	struct id_map *m = &r->map[MAP_STACK];
	for (uint32_t i = 0; i < len / 4; i++) {
		uint32_t id = get32(p + 4 * i);
		if (id == 0 || id > m->n)
			return damage(r, r->block, at, "forgets stack id %u, not defined yet", id);
		if (!m->v[id - 1])
			return damage(r, r->block, at, "forgets stack id %u twice", id);
		m->v[id - 1] = 0;
	}
	return 0;
}

void xpu_rec_mark_stacks(const struct xpu_rec_reader *r, struct xpu_dict *d)
{
	for (uint32_t i = 0; i < r->map[MAP_STACK].n; i++)
		xpu_dict_mark_stack(d, r->map[MAP_STACK].v[i]);
}

/* Renumbers an event's ids from the file's to the dictionary's, refusing
 * ids the file has not defined (or has forgotten). */
static int renumber(void *ctx, uint32_t *id, int kind)
{
	const struct xpu_rec_reader *r = ctx;
	int map = kind == XPU_ID_STACK ? MAP_STACK : MAP_STR;
	if (*id > r->map[map].n || (*id && !translate(r, map, *id)))
		return kind + 1;
	*id = translate(r, map, *id);
	return 0;
}

static int read_event(struct xpu_rec_reader *r, uint64_t at, const uint8_t *p,
		      struct xpu_event *ev)
{
	const char *why;

	memcpy(ev, p, sizeof(*ev));
	/* A newer minor's types, and those set aside below the highest this
	 * build knows for additions it lacks, are skipped (recording-format.md). */
	int gap = ev->type > XPU_EV_NONE && ev->type < XPU_EV_TYPE_MAX && !xpu_event_type_known(ev->type);
	if (gap || (r->newer && (ev->type == XPU_EV_NONE || ev->type >= XPU_EV_TYPE_MAX))) {
		r->skipped++;
		return 0;
	}
	int bad = xpu_event_ids(ev, renumber, r);
	if (bad > 0)
		return damage(r, r->block, at, "event of type %u: refers to a %s id not defined yet",
			      ev->type, bad == XPU_ID_STACK + 1 ? "stack" : "string");
	if (xpu_event_check(ev, r->dict, &why))
		return damage(r, r->block, at, "event of type %u: %s", ev->type, why);
	return 1;
}

/* Reads the record at the cursor: 1 for an event, 0 for anything else, -1 on damage. */
static int read_record(struct xpu_rec_reader *r, struct xpu_event *ev)
{
	uint64_t at = r->pay_off + (uint64_t)(r->p - r->pay);
	uint32_t type, len;

	if (record_at(r, r->block, at, r->p, r->end, &type, &len))
		return -1;
	const uint8_t *p = r->p + REC_HDR;
	r->p += REC_HDR + len;
	r->seen++;
	switch (type) {
	case REC_STRING:
		return read_string(r, at, p, len);
	case REC_FRAME:
		return read_frame(r, at, p);
	case REC_STACK:
		return read_stack(r, at, p, len);
	case REC_EVENT:
		return read_event(r, at, p, ev);
	case REC_FORGET:
		return read_forget(r, at, p, len);
	case REC_PENDING:
		return read_pending(r, at, p);
	case REC_EXPAND:
		return read_expand(r, at, p, len);
	}
	r->skipped++;
	return 0;
}

/* In a stream: reads the header once it has come whole.  1 when read, 0
 * while it has not come, -1 when it is bad. */
static int stream_header(struct xpu_rec_reader *r)
{
	if (r->have_header)
		return 1;
	if (r->size < HDR_FIXED)
		return 0;
	uint32_t hsize = get32(r->mem + 12);
	if (hsize >= HDR_MIN && hsize <= HDR_MAX && r->size < hsize)
		return 0;
	if (read_header(r) < 0)
		return -1;
	r->have_header = 1;
	return 1;
}

int xpu_rec_next(struct xpu_rec_reader *r, struct xpu_event *ev)
{
	if (r->failed)
		return -1;
	if (r->stream) {
		int h = stream_header(r);
		if (h <= 0)
			return h;
	}
	for (;;) {
		int rc;
		if (r->p == r->end) {
			rc = next_block(r);
			if (rc <= 0)
				return rc;
		} else {
			rc = read_record(r, ev);
			if (rc)
				return rc;
		}
	}
}

struct xpu_rec_reader *xpu_rec_open_stream(struct xpu_dict *dict)
{
	struct xpu_rec_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	r->stream = 1;
	r->dict = dict;
	return r;
}

int xpu_rec_feed(struct xpu_rec_reader *r, const void *buf, size_t len)
{
	if (r->failed)
		return -1;
	if (r->p != r->end)
		return fail(r, "xpu_rec_feed before the block read was finished");
	/* What was read is dropped: the blocks before next, the header. */
	size_t done = r->have_header ? (size_t)r->next : 0;
	if (done)
		memmove(r->sbuf, r->sbuf + done, (size_t)r->size - done);
	r->size -= done;
	r->next -= done;
	r->pay = r->p = r->end = NULL;
	if (r->size + len > r->scap) {
		size_t cap = r->scap ? r->scap : 65536;
		while (cap < r->size + len)
			cap *= 2;
		uint8_t *b = realloc(r->sbuf, cap);
		if (!b)
			return fail(r, "out of memory reading the stream");
		r->sbuf = b;
		r->scap = cap;
	}
	if (len)
		memcpy(r->sbuf + r->size, buf, len);
	r->size += len;
	r->mem = r->sbuf;
	return 0;
}

int xpu_rec_stream_header(struct xpu_rec_reader *r)
{
	return r->failed ? -1 : stream_header(r);
}

const struct xpu_rec_meta *xpu_rec_meta(const struct xpu_rec_reader *r)
{
	return &r->meta;
}

const char *xpu_rec_error(const struct xpu_rec_reader *r)
{
	return r->err;
}

uint64_t xpu_rec_skipped(const struct xpu_rec_reader *r)
{
	return r->skipped;
}

void xpu_rec_close_reader(struct xpu_rec_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (int m = 0; m < 3; m++)
		free(r->map[m].v);
	free(r->buf);
	free(r->sbuf);
	free(r);
}
