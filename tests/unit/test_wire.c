/* SPDX-License-Identifier: GPL-2.0-only */
/* The injection socket's decoder (core/sources/gpu_wire.c): every bound it
 * keeps on what any local user's process may send, one test each, and what
 * reaches the sink when a packet passes. */
#include "check.h"

#include "gpu_wire.h"

/* A packet being built: header, then records. */
struct pkt {
	char b[XPU_WIRE_MAX_MSG + 64];
	size_t len;
	uint16_t nrecs;
};

static void pkt_start(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->len = sizeof(struct xpu_wire_msg);
}

static void pkt_rec(struct pkt *p, uint16_t type, const void *body, size_t len)
{
	struct xpu_wire_rec h = { .type = type, .len = (uint16_t)len };
	memcpy(p->b + p->len, &h, sizeof(h));
	p->len += sizeof(h);
	if (len)
		memcpy(p->b + p->len, body, len);
	p->len += len;
	p->nrecs++;
}

/* A record with a fixed part and a name after it. */
static void pkt_named(struct pkt *p, uint16_t type, const void *fixed, size_t flen, const char *name, size_t nlen)
{
	static char body[2 * XPU_WIRE_MAX_NAME];
	memcpy(body, fixed, flen);
	memcpy(body + flen, name, nlen);
	pkt_rec(p, type, body, flen + nlen);
}

/* Writes the header as a sender would: the length it has, the records it
 * counted. */
static size_t pkt_end(struct pkt *p)
{
	struct xpu_wire_msg m = { .magic = XPU_WIRE_MAGIC, .version = XPU_WIRE_VERSION, .nrecs = p->nrecs,
				  .len = (uint32_t)p->len };
	memcpy(p->b, &m, sizeof(m));
	return p->len;
}

static struct xpu_wire_msg *hdr(struct pkt *p)
{
	return (struct xpu_wire_msg *)p->b;
}

/* What the sink saw. */
static struct {
	int hello, name, api, kernel, memcpy, memset, launch, status, slice, whole;
	char comm[32];
	uint32_t name_id, api_cbid, kernel_name;
	char last_name[XPU_WIRE_MAX_NAME + 1];
	size_t last_name_len;
} seen;

static void on_hello(void *a, const struct xpu_wire_hello *h)
{
	seen.hello++;
	snprintf(seen.comm, sizeof(seen.comm), "%s", h->comm);
}
static void on_name(void *a, uint32_t id, const char *n, size_t len)
{
	seen.name++;
	seen.name_id = id;
	memcpy(seen.last_name, n, len);
	seen.last_name[len] = '\0';
	seen.last_name_len = len;
}
static void on_api(void *a, uint32_t domain, uint32_t cbid, const char *n, size_t len)
{
	seen.api++;
	seen.api_cbid = cbid;
	memcpy(seen.last_name, n, len);
	seen.last_name[len] = '\0';
	seen.last_name_len = len;
}
static void on_kernel(void *a, const struct xpu_wire_kernel *k)
{
	seen.kernel++;
	seen.kernel_name = k->name;
}
static void on_memcpy(void *a, const struct xpu_wire_memcpy *m, int is_memset)
{
	if (is_memset)
		seen.memset++;
	else
		seen.memcpy++;
}
static void on_launch(void *a, const struct xpu_wire_launch *l)
{
	seen.launch++;
}
static void on_status(void *a, const struct xpu_wire_status *s)
{
	seen.status++;
}
static void on_slice(void *a, const struct xpu_wire_slice *s, int whole)
{
	seen.slice++;
	seen.whole += whole;
}

static const struct xpu_wire_sink sink = {
	.hello = on_hello, .name = on_name, .api = on_api, .kernel = on_kernel, .memcpy = on_memcpy,
	.launch = on_launch, .status = on_status, .slice = on_slice,
};

static struct xpu_wire_stats st;
static const char *why;

