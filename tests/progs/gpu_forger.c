/* SPDX-License-Identifier: GPL-2.0-only */
/* A hostile or broken client of xputop's GPU socket, speaking inject/wire.h.
 * Usage: gpu_forger SOCKET MODE [N [SECONDS]]
 *   other-pid  a well-formed HELLO claiming to be pid 1, then kernels
 *   garbage    a valid HELLO, then random bytes, a truncated packet and a
 *              record that overruns its packet, then valid kernels
 *   flood      a HELLO naming itself "systemd", then N (10000) distinct
 *              kernel names of 4 KB, each with a kernel, as fast as it can
 *   devices    a HELLO, one name, then a kernel on each device id 0 .. N-1
 *   name       a HELLO naming itself "systemd", one kernel "forged_kernel"
 *   whole      a valid HELLO, then spans it claims to have traced throughout:
 *              one of 50 minutes from now (longer than it lived), one that
 *              ends before it starts and one of 2 hours (both refused),
 *              then launches flagged traced throughout, then kernels
 *   orphans    a valid HELLO, then for N seconds a library's records: a span
 *              on throughout the first second (10 launches, their kernels),
 *              then a 10 ms slice a second (2 launches, their kernels, and
 *              50 kernels of no launch recorded); prints nothing
 *   stuck      as orphans without the kernels of no launch, but from its
 *              third second on a STATUS saying CUPTI's ids stuck
 *              (XPU_WIRE_STATE_IDS_STUCK), and no slice after it
 *   idle       N connections that never say HELLO, dialled again when closed,
 *              for SECONDS (default 5)
 *   bad-hellos N connections in turn, each claiming to be pid 1 (the next
 *              once xputop has closed the one before)
 *   tids       (gpu_forger SOCKET tids LIB N SECONDS [TID...]) the real
 *              injection library LIB mapped (dlopen: dormant, CUDA never
 *              starts it), a HELLO, then a launch named by each TID (other
 *              processes' threads) and by each of N threads of its own,
 *              held for SECONDS: what the own-time sampler is asked to
 *              sample (core/sources/gpu_own.c)
 * Prints "refused" if xputop closed the connection, "open" otherwise; idle
 * prints how many connections it made and how many xputop closed
 * ("accepted A closed C"). */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../inject/wire.h"

static size_t packet(char *buf, uint16_t type, const void *body, uint16_t len)
{
	struct xpu_wire_msg m = { XPU_WIRE_MAGIC, XPU_WIRE_VERSION, 1, 0, 0 };
	struct xpu_wire_rec h = { type, len };
	m.len = (uint32_t)(sizeof(m) + sizeof(h) + len);
	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), &h, sizeof(h));
	memcpy(buf + sizeof(m) + sizeof(h), body, len);
	return m.len;
}

static void send_kernels(int fd)
{
	char buf[256];
	struct xpu_wire_kernel k = { .start = 1000, .end = 2000, .corr = 1 };
	for (int i = 0; i < 10; i++)
		send(fd, buf, packet(buf, XPU_WIRE_KERNEL, &k, sizeof(k)), MSG_NOSIGNAL);
}

static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static int dial(void)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -1;
	return fd;
}

/* Appends one record to the packet in buf (a header already there). */
static size_t add_rec(char *buf, size_t at, uint16_t type, const void *body, uint16_t len)
{
	struct xpu_wire_rec h = { type, len };
	memcpy(buf + at, &h, sizeof(h));
	memcpy(buf + at + sizeof(h), body, len);
	return at + sizeof(h) + len;
}

