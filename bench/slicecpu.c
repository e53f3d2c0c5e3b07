/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a process's launching threads spend their CPU inside the GPU
 * library's slices and outside them (issue 25's in-slice slowdown), from a
 * recording of a sampled run with CPU samples (xputop -F HZ -w FILE):
 *
 *   slicecpu [-p PID] IN.xpr
 *
 * For the process with the most launches (or PID), its CPU samples on the
 * threads that launched are split by whether a slice of its (GPU_SLICE) was
 * on at the sample's time, and tallied by the module of the first user
 * frame from the leaf (the code the thread was in, or made the syscall
 * from) and by whether the sample was in the kernel.  Prints the launches
 * and samples inside and outside, then per module: samples inside and
 * outside, and samples per 1,000 launches inside and outside (what tracing
 * adds per launch shows as a module whose ratio rises). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "record.h"

#define MAXV 4000000
#define MODS 512

struct span { uint64_t a, b; };
struct smp { uint64_t t; uint32_t pid, tid, mod; int kern; };

static struct span sl[65536];
static uint32_t nsl;
static struct smp *sm;
static uint32_t nsm;
static uint64_t *lt;	/* launch times of the process */
static uint32_t *ltid, nl;
static uint32_t tids[256], ntids;

static int by_a(const void *x, const void *y)
{
	const struct span *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a;
}

