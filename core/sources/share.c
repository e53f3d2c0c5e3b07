/* SPDX-License-Identifier: GPL-2.0-only */
#include "share.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "err.h"
#include "event.h"
#include "procs.h"
#include "record.h"
#include "session.h"
#include "source.h"
#include "source_gpu.h"
#include "sys.h"

static const char hello_magic[8] = "XPUSHARE";
#define HELLO_LEN 16
#define READ_CHUNK 65536
#define KEEP_BYTES (1u << 20)	/* a client's send buffer kept when empty */

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* ---- needs (client -> collector) ---- */

static const char need_magic[4] = "XPUN";

size_t xpu_share_need_encode(const struct xpu_share_need *n, uint8_t *buf, size_t size)
{
	uint32_t np = n->flags & XPU_NEED_ALL_PIDS ? 0 : n->npids;
	size_t len = XPU_NEED_HEAD + 4 * (size_t)np;
	if (np > XPU_NEED_PIDS || len > size || (n->flags & ~XPU_NEED_BITS) || !n->hz || n->hz > XPU_NEED_HZ_MAX ||
	    n->interval_ms < XPU_NEED_MS_MIN || n->interval_ms > XPU_NEED_MS_MAX ||
	    (!np && !(n->flags & XPU_NEED_ALL_PIDS)))
		return 0;
	memcpy(buf, need_magic, 4);
	put32(buf + 4, XPU_NEED_VERSION);
	put32(buf + 8, (uint32_t)len);
	put32(buf + 12, n->flags);
	put32(buf + 16, n->hz);
	put32(buf + 20, n->interval_ms);
	put32(buf + 24, np);
	for (uint32_t i = 0; i < np; i++)
		put32(buf + XPU_NEED_HEAD + 4 * i, n->pids[i]);
	return len;
}

