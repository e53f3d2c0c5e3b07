/* SPDX-License-Identifier: GPL-2.0-only */
/* Several xputops at once (core/sources/share.c): a client gets the stream the
 * collector's models get; one that stops reading is dropped and never makes
 * the collector wait; nobody but root (or the group) attaches. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dict.h"
#include "event.h"
#include "record.h"
#include "session.h"
#include "share.h"
#include "source.h"
#include "sys.h"

static char dir[64];

/* A socket directory of the test's own (XPUTOP_SOCKET moves everything). */
static void use_tmp_dir(void)
{
	char env[128];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/xputop-share-unit.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		chmod(dir, 0755);
	}
	snprintf(env, sizeof(env), "%s/gpu.sock", dir);
	setenv("XPUTOP_SOCKET", env, 1);
}

__attribute__((destructor)) static void rm_dir(void)
{
	char p[128];
	if (!dir[0])
		return;
	snprintf(p, sizeof(p), "%s/share.sock", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/collector.lock", dir);
	unlink(p);
	rmdir(dir);
}

static void start(struct xpu_session *s)
{
	struct xpu_session_cfg cfg = { .sample_hz = 99, .interval_ns = 1000000000ULL,
				       .window_ns = 10000000000ULL };
	xpu_session_init(s);
	if (xpu_session_start(s, &cfg) < 0)
		abort();
}

static struct xpu_source *serve(struct xpu_session *s)
{
	char err[256] = "";
	struct xpu_rec_meta m = { .sample_hz = 99, .ncpus = 2, .interval_ns = 1000000000ULL };
	use_tmp_dir();
	struct xpu_source *src = xpu_share_server_new(s, -1, &m, err, sizeof(err));
	if (!src)
		fprintf(stderr, "  %s\n", err);
	return src;
}

/* A CPU sample on a stack of its own, with a fresh name of len bytes. */
static void sample(struct xpu_session *s, uint32_t i, size_t len)
{
	char name[4096];
	snprintf(name, sizeof(name), "fn%u_%0*u", i, (int)(len > 16 ? len - 16 : 1), i);
	uint32_t f = xpu_dict_frame(&s->dict, XPU_FRAME_USER, xpu_dict_cstr(&s->dict, name), 0);
	struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .source = XPU_SRC_CPU, .pid = 10 + i % 3,
				.tid = 10 + i % 3, .time = xpu_now_mono() };
	ev.cpu.stack = xpu_dict_stack(&s->dict, &f, 1);
	ev.cpu.comm = ev.cpu.tcomm = xpu_dict_cstr(&s->dict, "prog");
	xpu_session_emit(s, &ev);
}

TEST(a_client_gets_the_events_the_collectors_models_get)
{
	struct xpu_session col, cli;
	start(&col);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	REQUIRE(xpu_session_add_source(&col, sv) == 0);
	int fd;
	start(&cli);
	REQUIRE(xpu_share_connect(&fd) == 0);
	struct xpu_share_client *c = xpu_share_client_new(fd, &cli.dict);
	REQUIRE(c);
	sv->drain(sv, &col);	/* accepts */
	REQUIRE(xpu_share_client_wait_meta(c, 2000) == 0);
	CHECK_INT(xpu_share_client_pid(c), ==, getpid());
	CHECK_INT(xpu_share_client_meta(c)->sample_hz, ==, 99);
	for (uint32_t i = 0; i < 500; i++)
		sample(&col, i, 40);
	xpu_session_tick(&col, xpu_now_mono(), 1);
	int r = 0;
	for (int i = 0; i < 200 && r == 0; i++) {
		r = xpu_share_client_next(c, &cli);
		if (r == 0)
			usleep(5000);
	}
	CHECK_INT(r, ==, 1);
	CHECK_INT(cli.events_total, ==, col.events_total);
	CHECK_INT(cli.ticks, ==, 1);
	CHECK_INT(cli.cpu.samples_total, ==, col.cpu.samples_total);
	CHECK_INT(cli.cpu.ntasks, ==, col.cpu.ntasks);
	xpu_share_client_free(c);
	xpu_session_free(&col);
	xpu_session_free(&cli);
}

