/* SPDX-License-Identifier: GPL-2.0-only */
/* The ELF cache (elfcache.h): entries by file identity, tables read on the
 * service thread, names demangled inline within a budget or in batches on
 * the service thread, and the pending frames that stand in meanwhile. */
#include "elfcache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "err.h"
#include "grow.h"
#include "htab.h"
#include "readfile.h"
#include "service.h"
#include "symfiles.h"

#define ELF_CACHE_MAX 512
#define ELF_CACHE_BYTES (64u << 20)	/* tables kept, all files together */
#define PENDING_MAX 65536		/* pending frames of one file at a time */
#define REQ_MAX 65536			/* names asked for, not sent to the service yet */
#define NAME_BATCH 512			/* names in one service job */
/* Inline naming may take this share of each refresh interval (1/50: 2%, 20 ms
 * a second); past it names are demangled on the service thread. */
#define NAME_SHARE 50
#define NAME_LEN 8192

enum { ENT_FREE = 0, ENT_LOADING, ENT_READY };

struct wait {
	uint64_t off;
	uint32_t frame;
};

struct pend {
	uint32_t si, frame;
};

struct ent {
	uint64_t dev, ino;
	struct xpu_filesig sig;		/* of the file the table was read from */
	int state;
	uint32_t gen;			/* new table, new generation: late names of the old one are not its */
	struct xpu_elf *elf;		/* READY: NULL when the file is not a readable ELF */
	uint32_t *names;		/* per symbol: dict string of its name, 0 = not known yet */
	struct wait *waits;		/* LOADING: addresses waiting for the table */
	uint32_t nwaits, wcap;
	struct pend *pend;		/* READY: symbols being named on the service thread */
	uint32_t npend, pcap;
	struct xpu_htab pidx;
	uint64_t last_use;
};

struct name_req {
	uint32_t slot, gen, si, frame, module;
};

struct xpu_elfcache {
	struct xpu_dict *dict;
	struct xpu_service *svc;
	uint32_t unknown_name;
	struct ent *ents;
	uint32_t nents;
	struct xpu_htab idx;
	size_t budget;
	int64_t name_budget_ns;
	struct name_req *req;
	uint32_t nreq, req_cap;
	struct xpu_elfcache_stats st;
	char buf[NAME_LEN], demangled[NAME_LEN];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- frames ---- */

static uint32_t unknown(struct xpu_elfcache *c, uint32_t module)
{
	return xpu_dict_frame(c->dict, XPU_FRAME_UNKNOWN, c->unknown_name, module);
}

static uint32_t named(struct xpu_elfcache *c, uint32_t name, uint32_t module)
{
	uint32_t f = name ? xpu_dict_frame(c->dict, XPU_FRAME_USER, name, module) : 0;
	return f ? f : unknown(c, module);
}

/* "libtorch_cpu.so+0x1a2b": what an address shows until its name is known. */
static uint32_t pending(struct xpu_elfcache *c, uint32_t module, uint64_t off)
{
	char label[300];
	snprintf(label, sizeof(label), "%s+0x%llx", xpu_dict_str_get(c->dict, module), (unsigned long long)off);
	c->st.pending++;
	return xpu_dict_frame_pending(c->dict, XPU_FRAME_UNKNOWN, xpu_dict_cstr(c->dict, label), module);
}

static void expand(struct xpu_elfcache *c, uint32_t frame, uint32_t to)
{
	if (frame && to && frame != to)
		xpu_dict_frame_expand(c->dict, frame, &to, 1);
}

static uint32_t module_of(const struct xpu_elfcache *c, uint32_t frame)
{
	const struct xpu_frame *f = xpu_dict_frame_get(c->dict, frame);
	return f ? f->module : 0;
}

/* ---- entries ---- */

struct file_key {
	uint64_t dev, ino;
};

static int ent_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct xpu_elfcache *c = ctx;
	const struct file_key *k = key;
	return c->ents[i].state != ENT_FREE && c->ents[i].dev == k->dev && c->ents[i].ino == k->ino;
}

static uint64_t key_hash(uint64_t dev, uint64_t ino)
{
	return xpu_hash_u64(dev * 0x9e3779b97f4a7c15ULL ^ ino);
}

static size_t ent_bytes(const struct ent *e)
{
	return xpu_elf_bytes(e->elf) + (e->names ? xpu_elf_nsyms(e->elf) * sizeof(uint32_t) : 0);
}

/* Drops the table (not the entry): names asked for keep their own reference
 * and still expand their frames. */
