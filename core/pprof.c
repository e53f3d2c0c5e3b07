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
	struct seen *seen[XPU_PPROF_KINDS];
	uint32_t nseen[XPU_PPROF_KINDS];
	uint64_t since[XPU_PPROF_KINDS];
	struct buildid *ids;
	uint32_t nids, idcap;
};

struct xpu_pprof *xpu_pprof_new(void)
{
	return calloc(1, sizeof(struct xpu_pprof));
}

void xpu_pprof_free(struct xpu_pprof *p)
{
	if (!p)
		return;
	for (int k = 0; k < XPU_PPROF_KINDS; k++)
		free(p->seen[k]);
	free(p->ids);
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
 * Entries are followed by (pid, tid, stack), so that a process renaming
 * itself moves nothing.  When an exited process's entries merge into pid 0
 * by name (stacks.h), the merged entry starts from what they had shown. */

struct totals {
	struct seen *v;
	uint32_t n, cap;
	int oom;
};

static int add_total(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct totals *t = arg;
	if (xpu_grow((void **)&t->v, &t->cap, (size_t)t->n + 1, sizeof(*t->v)) < 0) {
		t->oom = 1;
		return 1;
	}
	t->v[t->n++] = (struct seen){ e->pid, e->tid, e->stack, e->comm, weight };
	return 0;
}

static int by_entry(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
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

static const struct seen *find_entry(const struct seen *v, uint32_t n, const struct seen *want)
{
	return n ? bsearch(want, v, n, sizeof(*v), by_entry) : NULL;
}

static struct delta *find_key(struct delta *v, uint32_t n, uint64_t key)
{
	struct delta want = { key, 0 };
	return n ? bsearch(&want, v, n, sizeof(*v), by_key) : NULL;
}

/* What each (process name, stack) gained since the last profile of the
 * kind, sorted by key, in *out; now holds the current totals (sorted). */
static int deltas(const struct xpu_pprof *p, int kind, struct totals *now, struct delta **out, uint32_t *nout)
{
	const struct seen *prev = p->seen[kind];
	uint32_t nprev = p->nseen[kind];
	struct delta *gone = calloc((size_t)nprev + 1, sizeof(*gone));
	struct delta *d = calloc((size_t)now->n + 1, sizeof(*d));
	if (!gone || !d) {
		free(gone);
		free(d);
		return -1;
	}
	if (now->n)
		qsort(now->v, now->n, sizeof(*now->v), by_entry);
	/* entries of exited processes that are no more: merged by name */
	uint32_t ngone = 0;
	for (uint32_t i = 0; i < nprev; i++)
		if (prev[i].pid && !find_entry(now->v, now->n, &prev[i]))
			gone[ngone++] = (struct delta){ (uint64_t)prev[i].comm << 32 | prev[i].stack, prev[i].total };
	ngone = merge_keys(gone, ngone);
	for (uint32_t i = 0; i < now->n; i++) {
		const struct seen *e = &now->v[i], *before = find_entry(prev, nprev, e);
		uint64_t key = (uint64_t)e->comm << 32 | e->stack, had = before ? before->total : 0;
		struct delta *g = e->pid ? NULL : find_key(gone, ngone, key);
		if (g) {
			had += g->weight;
			g->weight = 0;
		}
		d[i] = (struct delta){ key, e->total > had ? e->total - had : 0 };
	}
	free(gone);
	*nout = merge_keys(d, now->n);
	*out = d;
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
	/* location (= function) per frame id, per comm root; mapping per module */
	uint32_t *loc_of_frame, *loc_of_comm, *map_of_module;
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

/* The string table index of s (copied). */
static int64_t str(struct enc *e, const char *s)
{
	uint64_t h = xpu_hash_bytes(s, strlen(s), 0);
	uint32_t id = xpu_htab_find(&e->str_idx, h, str_eq, e, s);
	if (id != UINT32_MAX)
		return id;
	char *copy = strdup(s);
	if (!copy || xpu_grow((void **)&e->strs, &e->strcap, (size_t)e->nstr + 1, sizeof(*e->strs)) < 0 ||
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
	if (e->map_of_module[module])
		return e->map_of_module[module];
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
	return e->map_of_module[module] = (uint32_t)m->id;
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
	if (e->loc_of_frame[frame])
		return e->loc_of_frame[frame];
	char text[1100];
	const struct xpu_frame *f = xpu_dict_frame_get(e->d, frame);
	xpu_folded_frame(e->d, frame, text, sizeof(text));
	return e->loc_of_frame[frame] = location(e, text, f ? f->module : 0);
}

static uint32_t comm_location(struct enc *e, uint32_t comm)
{
	if (e->loc_of_comm[comm])
		return e->loc_of_comm[comm];
	const char *name = xpu_dict_str_get(e->d, comm);
	return e->loc_of_comm[comm] = location(e, name && *name ? name : "[unknown]", 0);
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

static int gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *len)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	size_t cap = deflateBound(&z, n) + 64;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
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
	free(e->loc_of_frame);
	free(e->loc_of_comm);
	free(e->map_of_module);
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
	struct totals t = { 0 };
	struct enc e = { .d = d, .sym = sym, .p = p };
	int64_t *vals = NULL;
	int rc = -1;
	*out = NULL;
	*nsamples = 0;
	struct delta *dv = NULL;
	uint32_t nd = 0;
	xpu_stacks_each(stacks, XPU_WIN_ALL, 0, 0, add_total, &t);
	if (t.oom || deltas(p, kind, &t, &dv, &nd) < 0)
		goto out;
	xpu_htab_init(&e.str_idx);
	perftools__profiles__profile__init(&e.pr);
	str(&e, "");
	e.loc_of_frame = calloc(xpu_dict_nframes(d) + 1, sizeof(uint32_t));
	e.loc_of_comm = calloc(xpu_dict_nstr(d) + 1, sizeof(uint32_t));
	e.map_of_module = calloc(xpu_dict_nstr(d) + 1, sizeof(uint32_t));
	vals = malloc(((size_t)nd * 2 + 1) * sizeof(*vals));
	if (!e.loc_of_frame || !e.loc_of_comm || !e.map_of_module || !vals)
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
			rc = gzip(buf, n, out, len);
			free(buf);
		}
	}
	for (int i = 0; i < 4; i++)
		free(ptrs[i]);
	if (rc == 0) {	/* what this profile held is the next one's start */
		free(p->seen[kind]);
		p->seen[kind] = t.v;
		p->nseen[kind] = t.n;
		p->since[kind] = now_wall;
		t.v = NULL;
	}
out:
	free(vals);
	free(dv);
	free(t.v);
	enc_free(&e);
	return rc;
}
