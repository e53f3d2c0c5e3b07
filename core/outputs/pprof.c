/* SPDX-License-Identifier: GPL-2.0-only */
#include "pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dict.h"
#include "folded.h"
#include "grow.h"
#include "htab.h"
#include "profile.pb-c.h"
#include "session.h"
#include "symbolize.h"
#include "utf8.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Label Label;

/* A stack table entry's total when the last profile was taken. */
struct seen {
	uint32_t pid, tid, stack, comm;
	uint64_t total;
	uint64_t gen;		/* the profile that last saw it */
};

/* Every entry seen, by (pid, tid, stack). */
struct seenmap {
	struct seen *v;
	uint32_t n, cap;
	struct xpu_htab idx;
};

/* What a profile adds for a (process name, stack). */
struct delta {
	uint64_t key;		/* comm << 32 | stack */
	uint64_t weight;
};

/* A module's build-id, read once. */
struct buildid {
	uint32_t module;
	char hex[2 * 64 + 1];
};

struct xpu_pprof {
	enum xpu_window window;	/* the stack tables' view that holds every change since the last profile */
	struct seenmap seen[XPU_PPROF_KINDS];
	uint64_t gen[XPU_PPROF_KINDS];
	uint64_t since[XPU_PPROF_KINDS];
	struct buildid *ids;
	uint32_t nids, idcap;
	z_stream z;
	int z_ready;
};

struct xpu_pprof *xpu_pprof_new(int recent)
{
	struct xpu_pprof *p = calloc(1, sizeof(struct xpu_pprof));
	if (!p)
		return NULL;
	p->window = recent ? XPU_WIN_RECENT : XPU_WIN_ALL;
	for (int k = 0; k < XPU_PPROF_KINDS; k++)
		xpu_htab_init(&p->seen[k].idx);
	return p;
}

void xpu_pprof_free(struct xpu_pprof *p)
{
	if (!p)
		return;
	for (int k = 0; k < XPU_PPROF_KINDS; k++) {
		free(p->seen[k].v);
		xpu_htab_free(&p->seen[k].idx);
	}
	free(p->ids);
	if (p->z_ready)
		deflateEnd(&p->z);
	free(p);
}

const char *xpu_pprof_kind_name(enum xpu_pprof_kind kind)
{
	return kind == XPU_PPROF_GPU ? "gpu" : "cpu";
}

uint64_t xpu_pprof_since(const struct xpu_pprof *p, enum xpu_pprof_kind kind)
{
	return p->since[kind];
}

/* ---- what is new since the last profile ----
 *
 * Each stack table entry's total is remembered by (pid, tid, stack), so that
 * a process renaming itself moves nothing.  Only entries with weight in the
 * window are visited when the window is at least the interval (every change
 * since the last profile is in it): entries that age out or merge by name
 * when a process has exited (stacks.h) have none, so their weight, shown
 * already, is not shown again.  When every entry is visited, a merged
 * entry (pid 0) shows only what the entries that merged into it had not. */

struct walk {
	struct seenmap *m;
	uint64_t gen;
	int all;		/* every entry is visited */
	struct delta *v;
	uint32_t n, cap;
	struct seen *merged;	/* pid 0 entries, weighed once the vanished are known */
	uint32_t nmerged, mcap;
	int oom;
};

static int seen_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct seen *a = &((const struct seenmap *)ctx)->v[id], *b = key;
	return a->pid == b->pid && a->tid == b->tid && a->stack == b->stack;
}

static uint64_t seen_hash(const struct seen *s)
{
	uint32_t w[3] = { s->pid, s->tid, s->stack };
	return xpu_hash_u32s(w, 3, 0x9e3779b9);
}

static void add_delta(struct walk *w, uint32_t comm, uint32_t stack, uint64_t weight)
{
	if (!weight)
		return;
	if (xpu_grow((void **)&w->v, &w->cap, (size_t)w->n + 1, sizeof(*w->v)) < 0) {
		w->oom = 1;
		return;
	}
	w->v[w->n++] = (struct delta){ (uint64_t)comm << 32 | stack, weight };
}

