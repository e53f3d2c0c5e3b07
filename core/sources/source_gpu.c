/* SPDX-License-Identifier: GPL-2.0-only */
#include "source_gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "gpu_peers.h"
#include "gpu_own.h"
#include "gpu_probes.h"
#include "launch_probes.h"
#include "gpu_waits.h"
#include "gpu_wire.h"
#include "grow.h"
#include "htab.h"
#include "inject_diag.h"
#include "session.h"
#include "source.h"
#include "sys.h"

#define MAX_CONNS XPU_PEER_CONNS_MAX
#define MAX_SITES_PER_PROC 16384
/* A site whose stack has not come by then keeps a frame that says so. */
#define SITE_WAIT_NS (10ULL * 1000000000ULL)
#define SITES_WAITING 65536
#define CONN_RCVBUF (8 << 20)

enum { TAG_LISTEN = 1, TAG_PROBES = 2, TAG_CONN = 3 };
/* CUPTI's callback domains, as the library reports them. */
enum { CUPTI_DRIVER = 1, CUPTI_RUNTIME = 2 };

struct site_stacks {
	uint32_t frame;		/* pending until expanded into the site's CPU frames */
	uint32_t api;		/* api string the full stack was built with */
	uint32_t full;		/* the site's frame + the launch API frame */
};

/* A site whose frames are on their way: found again by (pid, site) even
 * after its process left, so its launches' stacks still get them. */
struct site_wait {
	uint32_t pid, site, frame;
	uint64_t since;
};

struct conn {
	int fd;
	uint32_t pid, uid;	/* the peer's credentials (SO_PEERCRED), never its word */
	struct xpu_peer_uid *peer;	/* its uid's budgets */
	uint64_t opened;	/* CLOCK_MONOTONIC: the HELLO is due within XPU_PEER_HELLO_NS */
	uint32_t comm;		/* dict string: the kernel's name of the process */
	char comm_text[16];
	uint64_t refused[XPU_PEER_REASONS];	/* what its budgets refused it */
	uint64_t noted[XPU_PEER_REASONS];	/* of which in the peers' recent list */
	uint32_t warned;	/* a bit per reason: warned about already */
	uint64_t *series;	/* (name string, device) it has sent kernels of */
	uint32_t nseries, series_cap;
	struct xpu_htab sidx;
	int hello;
	int ignored;		/* not a process -p watches: never started, its library dormant */
	uint32_t *names;	/* wire name id - 1 -> dict string */
	uint32_t nnames, names_cap;
	uint32_t api[2][XPU_WIRE_MAX_CBID];
	struct site_stacks *sites;	/* by site id - 1 */
	uint32_t nsites;
	uint64_t dropped, cupti_dropped;	/* the library's counters, last seen */
	uint64_t kernels_dropped;
	uint64_t reported_drops;	/* of the sum below, already sent as DROP events */
	struct xpu_wire_stats wire;
	uint64_t bad;		/* records with impossible values */
	uint32_t mode;		/* XPU_GPU_MODE_* the library said it traces in */
	uint64_t toggle_ns;	/* its time switching CUPTI on and off */
};

struct gpu_source {
	struct xpu_source base;
	struct xpu_session *sess;
	struct xpu_gpu_probes *probes;
	struct xpu_gpu_own *own;	/* launching threads' own time; NULL: off */
	struct xpu_inject_diag *diag;	/* why launching processes have no library */
	int epfd, lfd;
	int locked;		/* the collector lock is ours: replace a dying collector's socket */
	char sock_path[108];
	const char *inject_lib;
	uint32_t start_flags;	/* sent to each library that connects */
	uint32_t mode_gen;	/* the session's tracing mode the libraries were told */
	struct conn *conns[MAX_CONNS];
	struct site_wait *waits;
	uint32_t nwaits, wcap;
	struct xpu_htab widx;	/* (pid, site) -> waits index */
	struct xpu_gpu_waits *stitch;	/* threads waiting for others' launches */
	uint64_t sites_lost;	/* sites whose stack never came */
	uint64_t probe_drops_seen;
	uint64_t connections;
	struct xpu_peers peers;	/* budgets and refusals of the socket's peers */
	uint32_t awaiting_hello;	/* connections open without one */
	uint32_t name_refused, series_refused;	/* dict strings standing in for what was refused */
	char problem[200];	/* why the socket or the probes are unavailable */
};

const char *xpu_gpu_socket_path(void)
{
	const char *p = getenv("XPUTOP_SOCKET");
	return p && *p ? p : XPU_WIRE_SOCKET;
}

static struct conn *conn_of(struct gpu_source *g, uint32_t pid)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (g->conns[i] && g->conns[i]->hello && g->conns[i]->pid == pid)
			return g->conns[i];
	return NULL;
}

static void emit(struct gpu_source *g, struct xpu_event *ev)
{
	ev->source = XPU_SRC_GPU;
	xpu_session_emit(g->sess, ev);
}

/* A warning about a peer: at most one per uid every XPU_PEER_WARN_NS, which
 * says how many were held back, so no peer can fill the journal. */
static void __attribute__((format(printf, 3, 4)))
peer_warn(struct gpu_source *g, struct xpu_peer_uid *u, const char *fmt, ...)
{
	uint64_t held;
	char msg[400];
	if (!xpu_peers_warn_due(u, xpu_now_mono(), &held))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (held)
		xpu_warn("%s (%" PRIu64 " more warnings about uid %u's processes held back)", msg, held, u->uid);
	else
		xpu_warn("%s", msg);
}

/* What a connection's budgets refused it, counted per process (the peers'
 * functions count per uid); the first of each reason is a warning. */
static void refused(struct gpu_source *g, struct conn *c, enum xpu_peer_reason r, uint64_t n)
{
	static const char *const what[XPU_PEER_REASONS] = {
		[XPU_PEER_NAMES] = "names past its budget (shown as \"[kernel name over budget]\")",
		[XPU_PEER_SERIES] = "more (kernel, device) series than its budget (folded into \"[kernels over budget]\")",
		[XPU_PEER_DEVICES] = "records naming a GPU this machine does not have (dropped)",
		[XPU_PEER_RECORDS] = "records faster than its uid's rate (dropped)",
	};
	c->refused[r] += n;
	if (what[r] && !(c->warned & 1u << r)) {
		c->warned |= 1u << r;
		peer_warn(g, c->peer, "GPU socket: pid %u (%s, uid %u) sent %s", c->pid, c->comm_text, c->uid,
			  what[r]);
	}
}

/* The process's refusals since last noted go to the peers' recent list. */
static void note_refusals(struct gpu_source *g, struct conn *c)
{
	for (int r = 0; r < XPU_PEER_REASONS; r++) {
		if (c->refused[r] == c->noted[r])
			continue;
		xpu_peers_note_proc(&g->peers, c->uid, c->pid, c->comm_text, r, c->refused[r] - c->noted[r]);
		c->noted[r] = c->refused[r];
	}
}

