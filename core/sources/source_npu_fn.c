/* SPDX-License-Identifier: GPL-2.0-only */
#include "source_npu_fn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dict.h"
#include "event.h"
#include "func_offsets.h"
#include "grow.h"
#include "htab.h"
#include "model_npu.h"
#include "npu.h"
#include "readfile.h"
#include "session.h"
#include "symbolize.h"
#include "uprobe_multi.h"

#define FILTER_FUNCS "/sys/kernel/tracing/available_filter_functions"

/* The last count read from one `funcs` map entry. */
struct prev {
	struct xpu_npu_fn_key key;
	uint64_t count;
};

struct xpu_npu_fns {
	char **names;
	uint64_t *cookies;
	uint32_t *ids;			/* dict string of each name, 0 = not interned yet */
	size_t n;
	uint32_t capnames, capcookies, capids;
	struct prev *prev;
	uint32_t nprev, capprev;
	struct xpu_htab prev_idx;
	struct bpf_link *multi[2];	/* kernel: all functions; the ioctl handlers' returns */
	int ufd[2];			/* stand-in: the same as uprobe_multi links (fds), or -1 */
	struct bpf_link **links;	/* stand-in, before Linux 6.6: one uprobe each */
	uint32_t nlinks, caplinks;
	int latency;			/* every function's return is probed */
	struct xpu_npu_fn_lat **prev_lat;	/* per function, the last read; NULL until it moved */
};

static void detach(struct xpu_npu_fns *f)
{
	for (size_t i = 0; i < f->nlinks; i++)
		bpf_link__destroy(f->links[i]);
	f->nlinks = 0;
	bpf_link__destroy(f->multi[0]);
	bpf_link__destroy(f->multi[1]);
	f->multi[0] = f->multi[1] = NULL;
	for (int i = 0; i < 2; i++) {
		if (f->ufd[i] >= 0)
			close(f->ufd[i]);
		f->ufd[i] = -1;
	}
}

static int add(struct xpu_npu_fns *f, const char *name, size_t len)
{
	if (f->n == XPU_NPU_FNS_MAX)
		return 0;
	for (size_t i = 0; i < f->n; i++)	/* a name listed twice (static functions alike) */
		if (strlen(f->names[i]) == len && memcmp(f->names[i], name, len) == 0)
			return 0;
	if (xpu_grow((void **)&f->names, &f->capnames, f->n + 1, sizeof(*f->names)) ||
	    xpu_grow((void **)&f->cookies, &f->capcookies, f->n + 1, sizeof(*f->cookies)) ||
	    xpu_grow((void **)&f->ids, &f->capids, f->n + 1, sizeof(*f->ids)))
		return -ENOMEM;
	char *copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	f->names[f->n] = copy;
	f->cookies[f->n] = XPU_NPU_FN_COOKIE(f->n, xpu_npu_fn_ioctl(copy));
	f->ids[f->n] = 0;
	f->n++;
	return 0;
}