/* The entry's record, added if new; *had: its total at the last profile. */
static struct seen *remember(struct walk *w, const struct xpu_stack_entry *e, uint64_t *had)
{
	struct seen key = { e->pid, e->tid, e->stack, e->comm, 0, 0 };
	uint64_t h = seen_hash(&key);
	uint32_t id = xpu_htab_find(&w->m->idx, h, seen_eq, w->m, &key);
	if (id == UINT32_MAX) {
		if (xpu_grow((void **)&w->m->v, &w->m->cap, (size_t)w->m->n + 1, sizeof(*w->m->v)) < 0 ||
		    xpu_htab_put(&w->m->idx, h, w->m->n) < 0) {
			w->oom = 1;
			return NULL;
		}
		id = w->m->n++;
		w->m->v[id] = key;
	}
	struct seen *s = &w->m->v[id];
	/* less than before: a stack id freed and used again for another path */
	*had = e->total >= s->total ? s->total : 0;
	s->total = e->total;
	s->comm = e->comm;
	s->gen = w->gen;
	return s;
}

static int visit(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct walk *w = arg;
	uint64_t had;
	if (!e->pid && !w->all)
		return 0;
	struct seen *s = remember(w, e, &had);
	if (!s)
		return 1;
	if (!e->pid) {	/* what merged into it is known after the walk */
		if (xpu_grow((void **)&w->merged, &w->mcap, (size_t)w->nmerged + 1, sizeof(*w->merged)) < 0) {
			w->oom = 1;
			return 1;
		}
		w->merged[w->nmerged] = *s;
		w->merged[w->nmerged++].total = e->total - had;
		return 0;
	}
	add_delta(w, e->comm, e->stack, e->total - had);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorted by key, weights of one key added up; returns the count left. */
static uint32_t merge_keys(struct delta *v, uint32_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_key);
	uint32_t k = 0;
	for (uint32_t i = 1; i < n; i++) {
		if (v[i].key == v[k].key)
			v[k].weight += v[i].weight;
		else
			v[++k] = v[i];
	}
	return k + 1;
}

/* Forgets entries not seen for a while once the map is twice the table. */
static int compact(struct seenmap *m, uint64_t gen, uint32_t live)
{
	if (m->n < 4096 || m->n < 2 * live)
		return 0;
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->n; i++)
		if (gen - m->v[i].gen < 60)
			m->v[k++] = m->v[i];
	m->n = k;
	xpu_htab_free(&m->idx);
	xpu_htab_init(&m->idx);
	for (uint32_t i = 0; i < k; i++)
		if (xpu_htab_put(&m->idx, seen_hash(&m->v[i]), i) < 0)
			return -1;
	return 0;
}

/* With every entry visited: the entries of exited processes that were
 * there at the last profile and are no more have merged into pid 0 by name
 * (stacks.h); what a merged entry gained less what they had shown is new. */
static int weigh_merged(struct walk *w)
{
	struct delta *gone = NULL;
	uint32_t ngone = 0, cap = 0;
	for (uint32_t i = 0; i < w->m->n; i++) {
		const struct seen *s = &w->m->v[i];
		if (s->pid && s->gen == w->gen - 1) {
			if (xpu_grow((void **)&gone, &cap, (size_t)ngone + 1, sizeof(*gone)) < 0)
				return free(gone), -1;
			gone[ngone++] = (struct delta){ (uint64_t)s->comm << 32 | s->stack, s->total };
		}
	}
	ngone = merge_keys(gone, ngone);
	for (uint32_t i = 0; i < w->nmerged; i++) {
		const struct seen *s = &w->merged[i];
		struct delta want = { (uint64_t)s->comm << 32 | s->stack, 0 }, *g;
		uint64_t gain = s->total;
		if (ngone && (g = bsearch(&want, gone, ngone, sizeof(want), by_key))) {
			uint64_t shown = g->weight < gain ? g->weight : gain;
			gain -= shown;
			g->weight -= shown;
		}
		add_delta(w, s->comm, s->stack, gain);
	}
	free(gone);
	return 0;
}

/* What each (process name, stack) gained since the last profile of the
 * kind, sorted by key. */
static int deltas(struct xpu_pprof *p, int kind, const struct xpu_stacks *st, struct delta **out, uint32_t *nout)
{
	struct walk w = { .m = &p->seen[kind], .gen = ++p->gen[kind], .all = p->window == XPU_WIN_ALL };
	xpu_stacks_each(st, p->window, 0, 0, visit, &w);
	int rc = w.oom || (w.all && weigh_merged(&w) < 0) || w.oom || compact(w.m, w.gen, st->n) < 0 ? -1 : 0;
	free(w.merged);
	if (rc < 0) {
		free(w.v);
		return -1;
	}
	*nout = merge_keys(w.v, w.n);
	*out = w.v;
	return 0;
}

