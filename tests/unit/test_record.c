/* SPDX-License-Identifier: GPL-2.0-only */
/* The recording format: what goes in comes out, and damage is named, not replayed. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "dict.h"
#include "event.h"
#include "model_npu.h"
#include "record.h"
#include "record_fmt.h"

#define CHECK_HAS(s, frag)                                                             \
	do {                                                                           \
		const char *s_ = (s);                                                  \
		if (!strstr(s_, frag)) {                                               \
			fprintf(stderr, "  %s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, s_, \
				frag);                                                 \
			check_failed++;                                                \
		}                                                                      \
	} while (0)

/* ---- files ---- */

static char tmpdir[64];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

__attribute__((destructor)) static void rm_tmpdir(void)
{
	if (tmpdir[0])
		nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static const char *tmp_path(char *buf, const char *name)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test_record.XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
	}
	snprintf(buf, 256, "%s/%s", tmpdir, name);
	return buf;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	b = malloc(*len + 1);
	if (b && fread(b, 1, *len, f) != *len) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

static void spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len)
		abort();
	fclose(f);
}

static struct xpu_rec_meta test_meta(void)
{
	struct xpu_rec_meta m = { .sample_hz = 999, .ncpus = 2, .start_wall_ns = 1700000000123456789ULL,
				  .interval_ns = 1000000000 };
	strcpy(m.host, "buildbox");
	strcpy(m.kernel, "6.1.0-18-amd64");
	strcpy(m.version, "0.1.0");
	return m;
}

/* ---- a varied session: every event type, dictionary entries between events ---- */

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 17;
}

static uint32_t pick(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % (n + 1));
}

static void grow_dict(struct xpu_dict *d, uint64_t *s, size_t i)
{
	char name[32];
	if (i % 7 == 0)
		xpu_dict_str(d, name, (size_t)snprintf(name, sizeof(name), "fn_%zu", i));
	if (i % 11 == 0)
		xpu_dict_frame(d, (uint32_t)(rnd(s) % XPU_FRAME_KIND_MAX), 1 + pick(s, d->nstr - 1),
			       pick(s, d->nstr));
	if (i % 13 == 0) {
		uint32_t f[20], n = (uint32_t)(rnd(s) % 20);
		for (uint32_t k = 0; k < n; k++)
			f[k] = 1 + pick(s, d->nframes - 1);
		xpu_dict_stack(d, f, n);
	}
}

/* A device sample's values in their ranges (xpu_event_check). */
static void gpu_dev_event(struct xpu_event *ev, uint64_t *s, uint32_t ns)
{
	uint32_t index = (uint32_t)(rnd(s) % XPU_GPU_DEV_MAX);
	if (ev->type == XPU_EV_GPU_DEV) {
		ev->gdev.index = index;
		ev->gdev.name = pick(s, ns);
		ev->gdev.bus = pick(s, ns);
		ev->gdev.util_gpu = (uint8_t)(rnd(s) % 101);
		ev->gdev.util_mem = (uint8_t)(rnd(s) % 101);
		ev->gdev.mem_used_mib = ev->gdev.mem_total_mib / 2;
	} else if (ev->type == XPU_EV_GPU_DEV_LINK) {
		ev->glink.index = index;
	} else {
		ev->gdproc.index = index;
		ev->gdproc.comm = pick(s, ns);
		ev->gdproc.user = pick(s, ns);
		ev->gdproc.sm_pct = ev->gdproc.mem_pct = (uint8_t)(rnd(s) % 101);
		ev->gdproc.enc_pct = ev->gdproc.dec_pct = 0;
	}
}

/* Random bytes everywhere, then valid ids where the type has ids. */
static struct xpu_event make_event(struct xpu_dict *d, uint16_t type, uint64_t *s)
{
	struct xpu_event ev;
	for (size_t k = 0; k < sizeof(ev); k++)
		((uint8_t *)&ev)[k] = (uint8_t)rnd(s);
	ev.type = type;
	ev.source = (uint16_t)(rnd(s) % XPU_SRC_MAX);
	uint32_t ns = d->nstr, nk = d->nstacks;
	switch (type) {
	case XPU_EV_TICK:
		ev.tick.interval_ns = 1 + rnd(s) % 2000000000;
		ev.tick.sample_hz = (uint32_t)(rnd(s) % 10001);
		ev.tick.collect = (uint32_t)rnd(s) & XPU_TICK_BITS;
		break;
	case XPU_EV_CPU_SAMPLE:
		ev.cpu.stack = pick(s, nk);
		ev.cpu.comm = pick(s, ns);
		ev.cpu.tcomm = pick(s, ns);
		ev.cpu.user = pick(s, ns);
		break;
	case XPU_EV_DROP: ev.drop.source = (uint32_t)(rnd(s) % XPU_SRC_MAX); break;
	case XPU_EV_GPU_LAUNCH:
		ev.launch.stack = pick(s, nk);
		ev.launch.api = pick(s, ns);
		ev.launch.comm = pick(s, ns);
		break;
	case XPU_EV_GPU_KERNEL:
		ev.kernel.name = pick(s, ns);
		ev.kernel.comm = pick(s, ns);
		break;
	case XPU_EV_GPU_MEMCPY: ev.memcpy.comm = pick(s, ns); break;
	case XPU_EV_GPU_PROC: ev.gproc.comm = pick(s, ns); break;
	case XPU_EV_PROC_EXIT: break;
	case XPU_EV_PROC_STAT:
		ev.pid |= 1;
		ev.tid = 0;
		ev.pstat.state = "RSDZT"[rnd(s) % 5];
		ev.pstat.flags &= XPU_PSTAT_NICE_VIRT;
		ev.pstat.nice = (int16_t)((int)(rnd(s) % 40) - 20);
		break;
	case XPU_EV_THREAD_STAT:
		ev.pid |= 1;
		ev.tid |= 1;
		ev.pstat.state = "RSDZT"[rnd(s) % 5];
		ev.pstat.rss_bytes = 0;
		ev.pstat.flags &= XPU_PSTAT_NICE_VIRT;
		ev.pstat.nice = (int16_t)((int)(rnd(s) % 40) - 20);
		break;
	case XPU_EV_CPU_STAT:
		ev.pid = 0;
		ev.tid %= XPU_CPU_STAT_MAX;
		ev.sys.flags = XPU_SYS_BUSY;
		ev.sys.busy_pct100 %= 10001;
		break;
	case XPU_EV_SYS_STAT:
		ev.sys.flags &= XPU_SYS_BITS;
		ev.sys.busy_pct100 %= 10001;
		ev.sys.mem_used_kib = ev.sys.mem_total_kib / 2;
		break;
	case XPU_EV_NPU_PM:
		ev.npu.comm = pick(s, ns);
		ev.npu.aux = pick(s, ns);
		break;
	case XPU_EV_NPU_JOB:
		ev.npu.comm = pick(s, ns);
		ev.npu.count = (uint32_t)(rnd(s) % 2);
		break;
	case XPU_EV_NPU_FUNC:
	case XPU_EV_NPU_FUNC_LAT:
		ev.npu.comm = pick(s, ns);
		ev.npu.code = pick(s, ns);
		break;
	case XPU_EV_NPU_DEV: ev.ndev.index = (uint32_t)(rnd(s) % XPU_NPU_DEV_MAX); break;
	case XPU_EV_NPU_CLIENT:
		ev.nclient.index = (uint32_t)(rnd(s) % XPU_NPU_DEV_MAX);
		ev.nclient.comm = pick(s, ns);
		break;
	case XPU_EV_GPU_DEV:
	case XPU_EV_GPU_DEV_LINK:
	case XPU_EV_GPU_DEV_PROC:
		gpu_dev_event(&ev, s, ns);
		break;
	case XPU_EV_GPU_BORN: ev.pid |= 1; break;
	case XPU_EV_GPU_CPU:
		ev.pid |= 1;
		ev.gcpu.all_ns >>= 1;
		ev.gcpu.slice_ns %= ev.gcpu.all_ns / 2 + 1;
		ev.gcpu.whole_ns %= ev.gcpu.all_ns / 2 + 1;
		break;
	default: ev.npu.comm = pick(s, ns); break;
	}
	return ev;
}