static int decode(struct pkt *p, size_t len)
{
	memset(&seen, 0, sizeof(seen));
	memset(&st, 0, sizeof(st));
	why = NULL;
	return xpu_wire_decode(p->b, len, &sink, NULL, &st, &why);
}

static int total_seen(void)
{
	return seen.hello + seen.name + seen.api + seen.kernel + seen.memcpy + seen.memset + seen.launch +
	       seen.status + seen.slice;
}

/* A rejected packet: -1, a reason, counted, nothing delivered. */
#define CHECK_REJECTED(p, len, reason)                                                                     \
	do {                                                                                               \
		CHECK_INT(decode((p), (len)), ==, -1);                                                     \
		CHECK_INT(st.bad_packets, ==, 1);                                                          \
		CHECK_INT(st.packets, ==, 0);                                                              \
		CHECK_INT(st.records, ==, 0);                                                              \
		CHECK_INT(total_seen(), ==, 0);                                                            \
		CHECK(why && strstr(why, (reason)) != NULL);                                               \
	} while (0)

static const struct xpu_wire_kernel a_kernel = { .start = 100, .end = 200, .corr = 7, .name = 3 };

TEST(a_packet_of_every_record_type_reaches_the_sink_in_full)
{
	struct pkt p;
	pkt_start(&p);
	struct xpu_wire_hello h = { .pid = 42 };
	memcpy(h.comm, "python3", 8);
	pkt_rec(&p, XPU_WIRE_HELLO, &h, sizeof(h));
	struct xpu_wire_name n = { .id = 3 };
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), "gemm_kernel", 11);
	struct xpu_wire_api a = { .domain = 2, .cbid = 211 };
	pkt_named(&p, XPU_WIRE_API, &a, sizeof(a), "cudaLaunchKernel", 16);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	struct xpu_wire_memcpy m = { .start = 1, .end = 2, .bytes = 4096 };
	pkt_rec(&p, XPU_WIRE_MEMCPY, &m, sizeof(m));
	pkt_rec(&p, XPU_WIRE_MEMSET, &m, sizeof(m));
	struct xpu_wire_launch l = { .time = 5, .corr = 7 };
	pkt_rec(&p, XPU_WIRE_LAUNCH, &l, sizeof(l));
	struct xpu_wire_status s = { .launches = 1 };
	pkt_rec(&p, XPU_WIRE_STATUS, &s, sizeof(s));
	struct xpu_wire_slice sl = { .start = 1, .end = 9 };
	pkt_rec(&p, XPU_WIRE_SLICE, &sl, sizeof(sl));
	pkt_rec(&p, XPU_WIRE_WHOLE, &sl, sizeof(sl));
	CHECK_INT(decode(&p, pkt_end(&p)), ==, 10);
	CHECK_INT(st.packets, ==, 1);
	CHECK_INT(st.records, ==, 10);
	CHECK_INT(st.bad_packets, ==, 0);
	CHECK_INT(seen.hello, ==, 1);
	CHECK_STR(seen.comm, "python3");
	CHECK_INT(seen.name, ==, 1);
	CHECK_INT(seen.name_id, ==, 3);
	CHECK_INT(seen.api, ==, 1);
	CHECK_INT(seen.api_cbid, ==, 211);
	CHECK_STR(seen.last_name, "cudaLaunchKernel");
	CHECK_INT(seen.kernel, ==, 1);
	CHECK_INT(seen.kernel_name, ==, 3);
	CHECK_INT(seen.memcpy, ==, 1);
	CHECK_INT(seen.memset, ==, 1);
	CHECK_INT(seen.launch, ==, 1);
	CHECK_INT(seen.status, ==, 1);
	CHECK_INT(seen.slice, ==, 2);
	CHECK_INT(seen.whole, ==, 1);
}

