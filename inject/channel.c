/* The channel from the host's threads to xputop: a mutex-protected append
 * buffer, swapped with a spare and sent in packets by the agent thread.  A
 * producer never waits for xputop: a full buffer or a full socket drops
 * records and counts them. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "inject.h"

struct xpu_chan {
	pthread_mutex_t lock;
	char *buf, *spare;
	size_t len, cap;
	uint32_t nrecs;
	uint32_t seq;
	uint64_t dropped;	/* records; updated under lock or by the sender */
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

int xpu_chan_put(struct xpu_chan *c, uint16_t type, const void *body, uint16_t len,
		 const void *tail, uint16_t tail_len)
{
	struct xpu_wire_rec h = { .type = type, .len = (uint16_t)(len + tail_len) };
	size_t need = sizeof(h) + (size_t)len + tail_len;

	if ((size_t)len + tail_len > XPU_WIRE_MAX_MSG - sizeof(struct xpu_wire_msg) - sizeof(h))
		return -1;
	pthread_mutex_lock(&c->lock);
	if (c->len + need > c->cap) {
		c->dropped++;
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	char *p = c->buf + c->len;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, len);
	if (tail_len)
		memcpy(p + sizeof(h) + len, tail, tail_len);
	c->len += need;
	c->nrecs++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void xpu_chan_reset(struct xpu_chan *c)
{
	pthread_mutex_lock(&c->lock);
	c->len = 0;
	c->nrecs = 0;
	c->seq = 0;
	pthread_mutex_unlock(&c->lock);
}

uint64_t xpu_chan_dropped(const struct xpu_chan *c)
{
	return __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

/* Records in [p, end). */
static uint32_t count_recs(const char *p, const char *end)
{
	uint32_t n = 0;
	while (p + sizeof(struct xpu_wire_rec) <= end) {
		struct xpu_wire_rec h;
		memcpy(&h, p, sizeof(h));
		p += sizeof(h) + h.len;
		n++;
	}
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

int xpu_chan_send(struct xpu_chan *c, int fd)
{
	const size_t room = XPU_WIRE_MAX_MSG - sizeof(struct xpu_wire_msg);

	pthread_mutex_lock(&c->lock);
	char *data = c->buf;
	size_t len = c->len;
	c->buf = c->spare;
	c->spare = data;
	c->len = 0;
	c->nrecs = 0;
	pthread_mutex_unlock(&c->lock);

	const char *p = data, *end = data + len;
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
		if (r == -EAGAIN || r == -ENOBUFS) {
			/* xputop is behind: drop the rest rather than wait. */
			__atomic_add_fetch(&c->dropped, count_recs(p, end), __ATOMIC_RELAXED);
			return 0;
		}
		if (r < 0)
			return -1;
		p = q;
	}
	return 0;
}