static int in_slice(uint64_t t)
{
	uint32_t lo = 0, hi = nsl;
	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		if (sl[m].b <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < nsl && sl[lo].a <= t;
}

int main(int argc, char **argv)
{
	uint32_t want = 0;
	int opt;
	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return 2;
		want = (uint32_t)atoi(optarg);
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: slicecpu [-p PID] IN.xpr\n");
		return 2;
	}
	struct xpu_dict d;
	struct xpu_event ev;
	char err[256];
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open(argv[optind], &d, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "slicecpu: %s\n", err);
		return 1;
	}
	sm = malloc(MAXV * sizeof(*sm));
	lt = malloc(MAXV * sizeof(*lt));
	ltid = malloc(MAXV * sizeof(*ltid));
	uint32_t lpid[64] = { 0 }, lcount[64] = { 0 }, nlp = 0;
	static uint32_t lp[MAXV];
	int rc;
	while ((rc = xpu_rec_next(r, &ev)) > 0) {
		if (ev.type == XPU_EV_GPU_SLICE && ev.pid && nsl < 65536 && (!want || ev.pid == want)) {
			sl[nsl++] = (struct span){ ev.time, ev.slice.end };
		} else if (ev.type == XPU_EV_GPU_LAUNCH && !(ev.launch.flags & XPU_GPU_LAUNCH_ONLY) && nl < MAXV) {
			lt[nl] = ev.time;
			ltid[nl] = ev.tid;
			lp[nl++] = ev.pid;
			uint32_t i = 0;
			while (i < nlp && lpid[i] != ev.pid)
				i++;
			if (i == nlp && nlp < 64)
				lpid[nlp++] = ev.pid;
			if (i < 64)
				lcount[i]++;
		} else if (ev.type == XPU_EV_CPU_SAMPLE && nsm < MAXV) {
			uint32_t n = 0, mod = 0;
			int kern = 0;
			const uint32_t *f = xpu_dict_stack_get(&d, ev.cpu.stack, &n);
			static uint32_t res[4096];
			n = f ? xpu_dict_resolve(&d, f, n, res) : 0;
			for (uint32_t i = n; i-- > 0;) {
				const struct xpu_frame *fr = xpu_dict_frame_get(&d, res[i]);
				if (fr && fr->kind == XPU_FRAME_KERNEL) {
					kern = 1;
					continue;
				}
				if (fr) {
					mod = fr->module ? fr->module : xpu_dict_cstr(&d, fr->kind == XPU_FRAME_JIT ? "[jit]" : "[none]");
					break;
				}
			}
			sm[nsm++] = (struct smp){ ev.time, ev.pid, ev.tid, mod, kern };
		}
	}
	if (rc < 0)
		fprintf(stderr, "slicecpu: %s\n", xpu_rec_error(r));
	if (!want)
		for (uint32_t i = 0; i < nlp; i++)
			if (!want || lcount[i] > lcount[0])
				want = lpid[i];
	uint32_t best = 0;
	for (uint32_t i = 0; i < nlp; i++)
		if (lcount[i] > best && (!want || lpid[i] == want))
			best = lcount[i];
	qsort(sl, nsl, sizeof(*sl), by_a);
	uint64_t lin = 0, lout = 0;
	for (uint32_t i = 0; i < nl; i++) {
		if (lp[i] != want)
			continue;
		uint32_t j = 0;
		while (j < ntids && tids[j] != ltid[i])
			j++;
		if (j == ntids && ntids < 256)
			tids[ntids++] = ltid[i];
		if (in_slice(lt[i]))
			lin++;
		else
			lout++;
	}
	/* samples of the launching threads, between the first and the last launch */
	uint64_t first = UINT64_MAX, last = 0;
	for (uint32_t i = 0; i < nl; i++)
		if (lp[i] == want) {
			first = lt[i] < first ? lt[i] : first;
			last = lt[i] > last ? lt[i] : last;
		}
	static uint64_t cnt[MODS][2][2];	/* [mod][in][kern] */
	static uint32_t modid[MODS];
	uint32_t nmod = 0;
	uint64_t sin = 0, sout = 0;
	for (uint32_t i = 0; i < nsm; i++) {
		struct smp *s = &sm[i];
		if (s->pid != want || s->t < first || s->t > last)
			continue;
		uint32_t j = 0;
		while (j < ntids && tids[j] != s->tid)
			j++;
		if (j == ntids)
			continue;
		uint32_t m = 0;
		while (m < nmod && modid[m] != s->mod)
			m++;
		if (m == nmod) {
			if (nmod == MODS)
				continue;
			modid[nmod++] = s->mod;
		}
		int in = in_slice(s->t);
		cnt[m][in][s->kern]++;
		if (in)
			sin++;
		else
			sout++;
	}
	/* the slices' time within [first, last] */
	double tin = 0, tall = last > first ? (double)(last - first) / 1e9 : 0;
	for (uint32_t i = 0; i < nsl; i++) {
		uint64_t a = sl[i].a > first ? sl[i].a : first, b = sl[i].b < last ? sl[i].b : last;
		if (b > a)
			tin += (double)(b - a) / 1e9;
	}
	double tout = tall - tin;
	printf("pid %u: %u slices, %.3f s of %.3f s; launches recorded in slices %" PRIu64 " (%.1f a ms), outside %"
	       PRIu64 "; launching threads %u; samples in %" PRIu64 ", outside %" PRIu64 "\n", want, nsl, tin, tall,
	       lin, tin > 0 ? lin / tin / 1000 : 0, lout, ntids, sin, sout);
	printf("%-40s %8s %8s %8s %8s %9s %9s %7s %7s\n", "module (k: in the kernel)", "in", "in k", "out", "out k",
	       "in/s", "out/s", "in %", "out %");
	for (uint32_t m = 0; m < nmod; m++) {
		uint64_t a = cnt[m][1][0] + cnt[m][1][1], b = cnt[m][0][0] + cnt[m][0][1];
		if (a + b < 20)
			continue;
		printf("%-40.40s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9.1f %9.1f %7.2f %7.2f\n",
		       xpu_dict_str_get(&d, modid[m]), a, cnt[m][1][1], b, cnt[m][0][1], tin > 0 ? a / tin : 0,
		       tout > 0 ? b / tout : 0, sin ? 100.0 * a / sin : 0, sout ? 100.0 * b / sout : 0);
	}
	printf("%-40s %8" PRIu64 " %8s %8" PRIu64 " %8s %9.1f %9.1f\n", "all", sin, "", sout, "",
	       tin > 0 ? sin / tin : 0, tout > 0 ? sout / tout : 0);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	return 0;
}