TEST(a_packet_shorter_than_its_header_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_end(&p);
	CHECK_REJECTED(&p, sizeof(struct xpu_wire_msg) - 1, "shorter than its header");
	CHECK_REJECTED(&p, 0, "shorter than its header");
}

TEST(a_packet_with_another_magic_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	size_t len = pkt_end(&p);
	hdr(&p)->magic ^= 1;
	CHECK_REJECTED(&p, len, "bad magic");
}

TEST(a_packet_of_another_wire_version_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	size_t len = pkt_end(&p);
	hdr(&p)->version = XPU_WIRE_VERSION - 1;
	CHECK_REJECTED(&p, len, "version");
	hdr(&p)->version = XPU_WIRE_VERSION + 1;
	CHECK_REJECTED(&p, len, "version");
}

TEST(a_packet_whose_header_length_differs_from_its_size_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	size_t len = pkt_end(&p);
	hdr(&p)->len = (uint32_t)len + 1;
	CHECK_REJECTED(&p, len, "length does not match");
	hdr(&p)->len = (uint32_t)len - 1;
	CHECK_REJECTED(&p, len, "length does not match");
}

TEST(a_packet_longer_than_the_largest_message_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	/* Records that are each well-formed, past the limit in all. */
	struct xpu_wire_slice sl = { 1, 2 };
	while (p.len <= XPU_WIRE_MAX_MSG)
		pkt_rec(&p, XPU_WIRE_SLICE, &sl, sizeof(sl));
	size_t len = pkt_end(&p);
	CHECK_INT(len, >, XPU_WIRE_MAX_MSG);
	CHECK_REJECTED(&p, len, "length does not match");
}

TEST(a_count_of_records_past_the_packet_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	size_t len = pkt_end(&p);
	hdr(&p)->nrecs = 2;
	CHECK_REJECTED(&p, len, "record header past the end");
	hdr(&p)->nrecs = UINT16_MAX;
	CHECK_REJECTED(&p, len, "record header past the end");
}

TEST(a_count_of_records_short_of_the_packet_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	size_t len = pkt_end(&p);
	hdr(&p)->nrecs = 1;
	CHECK_REJECTED(&p, len, "bytes after the last record");
	hdr(&p)->nrecs = 0;
	CHECK_REJECTED(&p, len, "bytes after the last record");
}

TEST(a_record_header_cut_by_the_end_of_the_packet_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	p.len += 2;	/* half a record header */
	p.nrecs++;
	CHECK_REJECTED(&p, pkt_end(&p), "record header past the end");
}

TEST(a_record_body_past_the_end_of_the_packet_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	p.len -= 8;	/* the body is 8 bytes short of what its header says */
	CHECK_REJECTED(&p, pkt_end(&p), "record body past the end");
	/* An unknown type's body is bounded the same way. */
	pkt_start(&p);
	pkt_rec(&p, 999, "abcdefgh", 8);
	p.len -= 4;
	CHECK_REJECTED(&p, pkt_end(&p), "record body past the end");
}

TEST(a_fixed_size_record_of_another_size_is_rejected)
{
	static const uint16_t types[] = { XPU_WIRE_HELLO, XPU_WIRE_KERNEL, XPU_WIRE_MEMCPY, XPU_WIRE_MEMSET,
					  XPU_WIRE_LAUNCH, XPU_WIRE_STATUS, XPU_WIRE_SLICE, XPU_WIRE_WHOLE };
	static const size_t sizes[] = { sizeof(struct xpu_wire_hello), sizeof(struct xpu_wire_kernel),
					sizeof(struct xpu_wire_memcpy), sizeof(struct xpu_wire_memcpy),
					sizeof(struct xpu_wire_launch), sizeof(struct xpu_wire_status),
					sizeof(struct xpu_wire_slice), sizeof(struct xpu_wire_slice) };
	char body[256] = { 0 };
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
		struct pkt p;
		pkt_start(&p);
		pkt_rec(&p, types[i], body, sizes[i] - 1);
		CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
		pkt_start(&p);
		pkt_rec(&p, types[i], body, sizes[i] + 1);
		CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
	}
}

