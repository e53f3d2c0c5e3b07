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

static const char not_a_log[] = "not an xputop recording, nor a bpftrace log of "
				"\"<ms> kprobe:intel_vpu:ivpu_*\" lines";

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
	uint64_t ns;
	uint32_t seq;		/* line order, to keep equal times in order */
	uint16_t fn, code;
	uint32_t name;		/* dict string: the function */
};

/* The most events one call becomes: its FUNC event and two the model reads. */
#define PENDING 4

struct xpu_import {
	struct entry *e;
	size_t n, cap;
	int has[F_NFNS];
	struct xpu_import_stats st;
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

/* "<ms> kprobe:[module:]function": returns 1 and fills ms, fn and the
 * function's name (*name, *len; none for a return probe), or 0. */
static int parse_call(const char *s, size_t n, uint64_t *ms, uint16_t *fn, uint16_t *code,
		      const char **name, size_t *len)
{
	size_t i = 0, p, q;
	int ret = 0;

	while (i < n && is_space(s[i]))
		i++;
	if (number(s, n, &i, ms) < 0 || i == n || !is_space(s[i]))
		return 0;
	while (i < n && is_space(s[i]))
		i++;
	if (starts(s + i, n - i, "kprobe:"))
		i += 7;
	else if (starts(s + i, n - i, "kretprobe:"))
		i += 10, ret = 1;
	else
		return 0;
	p = i;
	while (i < n && !is_space(s[i]))
		i++;
	q = i;
	while (i < n && is_space(s[i]))
		i++;
	if (i != n || q == p)
		return 0;
	/* the function is what follows the last ':' (kprobe:intel_vpu:ivpu_x or kprobe:ivpu_x) */
	const char *colon = memrchr(s + p, ':', q - p);
	if (colon)
		p = (size_t)(colon - s) + 1;
	if (q == p)
		return 0;
	*fn = ret ? F_OTHER : classify(s + p, q - p, code);
	*name = ret ? NULL : s + p;
	*len = ret ? 0 : q - p;
	return 1;
}

/* "@name[key]: N" */
static int parse_summary(const char *s, size_t n, uint64_t *count)
{
	size_t i;
	if (!n || s[0] != '@')
		return 0;
	const char *close = NULL;
	for (size_t k = 0; k + 1 < n; k++)
		if (s[k] == ']' && s[k + 1] == ':')
			close = s + k;
	if (!close)
		return 0;
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

static int add(struct xpu_import *im, uint64_t ms, uint16_t fn, uint16_t code, uint32_t name)
{
	if (im->n == im->cap) {
		size_t cap = im->cap ? im->cap * 2 : 4096;
		void *p = realloc(im->e, cap * sizeof(*im->e));
		if (!p)
			return -ENOMEM;
		im->e = p;
		im->cap = cap;
	}
	/* ms since boot: no real log gets near 2^64 ns, a damaged one may.
	 * Half of it leaves room for the ticks after the last call. */
	uint64_t ns = ms > UINT64_MAX / 2 / 1000000 ? UINT64_MAX / 2 : ms * 1000000;
	im->e[im->n++] = (struct entry){ ns, (uint32_t)im->n, fn, code, name };
	im->has[fn] = 1;
	return 0;
}

static int line(struct xpu_import *im, const char *s, size_t n)
{
	struct xpu_import_stats *st = &im->st;
	uint64_t ms, count;
	uint16_t fn, code;
	const char *name;
	size_t len;

	while (n && is_space(s[n - 1]))
		n--;
	st->lines++;
	if (n > XPU_IMPORT_MAX_LINE)
		goto bad;
	if (parse_call(s, n, &ms, &fn, &code, &name, &len)) {
		st->calls++;
		if (fn == F_OTHER)
			st->other++;
		else
			st->mapped++;
		if (!name)	/* a return: the call was counted at its entry */
			return 0;
		/* Names are short C identifiers; anything else is a damaged line
		 * that must not fill the dictionary with garbage. */
		if (len > XPU_IMPORT_MAX_NAME)
			len = XPU_IMPORT_MAX_NAME;
		uint32_t id = xpu_dict_str(im->dict, name, len);
		if (!id)
			return -ENOMEM;
		return add(im, ms, fn, code, id);
	}
	if (!n || (n == 2 && s[0] == '^' && s[1] == 'C'))
		return 0;
	if (parse_summary(s, n, &count)) {
		st->summary++;
		st->summary_calls += count;
		return 0;
	}
	if (parse_lost(s, n, &count)) {
		st->lost += count;
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
	free(im->e);
	free(im);
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
	if (!im->st.calls) {
		snprintf(err, errlen, "%s", not_a_log);
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
static int looks_like_log(int fd)
{
	static char head[HEAD_BYTES];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n <= 0 || memchr(head, '\0', (size_t)n))
		return 0;
	return memmem(head, (size_t)n, "kprobe:", 7) != NULL;
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
	if (!S_ISREG(stt.st_mode) || !looks_like_log(fd)) {
		snprintf(err, errlen, "%s", S_ISREG(stt.st_mode) ? not_a_log : "not a regular file");
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

static struct xpu_event *push(struct xpu_import *im, uint64_t ns, uint16_t type)
{
	struct xpu_event *ev = &im->pending[(im->head + im->npending++) % PENDING];
	*ev = (struct xpu_event){ .type = type, .source = XPU_SRC_NPU, .time = ns };
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

	push(im, e->ns, XPU_EV_NPU_FUNC)->npu.code = e->name;
	switch (e->fn) {
	case F_IPC_SEND:
	case F_TX_SET:
		if (e->fn == F_TX_SET && im->has[F_IPC_SEND])
			return;
		push(im, e->ns, XPU_EV_NPU_IPC)->npu.aux = XPU_NPU_IPC_TX | XPU_NPU_IPC_MSG;
		return;
	case F_RX_ADDR:
	case F_IPC_RECV:
		if (e->fn == F_IPC_RECV && rx_raw)
			return;
		push(im, e->ns, XPU_EV_NPU_IPC)->npu.aux = XPU_NPU_IPC_RX | XPU_NPU_IPC_MSG;
		return;
	case F_DB_SET:
		push(im, e->ns, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_SUBMIT;
		return;
	case F_JOB_DONE:
		ev = push(im, e->ns, XPU_EV_NPU_IPC);
		ev->npu.code = 0x2100;
		ev->npu.aux = XPU_NPU_IPC_RX | (rx_raw ? 0 : XPU_NPU_IPC_MSG);
		push(im, e->ns, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_DONE;
		return;
	case F_ABORT_ALL:
	case F_CMDQ_ABORT:
	case F_ENGINE_ERROR:
		ev = push(im, e->ns, XPU_EV_NPU_JOB);
		ev->npu.code = XPU_NPU_JOB_ABORT;
		ev->npu.result = aborts[e->fn];
		return;
	case F_RECOVERY:
		push(im, e->ns, XPU_EV_NPU_PM)->npu.code = XPU_NPU_PM_RECOVERY;
		return;
	case F_SUSPEND:
	case F_RESUME:
		push(im, e->ns, XPU_EV_NPU_PM)->npu.code = e->fn == F_SUSPEND ? XPU_NPU_PM_SUSPEND
									   : XPU_NPU_PM_RESUME;
		return;
	case F_IOCTL:
	case F_SUBMIT:
		ev = push(im, e->ns, XPU_EV_NPU_IOCTL);
		ev->npu.code = e->code;
		ev->npu.aux = XPU_NPU_F_NODUR;
		/* One job each, unless the log has the doorbell, which sees every job. */
		if (e->fn == F_SUBMIT && !im->has[F_DB_SET])
			push(im, e->ns, XPU_EV_NPU_JOB)->npu.code = XPU_NPU_JOB_SUBMIT;
		return;
	default:
		if (e->fn < F_NFNS && mem[e->fn])
			push(im, e->ns, XPU_EV_NPU_MEM)->npu.code = mem[e->fn];
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
