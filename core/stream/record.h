/* SPDX-License-Identifier: GPL-2.0-only */
/* Recording and replaying the normalized event stream.
 *
 * A recording holds the session's metadata, the dictionary entries (strings,
 * frames, stacks) and the events, in checksummed blocks.  The format is
 * versioned and documented in docs/recording-format.md.  The reader checks
 * every block and every record before anything reaches a model: a damaged or
 * truncated file gives a clear error naming the offset, never a crash or a
 * silently different picture.
 */
#ifndef XPU_RECORD_H
#define XPU_RECORD_H

#include <stddef.h>
#include <stdint.h>

struct xpu_dict;
struct xpu_event;

#define XPU_REC_VERSION 1

/* What the replay needs to know about the session that made the recording. */
struct xpu_rec_meta {
	uint32_t sample_hz;	/* CPU sampling frequency */
	uint32_t ncpus;		/* online CPUs */
	uint64_t start_wall_ns;	/* CLOCK_REALTIME at the start */
	uint64_t interval_ns;	/* refresh interval */
	char host[64];
	char kernel[64];	/* uname -r */
	char version[32];	/* xputop version that wrote it */
};

struct xpu_rec_writer;

/* Creates a new recording (never overwrites a file that is not a recording;
 * O_NOFOLLOW).  A write that fails (a full disk) cuts the file back to its
 * last whole block.  Returns NULL with a message in err on failure. */
struct xpu_rec_writer *xpu_rec_create(const char *path, const struct xpu_dict *dict,
				      const struct xpu_rec_meta *meta, char *err, size_t errlen);
/* As xpu_rec_create, while input (a path, NULL for none) is being read:
 * refuses when path is the same file by any name, before truncating it. */
struct xpu_rec_writer *xpu_rec_create_from(const char *path, const char *input,
					   const struct xpu_dict *dict,
					   const struct xpu_rec_meta *meta, char *err, size_t errlen);
/* As xpu_rec_create, but the header and each block go to sink (which
 * returns 0 or -errno; an error ends the writer like a failed write).  The
 * network form of a recording: core/sources/share.c.  NULL when out of memory. */
typedef int (*xpu_rec_sink_fn)(void *arg, const void *buf, size_t len);
struct xpu_rec_writer *xpu_rec_create_sink(const struct xpu_dict *dict, const struct xpu_rec_meta *meta,
					   xpu_rec_sink_fn sink, void *arg);
/* Appends one event, writing first any dictionary entries created since the
 * last call.  Returns 0 or -errno. */
int xpu_rec_write(struct xpu_rec_writer *w, const struct xpu_event *ev);
/* The dictionary is about to free stack id (a sweep): the file forgets it,
 * and an event that uses the id again after its reuse redefines it. */
void xpu_rec_forget_stack(struct xpu_rec_writer *w, uint32_t id);
/* Writes the pending block out (called at each tick). */
int xpu_rec_flush(struct xpu_rec_writer *w);
/* Flushes, closes and frees.  Returns 0 or -errno. */
int xpu_rec_close(struct xpu_rec_writer *w);
/* Size of the recording so far, counting the block not yet written out. */
uint64_t xpu_rec_bytes(const struct xpu_rec_writer *w);

struct xpu_rec_reader;

/* Opens a recording and checks its header.  Dictionary entries read later are
 * added to `dict` (which may hold entries already: the file's ids are
 * renumbered into it).  Returns NULL with a message in err.
 * Reader messages do not name the file: the caller does. */
struct xpu_rec_reader *xpu_rec_open(const char *path, struct xpu_dict *dict, char *err,
				    size_t errlen);
/* As xpu_rec_open, over a buffer (for tests and fuzzers; not copied). */
struct xpu_rec_reader *xpu_rec_open_mem(const void *buf, size_t len, struct xpu_dict *dict,
					char *err, size_t errlen);
/* A reader of a recording that comes in pieces (a socket): xpu_rec_feed
 * adds bytes, and xpu_rec_next returns 0 until a whole block has come.  Feed
 * only after xpu_rec_next returned 0.  Same checks as a file. */
struct xpu_rec_reader *xpu_rec_open_stream(struct xpu_dict *dict);
int xpu_rec_feed(struct xpu_rec_reader *r, const void *buf, size_t len);
/* Reads the stream's header (and so xpu_rec_meta) if it has come whole:
 * 1 when it has, 0 while it has not, -1 when it is bad. */
int xpu_rec_stream_header(struct xpu_rec_reader *r);
const struct xpu_rec_meta *xpu_rec_meta(const struct xpu_rec_reader *r);
/* Reads the next event.  Returns 1 with *ev filled, 0 at the end of the
 * recording, or -1 on damage (xpu_rec_error() says what and where). */
int xpu_rec_next(struct xpu_rec_reader *r, struct xpu_event *ev);
/* Checks the framing and checksums of the whole recording without decoding
 * it, so that a damaged file is refused before anything is shown.  A file
 * whose end is torn (cut inside a block: a full disk) or followed by bytes
 * that are not a block is not refused: reading stops after its last intact
 * block and xpu_rec_warning() says what was left out.  Call it before the
 * first xpu_rec_next; reading then starts at the beginning.  Returns 0, or
 * -1 (xpu_rec_error() says what and where). */
int xpu_rec_verify(struct xpu_rec_reader *r);
/* What xpu_rec_verify left out at the end of the file; "" when nothing. */
const char *xpu_rec_warning(const struct xpu_rec_reader *r);
const char *xpu_rec_error(const struct xpu_rec_reader *r);
/* Marks the stacks the reader maps file ids to (a sweep, dict.h): the file
 * may use any of them again until it forgets them. */
void xpu_rec_mark_stacks(const struct xpu_rec_reader *r, struct xpu_dict *d);
/* Records and events skipped because a newer minor version of the format
 * wrote them and this reader does not know their type. */
uint64_t xpu_rec_skipped(const struct xpu_rec_reader *r);
void xpu_rec_close_reader(struct xpu_rec_reader *r);

#endif