TEST(a_named_record_shorter_than_its_fixed_part_is_rejected)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_NAME, "abc", 3);
	CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_API, "abcdefg", 7);
	CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
}

TEST(a_name_of_the_longest_length_passes_and_one_byte_more_is_rejected)
{
	static char name[XPU_WIRE_MAX_NAME + 1];
	memset(name, 'k', sizeof(name));
	struct xpu_wire_name n = { .id = 1 };
	struct pkt p;
	pkt_start(&p);
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), name, XPU_WIRE_MAX_NAME);
	CHECK_INT(decode(&p, pkt_end(&p)), ==, 1);
	CHECK_INT(seen.last_name_len, ==, XPU_WIRE_MAX_NAME);
	pkt_start(&p);
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), name, XPU_WIRE_MAX_NAME + 1);
	CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
	struct xpu_wire_api a = { .domain = 1, .cbid = 1 };
	pkt_start(&p);
	pkt_named(&p, XPU_WIRE_API, &a, sizeof(a), name, XPU_WIRE_MAX_NAME + 1);
	CHECK_REJECTED(&p, pkt_end(&p), "wrong size");
}

TEST(an_empty_name_is_rejected)
{
	struct xpu_wire_name n = { .id = 1 };
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_NAME, &n, sizeof(n));
	CHECK_REJECTED(&p, pkt_end(&p), "empty name");
	struct xpu_wire_api a = { .domain = 1, .cbid = 1 };
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_API, &a, sizeof(a));
	CHECK_REJECTED(&p, pkt_end(&p), "empty name");
}

TEST(a_name_with_a_control_character_or_delete_is_rejected)
{
	static const char *bad[] = { "ker\nnel", "ker\0nel", "kernel\x1b[2J", "ker\x7fnel", "\tkernel" };
	static const size_t len[] = { 7, 7, 10, 7, 7 };
	struct xpu_wire_name n = { .id = 1 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct pkt p;
		pkt_start(&p);
		pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), bad[i], len[i]);
		CHECK_REJECTED(&p, pkt_end(&p), "control characters");
	}
	/* UTF-8 and punctuation are names like any other. */
	struct pkt p;
	pkt_start(&p);
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), "k\xc3\xa9rnel<float, 4>::run()", 24);
	CHECK_INT(decode(&p, pkt_end(&p)), ==, 1);
	CHECK_STR(seen.last_name, "k\xc3\xa9rnel<float, 4>::run()");
}

TEST(a_hello_whose_comm_fills_its_field_reaches_the_sink_terminated)
{
	struct xpu_wire_hello h = { .pid = 1 };
	memset(h.comm, 'A', sizeof(h.comm));
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_HELLO, &h, sizeof(h));
	CHECK_INT(decode(&p, pkt_end(&p)), ==, 1);
	CHECK_INT(strlen(seen.comm), ==, sizeof(h.comm) - 1);
}

TEST(one_bad_record_drops_the_whole_packet_even_after_good_ones)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	struct xpu_wire_name n = { .id = 1 };
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), "bad\x01", 4);
	CHECK_REJECTED(&p, pkt_end(&p), "control characters");
}

TEST(records_of_unknown_types_are_skipped_and_counted)
{
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, 999, "future", 6);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	pkt_rec(&p, 0, NULL, 0);
	CHECK_INT(decode(&p, pkt_end(&p)), ==, 1);
	CHECK_INT(st.unknown, ==, 2);
	CHECK_INT(st.records, ==, 1);
	CHECK_INT(st.packets, ==, 1);
	CHECK_INT(seen.kernel, ==, 1);
}