/* "name [intel_vpu]" lines of the kernel's traceable functions. */
static int from_kernel(struct xpu_npu_fns *f, char *why, size_t size)
{
	char *text = NULL;
	size_t len;
	int rc = xpu_read_path(FILTER_FUNCS, 64 << 20, &text, &len);
	if (rc < 0) {
		snprintf(why, size, "cannot read " FILTER_FUNCS ": %s", strerror(-rc));
		return -1;
	}
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		size_t w = strcspn(line, " \n");
		if (w > 5 && w < n && strncmp(line, "ivpu_", 5) == 0 && memmem(line + w, n - w, "[intel_vpu]", 11) &&
		    add(f, line, w) < 0) {
			free(text);
			snprintf(why, size, "out of memory");
			return -1;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return 0;
}

static int from_binary(struct xpu_npu_fns *f, const char *path, char *why, size_t size)
{
	char err[256], name[256];
	struct xpu_elf *e = xpu_elf_load(path, err, sizeof(err));
	if (!e) {
		snprintf(why, size, "%s", err);
		return -1;
	}
	for (uint32_t s = 0; s < xpu_elf_nsyms(e); s++) {
		size_t len = xpu_elf_sym_name(e, s, name, sizeof(name));
		if (len > 5 && len < sizeof(name) && strncmp(name, "ivpu_", 5) == 0 && add(f, name, len) < 0) {
			xpu_elf_free(e);
			snprintf(why, size, "out of memory");
			return -1;
		}
	}
	xpu_elf_free(e);
	return 0;
}

struct xpu_npu_fns *xpu_npu_fns_find(const char *binary, char *why, size_t size)
{
	struct xpu_npu_fns *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	xpu_htab_init(&f->prev_idx);
	f->ufd[0] = f->ufd[1] = -1;
	if ((binary ? from_binary(f, binary, why, size) : from_kernel(f, why, size)) < 0) {
		xpu_npu_fns_free(f);
		return NULL;
	}
	return f;
}

size_t xpu_npu_fns_count(const struct xpu_npu_fns *f)
{
	return f ? f->n : 0;
}

/* The stand-in's functions as two uprobe_multi links, the same shape as
 * the kernel's two multi-kprobe links: every function, and the ioctl
 * handlers' returns. */
static int attach_uprobe_multi(struct xpu_npu_fns *f, struct bpf_program *entry, struct bpf_program *ret,
			       const char *binary)
{
	uint64_t *offs = calloc(f->n, sizeof(*offs));
	uint64_t *o = calloc(f->n, sizeof(*o)), *c = calloc(f->n, sizeof(*c));
	int rc = -ENOMEM;
	if (!offs || !o || !c)
		goto out;
	rc = -ENOENT;
	if (xpu_func_offsets(binary, (const char *const *)f->names, f->n, offs) <= 0)
		goto out;
	for (int r = 0; r < 2; r++) {
		uint32_t n = 0;
		for (size_t i = 0; i < f->n; i++)
			if (offs[i] && (!r || f->latency || f->cookies[i] >> 32)) {
				o[n] = offs[i];
				c[n++] = f->cookies[i];
			}
		if (!n)
			continue;
		f->ufd[r] = xpu_uprobe_multi_attach(bpf_program__fd(r ? ret : entry), binary, o, c, n, r);
		if (f->ufd[r] < 0) {
			rc = -errno;
			goto out;
		}
	}
	rc = 0;
out:
	free(offs);
	free(o);
	free(c);
	return rc;
}

/* The stand-in's functions before Linux 6.6: one perf-event uprobe each,
 * with the same cookie. */
static int attach_uprobes(struct xpu_npu_fns *f, struct bpf_program *p, const char *binary, int ret)
{
	for (size_t i = 0; i < f->n; i++) {
		if (ret && !f->latency && !(f->cookies[i] >> 32))
			continue;
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = f->names[i], .bpf_cookie = f->cookies[i],
			    .retprobe = ret);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(p, -1, binary, 0, &o);
		if (!l)
			return -errno;
		if (xpu_grow((void **)&f->links, &f->caplinks, f->nlinks + 1, sizeof(*f->links))) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		f->links[f->nlinks++] = l;
	}
	return 0;
}

/* The kernel's: one multi-kprobe link for every function, one for the
 * returns (kretprobes) of every function with latency, else of the ioctl
 * handlers. */
static int attach_kprobes(struct xpu_npu_fns *f, struct bpf_program *entry, struct bpf_program *ret)
{
	const char *handlers[32];
	__u64 hcookies[32];
	size_t nh = 0;
	LIBBPF_OPTS(bpf_kprobe_multi_opts, o, .syms = (const char **)f->names, .cookies = (const __u64 *)f->cookies,
		    .cnt = f->n);
	f->multi[0] = bpf_program__attach_kprobe_multi_opts(entry, NULL, &o);
	if (!f->multi[0])
		return -errno;
	LIBBPF_OPTS(bpf_kprobe_multi_opts, r, .syms = (const char **)f->names, .cookies = (const __u64 *)f->cookies,
		    .cnt = f->n, .retprobe = true);
	if (!f->latency) {
		for (size_t i = 0; i < f->n && nh < 32; i++)
			if (f->cookies[i] >> 32) {
				handlers[nh] = f->names[i];
				hcookies[nh++] = f->cookies[i];
			}
		r.syms = handlers;
		r.cookies = hcookies;
		r.cnt = nh;
	}
	/* Without the returns, calls after a handler would be charged to it. */
	if (r.cnt && !(f->multi[1] = bpf_program__attach_kprobe_multi_opts(ret, NULL, &r)))
		return -errno;
	return 0;
}

int xpu_npu_fns_attach(struct xpu_npu_fns *f, struct bpf_program *entry, struct bpf_program *ret,
		       const char *binary, int multi, int latency)
{
	int rc;
	if (!f->n)
		return -ENOENT;
	f->latency = latency;
	if (!binary)
		rc = attach_kprobes(f, entry, ret);
	else if (multi)
		rc = attach_uprobe_multi(f, entry, ret, binary);
	else if ((rc = attach_uprobes(f, entry, binary, 0)) == 0)
		rc = attach_uprobes(f, ret, binary, 1);
	if (rc < 0)
		detach(f);
	return rc;
}

static uint64_t key_hash(const struct xpu_npu_fn_key *k)
{
	return xpu_hash_u64(((uint64_t)k->pid << 32 | k->ctx) ^ ((uint64_t)k->fn << 40));
}

static int prev_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_npu_fns *f = ctx;
	return memcmp(&f->prev[i].key, k, sizeof(struct xpu_npu_fn_key)) == 0;
}

