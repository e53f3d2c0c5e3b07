/* SPDX-License-Identifier: GPL-2.0-only */
/* Budgets for the peers of the GPU injection socket.  The socket is 0666:
 * any local user's CUDA process connects, so whatever a peer can make the
 * agent hold is bounded per connection, per uid and in total, and whatever
 * is refused is counted (per uid here, per process by the caller) and shown.
 *
 * What is bounded, and why so (docs/security.md has the measured figures):
 * - connections: XPU_PEER_CONNS_PER_UID open at once per uid (root
 *   XPU_PEER_CONNS_ROOT), XPU_PEER_CONNS_MAX in all, and each must say HELLO
 *   within XPU_PEER_HELLO_NS: idle connections cannot hold the socket;
 * - names that enter the session dictionary (kernel and API names, never
 *   freed): bytes and strings per uid over the agent's life, and in all for
 *   the users who are not root (root has a budget of its own, so no user can
 *   spend it).  A name already in the dictionary costs nothing: a program run
 *   again, or by another user, is free;
 * - series (distinct (kernel name, device) of a connection, the model's
 *   rows): per connection, per uid and in all, held while the connection is
 *   open and for a window after (the rows stay in the model that long);
 * - records: a rate per uid (a token bucket), so one user cannot take all
 *   of the ingest path's time.
 * Warnings about a uid's peers are rate-limited: one per XPU_PEER_WARN_NS,
 * which says how many were held back. */
#ifndef XPU_GPU_PEERS_H
#define XPU_GPU_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

#define XPU_PEER_CONNS_PER_UID 32
#define XPU_PEER_CONNS_ROOT 128
#define XPU_PEER_CONNS_MAX 512
#define XPU_PEER_HELLO_NS 1000000000ULL
#define XPU_PEER_NAMES_PER_CONN 8192u	/* name ids a connection may define */
#define XPU_PEER_STR_BYTES_UID (6u << 20)
#define XPU_PEER_STRS_UID 32768u	/* PyTorch and Triton programs name thousands */
#define XPU_PEER_STR_BYTES_ALL (48u << 20)	/* users other than root, together; root alike */
#define XPU_PEER_STRS_ALL 262144u
#define XPU_PEER_SERIES_CONN 2048u
#define XPU_PEER_SERIES_UID 4096u
#define XPU_PEER_SERIES_ALL 16384u
#define XPU_PEER_RECORDS_PER_S 2000000u	/* per uid; also the burst */
#define XPU_PEER_WARN_NS 10000000000ULL
#define XPU_PEER_UIDS_MAX 4096u		/* uids tracked apart; later ones share one entry */
#define XPU_PEER_DEVICES_DEFAULT 8u	/* device ids accepted when no GPU is found */

struct xpu_peer_uid {
	uint32_t uid;
	uint32_t conns;			/* open now */
	uint64_t str_bytes;		/* names added to the dictionary, ever */
	uint32_t strs;
	uint32_t series;		/* held by open connections and recently closed ones */
	uint32_t series_closing;	/* of which released at release_at */
	uint64_t release_at;
	double tokens;			/* records it may send now */
	uint64_t tokens_at;
	uint64_t warned_at;		/* 0: never */
	uint64_t warn_held;		/* warnings held back since */
	uint64_t refused[XPU_PEER_REASONS];
};

/* One side of the budgets: root's, or everyone else's together. */
struct xpu_peer_pool {
	uint64_t str_bytes;
	uint32_t strs;
	uint32_t series;
};

struct xpu_peers {
	struct xpu_peer_uid *uids;	/* XPU_PEER_UIDS_MAX of them; the last is shared */
	uint32_t nuids;
	struct xpu_peer_pool users, root;
	uint32_t conns;
	uint32_t devices;		/* ids 0 .. devices - 1 exist */
	uint64_t hold_ns;		/* series stay charged this long after a close */
	uint64_t refused[XPU_PEER_REASONS];
	struct xpu_peer_count recent[XPU_PEER_SHOWN];	/* processes refused, a ring */
	uint32_t nrecent;
};

/* devices: device ids that exist (0: XPU_PEER_DEVICES_DEFAULT); hold_ns:
 * how long the model keeps a closed connection's rows (its window).
 * Returns 0, or -1 when out of memory. */
int xpu_peers_init(struct xpu_peers *p, uint32_t devices, uint64_t hold_ns);
void xpu_peers_free(struct xpu_peers *p);

/* The device ids this machine has: NVIDIA GPUs on the PCI bus or
 * /dev/nvidiaN nodes, whichever says more; 0 when neither finds one. */
uint32_t xpu_peers_count_devices(void);

/* The uid's entry (never NULL once p is initialized: past
 * XPU_PEER_UIDS_MAX uids, the later ones share an entry). */
struct xpu_peer_uid *xpu_peers_uid(struct xpu_peers *p, uint32_t uid);

/* Each returns 0 when within the budgets (and charges them), else -1 and
 * counts the refusal against u. */
int xpu_peers_conn_open(struct xpu_peers *p, struct xpu_peer_uid *u);
/* A name of len bytes that is not in the dictionary yet. */
int xpu_peers_new_str(struct xpu_peers *p, struct xpu_peer_uid *u, size_t len);
/* A connection's new series; held is how many it holds already. */
int xpu_peers_new_series(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t held);
int xpu_peers_records(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t n, uint64_t now);

/* A connection that held series closes; its series go back hold_ns later. */
void xpu_peers_conn_close(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t series, uint64_t now);
/* Gives back the series whose time has come. */
void xpu_peers_tick(struct xpu_peers *p, uint64_t now);

/* Counts n refusals of reason against u (and in all). */
void xpu_peers_refuse(struct xpu_peers *p, struct xpu_peer_uid *u, enum xpu_peer_reason r, uint64_t n);
/* A process was refused something: its line in the recent list. */
void xpu_peers_note_proc(struct xpu_peers *p, uint32_t uid, uint32_t pid, const char *comm,
			 enum xpu_peer_reason r, uint64_t n);

/* Whether a warning about u's peers may be written now; when so, *held is
 * how many were held back since the last one. */
int xpu_peers_warn_due(struct xpu_peer_uid *u, uint64_t now, uint64_t *held);

/* What is shown: totals, the uids refused most, the recent processes. */
void xpu_peers_publish(const struct xpu_peers *p, struct xpu_gpu_peers *out);

/* One line for the GPU status: "refused from peers: ..." or "" when none. */
size_t xpu_peers_text(const struct xpu_gpu_peers *s, char *buf, size_t size);

#endif