TEST(counters_add_up_over_good_and_bad_packets)
{
	struct xpu_wire_stats sum = { 0 };
	struct pkt good, bad;
	pkt_start(&good);
	pkt_rec(&good, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	pkt_rec(&good, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	size_t glen = pkt_end(&good);
	pkt_start(&bad);
	pkt_rec(&bad, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel) - 4);
	size_t blen = pkt_end(&bad);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(xpu_wire_decode(good.b, glen, &sink, NULL, &sum, NULL), ==, 2);
		CHECK_INT(xpu_wire_decode(bad.b, blen, &sink, NULL, &sum, NULL), ==, -1);
	}
	CHECK_INT(sum.packets, ==, 3);
	CHECK_INT(sum.bad_packets, ==, 3);
	CHECK_INT(sum.records, ==, 6);
}

TEST(a_sink_without_a_callback_for_a_type_is_given_nothing_of_it)
{
	struct xpu_wire_sink none = { 0 };
	struct xpu_wire_stats s = { 0 };
	struct pkt p;
	pkt_start(&p);
	pkt_rec(&p, XPU_WIRE_KERNEL, &a_kernel, sizeof(a_kernel));
	struct xpu_wire_name n = { .id = 1 };
	pkt_named(&p, XPU_WIRE_NAME, &n, sizeof(n), "k", 1);
	size_t len = pkt_end(&p);
	CHECK_INT(xpu_wire_decode(p.b, len, &none, NULL, &s, NULL), ==, 2);
	CHECK_INT(s.records, ==, 2);
}

TEST(a_control_message_is_encoded_as_one_record_and_decodes_again)
{
	struct xpu_wire_start start = { .flush_ms = 100, .flags = XPU_WIRE_START_MEMCPY };
	char buf[128];
	size_t len = xpu_wire_control(buf, sizeof(buf), XPU_WIRE_START, &start, sizeof(start));
	CHECK_INT(len, ==, sizeof(struct xpu_wire_msg) + sizeof(struct xpu_wire_rec) + sizeof(start));
	struct xpu_wire_msg m;
	memcpy(&m, buf, sizeof(m));
	CHECK_INT(m.magic, ==, XPU_WIRE_MAGIC);
	CHECK_INT(m.version, ==, XPU_WIRE_VERSION);
	CHECK_INT(m.nrecs, ==, 1);
	CHECK_INT(m.len, ==, len);
	struct xpu_wire_rec h;
	memcpy(&h, buf + sizeof(m), sizeof(h));
	CHECK_INT(h.type, ==, XPU_WIRE_START);
	CHECK_INT(h.len, ==, sizeof(start));
	CHECK(memcmp(buf + sizeof(m) + sizeof(h), &start, sizeof(start)) == 0);
	/* A control message is a record type the decoder skips, not a fault. */
	struct xpu_wire_stats s = { 0 };
	CHECK_INT(xpu_wire_decode(buf, len, &sink, NULL, &s, NULL), ==, 0);
	CHECK_INT(s.unknown, ==, 1);
	/* STOP has no body. */
	CHECK_INT(xpu_wire_control(buf, sizeof(buf), XPU_WIRE_STOP, NULL, 0), ==,
		  sizeof(struct xpu_wire_msg) + sizeof(struct xpu_wire_rec));
}

TEST(a_control_message_that_does_not_fit_its_buffer_is_not_written)
{
	struct xpu_wire_start start = { 0 };
	char buf[sizeof(struct xpu_wire_msg) + sizeof(struct xpu_wire_rec) + sizeof(start)];
	memset(buf, 0x5a, sizeof(buf));
	CHECK_INT(xpu_wire_control(buf, sizeof(buf) - 1, XPU_WIRE_START, &start, sizeof(start)), ==, 0);
	CHECK_INT((unsigned char)buf[0], ==, 0x5a);
	CHECK_INT(xpu_wire_control(buf, sizeof(buf), XPU_WIRE_START, &start, sizeof(start)), ==, sizeof(buf));
}