TEST(a_client_that_stops_reading_is_dropped_and_never_makes_the_collector_wait)
{
	struct xpu_session col;
	start(&col);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	REQUIRE(xpu_session_add_source(&col, sv) == 0);
	int fd;
	alarm(60);
	REQUIRE(xpu_share_connect(&fd) == 0);	/* and never reads */
	sv->drain(sv, &col);
	struct xpu_share_counts k;
	xpu_share_server_counts(sv, &k);
	CHECK_INT(k.attached, ==, 1);
	/* 1 KiB names: 48 MiB, past the backlog, in ticks of 1 MiB.  A write
	 * that waited for the client would wait for ever: the alarm ends the
	 * test then (a bound on each write's time would fail on a loaded
	 * machine, not on a blocking write). */
	for (uint32_t i = 0; i < 48 * 1024; i++) {
		sample(&col, i, 1024);
		if (i % 1024 == 1023)
			xpu_session_tick(&col, xpu_now_mono(), 1);
	}
	xpu_share_server_counts(sv, &k);
	CHECK_INT(k.attached, ==, 0);
	CHECK_INT(k.dropped, ==, 1);
	alarm(0);
	close(fd);
	xpu_session_free(&col);
}

/* ---- needs: what a client asks the collector to collect ---- */

static struct xpu_share_need need_of(uint32_t flags, uint32_t hz, uint32_t npids, uint32_t first)
{
	struct xpu_share_need n = { .flags = flags, .hz = hz, .interval_ms = 1000, .npids = npids };
	for (uint32_t i = 0; i < npids; i++)
		n.pids[i] = first + i;
	return n;
}

static int decode(const uint8_t *b, size_t len, struct xpu_share_need *n)
{
	size_t used = 0;
	const char *why = "";
	return xpu_share_need_decode(b, len, n, &used, &why);
}

TEST(a_need_reads_back_as_it_was_sent)
{
	uint8_t b[XPU_NEED_MAX];
	struct xpu_share_need n = need_of(XPU_NEED_GPU_EXACT | XPU_NEED_FOLLOW, 19, 3, 100), m;
	size_t len = xpu_share_need_encode(&n, b, sizeof(b));
	CHECK_INT(len, ==, XPU_NEED_HEAD + 12);
	for (size_t k = 0; k < len; k++)	/* a part of one waits for the rest */
		CHECK_INT(decode(b, k, &m), ==, 0);
	REQUIRE(decode(b, len, &m) == 1);
	CHECK_INT(m.flags, ==, n.flags);
	CHECK_INT(m.hz, ==, 19);
	CHECK_INT(m.interval_ms, ==, 1000);
	CHECK_INT(m.npids, ==, 3);
	CHECK_INT(m.pids[2], ==, 102);
}