/* Every event type a recording holds (the numbers have gaps). */
static const uint16_t types[] = {
	XPU_EV_TICK, XPU_EV_CPU_SAMPLE, XPU_EV_DROP, XPU_EV_PROC_EXIT, XPU_EV_GPU_LAUNCH, XPU_EV_GPU_KERNEL,
	XPU_EV_GPU_MEMCPY, XPU_EV_GPU_PROC, XPU_EV_NPU_IOCTL, XPU_EV_NPU_IPC, XPU_EV_NPU_JOB, XPU_EV_NPU_MEM,
	XPU_EV_NPU_PM, XPU_EV_NPU_L0, XPU_EV_NPU_BUSY, XPU_EV_GPU_DEV, XPU_EV_GPU_DEV_LINK, XPU_EV_GPU_DEV_PROC,
	XPU_EV_NPU_FUNC, XPU_EV_NPU_DEV, XPU_EV_NPU_CLIENT, XPU_EV_PROC_STAT, XPU_EV_SYS_STAT,
	XPU_EV_THREAD_STAT, XPU_EV_CPU_STAT, XPU_EV_NPU_FUNC_LAT, XPU_EV_GPU_CPU, XPU_EV_GPU_BORN,
};

struct session {
	struct xpu_dict dict;
	struct xpu_event *ev;
	size_t n;
	uint8_t *bytes;		/* the recording as written */
	size_t len;
};

/* Records n events to path; the file's bytes end up in s->bytes. */
static int record_session(struct session *s, size_t n, const char *path)
{
	char err[256];
	uint64_t seed = 42;
	struct xpu_rec_meta m = test_meta();

	memset(s, 0, sizeof(*s));
	xpu_dict_init(&s->dict);
	xpu_dict_str(&s->dict, "", 0);
	xpu_dict_str(&s->dict, "a\0b", 3);
	xpu_dict_cstr(&s->dict, "main");
	xpu_dict_frame(&s->dict, XPU_FRAME_USER, 3, 0);
	xpu_dict_stack(&s->dict, NULL, 0);
	s->ev = calloc(n, sizeof(*s->ev));
	s->n = n;
	struct xpu_rec_writer *w = xpu_rec_create(path, &s->dict, &m, err, sizeof(err));
	if (!w || !s->ev)
		return -1;
	for (size_t i = 0; i < n; i++) {
		grow_dict(&s->dict, &seed, i);
		s->ev[i] = make_event(&s->dict, types[i % (sizeof(types) / sizeof(types[0]))], &seed);
		if (xpu_rec_write(w, &s->ev[i]))
			return -1;
	}
	if (xpu_rec_close(w))
		return -1;
	s->bytes = slurp(path, &s->len);
	return s->bytes ? 0 : -1;
}

static void session_free(struct session *s)
{
	xpu_dict_free(&s->dict);
	free(s->ev);
	free(s->bytes);
}

static int same_stack(const struct xpu_dict *da, uint32_t a, const struct xpu_dict *db, uint32_t b)
{
	uint32_t na, nb;
	const uint32_t *fa = xpu_dict_stack_get(da, a, &na), *fb = xpu_dict_stack_get(db, b, &nb);
	return (a == 0) == (b == 0) && na == nb && (!na || memcmp(fa, fb, na * sizeof(*fa)) == 0);
}

/* Events are equal field by field, except that a stack id is compared by
 * what it names: the writer gives stacks file ids of its own. */
static int same_event(const struct xpu_event *a, const struct xpu_dict *da, const struct xpu_event *b,
		      const struct xpu_dict *db)
{
	struct xpu_event x = *a, y = *b;
	if (a->type == XPU_EV_CPU_SAMPLE) {
		if (!same_stack(da, a->cpu.stack, db, b->cpu.stack))
			return 0;
		x.cpu.stack = y.cpu.stack = 0;
	} else if (a->type == XPU_EV_GPU_LAUNCH) {
		if (!same_stack(da, a->launch.stack, db, b->launch.stack))
			return 0;
		x.launch.stack = y.launch.stack = 0;
	}
	return x.type == y.type && x.source == y.source && x.pid == y.pid &&
	       x.tid == y.tid && x.pad == y.pad && x.time == y.time &&
	       memcmp(x.raw, y.raw, sizeof(x.raw)) == 0;
}

/* Strings and frames come back with the same ids; every stack the reader
 * got is one of the writer's (only stacks that events use are written). */
static int same_dict(const struct xpu_dict *a, const struct xpu_dict *b)
{
	if (a->nstr != b->nstr || a->nframes != b->nframes || a->nstacks > b->nstacks)
		return 0;
	for (uint32_t i = 1; i <= a->nstr; i++)
		if (xpu_dict_str_len(a, i) != xpu_dict_str_len(b, i) ||
		    memcmp(xpu_dict_str_get(a, i), xpu_dict_str_get(b, i), xpu_dict_str_len(a, i)))
			return 0;
	for (uint32_t i = 1; i <= a->nframes; i++)
		if (memcmp(xpu_dict_frame_get(a, i), xpu_dict_frame_get(b, i), sizeof(struct xpu_frame)))
			return 0;
	for (uint32_t i = 1; i <= a->nstacks; i++) {
		uint32_t na, k;
		const uint32_t *fa = xpu_dict_stack_get(a, i, &na);
		for (k = 1; k <= b->nstacks && !same_stack(a, i, b, k); k++)
			;
		if (k > b->nstacks || (na && !fa))
			return 0;
	}
	return 1;
}

/* Reads every event; returns how many matched s->ev in order, -1 on an error. */
static long replay_matches(struct xpu_rec_reader *r, const struct xpu_dict *d, const struct session *s)
{
	struct xpu_event ev;
	long same = 0;
	size_t i = 0;
	int rc;
	while ((rc = xpu_rec_next(r, &ev)) > 0) {
		same += i < s->n && same_event(&ev, d, &s->ev[i], &s->dict);
		i++;
	}
	return rc < 0 ? -1 : same;
}

/* ---- the format, from the outside (docs/recording-format.md) ---- */

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static size_t first_block(const uint8_t *b) { return rd32(b + 12); }
static size_t block_end(const uint8_t *b, size_t off) { return off + 16 + rd32(b + off + 4); }

/* Offset of block number no (from 1). */
static size_t nth_block(const uint8_t *b, size_t no)
{
	size_t off = first_block(b);
	while (--no)
		off = block_end(b, off);
	return off;
}

static size_t count_blocks(const uint8_t *b, size_t len)
{
	size_t n = 0;
	for (size_t off = first_block(b); off < len; off = block_end(b, off))
		n++;
	return n;
}

