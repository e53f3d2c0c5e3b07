/* SPDX-License-Identifier: GPL-2.0-only */
/* The recording's writer (record.h): a file, or a sink that a stream is
 * sent through (core/sources/share.c). */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dict.h"
#include "err.h"
#include "event.h"
#include "grow.h"
#include "record_fmt.h"
#include "sys.h"

struct xpu_rec_writer {
	int fd;					/* the file, or -1 when writing to sink */
	xpu_rec_sink_fn sink;
	void *sink_arg;
	const struct xpu_dict *dict;
	uint32_t nstr, nframes;			/* dictionary entries already recorded */
	uint32_t nexp;				/* pending frames' expansions recorded (dict.h) */
	/* Stacks get file ids of their own, written before their first event:
	 * the dictionary reuses the ids of stacks it sweeps (dict.h). */
	uint32_t *fid;				/* dictionary stack id - 1 -> file id, 0 = none */
	uint32_t fid_cap;
	uint32_t nstacks;			/* file stack ids handed out */
	uint32_t forget[FORGET_MAX];		/* file ids of swept stacks, not written yet */
	uint32_t nforget;
	uint8_t *buf;				/* the open block: header, then payload */
	size_t len, cap;
	uint32_t nrec;
	uint64_t written;			/* bytes in the file */
	int err;				/* first failure; the recording ends there */
};

/* At most size - 1 bytes, so that the reader's copy fits with its NUL. */
static size_t put_str(uint8_t *p, const char *s, size_t size)
{
	size_t n = strnlen(s, size - 1);
	put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return 2 + n;
}

/* h must hold HDR_MIN plus the three strings' sizes. */
static size_t encode_header(uint8_t *h, const struct xpu_rec_meta *m)
{
	size_t n = HDR_META;
	memcpy(h, rec_magic, sizeof(rec_magic));
	put16(h + 8, XPU_REC_VERSION);
	put16(h + 10, REC_MINOR);
	put32(h + 20, m->sample_hz);
	put32(h + 24, m->ncpus);
	put64(h + 28, m->start_wall_ns);
	put64(h + 36, m->interval_ns);
	n += put_str(h + n, m->host, sizeof(m->host));
	n += put_str(h + n, m->kernel, sizeof(m->kernel));
	n += put_str(h + n, m->version, sizeof(m->version));
	put32(h + 12, (uint32_t)n);
	put32(h + 16, header_crc(h, (uint32_t)n));
	return n;
}

/* A file that is there already is only reused when it is empty or a
 * recording: a mistyped path must not destroy someone's data. */
static int check_reusable(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st, rst;
	char magic[sizeof(rec_magic)];

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file; not writing to it", path);
		return -1;
	}
	if (st.st_size == 0)
		return 0;
	/* The write-only fd cannot read; a second one must be the same file. */
	int rfd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0) {
		snprintf(err, errlen, "cannot read %s to check that it is a recording: %s", path,
			 strerror(errno));
		return -1;
	}
	int same = !fstat(rfd, &rst) && rst.st_dev == st.st_dev && rst.st_ino == st.st_ino;
	ssize_t n = same ? pread(rfd, magic, sizeof(magic), 0) : -1;
	close(rfd);
	if (n == (ssize_t)sizeof(magic) && memcmp(magic, rec_magic, sizeof(magic)) == 0)
		return 0;
	snprintf(err, errlen, "%s exists and is not an xputop recording; not overwriting it", path);
	return -1;
}

static int parse_id(const char *s, unsigned long *v)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v >= UINT32_MAX ? -1 : 0;
}

/* Under sudo the recording belongs to the user who asked for it, not to root. */
static void give_to_sudo_user(int fd, const char *path)
{
	unsigned long uid, gid;
	if (geteuid() != 0 || parse_id(getenv("SUDO_UID"), &uid) ||
	    parse_id(getenv("SUDO_GID"), &gid))
		return;
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		xpu_warn("cannot give %s to uid %lu: %s", path, uid, strerror(errno));
}

/* The output must not be the file being read, by whatever name (a second
 * path, a hard link, a bind mount): checked on the open descriptor, before
 * anything is truncated. */
static int check_not_input(int fd, const char *path, const char *input, char *err, size_t errlen)
{
	struct stat out, in;
	if (!input || stat(input, &in) || fstat(fd, &out))
		return 0;
	if (out.st_dev != in.st_dev || out.st_ino != in.st_ino)
		return 0;
	snprintf(err, errlen, "%s is the file being replayed (%s); not overwriting it", path, input);
	return -1;
}