/* ---- the profile's tables ---- */

struct enc {
	const struct xpu_dict *d;
	const struct xpu_symbolizer *sym;
	struct xpu_pprof *p;
	Profile pr;
	/* strings */
	char **strs;
	uint32_t nstr, strcap;
	struct xpu_htab str_idx;
	/* location (= function) of a frame id or a process name; mapping of a
	 * module: keyed by what << 32 | id */
	struct xpu_htab ids;
	uint64_t *id_keys;
	uint32_t *id_vals;
	uint32_t nids, idcap;
	Location *locs;
	Line *lines;
	Line **line_ptrs;
	Function *funcs;
	uint32_t nloc, loccap;
	Mapping *maps;
	uint32_t nmap, mapcap;
	Sample *samples;
	uint32_t nsamples, samplecap;
	uint64_t *locids;		/* every sample's location ids, in one array */
	size_t nlocids, locidcap;
	int64_t *values;
	Label *labels;
	Label **label_ptrs;
	int oom;
};

static int str_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct enc *e = ctx;
	return strcmp(e->strs[id], key) == 0;
}

enum { ID_FRAME = 0, ID_COMM = 1, ID_MODULE = 2 };

static int id_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct enc *)ctx)->id_keys[id] == *(const uint64_t *)key;
}

static uint32_t id_get(const struct enc *e, int what, uint32_t id)
{
	uint64_t key = (uint64_t)what << 32 | id;
	uint32_t i = xpu_htab_find(&e->ids, xpu_hash_u64(key), id_eq, e, &key);
	return i == UINT32_MAX ? 0 : e->id_vals[i];
}

static uint32_t id_put(struct enc *e, int what, uint32_t id, uint32_t val)
{
	uint64_t key = (uint64_t)what << 32 | id;
	uint32_t cap = e->idcap;
	if (xpu_grow((void **)&e->id_keys, &e->idcap, (size_t)e->nids + 1, sizeof(*e->id_keys)) < 0) {
		e->oom = 1;
		return val;
	}
	if (e->idcap != cap) {
		uint32_t *v = realloc(e->id_vals, e->idcap * sizeof(*v));
		if (!v) {
			e->oom = 1;
			return val;
		}
		e->id_vals = v;
	}
	if (xpu_htab_put(&e->ids, xpu_hash_u64(key), e->nids) < 0) {
		e->oom = 1;
		return val;
	}
	e->id_keys[e->nids] = key;
	e->id_vals[e->nids++] = val;
	return val;
}

/* The string table index of s (copied: protobuf strings are UTF-8, and Go's
 * pprof refuses a profile whose strings are not, so an invalid byte in a
 * name becomes U+FFFD). */
static int64_t str(struct enc *e, const char *s)
{
	char *copy = xpu_utf8_dup(s);
	if (!copy) {
		e->oom = 1;
		return 0;
	}
	uint64_t h = xpu_hash_bytes(copy, strlen(copy), 0);
	uint32_t id = xpu_htab_find(&e->str_idx, h, str_eq, e, copy);
	if (id != UINT32_MAX) {
		free(copy);
		return id;
	}
	if (xpu_grow((void **)&e->strs, &e->strcap, (size_t)e->nstr + 1, sizeof(*e->strs)) < 0 ||
	    xpu_htab_put(&e->str_idx, h, e->nstr) < 0) {
		free(copy);
		e->oom = 1;
		return 0;
	}
	e->strs[e->nstr] = copy;
	return e->nstr++;
}

static void build_id_hex(struct xpu_pprof *p, uint32_t module, const char *path, uint32_t pid, char *hex)
{
	hex[0] = '\0';
	for (uint32_t i = 0; i < p->nids; i++)
		if (p->ids[i].module == module) {
			strcpy(hex, p->ids[i].hex);
			return;
		}
	/* the file as the process sees it, else as we do */
	char where[4200];
	uint8_t id[64];
	size_t len = 0;
	snprintf(where, sizeof(where), "/proc/%u/root%s", pid, path);
	int fd = open(where, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (xpu_elf_fd_build_id(fd, id, sizeof(id), &len) < 0)
			len = 0;
		close(fd);
	}
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	hex[2 * len] = '\0';
	if (xpu_grow((void **)&p->ids, &p->idcap, (size_t)p->nids + 1, sizeof(*p->ids)) == 0) {
		p->ids[p->nids].module = module;
		strcpy(p->ids[p->nids++].hex, hex);
	}
}