/* Each field out of its bounds, in a message otherwise well formed. */
TEST(a_malformed_or_oversized_need_is_refused)
{
	uint8_t good[XPU_NEED_MAX], b[XPU_NEED_MAX + 64];
	struct xpu_share_need n = need_of(0, 99, 2, 7), m;
	size_t len = xpu_share_need_encode(&n, good, sizeof(good));
	struct { size_t off; uint32_t v; } bad[] = {
		{ 0, 0x4e555059 },	/* magic */
		{ 4, 1 },		/* version: the one before */
		{ 8, (uint32_t)len + 4 },	/* length against npids */
		{ 8, 0xffffffffu },
		{ 12, 1u << 7 },	/* an unknown flag */
		{ 12, XPU_NEED_ALL_PIDS },	/* every process, and pids */
		{ 16, 0 },		/* rate */
		{ 16, XPU_NEED_HZ_MAX + 1 },
		{ 20, XPU_NEED_MS_MIN - 1 },	/* refresh interval */
		{ 20, XPU_NEED_MS_MAX + 1 },
		{ 24, XPU_NEED_PIDS + 1 },	/* more pids than -p takes */
		{ 24, 0x40000000u },	/* a length that would wrap */
		{ XPU_NEED_HEAD, 0 },	/* pid 0 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(b, good, len);
		memcpy(b + bad[i].off, &bad[i].v, 4);
		CHECK_INT(decode(b, len, &m), ==, -1);
	}
	memset(b, 'A', sizeof(b));	/* garbage, and more of it than any need */
	CHECK_INT(decode(b, sizeof(b), &m), ==, -1);
	struct xpu_share_need none = need_of(0, 99, 0, 1);	/* neither pids nor every process */
	CHECK_INT(xpu_share_need_encode(&none, b, sizeof(b)), ==, 0);
	struct xpu_share_need fast = need_of(XPU_NEED_ALL_PIDS, 99, 0, 0);
	fast.interval_ms = XPU_NEED_MS_MIN - 1;	/* faster than -d allows */
	CHECK_INT(xpu_share_need_encode(&fast, b, sizeof(b)), ==, 0);
}

TEST(the_needs_add_up_to_the_widest_set_the_highest_rate_and_exact_if_any_asks)
{
	static struct xpu_share_needs u;
	struct xpu_share_need a = need_of(0, 19, 2, 10), b = need_of(XPU_NEED_GPU_EXACT, 99, 2, 11);
	memset(&u, 0, sizeof(u));
	xpu_share_needs_add(&u, &a);
	xpu_share_needs_add(&u, &b);
	CHECK_INT(u.hz, ==, 99);
	CHECK_INT(u.interval_ms, ==, 1000);
	CHECK_INT(u.npids, ==, 3);	/* 10, 11, 12 */
	CHECK(u.flags & XPU_NEED_GPU_EXACT);
	struct xpu_share_need all = need_of(XPU_NEED_ALL_PIDS, 1, 0, 0);
	xpu_share_needs_add(&u, &all);
	CHECK(u.flags & XPU_NEED_ALL_PIDS);
	CHECK_INT(u.npids, ==, 0);
	CHECK_INT(u.hz, ==, 99);
	struct xpu_share_need quick = need_of(XPU_NEED_ALL_PIDS, 1, 0, 0), slow = quick;
	quick.interval_ms = 250;
	slow.interval_ms = 5000;
	xpu_share_needs_add(&u, &quick);
	xpu_share_needs_add(&u, &slow);
	CHECK_INT(u.interval_ms, ==, 250);	/* the shortest -d asked */
}

static void settle(struct xpu_source *sv, struct xpu_session *col)
{
	for (int i = 0; i < 20; i++) {
		sv->drain(sv, col);
		usleep(2000);
	}
}

TEST(the_collector_learns_what_each_client_needs_and_forgets_it_when_it_leaves)
{
	struct xpu_session col, cli;
	static struct xpu_share_needs u;
	start(&col);
	start(&cli);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	int fd;
	REQUIRE(xpu_share_connect(&fd) == 0);
	struct xpu_share_client *c = xpu_share_client_new(fd, &cli.dict);
	REQUIRE(c);
	settle(sv, &col);
	memset(&u, 0, sizeof(u));
	uint64_t gen0 = xpu_share_server_needs(sv, &u);
	CHECK_INT(u.hz, ==, 0);	/* one that said nothing needs nothing */
	struct xpu_share_need n = need_of(XPU_NEED_ALL_PIDS | XPU_NEED_GPU_EXACT, 499, 0, 0);
	REQUIRE(xpu_share_client_need(c, &n) == 0);
	settle(sv, &col);
	memset(&u, 0, sizeof(u));
	uint64_t gen1 = xpu_share_server_needs(sv, &u);
	CHECK(gen1 != gen0);
	CHECK_INT(u.hz, ==, 499);
	CHECK(u.flags & XPU_NEED_ALL_PIDS);
	CHECK(u.flags & XPU_NEED_GPU_EXACT);
	xpu_share_client_free(c);
	settle(sv, &col);
	memset(&u, 0, sizeof(u));
	CHECK(xpu_share_server_needs(sv, &u) != gen1);
	CHECK_INT(u.hz, ==, 0);
	xpu_source_destroy(sv);
	xpu_session_free(&col);
	xpu_session_free(&cli);
}

/* Malformed needs, one too long to be one, and a flood of garbage: each
 * sender is dropped and counted, the collector goes on serving. */
TEST(a_client_that_sends_a_malformed_need_is_dropped_and_counted)
{
	struct xpu_session col;
	start(&col);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	uint8_t b[XPU_NEED_MAX * 4];
	struct xpu_share_need n = need_of(0, 99, 1, 42);
	size_t len = xpu_share_need_encode(&n, b, sizeof(b));
	uint32_t huge = 1u << 20;
	int fds[3];
	for (int i = 0; i < 3; i++)
		REQUIRE(xpu_share_connect(&fds[i]) == 0);
	settle(sv, &col);
	memcpy(b + 24, &huge, 4);	/* claims a million pids */
	CHECK_INT(send(fds[0], b, len, MSG_NOSIGNAL), ==, (ssize_t)len);
	memset(b, 0xff, sizeof(b));
	CHECK_INT(send(fds[1], b, sizeof(b), MSG_NOSIGNAL), ==, (ssize_t)sizeof(b));
	n = need_of(0, 99, 1, 42);
	len = xpu_share_need_encode(&n, b, sizeof(b));
	CHECK_INT(send(fds[2], b, len, MSG_NOSIGNAL), ==, (ssize_t)len);	/* a good one stays */
	settle(sv, &col);
	struct xpu_share_counts k;
	xpu_share_server_counts(sv, &k);
	CHECK_INT(k.refused, ==, 2);
	CHECK_INT(k.attached, ==, 1);
	static struct xpu_share_needs u;
	memset(&u, 0, sizeof(u));
	xpu_share_server_needs(sv, &u);
	CHECK_INT(u.npids, ==, 1);
	CHECK_INT(u.pids[0], ==, 42);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	xpu_source_destroy(sv);
	xpu_session_free(&col);
}

/* The dictionary a client is sent on attaching is part of what it may have
 * waiting: a client of a session with a dictionary past the cap that does
 * not read is dropped, not given it whole. */
TEST(the_dictionary_sent_on_attaching_counts_against_the_clients_cap)
{
	struct xpu_session col;
	start(&col);
	col.sweep_min = UINT32_MAX;
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	for (uint32_t i = 0; i < 40 * 1024; i++)	/* 40 MiB of names, before anyone attaches */
		sample(&col, i, 1024);
	xpu_session_tick(&col, xpu_now_mono(), 1);
	int fd;
	alarm(60);
	REQUIRE(xpu_share_connect(&fd) == 0);	/* and never reads */
	sv->drain(sv, &col);
	sample(&col, 1u << 30, 16);	/* the first event carries the dictionary */
	xpu_session_tick(&col, xpu_now_mono(), 1);
	struct xpu_share_counts k;
	xpu_share_server_counts(sv, &k);
	CHECK_INT(k.attached, ==, 0);
	CHECK_INT(k.dropped, ==, 1);
	alarm(0);
	close(fd);
	xpu_source_destroy(sv);
	xpu_session_free(&col);
}

/* The collector's samples come at its rate, this xputop shows its own: each
 * CPU keeps its share, evenly. */
TEST(samples_beyond_this_xputops_rate_are_thinned_on_each_cpu)
{
	struct xpu_session s;
	start(&s);	/* 99 Hz */
	s.stream_hz = 297;
	for (uint32_t i = 0; i < 2970; i++) {
		struct xpu_event ev = { .type = XPU_EV_CPU_SAMPLE, .source = XPU_SRC_CPU, .pid = 10, .tid = 10,
					.time = xpu_now_mono() };
		ev.cpu.cpu = i % 2;
		ev.cpu.comm = ev.cpu.tcomm = xpu_dict_cstr(&s.dict, "prog");
		xpu_session_emit(&s, &ev);
	}
	xpu_session_tick(&s, xpu_now_mono(), 1);
	CHECK_INT(s.cpu.samples_total, ==, 990);
	CHECK_INT(s.thinned, ==, 1980);
	xpu_session_free(&s);
}

TEST(a_user_who_is_not_root_cannot_connect)
{
	struct xpu_session col;
	if (geteuid() != 0)
		return;
	start(&col);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	pid_t pid = fork();
	if (pid == 0) {
		int fd;
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(xpu_share_connect(&fd) == -EACCES ? 0 : 1);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	xpu_source_destroy(sv);
	col.nsources = 0;
	xpu_session_free(&col);
}

TEST(the_collector_lock_is_held_by_one_at_a_time)
{
	if (geteuid() != 0)
		return;	/* the directory must be the caller's; the test's is root's */
	use_tmp_dir();
	int a = xpu_share_lock();
	CHECK_INT(a, >=, 0);
	int b = xpu_share_lock();
	CHECK_INT(b, ==, -1);
	CHECK_INT(errno, ==, EWOULDBLOCK);
	close(a);
	b = xpu_share_lock();
	CHECK_INT(b, >=, 0);
	close(b);
}

/* Past XPU_SHARE_MAX_CLIENTS, a connection is closed before a byte is sent
 * and counted, by its uid. */
TEST(connections_past_the_last_place_are_turned_away_and_counted_by_uid)
{
	struct xpu_session col;
	start(&col);
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	int fds[XPU_SHARE_MAX_CLIENTS + 4];
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS + 4; i++) {
		REQUIRE(xpu_share_connect(&fds[i]) == 0);
		settle(sv, &col);
	}
	struct xpu_share_counts k;
	xpu_share_server_counts(sv, &k);
	CHECK_INT(k.attached, ==, XPU_SHARE_MAX_CLIENTS);
	CHECK_INT(k.turned_away, ==, 4);
	CHECK_INT(k.full, ==, 4);
	CHECK_INT(k.not_allowed, ==, 0);
	CHECK_INT(k.nuids, ==, 1);
	CHECK_INT(k.uids[0].uid, ==, geteuid());
	CHECK_INT(k.uids[0].n, ==, 4);
	char c;
	CHECK_INT(recv(fds[XPU_SHARE_MAX_CLIENTS], &c, 1, 0), ==, 0);	/* closed, nothing sent */
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS + 4; i++)
		close(fds[i]);
	xpu_source_destroy(sv);
	xpu_session_free(&col);
}

