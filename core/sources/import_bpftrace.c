/* SPDX-License-Identifier: GPL-2.0-only */
#include "import_bpftrace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "model_npu.h"
#include "npu.h"
#include "readfile.h"

static const char not_a_log[] = "not an xputop recording, nor a bpftrace log of kprobe:intel_vpu:ivpu_* "
				"calls (\"<ms> PROBE\", \"<ms> <pid> <comm> PROBE\", \"PROBE\", "
				"uniq -c counts or an @calls map)";

/* What a probed function means to the NPU model. */
enum fn {
	F_OTHER, F_IPC_SEND, F_TX_SET, F_RX_ADDR, F_IPC_RECV, F_DB_SET, F_JOB_DONE, F_ABORT_ALL,
	F_CMDQ_ABORT, F_ENGINE_ERROR, F_RECOVERY, F_SUSPEND, F_RESUME, F_BO_CREATE, F_BIND, F_MAP,
	F_UNMAP, F_FAULT, F_MMU_OTHER, F_BO_OTHER, F_IOCTL, F_SUBMIT, F_MAP_PAGE, F_FREE_PAGE, F_NFNS
};

static const struct { const char *name; uint16_t fn, code; } fns[] = {
	{ "ivpu_ipc_send", F_IPC_SEND, 0 },
	{ "ivpu_hw_ip_ipc_tx_set", F_TX_SET, 0 },
	{ "ivpu_hw_ip_ipc_rx_addr_get", F_RX_ADDR, 0 },
	{ "ivpu_ipc_receive", F_IPC_RECV, 0 },
	{ "ivpu_hw_ip_db_set", F_DB_SET, 0 },
	{ "ivpu_job_done_callback", F_JOB_DONE, 0 },
	{ "ivpu_jobs_abort_all", F_ABORT_ALL, 0 },
	{ "ivpu_cmdq_abort_all_jobs", F_CMDQ_ABORT, 0 },
	{ "ivpu_job_handle_engine_error", F_ENGINE_ERROR, 0 },
	{ "ivpu_pm_trigger_recovery", F_RECOVERY, 0 },
	{ "ivpu_pm_runtime_suspend_cb", F_SUSPEND, 0 },
	{ "ivpu_pm_runtime_resume_cb", F_RESUME, 0 },
	{ "ivpu_gem_create_object", F_BO_CREATE, 0 },
	{ "ivpu_bo_bind", F_BIND, 0 },
	{ "ivpu_bo_pin", F_BIND, 0 },
	{ "ivpu_mmu_context_map_sgt", F_MAP, 0 },
	{ "ivpu_mmu_context_unmap_sgt", F_UNMAP, 0 },
	{ "ivpu_mmu_irq_evtq_handler", F_FAULT, 0 },
	{ "ivpu_mmu_context_map_page", F_MAP_PAGE, 0 },
	{ "ivpu_pgtable_free_page", F_FREE_PAGE, 0 },
	{ "ivpu_get_param_ioctl", F_IOCTL, 0x6440 },
	{ "ivpu_set_param_ioctl", F_IOCTL, 0x6441 },
	{ "ivpu_bo_create_ioctl", F_IOCTL, 0x6442 },
	{ "ivpu_bo_info_ioctl", F_IOCTL, 0x6443 },
	{ "ivpu_submit_ioctl", F_SUBMIT, 0x6445 },
	{ "ivpu_bo_wait_ioctl", F_IOCTL, 0x6446 },
	{ "ivpu_ms_start_ioctl", F_IOCTL, 0x6447 },
	{ "ivpu_ms_stop_ioctl", F_IOCTL, 0x6448 },
	{ "ivpu_ms_get_data_ioctl", F_IOCTL, 0x6449 },
	{ "ivpu_ms_get_info_ioctl", F_IOCTL, 0x644a },
	{ "ivpu_cmdq_create_ioctl", F_IOCTL, 0x644b },
	{ "ivpu_cmdq_destroy_ioctl", F_IOCTL, 0x644c },
	{ "ivpu_cmdq_submit_ioctl", F_SUBMIT, 0x644d },
	{ "ivpu_bo_create_from_userptr_ioctl", F_IOCTL, 0x644e },
};