/* The mapping of a module: its path and build-id where the symbolizer saw
 * the file, else its name. */
static uint32_t mapping(struct enc *e, uint32_t module)
{
	if (!module)
		return 0;
	uint32_t known = id_get(e, ID_MODULE, module);
	if (known)
		return known;
	if (xpu_grow((void **)&e->maps, &e->mapcap, (size_t)e->nmap + 1, sizeof(*e->maps)) < 0) {
		e->oom = 1;
		return 0;
	}
	uint32_t pid = 0;
	const char *path = xpu_sym_module_path(e->sym, module, &pid);
	char hex[2 * 64 + 1] = "";
	if (path)
		build_id_hex(e->p, module, path, pid, hex);
	Mapping *m = &e->maps[e->nmap];
	perftools__profiles__mapping__init(m);
	m->id = e->nmap + 1;
	m->filename = str(e, path ? path : xpu_dict_str_get(e->d, module));
	m->build_id = hex[0] ? str(e, hex) : 0;
	m->has_functions = 1;
	e->nmap++;
	return id_put(e, ID_MODULE, module, (uint32_t)m->id);
}

/* A location with one line of a function named `name`. */
static uint32_t location(struct enc *e, const char *name, uint32_t module)
{
	if (xpu_grow((void **)&e->locs, &e->loccap, (size_t)e->nloc + 1, sizeof(*e->locs)) < 0) {
		e->oom = 1;
		return 0;
	}
	uint32_t cap = e->loccap;	/* the parallel arrays follow the same capacity */
	Line *lines = realloc(e->lines, cap * sizeof(*lines));
	if (lines)
		e->lines = lines;
	Function *funcs = lines ? realloc(e->funcs, cap * sizeof(*funcs)) : NULL;
	if (funcs)
		e->funcs = funcs;
	Line **ptrs = funcs ? realloc(e->line_ptrs, cap * sizeof(*ptrs)) : NULL;
	if (!ptrs) {
		e->oom = 1;
		return 0;
	}
	e->line_ptrs = ptrs;
	uint32_t id = e->nloc + 1;
	Function *f = &e->funcs[e->nloc];
	perftools__profiles__function__init(f);
	f->id = id;
	f->name = f->system_name = str(e, name);
	f->filename = module ? str(e, xpu_dict_str_get(e->d, module)) : 0;
	Line *l = &e->lines[e->nloc];
	perftools__profiles__line__init(l);
	l->function_id = id;
	Location *loc = &e->locs[e->nloc];
	perftools__profiles__location__init(loc);
	loc->id = id;
	loc->mapping_id = mapping(e, module);
	e->nloc++;
	return id;
}

static uint32_t frame_location(struct enc *e, uint32_t frame)
{
	uint32_t known = id_get(e, ID_FRAME, frame);
	if (known)
		return known;
	char text[1100];
	const struct xpu_frame *f = xpu_dict_frame_get(e->d, frame);
	xpu_folded_frame(e->d, frame, text, sizeof(text));
	return id_put(e, ID_FRAME, frame, location(e, text, f ? f->module : 0));
}

static uint32_t comm_location(struct enc *e, uint32_t comm)
{
	uint32_t known = id_get(e, ID_COMM, comm);
	if (known)
		return known;
	const char *name = xpu_dict_str_get(e->d, comm);
	return id_put(e, ID_COMM, comm, location(e, name && *name ? name : "[unknown]", 0));
}