/* A name a peer sends, in the dictionary: free when it is there already,
 * else charged to the peer's uid; 0 when over budget. */
static uint32_t peer_str(struct gpu_source *g, struct conn *c, const char *name, size_t len)
{
	struct xpu_dict *d = &g->sess->dict;
	uint32_t id = xpu_dict_str_find(d, name, len);
	if (id)
		return id;
	if (xpu_peers_new_str(&g->peers, c->peer, len) < 0) {
		refused(g, c, XPU_PEER_NAMES, 1);
		return 0;
	}
	return xpu_dict_str(d, name, len);
}

static int series_eq(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct conn *)ctx)->series[i] == *(const uint64_t *)key;
}

/* Whether the connection may have a row for (name, device): each new one
 * is charged to its budgets. */
static int series_ok(struct gpu_source *g, struct conn *c, uint32_t name, uint32_t device)
{
	uint64_t key = (uint64_t)name << 32 | device, h = xpu_hash_u64(key);
	if (xpu_htab_find(&c->sidx, h, series_eq, c, &key) != UINT32_MAX)
		return 1;
	if (xpu_peers_new_series(&g->peers, c->peer, c->nseries) < 0) {
		refused(g, c, XPU_PEER_SERIES, 1);
		return 0;
	}
	if (xpu_grow((void **)&c->series, &c->series_cap, c->nseries + 1, sizeof(*c->series)) ||
	    xpu_htab_put(&c->sidx, h, c->nseries) < 0)
		return 0;
	c->series[c->nseries++] = key;
	return 1;
}

static struct site_stacks *site_of(struct conn *c, uint32_t site, int create)
{
	if (site == 0 || site > MAX_SITES_PER_PROC)
		return NULL;
	if (site > c->nsites) {
		if (!create)
			return NULL;
		uint32_t n = c->nsites ? c->nsites : 64;
		while (n < site)
			n *= 2;
		struct site_stacks *v = realloc(c->sites, (size_t)n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + c->nsites, 0, (size_t)(n - c->nsites) * sizeof(*v));
		c->sites = v;
		c->nsites = n;
	}
	return &c->sites[site - 1];
}

/* ---- call sites ---- */

static uint64_t wait_key(uint32_t pid, uint32_t site)
{
	return (uint64_t)pid << 32 | site;
}

static int wait_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct gpu_source *g = ctx;
	return wait_key(g->waits[i].pid, g->waits[i].site) == *(const uint64_t *)key;
}

static uint32_t wait_find(const struct gpu_source *g, uint32_t pid, uint32_t site)
{
	uint64_t k = wait_key(pid, site);
	return xpu_htab_find(&g->widx, xpu_hash_u64(k), wait_eq, g, &k);
}

static void wait_remove(struct gpu_source *g, uint32_t i)
{
	uint32_t last = g->nwaits - 1;
	xpu_htab_del(&g->widx, xpu_hash_u64(wait_key(g->waits[i].pid, g->waits[i].site)), i);
	if (i != last) {
		uint64_t h = xpu_hash_u64(wait_key(g->waits[last].pid, g->waits[last].site));
		xpu_htab_del(&g->widx, h, last);
		g->waits[i] = g->waits[last];
		xpu_htab_put(&g->widx, h, i);
	}
	g->nwaits--;
}

/* The frame of a site seen for the first time: pending until its frames
 * come (from the BPF capture, unwound on the service thread). */
static uint32_t site_frame(struct gpu_source *g, uint32_t pid, uint32_t site)
{
	struct xpu_dict *d = &g->sess->dict;
	char label[64];
	snprintf(label, sizeof(label), "[unwinding call site %u]", site);
	if (g->nwaits >= SITES_WAITING ||
	    xpu_grow((void **)&g->waits, &g->wcap, g->nwaits + 1, sizeof(*g->waits)))
		return 0;
	uint32_t f = xpu_dict_frame_pending(d, XPU_FRAME_INFO, xpu_dict_cstr(d, label), 0);
	if (!f || xpu_htab_put(&g->widx, xpu_hash_u64(wait_key(pid, site)), g->nwaits) < 0)
		return 0;
	g->waits[g->nwaits++] = (struct site_wait){ pid, site, f, xpu_now_mono() };
	return f;
}

/* The launch's full stack: the site's frame and the API frame. */
static uint32_t launch_stack(struct gpu_source *g, struct conn *c, uint32_t site, uint32_t api)
{
	struct xpu_dict *d = &g->sess->dict;
	struct site_stacks *s = site_of(c, site, 1);
	if (!s)
		return 0;
	if (!s->frame && !(s->frame = site_frame(g, c->pid, site)))
		return 0;
	if (s->full && s->api == api)
		return s->full;
	uint32_t frames[2] = { s->frame, xpu_dict_frame(d, XPU_FRAME_LAUNCH, api, 0) };
	s->api = api;
	s->full = xpu_dict_stack(d, frames, 2);
	return s->full;
}

/* Sites whose stack never came (the BPF ring was full, the process left
 * before its capture was unwound) say so rather than wait for ever. */
static void expire_sites(struct gpu_source *g, uint64_t now)
{
	struct xpu_dict *d = &g->sess->dict;
	for (uint32_t i = g->nwaits; i-- > 0;) {
		if (now - g->waits[i].since < SITE_WAIT_NS)
			continue;
		uint32_t lost = xpu_dict_frame(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[call site not captured]"), 0);
		xpu_dict_frame_expand(d, g->waits[i].frame, &lost, 1);
		g->sites_lost++;
		wait_remove(g, i);
	}
}

static uint32_t api_name(struct gpu_source *g, struct conn *c, uint32_t domain, uint32_t cbid)
{
	int dr = domain == CUPTI_DRIVER;
	if (cbid < XPU_WIRE_MAX_CBID && c->api[dr][cbid])
		return c->api[dr][cbid];
	char buf[48];
	snprintf(buf, sizeof(buf), "%s launch %u", dr ? "driver" : "runtime", cbid);
	return xpu_dict_cstr(&g->sess->dict, buf);
}

static void emit_launch(struct gpu_source *g, struct conn *c, const struct xpu_wire_launch *l)
{
	uint32_t api = api_name(g, c, l->domain, l->cbid);
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .pid = c->pid, .tid = l->tid, .time = l->time };
	ev.launch.corr = l->corr;
	ev.launch.stack = l->site ? launch_stack(g, c, l->site, api) : 0;
	if (ev.launch.stack && g->stitch) {
		struct xpu_dict *d = &g->sess->dict;
		uint32_t st = xpu_gpu_waits_stitch(g->stitch, c->pid, l->tid, l->time, site_of(c, l->site, 0)->frame,
						   xpu_dict_frame(d, XPU_FRAME_LAUNCH, api, 0));
		if (st)
			ev.launch.stack = st;
	}
	ev.launch.api = api;
	ev.launch.comm = c->comm;
	/* Traced throughout, in sampled mode (in exact mode all is). */
	if ((l->flags & XPU_WIRE_LAUNCH_WHOLE) && c->mode == XPU_GPU_MODE_SAMPLED)
		ev.launch.flags = XPU_GPU_LAUNCH_WHOLE;
	emit(g, &ev);
}

