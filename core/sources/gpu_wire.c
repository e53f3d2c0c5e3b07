/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_wire.h"

#include <string.h>

static size_t body_size(uint16_t type)
{
	switch (type) {
	case XPU_WIRE_HELLO: return sizeof(struct xpu_wire_hello);
	case XPU_WIRE_NAME: return sizeof(struct xpu_wire_name);
	case XPU_WIRE_API: return sizeof(struct xpu_wire_api);
	case XPU_WIRE_KERNEL: return sizeof(struct xpu_wire_kernel);
	case XPU_WIRE_MEMCPY:
	case XPU_WIRE_MEMSET: return sizeof(struct xpu_wire_memcpy);
	case XPU_WIRE_LAUNCH: return sizeof(struct xpu_wire_launch);
	case XPU_WIRE_STATUS: return sizeof(struct xpu_wire_status);
	case XPU_WIRE_SLICE:
	case XPU_WIRE_WHOLE: return sizeof(struct xpu_wire_slice);
	default: return 0;
	}
}

/* Records with a name carry it after the fixed part. */
static int has_name(uint16_t type)
{
	return type == XPU_WIRE_NAME || type == XPU_WIRE_API;
}

static int printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* First pass: is every record well-formed?  No sink call happens before the
 * whole packet passed, so a bad packet changes nothing. */
static int check(const char *p, const char *end, uint16_t nrecs, const char **why)
{
	for (uint16_t i = 0; i < nrecs; i++) {
		struct xpu_wire_rec h;
		if ((size_t)(end - p) < sizeof(h))
			return *why = "record header past the end of the packet", -1;
		memcpy(&h, p, sizeof(h));
		p += sizeof(h);
		if ((size_t)(end - p) < h.len)
			return *why = "record body past the end of the packet", -1;
		size_t need = body_size(h.type);
		if (need && (has_name(h.type) ? h.len < need || h.len - need > XPU_WIRE_MAX_NAME
					      : h.len != need))
			return *why = "record of the wrong size for its type", -1;
		if (has_name(h.type) && (h.len == need || !printable(p + need, h.len - need)))
			return *why = "empty name or a name with control characters", -1;
		p += h.len;
	}
	if (p != end)
		return *why = "bytes after the last record", -1;
	return 0;
}

static void deliver(uint16_t type, const char *b, uint16_t len, const struct xpu_wire_sink *k,
		    void *arg)
{
	union {
		struct xpu_wire_hello hello;
		struct xpu_wire_name name;
		struct xpu_wire_api api;
		struct xpu_wire_kernel kernel;
		struct xpu_wire_memcpy mc;
		struct xpu_wire_launch launch;
		struct xpu_wire_status status;
		struct xpu_wire_slice slice;
	} u;
	size_t fixed = body_size(type);
	memcpy(&u, b, fixed);	/* aligned copies of the fixed part */
	switch (type) {
	case XPU_WIRE_HELLO:
		u.hello.comm[sizeof(u.hello.comm) - 1] = '\0';
		if (k->hello)
			k->hello(arg, &u.hello);
		break;
	case XPU_WIRE_NAME:
		if (k->name)
			k->name(arg, u.name.id, b + fixed, len - fixed);
		break;
	case XPU_WIRE_API:
		if (k->api)
			k->api(arg, u.api.domain, u.api.cbid, b + fixed, len - fixed);
		break;
	case XPU_WIRE_KERNEL:
		if (k->kernel)
			k->kernel(arg, &u.kernel);
		break;
	case XPU_WIRE_MEMCPY:
	case XPU_WIRE_MEMSET:
		if (k->memcpy)
			k->memcpy(arg, &u.mc, type == XPU_WIRE_MEMSET);
		break;
	case XPU_WIRE_LAUNCH:
		if (k->launch)
			k->launch(arg, &u.launch);
		break;
	case XPU_WIRE_STATUS:
		if (k->status)
			k->status(arg, &u.status);
		break;
	case XPU_WIRE_SLICE:
	case XPU_WIRE_WHOLE:
		if (k->slice)
			k->slice(arg, &u.slice, type == XPU_WIRE_WHOLE);
		break;
	}
}

int xpu_wire_decode(const void *buf, size_t len, const struct xpu_wire_sink *sink, void *arg,
		    struct xpu_wire_stats *st, const char **why)
{
	struct xpu_wire_msg m;
	const char *p = buf, *end = p + len;
	const char *ignore;
	if (!why)
		why = &ignore;
	if (len < sizeof(m)) {
		*why = "packet shorter than its header";
		goto bad;
	}
	memcpy(&m, p, sizeof(m));
	if (m.magic != XPU_WIRE_MAGIC) {
		*why = "not an xputop wire packet (bad magic)";
		goto bad;
	}
	if (m.version != XPU_WIRE_VERSION) {
		*why = "wire format version this xputop does not speak";
		goto bad;
	}
	if (m.len != len || len > XPU_WIRE_MAX_MSG) {
		*why = "packet length does not match its header";
		goto bad;
	}
	p += sizeof(m);
	if (check(p, end, m.nrecs, why) < 0)
		goto bad;
	int n = 0;
	for (uint16_t i = 0; i < m.nrecs; i++) {
		struct xpu_wire_rec h;
		memcpy(&h, p, sizeof(h));
		p += sizeof(h);
		if (body_size(h.type)) {
			deliver(h.type, p, h.len, sink, arg);
			n++;
		} else {
			st->unknown++;
		}
		p += h.len;
	}
	st->packets++;
	st->records += (uint64_t)n;
	return n;
bad:
	st->bad_packets++;
	return -1;
}

size_t xpu_wire_control(void *buf, size_t size, uint16_t type, const void *body, uint16_t len)
{
	struct xpu_wire_msg m = { .magic = XPU_WIRE_MAGIC, .version = XPU_WIRE_VERSION, .nrecs = 1 };
	struct xpu_wire_rec h = { .type = type, .len = len };
	size_t total = sizeof(m) + sizeof(h) + len;
	if (total > size)
		return 0;
	m.len = (uint32_t)total;
	memcpy(buf, &m, sizeof(m));
	memcpy((char *)buf + sizeof(m), &h, sizeof(h));
	if (len)
		memcpy((char *)buf + sizeof(m) + sizeof(h), body, len);
	return total;
}
