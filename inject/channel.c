/* SPDX-License-Identifier: GPL-2.0-only */
/* The channel from the host's threads to xputop: a mutex-protected append
 * buffer, swapped with a spare and sent in packets by the agent thread.  A
 * producer never waits for xputop: a full buffer drops records and counts
 * them by type.  What the socket cannot take goes back to the front of the
 * buffer for the next round, so a short stall of xputop loses nothing. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "inject.h"

#define NTYPES 16	/* record types counted one by one (library -> xputop types are < 16) */

struct xpu_chan {
	pthread_mutex_t lock;		/* the buffers and counters */
	pthread_mutex_t send_lock;	/* one sender at a time (the agent, the exit handler) */
	char *buf, *spare;
	size_t len, cap;
	uint32_t seq;
	uint64_t dropped;		/* all records dropped */
	uint64_t dropped_type[NTYPES];
	uint32_t names_epoch;
};

struct xpu_chan *xpu_chan_new(size_t capacity)
{
	struct xpu_chan *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->buf = malloc(capacity);
	c->spare = malloc(capacity);
	if (!c->buf || !c->spare) {
		xpu_chan_free(c);
		return NULL;
	}
	c->cap = capacity;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->send_lock, NULL);
	return c;
}

void xpu_chan_free(struct xpu_chan *c)
{
	if (!c)
		return;
	free(c->buf);
	free(c->spare);
	free(c);
}

/* Under the lock. */
static void count_drop(struct xpu_chan *c, uint16_t type)
{
	c->dropped++;
	if (type < NTYPES)
		c->dropped_type[type]++;
	if (type == XPU_WIRE_NAME || type == XPU_WIRE_API)
		c->names_epoch++;
}

int xpu_chan_put(struct xpu_chan *c, uint16_t type, const void *body, uint16_t len,
		 const void *tail, uint16_t tail_len)
{
	struct xpu_wire_rec h = { .type = type, .len = (uint16_t)(len + tail_len) };
	size_t need = sizeof(h) + (size_t)len + tail_len;

	if ((size_t)len + tail_len > XPU_WIRE_MAX_MSG - sizeof(struct xpu_wire_msg) - sizeof(h))
		return -1;
	/* Launches come one by one from the app's threads, kernels in bursts
	 * at each flush: launches may fill only 3/4 of the buffer, so when
	 * xputop falls behind the kernels (GPU time) still get in. */
	size_t limit = type == XPU_WIRE_LAUNCH ? c->cap / 4 * 3 : c->cap;
	pthread_mutex_lock(&c->lock);
	if (c->len + need > limit) {
		count_drop(c, type);
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	char *p = c->buf + c->len;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, len);
	if (tail_len)
		memcpy(p + sizeof(h) + len, tail, tail_len);
	c->len += need;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void xpu_chan_reset(struct xpu_chan *c)
{
	pthread_mutex_lock(&c->lock);
	c->len = 0;
	c->seq = 0;
	c->dropped = 0;
	memset(c->dropped_type, 0, sizeof(c->dropped_type));
	c->names_epoch++;
	pthread_mutex_unlock(&c->lock);
}

uint64_t xpu_chan_dropped(const struct xpu_chan *c)
{
	return __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

uint64_t xpu_chan_dropped_type(const struct xpu_chan *c, uint16_t type)
{
	return type < NTYPES ? __atomic_load_n(&c->dropped_type[type], __ATOMIC_RELAXED) : 0;
}

uint32_t xpu_chan_names_epoch(const struct xpu_chan *c)
{
	return __atomic_load_n(&c->names_epoch, __ATOMIC_ACQUIRE);
}

int xpu_chan_pending(struct xpu_chan *c)
{
	pthread_mutex_lock(&c->lock);
	int n = c->len > 0;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Sends one packet of the records in [p, p + len). */
static int send_packet(struct xpu_chan *c, int fd, const char *p, size_t len, uint16_t nrecs)
{
	struct xpu_wire_msg m = {
		.magic = XPU_WIRE_MAGIC, .version = XPU_WIRE_VERSION, .nrecs = nrecs,
		.len = (uint32_t)(sizeof(m) + len), .seq = c->seq,
	};
	struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)p, len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	if (sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	c->seq++;
	return 0;
}

/* Counts as dropped the records of [p, end). */
static void drop_range(struct xpu_chan *c, const char *p, const char *end)
{
	while (p < end) {
		struct xpu_wire_rec h;
		memcpy(&h, p, sizeof(h));
		count_drop(c, h.type);
		p += sizeof(h) + h.len;
	}
}

/* Puts [p, end) back in front of what producers added since the swap.  When
 * both do not fit, the newest records go (the older may name what newer
 * ones use).  Under the lock. */
static void put_back(struct xpu_chan *c, const char *p, const char *end)
{
	size_t back = (size_t)(end - p), keep = 0;
	while (keep < c->len) {
		struct xpu_wire_rec h;
		memcpy(&h, c->buf + keep, sizeof(h));
		if (back + keep + sizeof(h) + h.len > c->cap)
			break;
		keep += sizeof(h) + h.len;
	}
	drop_range(c, c->buf + keep, c->buf + c->len);
	memmove(c->buf + back, c->buf, keep);
	memcpy(c->buf, p, back);
	c->len = back + keep;
}

int xpu_chan_send(struct xpu_chan *c, int fd)
{
	const size_t room = XPU_WIRE_MAX_MSG - sizeof(struct xpu_wire_msg);

	pthread_mutex_lock(&c->send_lock);
	pthread_mutex_lock(&c->lock);
	char *data = c->buf;
	size_t len = c->len;
	c->buf = c->spare;
	c->spare = data;
	c->len = 0;
	pthread_mutex_unlock(&c->lock);

	const char *p = data, *end = data + len;
	int rc = 0;
	while (p < end) {
		const char *q = p;
		uint16_t n = 0;
		while (q < end && n < UINT16_MAX) {
			struct xpu_wire_rec h;
			memcpy(&h, q, sizeof(h));
			size_t sz = sizeof(h) + h.len;
			if ((size_t)(q - p) + sz > room)
				break;
			q += sz;
			n++;
		}
		int r = send_packet(c, fd, p, (size_t)(q - p), n);
		if (r == -EAGAIN || r == -ENOBUFS)
			break;	/* xputop is behind: the rest waits for the next round */
		if (r < 0) {
			rc = -1;
			break;
		}
		p = q;
	}
	if (p < end && rc == 0) {
		pthread_mutex_lock(&c->lock);
		put_back(c, p, end);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&c->send_lock);
	return rc;
}