static int need_bad(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

int xpu_share_need_decode(const uint8_t *buf, size_t len, struct xpu_share_need *n, size_t *used,
			  const char **why)
{
	if (len >= 4 && memcmp(buf, need_magic, 4))
		return need_bad(why, "not a need (magic)");
	if (len < XPU_NEED_HEAD)
		return 0;
	if (get32(buf + 4) != XPU_NEED_VERSION)
		return need_bad(why, "a need of another version");
	uint32_t total = get32(buf + 8), flags = get32(buf + 12), hz = get32(buf + 16), ms = get32(buf + 20);
	uint32_t np = get32(buf + 24);
	if (np > XPU_NEED_PIDS || total != XPU_NEED_HEAD + 4 * np)
		return need_bad(why, "a need's length or pid count is out of bounds");
	if ((flags & ~XPU_NEED_BITS) || !hz || hz > XPU_NEED_HZ_MAX)
		return need_bad(why, "a need's flags or rate are out of bounds");
	if (ms < XPU_NEED_MS_MIN || ms > XPU_NEED_MS_MAX)
		return need_bad(why, "a need's refresh interval is out of bounds");
	if ((flags & XPU_NEED_ALL_PIDS) ? np != 0 : np == 0)
		return need_bad(why, "a need names pids and every process, or neither");
	if (len < total)
		return 0;
	for (uint32_t i = 0; i < np; i++)
		if (!(n->pids[i] = get32(buf + XPU_NEED_HEAD + 4 * i)))
			return need_bad(why, "a need names pid 0");
	n->flags = flags;
	n->hz = hz;
	n->interval_ms = ms;
	n->npids = np;
	*used = total;
	return 1;
}

void xpu_share_needs_add(struct xpu_share_needs *u, const struct xpu_share_need *n)
{
	if (n->hz > u->hz)
		u->hz = n->hz;
	if (n->interval_ms && (!u->interval_ms || n->interval_ms < u->interval_ms))
		u->interval_ms = n->interval_ms;
	u->flags |= n->flags;
	if (u->flags & XPU_NEED_ALL_PIDS) {
		u->npids = 0;
		return;
	}
	for (uint32_t i = 0; i < n->npids; i++) {
		uint32_t j = 0;
		while (j < u->npids && u->pids[j] != n->pids[i])
			j++;
		if (j < u->npids)
			continue;
		if (u->npids == XPU_NEEDS_PIDS) {	/* cannot happen with the bounds above: widen, never narrow */
			u->flags |= XPU_NEED_ALL_PIDS;
			u->npids = 0;
			return;
		}
		u->pids[u->npids++] = n->pids[i];
	}
}

/* The GPU socket's directory, with a name of ours in it. */
static void beside_gpu_socket(char *out, size_t size, const char *name)
{
	const char *gpu = xpu_gpu_socket_path();
	const char *slash = strrchr(gpu, '/');
	int dirlen = slash ? (int)(slash - gpu) : 1;
	snprintf(out, size, "%.*s/%s", dirlen, slash ? gpu : ".", name);
}

void xpu_share_paths(char *sock, size_t sock_size, char *lock, size_t lock_size)
{
	if (sock)
		beside_gpu_socket(sock, sock_size, "share.sock");
	if (lock)
		beside_gpu_socket(lock, lock_size, "collector.lock");
}

/* The collector lock is held by a keeper process of its own, which lets it
 * go as soon as this xputop's main thread begins to die.  A lock this
 * process held itself would be let go only when the kernel closes its
 * files, after its last thread has ended: a killed collector's threads end
 * as their system calls return, and one taking launch probes out (each
 * going out waits for RCU grace periods) held the lock 0.6 s after a
 * kill -9 on this machine, half the time, and about 5 s on CI's (ci38: an
 * interactive view that stood still for 4.9 s before taking over).  The
 * same holds for the thread that closes the files, so neither the end of a
 * pipe nor PR_SET_PDEATHSIG (sent after the files are closed) is soon
 * enough: the keeper waits on a robust mutex the main thread holds, which
 * the kernel marks as its owner's death and wakes as that thread begins to
 * exit (before its memory and files go).  The keeper is xputop itself,
 * executed again (a fork alone would show this xputop's memory twice over
 * in top), holding the lock on descriptor 3 and the mutex's memory on 4. */
#define KEEPER_LOCK_FD 3
#define KEEPER_MUTEX_FD 4

static struct {
	int on;			/* xputop's main() ran xpu_share_keeper_enable */
	pthread_mutex_t *m;	/* in the memfd's page, locked by the main thread */
	int memfd;		/* the handle */
	pid_t pid;
} keeper = { 0, NULL, -1, 0 };

void xpu_share_keeper_enable(void)
{
	keeper.on = 1;
}

int xpu_share_keeper_main(void)
{
	prctl(PR_SET_NAME, "xputop-lock");
	pthread_mutex_t *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, KEEPER_MUTEX_FD, 0);
	if (m == MAP_FAILED)
		return 1;
	/* 0: the collector let it go; EOWNERDEAD: its main thread died. */
	pthread_mutex_lock(m);
	return 0;
}

/* In the child between fork and exec: async-signal-safe calls only. */
static void keeper_exec(int lockfd, int memfd, pid_t parent, char **envp)
{
	static char arg0[] = "xputop-lock", arg1[] = XPU_SHARE_KEEPER_ARG;
	char *argv[] = { arg0, arg1, NULL };
	/* (a second way out, should the mutex's fail) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(0);
	/* Above 4 first, so that neither lands on the other's number. */
	int l = fcntl(lockfd, F_DUPFD, 16), f = fcntl(memfd, F_DUPFD, 16);
	if (l < 0 || f < 0 || dup2(l, KEEPER_LOCK_FD) < 0 || dup2(f, KEEPER_MUTEX_FD) < 0)
		_exit(0);
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3; fd++)
		if (null >= 0 && null != fd)
			dup2(null, fd);
	syscall(SYS_close_range, KEEPER_MUTEX_FD + 1, ~0U, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve("/proc/self/exe", argv, envp);
	_exit(0);
}