static void reseal_block(uint8_t *b, size_t off)
{
	uLong c = crc32(crc32(0L, Z_NULL, 0), b + off, 12);
	wr32(b + off + 12, (uint32_t)crc32(c, b + off + 16, rd32(b + off + 4)));
}

static void reseal_header(uint8_t *b)
{
	uLong c = crc32(crc32(0L, Z_NULL, 0), b, 16);
	wr32(b + 16, (uint32_t)crc32(c, b + 20, rd32(b + 12) - 20));
}

/* Offset of the first record of this type in the block at off. */
static size_t find_record(const uint8_t *b, size_t off, unsigned type)
{
	size_t p = off + 16, end = block_end(b, off);
	while (p < end && (rd32(b + p) & 0xff) != type)
		p += 4 + (rd32(b + p) >> 8);
	return p;
}

enum { R_STRING = 1, R_FRAME = 2, R_STACK = 3, R_EVENT = 4, R_FORGET = 5 };

/* A hand-made recording: a real header, then blocks of chosen records. */
struct img {
	uint8_t b[1 << 16];
	size_t len, blk;
	uint32_t nrec;
};

static void img_start(struct img *m)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta meta = test_meta();
	size_t n;

	xpu_dict_init(&d);
	xpu_rec_close(xpu_rec_create(tmp_path(path, "header.rec"), &d, &meta, err, sizeof(err)));
	uint8_t *h = slurp(path, &n);
	memcpy(m->b, h, n);
	m->len = n;
	free(h);
	xpu_dict_free(&d);
}

static void img_block(struct img *m)
{
	m->blk = m->len;
	m->len += 16;
	m->nrec = 0;
}

static void img_rec(struct img *m, unsigned type, const void *p, size_t n)
{
	wr32(m->b + m->len, type | (uint32_t)n << 8);
	memcpy(m->b + m->len + 4, p, n);
	m->len += 4 + n;
	m->nrec++;
}

static void img_str(struct img *m, uint32_t id, const char *s)
{
	uint8_t p[256];
	wr32(p, id);
	memcpy(p + 4, s, strlen(s));
	img_rec(m, R_STRING, p, 4 + strlen(s));
}

static void img_frame(struct img *m, uint32_t id, uint32_t name)
{
	uint32_t p[4] = { id, XPU_FRAME_USER, name, 0 };
	img_rec(m, R_FRAME, p, sizeof(p));
}

static void img_stack1(struct img *m, uint32_t id, uint32_t frame)
{
	uint32_t p[3] = { id, 1, frame };
	img_rec(m, R_STACK, p, sizeof(p));
}

static void img_sample(struct img *m, uint32_t stack, uint32_t comm)
{
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .pid = 1, .tid = 1 };
	ev.cpu.stack = stack;
	ev.cpu.comm = comm;
	img_rec(m, R_EVENT, &ev, sizeof(ev));
}

static void img_end(struct img *m)
{
	wr32(m->b + m->blk, 0x4b4c4258);
	wr32(m->b + m->blk + 4, (uint32_t)(m->len - m->blk - 16));
	wr32(m->b + m->blk + 8, m->nrec);
	reseal_block(m->b, m->blk);
}

/* A valid block: "main", its frame, its stack, one sample using them. */
static void img_good_block(struct img *m)
{
	img_block(m);
	img_str(m, 1, "main");
	img_frame(m, 1, 1);
	img_stack1(m, 1, 1);
	img_sample(m, 1, 1);
	img_end(m);
}

static char errbuf[1024];

/* Opens and reads everything; returns the error, or "" for a good recording. */
static const char *replay_error(const void *b, size_t len)
{
	struct xpu_dict d;
	struct xpu_event ev;
	int rc;

	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(b, len, &d, errbuf, sizeof(errbuf));
	if (r) {
		while ((rc = xpu_rec_next(r, &ev)) > 0)
			;
		snprintf(errbuf, sizeof(errbuf), "%s", rc < 0 ? xpu_rec_error(r) : "");
		xpu_rec_close_reader(r);
	}
	xpu_dict_free(&d);
	return errbuf;
}

/* ---- round trips ---- */

