/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_waits.h"

#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "gpu_stitch.h"
#include "grow.h"
#include "htab.h"

/* Waits kept at once, all processes together: a training step has one. */
#define MAX_WAITS 4096
/* A wait that ended is kept this long for the launches made in it that are
 * still on their way (the library sends them in batches). */
#define KEEP_NS (5ULL * 1000000000ULL)
/* A call site whose frames have names still coming is trimmed once they
 * have come, or stitched whole after this long. */
#define TAIL_WAIT_NS (10ULL * 1000000000ULL)
#define MAX_TAILS 4096
/* Frames of each part of a stitched stack at most. */
#define PART_MAX 240
/* Stitched stacks remembered by (wait, call site, API): a wait's launches
 * come from a few call sites over and over. */
#define CACHE 1024

struct wait {
	uint32_t pid, tid;
	int kind, blind;
	uint64_t begin, end;	/* end 0: not over */
	uint64_t sp, token;
	uint32_t *frames, nframes;
	int have;		/* frames came */
	uint32_t pending;	/* the frame that stands for them in stacks made before */
};

/* A call site's trimmed frames, while its names come; one whose names never
 * all came is stitched whole from then on (given_up). */
struct tail {
	uint32_t site, frame;
	uint64_t since;
	int given_up;
};

/* The node probes (gpu_stitch.h).  Nodes made: a table of fixed size by
 * (pid, address), a few slots tried per key; a new node takes a free slot,
 * one of its own process or one not used for NODE_OLD_NS, else it is not
 * kept (one process's flood cannot push out another's nodes).  An address
 * that a later node reuses is simply taken over.  Each node names its
 * making site (the BPF program's key); the sites, with their stacks, are a
 * second such table by (pid, key). */
#define NODE_SLOTS 65536
#define SITE_SLOTS 16384
#define NODE_TRIES 8
#define NODE_OLD_NS (60ULL * 1000000000ULL)
/* Making sites whose frames are being unwound, and runs kept (the newest). */
#define NODE_PENDING 1024
#define MAX_RUNS 8192

struct node {
	uint32_t pid, key;
	uint64_t addr, time;
};

struct msite {
	uint32_t pid, key;
	uint32_t stack;		/* the making thread's frames (a dictionary stack) */
	int have;		/* they came */
	uint32_t pending;	/* the frame that stands for them in stacks made before */
	uint64_t token, time;	/* time: its last making */
};

/* A node's run; key: its node's making site as the run began (0: its
 * making not seen, or late: seen made after the run began).  Taken when
 * the run comes, as the rings give makings and runs in their order: a
 * launch read later (a library's batch behind the ring) would find the
 * node's address made again by then, by a later step. */
struct run {
	uint32_t pid, tid;
	int blind, late;
	uint32_t key;
	uint64_t node, begin, end, sp;
};

struct xpu_gpu_waits {
	struct xpu_dict *d;
	struct node *nodes;		/* NODE_SLOTS */
	struct msite *sites;		/* SITE_SLOTS */
	struct { uint64_t token; uint32_t slot; } pend[NODE_PENDING];
	uint32_t npend;
	struct run runs[MAX_RUNS];	/* a ring, nruns the next one's place */
	uint64_t nruns;
	struct wait *v;
	uint32_t n, cap;
	struct tail *t;
	uint32_t nt, tcap;
	uint32_t marker[XPU_STITCH_KINDS];
	uint32_t waiting_label, tail_label, making_label, lost;
	struct { uint64_t token; uint32_t site, api, stack; } cache[CACHE];
	struct xpu_gpu_waits_stats st;
};

struct xpu_gpu_waits *xpu_gpu_waits_new(struct xpu_dict *d)
{
	struct xpu_gpu_waits *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->d = d;
	if (!(w->nodes = calloc(NODE_SLOTS, sizeof(*w->nodes))) ||
	    !(w->sites = calloc(SITE_SLOTS, sizeof(*w->sites)))) {
		free(w->nodes);
		free(w);
		return NULL;
	}
	for (int k = 1; k < XPU_STITCH_KINDS; k++)
		w->marker[k] = xpu_dict_frame(d, XPU_FRAME_INFO, xpu_dict_cstr(d, xpu_gpu_stitch_marker(k)), 0);
	w->waiting_label = xpu_dict_cstr(d, "[waiting thread's stack]");
	w->tail_label = xpu_dict_cstr(d, "[launching thread's frames]");
	w->making_label = xpu_dict_cstr(d, "[forward stack of the node]");
	w->lost = xpu_dict_frame(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[stack not captured]"), 0);
	return w;
}

static void settle(struct xpu_gpu_waits *w, struct wait *x)
{
	if (x->pending && !x->have)
		xpu_dict_frame_expand(w->d, x->pending, &w->lost, 1);
	free(x->frames);
}

/* A making site's slot goes (taken over, or its process left). */
static void site_settle(struct xpu_gpu_waits *w, struct msite *x)
{
	if (x->pending && !x->have)
		xpu_dict_frame_expand(w->d, x->pending, &w->lost, 1);
	*x = (struct msite){ 0 };
}

void xpu_gpu_waits_free(struct xpu_gpu_waits *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n; i++)
		free(w->v[i].frames);
	for (uint32_t i = 0; i < SITE_SLOTS && w->sites; i++)
		site_settle(w, &w->sites[i]);
	free(w->v);
	free(w->t);
	free(w->nodes);
	free(w->sites);
	free(w);
}