static void keeper_drop_mutex(void)
{
	if (keeper.m) {
		pthread_mutex_unlock(keeper.m);
		munmap(keeper.m, sizeof(*keeper.m));
	}
	keeper.m = NULL;
	if (keeper.memfd >= 0)
		close(keeper.memfd);
	keeper.memfd = -1;
}

/* Hands the lock on fd to a keeper: the handle, or fd itself where no
 * keeper can start (then it goes as this process's files do). */
static int hand_to_keeper(int fd)
{
	pthread_mutexattr_t ma;
	if (!keeper.on || keeper.memfd >= 0)
		return fd;	/* not xputop's binary (a test's); one lock a process */
	keeper.memfd = (int)syscall(SYS_memfd_create, "xputop-lock", MFD_CLOEXEC);
	if (keeper.memfd < 0 || ftruncate(keeper.memfd, sizeof(*keeper.m)) < 0)
		goto no_keeper;
	keeper.m = mmap(NULL, sizeof(*keeper.m), PROT_READ | PROT_WRITE, MAP_SHARED, keeper.memfd, 0);
	if (keeper.m == MAP_FAILED) {
		keeper.m = NULL;
		goto no_keeper;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	int rc = pthread_mutex_init(keeper.m, &ma);
	pthread_mutexattr_destroy(&ma);
	if (rc || pthread_mutex_lock(keeper.m)) {
		munmap(keeper.m, sizeof(*keeper.m));
		keeper.m = NULL;
		goto no_keeper;
	}
	/* Its environment is empty but for the sanitizers' settings (a
	 * sanitizer build's reports go where the test harness looks). */
	static const char *const keep_env[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
	char *envp[4] = { NULL };
	for (size_t i = 0, n = 0; i < 3; i++) {
		const char *v = getenv(keep_env[i]);
		size_t len = v ? strlen(keep_env[i]) + strlen(v) + 2 : 0;
		if (v && (envp[n] = malloc(len)))
			snprintf(envp[n++], len, "%s=%s", keep_env[i], v);
	}
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		keeper_exec(fd, keeper.memfd, parent, envp);
	for (size_t i = 0; i < 3; i++)
		free(envp[i]);
	if (pid < 0)
		goto no_keeper;
	close(fd);
	keeper.pid = pid;
	return keeper.memfd;
no_keeper:
	keeper_drop_mutex();
	return fd;
}

void xpu_share_unlock(int handle)
{
	if (handle < 0)
		return;
	if (handle != keeper.memfd) {
		close(handle);	/* the lock itself */
		return;
	}
	keeper_drop_mutex();
	/* It takes the mutex at once; a keeper not gone in 100 ms is left to
	 * the kernel (a zombie while this xputop runs). */
	for (int i = 0; keeper.pid > 0 && i < 100; i++) {
		if (waitpid(keeper.pid, NULL, WNOHANG) != 0)
			keeper.pid = 0;
		else
			usleep(1000);
	}
	keeper.pid = 0;
}

/* Whether pid is root's, named xputop-lock, and ppid's child: anyone may
 * name a process so. */
static int is_keeper_of(uint32_t pid, pid_t ppid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) == 0 && st.st_uid == 0 && xpu_procs_ppid_at("/proc", pid) == (long)ppid &&
	       xpu_procs_named(pid, "xputop-lock");
}

int xpu_share_keeper_pidfd(pid_t collector)
{
	uint32_t pids[16];
	int n = xpu_procs_by_name("xputop-lock", pids, 16);
	for (int i = 0; i < n && i < 16; i++) {
		if (!is_keeper_of(pids[i], collector))
			continue;
		int fd = (int)syscall(SYS_pidfd_open, (pid_t)pids[i], 0);
		/* the pid still the keeper's once held: not one reused in between */
		if (fd >= 0 && is_keeper_of(pids[i], collector))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

int xpu_share_lock_lost(void)
{
	if (keeper.pid <= 0 || waitpid(keeper.pid, NULL, WNOHANG) != keeper.pid)
		return 0;
	keeper.pid = 0;
	return 1;
}

int xpu_share_lock(void)
{
	char lock[128], dir[128];
	xpu_share_paths(NULL, 0, lock, sizeof(lock));
	snprintf(dir, sizeof(dir), "%s", lock);
	*strrchr(dir, '/') = '\0';
	int dfd = xpu_sys_own_dir(dir);	/* root's alone, or anyone could hold the lock */
	if (dfd < 0)
		return -1;
	close(dfd);
	int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return hand_to_keeper(fd);
}

/* ---- the collector's side ---- */

struct server;

struct peer {
	int fd;
	struct ucred cred;
	struct server *sv;
	struct xpu_rec_writer *w;
	uint8_t *out;			/* bytes not sent yet: out[off, len) */
	size_t off, len, cap;
	uint64_t stalled_since;		/* CLOCK_MONOTONIC ns since bytes wait and none went, or 0 */
	uint8_t in[XPU_NEED_MAX];	/* a need on its way */
	size_t nin;
	struct xpu_share_need need;
	int has_need;
	int dead;
};

struct server {
	struct xpu_source base;
	struct xpu_session *sess;
	int lfd, epfd, lockfd;
	gid_t gid;			/* XPU_SHARE_GROUP's, or (gid_t)-1 */
	char path[108];
	struct xpu_rec_meta meta;
	struct peer *peers[XPU_SHARE_MAX_CLIENTS];
	size_t pending;			/* bytes queued for all of them */
	uint64_t dropped;		/* clients dropped for not reading */
	uint64_t refused;		/* clients dropped for a malformed need */
	struct xpu_share_counts away;	/* turned away before attaching */
	uint64_t needs_gen;		/* changes with the clients' needs */
};

#define TAG_LISTEN UINT64_MAX

/* Queues n bytes for the peer; -ENOBUFS once it is too far behind. */
static int peer_sink(void *arg, const void *buf, size_t n)
{
	struct peer *p = arg;
	size_t pending = p->len - p->off;
	if (p->dead)
		return -EPIPE;
	if (pending + n > XPU_SHARE_BACKLOG || p->sv->pending + n > XPU_SHARE_BACKLOG_TOTAL)
		return -ENOBUFS;
	if (p->off && p->len + n > p->cap) {	/* slide the unsent bytes down first */
		memmove(p->out, p->out + p->off, pending);
		p->len = pending;
		p->off = 0;
	}
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 65536;
		while (cap < p->len + n)
			cap *= 2;
		uint8_t *b = realloc(p->out, cap);
		if (!b)
			return -ENOMEM;
		p->out = b;
		p->cap = cap;
	}
	memcpy(p->out + p->len, buf, n);
	p->len += n;
	p->sv->pending += n;
	return 0;
}

/* Sends what the socket takes now; asks for EPOLLOUT while some is left. */
static void peer_send(struct server *sv, struct peer *p)
{
	size_t off0 = p->off;
	while (p->off < p->len) {
		ssize_t k = send(p->fd, p->out + p->off, p->len - p->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (k <= 0) {
			p->dead = 1;
			return;
		}
		p->off += (size_t)k;
		sv->pending -= (size_t)k;
	}
	if (p->off > off0 || p->off == p->len)
		p->stalled_since = 0;
	else if (!p->stalled_since)
		p->stalled_since = xpu_now_mono();
	if (p->off == p->len) {
		p->off = p->len = 0;
		if (p->cap > KEEP_BYTES) {	/* a backlog once is no reason to hold its memory */
			free(p->out);
			p->out = NULL;
			p->cap = 0;
		}
	}
	struct epoll_event ev = { .events = EPOLLIN | (p->len ? EPOLLOUT : 0), .data.ptr = p };
	epoll_ctl(sv->epfd, EPOLL_CTL_MOD, p->fd, &ev);
}

static void peer_free(struct server *sv, int i)
{
	struct peer *p = sv->peers[i];
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	p->dead = 1;	/* what the writer has left goes nowhere */
	xpu_rec_close(p->w);
	sv->pending -= p->len - p->off;
	if (p->has_need)
		sv->needs_gen++;
	free(p->out);
	free(p);
	sv->peers[i] = NULL;
}

static void reap(struct server *sv)
{
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++)
		if (sv->peers[i] && sv->peers[i]->dead)
			peer_free(sv, i);
}

/* Whether the peer is root or in the group: the socket's mode says the
 * same, this holds even if someone loosened it. */
static int allowed(const struct server *sv, int fd, struct ucred *uc)
{
	socklen_t l = sizeof(*uc);
	gid_t groups[256];
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &l) < 0)
		return 0;
	if (uc->uid == 0)
		return 1;
	if (sv->gid == (gid_t)-1)
		return 0;
	if (uc->gid == sv->gid)
		return 1;
	l = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l) < 0)
		return 0;
	for (size_t i = 0; i < l / sizeof(gid_t); i++)
		if (groups[i] == sv->gid)
			return 1;
	return 0;
}

