/* SPDX-License-Identifier: GPL-2.0-only */
/* The injection wire decoder (core/sources/gpu_wire.c): one input is one packet as
 * recv() returns it from a SOCK_SEQPACKET socket that a CUDA process, anyone's,
 * writes to.  Checks the decoder's promises: a rejected packet reaches no
 * sink; an accepted one reaches a sink once per record of a known type; names
 * are non-empty, bounded and printable; HELLO's comm is terminated. */
#include "fuzz.h"

#include <string.h>

#include "gpu_wire.h"

struct seen {
	int calls;
};

static void check_name(const char *name, size_t len)
{
	FUZZ_CHECK(len > 0 && len <= XPU_WIRE_MAX_NAME);
	/* A copy of exactly len bytes: reading past it is an ASan report. */
	char *copy = malloc(len);
	FUZZ_CHECK(copy);
	memcpy(copy, name, len);
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)copy[i] >= 0x20 && copy[i] != 0x7f);
	free(copy);
}

static void on_hello(void *arg, const struct xpu_wire_hello *h)
{
	((struct seen *)arg)->calls++;
	FUZZ_CHECK(memchr(h->comm, '\0', sizeof(h->comm)) != NULL);
}

static void on_name(void *arg, uint32_t id, const char *name, size_t len)
{
	((struct seen *)arg)->calls++;
	check_name(name, len);
}

static void on_api(void *arg, uint32_t domain, uint32_t cbid, const char *name, size_t len)
{
	((struct seen *)arg)->calls++;
	check_name(name, len);
}

static void on_kernel(void *arg, const struct xpu_wire_kernel *k)
{
	((struct seen *)arg)->calls++;
	fuzz_touch(k, sizeof(*k));
}

static void on_memcpy(void *arg, const struct xpu_wire_memcpy *m, int is_memset)
{
	((struct seen *)arg)->calls++;
	fuzz_touch(m, sizeof(*m));
}

static void on_launch(void *arg, const struct xpu_wire_launch *l)
{
	((struct seen *)arg)->calls++;
	fuzz_touch(l, sizeof(*l));
}

static void on_status(void *arg, const struct xpu_wire_status *s)
{
	((struct seen *)arg)->calls++;
	fuzz_touch(s, sizeof(*s));
}

static void on_slice(void *arg, const struct xpu_wire_slice *s, int whole)
{
	(void)whole;
	((struct seen *)arg)->calls++;
	fuzz_touch(s, sizeof(*s));
}

/* Every member set: a record type the harness has no callback for would be
 * decoded and counted without a call (a slice did, until fuzzing found it). */
static const struct xpu_wire_sink sink = {
	.hello = on_hello, .name = on_name, .api = on_api, .kernel = on_kernel,
	.memcpy = on_memcpy, .launch = on_launch, .status = on_status, .slice = on_slice,
};
_Static_assert(sizeof(sink) == 8 * sizeof(void (*)(void)), "a sink member without a callback here");

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: the decoder must not read past the packet. */
	uint8_t *pkt = malloc(size ? size : 1);
	FUZZ_CHECK(pkt);
	memcpy(pkt, data, size);
	struct seen seen = { 0 };
	struct xpu_wire_stats st = { 0 };
	const char *why = NULL;
	int n = xpu_wire_decode(pkt, size, &sink, &seen, &st, &why);
	if (n < 0) {
		FUZZ_CHECK(seen.calls == 0);
		FUZZ_CHECK(why && *why);
		FUZZ_CHECK(st.bad_packets == 1 && st.packets == 0 && st.records == 0);
	} else {
		FUZZ_CHECK(seen.calls == n);
		FUZZ_CHECK(st.packets == 1 && st.bad_packets == 0 && st.records == (uint64_t)n);
		FUZZ_CHECK(size <= XPU_WIRE_MAX_MSG);
	}
	/* Without a sink the decoder still checks and counts the same way. */
	struct xpu_wire_sink none = { 0 };
	struct xpu_wire_stats st2 = { 0 };
	FUZZ_CHECK(xpu_wire_decode(pkt, size, &none, NULL, &st2, NULL) == n);
	free(pkt);
	return 0;
}
