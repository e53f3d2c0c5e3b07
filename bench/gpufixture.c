/* SPDX-License-Identifier: GPL-2.0-only */
/* Turns an exact GPU recording (xputop --gpu-exact -w FILE) into a workload
 * fixture for tests/unit/test_gpu_estimates.c: every launch with its time,
 * thread and kernels, compact and gzipped (tests/fixtures/README.md).
 *
 *   gpufixture [-s FIRST] [-n COUNT] IN.xpr OUT.gz
 *
 * -s / -n keep COUNT launches from the FIRST (0-based, in time order), with
 * all their kernels: a trim to whole steps, whose bounds the caller knows
 * (tests/fixtures/README.md says each one's).  One process's launches are kept: the one that made the
 * most.  Kernels whose launch is not in the recording are counted and left
 * out.  Prints what it wrote on stderr.
 *
 * The fixture is text, one record a line:
 *   xputop-gpu-fixture 1
 *   names N             then N lines, a kernel name (mangled) each
 *   launches M          then M lines:
 *   DT_US TID K  [NAME START_US DUR_NS GRAPH]xK
 * DT_US: microseconds since the previous launch; TID: the launching thread,
 * numbered from 0 in order of appearance; K kernels, each its name's index,
 * its start after the launch in microseconds (negative when the clocks say
 * so), its duration in nanoseconds, 1 if a CUDA graph ran it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dict.h"
#include "event.h"
#include "record.h"

struct kern { uint64_t start, end; uint32_t corr, name, graph, pid; };
struct launch { uint64_t time; uint32_t corr, tid, pid, first, n; };

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 4096;
	v = realloc(v, *cap * size);
	if (!v) {
		fprintf(stderr, "gpufixture: out of memory\n");
		exit(1);
	}
	return v;
}

static int by_corr(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_time(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

int main(int argc, char **argv)
{
	size_t keep_from = 0, keep_n = SIZE_MAX;
	int opt;
	while ((opt = getopt(argc, argv, "s:n:")) != -1) {
		if (opt == 's')
			keep_from = strtoull(optarg, NULL, 10);
		else if (opt == 'n')
			keep_n = strtoull(optarg, NULL, 10);
		else
			goto usage;
	}
	if (argc - optind != 2)
		goto usage;
	struct xpu_dict d;
	char err[256];
	struct xpu_event ev;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(argv[optind], &d, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gpufixture: %s\n", err);
		return 1;
	}
	struct launch *L = NULL;
	struct kern *K = NULL;
	size_t nl = 0, nk = 0, cl = 0, ck = 0;
	int rc;
	while ((rc = xpu_rec_next(r, &ev)) > 0) {
		if (ev.type == XPU_EV_GPU_LAUNCH && !(ev.launch.flags & XPU_GPU_LAUNCH_ONLY)) {
			L = grow(L, &cl, nl, sizeof(*L));
			L[nl++] = (struct launch){ ev.time, ev.launch.corr, ev.tid, ev.pid, 0, 0 };
		} else if (ev.type == XPU_EV_GPU_KERNEL) {
			K = grow(K, &ck, nk, sizeof(*K));
			K[nk++] = (struct kern){ ev.time, ev.kernel.end, ev.kernel.corr, ev.kernel.name,
						 ev.kernel.graph, ev.pid };
		}
	}
	if (rc < 0) {
		fprintf(stderr, "gpufixture: %s: %s\n", argv[optind], xpu_rec_error(r));
		return 1;
	}
	/* the process that launched the most */
	uint32_t pid = 0;
	size_t best = 0;
	for (size_t i = 0; i < nl; i++) {
		size_t c = 0;
		if (i && L[i].pid == L[i - 1].pid)
			continue;
		for (size_t j = 0; j < nl; j++)
			c += L[j].pid == L[i].pid;
		if (c > best)
			best = c, pid = L[i].pid;
	}
	size_t n = 0;
	for (size_t i = 0; i < nl; i++)
		if (L[i].pid == pid)
			L[n++] = L[i];
	size_t other = nl - n;
	nl = n;
	qsort(L, nl, sizeof(*L), by_time);
	qsort(K, nk, sizeof(*K), by_corr);
	/* each launch's kernels: a run of K with its corr (corr ids are unique
	 * within a process) */
	size_t joined = 0, kept_k = 0, graph_k = 0;
	for (size_t i = 0; i < nl; i++) {
		struct kern key = { 0, 0, L[i].corr, 0, 0, pid };
		size_t lo = 0, hi = nk;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (by_corr(&K[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		L[i].first = (uint32_t)lo;
		while (lo < nk && K[lo].pid == pid && K[lo].corr == L[i].corr)
			lo++;
		L[i].n = (uint32_t)(lo - L[i].first);
		joined += L[i].n;
	}
	size_t hi_i = keep_n < nl - keep_from ? keep_from + keep_n : nl;
	/* names and threads as they appear in what is kept */
	uint32_t *name_of = calloc(xpu_dict_nstr(&d) + 1, sizeof(*name_of)), nnames = 0;
	uint32_t *names = NULL, tids[4096], ntids = 0;
	size_t name_cap = 0, kept_l = 0;
	if (!name_of)
		return 1;
	for (size_t i = 0; i < nl; i++) {
		if (i < keep_from || i >= hi_i)
			continue;
		for (uint32_t j = 0; j < L[i].n; j++) {
			uint32_t s = K[L[i].first + j].name;
			if (s <= xpu_dict_nstr(&d) && !name_of[s]) {
				names = grow(names, &name_cap, nnames, sizeof(*names));
				names[nnames++] = s;
				name_of[s] = nnames;
			}
		}
		kept_l++;
	}
	gzFile out = gzopen(argv[optind + 1], "wb9");
	if (!out) {
		fprintf(stderr, "gpufixture: cannot write %s: %s\n", argv[optind + 1], strerror(errno));
		return 1;
	}
	gzprintf(out, "xputop-gpu-fixture 1\nnames %u\n", nnames);
	for (uint32_t i = 0; i < nnames; i++)
		gzprintf(out, "%s\n", xpu_dict_str_get(&d, names[i]));
	gzprintf(out, "launches %zu\n", kept_l);
	uint64_t prev = 0;
	int first = 1;
	for (size_t i = 0; i < nl; i++) {
		if (i < keep_from || i >= hi_i)
			continue;
		uint32_t t = 0;
		while (t < ntids && tids[t] != L[i].tid)
			t++;
		if (t == ntids && ntids < 4096)
			tids[ntids++] = L[i].tid;
		/* deltas in whole microseconds of the rounded times, so no drift */
		uint64_t us = L[i].time / 1000;
		gzprintf(out, "%" PRIu64 " %u %u", first ? 0 : us - prev, t, L[i].n);
		prev = us;
		first = 0;
		for (uint32_t j = 0; j < L[i].n; j++) {
			const struct kern *k = &K[L[i].first + j];
			int64_t start = ((int64_t)k->start - (int64_t)L[i].time) / 1000;
			gzprintf(out, " %u %" PRId64 " %" PRIu64 " %u", name_of[k->name] - 1, start,
				 k->end > k->start ? k->end - k->start : 0, k->graph != 0);
			kept_k++;
			graph_k += k->graph != 0;
		}
		gzprintf(out, "\n");
	}
	if (gzclose(out) != Z_OK) {
		fprintf(stderr, "gpufixture: cannot write %s\n", argv[optind + 1]);
		return 1;
	}
	fprintf(stderr, "gpufixture: pid %u: launches %zu (kept %zu), kernels %zu (with their launch %zu, kept %zu, "
		"graph %zu), names %u, threads %u; other processes' launches %zu\n", pid, nl, kept_l, nk, joined,
		kept_k, graph_k, nnames, ntids, other);
	xpu_rec_close_reader(r);
	return 0;
usage:
	fprintf(stderr, "usage: gpufixture [-s FIRST] [-n COUNT] IN.xpr OUT.gz\n");
	return 2;
}