/* A connection closed before attaching, counted by its uid. */
static void turn_away(struct server *sv, int fd, const struct ucred *uc, int full)
{
	struct xpu_share_counts *c = &sv->away;
	uint32_t uid = uc ? uc->uid : (uint32_t)-1;
	unsigned i = 0;
	while (i < c->nuids && c->uids[i].uid != uid)
		i++;
	if (i == c->nuids && c->nuids < XPU_SHARE_UIDS)
		c->uids[c->nuids++].uid = uid;
	else if (i == c->nuids) {	/* the others, together */
		i = XPU_SHARE_UIDS;
		c->uids[i].uid = (uint32_t)-1;
	}
	c->uids[i].n++;
	c->turned_away++;
	if (full)
		c->full++;
	else
		c->not_allowed++;
	xpu_debug("a connection (pid %d, uid %u) turned away: %s", uc ? (int)uc->pid : 0, uid,
		  full ? "every place is taken" : "neither root nor of the group " XPU_SHARE_GROUP);
	close(fd);
}

/* A new client gets the hello, the header and, with its first event, the
 * whole dictionary. */
static void attach(struct server *sv, int fd)
{
	struct ucred uc = { 0 };
	int slot = -1;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS && slot < 0; i++)
		if (!sv->peers[i])
			slot = i;
	int ok = allowed(sv, fd, &uc);
	if (!ok || slot < 0) {
		turn_away(sv, fd, ok || uc.pid ? &uc : NULL, ok);
		return;
	}
	struct peer *p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return;
	}
	p->fd = fd;
	p->cred = uc;
	p->sv = sv;
	struct xpu_rec_meta m = sv->meta;
	if (sv->sess->stream_hz)	/* the rate the samples come at now */
		m.sample_hz = sv->sess->stream_hz;
	uint8_t hello[HELLO_LEN];
	memcpy(hello, hello_magic, sizeof(hello_magic));
	put32(hello + 8, XPU_SHARE_VERSION);
	put32(hello + 12, (uint32_t)getpid());
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = p };
	if (peer_sink(p, hello, sizeof(hello)) < 0 ||
	    !(p->w = xpu_rec_create_sink(&sv->sess->dict, &m, peer_sink, p)) ||
	    epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		if (p->w)
			xpu_rec_close(p->w);
		sv->pending -= p->len - p->off;
		free(p->out);
		free(p);
		close(fd);
		return;
	}
	sv->peers[slot] = p;
	peer_send(sv, p);
}