static void send_packet(int fd, char *buf, size_t len, uint16_t nrecs)
{
	struct xpu_wire_msg m = { XPU_WIRE_MAGIC, XPU_WIRE_VERSION, nrecs, (uint32_t)len, 0 };
	memcpy(buf, &m, sizeof(m));
	/* Blocking: a full socket waits for xputop, as a library flat out would. */
	while (send(fd, buf, len, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static void send_hello(int fd, const char *comm)
{
	char buf[128];
	struct xpu_wire_hello h = { .pid = (uint32_t)getpid() };
	snprintf(h.comm, sizeof(h.comm), "%s", comm);
	send(fd, buf, packet(buf, XPU_WIRE_HELLO, &h, sizeof(h)), MSG_NOSIGNAL);
}

/* n distinct names of 4 KB, each with a kernel on device 0, in packets as
 * full as the wire allows. */
static void flood(int fd, long n)
{
	static char buf[XPU_WIRE_MAX_MSG];
	struct { struct xpu_wire_name n; char s[XPU_WIRE_MAX_NAME]; } name;
	size_t at = sizeof(struct xpu_wire_msg);
	uint16_t nrecs = 0;
	uint64_t t = 1000000;
	for (long i = 0; i < n; i++) {
		memset(name.s, 'a' + (int)(i % 26), sizeof(name.s));
		int k = snprintf(name.s, sizeof(name.s), "flood_kernel_%ld_", i);
		name.s[k] = 'x';
		name.n = (struct xpu_wire_name){ .id = (uint32_t)i + 1 };
		struct xpu_wire_kernel kr = { .start = t, .end = t + 1000, .corr = (uint32_t)i + 1,
					      .name = (uint32_t)i + 1 };
		t += 2000;
		size_t need = 2 * sizeof(struct xpu_wire_rec) + sizeof(name) + sizeof(kr);
		if (at + need > sizeof(buf)) {
			send_packet(fd, buf, at, nrecs);
			at = sizeof(struct xpu_wire_msg);
			nrecs = 0;
		}
		at = add_rec(buf, at, XPU_WIRE_NAME, &name, sizeof(name));
		at = add_rec(buf, at, XPU_WIRE_KERNEL, &kr, sizeof(kr));
		nrecs += 2;
	}
	if (nrecs)
		send_packet(fd, buf, at, nrecs);
}

/* One name, then a kernel on each device id below n. */
static void devices(int fd, long n, const char *kname)
{
	static char buf[XPU_WIRE_MAX_MSG];
	struct { struct xpu_wire_name n; char s[32]; } name = { { 1, 0 }, "" };
	size_t len = strlen(kname);
	memcpy(name.s, kname, len);
	size_t at = add_rec(buf, sizeof(struct xpu_wire_msg), XPU_WIRE_NAME, &name, (uint16_t)(sizeof(name.n) + len));
	send_packet(fd, buf, at, 1);
	for (long d = 0; d < n; d++) {
		struct xpu_wire_kernel k = { .start = 1000 + (uint64_t)d * 2000, .end = 2000 + (uint64_t)d * 2000,
					     .corr = (uint32_t)d + 1, .name = 1, .device = (uint32_t)d };
		at = add_rec(buf, sizeof(struct xpu_wire_msg), XPU_WIRE_KERNEL, &k, sizeof(k));
		send_packet(fd, buf, at, 1);
	}
}

static int closed(int fd, int ms);

static uint32_t tid_of[4096];
static long ntids;

static void *sleeper(void *arg)
{
	__atomic_store_n(&tid_of[(long)arg], (uint32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	__atomic_add_fetch(&ntids, 1, __ATOMIC_ACQ_REL);
	for (;;)
		pause();
	return arg;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void launch_flagged(int fd, uint32_t tid, uint32_t corr, uint32_t flags)
{
	char buf[256];
	struct xpu_wire_launch l = { .time = mono_ns(), .corr = corr, .tid = tid, .cbid = 211, .domain = 1,
				     .flags = flags };
	send(fd, buf, packet(buf, XPU_WIRE_LAUNCH, &l, sizeof(l)), MSG_NOSIGNAL);
}

static void launch(int fd, uint32_t tid, uint32_t corr)
{
	launch_flagged(fd, tid, corr, 0);
}

/* Spans on throughout past what it lived, or refused, and launches in them. */
static void whole(int fd)
{
	char buf[256];
	uint64_t now = mono_ns(), min = 60ULL * 1000000000ULL;
	struct xpu_wire_slice sl[] = { { now, now + 50 * min }, { now, now - 1 }, { now, now + 120 * min } };
	for (size_t i = 0; i < sizeof(sl) / sizeof(sl[0]); i++)
		send(fd, buf, packet(buf, XPU_WIRE_WHOLE, &sl[i], sizeof(sl[i])), MSG_NOSIGNAL);
	for (uint32_t corr = 1; corr <= 10; corr++)
		launch_flagged(fd, (uint32_t)getpid(), corr, XPU_WIRE_LAUNCH_WHOLE);
}

static void kernel_of(int fd, uint32_t corr, uint64_t at)
{
	char buf[256];
	struct xpu_wire_kernel k = { .start = at, .end = at + 50000, .corr = corr };
	send(fd, buf, packet(buf, XPU_WIRE_KERNEL, &k, sizeof(k)), MSG_NOSIGNAL);
}

/* seconds of a library that traced throughout for its first second (ten
 * launches and their kernels), then a slice of 10 ms a second with two
 * launches and their kernels, and 50 kernels of no launch recorded; stuck:
 * none of those 50, and from the third second only a STATUS a second
 * saying CUPTI's ids stuck (a library that may not detach CUPTI). */
static void orphans(int fd, int seconds, int stuck)
{
	char buf[256];
	uint32_t corr = 0, none = 1000000;
	for (int sec = 0; sec < seconds; sec++) {
		uint64_t t = mono_ns();
		int whole = sec == 0;
		if (stuck && sec >= 2) {	/* what the library says, no more slices */
			struct xpu_wire_status st = { .state = XPU_WIRE_STATE_IDS_STUCK, .launches = corr,
						      .kernels = corr, .detach = XPU_WIRE_DETACH_OFF };
			send(fd, buf, packet(buf, XPU_WIRE_STATUS, &st, sizeof(st)), MSG_NOSIGNAL);
			usleep(1000000);
			continue;
		}
		for (int i = 0; i < (whole ? 10 : 2); i++) {
			launch_flagged(fd, (uint32_t)getpid(), ++corr, whole ? XPU_WIRE_LAUNCH_WHOLE : 0);
			kernel_of(fd, corr, t + (uint64_t)i * 100000);
		}
		for (int i = 0; !whole && !stuck && i < 50; i++)
			kernel_of(fd, ++none, t + (uint64_t)i * 100000);
		struct xpu_wire_slice sl = { t, t + (whole ? 900 : 10) * 1000000ULL };
		send(fd, buf, packet(buf, whole ? XPU_WIRE_WHOLE : XPU_WIRE_SLICE, &sl, sizeof(sl)), MSG_NOSIGNAL);
		usleep(1000000);
	}
}

/* The library mapped, launches named by other processes' threads and by n
 * threads of its own, held for hold seconds. */
static int tids(int fd, const char *lib, long n, int hold, char **other, int nother)
{
	if (!dlopen(lib, RTLD_NOW)) {
		fprintf(stderr, "gpu_forger: %s\n", dlerror());
		return 1;
	}
	send_hello(fd, "gpu_forger");
	uint32_t corr = 1;
	for (int i = 0; i < nother; i++)
		launch(fd, (uint32_t)atol(other[i]), corr++);
	long made = 0;
	for (pthread_t t; made < n && made < (long)(sizeof(tid_of) / sizeof(tid_of[0])); made++)
		if (pthread_create(&t, NULL, sleeper, (void *)made) != 0)
			break;
	while (__atomic_load_n(&ntids, __ATOMIC_ACQUIRE) < made)
		usleep(1000);
	for (long i = 0; i < made; i++)
		launch(fd, tid_of[i], corr++);
	printf("%ld threads\n", made);
	fflush(stdout);
	closed(fd, hold * 1000);
	return 0;
}

/* Whether xputop has closed fd (within ms). */
static int closed(int fd, int ms)
{
	char b[256];
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, ms) > 0) {
		ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
	}
	return 0;
}

/* n connections that never say HELLO, dialled again as soon as xputop
 * closes one, for the given seconds. */
static int idle(long n, int seconds)
{
	int *fds = calloc((size_t)n, sizeof(int));
	long accepted = 0, gone = 0;
	for (long i = 0; fds && i < n; i++)
		accepted += (fds[i] = dial()) >= 0;
	for (int t = 0; fds && t < seconds * 10; t++) {
		usleep(100000);
		for (long i = 0; i < n; i++) {
			if (fds[i] >= 0 && !closed(fds[i], 0))
				continue;
			if (fds[i] >= 0) {
				close(fds[i]);
				gone++;
			}
			accepted += (fds[i] = dial()) >= 0;
		}
	}
	printf("accepted %ld closed %ld\n", accepted, gone);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[1024];
	if (argc < 3)
		return 2;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", argv[1]);
	long n = argc > 3 ? atol(argv[3]) : 10000;
	int hold = argc > 4 ? atoi(argv[4]) : 5;
	if (strcmp(argv[2], "idle") == 0)
		return idle(n, hold);
	if (strcmp(argv[2], "bad-hellos") == 0) {
		for (long i = 0; i < n; i++) {
			int c = dial();
			struct xpu_wire_hello h = { .pid = 1 };
			if (c < 0)
				continue;
			send(c, buf, packet(buf, XPU_WIRE_HELLO, &h, sizeof(h)), MSG_NOSIGNAL);
			closed(c, 1000);	/* one at a time: each refused for its HELLO */
			close(c);
		}
		return 0;
	}
	int fd = dial();
	if (fd < 0) {
		perror("connect");
		return 1;
	}
	if (strcmp(argv[2], "tids") == 0)
		return argc < 6 ? 2 : tids(fd, argv[3], atol(argv[4]), atoi(argv[5]), argv + 6, argc - 6);
	if (strcmp(argv[2], "flood") == 0 || strcmp(argv[2], "devices") == 0 || strcmp(argv[2], "name") == 0) {
		send_hello(fd, "systemd");
		if (strcmp(argv[2], "flood") == 0)
			flood(fd, n);
		else
			devices(fd, strcmp(argv[2], "name") == 0 ? 1 : n,
				strcmp(argv[2], "name") == 0 ? "forged_kernel" : "device_kernel");
		int gone = closed(fd, hold * 1000);
		printf("%s\n", gone ? "refused" : "open");
		return 0;
	}
	struct xpu_wire_hello h = { .pid = (uint32_t)getpid() };
	strcpy(h.comm, "forger");
	if (strcmp(argv[2], "other-pid") == 0)
		h.pid = 1;
	send(fd, buf, packet(buf, XPU_WIRE_HELLO, &h, sizeof(h)), MSG_NOSIGNAL);
	if (strcmp(argv[2], "garbage") == 0) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)rand();
		send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		size_t n = packet(buf, XPU_WIRE_HELLO, &h, sizeof(h));
		send(fd, buf, n - 5, MSG_NOSIGNAL);	/* shorter than its header says */
		struct xpu_wire_msg *m = (struct xpu_wire_msg *)buf;
		m->len = (uint32_t)n;
		((struct xpu_wire_rec *)(buf + sizeof(*m)))->len = 900;	/* past the end */
		send(fd, buf, n, MSG_NOSIGNAL);
	}
	if (strcmp(argv[2], "whole") == 0)
		whole(fd);
	if (strcmp(argv[2], "orphans") == 0 || strcmp(argv[2], "stuck") == 0) {
		orphans(fd, (int)n, strcmp(argv[2], "stuck") == 0);
		return 0;
	}
	send_kernels(fd);
	struct pollfd p = { fd, POLLIN, 0 };
	int open = 1;
	for (int i = 0; i < 10 && open; i++) {
		if (poll(&p, 1, 100) > 0 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 0)
			open = 0;
	}
	printf("%s\n", open ? "open" : "refused");
	return 0;
}