static void ent_clear(struct ent *e)
{
	xpu_elf_free(e->elf);
	e->elf = NULL;
	free(e->names);
	e->names = NULL;
	free(e->waits);
	e->waits = NULL;
	e->nwaits = e->wcap = 0;
	free(e->pend);
	e->pend = NULL;
	e->npend = e->pcap = 0;
	xpu_htab_free(&e->pidx);
	xpu_htab_init(&e->pidx);
	e->gen++;
}

static void ent_remove(struct xpu_elfcache *c, uint32_t i)
{
	struct ent *e = &c->ents[i];
	xpu_htab_del(&c->idx, key_hash(e->dev, e->ino), i);
	ent_clear(e);
	e->state = ENT_FREE;
	e->last_use = 0;
}

/* An entry may go unless it waits for its table or for names. */
static int evictable(const struct ent *e)
{
	return e->state == ENT_READY && !e->npend;
}

/* A slot for a new entry: a free one, or the least recently used one's. */
static uint32_t new_slot(struct xpu_elfcache *c)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; i < c->nents; i++) {
		if (c->ents[i].state == ENT_FREE)
			return i;
		if (evictable(&c->ents[i]) && (best == UINT32_MAX || c->ents[i].last_use < c->ents[best].last_use))
			best = i;
	}
	if (c->nents < ELF_CACHE_MAX)
		return c->nents++;
	if (best != UINT32_MAX) {
		ent_remove(c, best);
		c->st.evicted++;
	}
	return best;
}

/* Keeps the tables within the byte budget: the least recently used files
 * other than `keep` are dropped (a file bigger than the whole budget stays
 * while it is the one in use). */
static void enforce_budget(struct xpu_elfcache *c, uint32_t keep)
{
	size_t total = 0;
	for (uint32_t i = 0; i < c->nents; i++)
		total += ent_bytes(&c->ents[i]);
	while (total > c->budget) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < c->nents; i++)
			if (i != keep && c->ents[i].elf && evictable(&c->ents[i]) &&
			    (best == UINT32_MAX || c->ents[i].last_use < c->ents[best].last_use))
				best = i;
		if (best == UINT32_MAX)
			return;
		total -= ent_bytes(&c->ents[best]);
		ent_remove(c, best);
		c->st.evicted++;
	}
}

/* ---- names ---- */

/* The symbol's display name, read from the file and demangled; 0 if none. */
static uint32_t read_name(struct xpu_elfcache *c, const struct xpu_elf *elf, uint32_t si)
{
	if (!xpu_elf_sym_name(elf, si, c->buf, sizeof(c->buf)))
		return 0;
	size_t n = xpu_demangle(c->buf, c->demangled, sizeof(c->demangled));
	return xpu_dict_str(c->dict, c->demangled, n);
}

static int pend_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct ent *e = ctx;
	return e->pend[i].si == *(const uint32_t *)key;
}

static struct pend *pend_find(struct ent *e, uint32_t si)
{
	uint32_t i = xpu_htab_find(&e->pidx, xpu_hash_u64(si), pend_eq, e, &si);
	return i == UINT32_MAX ? NULL : &e->pend[i];
}

static void pend_drop(struct ent *e, uint32_t si)
{
	uint32_t i = xpu_htab_find(&e->pidx, xpu_hash_u64(si), pend_eq, e, &si);
	if (i == UINT32_MAX)
		return;
	uint32_t last = e->npend - 1;
	xpu_htab_del(&e->pidx, xpu_hash_u64(si), i);
	if (i != last) {
		xpu_htab_del(&e->pidx, xpu_hash_u64(e->pend[last].si), last);
		e->pend[i] = e->pend[last];
		xpu_htab_put(&e->pidx, xpu_hash_u64(e->pend[i].si), i);
	}
	e->npend--;
}

/* Asks for symbol si's name on the service thread, `frame` standing in for
 * it; returns the frame that stands in (an earlier one for the same symbol,
 * if any), or 0 when nothing more can wait. */
static uint32_t ask_name(struct xpu_elfcache *c, uint32_t slot, uint32_t si, uint32_t module,
			 uint64_t off, uint32_t frame)
{
	struct ent *e = &c->ents[slot];
	struct pend *p = pend_find(e, si);
	if (p) {
		expand(c, frame, p->frame);
		return p->frame;
	}
	if (c->nreq >= REQ_MAX || e->npend >= PENDING_MAX ||
	    xpu_grow((void **)&c->req, &c->req_cap, c->nreq + 1, sizeof(*c->req)) ||
	    xpu_grow((void **)&e->pend, &e->pcap, e->npend + 1, sizeof(*e->pend)))
		return 0;
	if (!frame && !(frame = pending(c, module, off)))
		return 0;
	if (xpu_htab_put(&e->pidx, xpu_hash_u64(si), e->npend) < 0)
		return 0;
	e->pend[e->npend++] = (struct pend){ si, frame };
	c->req[c->nreq++] = (struct name_req){ slot, e->gen, si, frame, module };
	return frame;
}