/* Opens path for writing, emptied, or returns -1 with a message. */
static int open_target(const char *path, const char *input, char *err, size_t errlen)
{
	/* O_NONBLOCK only keeps a FIFO from hanging the open; it is refused next. */
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0 && errno == ELOOP) {
		snprintf(err, errlen, "%s is a symbolic link; not following it", path);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (check_not_input(fd, path, input, err, errlen) || check_reusable(fd, path, err, errlen)) {
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0)) {
		snprintf(err, errlen, "cannot truncate %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The header and each block go to fd, or to the sink. */
static int emit(struct xpu_rec_writer *w, const uint8_t *p, size_t n)
{
	return w->sink ? w->sink(w->sink_arg, p, n) : xpu_sys_write_all(w->fd, p, n);
}

struct xpu_rec_writer *xpu_rec_create(const char *path, const struct xpu_dict *dict,
				      const struct xpu_rec_meta *meta, char *err, size_t errlen)
{
	return xpu_rec_create_from(path, NULL, dict, meta, err, errlen);
}

struct xpu_rec_writer *xpu_rec_create_from(const char *path, const char *input,
					   const struct xpu_dict *dict,
					   const struct xpu_rec_meta *meta, char *err, size_t errlen)
{
	uint8_t h[HDR_MIN + sizeof(meta->host) + sizeof(meta->kernel) + sizeof(meta->version)];
	struct xpu_rec_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w || !(w->buf = malloc(BLK_HDR + BLK_TARGET))) {
		snprintf(err, errlen, "cannot record to %s: out of memory", path);
		free(w);
		return NULL;
	}
	w->dict = dict;
	w->cap = BLK_HDR + BLK_TARGET;
	w->len = BLK_HDR;
	w->fd = open_target(path, input, err, errlen);
	if (w->fd < 0) {
		free(w->buf);
		free(w);
		return NULL;
	}
	give_to_sudo_user(w->fd, path);
	w->written = encode_header(h, meta);
	rc = emit(w, h, w->written);
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		xpu_rec_close(w);
		return NULL;
	}
	return w;
}

struct xpu_rec_writer *xpu_rec_create_sink(const struct xpu_dict *dict, const struct xpu_rec_meta *meta,
					   xpu_rec_sink_fn sink, void *arg)
{
	uint8_t h[HDR_MIN + sizeof(meta->host) + sizeof(meta->kernel) + sizeof(meta->version)];
	struct xpu_rec_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(BLK_HDR + BLK_TARGET))) {
		free(w);
		return NULL;
	}
	w->fd = -1;
	w->sink = sink;
	w->sink_arg = arg;
	w->dict = dict;
	w->cap = BLK_HDR + BLK_TARGET;
	w->len = BLK_HDR;
	w->written = encode_header(h, meta);
	if (emit(w, h, w->written)) {
		free(w->buf);
		free(w);
		return NULL;
	}
	return w;
}

/* Makes room for a record of len payload bytes in the open block and writes
 * its header.  Returns where the payload goes, or NULL with w->err set. */
static uint8_t *reserve(struct xpu_rec_writer *w, enum rec_type type, size_t len)
{
	size_t need = REC_HDR + len;

	if (w->err)
		return NULL;
	if (need > BLK_MAX) {
		w->err = -E2BIG;
		return NULL;
	}
	if (w->nrec && w->len + need > BLK_HDR + BLK_TARGET && xpu_rec_flush(w))
		return NULL;
	if (w->len + need > w->cap) {
		uint8_t *b = realloc(w->buf, w->len + need);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = b;
		w->cap = w->len + need;
	}
	uint8_t *p = w->buf + w->len;
	put32(p, (uint32_t)type | (uint32_t)len << 8);
	w->len += need;
	w->nrec++;
	return p + REC_HDR;
}

static int put_strings(struct xpu_rec_writer *w)
{
	while (w->nstr < xpu_dict_nstr(w->dict)) {
		uint32_t id = w->nstr + 1, n = xpu_dict_str_len(w->dict, id);
		uint8_t *p = reserve(w, REC_STRING, 4 + (size_t)n);
		if (!p)
			return w->err;
		put32(p, id);
		memcpy(p + 4, xpu_dict_str_get(w->dict, id), n);
		w->nstr = id;
	}
	return 0;
}

static int put_frames(struct xpu_rec_writer *w)
{
	while (w->nframes < xpu_dict_nframes(w->dict)) {
		uint32_t id = w->nframes + 1;
		const struct xpu_frame *f = xpu_dict_frame_get(w->dict, id);
		uint8_t *p;
		/* A pending frame is announced first, so the reader makes it one. */
		if (xpu_dict_frame_state(w->dict, id) != XPU_FRAME_PLAIN) {
			if (!(p = reserve(w, REC_PENDING, 4)))
				return w->err;
			put32(p, id);
		}
		if (!(p = reserve(w, REC_FRAME, 16)))
			return w->err;
		put32(p, id);
		put32(p + 4, f->kind);
		put32(p + 8, f->name);
		put32(p + 12, f->module);
		w->nframes = id;
	}
	return 0;
}