static void accept_all(struct server *sv)
{
	for (;;) {
		int fd = accept4(sv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		attach(sv, fd);
	}
}

/* A client sends its needs, or its end.  A malformed need ends it: the
 * bytes after it could not be trusted to start the next one. */
static void peer_input(struct server *sv, struct peer *p)
{
	ssize_t k = recv(p->fd, p->in + p->nin, sizeof(p->in) - p->nin, MSG_DONTWAIT);
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
		p->dead = 1;
		return;
	}
	if (k < 0)
		return;
	p->nin += (size_t)k;
	for (;;) {
		const char *why = "";
		size_t used = 0;
		int r = xpu_share_need_decode(p->in, p->nin, &p->need, &used, &why);
		if (r < 0) {
			xpu_debug("a client (pid %d, uid %u): %s: dropped", (int)p->cred.pid, p->cred.uid, why);
			sv->refused++;
			p->dead = 1;
			return;
		}
		if (r == 0)
			return;
		memmove(p->in, p->in + used, p->nin - used);
		p->nin -= used;
		p->has_need = 1;
		sv->needs_gen++;
	}
}

/* A client with bytes waiting that has read none for a while is gone in
 * all but name: it holds its backlog for nothing. */
static void reap_stalled(struct server *sv)
{
	uint64_t now = xpu_now_mono();
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++) {
		struct peer *p = sv->peers[i];
		if (p && !p->dead && p->stalled_since && now - p->stalled_since > XPU_SHARE_STALL_S * 1000000000ULL) {
			sv->dropped++;
			p->dead = 1;
		}
	}
}