/* The frame of file offset off in a READY entry's table.  `frame`, when not
 * 0, is a pending frame that must end up as (or expand into) the answer. */
static uint32_t sym_frame(struct xpu_elfcache *c, uint32_t slot, uint64_t off, uint32_t module,
			  uint32_t frame, int may_inline)
{
	struct ent *e = &c->ents[slot];
	uint64_t vaddr;
	uint32_t si, out;
	if (xpu_elf_offset_to_vaddr(e->elf, off, &vaddr) < 0 ||
	    (si = xpu_elf_find(e->elf, vaddr, NULL)) == UINT32_MAX) {
		out = unknown(c, module);
	} else if (!e->names && !(e->names = calloc(xpu_elf_nsyms(e->elf), sizeof(uint32_t)))) {
		out = unknown(c, module);
	} else if (e->names[si]) {
		out = named(c, e->names[si], module);
	} else if (!c->svc || (may_inline && c->name_budget_ns > 0)) {
		uint64_t t0 = now_ns();
		e->names[si] = read_name(c, e->elf, si);
		c->name_budget_ns -= (int64_t)(now_ns() - t0);
		c->st.names_inline++;
		out = named(c, e->names[si], module);
	} else if ((out = ask_name(c, slot, si, module, off, frame))) {
		return out;
	} else {
		c->st.overflow++;
		out = unknown(c, module);
	}
	expand(c, frame, out);
	return out;
}

/* ---- name jobs ---- */

struct name_job {
	struct xpu_service_job job;
	struct xpu_elfcache *c;
	struct xpu_elf *elf;
	uint32_t n;
	struct name_req *req;
	char **names;		/* demangled, on the service thread */
};

static void name_work(struct xpu_service_job *job)
{
	struct name_job *j = (struct name_job *)job;
	char raw[NAME_LEN], out[NAME_LEN];
	for (uint32_t i = 0; i < j->n; i++) {
		if (!xpu_elf_sym_name(j->elf, j->req[i].si, raw, sizeof(raw)))
			continue;
		size_t n = xpu_demangle(raw, out, sizeof(out));
		j->names[i] = strndup(out, n);
	}
}

static void name_done(struct xpu_service_job *job)
{
	struct name_job *j = (struct name_job *)job;
	struct xpu_elfcache *c = j->c;
	for (uint32_t i = 0; i < j->n; i++) {
		const struct name_req *r = &j->req[i];
		struct ent *e = &c->ents[r->slot];
		uint32_t name = j->names[i] ? xpu_dict_cstr(c->dict, j->names[i]) : 0;
		int same = e->state == ENT_READY && e->gen == r->gen;
		if (job->ran && same && e->names)
			e->names[r->si] = name;
		if (same)
			pend_drop(e, r->si);
		/* A job the service never ran leaves its frames for the names asked anew. */
		if (job->ran)
			expand(c, r->frame, named(c, name, r->module));
		c->st.names_async += job->ran;
		free(j->names[i]);
	}
	xpu_elf_free(j->elf);
	free(j->names);
	free(j->req);
	free(j);
}