/* The expansions of pending frames, in the order the session made them. */
static int put_expansions(struct xpu_rec_writer *w)
{
	while (w->nexp < w->dict->nexp) {
		uint32_t id = w->dict->exp_log[w->nexp], n;
		const uint32_t *frames = xpu_dict_frame_expansion(w->dict, id, &n);
		uint8_t *p = reserve(w, REC_EXPAND, 8 + (size_t)n * 4);
		if (!p)
			return w->err;
		put32(p, id);
		put32(p + 4, n);
		if (n)
			memcpy(p + 8, frames, (size_t)n * 4);
		w->nexp++;
	}
	return 0;
}

static int put_forgets(struct xpu_rec_writer *w);

/* Strings before frames before expansions and stacks: each kind refers to
 * the ones before. */
static int put_dict(struct xpu_rec_writer *w)
{
	return put_forgets(w) || put_strings(w) || put_frames(w) || put_expansions(w) ? w->err : 0;
}

/* Gives a stack id of an event its file id, writing the stack first if the
 * file does not hold it. */
static int put_stack(void *ctx, uint32_t *id, int kind)
{
	struct xpu_rec_writer *w = ctx;
	uint32_t n;

	if (kind != XPU_ID_STACK || *id == 0)
		return 0;
	if (*id > w->fid_cap) {
		uint32_t old = w->fid_cap;
		if (xpu_grow((void **)&w->fid, &w->fid_cap, *id, sizeof(uint32_t)))
			return w->err = -ENOMEM;
		memset(w->fid + old, 0, (size_t)(w->fid_cap - old) * sizeof(uint32_t));
	}
	if (!w->fid[*id - 1]) {
		const uint32_t *frames = xpu_dict_stack_get(w->dict, *id, &n);
		uint8_t *p = reserve(w, REC_STACK, 8 + (size_t)n * 4);
		if (!p)
			return w->err;
		put32(p, w->nstacks + 1);
		put32(p + 4, n);
		if (n)
			memcpy(p + 8, frames, (size_t)n * 4);
		w->fid[*id - 1] = ++w->nstacks;
	}
	*id = w->fid[*id - 1];
	return 0;
}

static int put_forgets(struct xpu_rec_writer *w)
{
	if (!w->nforget)
		return 0;
	uint8_t *p = reserve(w, REC_FORGET, (size_t)w->nforget * 4);
	if (!p)
		return w->err;
	for (uint32_t i = 0; i < w->nforget; i++)
		put32(p + 4 * i, w->forget[i]);
	w->nforget = 0;
	return 0;
}

void xpu_rec_forget_stack(struct xpu_rec_writer *w, uint32_t id)
{
	if (id == 0 || id > w->fid_cap || !w->fid[id - 1])
		return;
	w->forget[w->nforget++] = w->fid[id - 1];
	w->fid[id - 1] = 0;
	if (w->nforget == FORGET_MAX)
		put_forgets(w);
}

int xpu_rec_write(struct xpu_rec_writer *w, const struct xpu_event *ev)
{
	const char *why;

	if (put_dict(w))
		return w->err;
	/* An event the reader would call damage must not end up in the file. */
	if (xpu_event_check(ev, w->dict, &why))
		return -EINVAL;
	struct xpu_event e = *ev;
	if (xpu_event_ids(&e, put_stack, w))
		return w->err;
	uint8_t *p = reserve(w, REC_EVENT, sizeof(e));
	if (!p)
		return w->err;
	memcpy(p, &e, sizeof(e));
	return 0;
}

int xpu_rec_flush(struct xpu_rec_writer *w)
{
	if (w->err || !w->nrec)
		return w->err;
	uint32_t plen = (uint32_t)(w->len - BLK_HDR);
	put32(w->buf, BLK_MAGIC);
	put32(w->buf + 4, plen);
	put32(w->buf + 8, w->nrec);
	put32(w->buf + 12, block_crc(w->buf, w->buf + BLK_HDR, plen));
	int rc = emit(w, w->buf, w->len);
	if (rc) {	/* a full disk: the file ends after its last whole block */
		if (!w->sink && ftruncate(w->fd, (off_t)w->written) < 0)	/* a reader skips the torn block anyway */
			xpu_debug("cannot cut the torn block off the recording: %s", strerror(errno));
		return w->err = rc;
	}
	w->written += w->len;
	w->len = BLK_HDR;
	w->nrec = 0;
	return 0;
}

int xpu_rec_close(struct xpu_rec_writer *w)
{
	if (!w)
		return 0;
	put_dict(w);	/* names that came after the last event */
	int rc = xpu_rec_flush(w);
	if (w->fd >= 0 && close(w->fd) && !rc)
		rc = -errno;
	free(w->buf);
	free(w->fid);
	free(w);
	return rc;
}

uint64_t xpu_rec_bytes(const struct xpu_rec_writer *w)
{
	return w->written + (w->nrec ? w->len : 0);
}