struct entry {
	uint64_t ns;		/* while parsing: the line's number (ms or a count) */
	uint32_t seq;		/* line order, to keep equal times in order */
	uint16_t fn, code;
	uint32_t name;		/* dict string: the function */
	uint32_t pid, comm;	/* comm: dict string; 0 = none */
	uint32_t count;		/* calls this entry stands for */
	uint8_t lead;		/* the number was right-aligned (uniq -c) */
};

/* What kind of lines the calls are given in; the first call line decides. */
enum kind { K_NONE, K_TIMED, K_PROC, K_BARE, K_UNIQ, K_MAP };

/* An "@calls[probe]: N" line, to check the lines against or, in a log of
 * only the map, to read as the counts. */
struct sumline {
	uint32_t name;
	uint16_t fn, code;
	uint64_t count;
};
#define MAX_SUMMARY 65536

/* The most events one call becomes: its FUNC event and two the model reads. */
#define PENDING 4

struct xpu_import {
	struct entry *e;
	size_t n, cap;
	int has[F_NFNS];
	struct xpu_import_stats st;
	enum kind kind;
	struct sumline *sum;
	size_t nsum;
	struct xpu_dict *dict;
	uint64_t interval_ns, start_ns, last_tick_ns, end_wall_ns;
	/* the stream */
	size_t next;
	uint64_t tick_ns;
	int done;
	struct xpu_event pending[PENDING];
	int npending, head;
};

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && memcmp(s, prefix, k) == 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Reads a decimal number of at most 19 digits at s[*i]. */
static int number(const char *s, size_t n, size_t *i, uint64_t *v)
{
	size_t start = *i;
	*v = 0;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
		if (*i - start == 19)
			return -1;
		*v = *v * 10 + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	return *i > start ? 0 : -1;
}

static uint16_t classify(const char *f, size_t len, uint16_t *code)
{
	*code = 0;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strlen(fns[i].name) == len && memcmp(fns[i].name, f, len) == 0) {
			*code = fns[i].code;
			return fns[i].fn;
		}
	if (starts(f, len, "ivpu_mmu_"))
		return F_MMU_OTHER;
	if (starts(f, len, "ivpu_bo_") || starts(f, len, "ivpu_gem_"))
		return F_BO_OTHER;
	return F_OTHER;
}

/* "kprobe:[module:]function" (a return probe: *name NULL): returns 1, or 0
 * when the token is not a probe. */
