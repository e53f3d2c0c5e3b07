/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_peers.h"

#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"

int xpu_peers_init(struct xpu_peers *p, uint32_t devices, uint64_t hold_ns)
{
	memset(p, 0, sizeof(*p));
	/* Fixed, so an entry stays where connections point (untouched pages
	 * cost nothing). */
	p->uids = calloc(XPU_PEER_UIDS_MAX, sizeof(*p->uids));
	if (!p->uids)
		return -1;
	p->devices = devices ? devices : XPU_PEER_DEVICES_DEFAULT;
	if (p->devices > XPU_GPU_DEV_MAX)
		p->devices = XPU_GPU_DEV_MAX;
	p->hold_ns = hold_ns;
	return 0;
}

void xpu_peers_free(struct xpu_peers *p)
{
	free(p->uids);
	p->uids = NULL;
	p->nuids = 0;
}

uint32_t xpu_peers_count_devices(void)
{
	uint32_t n = (uint32_t)xpu_sys_nvidia_gpus();
	glob_t g;
	if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char *end;
			unsigned long k = strtoul(g.gl_pathv[i] + strlen("/dev/nvidia"), &end, 10);
			if (!*end && k < XPU_GPU_DEV_MAX && k + 1 > n)
				n = (uint32_t)k + 1;
		}
		globfree(&g);
	}
	return n;
}

struct xpu_peer_uid *xpu_peers_uid(struct xpu_peers *p, uint32_t uid)
{
	for (uint32_t i = 0; i < p->nuids; i++)
		if (p->uids[i].uid == uid)
			return &p->uids[i];
	/* The last entry is shared by every uid past the others (uid -1):
	 * they are bounded together, never unbounded apart. */
	if (p->nuids >= XPU_PEER_UIDS_MAX - 1) {
		struct xpu_peer_uid *u = &p->uids[XPU_PEER_UIDS_MAX - 1];
		if (u->uid != UINT32_MAX)
			*u = (struct xpu_peer_uid){ .uid = UINT32_MAX, .tokens = XPU_PEER_RECORDS_PER_S };
		return u;
	}
	struct xpu_peer_uid *u = &p->uids[p->nuids++];
	*u = (struct xpu_peer_uid){ .uid = uid, .tokens = XPU_PEER_RECORDS_PER_S };
	return u;
}

static struct xpu_peer_pool *pool(struct xpu_peers *p, const struct xpu_peer_uid *u)
{
	return u->uid == 0 ? &p->root : &p->users;
}

void xpu_peers_refuse(struct xpu_peers *p, struct xpu_peer_uid *u, enum xpu_peer_reason r, uint64_t n)
{
	u->refused[r] += n;
	p->refused[r] += n;
}

int xpu_peers_conn_open(struct xpu_peers *p, struct xpu_peer_uid *u)
{
	uint32_t quota = u->uid == 0 ? XPU_PEER_CONNS_ROOT : XPU_PEER_CONNS_PER_UID;
	if (u->conns >= quota || p->conns >= XPU_PEER_CONNS_MAX) {
		xpu_peers_refuse(p, u, XPU_PEER_CONNS, 1);
		return -1;
	}
	u->conns++;
	p->conns++;
	return 0;
}

int xpu_peers_new_str(struct xpu_peers *p, struct xpu_peer_uid *u, size_t len)
{
	struct xpu_peer_pool *o = pool(p, u);
	int root = u->uid == 0;
	if ((!root && (u->str_bytes + len > XPU_PEER_STR_BYTES_UID || u->strs >= XPU_PEER_STRS_UID)) ||
	    o->str_bytes + len > XPU_PEER_STR_BYTES_ALL || o->strs >= XPU_PEER_STRS_ALL) {
		xpu_peers_refuse(p, u, XPU_PEER_NAMES, 1);
		return -1;
	}
	u->str_bytes += len;
	u->strs++;
	o->str_bytes += len;
	o->strs++;
	return 0;
}

int xpu_peers_new_series(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t held)
{
	struct xpu_peer_pool *o = pool(p, u);
	if (held >= XPU_PEER_SERIES_CONN || (u->uid != 0 && u->series >= XPU_PEER_SERIES_UID) ||
	    o->series >= XPU_PEER_SERIES_ALL) {
		xpu_peers_refuse(p, u, XPU_PEER_SERIES, 1);
		return -1;
	}
	u->series++;
	o->series++;
	return 0;
}

int xpu_peers_records(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t n, uint64_t now)
{
	if (now > u->tokens_at) {
		u->tokens += (double)(now - u->tokens_at) * XPU_PEER_RECORDS_PER_S / 1e9;
		if (u->tokens > XPU_PEER_RECORDS_PER_S)
			u->tokens = XPU_PEER_RECORDS_PER_S;
		u->tokens_at = now;
	}
	if (u->tokens < n) {
		xpu_peers_refuse(p, u, XPU_PEER_RECORDS, n);
		return -1;
	}
	u->tokens -= n;
	return 0;
}

void xpu_peers_conn_close(struct xpu_peers *p, struct xpu_peer_uid *u, uint32_t series, uint64_t now)
{
	if (u->conns)
		u->conns--;
	if (p->conns)
		p->conns--;
	if (!series)
		return;
	/* One release time per uid: a later close pushes it back, so series
	 * are never given back early. */
	u->series_closing += series;
	u->release_at = now + p->hold_ns;
}