static void on_hello(void *arg, const struct xpu_wire_hello *h);

struct decode_ctx {
	struct gpu_source *g;
	struct conn *c;
};

/* A kernel name and its id.  Ids are given in order, but a name is sent
 * again (same id) when the library had to drop records that named things,
 * so one may come again, or come after a gap. */
static void on_name(void *arg, uint32_t id, const char *name, size_t len)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello || id == 0) {
		c->bad++;
		return;
	}
	if (id > XPU_PEER_NAMES_PER_CONN) {
		xpu_peers_refuse(&x->g->peers, c->peer, XPU_PEER_NAMES, 1);
		refused(x->g, c, XPU_PEER_NAMES, 1);
		return;
	}
	if (id > c->nnames) {
		if (xpu_grow((void **)&c->names, &c->names_cap, id, sizeof(uint32_t)))
			return;
		memset(c->names + c->nnames, 0, (id - c->nnames) * sizeof(uint32_t));
		c->nnames = id;
	}
	uint32_t s = peer_str(x->g, c, name, len);
	c->names[id - 1] = s ? s : x->g->name_refused;
}

static void on_api(void *arg, uint32_t domain, uint32_t cbid, const char *name, size_t len)
{
	struct decode_ctx *x = arg;
	if (!x->c->hello || (domain != CUPTI_DRIVER && domain != CUPTI_RUNTIME) ||
	    cbid >= XPU_WIRE_MAX_CBID) {
		x->c->bad++;
		return;
	}
	/* Over budget: the id's generic name (api_name()). */
	x->c->api[domain == CUPTI_DRIVER][cbid] = peer_str(x->g, x->c, name, len);
}

static int sane_span(uint64_t start, uint64_t end)
{
	return end >= start && end - start < 3600ULL * 1000000000ULL;
}

/* A device id must be one this machine has (gpu_peers.h); records naming
 * another are dropped and counted. */
static int device_ok(struct gpu_source *g, struct conn *c, uint32_t device)
{
	if (device < g->peers.devices)
		return 1;
	xpu_peers_refuse(&g->peers, c->peer, XPU_PEER_DEVICES, 1);
	refused(g, c, XPU_PEER_DEVICES, 1);
	return 0;
}

static void on_kernel(void *arg, const struct xpu_wire_kernel *k)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello || !sane_span(k->start, k->end)) {
		c->bad++;
		return;
	}
	if (!device_ok(x->g, c, k->device))
		return;
	/* A kernel whose name was lost with dropped records still counts. */
	uint32_t name = k->name && k->name <= c->nnames ? c->names[k->name - 1] : 0;
	if (!name)
		name = xpu_dict_cstr(&x->g->sess->dict, "[unnamed kernel]");
	if (!series_ok(x->g, c, name, k->device))
		name = x->g->series_refused;
	struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL, .pid = c->pid, .time = k->start };
	ev.kernel.end = k->end;
	ev.kernel.corr = k->corr;
	ev.kernel.name = name;
	ev.kernel.device = k->device;
	ev.kernel.stream = k->stream;
	ev.kernel.graph = k->graph;
	ev.kernel.comm = c->comm;
	emit(x->g, &ev);
}

static void on_memcpy(void *arg, const struct xpu_wire_memcpy *m, int is_memset)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello || !sane_span(m->start, m->end)) {
		c->bad++;
		return;
	}
	if (!device_ok(x->g, c, m->device))
		return;
	struct xpu_event ev = { .type = XPU_EV_GPU_MEMCPY, .pid = c->pid, .time = m->start };
	ev.memcpy.end = m->end;
	ev.memcpy.bytes = m->bytes;
	ev.memcpy.device = m->device;
	ev.memcpy.kind = is_memset ? XPU_GPU_MEMSET : m->kind;
	ev.memcpy.corr = m->corr;
	ev.memcpy.comm = c->comm;
	emit(x->g, &ev);
}

static void on_launch(void *arg, const struct xpu_wire_launch *l)
{
	struct decode_ctx *x = arg;
	if (!x->c->hello) {
		x->c->bad++;
		return;
	}
	if (!x->c->ignored) {
		xpu_gpu_own_watch(x->g->own, x->c->pid, l->tid);
		xpu_gpu_probes_thread(x->g->probes, x->c->pid, l->tid);
	}
	emit_launch(x->g, x->c, l);
}

static void proc_event(struct gpu_source *g, struct conn *c, uint32_t state, uint32_t detail,
		       uint32_t sites)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_PROC, .pid = c->pid, .time = xpu_now_mono() };
	ev.gproc.state = state;
	ev.gproc.comm = c->comm;
	ev.gproc.dropped = c->dropped;
	ev.gproc.cupti_dropped = c->cupti_dropped;
	ev.gproc.detail = detail;
	ev.gproc.sites = sites;
	ev.gproc.kernels_dropped = c->kernels_dropped;
	emit(g, &ev);
}

static void on_status(void *arg, const struct xpu_wire_status *s)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello)
		return;
	c->dropped = s->dropped;
	c->cupti_dropped = s->cupti_dropped;
	c->kernels_dropped = s->kernels_dropped;
	c->mode = s->mode == XPU_WIRE_MODE_EXACT ? XPU_GPU_MODE_EXACT : XPU_GPU_MODE_SAMPLED;
	c->toggle_ns = s->toggle_ns;
	uint32_t attached = (s->detach & XPU_WIRE_DETACH_OFF) || s->mode == XPU_WIRE_MODE_EXACT;
	proc_event(x->g, c, XPU_GPU_PROC_STATUS,
		   (s->state & XPU_GPU_DETAIL_STATE) | (attached ? XPU_GPU_DETAIL_ATTACHED : 0),
		   s->sites > UINT32_MAX ? UINT32_MAX : (uint32_t)s->sites);
}

/* A span the library traced: what the model scales its figures by (whole:
 * traced throughout, what it saw there is counted as it is). */
static void on_slice(void *arg, const struct xpu_wire_slice *sl, int whole)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello || !sane_span(sl->start, sl->end)) {
		c->bad++;
		return;
	}
	struct xpu_event ev = { .type = XPU_EV_GPU_SLICE, .pid = c->pid, .time = sl->start };
	ev.slice.end = sl->end;
	ev.slice.mode = whole && c->mode == XPU_GPU_MODE_SAMPLED ? XPU_GPU_MODE_WHOLE : c->mode;
	ev.slice.comm = c->comm;
	emit(x->g, &ev);
}