/* ---- -d: each xputop's view ticks at its own interval ---- */

static void stream_tick(struct xpu_session *s, uint64_t *t, uint64_t step)
{
	*t += step;
	xpu_session_tick(s, *t, *t);
}

/* A view with a longer -d than the stream's merges the stream's ticks: it
 * ticks once in four, with the time and every sample of the four. */
TEST(a_longer_interval_than_the_streams_merges_its_ticks_and_loses_nothing)
{
	struct xpu_session s;
	start(&s);	/* -d 1 */
	s.pace = 1;
	uint64_t t = 1000000000000ULL;
	xpu_session_begin(&s, t);
	for (int i = 0; i < 8; i++) {
		for (uint32_t k = 0; k < 10; k++)
			sample(&s, k, 20);
		stream_tick(&s, &t, 250000000ULL);
		CHECK_INT(s.ticks, ==, (uint64_t)(i + 1) / 4);
	}
	CHECK_INT(s.last_interval, ==, 1000000000ULL);
	CHECK_INT(s.cpu.samples_total, ==, 80);
	CHECK_INT(s.stream_ticks, ==, 8);
	CHECK_INT(s.merged_ticks, ==, 6);
	xpu_session_free(&s);
}

/* Where -d is no multiple of the stream's interval, the view's intervals
 * alternate around it: 1.5 s of a 1 s stream are 1 s and 2 s in turn. */