static void drop(struct xpu_gpu_waits *w, uint32_t i)
{
	settle(w, &w->v[i]);
	w->v[i] = w->v[--w->n];
}

/* Room for one more: the wait that ended first goes when all are taken. */
static int room(struct xpu_gpu_waits *w)
{
	uint32_t old = UINT32_MAX;
	if (w->n < MAX_WAITS)
		return xpu_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)) == 0;
	for (uint32_t i = 0; i < w->n; i++)
		if (w->v[i].end && (old == UINT32_MAX || w->v[i].end < w->v[old].end))
			old = i;
	if (old == UINT32_MAX)
		return 0;
	drop(w, old);
	return 1;
}

/* Waits of the thread entered at or below sp are over: a frame the thread
 * has left (by a return, or an exception the uretprobe never saw). */
static void close_below(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
			int inclusive)
{
	for (uint32_t i = 0; i < w->n; i++) {
		struct wait *x = &w->v[i];
		if (x->pid == pid && x->tid == tid && !x->end && (x->sp < sp || (inclusive && x->sp == sp)))
			x->end = time > x->begin ? time : x->begin + 1;
	}
}

void xpu_gpu_waits_begin(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
			 int kind, int blind, uint64_t token)
{
	close_below(w, pid, tid, time, sp, 1);
	if (!room(w)) {
		w->st.dropped++;
		return;
	}
	w->v[w->n++] = (struct wait){ .pid = pid, .tid = tid, .kind = kind, .blind = blind, .begin = time, .sp = sp,
				      .token = token };
	w->st.waits++;
}

static void node_frames(struct xpu_gpu_waits *w, uint64_t token, const uint32_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < w->npend; i++) {
		if (w->pend[i].token != token)
			continue;
		struct msite *x = &w->sites[w->pend[i].slot];
		w->pend[i] = w->pend[--w->npend];
		if (x->token != token)	/* taken over meanwhile */
			return;
		if (n > PART_MAX)
			frames += n - PART_MAX, n = PART_MAX;
		if (!n)
			frames = &w->lost, n = 1;
		x->stack = xpu_dict_stack(w->d, frames, n);
		x->have = 1;
		if (x->pending)
			xpu_dict_frame_expand(w->d, x->pending, frames, n);
		return;
	}
}

static uint32_t slot_of(uint32_t pid, uint64_t addr, int k, uint32_t slots)
{
	return (uint32_t)((xpu_hash_u64(addr ^ (uint64_t)pid << 48) + (uint64_t)k) % slots);
}

static struct node *node_find(struct xpu_gpu_waits *w, uint32_t pid, uint64_t addr)
{
	for (int k = 0; k < NODE_TRIES; k++) {
		struct node *x = &w->nodes[slot_of(pid, addr, k, NODE_SLOTS)];
		if (x->addr == addr && x->pid == pid)
			return x;
	}
	return NULL;
}

static struct msite *site_find(struct xpu_gpu_waits *w, uint32_t pid, uint32_t key)
{
	for (int k = 0; k < NODE_TRIES && key; k++) {
		struct msite *x = &w->sites[slot_of(pid, key, k, SITE_SLOTS)];
		if (x->key == key && x->pid == pid)
			return x;
	}
	return NULL;
}