static const struct xpu_wire_sink sink = {
	.hello = on_hello, .name = on_name, .api = on_api, .kernel = on_kernel,
	.memcpy = on_memcpy, .launch = on_launch, .status = on_status, .slice = on_slice,
};

/* The pid a process gives may be its own namespace's: it must name the
 * peer's credentials, seen from here or from inside its pid namespace. */
static int pid_matches(uint32_t peer, uint32_t claimed)
{
	char path[64], line[256];
	if (peer == claimed)
		return 1;
	snprintf(path, sizeof(path), "/proc/%u/status", peer);
	FILE *f = fopen(path, "re");
	int ok = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		char *last = strrchr(line, '\t');
		ok = last && strtoul(last + 1, NULL, 10) == claimed;
	}
	if (f)
		fclose(f);
	return ok;
}

static void send_control(int fd, uint16_t type, const void *body, uint16_t len)
{
	char buf[64];
	size_t n = xpu_wire_control(buf, sizeof(buf), type, body, len);
	if (n && send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		xpu_debug("cannot send to a GPU process: %s", strerror(errno));
}

static struct xpu_wire_mode wire_mode(const struct xpu_gpu_tracing *t)
{
	return (struct xpu_wire_mode){ t->mode == XPU_GPU_MODE_EXACT ? XPU_WIRE_MODE_EXACT : XPU_WIRE_MODE_SAMPLED,
				       t->period_ms, t->slice_ms,
				       (uint32_t)xpu_env_u64("XPUTOP_TRACE_WHOLE_US", XPU_GPU_TRACE_WHOLE_US, 1000000) };
}

/* The launch-only probes follow the session's tracing mode. */
static void probes_mode(struct gpu_source *g)
{
	const struct xpu_gpu_tracing *t = &g->sess->cfg.gpu;
	if (g->probes)
		xpu_gpu_probes_mode(g->probes, t->mode == XPU_GPU_MODE_EXACT, t->slice_ms, t->period_ms);
}

/* The session's tracing mode changed (a key, an option's time ran out):
 * every library hears of it. */
static void send_mode(struct gpu_source *g, uint64_t now)
{
	struct xpu_gpu_tracing *t = &g->sess->cfg.gpu;
	if (t->mode == XPU_GPU_MODE_EXACT && t->exact_until && now >= t->exact_until)
		xpu_session_gpu_exact(g->sess, 0, 0, now);
	if (t->gen == g->mode_gen)
		return;
	g->mode_gen = t->gen;
	probes_mode(g);
	struct xpu_wire_mode m = wire_mode(t);
	for (int i = 0; i < MAX_CONNS; i++)
		if (g->conns[i] && g->conns[i]->hello && !g->conns[i]->ignored)
			send_control(g->conns[i]->fd, XPU_WIRE_MODE, &m, sizeof(m));
}

/* The process's name as the kernel has it (/proc/PID/comm: the peer's
 * pid, from its credentials, is this pid namespace's); -1 when it is gone. */
static int read_comm(struct conn *c)
{
	char path[40];
	snprintf(path, sizeof(path), "/proc/%u/comm", c->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, c->comm_text, sizeof(c->comm_text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	c->comm_text[n] = '\0';
	c->comm_text[strcspn(c->comm_text, "\n")] = '\0';
	for (char *p = c->comm_text; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return 0;
}

static void on_hello(void *arg, const struct xpu_wire_hello *h)
{
	struct decode_ctx *x = arg;
	struct gpu_source *g = x->g;
	struct conn *c = x->c;
	if (c->hello || !pid_matches(c->pid, h->pid) || read_comm(c) < 0) {
		if (!c->comm_text[0])
			read_comm(c);	/* to name it where refusals are listed */
		xpu_peers_refuse(&g->peers, c->peer, XPU_PEER_BAD_HELLO, 1);
		refused(g, c, XPU_PEER_BAD_HELLO, 1);
		peer_warn(g, c->peer, "GPU socket: a process (pid %u, uid %u) claimed to be pid %u%s: connection refused",
			  c->pid, c->uid, h->pid, c->hello ? " again" : "");
		c->bad++;
		shutdown(c->fd, SHUT_RDWR);
		return;
	}
	c->hello = 1;
	g->awaiting_hello--;
	xpu_inject_diag_connected(g->diag, c->pid);
	if (!xpu_session_watches(g->sess, c->pid)) {
		/* Left dormant: it traces nothing and costs its process nothing. */
		xpu_debug("pid %u is not one -p watches: its injection library is left dormant", c->pid);
		c->ignored = 1;
		return;
	}
	/* The kernel's name for it, never the one in the HELLO. */
	c->comm = xpu_dict_cstr(&g->sess->dict, c->comm_text);
	if (g->probes)
		xpu_gpu_probes_injected(g->probes, c->pid);
	struct xpu_wire_start st = { .flush_ms = 20, .flags = g->start_flags,
				     .mode = wire_mode(&g->sess->cfg.gpu) };
	c->mode = g->sess->cfg.gpu.mode;
	send_control(c->fd, XPU_WIRE_START, &st, sizeof(st));
	g->connections++;
	proc_event(g, c, XPU_GPU_PROC_CONNECTED, 0, 0);
}

/* The counts so far of a process's launching threads (cumulative: the
 * model takes differences). */
static void emit_own(void *arg, uint32_t pid, const struct xpu_ev_gpu_own *own)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_OWN, .pid = pid, .time = xpu_now_mono() };
	ev.gown = *own;
	emit(arg, &ev);
}

static void close_conn(struct gpu_source *g, int slot)
{
	struct conn *c = g->conns[slot];
	xpu_session_drops(g->sess, XPU_SRC_GPU,
			  c->dropped + c->cupti_dropped + c->wire.bad_packets + c->bad, &c->reported_drops);
	if (c->hello && !c->ignored) {
		proc_event(g, c, XPU_GPU_PROC_LEFT, 0, 0);
		if (g->probes)
			xpu_gpu_probes_left(g->probes, c->pid);
		/* The samples since the last refresh, before they go: the last
		 * slice's launches came with the exit's flush, and without its
		 * own time they would be scaled up (+17% on a short run in CI) */
		struct xpu_ev_gpu_own last;
		if (xpu_gpu_own_read(g->own, c->pid, &last) == 0)
			emit_own(g, c->pid, &last);
		xpu_gpu_own_forget(g->own, c->pid);
		xpu_gpu_waits_forget(g->stitch, c->pid);
	}
	if (!c->hello)
		g->awaiting_hello--;
	note_refusals(g, c);
	xpu_peers_conn_close(&g->peers, c->peer, c->nseries, xpu_now_mono());
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->names);
	free(c->sites);
	free(c->series);
	xpu_htab_free(&c->sidx);
	free(c);
	g->conns[slot] = NULL;
}

static void read_conn(struct gpu_source *g, int slot)
{
	static char buf[XPU_WIRE_MAX_MSG + 1];
	struct conn *c = g->conns[slot];
	struct decode_ctx x = { g, c };
	for (int i = 0; i < 256; i++) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0 || !g->conns[slot]) {
			close_conn(g, slot);
			return;
		}
		/* Each packet's records are charged to the uid's rate first. */
		struct xpu_wire_msg m;
		if (c->hello && (size_t)n >= sizeof(m)) {
			memcpy(&m, buf, sizeof(m));
			if (xpu_peers_records(&g->peers, c->peer, m.nrecs, xpu_now_mono()) < 0) {
				refused(g, c, XPU_PEER_RECORDS, m.nrecs);
				continue;
			}
		}
		const char *why = NULL;
		if (xpu_wire_decode(buf, (size_t)n, &sink, &x, &c->wire, &why) < 0) {
			xpu_debug("GPU process %u sent a bad packet: %s", c->pid, why);
			if (!c->hello) {	/* nothing valid yet: not a library at all */
				close_conn(g, slot);
				return;
			}
		}
	}
}

