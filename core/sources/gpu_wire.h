/* SPDX-License-Identifier: GPL-2.0-only */
/* Decoding what injected processes send (inject/wire.h).  Everything is
 * untrusted: each packet's header and each record's length are checked
 * before a byte of the body is read, names are bounded and must be printable,
 * and a packet that fails a check is dropped whole, counted, with a reason. */
#ifndef XPU_GPU_WIRE_H
#define XPU_GPU_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct xpu_wire_sink {
	void (*hello)(void *arg, const struct xpu_wire_hello *h);
	void (*name)(void *arg, uint32_t id, const char *name, size_t len);
	void (*api)(void *arg, uint32_t domain, uint32_t cbid, const char *name, size_t len);
	void (*kernel)(void *arg, const struct xpu_wire_kernel *k);
	void (*memcpy)(void *arg, const struct xpu_wire_memcpy *m, int is_memset);
	void (*launch)(void *arg, const struct xpu_wire_launch *l);
	void (*status)(void *arg, const struct xpu_wire_status *s);
	/* whole: XPU_WIRE_WHOLE, a span traced throughout */
	void (*slice)(void *arg, const struct xpu_wire_slice *s, int whole);
};

struct xpu_wire_stats {
	uint64_t packets;	/* accepted */
	uint64_t records;	/* delivered to the sink */
	uint64_t bad_packets;	/* dropped whole */
	uint64_t unknown;	/* records of types this xputop does not know, skipped */
};

/* Checks a whole packet, then delivers its records in order.  Returns the
 * number of records delivered, or -1 (why says what was wrong) when the
 * packet was rejected; nothing of a rejected packet reaches the sink. */
int xpu_wire_decode(const void *buf, size_t len, const struct xpu_wire_sink *sink, void *arg,
		    struct xpu_wire_stats *st, const char **why);

/* Encodes one control message (START or STOP) into buf; returns its length. */
size_t xpu_wire_control(void *buf, size_t size, uint16_t type, const void *body, uint16_t len);

#endif
