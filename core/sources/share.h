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
 * for a client: what a client has not read is kept up to XPU_SHARE_BACKLOG
 * bytes (after the dictionary it was sent on attaching), then the client is
 * dropped.
 *
 * Wire: "XPUSHARE", u32 version (1), u32 collector pid, then a recording
 * (header, then blocks; a block closes at each refresh tick).
 */
#ifndef XPU_SHARE_H
#define XPU_SHARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xpu_dict;
struct xpu_rec_meta;
struct xpu_session;
struct xpu_source;

#define XPU_SHARE_GROUP "xputop"
#define XPU_SHARE_VERSION 1
#define XPU_SHARE_MAX_CLIENTS 16
#define XPU_SHARE_BACKLOG (32u << 20)

/* The stream socket and the collector lock, in the directory of the GPU
 * socket (XPUTOP_SOCKET moves all three). */
void xpu_share_paths(char *sock, size_t sock_size, char *lock, size_t lock_size);

/* Takes the collector lock: the descriptor holding it, or -1 with errno
 * EWOULDBLOCK when another xputop holds it (other errors: it cannot be
 * taken here, e.g. not root). */
int xpu_share_lock(void);

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
/* Clients attached now, and dropped so far for not reading. */
void xpu_share_server_counts(const struct xpu_source *src, unsigned *attached, uint64_t *dropped);

/* A client's side. */
struct xpu_share_client;
/* Connects to the collector: 0 with *fd, or -errno (-ENOENT or
 * -ECONNREFUSED: no collector; -EACCES: not allowed to attach). */
int xpu_share_connect(int *fd);
/* Takes fd; NULL when out of memory. */
struct xpu_share_client *xpu_share_client_new(int fd, struct xpu_dict *dict);
int xpu_share_client_fd(const struct xpu_share_client *c);
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