/* A connection that has not said HELLO in time is closed: idle connections
 * cannot hold the socket's places. */
static void expire_hellos(struct gpu_source *g, uint64_t now)
{
	for (int i = 0; i < MAX_CONNS && g->awaiting_hello; i++) {
		struct conn *c = g->conns[i];
		if (!c || c->hello || now - c->opened < XPU_PEER_HELLO_NS)
			continue;
		xpu_peers_refuse(&g->peers, c->peer, XPU_PEER_HELLO_LATE, 1);
		refused(g, c, XPU_PEER_HELLO_LATE, 1);
		peer_warn(g, c->peer, "GPU socket: a connection of pid %u (uid %u) said no HELLO in %llu ms: closed",
			  c->pid, c->uid, XPU_PEER_HELLO_NS / 1000000ULL);
		close_conn(g, i);
	}
}

/* A connection over its uid's quota (or the total) is closed at once. */
static void refuse_conn(struct gpu_source *g, int fd, const struct ucred *cred, struct xpu_peer_uid *u)
{
	xpu_peers_note_proc(&g->peers, (uint32_t)cred->uid, (uint32_t)cred->pid, "", XPU_PEER_CONNS, 1);
	peer_warn(g, u, "GPU socket: uid %u has %u connections open (at most %u a uid, %u in all): pid %u refused",
		  (uint32_t)cred->uid, u->conns, cred->uid ? XPU_PEER_CONNS_PER_UID : XPU_PEER_CONNS_ROOT,
		  XPU_PEER_CONNS_MAX, (uint32_t)cred->pid);
	close(fd);
}

static void accept_conns(struct gpu_source *g)
{
	uint64_t now = xpu_now_mono();
	expire_hellos(g, now);
	for (;;) {
		int fd = accept4(g->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			continue;
		}
		struct xpu_peer_uid *u = xpu_peers_uid(&g->peers, (uint32_t)cred.uid);
		if (xpu_peers_conn_open(&g->peers, u) < 0) {
			refuse_conn(g, fd, &cred, u);
			continue;
		}
		int slot = 0;
		while (slot < MAX_CONNS && g->conns[slot])
			slot++;
		struct conn *c = slot < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			xpu_peers_conn_close(&g->peers, u, 0, now);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->pid = (uint32_t)cred.pid;
		c->uid = (uint32_t)cred.uid;
		c->peer = u;
		c->opened = now;
		xpu_htab_init(&c->sidx);
		g->awaiting_hello++;
		/* Room for a burst while the main loop is busy: what does not
		 * fit waits in the library's own buffer. */
		int rcv = CONN_RCVBUF;
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		g->conns[slot] = c;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ((uint64_t)slot << 8) | TAG_CONN };
		epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev);
	}
}

static int gpu_fd(struct xpu_source *src)
{
	return ((struct gpu_source *)src)->epfd;
}

static int gpu_drain(struct xpu_source *src, struct xpu_session *s)
{
	struct gpu_source *g = (struct gpu_source *)src;
	struct epoll_event evs[32];
	int n = epoll_wait(g->epfd, evs, 32, 0), done = 0, probed = 0;
	if (g->awaiting_hello)
		expire_hellos(g, xpu_now_mono());
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64 & 0xff;
		int slot = (int)(evs[i].data.u64 >> 8);
		/* The probes first: a launch read from a library finds the wait
		 * it was made in (gpu_waits.h), whose entry came by the ring. */
		if ((tag == TAG_PROBES || tag == TAG_CONN) && g->probes && !probed++)
			xpu_gpu_probes_drain(g->probes);
		if (tag == TAG_LISTEN)
			accept_conns(g);
		else if (tag == TAG_CONN && g->conns[slot])
			read_conn(g, slot);
		done++;
	}
	return done;
}

/* What each process and the probes lost: in the library's channel, in
 * CUPTI, in bad packets and records, in the BPF ring. */
static void report_drops(struct gpu_source *g)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = g->conns[i];
		if (c)
			xpu_session_drops(g->sess, XPU_SRC_GPU,
					  c->dropped + c->cupti_dropped + c->wire.bad_packets + c->bad,
					  &c->reported_drops);
	}
	if (g->probes) {
		struct xpu_gpu_probe_stats st;
		xpu_gpu_probes_stats(g->probes, &st);
		xpu_session_drops(g->sess, XPU_SRC_GPU, st.dropped + st.bad, &g->probe_drops_seen);
	}
}

/* The launching threads' own time: what is sampled, and what could not be. */
static int own_text(struct gpu_source *g, char *buf, size_t size)
{
	struct xpu_gpu_own_stats st;
	xpu_gpu_own_stats(g->own, &st);
	if (!st.procs && !st.open_failed && !st.attach_failed && !st.procs_over)
		return 0;
	int n = snprintf(buf, size, "; own time: %u launching thread%s of %u process%s sampled", st.threads,
			 st.threads == 1 ? "" : "s", st.procs, st.procs == 1 ? "" : "es");
	if (st.procs_full && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " (%u with more than %d threads)", st.procs_full,
			      XPU_GPU_OWN_THREADS);
	if ((st.open_failed || st.attach_failed) && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " threads not sampled (%s)",
			      st.open_failed + st.attach_failed, strerror(st.err));
	if (st.procs_over && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " processes over the limit of %d",
			      st.procs_over, XPU_GPU_OWN_PROCS);
	if (st.not_own && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64
			      " threads refused (not the process's own)", st.not_own);
	if (st.no_flag && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " without the library's tracing flag",
			      st.no_flag);
	if (st.unread && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " samples with the flag unreadable",
			      st.unread);
	return n;
}

/* What the launch-only probes watch and did, or why there are none.
 * Returns the launches they counted. */
