/* SPDX-License-Identifier: GPL-2.0-only */
/* Several xputops at once (docs/security.md).
 *
 * The first xputop on a machine is the collector: it holds the collector
 * lock, owns the probes and the injection library's socket, and serves its
 * normalized event stream (a recording, core/stream/record.h, sent as it is made)
 * on a unix socket beside the library's.  Later xputops attach to it as
 * clients and feed what they receive to their own models: the watched
 * applications pay for one collector however many xputops watch.  When the
 * collector goes, a client that gets the lock takes over (its own probes,
 * loaded when it started and attached only now: see xpu_source_cpu_load());
 * the others attach to it.
 *
 * Only root and members of the group XPU_SHARE_GROUP (where it exists) may
 * attach: the socket is theirs alone (0600 root, or 0660 root:xputop) and the
 * collector checks each peer's credentials again.  The collector never waits
 * for a client: what a client has not read, the dictionary it is sent on
 * attaching included, is kept up to XPU_SHARE_BACKLOG bytes (and
 * XPU_SHARE_BACKLOG_TOTAL for all of them), then the client is dropped; so
 * is one that has read nothing for XPU_SHARE_STALL_S with bytes waiting.
 *
 * The collector collects what every attached xputop needs: each client
 * tells it (a need: its -F, its -d, its -p or every process, exact GPU
 * tracing) and the collector collects the union of its own and theirs (the
 * highest rate, the shortest refresh, the widest set of processes, exact if
 * any asks); each xputop filters, thins and paces what it shows to its own
 * options (session.h: its models tick at its own -d, merging the stream's
 * ticks in between).  A client's options
 * never narrow what another xputop sees.
 *
 * Wire, collector -> client: "XPUSHARE", u32 version (2), u32 collector
 * pid, then a recording (header, then blocks; a block closes at each
 * refresh tick, whose sampling rate and XPU_TICK_* flags say how the stream
 * was collected).
 * Client -> collector, at attaching and whenever its needs change: a need,
 * "XPUN", u32 version (2), u32 length of the whole message (28 + 4 npids),
 * u32 flags (XPU_NEED_*), u32 hz (1-XPU_NEED_HZ_MAX), u32 interval_ms (its
 * -d, XPU_NEED_MS_MIN-XPU_NEED_MS_MAX), u32 npids (<= XPU_NEED_PIDS, 0 with
 * XPU_NEED_ALL_PIDS), then npids u32 pids (not 0).
 * Little-endian (the host's: both ends are on one machine).  A malformed
 * need ends the client's attachment and is counted; a client that sends
 * none needs nothing.
 */
#ifndef XPU_SHARE_H
#define XPU_SHARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"

struct xpu_dict;
struct xpu_rec_meta;
struct xpu_session;
struct xpu_source;

#define XPU_SHARE_GROUP "xputop"
#define XPU_SHARE_VERSION 2
#define XPU_SHARE_MAX_CLIENTS 16
#define XPU_SHARE_BACKLOG (32u << 20)
#define XPU_SHARE_BACKLOG_TOTAL (128u << 20)
#define XPU_SHARE_STALL_S 10

/* What one xputop needs collected. */
enum {
	XPU_NEED_ALL_PIDS = 1 << 0,	/* no -p: every process */
	XPU_NEED_FOLLOW = 1 << 1,	/* and the processes its pids start (-- CMD) */
	XPU_NEED_GPU_EXACT = 1 << 2,	/* every GPU kernel traced (e, --gpu-exact) */
};
#define XPU_NEED_BITS 7u
#define XPU_NEED_VERSION 2
#define XPU_NEED_PIDS 256		/* XPU_MAX_PIDS, -p's limit */
#define XPU_NEED_HZ_MAX 10000		/* -F's limit */
#define XPU_NEED_MS_MIN 50		/* -d's limits, in ms */
#define XPU_NEED_MS_MAX 3600000
#define XPU_NEED_HEAD 28
#define XPU_NEED_MAX (XPU_NEED_HEAD + 4 * XPU_NEED_PIDS)

struct xpu_share_need {
	uint32_t flags;
	uint32_t hz;
	uint32_t interval_ms;
	uint32_t npids;
	uint32_t pids[XPU_NEED_PIDS];
};

/* The union of the collector's need and its clients'. */
#define XPU_NEEDS_PIDS ((XPU_SHARE_MAX_CLIENTS + 1) * XPU_NEED_PIDS)
struct xpu_share_needs {
	uint32_t flags;
	uint32_t hz;
	uint32_t interval_ms;		/* the shortest asked, 0: none */
	uint32_t npids;
	uint32_t pids[XPU_NEEDS_PIDS];
};

/* The message for n (its bytes in buf, size >= XPU_NEED_MAX): the length,
 * or 0 when n is not a need one could send. */