static int server_drain(struct xpu_source *src, struct xpu_session *s)
{
	struct server *sv = (struct server *)src;
	struct epoll_event evs[XPU_SHARE_MAX_CLIENTS + 1];
	(void)s;
	int n = epoll_wait(sv->epfd, evs, XPU_SHARE_MAX_CLIENTS + 1, 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 == TAG_LISTEN) {
			accept_all(sv);
			continue;
		}
		struct peer *p = evs[i].data.ptr;
		if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			peer_input(sv, p);
		if (!p->dead && (evs[i].events & EPOLLOUT))
			peer_send(sv, p);
	}
	reap(sv);
	return n > 0 ? n : 0;
}

/* The tap: each event goes to every client's writer; at a tick the block
 * closes and goes out.  A client whose backlog is full is dropped here. */
static void server_event(void *arg, const struct xpu_event *ev)
{
	struct server *sv = arg;
	int any = 0;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++) {
		struct peer *p = sv->peers[i];
		if (!p || p->dead)
			continue;
		int rc = xpu_rec_write(p->w, ev);
		if (rc == 0 && ev->type == XPU_EV_TICK)
			rc = xpu_rec_flush(p->w);
		if (rc < 0 && rc != -EINVAL) {
			if (rc == -ENOBUFS)
				sv->dropped++;
			p->dead = 1;
			any = 1;
			continue;
		}
		if (ev->type != XPU_EV_TICK)
			continue;
		peer_send(sv, p);
		any |= p->dead;
	}
	if (ev->type == XPU_EV_TICK) {
		reap_stalled(sv);
		any = 1;
	}
	if (any)
		reap(sv);
}

static void server_forget(void *arg, uint32_t stack)
{
	struct server *sv = arg;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++)
		if (sv->peers[i])
			xpu_rec_forget_stack(sv->peers[i]->w, stack);
}

static int server_fd(struct xpu_source *src)
{
	return ((struct server *)src)->epfd;
}

static void server_destroy(struct xpu_source *src)
{
	struct server *sv = (struct server *)src;
	if (sv->sess && sv->sess->tap.arg == sv)
		memset(&sv->sess->tap, 0, sizeof(sv->sess->tap));
	xpu_share_server_stop(src);
	if (sv->epfd >= 0)
		close(sv->epfd);
	free(sv);
}

/* Root's alone, or root's and the group's: set while bound with umask 077,
 * so nobody else can connect in between. */