void xpu_peers_tick(struct xpu_peers *p, uint64_t now)
{
	for (uint32_t i = 0; i < XPU_PEER_UIDS_MAX; i++) {
		if (i == p->nuids)
			i = XPU_PEER_UIDS_MAX - 1;	/* the shared entry */
		struct xpu_peer_uid *u = &p->uids[i];
		if (!u->series_closing || now < u->release_at)
			continue;
		struct xpu_peer_pool *o = pool(p, u);
		uint32_t n = u->series_closing < u->series ? u->series_closing : u->series;
		u->series -= n;
		o->series -= n < o->series ? n : o->series;
		u->series_closing = 0;
	}
}

void xpu_peers_note_proc(struct xpu_peers *p, uint32_t uid, uint32_t pid, const char *comm,
			 enum xpu_peer_reason r, uint64_t n)
{
	uint32_t have = p->nrecent < XPU_PEER_SHOWN ? p->nrecent : XPU_PEER_SHOWN;
	for (uint32_t i = 0; i < have; i++) {
		struct xpu_peer_count *c = &p->recent[i];
		if (c->pid == pid && c->uid == uid) {
			c->n[r] += n;
			if (comm && *comm)
				snprintf(c->comm, sizeof(c->comm), "%s", comm);
			return;
		}
	}
	struct xpu_peer_count *c = &p->recent[p->nrecent++ % XPU_PEER_SHOWN];
	*c = (struct xpu_peer_count){ .uid = uid, .pid = pid };
	snprintf(c->comm, sizeof(c->comm), "%s", comm ? comm : "");
	c->n[r] = n;
}

int xpu_peers_warn_due(struct xpu_peer_uid *u, uint64_t now, uint64_t *held)
{
	if (u->warned_at && now - u->warned_at < XPU_PEER_WARN_NS) {
		u->warn_held++;
		return 0;
	}
	*held = u->warn_held;
	u->warn_held = 0;
	u->warned_at = now ? now : 1;
	return 1;
}

static uint64_t sum(const uint64_t *n)
{
	uint64_t s = 0;
	for (int r = 0; r < XPU_PEER_REASONS; r++)
		s += n[r];
	return s;
}

static int by_refused(const void *a, const void *b)
{
	uint64_t x = sum(((const struct xpu_peer_count *)a)->n), y = sum(((const struct xpu_peer_count *)b)->n);
	return x < y ? 1 : x > y ? -1 : 0;
}

void xpu_peers_publish(const struct xpu_peers *p, struct xpu_gpu_peers *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->total, p->refused, sizeof(out->total));
	out->devices = p->devices;
	out->name_bytes = p->users.str_bytes + p->root.str_bytes;
	out->conns = p->conns;
	/* The uids refused most: a running top list over every uid. */
	for (uint32_t i = 0; i < XPU_PEER_UIDS_MAX; i++) {
		if (i == p->nuids)
			i = XPU_PEER_UIDS_MAX - 1;	/* the shared entry */
		const struct xpu_peer_uid *u = &p->uids[i];
		if (!sum(u->refused))
			continue;
		struct xpu_peer_count c = { .uid = u->uid };
		memcpy(c.n, u->refused, sizeof(c.n));
		if (out->nuids < XPU_PEER_SHOWN)
			out->uids[out->nuids++] = c;
		else if (sum(c.n) > sum(out->uids[XPU_PEER_SHOWN - 1].n))
			out->uids[XPU_PEER_SHOWN - 1] = c;
		else
			continue;
		qsort(out->uids, (size_t)out->nuids, sizeof(out->uids[0]), by_refused);
	}
	uint32_t have = p->nrecent < XPU_PEER_SHOWN ? p->nrecent : XPU_PEER_SHOWN;
	for (uint32_t k = 0; k < have; k++)
		out->procs[out->nprocs++] = p->recent[(p->nrecent - 1 - k) % XPU_PEER_SHOWN];
}

size_t xpu_peers_text(const struct xpu_gpu_peers *s, char *buf, size_t size)
{
	static const char *const what[XPU_PEER_REASONS] = {
		[XPU_PEER_CONNS] = "connections over quota", [XPU_PEER_HELLO_LATE] = "connections without HELLO",
		[XPU_PEER_BAD_HELLO] = "false HELLOs", [XPU_PEER_NAMES] = "names",
		[XPU_PEER_SERIES] = "kernel series", [XPU_PEER_DEVICES] = "records of unknown devices",
		[XPU_PEER_RECORDS] = "records over rate",
	};
	size_t n = 0;
	if (size)
		buf[0] = '\0';
	for (int r = 0; r < XPU_PEER_REASONS && n < size; r++) {
		if (!s->total[r])
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRIu64 " %s", n ? ", " : "refused from peers: ",
				      s->total[r], what[r]);
	}
	if (n && n < size && s->nuids)
		n += (size_t)snprintf(buf + n, size - n, " (most from uid %u)", s->uids[0].uid);
	return n < size ? n : size ? size - 1 : 0;
}
