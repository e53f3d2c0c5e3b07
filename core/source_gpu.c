#include "source_gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "gpu_probes.h"
#include "gpu_wire.h"
#include "grow.h"
#include "inject_diag.h"
#include "session.h"
#include "source.h"
#include "sys.h"

#define MAX_CONNS 256
#define MAX_SITES_PER_PROC 16384
#define MAX_NAMES_PER_PROC 65536
#define PENDING 65536
/* A launch whose site stack has not arrived by then is shown without one. */
#define PENDING_NS 500000000ULL
/* A process maps CUDA when it first uses it, which can be long after it
 * started: its maps are looked at again after 1, 2, 4, ... seconds, up to a
 * minute apart, and at most this many processes are looked at per refresh. */
#define RESCAN_FIRST_NS 1000000000ULL
#define RESCAN_MAX_NS 60000000000ULL
#define SCANS_PER_TICK 16
#define SCANNED 1024

enum { TAG_LISTEN = 1, TAG_PROBES = 2, TAG_CONN = 3 };
/* CUPTI's callback domains, as the library reports them. */
enum { CUPTI_DRIVER = 1, CUPTI_RUNTIME = 2 };

struct site_stacks {
	uint32_t cpu;		/* the site's CPU frames, 0 = not captured yet */
	uint32_t api;		/* api string the full stack was built with */
	uint32_t full;		/* cpu + the launch API frame */
};

struct conn {
	int fd;
	uint32_t pid, uid;
	uint32_t comm;		/* dict string */
	int hello;
	uint32_t *names;	/* wire name id - 1 -> dict string */
	uint32_t nnames, names_cap;
	uint32_t api[2][XPU_WIRE_MAX_CBID];
	struct site_stacks *sites;	/* by site id - 1 */
	uint32_t nsites;
	uint64_t dropped, cupti_dropped;	/* the library's counters, last seen */
	uint64_t reported_drops;	/* of the sum below, already sent as DROP events */
	struct xpu_wire_stats wire;
	uint64_t bad;		/* records with impossible values */
};

struct pending {
	uint32_t pid;
	struct xpu_wire_launch l;
	uint64_t arrived;
};

struct gpu_source {
	struct xpu_source base;
	struct xpu_session *sess;
	struct xpu_gpu_probes *probes;
	struct xpu_inject_diag *diag;	/* why launching processes have no library */
	int epfd, lfd;
	char sock_path[108];
	const char *inject_lib;
	uint32_t start_flags;	/* sent to each library that connects */
	struct conn *conns[MAX_CONNS];
	struct pending *pending;
	uint32_t phead, ptail;	/* ring of PENDING */
	struct { uint32_t pid; uint64_t next, gap; } scanned[SCANNED];
	uint64_t probe_drops_seen;
	uint64_t connections;
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

/* The launch's full stack: the site's CPU frames and the API frame. */
static uint32_t launch_stack(struct gpu_source *g, struct conn *c, struct site_stacks *s,
			     uint32_t api)
{
	struct xpu_dict *d = &g->sess->dict;
	if (!s || !s->cpu)
		return 0;
	if (s->full && s->api == api)
		return s->full;
	uint32_t n;
	const uint32_t *cpu = xpu_dict_stack_get(d, s->cpu, &n);
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	if (n >= XPU_DICT_MAX_DEPTH)
		n = XPU_DICT_MAX_DEPTH - 1;
	memcpy(frames, cpu, n * sizeof(uint32_t));
	frames[n++] = xpu_dict_frame(d, XPU_FRAME_LAUNCH, api, 0);
	s->api = api;
	s->full = xpu_dict_stack(d, frames, n);
	return s->full;
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
	ev.launch.stack = launch_stack(g, c, site_of(c, l->site, 0), api);
	ev.launch.api = api;
	ev.launch.comm = c->comm;
	emit(g, &ev);
}

/* Launches wait in order until their site's stack is known or too old. */
static void flush_pending(struct gpu_source *g, uint64_t now, int all)
{
	while (g->phead != g->ptail) {
		struct pending *p = &g->pending[g->phead % PENDING];
		struct conn *c = conn_of(g, p->pid);
		struct site_stacks *s = c ? site_of(c, p->l.site, 0) : NULL;
		if (c && !(s && s->cpu) && !all && now - p->arrived < PENDING_NS)
			break;
		if (c)
			emit_launch(g, c, &p->l);
		g->phead++;
	}
}

static void on_hello(void *arg, const struct xpu_wire_hello *h);

struct decode_ctx {
	struct gpu_source *g;
	struct conn *c;
};

static void on_name(void *arg, uint32_t id, const char *name, size_t len)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	/* Ids come in order; anything else is a confused or hostile peer. */
	if (!c->hello || id != c->nnames + 1 || id > MAX_NAMES_PER_PROC) {
		c->bad++;
		return;
	}
	if (xpu_grow((void **)&c->names, &c->names_cap, c->nnames + 1, sizeof(uint32_t)))
		return;
	c->names[c->nnames++] = xpu_dict_str(&x->g->sess->dict, name, len);
}