/* The slot for a new making site (its stack to come as token). */
static int site_new(struct xpu_gpu_waits *w, uint32_t pid, uint32_t key, uint64_t time, uint64_t token)
{
	struct msite *x = site_find(w, pid, key);
	for (int k = 0; k < NODE_TRIES && !x; k++) {
		struct msite *y = &w->sites[slot_of(pid, key, k, SITE_SLOTS)];
		if (!y->key || y->time + NODE_OLD_NS < time)
			x = y;
	}
	if (!x || w->npend == NODE_PENDING)
		return -1;
	site_settle(w, x);
	*x = (struct msite){ .pid = pid, .key = key, .token = token, .time = time };
	w->pend[w->npend++] = (typeof(w->pend[0])){ token, (uint32_t)(x - w->sites) };
	return 0;
}

void xpu_gpu_waits_node(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t addr,
			uint32_t key, uint64_t token)
{
	struct node *x = node_find(w, pid, addr);
	for (int k = 0; k < NODE_TRIES && !x; k++) {
		struct node *y = &w->nodes[slot_of(pid, addr, k, NODE_SLOTS)];
		if (!y->addr || (y->pid == pid && y->time < time) || y->time + NODE_OLD_NS < time)
			x = y;
	}
	w->st.nodes++;
	if (!x || (token && site_new(w, pid, key, time, token) < 0)) {
		w->st.nodes_dropped++;
		return;
	}
	*x = (struct node){ .pid = pid, .key = key, .addr = addr, .time = time };
	struct msite *m = site_find(w, pid, key);
	if (m)
		m->time = time;
}

/* Runs of the thread entered at or below sp are over (as waits). */
static void runs_close(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
		       int inclusive)
{
	for (uint32_t i = 0; i < MAX_RUNS && i < w->nruns; i++) {
		struct run *r = &w->runs[i];
		if (r->pid == pid && r->tid == tid && !r->end && (r->sp < sp || (inclusive && r->sp == sp)))
			r->end = time > r->begin ? time : r->begin + 1;
	}
}

void xpu_gpu_waits_run(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp,
		       uint64_t node, int blind)
{
	runs_close(w, pid, tid, time, sp, 1);
	const struct node *x = node_find(w, pid, node);
	w->runs[w->nruns++ % MAX_RUNS] = (struct run){ .pid = pid, .tid = tid, .blind = blind, .node = node,
						       .begin = time, .sp = sp,
						       .key = x && x->time < time ? x->key : 0,
						       .late = x && x->time >= time };
	w->st.runs++;
}

/* The making site of the node that tid of pid ran at time (the innermost
 * run), where its making was seen. */
static struct msite *node_at(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t n = w->nruns < MAX_RUNS ? w->nruns : MAX_RUNS;
	for (uint64_t i = 0; i < n; i++) {
		const struct run *r = &w->runs[(w->nruns - 1 - i) % MAX_RUNS];
		if (r->begin + 2 * KEEP_NS < time)
			break;
		if (r->pid != pid || r->tid != tid || r->begin > time || (r->end && time >= r->end))
			continue;
		struct msite *m = r->blind || !r->key ? NULL : site_find(w, pid, r->key);
		w->st.run_blind += r->blind;
		w->st.run_unmade += !r->blind && !r->key && !r->late;
		w->st.run_made_late += !r->blind && r->late;
		w->st.run_no_site += !r->blind && r->key && !m;
		return m;
	}
	return NULL;
}

void xpu_gpu_waits_frames(struct xpu_gpu_waits *w, uint64_t token, const uint32_t *frames, uint32_t n)
{
	struct wait *x = NULL;
	for (uint32_t i = 0; i < w->n && !x; i++)
		if (w->v[i].token == token && !w->v[i].have)
			x = &w->v[i];
	if (!x) {
		node_frames(w, token, frames, n);
		return;
	}
	if (n > PART_MAX)	/* the leaf end, where the waiter is */
		frames += n - PART_MAX, n = PART_MAX;
	if (!n)
		frames = &w->lost, n = 1;
	if (!(x->frames = malloc(n * sizeof(uint32_t))))
		return;
	memcpy(x->frames, frames, n * sizeof(uint32_t));
	x->nframes = n;
	x->have = 1;
	if (x->pending)
		xpu_dict_frame_expand(w->d, x->pending, x->frames, n);
}

void xpu_gpu_waits_end(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp)
{
	close_below(w, pid, tid, time, sp, 0);
	runs_close(w, pid, tid, time, sp, 0);
}

static const struct wait *wait_at(const struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time)
{
	const struct wait *best = NULL;
	for (uint32_t i = 0; i < w->n; i++) {
		const struct wait *x = &w->v[i];
		if (x->pid != pid || x->tid == tid || x->blind || x->begin > time || (x->end && time >= x->end))
			continue;
		if (!best || x->begin < best->begin)
			best = x;
	}
	return best;
}

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* A thread's start and autograd's engine loop: what runs the work, not the
 * work.  By name, so only frames whose names came can be told. */