static uint64_t probes_text(struct gpu_source *g, char *buf, size_t size)
{
	struct xpu_gpu_probe_stats st;
	if (!g->probes) {
		snprintf(buf, size, "%s", g->problem);
		return 0;
	}
	xpu_gpu_probes_stats(g->probes, &st);
	if (st.no_launch_only) {
		snprintf(buf, size, "processes without the library are not seen (the launch-only probes did "
			 "not load on this kernel)%s%s", g->problem[0] ? "; " : "", g->problem);
		return 0;
	}
	int n = snprintf(buf, size, "launch probes on %u CUDA librar%s%s: %" PRIu64 " launches counted, %" PRIu64
			 " call-site stacks taken", st.runtime_files, st.runtime_files == 1 ? "y" : "ies",
			 st.watching ? "" : " (libraries loaded from now on are not seen)", st.launches,
			 st.launch_stacks);
	if (st.lost_stacks && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " call sites without a stack", st.lost_stacks);
	/* Sampled: what turning them on and off costs xputop. */
	if (st.launch_slices && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", on in %" PRIu64 " slices (%.1f ms to attach, %.1f ms to "
			      "detach each)", st.launch_slices,
			      (double)st.launch_attach_ns / 1e6 / (double)st.launch_slices,
			      (double)st.launch_detach_ns / 1e6 / (double)st.launch_slices);
	if (st.launch_wholes && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", on throughout %" PRIu64 " time%s (%.1f s ended; %" PRIu64
			      " ended by their traps' cost)", st.launch_wholes, st.launch_wholes == 1 ? "" : "s",
			      (double)st.launch_whole_ns / 1e9, st.launch_whole_cuts);
	/* Until it is measured, the probes' traps are counted as the launches' time. */
	if (st.launch_probes_on && n > 0 && (size_t)n < size)
		n += !st.trap_measured ? snprintf(buf + n, size - (size_t)n, ", a trap's cost being measured")
		     : st.trap_ns ? snprintf(buf + n, size - (size_t)n, ", a trap %u ns (%u ns with the call site's hash, "
					     "measured in %.0f ms)", st.trap_ns, st.trap_lo_ns,
					     (double)st.trap_measure_ns / 1e6)
				  : snprintf(buf + n, size - (size_t)n, ", a trap's cost not measured");
	/* The launching threads whose CPU time the probes' count scales by. */
	if ((st.cpu_threads || st.cpu_refused || st.cpu_over) && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", CPU time of %u launching thread%s kept (%" PRIu64
			      " refused: not the process's own; %" PRIu64 " past %d a process)", st.cpu_threads,
			      st.cpu_threads == 1 ? "" : "s", st.cpu_refused, st.cpu_over, XPU_GPU_CPU_THREADS);
	/* A counter refused (a container's seccomp, perf_event_paranoid): by time. */
	if (st.cpu_failed && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " launching thread%s without a CPU time counter "
			      "(%s: the probes' count scales by time)", st.cpu_failed, st.cpu_failed == 1 ? "" : "s",
			      strerror(st.cpu_err));
	if (st.launch_probe_failed && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " probes failed to attach", st.launch_probe_failed);
	/* Issue 26: what shows that the waiters work on a real program. */
	if (st.waiter_fns && n > 0 && (size_t)n < size) {
		struct xpu_gpu_waits_stats ws;
		xpu_gpu_waits_stats(g->stitch, &ws);
		n += snprintf(buf + n, size - (size_t)n, "; waiters: %u function%s probed, %" PRIu64 " waits (%" PRIu64
			      " with no end probe yet), %" PRIu64 " launches stitched", st.waiter_fns,
			      st.waiter_fns == 1 ? "" : "s", ws.waits, st.waits_blind, ws.stitched);
	}
	if (st.node_fns && n > 0 && (size_t)n < size) {
		struct xpu_gpu_waits_stats ws;
		xpu_gpu_waits_stats(g->stitch, &ws);
		n += snprintf(buf + n, size - (size_t)n,
			      "; nodes: %u function%s probed, %" PRIu64 " made from %" PRIu64 " making sites (%" PRIu64
			      " lost, %" PRIu64 " taken again later, %" PRIu64 " not kept, %" PRIu64
			      " from sites past the limit), %" PRIu64
			      " runs (%" PRIu64 " with no end probe yet), %" PRIu64 " launches under their forward site",
			      st.node_fns, st.node_fns == 1 ? "" : "s", st.nodes, st.node_sites, st.dropped_nodes,
			      st.node_sites_deferred, ws.nodes_dropped, st.node_sites_lost, st.runs, st.runs_blind, ws.node_stitched);
		/* Launches inside a run that did not get its forward site, by why. */
		if (ws.run_blind + ws.run_unmade + ws.run_made_late + ws.run_no_site && n > 0 && (size_t)n < size)
			n += snprintf(buf + n, size - (size_t)n,
				      " (in runs, not: %" PRIu64 " in blind ones, %" PRIu64 " of nodes whose making was "
				      "not seen, %" PRIu64 " made after their run began, %" PRIu64
				      " whose making site is not kept)", ws.run_blind, ws.run_unmade, ws.run_made_late,
				      ws.run_no_site);
	}
	if (g->own && n > 0 && (size_t)n < size)
		n += own_text(g, buf + n, size - (size_t)n);
	if (g->problem[0] && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "; %s", g->problem);
	return st.launches;
}

static void describe(struct gpu_source *g)
{
	char probes[1024], peers[200];
	int n = 0, more;
	for (int i = 0; i < MAX_CONNS; i++)
		n += g->conns[i] && g->conns[i]->hello;
	uint64_t launches = probes_text(g, probes, sizeof(probes));
	/* What peers were refused comes first: it is what an operator must see. */
	if (xpu_peers_text(&g->sess->gpu_peers, peers, sizeof(peers) - 2))
		strcat(peers, "; ");
	/* A process whose library never connected comes first: it is what to
	 * fix.  With no process connected, that this machine has no NVIDIA GPU
	 * comes first when nothing needs fixing, else after the main sentence. */
	char lead[440] = "";
	const char *why = xpu_inject_diag_text(g->diag, &more);
	if (*why)
		snprintf(lead, sizeof(lead), more ? "%s (and %d more); " : "%s; ", why, more);
	const char *none = xpu_sys_nvidia_gpus() ? "" : "no NVIDIA GPU on this machine (none on its PCI bus); ";
	if (n)
		xpu_session_status(g->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE,
				   "%s%s%d CUDA process%s with the xputop library; %s", peers, lead, n,
				   n == 1 ? "" : "es", probes);
	else
		xpu_session_status(g->sess, XPU_SRC_GPU, launches ? XPU_SRC_ACTIVE : *none ? XPU_SRC_OFF : XPU_SRC_WAITING,
				   "%s%sno CUDA process is connected: run one under xputop (sudo xputop -- CMD) "
				   "or start it with CUDA_INJECTION64_PATH=%s; processes without it show "
				   "launches only; %s%s", peers, *why ? lead : none,
				   g->inject_lib ? g->inject_lib : "libxputop_inject.so", *why ? none : "", probes);
}