static void on_api(void *arg, uint32_t domain, uint32_t cbid, const char *name, size_t len)
{
	struct decode_ctx *x = arg;
	if (!x->c->hello || (domain != CUPTI_DRIVER && domain != CUPTI_RUNTIME) ||
	    cbid >= XPU_WIRE_MAX_CBID) {
		x->c->bad++;
		return;
	}
	x->c->api[domain == CUPTI_DRIVER][cbid] = xpu_dict_str(&x->g->sess->dict, name, len);
}

static int sane_span(uint64_t start, uint64_t end)
{
	return end >= start && end - start < 3600ULL * 1000000000ULL;
}

static void on_kernel(void *arg, const struct xpu_wire_kernel *k)
{
	struct decode_ctx *x = arg;
	struct conn *c = x->c;
	if (!c->hello || !sane_span(k->start, k->end) || k->name > c->nnames) {
		c->bad++;
		return;
	}
	struct xpu_event ev = { .type = XPU_EV_GPU_KERNEL, .pid = c->pid, .time = k->start };
	ev.kernel.end = k->end;
	ev.kernel.corr = k->corr;
	ev.kernel.name = k->name ? c->names[k->name - 1] : xpu_dict_cstr(&x->g->sess->dict, "[unnamed kernel]");
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
	struct gpu_source *g = x->g;
	struct conn *c = x->c;
	if (!c->hello) {
		c->bad++;
		return;
	}
	struct site_stacks *s = site_of(c, l->site, 0);
	if (g->phead == g->ptail && (l->site == 0 || (s && s->cpu))) {
		emit_launch(g, c, l);
		return;
	}
	if (g->ptail - g->phead == PENDING)
		flush_pending(g, UINT64_MAX, 0);	/* full: the oldest go out without a stack */
	struct pending *p = &g->pending[g->ptail++ % PENDING];
	p->pid = c->pid;
	p->l = *l;
	p->arrived = xpu_now_mono();
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
	proc_event(x->g, c, XPU_GPU_PROC_STATUS, s->state,
		   s->sites > UINT32_MAX ? UINT32_MAX : (uint32_t)s->sites);
}