static int listen_stream(struct server *sv, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sv->path);
	sv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sv->lfd < 0)
		goto fail;
	unlink(sv->path);	/* left by a collector that died: the lock is ours */
	mode_t old = umask(077);
	int rc = bind(sv->lfd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0)
		goto fail;
	if (sv->gid != (gid_t)-1 ? chown(sv->path, 0, sv->gid) < 0 || chmod(sv->path, 0660) < 0
				  : chmod(sv->path, 0600) < 0)
		goto fail;
	if (listen(sv->lfd, XPU_SHARE_MAX_CLIENTS) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot serve other xputops on %s: %s", sv->path, strerror(errno));
	return -1;
}

struct xpu_source *xpu_share_server_new(struct xpu_session *s, int lockfd, const struct xpu_rec_meta *meta,
					char *err, size_t errlen)
{
	struct server *sv = calloc(1, sizeof(*sv));
	if (!sv) {
		xpu_share_unlock(lockfd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sv->base = (struct xpu_source){ "share", server_fd, server_drain, NULL, server_destroy };
	sv->lockfd = lockfd;
	sv->lfd = -1;
	sv->meta = *meta;
	struct group *g = getgrnam(XPU_SHARE_GROUP);
	sv->gid = g ? g->gr_gid : (gid_t)-1;
	xpu_share_paths(sv->path, sizeof(sv->path), NULL, 0);
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_LISTEN };
	if (sv->epfd < 0 || listen_stream(sv, err, errlen) < 0 ||
	    epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->lfd, &ev) < 0) {
		if (!*err)
			snprintf(err, errlen, "cannot serve other xputops: %s", strerror(errno));
		server_destroy(&sv->base);
		return NULL;
	}
	sv->sess = s;
	s->tap = (struct xpu_tap){ server_event, server_forget, sv };
	return &sv->base;
}

void xpu_share_server_stop(struct xpu_source *src)
{
	struct server *sv = (struct server *)src;
	if (sv->lfd >= 0)
		unlink(sv->path);
	xpu_share_unlock(sv->lockfd);
	sv->lockfd = -1;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++)
		if (sv->peers[i])
			peer_free(sv, i);
	if (sv->lfd >= 0)
		close(sv->lfd);
	sv->lfd = -1;
}

void xpu_share_server_counts(const struct xpu_source *src, struct xpu_share_counts *c)
{
	const struct server *sv = (const struct server *)src;
	*c = sv->away;
	c->attached = 0;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++)
		c->attached += sv->peers[i] != NULL;
	c->dropped = sv->dropped;
	c->refused = sv->refused;
}

uint64_t xpu_share_server_needs(const struct xpu_source *src, struct xpu_share_needs *u)
{
	const struct server *sv = (const struct server *)src;
	for (int i = 0; i < XPU_SHARE_MAX_CLIENTS; i++)
		if (sv->peers[i] && !sv->peers[i]->dead && sv->peers[i]->has_need)
			xpu_share_needs_add(u, &sv->peers[i]->need);
	return sv->needs_gen;
}

/* ---- a client's side ---- */

struct xpu_share_client {
	int fd;
	uint8_t hello[HELLO_LEN];
	size_t nhello;
	struct xpu_rec_reader *r;
	int failed;
	char err[600];
};

int xpu_share_connect(int *fd)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	xpu_share_paths(a.sun_path, sizeof(a.sun_path), NULL, 0);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(s);
		return e == EPERM ? -EACCES : -e;
	}
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
	*fd = s;
	return 0;
}

struct xpu_share_client *xpu_share_client_new(int fd, struct xpu_dict *dict)
{
	struct xpu_share_client *c = calloc(1, sizeof(*c));
	if (c && !(c->r = xpu_rec_open_stream(dict))) {
		free(c);
		c = NULL;
	}
	if (!c) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	return c;
}

int xpu_share_client_fd(const struct xpu_share_client *c)
{
	return c->fd;
}