TEST(every_event_comes_back_equal_field_by_field)
{
	char path[256];
	struct session s;
	struct xpu_dict d;
	char err[256];

	REQUIRE(record_session(&s, 3000, tmp_path(path, "rt.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(replay_matches(r, &d, &s), ==, 3000);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(reader_dictionary_equals_writer_dictionary)
{
	char path[256];
	struct session s;
	struct xpu_dict d;
	char err[256];

	REQUIRE(record_session(&s, 3000, tmp_path(path, "dict.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(replay_matches(r, &d, &s), ==, 3000);
	CHECK_INT(d.nstacks, >, 100);
	CHECK(same_dict(&d, &s.dict));
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(metadata_round_trips)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();

	xpu_dict_init(&d);
	memset(m.host, 'h', sizeof(m.host) - 1);
	xpu_rec_close(xpu_rec_create(tmp_path(path, "meta.rec"), &d, &m, err, sizeof(err)));
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	const struct xpu_rec_meta *got = xpu_rec_meta(r);
	CHECK_INT(got->sample_hz, ==, 999);
	CHECK_INT(got->ncpus, ==, 2);
	CHECK(got->start_wall_ns == m.start_wall_ns);
	CHECK(got->interval_ns == m.interval_ns);
	CHECK_STR(got->host, m.host);
	CHECK_STR(got->kernel, "6.1.0-18-amd64");
	CHECK_STR(got->version, "0.1.0");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(unterminated_metadata_strings_come_back_terminated)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();

	xpu_dict_init(&d);
	memset(m.version, 'v', sizeof(m.version));
	xpu_rec_close(xpu_rec_create(tmp_path(path, "meta2.rec"), &d, &m, err, sizeof(err)));
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(strlen(xpu_rec_meta(r)->version), ==, sizeof(m.version) - 1);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(overlong_strings_in_a_header_are_cut_to_fit)
{
	struct img m;
	struct xpu_dict d;
	char err[256];

	img_start(&m);
	m.b[44] = 100;
	m.b[45] = 0;
	memset(m.b + 46, 'h', 100);
	memset(m.b + 146, 0, 4);
	wr32(m.b + 12, 150);
	reseal_header(m.b);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(m.b, 150, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(strlen(xpu_rec_meta(r)->host), ==, sizeof(xpu_rec_meta(r)->host) - 1);
	CHECK_STR(xpu_rec_meta(r)->kernel, "");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(header_string_running_past_the_header_is_damage)
{
	struct img m;
	img_start(&m);
	m.b[44] = 200;
	reseal_header(m.b);
	CHECK_HAS(replay_error(m.b, m.len), "a string in the header runs past its end");
}

TEST(a_long_session_spans_many_blocks)
{
	char path[256];
	struct session s;

	REQUIRE(record_session(&s, 20000, tmp_path(path, "long.rec")) == 0);
	CHECK_INT(count_blocks(s.bytes, s.len), >=, 10);
	struct xpu_dict d;
	char err[256];
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, s.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(replay_matches(r, &d, &s), ==, 20000);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(open_mem_reads_the_same_bytes_as_the_file)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 500, tmp_path(path, "mem.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, s.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(replay_matches(r, &d, &s), ==, 500);
	CHECK(same_dict(&d, &s.dict));
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(flush_makes_events_readable_before_close)
{
	char path[256], err[256];
	struct xpu_dict wd, rd;
	struct xpu_rec_meta m = test_meta();
	struct xpu_event ev = { .type = XPU_EV_PROC_EXIT, .pid = 7 }, got;
	int n = 0, rc;

	xpu_dict_init(&wd);
	xpu_dict_init(&rd);
	struct xpu_rec_writer *w = xpu_rec_create(tmp_path(path, "flush.rec"), &wd, &m, err,
						  sizeof(err));
	REQUIRE(w);
	for (int i = 0; i < 100; i++)
		CHECK_INT(xpu_rec_write(w, &ev), ==, 0);
	CHECK_INT(xpu_rec_flush(w), ==, 0);
	struct xpu_rec_reader *r = xpu_rec_open(path, &rd, err, sizeof(err));
	REQUIRE(r);
	while ((rc = xpu_rec_next(r, &got)) > 0)
		n++;
	CHECK_INT(rc, ==, 0);
	CHECK_INT(n, ==, 100);
	xpu_rec_close_reader(r);
	xpu_rec_close(w);
	xpu_dict_free(&wd);
	xpu_dict_free(&rd);
}

/* ---- streams (a recording sent over a socket, core/sources/share.c) ---- */

/* Feeds bytes in pieces of `piece`, reading what has come after each. */
static long stream_matches(const struct session *s, size_t piece, struct xpu_dict *d)
{
	struct xpu_rec_reader *r = xpu_rec_open_stream(d);
	struct xpu_event ev;
	long n = 0;
	int rc = 0;
	if (!r)
		return -1;
	for (size_t off = 0; off < s->len && rc >= 0; off += piece) {
		size_t k = s->len - off < piece ? s->len - off : piece;
		if (xpu_rec_feed(r, s->bytes + off, k) < 0)
			break;
		while ((rc = xpu_rec_next(r, &ev)) > 0) {
			if ((size_t)n >= s->n || !same_event(&ev, d, &s->ev[n], &s->dict))
				n = -1000000;
			n++;
		}
	}
	xpu_rec_close_reader(r);
	return rc < 0 ? -1 : n;
}

TEST(a_stream_fed_in_odd_pieces_reads_as_the_file)
{
	char path[256];
	struct session s;
	REQUIRE(record_session(&s, 20000, tmp_path(path, "stream.rec")) == 0);
	size_t pieces[] = { 1, 777, 65536 + 3, 1 << 22 };
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		struct xpu_dict d;
		xpu_dict_init(&d);
		CHECK_INT(stream_matches(&s, pieces[i], &d), ==, 20000);
		CHECK(same_dict(&d, &s.dict));
		xpu_dict_free(&d);
	}
	session_free(&s);
}

TEST(a_stream_says_nothing_until_its_header_has_come)
{
	char path[256];
	struct session s;
	struct xpu_dict d;
	REQUIRE(record_session(&s, 10, tmp_path(path, "hdr.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_stream(&d);
	REQUIRE(r);
	CHECK_INT(xpu_rec_stream_header(r), ==, 0);
	CHECK_INT(xpu_rec_feed(r, s.bytes, 30), ==, 0);
	CHECK_INT(xpu_rec_stream_header(r), ==, 0);
	CHECK_INT(xpu_rec_feed(r, s.bytes + 30, s.len - 30), ==, 0);
	CHECK_INT(xpu_rec_stream_header(r), ==, 1);
	CHECK_INT(xpu_rec_meta(r)->sample_hz, ==, test_meta().sample_hz);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(a_damaged_stream_is_named_as_a_file_is)
{
	char path[256];
	struct session s;
	struct xpu_dict d;
	struct xpu_event ev;
	int rc;
	REQUIRE(record_session(&s, 500, tmp_path(path, "dmg.rec")) == 0);
	s.bytes[s.len - 5] ^= 0xff;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_stream(&d);
	REQUIRE(r);
	CHECK_INT(xpu_rec_feed(r, s.bytes, s.len), ==, 0);
	while ((rc = xpu_rec_next(r, &ev)) > 0)
		;
	CHECK_INT(rc, ==, -1);
	CHECK_HAS(xpu_rec_error(r), "checksum mismatch");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

struct sink_buf { uint8_t *b; size_t len, cap; int refuse_after; };

static int to_buf(void *arg, const void *p, size_t n)
{
	struct sink_buf *sb = arg;
	if (sb->refuse_after && sb->len + n > (size_t)sb->refuse_after)
		return -ENOBUFS;
	if (sb->len + n > sb->cap) {
		sb->cap = (sb->len + n) * 2;
		sb->b = realloc(sb->b, sb->cap);
	}
	memcpy(sb->b + sb->len, p, n);
	sb->len += n;
	return 0;
}

TEST(a_sink_writer_writes_the_bytes_a_file_writer_does)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct sink_buf sb = { 0 };
	struct xpu_event ev = { .type = XPU_EV_PROC_EXIT, .pid = 7 };
	xpu_dict_init(&d);
	struct xpu_rec_writer *f = xpu_rec_create(tmp_path(path, "sink.rec"), &d, &m, err, sizeof(err));
	struct xpu_rec_writer *w = xpu_rec_create_sink(&d, &m, to_buf, &sb);
	REQUIRE(f && w);
	for (int i = 0; i < 3000; i++) {
		xpu_dict_cstr(&d, i % 2 ? "one" : "two");
		CHECK_INT(xpu_rec_write(f, &ev), ==, 0);
		CHECK_INT(xpu_rec_write(w, &ev), ==, 0);
	}
	CHECK_INT(xpu_rec_close(f), ==, 0);
	CHECK_INT(xpu_rec_close(w), ==, 0);
	struct stat st;
	REQUIRE(stat(path, &st) == 0);
	CHECK_INT((size_t)st.st_size, ==, sb.len);
	CHECK_STR(replay_error(sb.b, sb.len), "");
	free(sb.b);
	xpu_dict_free(&d);
}

TEST(a_sink_that_refuses_ends_the_writer)
{
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct sink_buf sb = { 0 };
	struct xpu_event ev = { .type = XPU_EV_PROC_EXIT, .pid = 7 };
	xpu_dict_init(&d);
	struct xpu_rec_writer *w = xpu_rec_create_sink(&d, &m, to_buf, &sb);
	REQUIRE(w);
	sb.refuse_after = (int)sb.len + 1;	/* the header went; no block will */
	CHECK_INT(xpu_rec_write(w, &ev), ==, 0);
	CHECK_INT(xpu_rec_flush(w), ==, -ENOBUFS);
	CHECK_INT(xpu_rec_write(w, &ev), ==, -ENOBUFS);
	xpu_rec_close(w);
	free(sb.b);
	xpu_dict_free(&d);
}

TEST(bytes_counts_the_file_and_the_pending_block)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct xpu_event ev = { .type = XPU_EV_PROC_EXIT };
	struct stat st;

	xpu_dict_init(&d);
	struct xpu_rec_writer *w = xpu_rec_create(tmp_path(path, "bytes.rec"), &d, &m, err,
						  sizeof(err));
	REQUIRE(w);
	xpu_rec_write(w, &ev);
	uint64_t pending = xpu_rec_bytes(w);
	xpu_rec_flush(w);
	REQUIRE(stat(path, &st) == 0);
	CHECK_INT(pending, ==, st.st_size);
	CHECK_INT(xpu_rec_bytes(w), ==, st.st_size);
	xpu_rec_close(w);
	xpu_dict_free(&d);
}

TEST(a_string_larger_than_a_block_round_trips)
{
	char path[256], err[256];
	struct xpu_dict wd, rd;
	struct xpu_rec_meta m = test_meta();
	struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL }, got;
	static char big[200000];

	memset(big, 'x', sizeof(big));
	xpu_dict_init(&wd);
	xpu_dict_init(&rd);
	ev.kernel.name = xpu_dict_str(&wd, big, sizeof(big));
	struct xpu_rec_writer *w = xpu_rec_create(tmp_path(path, "big.rec"), &wd, &m, err,
						  sizeof(err));
	REQUIRE(w);
	CHECK_INT(xpu_rec_write(w, &ev), ==, 0);
	CHECK_INT(xpu_rec_close(w), ==, 0);
	struct xpu_rec_reader *r = xpu_rec_open(path, &rd, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &got), ==, 1);
	CHECK_INT(xpu_dict_str_len(&rd, got.kernel.name), ==, sizeof(big));
	xpu_rec_close_reader(r);
	xpu_dict_free(&wd);
	xpu_dict_free(&rd);
}

TEST(writer_refuses_an_event_the_reader_would_reject)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE };

	xpu_dict_init(&d);
	ev.cpu.stack = 1;
	struct xpu_rec_writer *w = xpu_rec_create(tmp_path(path, "bad.rec"), &d, &m, err,
						  sizeof(err));
	REQUIRE(w);
	CHECK_INT(xpu_rec_write(w, &ev), ==, -EINVAL);
	xpu_rec_close(w);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &ev), ==, 0);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

/* ---- event checks ---- */

TEST(event_check_catches_every_id_field)
{
	static const struct { uint16_t type; size_t off; int stack; } ids[] = {
		{ XPU_EV_CPU_SAMPLE, offsetof(struct xpu_event, cpu.stack), 1 },
		{ XPU_EV_CPU_SAMPLE, offsetof(struct xpu_event, cpu.comm), 0 },
		{ XPU_EV_CPU_SAMPLE, offsetof(struct xpu_event, cpu.tcomm), 0 },
		{ XPU_EV_CPU_SAMPLE, offsetof(struct xpu_event, cpu.user), 0 },
		{ XPU_EV_GPU_LAUNCH, offsetof(struct xpu_event, launch.stack), 1 },
		{ XPU_EV_GPU_LAUNCH, offsetof(struct xpu_event, launch.api), 0 },
		{ XPU_EV_GPU_LAUNCH, offsetof(struct xpu_event, launch.comm), 0 },
		{ XPU_EV_GPU_KERNEL, offsetof(struct xpu_event, kernel.name), 0 },
		{ XPU_EV_GPU_KERNEL, offsetof(struct xpu_event, kernel.comm), 0 },
		{ XPU_EV_GPU_MEMCPY, offsetof(struct xpu_event, memcpy.comm), 0 },
		{ XPU_EV_GPU_PROC, offsetof(struct xpu_event, gproc.comm), 0 },
		{ XPU_EV_NPU_IOCTL, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_IPC, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_JOB, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_MEM, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_PM, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_PM, offsetof(struct xpu_event, npu.aux), 0 },
		{ XPU_EV_NPU_L0, offsetof(struct xpu_event, npu.comm), 0 },
		{ XPU_EV_NPU_BUSY, offsetof(struct xpu_event, npu.comm), 0 },
	};
	struct xpu_dict d;
	const char *why;

	xpu_dict_init(&d);
	xpu_dict_cstr(&d, "a");
	xpu_dict_frame(&d, XPU_FRAME_USER, 1, 0);
	xpu_dict_stack(&d, (const uint32_t[]){ 1 }, 1);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct xpu_event ev = { .type = ids[i].type };
		uint32_t last = ids[i].stack ? d.nstacks : d.nstr, next = last + 1;
		memcpy((char *)&ev + ids[i].off, &last, 4);
		CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
		memcpy((char *)&ev + ids[i].off, &next, 4);
		CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	}
	xpu_dict_free(&d);
}

/* Counts taken as they are (the launch probes on throughout) weigh as much
 * as a slice's length: a span of an unknown mode is refused; one on
 * throughout may be the probes' (pid 0) or a process's library's. */
TEST(event_check_takes_a_span_of_a_known_mode_only)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event ev = { .type = XPU_EV_GPU_SLICE, .source = XPU_SRC_GPU, .time = 1000 };

	xpu_dict_init(&d);
	ev.slice.end = 2000;
	for (uint32_t mode = XPU_GPU_MODE_EXACT; mode <= XPU_GPU_MODE_WHOLE; mode++) {
		ev.slice.mode = mode;
		CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
	}
	ev.slice.mode = XPU_GPU_MODE_WHOLE + 1;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	ev.pid = 42;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	ev.slice.mode = XPU_GPU_MODE_WHOLE;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
	ev.slice.mode = XPU_GPU_MODE_SAMPLED;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
	xpu_dict_free(&d);
}

TEST(event_check_rejects_bad_type_source_and_tick)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event none = { .type = XPU_EV_NONE }, max = { .type = XPU_EV_TYPE_MAX };
	struct xpu_event src = { .type = XPU_EV_PROC_EXIT, .source = XPU_SRC_MAX };
	struct xpu_event drop = { .type = XPU_EV_DROP }, tick = { .type = XPU_EV_TICK };

	xpu_dict_init(&d);
	drop.drop.source = XPU_SRC_MAX;
	CHECK_INT(xpu_event_check(&none, &d, &why), ==, -1);
	CHECK_INT(xpu_event_check(&max, &d, &why), ==, -1);
	CHECK_INT(xpu_event_check(&src, &d, &why), ==, -1);
	CHECK_INT(xpu_event_check(&drop, &d, &why), ==, -1);
	CHECK_INT(xpu_event_check(&tick, &d, &why), ==, -1);
	tick.tick.interval_ns = 25ULL * 3600 * 1000000000;
	CHECK_INT(xpu_event_check(&tick, &d, &why), ==, -1);
	tick.tick.interval_ns = 1000000000;
	CHECK_INT(xpu_event_check(&tick, &d, &why), ==, 0);
	xpu_dict_free(&d);
}

TEST(event_check_rejects_a_job_event_standing_for_many_jobs)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event job = { .type = XPU_EV_NPU_JOB, .source = XPU_SRC_NPU };

	xpu_dict_init(&d);
	job.npu.code = XPU_NPU_JOB_SUBMIT;
	CHECK_INT(xpu_event_check(&job, &d, &why), ==, 0);
	job.npu.count = 1;
	CHECK_INT(xpu_event_check(&job, &d, &why), ==, 0);
	job.npu.count = UINT32_MAX;
	CHECK_INT(xpu_event_check(&job, &d, &why), ==, -1);
	CHECK_HAS(why, "more than one job");
	xpu_dict_free(&d);
}

/* A process's CPU time weighs its estimates: never more of it in the
 * probes' spans than in all, never without a process. */
TEST(event_check_takes_cpu_time_within_itself)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event ev = { .type = XPU_EV_GPU_CPU, .source = XPU_SRC_GPU, .pid = 9 };

	xpu_dict_init(&d);
	ev.gcpu.all_ns = 1000;
	ev.gcpu.slice_ns = 400;
	ev.gcpu.whole_ns = 600;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
	ev.gcpu.whole_ns = 601;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	CHECK_HAS(why, "more of it in the probes' spans than in all");
	ev.gcpu.whole_ns = UINT64_MAX;	/* no sum that wraps */
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	ev.gcpu.whole_ns = 0;
	ev.gcpu.slice_ns = 1001;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	ev.gcpu.slice_ns = 0;
	ev.pid = 0;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	xpu_dict_free(&d);
}

/* A process's start bounds the time its launches are estimated over: never
 * without the process. */
TEST(event_check_takes_a_start_only_with_its_process)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event ev = { .type = XPU_EV_GPU_BORN, .source = XPU_SRC_GPU, .pid = 9, .time = 5 };

	xpu_dict_init(&d);
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, 0);
	ev.pid = 0;
	CHECK_INT(xpu_event_check(&ev, &d, &why), ==, -1);
	CHECK_HAS(why, "start without the process");
	xpu_dict_free(&d);
}

/* ---- damage ---- */

TEST(empty_file_is_not_a_recording)
{
	CHECK_HAS(replay_error("", 0), "empty");
}

TEST(wrong_magic_is_not_a_recording)
{
	struct img m;
	img_start(&m);
	m.b[0] = 'Y';
	CHECK_HAS(replay_error(m.b, m.len), "not an xputop recording");
}

TEST(newer_major_version_is_refused_by_name)
{
	struct img m;
	img_start(&m);
	m.b[8] = 3;
	reseal_header(m.b);
	CHECK_HAS(replay_error(m.b, m.len),
		  "recording format version 3 is newer than this xputop understands (1)");
}

TEST(truncated_header_is_reported)
{
	struct img m;
	img_start(&m);
	CHECK_HAS(replay_error(m.b, 30), "truncated recording");
	CHECK_HAS(replay_error(m.b, 5), "truncated recording");
}

TEST(damaged_header_fails_its_checksum)
{
	struct img m;
	img_start(&m);
	m.b[50] ^= 1;
	CHECK_HAS(replay_error(m.b, m.len), "header checksum mismatch");
}

TEST(a_refresh_interval_no_xputop_records_is_damage)
{
	struct img m;
	img_start(&m);
	uint64_t one_ns = 1;
	memcpy(m.b + 36, &one_ns, 8);
	reseal_header(m.b);
	CHECK_HAS(replay_error(m.b, m.len), "refresh interval of 1 ns is not 0.05 to 3600 s");
	uint64_t none = 0;
	memcpy(m.b + 36, &none, 8);
	reseal_header(m.b);
	CHECK_STR(replay_error(m.b, m.len), "");
}

TEST(truncated_block_says_how_many_blocks_are_intact)
{
	char path[256], want[128];
	struct session s;

	REQUIRE(record_session(&s, 5000, tmp_path(path, "trunc.rec")) == 0);
	size_t nb = count_blocks(s.bytes, s.len), cut = nth_block(s.bytes, nb) + 100;
	REQUIRE(nb >= 3);
	snprintf(want, sizeof(want), "truncated recording: ends inside block %zu at byte %zu", nb,
		 cut);
	CHECK_HAS(replay_error(s.bytes, cut), want);
	snprintf(want, sizeof(want), "the first %zu blocks are intact", nb - 1);
	CHECK_HAS(replay_error(s.bytes, cut), want);
	session_free(&s);
}

TEST(file_cut_inside_a_block_header_is_truncation)
{
	struct img m;
	img_start(&m);
	img_good_block(&m);
	CHECK_HAS(replay_error(m.b, m.len + 5), "ends inside block 2");
}

TEST(flipped_payload_byte_fails_the_checksum)
{
	char path[256], want[128];
	struct session s;

	REQUIRE(record_session(&s, 3000, tmp_path(path, "flip.rec")) == 0);
	size_t off = nth_block(s.bytes, 2);
	s.bytes[off + 1000] ^= 0x10;
	snprintf(want, sizeof(want), "damaged recording: block 2 at byte %zu: checksum mismatch",
		 off);
	CHECK_HAS(replay_error(s.bytes, s.len), want);
	session_free(&s);
}

TEST(block_length_past_the_end_of_the_file_is_reported)
{
	struct img m;
	img_start(&m);
	img_good_block(&m);
	wr32(m.b + m.blk + 4, 1000);
	CHECK_HAS(replay_error(m.b, m.len), "ends inside block 1");
}

TEST(a_4gb_block_length_is_refused_without_allocating)
{
	char path[256], err[256];
	struct img m;
	struct xpu_dict d;
	struct xpu_event ev;

	img_start(&m);
	img_good_block(&m);
	wr32(m.b + m.blk + 4, 0xfffffff0);
	spit(tmp_path(path, "huge.rec"), m.b, m.len);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &ev), ==, -1);
	CHECK_HAS(xpu_rec_error(r), "over the limit");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(record_crossing_the_block_end_is_damage)
{
	struct img m;
	img_start(&m);
	img_good_block(&m);
	size_t rec = find_record(m.b, m.blk, R_EVENT);
	wr32(m.b + rec, R_EVENT | 200u << 8);
	reseal_block(m.b, m.blk);
	CHECK_HAS(replay_error(m.b, m.len), "crosses the end of the block");
}

TEST(record_count_that_disagrees_is_damage)
{
	struct img m;
	img_start(&m);
	img_good_block(&m);
	wr32(m.b + m.blk + 8, 5);
	reseal_block(m.b, m.blk);
	CHECK_HAS(replay_error(m.b, m.len), "says it holds 5 records but holds 4");
}

TEST(unknown_event_type_is_damage)
{
	struct img m;
	img_start(&m);
	img_good_block(&m);
	size_t rec = find_record(m.b, m.blk, R_EVENT);
	m.b[rec + 4] = 99;
	reseal_block(m.b, m.blk);
	CHECK_HAS(replay_error(m.b, m.len), "event of type 99: unknown event type");
}

TEST(event_using_a_stack_not_yet_defined_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_str(&m, 1, "main");
	img_sample(&m, 1, 1);
	img_frame(&m, 1, 1);
	img_stack1(&m, 1, 1);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "stack id not defined yet");
}