static const struct xpu_wire_sink sink = {
	.hello = on_hello, .name = on_name, .api = on_api, .kernel = on_kernel,
	.memcpy = on_memcpy, .launch = on_launch, .status = on_status,
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

static void on_hello(void *arg, const struct xpu_wire_hello *h)
{
	struct decode_ctx *x = arg;
	struct gpu_source *g = x->g;
	struct conn *c = x->c;
	if (c->hello || !pid_matches(c->pid, h->pid)) {
		xpu_warn("a process (pid %u, uid %u) claimed to be pid %u: connection refused", c->pid,
			 c->uid, h->pid);
		c->bad++;
		shutdown(c->fd, SHUT_RDWR);
		return;
	}
	c->hello = 1;
	c->comm = xpu_dict_str(&g->sess->dict, h->comm, strnlen(h->comm, sizeof(h->comm)));
	if (g->probes)
		xpu_gpu_probes_injected(g->probes, c->pid);
	xpu_inject_diag_connected(g->diag, c->pid);
	struct xpu_wire_start st = { .flush_ms = 20, .flags = g->start_flags };
	send_control(c->fd, XPU_WIRE_START, &st, sizeof(st));
	g->connections++;
	proc_event(g, c, XPU_GPU_PROC_CONNECTED, 0, 0);
}

static void close_conn(struct gpu_source *g, int slot)
{
	struct conn *c = g->conns[slot];
	xpu_session_drops(g->sess, XPU_SRC_GPU,
			  c->dropped + c->cupti_dropped + c->wire.bad_packets + c->bad, &c->reported_drops);
	if (c->hello) {
		flush_pending(g, UINT64_MAX, 1);
		proc_event(g, c, XPU_GPU_PROC_LEFT, 0, 0);
		if (g->probes)
			xpu_gpu_probes_left(g->probes, c->pid);
	}
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->names);
	free(c->sites);
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

static void accept_conns(struct gpu_source *g)
{
	for (;;) {
		int fd = accept4(g->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int slot = 0;
		while (slot < MAX_CONNS && g->conns[slot])
			slot++;
		struct conn *c = slot < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
		if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->pid = (uint32_t)cred.pid;
		c->uid = (uint32_t)cred.uid;
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
	int n = epoll_wait(g->epfd, evs, 32, 0), done = 0;
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64 & 0xff;
		int slot = (int)(evs[i].data.u64 >> 8);
		if (tag == TAG_LISTEN)
			accept_conns(g);
		else if (tag == TAG_PROBES)
			xpu_gpu_probes_drain(g->probes);
		else if (tag == TAG_CONN && g->conns[slot])
			read_conn(g, slot);
		done++;
	}
	flush_pending(g, xpu_now_mono(), 0);
	return done;
}

/* Processes busy on a CPU are where new CUDA libraries appear: look at each
 * active process's maps now and then for launch functions to probe. */
static void scan_active(struct gpu_source *g, uint64_t now)
{
	const struct xpu_cpu_model *m = &g->sess->cpu;
	int budget = SCANS_PER_TICK;
	for (uint32_t i = 0; i < m->ntasks && budget; i++) {
		const struct xpu_cpu_task *t = &m->tasks[i];
		if (t->tid || !t->last)
			continue;
		uint32_t slot = t->pid % SCANNED;
		if (g->scanned[slot].pid != t->pid) {
			g->scanned[slot].pid = t->pid;
			g->scanned[slot].gap = RESCAN_FIRST_NS / 2;
		} else if (now < g->scanned[slot].next) {
			continue;
		}
		if (g->scanned[slot].gap < RESCAN_MAX_NS)
			g->scanned[slot].gap *= 2;
		g->scanned[slot].next = now + g->scanned[slot].gap;
		xpu_gpu_probes_scan(g->probes, t->pid);
		budget--;
	}
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

static void describe(struct gpu_source *g)
{
	int n = 0, more;
	for (int i = 0; i < MAX_CONNS; i++)
		n += g->conns[i] && g->conns[i]->hello;
	struct xpu_gpu_probe_stats st = { 0 };
	if (g->probes)
		xpu_gpu_probes_stats(g->probes, &st);
	/* A process whose library never connected comes first: it is what to fix. */
	char lead[440] = "";
	const char *why = xpu_inject_diag_text(g->diag, &more);
	if (*why)
		snprintf(lead, sizeof(lead), more ? "%s (and %d more); " : "%s; ", why, more);
	if (n)
		xpu_session_status(g->sess, XPU_SRC_GPU, XPU_SRC_ACTIVE,
				   "%s%d CUDA process%s with the xputop library; launch probes on %u CUDA librar%s%s%s",
				   lead, n, n == 1 ? "" : "es", st.runtime_files, st.runtime_files == 1 ? "y" : "ies",
				   g->problem[0] ? "; " : "", g->problem);
	else
		xpu_session_status(g->sess, XPU_SRC_GPU, st.launches ? XPU_SRC_ACTIVE : XPU_SRC_WAITING,
				   "%sno CUDA process is connected: run one under xputop (sudo xputop -- CMD) "
				   "or start it with CUDA_INJECTION64_PATH=%s; processes without it show "
				   "launches only%s%s", lead,
				   g->inject_lib ? g->inject_lib : "libxputop_inject.so",
				   g->problem[0] ? "; " : "", g->problem);
}

static void gpu_tick(struct xpu_source *src, struct xpu_session *s)
{
	struct gpu_source *g = (struct gpu_source *)src;
	uint64_t now = xpu_now_mono();
	gpu_drain(src, s);
	if (g->probes)
		scan_active(g, now);
	xpu_inject_diag_tick(g->diag, now);
	report_drops(g);
	describe(g);
}

static void gpu_destroy(struct xpu_source *src)
{
	struct gpu_source *g = (struct gpu_source *)src;
	for (int i = 0; i < MAX_CONNS; i++)
		if (g->conns[i])
			close_conn(g, i);
	if (g->lfd >= 0) {
		close(g->lfd);
		unlink(g->sock_path);
	}
	if (g->epfd >= 0)
		close(g->epfd);
	xpu_gpu_probes_free(g->probes);
	xpu_inject_diag_free(g->diag);
	free(g->pending);
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
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		snprintf(g->problem, sizeof(g->problem),
			 "another xputop is already collecting GPU data (%s)", g->sock_path);
		close(fd);
		return -1;
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

static void probe_site(void *arg, uint32_t pid, uint32_t site, uint32_t stack)
{
	struct gpu_source *g = arg;
	struct conn *c = conn_of(g, pid);
	struct site_stacks *s = c ? site_of(c, site, 1) : NULL;
	if (s) {
		s->cpu = stack;
		s->full = 0;
	}
	flush_pending(g, xpu_now_mono(), 0);
}

static void probe_launch(void *arg, uint32_t pid, uint32_t tid, uint64_t time, uint32_t comm,
			 uint32_t api, uint32_t stack)
{
	struct gpu_source *g = arg;
	struct xpu_event ev = { .type = XPU_EV_GPU_LAUNCH, .pid = pid, .tid = tid, .time = time };
	ev.launch.stack = stack;
	ev.launch.api = api;
	ev.launch.comm = comm;
	ev.launch.flags = XPU_GPU_LAUNCH_ONLY;
	emit(g, &ev);
	xpu_inject_diag_launch(g->diag, pid, time);
}

/* Each site's stacks stay in use for as long as the process launches. */
static void mark_sites(void *arg, struct xpu_dict *d)
{
	struct gpu_source *g = arg;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = g->conns[i];
		for (uint32_t k = 0; c && k < c->nsites; k++) {
			xpu_dict_mark_stack(d, c->sites[k].cpu);
			xpu_dict_mark_stack(d, c->sites[k].full);
		}
	}
}

struct xpu_source *xpu_source_gpu_new(struct xpu_session *s, struct xpu_symbolizer *sym,
				      const char *inject_lib, int no_stacks, int no_bpf)
{
	struct gpu_source *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->base = (struct xpu_source){ "gpu", gpu_fd, gpu_drain, gpu_tick, gpu_destroy };
	g->sess = s;
	g->inject_lib = inject_lib;
	g->start_flags = XPU_WIRE_START_MEMCPY | (no_stacks ? XPU_WIRE_START_NO_SITES : 0);
	g->lfd = -1;
	snprintf(g->sock_path, sizeof(g->sock_path), "%s", xpu_gpu_socket_path());
	g->pending = calloc(PENDING, sizeof(*g->pending));
	g->diag = xpu_inject_diag_new(g->sock_path);
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!g->pending || !g->diag || g->epfd < 0) {
		gpu_destroy(&g->base);
		return NULL;
	}
	struct xpu_gpu_probe_sink ps = { probe_site, probe_launch, g };
	g->probes = no_bpf ? NULL : xpu_gpu_probes_new(sym, &s->dict, &ps);
	if (no_bpf) {
		snprintf(g->problem, sizeof(g->problem), "launch stacks are off (no kernel BTF for the BPF probes)");
	} else if (g->probes) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_PROBES };
		epoll_ctl(g->epfd, EPOLL_CTL_ADD, xpu_gpu_probes_fd(g->probes), &ev);
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