static int cmp_req(const void *a, const void *b)
{
	const struct name_req *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* Requests [from, to) of one entry and generation as one job; 0 or -1. */
static int submit_names(struct xpu_elfcache *c, uint32_t from, uint32_t to)
{
	const struct name_req *r = &c->req[from];
	struct ent *e = &c->ents[r->slot];
	struct name_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -1;
	j->c = c;
	j->n = to - from;
	j->req = malloc(j->n * sizeof(*j->req));
	j->names = calloc(j->n, sizeof(*j->names));
	j->job.work = name_work;
	j->job.done = name_done;
	int gone = e->state != ENT_READY || e->gen != r->gen || !e->elf;
	if (!j->req || !j->names || gone) {
		free(j->req);
		free(j->names);
		free(j);
		if (!gone)
			return -1;
		/* The table these were asked of was dropped: no name will come. */
		for (uint32_t i = from; i < to; i++)
			expand(c, c->req[i].frame, unknown(c, c->req[i].module));
		return 0;
	}
	memcpy(j->req, r, j->n * sizeof(*j->req));
	j->elf = xpu_elf_ref(e->elf);
	if (xpu_service_submit(c->svc, &j->job) < 0) {
		xpu_elf_free(j->elf);
		free(j->req);
		free(j->names);
		free(j);
		c->st.refused++;
		return -1;
	}
	return 0;
}

void xpu_elfcache_flush(struct xpu_elfcache *c)
{
	uint32_t kept = 0, i = 0;
	if (!c->nreq || !c->svc)
		return;
	qsort(c->req, c->nreq, sizeof(*c->req), cmp_req);
	while (i < c->nreq) {
		uint32_t j = i + 1;
		while (j < c->nreq && j - i < NAME_BATCH && c->req[j].slot == c->req[i].slot &&
		       c->req[j].gen == c->req[i].gen)
			j++;
		if (submit_names(c, i, j) < 0) {	/* the queue is full: try again later */
			memmove(c->req + kept, c->req + i, (j - i) * sizeof(*c->req));
			kept += j - i;
		}
		i = j;
	}
	c->nreq = kept;
}

/* ---- tables ---- */

struct load_job {
	struct xpu_service_job job;
	struct xpu_elfcache *c;
	uint32_t slot, gen;
	int fd;
	char *path;
	struct xpu_elf *elf;
	char err[256];
};

static struct xpu_elf *load_now(struct xpu_elfcache *c, int fd, const char *path, char *err,
				size_t errlen)
{
	struct xpu_elf *e = xpu_elf_load_fd_path(fd, path, err, errlen);
	if (e)
		c->st.loaded++;
	else
		c->st.failed++;
	return e;
}

/* The table is there: every address that waited for it gets its frame. */
static void install(struct xpu_elfcache *c, uint32_t slot, struct xpu_elf *elf)
{
	struct ent *e = &c->ents[slot];
	struct wait *waits = e->waits;
	uint32_t n = e->nwaits;
	e->waits = NULL;
	e->nwaits = e->wcap = 0;
	e->elf = elf;
	e->state = ENT_READY;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t module = module_of(c, waits[i].frame);
		if (elf)
			sym_frame(c, slot, waits[i].off, module, waits[i].frame, 0);
		else
			expand(c, waits[i].frame, unknown(c, module));
	}
	free(waits);
	enforce_budget(c, slot);
}

static void load_work(struct xpu_service_job *job)
{
	struct load_job *j = (struct load_job *)job;
	j->elf = xpu_elf_load_fd_path(j->fd, j->path, j->err, sizeof(j->err));
}

static void load_done(struct xpu_service_job *job)
{
	struct load_job *j = (struct load_job *)job;
	struct xpu_elfcache *c = j->c;
	struct ent *e = &c->ents[j->slot];
	if (job->ran) {
		if (j->elf)
			c->st.loaded++;
		else
			c->st.failed++;
		if (!j->elf)
			xpu_debug("no symbols from %s: %s", j->path, j->err);
	}
	c->st.loading--;
	if (e->state == ENT_LOADING && e->gen == j->gen)
		install(c, j->slot, j->elf);
	else
		xpu_elf_free(j->elf);
	close(j->fd);
	free(j->path);
	free(j);
}

/* Starts reading the table of entry slot from fd (taken over). */
static void start_load(struct xpu_elfcache *c, uint32_t slot, int fd, const char *path)
{
	struct ent *e = &c->ents[slot];
	struct stat st;
	char err[256];
	if (fstat(fd, &st) == 0)
		e->sig = xpu_filesig_of(&st);
	e->state = ENT_LOADING;
	struct load_job *j = c->svc ? calloc(1, sizeof(*j)) : NULL;
	if (j) {
		*j = (struct load_job){ .job = { .work = load_work, .done = load_done }, .c = c,
					.slot = slot, .gen = e->gen, .fd = fd,
					.path = path ? strdup(path) : NULL };
		if ((!path || j->path) && xpu_service_submit(c->svc, &j->job) == 0) {
			c->st.loading++;
			return;
		}
		free(j->path);
		free(j);
		c->st.refused++;
	}
	/* No service (or it refused): read it here, as a tool would. */
	struct xpu_elf *elf = load_now(c, fd, path, err, sizeof(err));
	if (!elf)
		xpu_debug("no symbols from %s: %s", path ? path : "?", err);
	close(fd);
	install(c, slot, elf);
}