TEST(event_using_a_string_not_yet_defined_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_sample(&m, 0, 1);
	img_str(&m, 1, "main");
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "string id not defined yet");
}

TEST(dictionary_id_out_of_sequence_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_str(&m, 1, "a");
	img_str(&m, 3, "b");
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "string id 3 is out of sequence (expected 2)");
}

static void img_forget(struct img *m, uint32_t id)
{
	img_rec(m, R_FORGET, &id, 4);
}

/* A file with string 1, frame 1 and stack 1, then what the test adds. */
static void img_one_stack(struct img *m)
{
	img_start(m);
	img_block(m);
	img_str(m, 1, "main");
	img_frame(m, 1, 1);
	img_stack1(m, 1, 1);
	img_sample(m, 1, 1);
}

TEST(a_forgotten_stack_comes_back_under_a_new_id)
{
	struct img m;
	struct xpu_dict d;
	struct xpu_event ev;
	char err[256];
	img_one_stack(&m);
	img_forget(&m, 1);
	img_stack1(&m, 2, 1);	/* the same path again, after the forget */
	img_sample(&m, 2, 1);
	img_end(&m);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(m.b, m.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &ev), ==, 1);
	uint32_t first = ev.cpu.stack, n;
	CHECK_INT(xpu_rec_next(r, &ev), ==, 1);
	CHECK_INT(ev.cpu.stack, ==, first);	/* nothing swept it in between */
	const uint32_t *f = xpu_dict_stack_get(&d, ev.cpu.stack, &n);
	CHECK(f && n == 1 && f[0] == 1);
	CHECK_INT(xpu_rec_next(r, &ev), ==, 0);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(an_event_on_a_forgotten_stack_is_damage)
{
	struct img m;
	img_one_stack(&m);
	img_forget(&m, 1);
	img_sample(&m, 1, 1);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "event of type 2: refers to a stack id not defined");
}