static void gpu_tick(struct xpu_source *src, struct xpu_session *s)
{
	struct gpu_source *g = (struct gpu_source *)src;
	uint64_t now = xpu_now_mono();
	gpu_drain(src, s);
	expire_sites(g, now);
	send_mode(g, now);
	if (g->probes)
		xpu_gpu_probes_tick(g->probes, now);
	xpu_gpu_own_tick(g->own, now);
	xpu_gpu_own_each(g->own, emit_own, g);
	if (g->stitch)
		xpu_gpu_waits_tick(g->stitch, now);
	xpu_inject_diag_tick(g->diag, now);
	report_drops(g);
	xpu_peers_tick(&g->peers, now);
	for (int i = 0; i < MAX_CONNS; i++)
		if (g->conns[i])
			note_refusals(g, g->conns[i]);
	xpu_peers_publish(&g->peers, &g->sess->gpu_peers);
	describe(g);
}

void xpu_source_gpu_narrow(struct xpu_source *src)
{
	struct gpu_source *g = (struct gpu_source *)src;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = g->conns[i];
		if (!c || !c->hello || c->ignored || xpu_session_watches(g->sess, c->pid))
			continue;
		/* It ends the connection and comes back: then left dormant (on_hello). */
		xpu_debug("pid %u: no xputop watches it any more: its injection library is stopped", c->pid);
		send_control(c->fd, XPU_WIRE_STOP, NULL, 0);
		c->ignored = 1;
		proc_event(g, c, XPU_GPU_PROC_LEFT, 0, 0);
		if (g->probes)
			xpu_gpu_probes_left(g->probes, c->pid);
		/* The samples since the last refresh, before they go: the last
		 * slice's launches came with the exit's flush, and without its
		 * own time they would be scaled up (+17% on a short run in CI) */
		struct xpu_ev_gpu_own last;
		if (xpu_gpu_own_read(g->own, c->pid, &last) == 0)
			emit_own(g, c->pid, &last);
		xpu_gpu_own_forget(g->own, c->pid);
		xpu_gpu_waits_forget(g->stitch, c->pid);
	}
}

void xpu_source_gpu_close(struct xpu_source *src)
{
	struct gpu_source *g = (struct gpu_source *)src;
	for (int i = 0; i < MAX_CONNS; i++)
		if (g->conns[i])
			close_conn(g, i);
	if (g->lfd >= 0) {
		close(g->lfd);
		unlink(g->sock_path);
		g->lfd = -1;
	}
}

static void gpu_destroy(struct xpu_source *src)
{
	struct gpu_source *g = (struct gpu_source *)src;
	xpu_source_gpu_close(src);
	if (g->epfd >= 0)
		close(g->epfd);
	xpu_gpu_own_free(g->own);	/* its links use the probes' program */
	xpu_gpu_probes_free(g->probes);
	xpu_gpu_waits_free(g->stitch);
	free(g->waits);
	xpu_htab_free(&g->widx);
	xpu_inject_diag_free(g->diag);
	xpu_peers_free(&g->peers);
	free(g);
}

/* The socket's directory must be root's alone, or anyone could stand in. */
static int safe_dir(const char *path)
{
	char dir[108];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	int fd = xpu_sys_own_dir(dir);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int listen_socket(struct gpu_source *g)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", g->sock_path);
	if (safe_dir(g->sock_path) < 0) {
		snprintf(g->problem, sizeof(g->problem), "cannot use the socket directory of %s: %s",
			 g->sock_path, strerror(errno));
		return -1;
	}
	/* A collector killed a moment ago still listens while the kernel
	 * closes its files (its lock goes first, its BPF links take tens of
	 * milliseconds each).  Holding the lock, this xputop replaces its
	 * socket now (the libraries connected to it come over when it goes);
	 * without it, one that still answers after a second is alive. */
	int fd = -1;
	for (int tries = 0;; tries++) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (g->locked || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			break;
		close(fd);
		if (tries == 50) {
			snprintf(g->problem, sizeof(g->problem),
				 "another xputop is already collecting GPU data (%s)", g->sock_path);
			return -1;
		}
		usleep(20000);
	}
	unlink(g->sock_path);	/* left behind by an xputop that died */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(g->sock_path, 0666) < 0 ||
	    listen(fd, 64) < 0) {
		snprintf(g->problem, sizeof(g->problem), "cannot listen on %s: %s", g->sock_path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* A site's frames have come: its pending frame gets them, and with it every
 * launch (and kernel) stack that holds it. */
static void probe_site(void *arg, uint32_t pid, uint32_t site, const uint32_t *frames, uint32_t n)
{
	struct gpu_source *g = arg;
	struct xpu_dict *d = &g->sess->dict;
	uint32_t i = wait_find(g, pid, site), f = 0;
	if (i != UINT32_MAX) {
		f = g->waits[i].frame;
		wait_remove(g, i);
	} else {
		/* Captured before the site's first launch came in. */
		struct conn *c = conn_of(g, pid);
		struct site_stacks *s = c ? site_of(c, site, 1) : NULL;
		if (!s || s->frame)
			return;	/* a site announced again (a new xputop), or gone */
		f = s->frame = xpu_dict_frame_pending(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[call site]"), 0);
	}
	if (!f)
		return;
	if (!n) {
		uint32_t none = xpu_dict_frame(d, XPU_FRAME_INFO, xpu_dict_cstr(d, "[no user stack]"), 0);
		xpu_dict_frame_expand(d, f, &none, 1);
		return;
	}
	xpu_dict_frame_expand(d, f, frames, n);
}

static void probe_launch(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint32_t comm,
			 uint32_t api, uint32_t stack, uint64_t calls, uint64_t trap_ns)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .pid = pid, .tid = tid, .time = time };
	ev.launch.stack = stack;
	ev.launch.api = api;
	ev.launch.comm = comm;
	ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
	ev.launch.trap_ns = trap_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)trap_ns;
	while (calls) {
		ev.launch.count = calls > UINT32_MAX ? UINT32_MAX : (uint32_t)calls;
		calls -= ev.launch.count;
		emit(g, &ev);
		ev.launch.trap_ns = 0;
	}
	/* A process -p does not watch is none of this xputop's findings. */
	if (xpu_session_watches(g->sess, pid))
		xpu_inject_diag_launch(g->diag, pid, time);
}

/* A launch-only process started at time (or before the probes did): the
 * model estimates its launches over the time from there. */
static void probe_started(void *arg, uint32_t pid, uint64_t time)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_BORN, .pid = pid, .tid = pid, .time = time };
	emit(g, &ev);
}

/* Launches of an injected process the launch probes counted in sampled
 * slices, or of any process while they were on throughout (whole; 2: a
 * launch-only one), and the time their traps took (on the first event). */