static int parse_probe(const char *s, size_t n, uint16_t *fn, uint16_t *code, const char **name,
		       size_t *len)
{
	size_t p;
	int ret = 0;

	if (starts(s, n, "kprobe:"))
		p = 7;
	else if (starts(s, n, "kretprobe:"))
		p = 10, ret = 1;
	else
		return 0;
	/* the function is what follows the last ':' (kprobe:intel_vpu:ivpu_x or kprobe:ivpu_x) */
	const char *colon = memrchr(s + p, ':', n - p);
	if (colon)
		p = (size_t)(colon - s) + 1;
	if (p == n)
		return 0;
	*fn = ret ? F_OTHER : classify(s + p, n - p, code);
	*name = ret ? NULL : s + p;
	*len = ret ? 0 : n - p;
	return 1;
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* A call line, in one of the forms the seeds print:
 *   "<ms> PROBE"                 the tutorial's script (K_TIMED), or uniq -c's
 *                                "<count> PROBE" (told apart over the whole log)
 *   "<ms> <pid> <comm> PROBE"    with process columns, or "<ms> <comm> <pid> PROBE"
 *   "PROBE"                      printf("%s\n", probe): no time (K_BARE)
 * The probe is the last word.  Returns the kind, or K_NONE. */
static enum kind parse_call(struct xpu_import *im, const char *s, size_t n, struct entry *e,
			    const char **name, size_t *len)
{
	size_t i = 0, ws[4][2], words = 0;
	uint64_t v;

	while (i < n && is_space(s[i]))
		i++;
	e->lead = i > 0;
	/* the last word is the probe */
	size_t q = n, p = n;
	while (p > i && !is_space(s[p - 1]))
		p--;
	if (!parse_probe(s + p, q - p, &e->fn, &e->code, name, len))
		return K_NONE;
	if (p == i)
		return K_BARE;
	if (number(s, n, &i, &v) < 0 || (i < p && !is_space(s[i])))
		return K_NONE;
	e->ns = v;
	while (i < p && is_space(s[i]))
		i++;
	if (i == p)
		return K_TIMED;
	/* the process columns: a pid and a comm (which may hold spaces) in either order */
	size_t cs = i, ce = p;
	while (ce > cs && is_space(s[ce - 1]))
		ce--;
	for (size_t k = cs; k < ce && words < 4;) {
		size_t b = k;
		while (k < ce && !is_space(s[k]))
			k++;
		ws[words][0] = b, ws[words][1] = k, words++;
		while (k < ce && is_space(s[k]))
			k++;
	}
	if (words < 2)
		return K_NONE;
	size_t pb, pe;
	if (all_digits(s + ws[0][0], ws[0][1] - ws[0][0]))
		pb = ws[0][0], pe = ws[0][1], cs = ws[1][0];
	else if (words < 4 && all_digits(s + ws[words - 1][0], ws[words - 1][1] - ws[words - 1][0]))
		pb = ws[words - 1][0], pe = ws[words - 1][1], ce = ws[words - 2][1];
	else
		return K_NONE;
	size_t at = pb;
	if (pe - pb > 10 || number(s, pe, &at, &v) < 0 || v > UINT32_MAX)
		return K_NONE;
	e->pid = (uint32_t)v;
	size_t cl = ce - cs > 16 ? 16 : ce - cs;
	if (!(e->comm = xpu_dict_str(im->dict, s + cs, cl)))
		return K_NONE;
	return K_PROC;
}

/* "@name[key]: N"; the key is at *key, *klen. */
static int parse_summary(const char *s, size_t n, uint64_t *count, const char **key, size_t *klen)
{
	size_t i;
	if (!n || s[0] != '@')
		return 0;
	const char *close = NULL, *open = memchr(s, '[', n);
	for (size_t k = 0; k + 1 < n; k++)
		if (s[k] == ']' && s[k + 1] == ':')
			close = s + k;
	if (!close || !open || open > close)
		return 0;
	*key = open + 1;
	*klen = (size_t)(close - open - 1);
	i = (size_t)(close - s) + 2;
	while (i < n && is_space(s[i]))
		i++;
	if (number(s, n, &i, count) < 0)
		return 0;
	while (i < n && is_space(s[i]))
		i++;
	return i == n;
}

/* "Lost N events" */
static int parse_lost(const char *s, size_t n, uint64_t *lost)
{
	size_t i = 5;
	if (!starts(s, n, "Lost "))
		return 0;
	if (number(s, n, &i, lost) < 0)
		return 0;
	return starts(s + i, n - i, " events");
}

static int add(struct xpu_import *im, const struct entry *e)
{
	if (im->n == im->cap) {
		size_t cap = im->cap ? im->cap * 2 : 4096;
		void *p = realloc(im->e, cap * sizeof(*im->e));
		if (!p)
			return -ENOMEM;
		im->e = p;
		im->cap = cap;
	}
	im->e[im->n] = *e;
	im->e[im->n].seq = (uint32_t)im->n;
	im->n++;
	im->has[e->fn] = 1;
	return 0;
}

/* ms since boot: no real log gets near 2^64 ns, a damaged one may.  Half of
 * it leaves room for the ticks after the last call. */
static uint64_t ms_to_ns(uint64_t ms)
{
	return ms > UINT64_MAX / 2 / 1000000 ? UINT64_MAX / 2 : ms * 1000000;
}

static int add_summary(struct xpu_import *im, const char *key, size_t klen, uint64_t count)
{
	uint16_t fn, code;
	const char *name;
	size_t len;

	if (!parse_probe(key, klen, &fn, &code, &name, &len) || !name || im->nsum == MAX_SUMMARY)
		return 0;
	if (!im->nsum && !(im->sum = calloc(MAX_SUMMARY, sizeof(*im->sum))))
		return -ENOMEM;
	uint32_t id = xpu_dict_str(im->dict, name, len > XPU_IMPORT_MAX_NAME ? XPU_IMPORT_MAX_NAME : len);
	if (!id)
		return -ENOMEM;
	im->sum[im->nsum++] = (struct sumline){ id, fn, code, count };
	return 0;
}

/* Lines of the seeds' BEGIN and END blocks: "=== Intel NPU Function Call
 * Statistics ===", "Top functions by call count:", "Tracing ... Hit Ctrl-C to end." */
static int is_title(const char *s, size_t n)
{
	if (n >= 6 && starts(s, n, "===") && memcmp(s + n - 3, "===", 3) == 0)
		return 1;
	if (starts(s, n, "Tracing "))
		return 1;
	if (!n || s[n - 1] != ':' || s[0] == '@')
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((s[i] >= '0' && s[i] <= '9') || (unsigned char)s[i] < ' ')
			return 0;
	return 1;
}

/* uniq -c's count of the log's blank lines ("      2") or of its header
 * ("      1 Attaching 223 probes..."). */
static int uniq_of_header(const char *s, size_t n)
{
	size_t i = 0;
	uint64_t v;
	while (i < n && is_space(s[i]))
		i++;
	if (!i || number(s, n, &i, &v) < 0)
		return 0;
	while (i < n && is_space(s[i]))
		i++;
	return i == n || starts(s + i, n - i, "Attaching ");
}

static int line(struct xpu_import *im, const char *s, size_t n)
{
	struct xpu_import_stats *st = &im->st;
	uint64_t count;
	const char *name, *key;
	size_t len;
	struct entry e = { .count = 1 };

	while (n && is_space(s[n - 1]))
		n--;
	st->lines++;
	if (n > XPU_IMPORT_MAX_LINE)
		goto bad;
	enum kind k = parse_call(im, s, n, &e, &name, &len);
	if (k != K_NONE) {
		if (!im->kind)
			im->kind = k;
		else if (im->kind != k)
			goto bad;	/* one log, one form */
		st->calls++;
		st->call_lines++;
		if (e.fn == F_OTHER)
			st->other++;
		else
			st->mapped++;
		if (!name)	/* a return: the call was counted at its entry */
			return 0;
		/* Names are short C identifiers; anything else is a damaged line
		 * that must not fill the dictionary with garbage. */
		if (len > XPU_IMPORT_MAX_NAME)
			len = XPU_IMPORT_MAX_NAME;
		if (!(e.name = xpu_dict_str(im->dict, name, len)))
			return -ENOMEM;
		return add(im, &e);
	}
	if (!n || (n == 2 && s[0] == '^' && s[1] == 'C'))
		return 0;
	if (parse_summary(s, n, &count, &key, &len)) {
		st->summary++;
		st->summary_calls += count;
		return add_summary(im, key, len, count);
	}
	if (parse_lost(s, n, &count)) {
		st->lost += count;
		return 0;
	}
	if (is_title(s, n) || uniq_of_header(s, n)) {
		st->titles++;
		return 0;
	}
	if (starts(s, n, "Attaching ") || !st->calls) {
		st->header++;
		return 0;
	}
bad:
	st->bad++;
	if (!st->first_bad)
		st->first_bad = st->lines;
	return 0;
}

struct fncount { uint32_t name; uint64_t n; };

static int by_name(const void *a, const void *b)
{
	const struct fncount *x = a, *y = b;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Calls by function, sorted by name; *nout distinct functions. */
static struct fncount *per_function(const struct xpu_import *im, size_t *nout)
{
	struct fncount *c = malloc((im->n ? im->n : 1) * sizeof(*c));
	size_t k = 0;
	if (!c)
		return NULL;
	for (size_t i = 0; i < im->n; i++)
		c[i] = (struct fncount){ im->e[i].name, im->e[i].count };
	qsort(c, im->n, sizeof(*c), by_name);
	for (size_t i = 0; i < im->n; i++)
		if (k && c[k - 1].name == c[i].name)
			c[k - 1].n += c[i].n;
		else
			c[k++] = c[i];
	*nout = k;
	return c;
}

/* "<number> PROBE" lines are uniq -c's counts, not times, when the numbers
 * are right-aligned (uniq -c pads them; the tutorial's script prints them
 * left-aligned), or when each function is on one line only and the numbers
 * go down (sort -rn). */
static int is_count_listing(const struct xpu_import *im, size_t nfn)
{
	int down = 0;
	for (size_t i = 1; i < im->n; i++) {
		if (im->e[i].ns > im->e[i - 1].ns)
			return 0;
		down |= im->e[i].ns < im->e[i - 1].ns;
	}
	return down && nfn == im->n;
}

static int all_padded(const struct xpu_import *im)
{
	for (size_t i = 0; i < im->n; i++)
		if (!im->e[i].lead)
			return 0;
	return im->n > 0;
}

/* Decides what the numbers mean, reads a log of only the @calls map as its
 * counts and checks the map against the lines. */
static int finish(struct xpu_import *im)
{
	struct xpu_import_stats *st = &im->st;
	size_t nfn = 0;
	struct fncount *c;

	if (!im->kind && im->nsum) {
		im->kind = K_MAP;
		st->calls = st->mapped = st->other = 0;
		for (size_t i = 0; i < im->nsum; i++) {
			struct sumline *l = &im->sum[i];
			struct entry e = { .fn = l->fn, .code = l->code, .name = l->name };
			if (l->count > UINT32_MAX || !l->count)
				continue;
			e.count = (uint32_t)l->count;
			if (add(im, &e) < 0)
				return -ENOMEM;
			st->calls += l->count;
			*(l->fn == F_OTHER ? &st->other : &st->mapped) += l->count;
		}
	}
	if (!(c = per_function(im, &nfn)))
		return -ENOMEM;
	if (im->kind == K_TIMED && (all_padded(im) || is_count_listing(im, nfn))) {
		im->kind = K_UNIQ;
		st->calls = st->mapped = st->other = 0;
		for (size_t i = 0; i < im->n; i++) {
			struct entry *e = &im->e[i];
			e->count = e->ns > UINT32_MAX ? UINT32_MAX : (uint32_t)e->ns;
			st->calls += e->count;
			*(e->fn == F_OTHER ? &st->other : &st->mapped) += e->count;
		}
		free(c);
		if (!(c = per_function(im, &nfn)))
			return -ENOMEM;
	}
	st->untimed = im->kind == K_BARE || im->kind == K_UNIQ || im->kind == K_MAP;
	for (size_t i = 0; i < im->n; i++)
		im->e[i].ns = st->untimed ? 0 : ms_to_ns(im->e[i].ns);
	if (im->kind != K_MAP)
		for (size_t i = 0; i < im->nsum; i++) {
			struct fncount key = { im->sum[i].name, 0 }, *f = bsearch(&key, c, nfn, sizeof(*c), by_name);
			if ((f ? f->n : 0) != im->sum[i].count && !st->summary_mismatch++)
				snprintf(st->first_mismatch, sizeof(st->first_mismatch), "%s: %llu in the map, %llu lines",
					 xpu_dict_str_get(im->dict, im->sum[i].name), (unsigned long long)im->sum[i].count,
					 (unsigned long long)(f ? f->n : 0));
		}
	static const char *const forms[] = {
		[K_TIMED] = "timed calls", [K_PROC] = "timed calls with pid and command",
		[K_BARE] = "untimed calls (one probe a line)", [K_UNIQ] = "call counts (uniq -c)",
		[K_MAP] = "call counts (an @calls map)",
	};
	st->form = forms[im->kind];
	free(c);
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void xpu_import_free(struct xpu_import *im)
{
	if (!im)
		return;
	free(im->sum);
	free(im->e);
	free(im);
}

/* Why a text is not such a log, with what its first line looked like. */
static void describe(const char *text, size_t len, const struct xpu_import_stats *st, char *err,
		     size_t errlen)
{
	char first[64];
	size_t at = 0, k = 0;
	while (at < len && (text[at] == '\n' || is_space(text[at])))
		at++;
	for (; at < len && text[at] != '\n' && k < 48; at++)
		first[k++] = (unsigned char)text[at] < ' ' || (unsigned char)text[at] > '~' ? '?' : text[at];
	first[k] = '\0';
	if (!k)
		snprintf(err, errlen, "%s: the file is empty", not_a_log);
	else
		snprintf(err, errlen, "%s: none of its %llu lines is a probe (the first: \"%s%s\")", not_a_log,
			 (unsigned long long)st->lines, first, at < len && text[at] != '\n' ? "..." : "");
}

struct xpu_import *xpu_import_bpftrace_text(const char *text, size_t len, uint64_t interval_ns,
					    uint64_t end_wall_ns, struct xpu_dict *dict, char *err,
					    size_t errlen)
{
	struct xpu_import *im = calloc(1, sizeof(*im));
	if (!im) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	im->dict = dict;
	im->interval_ns = interval_ns ? interval_ns : 1000000000ULL;
	im->end_wall_ns = end_wall_ns;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		if (line(im, text + at, n) < 0) {
			snprintf(err, errlen, "out of memory after %llu lines", (unsigned long long)im->st.lines);
			xpu_import_free(im);
			return NULL;
		}
		at += n + 1;
	}
	if (!im->st.calls && !im->nsum) {
		describe(text, len, &im->st, err, errlen);
		xpu_import_free(im);
		return NULL;
	}
	if (finish(im) < 0) {
		snprintf(err, errlen, "out of memory");
		xpu_import_free(im);
		return NULL;
	}
	/* uniq -c's counts read as 0 ("   0 kprobe:..."), found by
	 * fuzz_bpftrace in CI: lines, but no call */
	if (!im->st.calls) {
		snprintf(err, errlen, im->kind == K_MAP ? "%s: its @calls map names no kprobe"
			 : "%s: its call counts add up to none", not_a_log);
		xpu_import_free(im);
		return NULL;
	}
	if (im->n) {	/* none when every call was of a function the model has no use for */
		qsort(im->e, im->n, sizeof(*im->e), by_time);
		im->start_ns = im->e[0].ns;
		im->st.first_ms = im->e[0].ns / 1000000;
		im->st.last_ms = im->e[im->n - 1].ns / 1000000;
	}
	uint64_t span = im->n ? im->e[im->n - 1].ns - im->start_ns : 0;
	im->last_tick_ns = im->start_ns + (span / im->interval_ns + 1) * im->interval_ns;
	im->tick_ns = im->start_ns + im->interval_ns;
	if (im->st.lost) {
		struct xpu_event *d = &im->pending[im->npending++];
		*d = (struct xpu_event){ .type = XPU_EV_DROP, .source = XPU_SRC_NPU, .time = im->start_ns };
		d->drop.source = XPU_SRC_NPU;
		d->drop.count = im->st.lost;
	}
	return im;
}

/* Whether the file's first HEAD_BYTES could begin such a log: text (no NUL)
 * with a probe in it.  Decided before the rest is read, so that a large file
 * of something else is refused at once and without reading it into memory. */
#define HEAD_BYTES 65536
static int looks_like_log(int fd, char *err, size_t errlen)
{
	static char head[HEAD_BYTES];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	const char *nul = n > 0 ? memchr(head, '\0', (size_t)n) : NULL;
	struct xpu_import_stats st = { 0 };
	if (n <= 0)
		snprintf(err, errlen, "%s: the file is empty", not_a_log);
	else if (nul)
		snprintf(err, errlen, "%s: it is binary data (a NUL byte at offset %zu)", not_a_log,
			 (size_t)(nul - head));
	else if (!memmem(head, (size_t)n, "kprobe:", 7)) {
		for (ssize_t i = 0; i < n; i++)
			st.lines += head[i] == '\n';
		describe(head, (size_t)n, &st, err, errlen);
		if (n == HEAD_BYTES)
			snprintf(err + strlen(err), errlen - strlen(err), " in its first 64 KiB");
	} else
		return 1;
	return 0;
}

struct xpu_import *xpu_import_bpftrace(const char *path, uint64_t interval_ns, struct xpu_dict *dict,
					char *err, size_t errlen)
{
	struct stat stt;
	char *text = NULL;
	size_t len;
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused next. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &stt) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(stt.st_mode) || !looks_like_log(fd, err, errlen)) {
		if (!S_ISREG(stt.st_mode))
			snprintf(err, errlen, "not a regular file");
		close(fd);
		return NULL;
	}
	int r = xpu_read_fd(fd, XPU_IMPORT_MAX_BYTES, &text, &len);
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		return NULL;
	}
	uint64_t mtime = (uint64_t)stt.st_mtim.tv_sec * 1000000000ULL + (uint64_t)stt.st_mtim.tv_nsec;
	struct xpu_import *im = xpu_import_bpftrace_text(text, len, interval_ns, mtime, dict, err, errlen);
	free(text);
	if (im)
		im->st.truncated = r == 1;
	return im;
}