static uint32_t wait_frame(struct xpu_elfcache *c, struct ent *e, uint64_t off, uint32_t module)
{
	uint32_t f;
	if (e->nwaits >= PENDING_MAX || xpu_grow((void **)&e->waits, &e->wcap, e->nwaits + 1, sizeof(*e->waits)) ||
	    !(f = pending(c, module, off))) {
		c->st.overflow++;
		return unknown(c, module);
	}
	e->waits[e->nwaits++] = (struct wait){ off, f };
	return f;
}

static int stale(const struct ent *e, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	struct xpu_filesig sig = xpu_filesig_of(&st);
	return memcmp(&sig, &e->sig, sizeof(sig)) != 0;
}

/* The entry of f, created (and its table asked for) on first use; UINT32_MAX
 * when the file cannot be opened (not cached: another process may reach it). */
static uint32_t ent_get(struct xpu_elfcache *c, const struct xpu_elffile *f, int verify)
{
	struct file_key k = { f->dev, f->ino };
	uint64_t h = key_hash(f->dev, f->ino);
	uint32_t slot = xpu_htab_find(&c->idx, h, ent_eq, c, &k);
	if (slot != UINT32_MAX && !(verify && c->ents[slot].state == ENT_READY))
		return slot;
	int fd = f->open(f->arg);
	if (slot != UINT32_MAX) {
		if (fd >= 0 && stale(&c->ents[slot], fd)) {
			ent_clear(&c->ents[slot]);
			start_load(c, slot, fd, f->path);
		} else if (fd >= 0) {
			close(fd);
		}
		return slot;
	}
	if (fd < 0)
		return UINT32_MAX;
	if ((slot = new_slot(c)) == UINT32_MAX || xpu_htab_put(&c->idx, h, slot) < 0) {
		close(fd);
		return UINT32_MAX;
	}
	struct ent *e = &c->ents[slot];
	uint32_t gen = e->gen + 1;
	*e = (struct ent){ .dev = f->dev, .ino = f->ino, .gen = gen, .state = ENT_LOADING };
	xpu_htab_init(&e->pidx);
	start_load(c, slot, fd, f->path);
	return slot;
}

int xpu_elfcache_frame(struct xpu_elfcache *c, const struct xpu_elffile *f, uint64_t off, int verify,
		       uint64_t clock, uint32_t *frame)
{
	uint32_t slot = ent_get(c, f, verify);
	if (slot == UINT32_MAX)
		return XPU_ELF_NOT_ELF;
	struct ent *e = &c->ents[slot];
	e->last_use = clock;
	if (e->state == ENT_LOADING) {
		*frame = wait_frame(c, e, off, f->module);
		return XPU_ELF_OK;
	}
	if (!e->elf)
		return XPU_ELF_NOT_ELF;
	*frame = sym_frame(c, slot, off, f->module, 0, 1);
	if (c->nreq >= NAME_BATCH)
		xpu_elfcache_flush(c);
	return XPU_ELF_OK;
}

void xpu_elfcache_tick(struct xpu_elfcache *c, uint64_t interval_ns)
{
	c->name_budget_ns = (int64_t)(interval_ns / NAME_SHARE);
	xpu_elfcache_flush(c);
}

/* ---- lifecycle ---- */

struct xpu_elfcache *xpu_elfcache_new(struct xpu_dict *dict, struct xpu_service *svc, uint32_t unknown_name)
{
	struct xpu_elfcache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->dict = dict;
	c->svc = svc;
	c->unknown_name = unknown_name;
	c->budget = ELF_CACHE_BYTES;
	c->name_budget_ns = 20000000;	/* until the first tick says the interval */
	c->ents = calloc(ELF_CACHE_MAX, sizeof(*c->ents));
	xpu_htab_init(&c->idx);
	if (!c->ents) {
		free(c);
		return NULL;
	}
	return c;
}

void xpu_elfcache_free(struct xpu_elfcache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nents; i++)
		ent_clear(&c->ents[i]);
	free(c->ents);
	free(c->req);
	xpu_htab_free(&c->idx);
	free(c);
}

void xpu_elfcache_set_budget(struct xpu_elfcache *c, size_t bytes)
{
	c->budget = bytes;
}

void xpu_elfcache_stats(const struct xpu_elfcache *c, struct xpu_elfcache_stats *st)
{
	*st = c->st;
	st->cached = 0;
	st->bytes = 0;
	for (uint32_t i = 0; i < c->nents; i++) {
		st->cached += c->ents[i].state != ENT_FREE;
		st->bytes += ent_bytes(&c->ents[i]);
	}
}
