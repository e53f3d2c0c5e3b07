/* SPDX-License-Identifier: GPL-2.0-only */
/* Writes the wire decoder's seed corpus: real packets, made by the injection
 * library's own code (inject/channel.c, records.c, sites.c) as a CUDA
 * process under xputop would send them, and a START as xputop sends it
 * (core/sources/gpu_wire.c), read back from a SOCK_SEQPACKET socket pair and written
 * one packet per file into DIR.
 *
 *     build/fuzz/wire_seeds tests/fuzz/corpus/wire
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gpu_wire.h"
#include "inject.h"

#define CBID_LAUNCH_KERNEL 211	/* cudaLaunchKernel_v7000 */
#define CBID_CU_LAUNCH 307	/* cuLaunchKernel */

static int sock[2];
static int npackets;
static const char *dir;

/* Sends what the channel holds and writes each packet that arrives. */
static void flush(struct xpu_chan *c, const char *what)
{
	static char buf[XPU_WIRE_MAX_MSG + 1];
	if (xpu_chan_send(c, sock[0]) < 0) {
		perror("wire_seeds: send");
		exit(1);
	}
	ssize_t n;
	while ((n = recv(sock[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%02d-%s", dir, npackets++, what);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f)) {
			perror(path);
			exit(1);
		}
	}
	if (n < 0 && errno != EAGAIN) {
		perror("wire_seeds: recv");
		exit(1);
	}
}

static void kernel(struct xpu_chan *c, uint32_t corr, const char *name)
{
	uint64_t t = xpu_inj_now();
	struct xpu_wire_kernel k = {
		.start = t, .end = t + 25000, .corr = corr, .device = 0, .context = 1, .stream = 7,
	};
	xpu_inj_kernel(c, &k, name);
}

static void copy(struct xpu_chan *c, uint16_t type, uint32_t corr)
{
	uint64_t t = xpu_inj_now();
	struct xpu_wire_memcpy m = {
		.start = t, .end = t + 4000, .bytes = 1 << 20, .corr = corr,
		.kind = type == XPU_WIRE_MEMCPY ? 1 : 0, .stream = 7,
	};
	xpu_chan_put(c, type, &m, sizeof(m), NULL, 0);
}

static void status(struct xpu_chan *c, uint32_t state)
{
	struct xpu_wire_status s = {
		.dropped = xpu_chan_dropped(c), .launches = xpu_inj_launches(),
		.sites = xpu_sites_count(), .state = state,
	};
	xpu_chan_put(c, XPU_WIRE_STATUS, &s, sizeof(s), NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: wire_seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	struct xpu_chan *c = xpu_chan_new(1 << 20);
	if (!c || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sock) < 0) {
		perror("wire_seeds");
		return 1;
	}
	xpu_sites_init();

	struct xpu_wire_hello h = { .pid = (uint32_t)getpid(), .cupti_version = 24,
				    .cuda_version = 12040 };
	strcpy(h.comm, "python3");
	xpu_chan_put(c, XPU_WIRE_HELLO, &h, sizeof(h), NULL, 0);
	flush(c, "hello");

	xpu_inj_new_monitor(XPU_WIRE_START_MEMCPY);
	xpu_inj_launch(c, 1, CBID_LAUNCH_KERNEL, XPU_INJ_RUNTIME, "cudaLaunchKernel", 0);
	xpu_inj_launch(c, 2, CBID_CU_LAUNCH, XPU_INJ_DRIVER, "cuLaunchKernel", 0);
	copy(c, XPU_WIRE_MEMCPY, 3);
	copy(c, XPU_WIRE_MEMSET, 4);
	kernel(c, 1, "_Z6vecAddPKfS0_Pfi");
	kernel(c, 2, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
	kernel(c, 5, "_Z6vecAddPKfS0_Pfi");
	status(c, XPU_WIRE_STATE_OK);
	flush(c, "batch");

	/* A full packet: many kernels, each name sent once. */
	char name[64];
	for (uint32_t i = 0; i < 1200; i++) {
		snprintf(name, sizeof(name), "_Z7kernel%uPfi", i % 40);
		xpu_inj_launch(c, 100 + i, CBID_LAUNCH_KERNEL, XPU_INJ_RUNTIME, "cudaLaunchKernel", 0);
		kernel(c, 100 + i, name);
	}
	flush(c, "full");

	status(c, XPU_WIRE_STATE_OTHER_SUBSCRIBER);
	flush(c, "status");

	/* What xputop sends back (core/sources/gpu_wire.c). */
	struct xpu_wire_start st = { .flush_ms = 20, .flags = XPU_WIRE_START_MEMCPY };
	char pkt[64];
	size_t len = xpu_wire_control(pkt, sizeof(pkt), XPU_WIRE_START, &st, sizeof(st));
	if (!len || send(sock[0], pkt, len, 0) < 0) {
		perror("wire_seeds: send");
		return 1;
	}
	flush(c, "start");
	xpu_chan_free(c);
	return 0;
}