const struct xpu_import_stats *xpu_import_stats(const struct xpu_import *im)
{
	return &im->st;
}

static struct xpu_event *push(struct xpu_import *im, const struct entry *e, uint16_t type)
{
	struct xpu_event *ev = &im->pending[(im->head + im->npending++) % PENDING];
	*ev = (struct xpu_event){ .type = type, .source = XPU_SRC_NPU, .time = e->ns, .pid = e->pid };
	ev->npu.comm = e->comm;
	ev->npu.count = 1;
	return ev;
}

/* The events one call stands for (none for a counter another one covers). */
static void convert(struct xpu_import *im, const struct entry *e)
{
	static const uint32_t mem[F_NFNS] = {
		[F_BO_CREATE] = XPU_NPU_MEM_BO_CREATE, [F_BIND] = XPU_NPU_MEM_BIND,
		[F_MAP] = XPU_NPU_MEM_MAP, [F_UNMAP] = XPU_NPU_MEM_UNMAP, [F_FAULT] = XPU_NPU_MEM_FAULT,
		[F_MMU_OTHER] = XPU_NPU_MEM_OTHER_MMU, [F_BO_OTHER] = XPU_NPU_MEM_OTHER_BO,
		[F_MAP_PAGE] = XPU_NPU_MEM_MAP_PAGE, [F_FREE_PAGE] = XPU_NPU_MEM_FREE_PAGE,
	};
	static const int32_t aborts[F_NFNS] = {
		[F_ABORT_ALL] = XPU_NPU_ABORT_ALL, [F_CMDQ_ABORT] = XPU_NPU_ABORT_CMDQ,
		[F_ENGINE_ERROR] = XPU_NPU_ABORT_ENGINE_ERROR,
	};
	struct xpu_event *ev;
	int rx_raw = im->has[F_RX_ADDR];

	ev = push(im, e, XPU_EV_NPU_FUNC);
	ev->npu.code = e->name;
	ev->npu.count = e->count;
	ev->npu.comm = e->comm;
	ev->pid = e->pid;
	/* Counts without times say nothing of rates, jobs or stalls. */
	if (im->st.untimed)
		return;
	switch (e->fn) {
	case F_IPC_SEND:
	case F_TX_SET:
		if (e->fn == F_TX_SET && im->has[F_IPC_SEND])
			return;
		push(im, e, XPU_EV_NPU_IPC)->npu.aux = XPU_NPU_IPC_TX | XPU_NPU_IPC_MSG;
		return;
	case F_RX_ADDR:
	case F_IPC_RECV:
		if (e->fn == F_IPC_RECV && rx_raw)
			return;
		push(im, e, XPU_EV_NPU_IPC)->npu.aux = XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG;
		return;
	case F_DB_SET:
		push(im, e, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_SUBMIT;
		return;
	case F_JOB_DONE:
		ev = push(im, e, XPU_EV_NPU_IPC);
		ev->npu.code = 0x2100;
		ev->npu.aux = XPU_NPU_IPC_RX | (rx_raw ? 0 : XPU_NPU_IPC_MSG);
		push(im, e, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_DONE;
		return;
	case F_ABORT_ALL:
	case F_CMDQ_ABORT:
	case F_ENGINE_ERROR:
		ev = push(im, e, XPU_EV_NPU_JOB);
		ev->npu.code = XPU_NPU_JOB_ABORT;
		ev->npu.result = aborts[e->fn];
		return;
	case F_RECOVERY:
		push(im, e, XPU_EV_NPU_PM)->npu.code = XPU_NPU_PM_RECOVERY;
		return;
	case F_SUSPEND:
	case F_RESUME:
		push(im, e, XPU_EV_NPU_PM)->npu.code = e->fn == F_SUSPEND ? XPU_NPU_PM_SUSPEND
									   : XPU_NPU_PM_RESUME;
		return;
	case F_IOCTL:
	case F_SUBMIT:
		ev = push(im, e, XPU_EV_NPU_IOCTL);
		ev->npu.code = e->code;
		ev->npu.aux = XPU_NPU_F_NODUR;
		/* One job each, unless the log has the doorbell, which sees every job. */
		if (e->fn == F_SUBMIT && !im->has[F_DB_SET])
			push(im, e, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_SUBMIT;
		return;
	default:
		if (e->fn < F_NFNS && mem[e->fn])
			push(im, e, XPU_EV_NPU_MEM)->npu.code = mem[e->fn];
		return;
	}
}

static void tick(struct xpu_import *im, struct xpu_event *ev)
{
	*ev = (struct xpu_event){ .type = XPU_EV_TICK, .source = XPU_SRC_NPU, .time = im->tick_ns };
	ev->tick.interval_ns = im->interval_ns;
	ev->tick.wall_ns = im->end_wall_ns > im->last_tick_ns - im->tick_ns
				   ? im->end_wall_ns - (im->last_tick_ns - im->tick_ns) : 0;
	if (im->tick_ns >= im->last_tick_ns)
		im->done = 1;
	im->tick_ns += im->interval_ns;
}

int xpu_import_next(struct xpu_import *im, struct xpu_event *ev)
{
	for (;;) {
		if (im->npending) {
			*ev = im->pending[im->head];
			im->head = (im->head + 1) % PENDING;
			im->npending--;
			return 1;
		}
		if (im->done)
			return 0;
		if (im->next < im->n && im->e[im->next].ns <= im->tick_ns) {
			im->head = 0;
			convert(im, &im->e[im->next++]);
			continue;
		}
		tick(im, ev);
		return 1;
	}
}