/* One sample: the stack leaf first, the process name at the root. */
static void sample(struct enc *e, uint32_t comm, uint32_t stack, int nvalues)
{
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(e->d, stack, &n);
	if (xpu_grow((void **)&e->samples, &e->samplecap, (size_t)e->nsamples + 1, sizeof(*e->samples)) < 0) {
		e->oom = 1;
		return;
	}
	while (e->nlocids + n + 1 > e->locidcap) {
		size_t cap = e->locidcap ? e->locidcap * 2 : 4096;
		uint64_t *v = realloc(e->locids, cap * sizeof(*v));
		if (!v) {
			e->oom = 1;
			return;
		}
		e->locids = v;
		e->locidcap = cap;
	}
	Sample *s = &e->samples[e->nsamples++];
	perftools__profiles__sample__init(s);
	s->location_id = (uint64_t *)(uintptr_t)e->nlocids;	/* an offset until the arrays stop moving */
	for (uint32_t i = n; i-- > 0;)
		if (frames[i] <= xpu_dict_nframes(e->d))
			e->locids[e->nlocids++] = frame_location(e, frames[i]);
	e->locids[e->nlocids++] = comm_location(e, comm);
	s->n_location_id = e->nlocids - (size_t)(uintptr_t)s->location_id;
	s->n_value = (size_t)nvalues;
	s->value = (int64_t *)(uintptr_t)(((size_t)e->nsamples - 1) * 2);	/* likewise */
	s->n_label = 1;
}

/* ---- encoding ---- */

/* One deflate state kept for every profile: setting one up allocates a
 * quarter of a megabyte, more than a second's profile takes to compress. */