size_t xpu_share_need_encode(const struct xpu_share_need *n, uint8_t *buf, size_t size);
/* Reads one need from the len bytes at buf: 1 with *n and *used, 0 when
 * more bytes are needed, -1 when malformed (*why says how). */
int xpu_share_need_decode(const uint8_t *buf, size_t len, struct xpu_share_need *n, size_t *used,
			  const char **why);
/* Adds n to u: the highest rate, the shortest interval, every process or
 * the union of the pids, exact if either asks. */
void xpu_share_needs_add(struct xpu_share_needs *u, const struct xpu_share_need *n);

/* The stream socket and the collector lock, in the directory of the GPU
 * socket (XPUTOP_SOCKET moves all three). */
void xpu_share_paths(char *sock, size_t sock_size, char *lock, size_t lock_size);

/* Takes the collector lock: a handle on it (a descriptor), or -1 with
 * errno EWOULDBLOCK when another xputop holds it (other errors: it cannot
 * be taken here, e.g. not root).  A keeper process holds the lock and lets
 * it go when the handle is closed, by xpu_share_unlock, or when the calling
 * thread dies: a killed collector lets it go at once, not when its last
 * thread has ended (share.c).  Take it on the main thread. */
int xpu_share_lock(void);
void xpu_share_unlock(int handle);
/* 1 once when the lock's keeper died while the handle was open (killed by
 * root): the lock is gone, another xputop may take it. */
int xpu_share_lock_lost(void);

/* A pidfd on the keeper of the collector pid (root's, its child, named
 * xputop-lock), readable once the keeper has let the lock go: a client
 * takes over then, not when the collector's stream ends (its sockets close
 * with its last files, after its probes).  -1: none found (an older
 * collector, or one that holds the lock itself). */
int xpu_share_keeper_pidfd(pid_t collector);

/* The keeper: xputop's main() runs it, before all else, when argv[1] is
 * this, and otherwise enables it (without, as in a test's binary, the lock
 * is held by the descriptor returned). */
#define XPU_SHARE_KEEPER_ARG "--xputop-internal-hold-collector-lock"
int xpu_share_keeper_main(void);
void xpu_share_keeper_enable(void);

/* The collector's side: listens on the stream socket and taps the
 * session's stream; a source (its descriptor is the listener's and the
 * clients'), registered with xpu_session_add_source by the caller.  Takes
 * lockfd.  NULL with a message in err. */
struct xpu_source *xpu_share_server_new(struct xpu_session *s, int lockfd, const struct xpu_rec_meta *meta,
					char *err, size_t errlen);
/* Stops serving (the collector is quitting): the socket goes, the lock is
 * let go, the clients' streams end, so that one of them takes over while
 * this xputop is still tearing its probes down.  Call it once the injection
 * library's socket is closed (xpu_source_gpu_close), or the next collector
 * would find it taken. */
void xpu_share_server_stop(struct xpu_source *src);
/* What the collector's clients came to (struct xpu_share_counts, in
 * snapshot.h, which shows it). */
void xpu_share_server_counts(const struct xpu_source *src, struct xpu_share_counts *c);
/* Adds the attached clients' needs to u; returns a number that changes
 * whenever they do (a need came, a client left). */
uint64_t xpu_share_server_needs(const struct xpu_source *src, struct xpu_share_needs *u);

/* A client's side. */
struct xpu_share_client;
/* Connects to the collector: 0 with *fd, or -errno (-ENOENT or
 * -ECONNREFUSED: no collector; -EACCES: not allowed to attach). */
int xpu_share_connect(int *fd);
/* Takes fd; NULL when out of memory. */
struct xpu_share_client *xpu_share_client_new(int fd, struct xpu_dict *dict);
int xpu_share_client_fd(const struct xpu_share_client *c);
/* Tells the collector what this xputop needs: 0, or -1 (the collector
 * will see the stream end or has gone). */
int xpu_share_client_need(struct xpu_share_client *c, const struct xpu_share_need *n);
/* Waits up to ms for the collector's hello and recording header: 0, or -1
 * (xpu_share_client_error says why). */
int xpu_share_client_wait_meta(struct xpu_share_client *c, int ms);
const struct xpu_rec_meta *xpu_share_client_meta(const struct xpu_share_client *c);
pid_t xpu_share_client_pid(const struct xpu_share_client *c);
/* Passes the received events to s up to and including the next tick:
 * 1 after a tick, 0 when nothing more has come, -1 when the stream ended
 * (the collector left or dropped this client) or was damaged. */
int xpu_share_client_next(struct xpu_share_client *c, struct xpu_session *s);
const char *xpu_share_client_error(const struct xpu_share_client *c);
/* The stacks the collector may still use (a sweep, dict.h). */
void xpu_share_client_mark(const struct xpu_share_client *c, struct xpu_dict *d);
void xpu_share_client_free(struct xpu_share_client *c);

#endif