static void probe_probed(void *arg, uint32_t pid, uint64_t time, uint64_t calls, uint64_t trap_ns, int whole)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .pid = pid, .tid = pid, .time = time };
	ev.launch.flags = XPU_GPU_LAUNCH_PROBED | (whole ? XPU_GPU_LAUNCH_WHOLE : 0) |
			  (whole == 2 ? XPU_GPU_LAUNCH_ONLY : 0);
	ev.launch.trap_ns = trap_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)trap_ns;
	do {
		ev.launch.count = calls > UINT32_MAX ? UINT32_MAX : (uint32_t)calls;
		calls -= ev.launch.count;
		emit(g, &ev);
		ev.launch.trap_ns = 0;
	} while (calls);
}

/* An injected process's CPU time by the probes' state since the last
 * refresh: what their count scales by. */
static void probe_cpu(void *arg, uint32_t pid, uint64_t time, uint64_t slice_ns, uint64_t whole_ns, uint64_t all_ns)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_CPU, .pid = pid, .tid = pid, .time = time };
	ev.gcpu.slice_ns = slice_ns;
	ev.gcpu.whole_ns = whole_ns;
	ev.gcpu.all_ns = all_ns;
	emit(g, &ev);
}

/* The launch-only probes were on from start to end: a slice of every
 * launch-only process (pid 0), which the model scales their counts by, and
 * of the probes' count of every injected one. */
static void probe_span(void *arg, uint64_t start, uint64_t end, int kind)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_SLICE, .pid = 0, .time = start };
	ev.slice.end = end;
	ev.slice.mode = kind == XPU_LAUNCH_SPAN_EXACT ? XPU_GPU_MODE_EXACT
			: kind == XPU_LAUNCH_SPAN_WHOLE ? XPU_GPU_MODE_WHOLE : XPU_GPU_MODE_SAMPLED;
	emit(g, &ev);
}

static void probe_wait_begin(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp, int kind,
			     int blind, uint64_t token)
{
	struct gpu_source *g = arg;
	xpu_gpu_waits_begin(g->stitch, pid, tid, time, sp, kind, blind, token);
}

static void probe_wait_frames(void *arg, uint64_t token, const uint32_t *frames, uint32_t n)
{
	struct gpu_source *g = arg;
	xpu_gpu_waits_frames(g->stitch, token, frames, n);
}

static void probe_wait_end(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp)
{
	struct gpu_source *g = arg;
	xpu_gpu_waits_end(g->stitch, pid, tid, time, sp);
}

static void probe_node_made(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t node, uint32_t key,
			    uint64_t token)
{
	struct gpu_source *g = arg;
	xpu_gpu_waits_node(g->stitch, pid, tid, time, node, key, token);
}

static void probe_node_run(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint64_t sp, uint64_t node,
			   int blind)
{
	struct gpu_source *g = arg;
	xpu_gpu_waits_run(g->stitch, pid, tid, time, sp, node, blind);
}

/* Each site's stacks stay in use for as long as the process launches. */
static void mark_sites(void *arg, struct xpu_dict *d)
{
	struct gpu_source *g = arg;
	if (g->probes)
		xpu_gpu_probes_mark(g->probes, d);
	xpu_gpu_waits_mark(g->stitch, d);
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = g->conns[i];
		for (uint32_t k = 0; c && k < c->nsites; k++)
			xpu_dict_mark_stack(d, c->sites[k].full);
	}
}

static void start_own(struct gpu_source *g, uint32_t hz, struct xpu_service *svc)
{
	struct bpf_program *prog;
	int config, counts;
	if (hz && xpu_gpu_probes_own_parts(g->probes, &prog, &config, &counts) == 0)
		g->own = xpu_gpu_own_new(prog, config, counts, hz, svc);
}

struct xpu_source *xpu_source_gpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      struct xpu_service *svc, const struct xpu_gpu_source_opts *o)
{
	struct gpu_source *g = calloc(1, sizeof(*g));
	if (!g) {
		xpu_gpu_probes_free(o->probes);
		return NULL;
	}
	g->base = (struct xpu_source){ "gpu", gpu_fd, gpu_drain, gpu_tick, gpu_destroy };
	g->sess = s;
	g->inject_lib = o->inject_lib;
	g->start_flags = XPU_WIRE_START_MEMCPY | (o->no_stacks ? XPU_WIRE_START_NO_SITES : 0);
	g->lfd = -1;
	g->locked = o->locked;
	g->mode_gen = s->cfg.gpu.gen;
	snprintf(g->sock_path, sizeof(g->sock_path), "%s", xpu_gpu_socket_path());
	xpu_htab_init(&g->widx);
	g->diag = xpu_inject_diag_new(g->sock_path);
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	int peers = xpu_peers_init(&g->peers, xpu_peers_count_devices(), s->cfg.window_ns);
	g->name_refused = xpu_dict_cstr(&s->dict, "[kernel name over budget]");
	g->series_refused = xpu_dict_cstr(&s->dict, "[kernels over budget]");
	g->stitch = xpu_gpu_waits_new(&s->dict);
	if (!g->diag || g->epfd < 0 || peers < 0 || !g->stitch) {
		xpu_gpu_probes_free(o->probes);
		gpu_destroy(&g->base);
		return NULL;
	}
	struct xpu_gpu_probe_sink ps = { .site = probe_site, .launch = probe_launch, .started = probe_started,
					 .probed = probe_probed, .cpu = probe_cpu, .span = probe_span, .wait_begin = probe_wait_begin,
					 .wait_frames = probe_wait_frames, .wait_end = probe_wait_end,
					 .node_made = probe_node_made, .node_run = probe_node_run, .arg = g };
	if (o->probes && xpu_gpu_probes_start(o->probes, &ps) == 0)
		g->probes = o->probes;
	else if (o->probes)
		xpu_gpu_probes_free(o->probes);
	else if (!o->no_bpf)
		g->probes = xpu_gpu_probes_new(sym, &s->dict, svc, &ps);
	if (o->no_bpf) {
		snprintf(g->problem, sizeof(g->problem), "launch stacks are off (no kernel BTF for the BPF probes)");
	} else if (g->probes) {
		probes_mode(g);
		/* Without call sites there is no launch stack to stitch. */
		xpu_gpu_probes_waiters(g->probes, o->waiters, o->no_stacks ? 0 : o->nwaiters);
		if (o->nodes && !o->no_stacks)
			xpu_gpu_probes_nodes(g->probes, o->nodes);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_PROBES };
		epoll_ctl(g->epfd, EPOLL_CTL_ADD, xpu_gpu_probes_fd(g->probes), &ev);
		start_own(g, o->own_hz, svc);
	} else {
		snprintf(g->problem, sizeof(g->problem), "launch stacks unavailable (the GPU BPF probes did not load)");
	}
	g->lfd = listen_socket(g);
	if (g->lfd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_LISTEN };
		epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->lfd, &ev);
	}
	describe(g);
	if (xpu_session_add_holder(s, mark_sites, g) < 0) {
		gpu_destroy(&g->base);
		return NULL;
	}
	return &g->base;
}