static int gzip(struct xpu_pprof *p, const uint8_t *in, size_t n, uint8_t **out, size_t *len)
{
	z_stream *z = &p->z;
	if (!p->z_ready) {
		if (deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		p->z_ready = 1;
	} else if (deflateReset(z) != Z_OK) {
		return -1;
	}
	size_t cap = deflateBound(z, n) + 64;
	*out = malloc(cap);
	if (!*out)
		return -1;
	z->next_in = (uint8_t *)in;
	z->avail_in = (uInt)n;
	z->next_out = *out;
	z->avail_out = (uInt)cap;
	int rc = deflate(z, Z_FINISH);
	*len = z->total_out;
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static void enc_free(struct enc *e)
{
	for (uint32_t i = 0; i < e->nstr; i++)
		free(e->strs[i]);
	free(e->strs);
	xpu_htab_free(&e->str_idx);
	xpu_htab_free(&e->ids);
	free(e->id_keys);
	free(e->id_vals);
	free(e->locs);
	free(e->lines);
	free(e->line_ptrs);
	free(e->funcs);
	free(e->maps);
	free(e->samples);
	free(e->locids);
	free(e->values);
	free(e->labels);
	free(e->label_ptrs);
}

/* Points the messages at each other once no array moves any more; the
 * pointer arrays go in ptrs[0..3] (locations, functions, mappings, samples). */
static int link_tables(struct enc *e, void **ptrs, const int64_t *vals, int nvalues)
{
	Location **locs = ptrs[0] = malloc((e->nloc + 1) * sizeof(*locs));
	Function **funcs = ptrs[1] = malloc((e->nloc + 1) * sizeof(*funcs));
	Mapping **maps = ptrs[2] = malloc((e->nmap + 1) * sizeof(*maps));
	Sample **samples = ptrs[3] = malloc((e->nsamples + 1) * sizeof(*samples));
	e->labels = malloc((e->nsamples + 1) * sizeof(*e->labels));
	e->label_ptrs = malloc((e->nsamples + 1) * sizeof(*e->label_ptrs));
	e->values = malloc(((size_t)e->nsamples * 2 + 1) * sizeof(*e->values));
	if (!locs || !funcs || !maps || !samples || !e->labels || !e->label_ptrs || !e->values)
		return -1;
	for (uint32_t i = 0; i < e->nloc; i++) {
		e->line_ptrs[i] = &e->lines[i];
		e->locs[i].n_line = 1;
		e->locs[i].line = &e->line_ptrs[i];
		locs[i] = &e->locs[i];
		funcs[i] = &e->funcs[i];
	}
	for (uint32_t i = 0; i < e->nmap; i++)
		maps[i] = &e->maps[i];
	int64_t comm_key = str(e, "comm");
	for (uint32_t i = 0; i < e->nsamples; i++) {
		Sample *s = &e->samples[i];
		s->location_id = e->locids + (size_t)(uintptr_t)s->location_id;
		memcpy(&e->values[2 * i], &vals[2 * i], (size_t)nvalues * sizeof(int64_t));
		s->value = &e->values[2 * i];
		/* a "comm" label: the process name, the root location's function */
		perftools__profiles__label__init(&e->labels[i]);
		e->labels[i].key = comm_key;
		e->labels[i].str = e->funcs[s->location_id[s->n_location_id - 1] - 1].name;
		e->label_ptrs[i] = &e->labels[i];
		s->label = &e->label_ptrs[i];
		samples[i] = s;
	}
	e->pr.sample = samples;
	e->pr.n_sample = e->nsamples;
	e->pr.location = locs;
	e->pr.n_location = e->nloc;
	e->pr.function = funcs;
	e->pr.n_function = e->nloc;
	e->pr.mapping = maps;
	e->pr.n_mapping = e->nmap;
	e->pr.string_table = e->strs;
	e->pr.n_string_table = e->nstr;
	return e->oom ? -1 : 0;
}

int xpu_pprof_encode(struct xpu_pprof *p, const struct xpu_session *sess, const struct xpu_symbolizer *sym,
		     enum xpu_pprof_kind kind, uint64_t now_wall, uint8_t **out, size_t *len, uint64_t *nsamples)
{
	const struct xpu_stacks *stacks = kind == XPU_PPROF_GPU ? &sess->gpu.stacks : &sess->cpu.stacks;
	const struct xpu_dict *d = &sess->dict;
	struct enc e = { .d = d, .sym = sym, .p = p };
	int64_t *vals = NULL;
	int rc = -1;
	*out = NULL;
	*nsamples = 0;
	struct delta *dv = NULL;
	uint32_t nd = 0;
	if (deltas(p, kind, stacks, &dv, &nd) < 0)
		goto out;
	xpu_htab_init(&e.str_idx);
	perftools__profiles__profile__init(&e.pr);
	str(&e, "");
	xpu_htab_init(&e.ids);
	vals = malloc(((size_t)nd * 2 + 1) * sizeof(*vals));
	if (!vals)
		goto out;
	/* CPU: samples and their CPU time; GPU: nanoseconds of kernel time */
	uint64_t period = sess->cfg.sample_hz ? 1000000000ULL / sess->cfg.sample_hz : 0;
	int nv = kind == XPU_PPROF_GPU ? 1 : 2;
	for (uint32_t i = 0; i < nd && !e.oom; i++) {
		uint32_t comm = (uint32_t)(dv[i].key >> 32), stack = (uint32_t)dv[i].key;
		if (!dv[i].weight || comm > xpu_dict_nstr(d))
			continue;
		vals[2 * e.nsamples] = (int64_t)dv[i].weight;
		vals[2 * e.nsamples + 1] = (int64_t)(dv[i].weight * period);
		sample(&e, comm, stack, nv);
		*nsamples += dv[i].weight;
	}
	ValueType st[2], pt;
	ValueType *stp[2] = { &st[0], &st[1] };
	for (int i = 0; i < 2; i++)
		perftools__profiles__value_type__init(&st[i]);
	perftools__profiles__value_type__init(&pt);
	if (kind == XPU_PPROF_GPU) {
		st[0].type = str(&e, "gpu_time");
		st[0].unit = str(&e, "nanoseconds");
		pt = st[0];
		e.pr.period = 1;
	} else {
		st[0].type = str(&e, "samples");
		st[0].unit = str(&e, "count");
		st[1].type = str(&e, "cpu");
		st[1].unit = str(&e, "nanoseconds");
		pt = st[1];
		e.pr.period = (int64_t)period;
	}
	e.pr.sample_type = stp;
	e.pr.n_sample_type = (size_t)nv;
	e.pr.period_type = &pt;
	uint64_t since = p->since[kind] ? p->since[kind] : now_wall - sess->cpu.ticks.total_ns;
	e.pr.time_nanos = (int64_t)since;
	e.pr.duration_nanos = (int64_t)(now_wall > since ? now_wall - since : 0);
	if (e.oom)
		goto out;
	void *ptrs[4] = { NULL };
	if (link_tables(&e, ptrs, vals, nv) == 0) {
		size_t n = perftools__profiles__profile__get_packed_size(&e.pr);
		uint8_t *buf = malloc(n ? n : 1);
		if (buf) {
			perftools__profiles__profile__pack(&e.pr, buf);
			rc = gzip(p, buf, n, out, len);
			free(buf);
		}
	}
	for (int i = 0; i < 4; i++)
		free(ptrs[i]);
	if (rc == 0)	/* this profile's end is the next one's start */
		p->since[kind] = now_wall;
out:
	free(vals);
	free(dv);
	enc_free(&e);
	return rc;
}