static int plumbing(const struct xpu_dict *d, uint32_t frame)
{
	static const char *const names[] = {
		"start_thread", "clone", "__clone", "execute_native_thread_routine", "std::thread::",
		"torch::autograd::Engine::thread_", "torch::autograd::python::PythonEngine::thread_init",
		"torch::autograd::Engine::evaluate_function", "torch::autograd::call_function",
		"torch::autograd::Node::operator()",
	};
	char text[256];
	xpu_frame_text(d, frame, text, sizeof(text));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (has_prefix(text, names[i]))
			return 1;
	return 0;
}

static int in_libc(const struct xpu_dict *d, uint32_t frame)
{
	const struct xpu_frame *f = xpu_dict_frame_get(d, frame);
	const char *m = f ? xpu_dict_str_get(d, f->module) : "";
	return has_prefix(m, "libc.so") || has_prefix(m, "libpthread");
}

/* The frames from the launching thread's work on: after the libc frames
 * its stack starts with and the last plumbing frame.  Returns the first
 * frame kept. */
static uint32_t trim(const struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	uint32_t from = 0;
	while (from + 1 < n && in_libc(d, frames[from]))
		from++;
	for (uint32_t i = from; i + 1 < n; i++)
		if (plumbing(d, frames[i]))
			from = i + 1;
	return from;
}

static int unresolved(const struct xpu_dict *d, const uint32_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (xpu_dict_frame_state(d, frames[i]) == XPU_FRAME_PENDING)
			return 1;
	return 0;
}

/* The part of a stitched stack that the launching thread gives, into out
 * (PART_MAX room); returns how many frames. */
static uint32_t site_part(struct xpu_gpu_waits *w, uint32_t site, uint32_t *out)
{
	uint32_t all[XPU_DICT_MAX_DEPTH];
	uint32_t n = xpu_dict_resolve(w->d, &site, 1, all);
	if (!unresolved(w->d, all, n)) {
		uint32_t from = trim(w->d, all, n);
		if (n - from > PART_MAX)
			from = n - PART_MAX;
		memcpy(out, all + from, (n - from) * sizeof(uint32_t));
		return n - from;
	}
	for (uint32_t i = 0; i < w->nt; i++) {
		if (w->t[i].site != site)
			continue;
		if (!w->t[i].given_up)
			return out[0] = w->t[i].frame, 1;
		uint32_t from = n > PART_MAX ? n - PART_MAX : 0;
		memcpy(out, all + from, (n - from) * sizeof(uint32_t));
		return n - from;
	}
	uint32_t f = 0;
	if (w->nt < MAX_TAILS && xpu_grow((void **)&w->t, &w->tcap, w->nt + 1, sizeof(*w->t)) == 0 &&
	    (f = xpu_dict_frame_pending(w->d, XPU_FRAME_INFO, w->tail_label, 0)))
		w->t[w->nt++] = (struct tail){ site, f, 0, 0 };
	out[0] = f ? f : site;
	return 1;
}

/* A stitched stack: head (nhead frames: the waiting thread's or the
 * node's making; NULL while they have not come, *pending then stands for
 * them, made with label), the marker, the launching thread's part and the
 * launch API.  Cached by (token, site, api) only once both parts are final
 * (no stand-in frame left to trim by name): a stack holding one is
 * rewritten in place anyway. */
static uint32_t stitch_under(struct xpu_gpu_waits *w, uint64_t token, const uint32_t *head, uint32_t nhead,
			     uint32_t *pending, uint32_t label, uint32_t marker, uint32_t site, uint32_t api)
{
	uint32_t frames[2 * PART_MAX + 2], n = 0;
	uint32_t slot = (uint32_t)(xpu_hash_u64(token ^ ((uint64_t)site << 32 | api)) % CACHE);
	if (w->cache[slot].token == token && w->cache[slot].site == site && w->cache[slot].api == api &&
	    xpu_dict_stack_valid(w->d, w->cache[slot].stack))
		return w->cache[slot].stack;
	if (head) {
		memcpy(frames, head, nhead * sizeof(uint32_t));
		n = nhead;
	} else {
		if (!*pending && !(*pending = xpu_dict_frame_pending(w->d, XPU_FRAME_INFO, label, 0)))
			return 0;
		frames[n++] = *pending;
	}
	frames[n++] = marker;
	uint32_t k = site_part(w, site, frames + n);
	int final = head && !(k == 1 && xpu_dict_frame_get(w->d, frames[n])->name == w->tail_label);
	n += k;
	frames[n++] = api;
	uint32_t stack = xpu_dict_stack(w->d, frames, n);
	if (stack && final)
		w->cache[slot] = (typeof(w->cache[0])){ token, site, api, stack };
	return stack;
}