TEST(forgetting_an_undefined_or_forgotten_stack_is_damage)
{
	struct img m;
	img_one_stack(&m);
	img_forget(&m, 2);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "forgets stack id 2, not defined yet");
	img_one_stack(&m);
	img_forget(&m, 1);
	img_forget(&m, 1);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "forgets stack id 1 twice");
	img_one_stack(&m);
	img_rec(&m, R_FORGET, "abc", 3);	/* not whole ids */
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "record of type 5 cannot be 3 bytes long");
}

TEST(dictionary_content_written_twice_reads_as_one_entry)
{
	struct img m;
	struct xpu_dict d;
	struct xpu_event ev;
	char err[256];
	img_start(&m);
	img_block(&m);
	img_str(&m, 1, "main");
	img_frame(&m, 1, 1);
	img_frame(&m, 2, 1);
	img_stack1(&m, 1, 2);
	img_sample(&m, 1, 1);
	img_end(&m);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(m.b, m.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &ev), ==, 1);
	CHECK_INT(d.nframes, ==, 1);
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(&d, ev.cpu.stack, &n);
	CHECK(n == 1 && f[0] == 1);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

/* What an event names, by content: its comm and its stack's frame names. */
static void event_text(const struct xpu_event *ev, const struct xpu_dict *d, char *buf, size_t size)
{
	uint32_t n;
	const uint32_t *f = xpu_dict_stack_get(d, ev->cpu.stack, &n);
	size_t at = (size_t)snprintf(buf, size, "%s", xpu_dict_str_get(d, ev->cpu.comm));
	for (uint32_t i = 0; i < n && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, ";%s",
				       xpu_dict_str_get(d, xpu_dict_frame_get(d, f[i])->name));
}

