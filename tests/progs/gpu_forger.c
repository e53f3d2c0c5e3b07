/* A hostile or broken client of xputop's GPU socket.
 * Usage: gpu_forger SOCKET MODE
 *   other-pid  a well-formed HELLO claiming to be pid 1, then kernels
 *   garbage    a valid HELLO, then random bytes, a truncated packet and a
 *              record that overruns its packet, then valid kernels
 * Prints "refused" if xputop closed the connection, "open" otherwise. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
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

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[1024];
	if (argc < 3)
		return 2;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[1]);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		return 1;
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