TEST(an_interval_that_is_no_multiple_of_the_streams_keeps_its_average)
{
	struct xpu_session s;
	start(&s);
	s.cfg.interval_ns = 1500000000ULL;
	s.pace = 1;
	uint64_t t = 1000000000000ULL, sum = 0, seen = 0;
	xpu_session_begin(&s, t);
	for (int i = 0; i < 12; i++) {
		stream_tick(&s, &t, 1000000000ULL);
		if (s.ticks != seen) {
			seen = s.ticks;
			sum += s.last_interval;
			CHECK(s.last_interval == 1000000000ULL || s.last_interval == 2000000000ULL);
		}
	}
	CHECK_INT(seen, ==, 8);
	CHECK_INT(sum, ==, 12000000000ULL);
	xpu_session_free(&s);
}

/* The stream's ticks go to the clients every time, whatever the
 * collector's own -d: it paces only its own view. */
TEST(the_collector_sends_every_stream_tick_while_its_view_keeps_its_own_interval)
{
	struct xpu_session col, cli;
	start(&col);	/* -d 1 */
	col.pace = 1;
	start(&cli);
	cli.cfg.interval_ns = 250000000ULL;	/* the client's -d 0.25, the stream's */
	cli.pace = 1;
	struct xpu_source *sv = serve(&col);
	REQUIRE(sv);
	int fd;
	REQUIRE(xpu_share_connect(&fd) == 0);
	struct xpu_share_client *c = xpu_share_client_new(fd, &cli.dict);
	REQUIRE(c);
	sv->drain(sv, &col);
	REQUIRE(xpu_share_client_wait_meta(c, 2000) == 0);
	uint64_t t = xpu_now_mono();
	xpu_session_begin(&col, t);
	xpu_session_begin(&cli, t);
	for (int i = 0; i < 8; i++) {
		sample(&col, (uint32_t)i, 20);
		stream_tick(&col, &t, 250000000ULL);
	}
	int got = 0;
	for (int i = 0; i < 400 && got < 8; i++) {
		int r = xpu_share_client_next(c, &cli);
		got += r > 0;
		if (r == 0)
			usleep(5000);
	}
	CHECK_INT(got, ==, 8);
	CHECK_INT(cli.ticks, ==, 8);
	CHECK_INT(col.ticks, ==, 2);
	CHECK_INT(cli.cpu.samples_total, ==, col.cpu.samples_total);
	xpu_share_client_free(c);
	xpu_source_destroy(sv);
	xpu_session_free(&col);
	xpu_session_free(&cli);
}
