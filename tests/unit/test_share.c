/* Several xputops at once (core/sources/share.c): a client gets the stream the
 * collector's models get; one that stops reading is dropped and never makes
 * the collector wait; nobody but root (or the group) attaches. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
	unsigned n;
	uint64_t dropped;
	xpu_share_server_counts(sv, &n, &dropped);
	CHECK_INT(n, ==, 1);
	/* 1 KiB names: 48 MiB, past the backlog, in ticks of 1 MiB.  A write
	 * that waited for the client would wait for ever: the alarm ends the
	 * test then (a bound on each write's time would fail on a loaded
	 * machine, not on a blocking write). */
	for (uint32_t i = 0; i < 48 * 1024; i++) {
		sample(&col, i, 1024);
		if (i % 1024 == 1023)
			xpu_session_tick(&col, xpu_now_mono(), 1);
	}
	xpu_share_server_counts(sv, &n, &dropped);
	CHECK_INT(n, ==, 0);
	CHECK_INT(dropped, ==, 1);
	alarm(0);
	close(fd);
	xpu_session_free(&col);
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