static struct prev *prev_get(struct xpu_npu_fns *f, const struct xpu_npu_fn_key *k)
{
	uint64_t h = key_hash(k);
	uint32_t i = xpu_htab_find(&f->prev_idx, h, prev_eq, f, k);
	if (i != UINT32_MAX)
		return &f->prev[i];
	if (xpu_grow((void **)&f->prev, &f->capprev, f->nprev + 1, sizeof(*f->prev)) ||
	    xpu_htab_put(&f->prev_idx, h, f->nprev) < 0)
		return NULL;
	f->prev[f->nprev] = (struct prev){ .key = *k };
	return &f->prev[f->nprev++];
}

/* Function fn's name as a dict string, made at its first event. */
static uint32_t fn_id(struct xpu_npu_fns *f, struct xpu_session *s, uint32_t fn)
{
	if (!f->ids[fn])
		f->ids[fn] = xpu_dict_cstr(&s->dict, f->names[fn]);
	return f->ids[fn];
}

/* ev for d calls: as many events as a count field, 32 bits wide, needs. */
static void emit_count(struct xpu_session *s, struct xpu_event *ev, uint64_t d)
{
	while (d) {
		ev->npu.count = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
		d -= ev->npu.count;
		xpu_session_emit(s, ev);
	}
}

static void emit(struct xpu_npu_fns *f, struct xpu_session *s, const struct xpu_npu_fn_key *k,
		 const struct xpu_npu_fn_val *v, uint64_t d, uint64_t now)
{
	/* Stamped with the latest call, not the read: a stall is judged from
	 * the last IPC handled, which a refresh's delay would move later. */
	uint64_t t = v->last_ns && v->last_ns <= now ? v->last_ns : now;
	struct xpu_event ev = { .type = XPU_EV_NPU_FUNC, .source = XPU_SRC_NPU, .pid = k->pid, .time = t };
	size_t clen = strnlen(v->comm, sizeof(v->comm));
	ev.npu.code = fn_id(f, s, k->fn);
	ev.npu.aux = k->ctx;
	ev.npu.comm = clen ? xpu_dict_str(&s->dict, v->comm, clen) : 0;
	emit_count(s, &ev, d);
}

void xpu_npu_fns_read(struct xpu_npu_fns *f, int mapfd, struct xpu_session *s, uint64_t now)
{
	struct xpu_npu_fn_key k, next, *cur = NULL;
	struct xpu_npu_fn_val v;
	while (bpf_map_get_next_key(mapfd, cur, &next) == 0) {
		k = next;
		cur = &k;
		if (k.fn >= f->n || bpf_map_lookup_elem(mapfd, &k, &v) < 0)
			continue;
		struct prev *p = prev_get(f, &k);
		if (!p || v.count <= p->count)
			continue;
		emit(f, s, &k, &v, v.count - p->count, now);
		p->count = v.count;
	}
}

static void emit_lat(struct xpu_npu_fns *f, struct xpu_session *s, uint32_t fn, uint64_t d, uint64_t dur,
		     uint32_t aux, uint64_t now)
{
	struct xpu_event ev = { .type = XPU_EV_NPU_FUNC_LAT, .source = XPU_SRC_NPU, .time = now };
	ev.npu.code = fn_id(f, s, fn);
	ev.npu.dur_ns = dur;
	ev.npu.aux = aux;
	emit_count(s, &ev, d);
}

static int lat_moved(const struct xpu_npu_fn_lat *v)
{
	if (v->untimed)
		return 1;
	for (uint32_t b = 0; b < XPU_NPU_HIST_BUCKETS; b++)
		if (v->hist[b])
			return 1;
	return 0;
}

void xpu_npu_fns_read_lat(struct xpu_npu_fns *f, int mapfd, struct xpu_session *s, uint64_t now)
{
	struct xpu_npu_fn_lat v;
	if (!f->latency)
		return;
	if (!f->prev_lat && !(f->prev_lat = calloc(f->n, sizeof(*f->prev_lat))))
		return;
	for (uint32_t i = 0; i < f->n; i++) {
		if (bpf_map_lookup_elem(mapfd, &i, &v) < 0)
			continue;
		struct xpu_npu_fn_lat *p = f->prev_lat[i];
		if (!p) {
			if (!lat_moved(&v) || !(p = f->prev_lat[i] = calloc(1, sizeof(*p))))
				continue;
		}
		for (uint32_t b = 0; b < XPU_NPU_HIST_BUCKETS; b++)
			if (v.hist[b] > p->hist[b])
				emit_lat(f, s, i, v.hist[b] - p->hist[b], xpu_npu_hist_lower(b), 0, now);
		if (v.untimed > p->untimed)
			emit_lat(f, s, i, v.untimed - p->untimed, 0, XPU_NPU_FLAT_UNTIMED, now);
		*p = v;
	}
}

void xpu_npu_fns_free(struct xpu_npu_fns *f)
{
	if (!f)
		return;
	detach(f);
	if (f->prev_lat)
		for (size_t i = 0; i < f->n; i++)
			free(f->prev_lat[i]);
	free(f->prev_lat);
	free(f->links);
	for (size_t i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->cookies);
	free(f->ids);
	free(f->prev);
	xpu_htab_free(&f->prev_idx);
	free(f);
}