/* The stack of a launch a node made while its run: under the frames of the
 * forward call that made the node. */
static uint32_t node_stitch(struct xpu_gpu_waits *w, struct msite *x, uint32_t site, uint32_t api)
{
	const uint32_t *made = NULL;
	uint32_t n = 0;
	if (x->have && (!(made = xpu_dict_stack_get(w->d, x->stack, &n)) || n > PART_MAX))
		return 0;
	uint32_t stack = stitch_under(w, x->token, made, n, &x->pending, w->making_label,
				      w->marker[XPU_STITCH_NODE], site, api);
	/* Counted once it is so: a launch given the waiter's stack instead is
	 * counted there. */
	w->st.node_stitched += stack != 0;
	return stack;
}

uint32_t xpu_gpu_waits_stitch(struct xpu_gpu_waits *w, uint32_t pid, uint32_t tid, uint64_t time,
			      uint32_t site, uint32_t api)
{
	struct wait *x;
	struct msite *made;
	if (site && w->nruns && (made = node_at(w, pid, tid, time))) {
		uint32_t stack = node_stitch(w, made, site, api);
		if (stack)
			return stack;
	}
	if (!w->n || !site || !(x = (struct wait *)wait_at(w, pid, tid, time)))
		return 0;
	w->st.stitched++;
	return stitch_under(w, x->token, x->have ? x->frames : NULL, x->nframes, &x->pending, w->waiting_label,
			    w->marker[x->kind], site, api);
}

void xpu_gpu_waits_mark(const struct xpu_gpu_waits *w, struct xpu_dict *d)
{
	for (uint32_t i = 0; w && i < CACHE; i++)
		xpu_dict_mark_stack(d, w->cache[i].stack);
	for (uint32_t i = 0; w && i < SITE_SLOTS; i++)
		if (w->sites[i].have)
			xpu_dict_mark_stack(d, w->sites[i].stack);
}

/* Expands the tail of a call site whose names all came (trimmed), or that
 * waited too long (whole).  Returns 1 when its entry can go. */
static int trim_tail(struct xpu_gpu_waits *w, struct tail *t, uint64_t now)
{
	uint32_t all[XPU_DICT_MAX_DEPTH], n;
	if (t->given_up)
		return 0;
	if (!t->since)
		t->since = now;
	n = xpu_dict_resolve(w->d, &t->site, 1, all);
	int open = unresolved(w->d, all, n);
	if (open && now - t->since <= TAIL_WAIT_NS)
		return 0;
	uint32_t from = open ? 0 : trim(w->d, all, n);
	xpu_dict_frame_expand(w->d, t->frame, all + from, n - from);
	/* One given up is kept, so that its later launches are stitched whole. */
	w->st.untrimmed += open;
	t->given_up = open;
	return !open;
}

static void trim_tails(struct xpu_gpu_waits *w, uint64_t now)
{
	for (uint32_t i = 0; i < w->nt;) {
		if (trim_tail(w, &w->t[i], now))
			w->t[i] = w->t[--w->nt];
		else
			i++;
	}
}

void xpu_gpu_waits_tick(struct xpu_gpu_waits *w, uint64_t now)
{
	for (uint32_t i = 0; i < w->n;) {
		if (w->v[i].end && now > w->v[i].end && now - w->v[i].end > KEEP_NS)
			drop(w, i);
		else
			i++;
	}
	trim_tails(w, now);
}

void xpu_gpu_waits_forget(struct xpu_gpu_waits *w, uint32_t pid)
{
	for (uint32_t i = 0; w && i < NODE_SLOTS; i++)
		if (w->nodes[i].pid == pid)
			w->nodes[i] = (struct node){ 0 };
	for (uint32_t i = 0; w && i < SITE_SLOTS; i++)
		if (w->sites[i].pid == pid)
			site_settle(w, &w->sites[i]);
	for (uint32_t i = 0; w && i < MAX_RUNS; i++)
		if (w->runs[i].pid == pid)
			w->runs[i].pid = 0;
	for (uint32_t i = 0; w && i < w->n;) {
		if (w->v[i].pid == pid)
			drop(w, i);
		else
			i++;
	}
}

void xpu_gpu_waits_stats(const struct xpu_gpu_waits *w, struct xpu_gpu_waits_stats *st)
{
	*st = w->st;
}