TEST(a_dictionary_that_has_entries_already_gets_the_files_renumbered_in)
{
	char path[256], err[256], a[2048], b[2048];
	struct session s;
	struct xpu_dict d;
	struct xpu_event ev;
	size_t i = 0;
	long samples = 0, same = 0;
	int rc;

	REQUIRE(record_session(&s, 3000, tmp_path(path, "renum.rec")) == 0);
	xpu_dict_init(&d);
	/* What a model interns for itself before and while a replay runs. */
	xpu_dict_cstr(&d, "[no stack]");
	xpu_dict_frame(&d, XPU_FRAME_INFO, xpu_dict_cstr(&d, "[zz]"), 0);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	if (!r)
		fprintf(stderr, "  open: %s\n", err);
	REQUIRE(r);
	for (; (rc = xpu_rec_next(r, &ev)) > 0 && i < s.n; i++) {
		if (ev.type != XPU_EV_CPU_SAMPLE)
			continue;
		event_text(&ev, &d, a, sizeof(a));
		event_text(&s.ev[i], &s.dict, b, sizeof(b));
		samples++;
		same += strcmp(a, b) == 0;
		xpu_dict_cstr(&d, a);	/* the dictionary keeps growing meanwhile */
	}
	CHECK_INT(rc, >=, 0);
	CHECK(samples > 100);
	CHECK_INT(same, ==, samples);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(stack_of_undefined_frames_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_stack1(&m, 1, 1);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "stack 1 refers to frame id 1, not defined yet");
}

TEST(frame_naming_a_string_not_yet_defined_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_frame(&m, 1, 1);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "frame 1 refers to a string id not defined yet");
}

TEST(frame_of_unknown_kind_is_damage)
{
	struct img m;
	uint32_t frame[4] = { 1, XPU_FRAME_KIND_MAX, 1, 0 };
	img_start(&m);
	img_block(&m);
	img_str(&m, 1, "main");
	img_rec(&m, R_FRAME, frame, sizeof(frame));
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "frame 1 has unknown kind");
}

TEST(record_too_short_for_its_type_is_damage)
{
	struct img m;
	uint32_t frame[2] = { 1, XPU_FRAME_USER };
	img_start(&m);
	img_block(&m);
	img_str(&m, 1, "main");
	img_rec(&m, R_FRAME, frame, sizeof(frame));
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "record of type 2 cannot be 8 bytes long");
}

TEST(unknown_record_type_of_the_same_version_is_damage)
{
	struct img m;
	img_start(&m);
	img_block(&m);
	img_rec(&m, 77, "hello", 5);
	img_end(&m);
	CHECK_HAS(replay_error(m.b, m.len), "unknown record type 77");
}

TEST(records_and_events_of_a_newer_minor_version_are_skipped)
{
	struct img m;
	struct xpu_dict d;
	struct xpu_event ev = { .type = XPU_EV_TYPE_MAX + 3 }, got;
	char err[256];

	img_start(&m);
	m.b[10] = REC_MINOR + 1;	/* one past this reader's minor */
	reseal_header(m.b);
	img_block(&m);
	img_rec(&m, 77, "hello", 5);
	img_rec(&m, R_EVENT, &ev, sizeof(ev));
	img_end(&m);
	img_good_block(&m);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(m.b, m.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &got), ==, 1);
	CHECK_INT(got.type, ==, XPU_EV_CPU_SAMPLE);
	CHECK_INT(xpu_rec_next(r, &got), ==, 0);
	CHECK_INT(xpu_rec_skipped(r), ==, 2);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(process_and_machine_stat_events_are_checked)
{
	struct xpu_dict d;
	const char *why;
	struct xpu_event p = { .type = XPU_EV_PROC_STAT, .pid = 42 }, y = { .type = XPU_EV_SYS_STAT };

	xpu_dict_init(&d);
	REQUIRE(xpu_event_type_known(XPU_EV_PROC_STAT) && xpu_event_type_known(XPU_EV_SYS_STAT));
	p.pstat.state = 'R';
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, 0);
	p.pstat.state = 0;
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, -1);
	p.pstat.state = 'S';
	p.tid = 7;	/* a process's figures, never a thread's */
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, -1);
	p.type = XPU_EV_THREAD_STAT;	/* a thread's: a tid, no memory of its own */
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, 0);
	p.pstat.rss_bytes = 4096;
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, -1);
	p.pstat.rss_bytes = 0;
	p.tid = 0;
	CHECK_INT(xpu_event_check(&p, &d, &why), ==, -1);
	p.type = XPU_EV_PROC_STAT;
	y.sys.flags = XPU_SYS_BUSY | XPU_SYS_MEM;
	y.sys.busy_pct100 = 10000;
	y.sys.mem_total_kib = 100;
	y.sys.mem_used_kib = 100;
	CHECK_INT(xpu_event_check(&y, &d, &why), ==, 0);
	y.sys.busy_pct100 = 10001;
	CHECK_INT(xpu_event_check(&y, &d, &why), ==, -1);
	y.sys.busy_pct100 = 0;
	y.sys.mem_used_kib = 101;
	CHECK_INT(xpu_event_check(&y, &d, &why), ==, -1);
	y.sys.mem_used_kib = 0;
	y.sys.flags = 0x80;
	CHECK_INT(xpu_event_check(&y, &d, &why), ==, -1);
	xpu_dict_free(&d);
}