int xpu_share_client_need(struct xpu_share_client *c, const struct xpu_share_need *n)
{
	uint8_t buf[XPU_NEED_MAX];
	size_t len = xpu_share_need_encode(n, buf, sizeof(buf));
	if (!len)
		return -1;
	/* A few hundred bytes into an empty socket buffer: whole, or the
	 * collector is gone. */
	ssize_t k;
	do
		k = send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (k < 0 && errno == EINTR);
	return k == (ssize_t)len ? 0 : -1;
}

static int client_fail(struct xpu_share_client *c, const char *msg)
{
	if (!c->failed)
		snprintf(c->err, sizeof(c->err), "%s", msg);
	c->failed = 1;
	return -1;
}

/* The hello first, then the recording. */
static int take(struct xpu_share_client *c, const uint8_t *buf, size_t n)
{
	if (c->nhello < HELLO_LEN) {
		size_t k = n < HELLO_LEN - c->nhello ? n : HELLO_LEN - c->nhello;
		memcpy(c->hello + c->nhello, buf, k);
		c->nhello += k;
		buf += k;
		n -= k;
		if (c->nhello == HELLO_LEN && (memcmp(c->hello, hello_magic, sizeof(hello_magic)) ||
					       get32(c->hello + 8) != XPU_SHARE_VERSION))
			return client_fail(c, "the collector speaks another version of the stream");
	}
	if (n && xpu_rec_feed(c->r, buf, n) < 0) {
		snprintf(c->err, sizeof(c->err), "the collector's stream: %s", xpu_rec_error(c->r));
		c->failed = 1;
		return -1;
	}
	return 0;
}

/* One read: 1 when bytes came, 0 when none are there now, -1 at the end. */
static int receive(struct xpu_share_client *c)
{
	uint8_t buf[READ_CHUNK];
	for (;;) {
		ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k > 0)
			return take(c, buf, (size_t)k) < 0 ? -1 : 1;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return client_fail(c, c->nhello < HELLO_LEN ? "the collector refused to serve this xputop"
							   : "the collector's stream ended");
	}
}

int xpu_share_client_wait_meta(struct xpu_share_client *c, int ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	for (int waited = 0; waited <= ms; waited += 20) {
		int h = c->nhello == HELLO_LEN ? xpu_rec_stream_header(c->r) : 0;
		if (h < 0)
			return client_fail(c, xpu_rec_error(c->r));
		if (h > 0)
			return 0;
		if (poll(&pfd, 1, 20) > 0 && receive(c) < 0)
			return -1;
	}
	return client_fail(c, "the collector sent nothing");
}

const struct xpu_rec_meta *xpu_share_client_meta(const struct xpu_share_client *c)
{
	return xpu_rec_meta(c->r);
}

pid_t xpu_share_client_pid(const struct xpu_share_client *c)
{
	return c->nhello == HELLO_LEN ? (pid_t)get32(c->hello + 12) : 0;
}

int xpu_share_client_next(struct xpu_share_client *c, struct xpu_session *s)
{
	struct xpu_event ev;
	if (c->failed)
		return -1;
	for (;;) {
		int r = c->nhello == HELLO_LEN ? xpu_rec_next(c->r, &ev) : 0;
		if (r < 0) {
			snprintf(c->err, sizeof(c->err), "the collector's stream: %s", xpu_rec_error(c->r));
			c->failed = 1;
			return -1;
		}
		if (r > 0) {
			xpu_session_emit(s, &ev);
			if (ev.type == XPU_EV_TICK)
				return 1;
			continue;
		}
		r = receive(c);
		if (r <= 0)
			return r;
	}
}

const char *xpu_share_client_error(const struct xpu_share_client *c)
{
	return c->err;
}

void xpu_share_client_mark(const struct xpu_share_client *c, struct xpu_dict *d)
{
	xpu_rec_mark_stacks(c->r, d);
}

void xpu_share_client_free(struct xpu_share_client *c)
{
	if (!c)
		return;
	close(c->fd);
	xpu_rec_close_reader(c->r);
	free(c);
}
