/* SPDX-License-Identifier: GPL-2.0-only */
/* The own-time sampler (core/sources/gpu_own.c) driven directly, for
 * tests/bpf/own.sh: the GPU probes' BPF object is loaded as xputop loads
 * it, threads are watched as launches of theirs would have them watched,
 * and the counts are printed; or the GPU_OWN events of a recording are.
 *
 *   own_counts [-z HZ] SECONDS PID TID...   samples those threads of PID for
 *       SECONDS, then prints {"pid", "own": [OUT, IN], "cuda": [OUT, IN],
 *       "hz", "threads", "unread", "open_failed", "not_own", "no_flag",
 *       "tick_ms_max", "cpu_ms": the threads' CPU time while sampled}
 *   own_counts -r FILE                       prints each GPU_OWN event of the
 *       recording: {"pid", "time", "own", "cuda", "hz", "threads"} */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "gpu_own.h"
#include "gpu_probes.h"
#include "record.h"
#include "service.h"
#include "sys.h"

static int dump(const char *path)
{
	struct xpu_dict d;
	struct xpu_event ev;
	char err[256];
	int rc;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(path, &d, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "own_counts: %s: %s\n", path, err);
		xpu_dict_free(&d);
		return 1;
	}
	while ((rc = xpu_rec_next(r, &ev)) > 0) {
		if (ev.type != XPU_EV_GPU_OWN)
			continue;
		printf("{\"pid\": %u, \"time\": %" PRIu64 ", \"own\": [%" PRIu64 ", %" PRIu64 "], \"cuda\": [%" PRIu64
		       ", %" PRIu64 "], \"hz\": %u, \"threads\": %u}\n", ev.pid, ev.time, ev.gown.own[0],
		       ev.gown.own[1], ev.gown.cuda[0], ev.gown.cuda[1], ev.gown.hz, ev.gown.threads);
	}
	if (rc < 0)
		fprintf(stderr, "own_counts: %s: %s\n", path, xpu_rec_error(r));
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	return rc < 0;
}

/* The CPU time the threads have had (/proc/PID/task/TID/schedstat, its
 * first field), for the samples to be held to: a thread kept off the CPU by
 * a loaded machine is sampled less, as it should be. */
static uint64_t cpu_ns(uint32_t pid, int n, char **tids)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		char path[64];
		unsigned long long v = 0;
		snprintf(path, sizeof(path), "/proc/%u/task/%s/schedstat", pid, tids[i]);
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%llu", &v) == 1)
			sum += v;
		if (f)
			fclose(f);
	}
	return sum;
}

int main(int argc, char **argv)
{
	uint32_t hz = 1000;
	int opt;
	while ((opt = getopt(argc, argv, "z:r:")) != -1) {
		if (opt == 'r')
			return dump(optarg);
		if (opt == 'z')
			hz = (uint32_t)atoi(optarg);
		else
			return 2;
	}
	if (argc - optind < 3) {
		fprintf(stderr, "usage: own_counts [-z HZ] SECONDS PID TID... | own_counts -r FILE\n");
		return 2;
	}
	double secs = atof(argv[optind]);
	uint32_t pid = (uint32_t)atoi(argv[optind + 1]);
	struct xpu_dict d;
	struct bpf_program *prog;
	int config, counts;
	xpu_dict_init(&d);
	struct xpu_gpu_probes *p = xpu_gpu_probes_load(NULL, &d, NULL);
	if (!p || xpu_gpu_probes_own_parts(p, &prog, &config, &counts) < 0) {
		fprintf(stderr, "own_counts: the GPU probes' gpu_own program did not load\n");
		return 1;
	}
	/* The processes' maps are read on a service thread, as in xputop: the
	 * tick's time (tick_ms_max) is the main loop's part. */
	struct xpu_service *svc = xpu_service_new(64);
	if (!svc) {
		fprintf(stderr, "own_counts: no service thread\n");
		return 1;
	}
	struct xpu_gpu_own *o = xpu_gpu_own_new(prog, config, counts, hz, svc);
	for (int i = optind + 2; i < argc; i++)
		xpu_gpu_own_watch(o, pid, (uint32_t)atoi(argv[i]));
	uint64_t end = xpu_now_mono() + (uint64_t)(secs * 1e9);
	uint64_t most = 0, cpu0 = 0, cpu1 = 0;
	int first = 1;
	while (xpu_now_mono() < end) {
		uint64_t t = xpu_now_mono();
		xpu_gpu_own_tick(o, t);
		xpu_service_poll(svc);	/* scans done: their events open here */
		t = xpu_now_mono() - t;
		most = t > most ? t : most;
		struct xpu_gpu_own_stats now;
		xpu_gpu_own_stats(o, &now);
		if (first && now.threads) {	/* the events are open */
			cpu0 = cpu1 = cpu_ns(pid, argc - optind - 2, argv + optind + 2);
			first = 0;
		} else if (!first) {	/* the last reading stands where the threads ended */
			uint64_t c = cpu_ns(pid, argc - optind - 2, argv + optind + 2);
			cpu1 = c > cpu1 ? c : cpu1;
		}
		usleep(first ? 10000 : 100000);
	}
	/* A thread that ended reads 0: a stand-in that left before this loop
	 * ended (a machine loaded by other suites) came out at 2^64 - 602 ms
	 * of CPU in a CI run's plain pass. */
	uint64_t c = cpu_ns(pid, argc - optind - 2, argv + optind + 2);
	cpu1 = c > cpu1 ? c : cpu1;
	uint64_t cpu = cpu1 - cpu0;
	struct xpu_ev_gpu_own g = { 0 };
	struct xpu_gpu_own_stats st;
	int got = xpu_gpu_own_read(o, pid, &g);
	xpu_gpu_own_stats(o, &st);
	printf("{\"pid\": %u, \"read\": %d, \"own\": [%" PRIu64 ", %" PRIu64 "], \"cuda\": [%" PRIu64 ", %" PRIu64
	       "], \"hz\": %u, \"threads\": %u, \"unread\": %" PRIu64 ", \"open_failed\": %" PRIu64
	       ", \"not_own\": %" PRIu64 ", \"no_flag\": %" PRIu64 ", \"tick_ms_max\": %.3f, \"cpu_ms\": %.1f}\n",
	       pid, got, g.own[0], g.own[1], g.cuda[0], g.cuda[1], g.hz, g.threads, st.unread, st.open_failed,
	       st.not_own, st.no_flag, (double)most / 1e6, (double)cpu / 1e6);
	xpu_gpu_own_forget(o, pid);
	xpu_gpu_own_free(o);
	xpu_service_free(svc, 1000);
	xpu_gpu_probes_free(p);
	xpu_dict_free(&d);
	return 0;
}