TEST(missing_file_is_reported)
{
	char path[256], err[512];
	struct xpu_dict d;

	xpu_dict_init(&d);
	CHECK(!xpu_rec_open(tmp_path(path, "nothing-here.rec"), &d, err, sizeof(err)));
	CHECK_STR(err, "cannot open: No such file or directory");
	xpu_dict_free(&d);
}

/* ---- verify ---- */

TEST(verify_refuses_a_damaged_file_before_any_event)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 3000, tmp_path(path, "ver.rec")) == 0);
	size_t nb = count_blocks(s.bytes, s.len), off = nth_block(s.bytes, nb);
	s.bytes[off + 20] ^= 1;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, s.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, -1);
	CHECK_HAS(xpu_rec_error(r), "checksum mismatch");
	CHECK_INT(d.nstr, ==, 0);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(verify_catches_bad_framing_inside_a_block)
{
	struct img m;
	struct xpu_dict d;
	char err[256];

	img_start(&m);
	img_good_block(&m);
	wr32(m.b + m.blk + 8, 3);
	reseal_block(m.b, m.blk);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(m.b, m.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, -1);
	CHECK_HAS(xpu_rec_error(r), "says it holds 3 records");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
}

TEST(after_verify_reading_starts_at_the_beginning)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 3000, tmp_path(path, "ver2.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, 0);
	CHECK_INT(replay_matches(r, &d, &s), ==, 3000);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(verify_after_reading_has_started_is_refused)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;
	struct xpu_event ev;

	REQUIRE(record_session(&s, 100, tmp_path(path, "ver3.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, s.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &ev), ==, 1);
	CHECK_INT(xpu_rec_verify(r), ==, -1);
	CHECK_HAS(xpu_rec_error(r), "before the first xpu_rec_next");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

/* Events in the first n blocks of s (a file cut after them replays these). */
static long events_in_blocks(const struct session *s, size_t n)
{
	char err[256];
	struct xpu_dict d;
	struct xpu_event ev;
	long k = 0;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s->bytes, nth_block(s->bytes, n + 1), &d, err, sizeof(err));
	while (r && xpu_rec_next(r, &ev) > 0)
		k++;
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	return k;
}

TEST(verify_keeps_the_intact_blocks_of_a_torn_tail_and_warns)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 5000, tmp_path(path, "torn.rec")) == 0);
	size_t nb = count_blocks(s.bytes, s.len), cut = nth_block(s.bytes, nb) + 100;
	REQUIRE(nb >= 3);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, cut, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, 0);
	CHECK_HAS(xpu_rec_warning(r), "not a whole block");
	CHECK_INT(replay_matches(r, &d, &s), ==, events_in_blocks(&s, nb - 1));
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(verify_keeps_a_whole_recording_followed_by_garbage_and_warns)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 3000, tmp_path(path, "garbage.rec")) == 0);
	uint8_t *b = malloc(s.len + 40);
	REQUIRE(b);
	memcpy(b, s.bytes, s.len);
	memset(b + s.len, 'x', 40);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(b, s.len + 40, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, 0);
	CHECK_HAS(xpu_rec_warning(r), "40 bytes");
	CHECK_INT(replay_matches(r, &d, &s), ==, 3000);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	free(b);
	session_free(&s);
}

TEST(verify_of_an_intact_recording_warns_of_nothing)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;

	REQUIRE(record_session(&s, 1000, tmp_path(path, "clean.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(s.bytes, s.len, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_verify(r), ==, 0);
	CHECK_STR(xpu_rec_warning(r), "");
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

/* ---- creating files safely ---- */

TEST(create_from_refuses_the_input_by_another_name_and_keeps_it)
{
	char path[256], alias[256], other[300], err[512];
	struct session s;
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	size_t len;

	REQUIRE(record_session(&s, 1000, tmp_path(path, "input.rec")) == 0);
	tmp_path(alias, "input-link.rec");
	unlink(alias);
	REQUIRE(link(path, alias) == 0);
	const char *slash = strrchr(path, '/');
	REQUIRE(slash);
	snprintf(other, sizeof(other), "%.*s/.%s", (int)(slash - path), path, slash);
	xpu_dict_init(&d);
	CHECK(!xpu_rec_create_from(alias, path, &d, &m, err, sizeof(err)));
	CHECK_HAS(err, "is the file being replayed");
	CHECK(!xpu_rec_create_from(other, path, &d, &m, err, sizeof(err)));
	CHECK_HAS(err, "is the file being replayed");
	uint8_t *b = slurp(path, &len);
	CHECK(b && len == s.len && memcmp(b, s.bytes, len) == 0);
	free(b);
	unlink(alias);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(create_refuses_to_overwrite_a_file_that_is_not_a_recording)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	size_t len;

	spit(tmp_path(path, "notes.txt"), "precious\n", 9);
	xpu_dict_init(&d);
	CHECK(!xpu_rec_create(path, &d, &m, err, sizeof(err)));
	CHECK_HAS(err, "exists and is not an xputop recording; not overwriting it");
	uint8_t *b = slurp(path, &len);
	CHECK(b && len == 9 && memcmp(b, "precious\n", 9) == 0);
	free(b);
	xpu_dict_free(&d);
}

TEST(create_replaces_an_old_recording)
{
	char path[256], err[256];
	struct session s;
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct xpu_event ev = { .type = XPU_EV_PROC_EXIT }, got;

	REQUIRE(record_session(&s, 1000, tmp_path(path, "again.rec")) == 0);
	xpu_dict_init(&d);
	struct xpu_rec_writer *w = xpu_rec_create(path, &d, &m, err, sizeof(err));
	REQUIRE(w);
	xpu_rec_write(w, &ev);
	xpu_rec_close(w);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	REQUIRE(r);
	CHECK_INT(xpu_rec_next(r, &got), ==, 1);
	CHECK_INT(xpu_rec_next(r, &got), ==, 0);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	session_free(&s);
}

TEST(create_does_not_follow_a_symlink)
{
	char target[256], lnk[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct stat st;

	spit(tmp_path(target, "victim"), "", 0);
	REQUIRE(symlink(target, tmp_path(lnk, "link.rec")) == 0);
	xpu_dict_init(&d);
	CHECK(!xpu_rec_create(lnk, &d, &m, err, sizeof(err)));
	CHECK_HAS(err, "symbolic link");
	CHECK(stat(target, &st) == 0 && st.st_size == 0);
	xpu_dict_free(&d);
}

TEST(recording_made_under_sudo_belongs_to_the_user)
{
	char path[256], err[256];
	struct xpu_dict d;
	struct xpu_rec_meta m = test_meta();
	struct stat st;

	if (geteuid() != 0)
		return;
	setenv("SUDO_UID", "4242", 1);
	setenv("SUDO_GID", "4343", 1);
	xpu_dict_init(&d);
	xpu_rec_close(xpu_rec_create(tmp_path(path, "sudo.rec"), &d, &m, err, sizeof(err)));
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	REQUIRE(stat(path, &st) == 0);
	CHECK_INT(st.st_uid, ==, 4242);
	CHECK_INT(st.st_gid, ==, 4343);
	xpu_dict_free(&d);
}
