/* SPDX-License-Identifier: GPL-2.0-only */
#include "pidset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "procs.h"

/* Lookups kept at most; past it the cache starts again (a fork storm). */
#define PIDSET_CACHE 8192
/* Parents walked at most: /proc's chains end at 1 long before. */
#define PIDSET_DEPTH 64

int xpu_pidset_init(struct xpu_pidset *ps, const uint32_t *pids, uint32_t n, int follow)
{
	memset(ps, 0, sizeof(*ps));
	xpu_htab_init(&ps->idx);
	ps->follow = follow;
	ps->proc_root = "/proc";
	if (!n)
		return 0;
	ps->pids = malloc(n * sizeof(*pids));
	if (!ps->pids)
		return -1;
	memcpy(ps->pids, pids, n * sizeof(*pids));
	ps->n = n;
	return 0;
}

void xpu_pidset_free(struct xpu_pidset *ps)
{
	free(ps->pids);
	free(ps->keys);
	free(ps->verdict);
	xpu_htab_free(&ps->idx);
	memset(ps, 0, sizeof(*ps));
}

static int named(const struct xpu_pidset *ps, uint32_t pid)
{
	for (uint32_t i = 0; i < ps->n; i++)
		if (ps->pids[i] == pid)
			return 1;
	return 0;
}

static int key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct xpu_pidset *ps = ctx;
	return ps->keys[id] == *(const uint32_t *)key;
}

static uint32_t find(const struct xpu_pidset *ps, uint32_t pid)
{
	return xpu_htab_find(&ps->idx, xpu_hash_u64(pid), key_eq, ps, &pid);
}

/* A process started (however deep) by a named one, while it lives. */
static int descends(const struct xpu_pidset *ps, uint32_t pid)
{
	for (int depth = 0; depth < PIDSET_DEPTH && pid > 1; depth++) {
		long pp = xpu_procs_ppid_at(ps->proc_root, pid);
		if (pp <= 0)
			return 0;
		pid = (uint32_t)pp;
		if (named(ps, pid))
			return 1;
	}
	return 0;
}

int xpu_pidset_has(struct xpu_pidset *ps, uint32_t pid)
{
	if (!ps->n || named(ps, pid))
		return 1;
	if (!ps->follow)
		return 0;
	uint32_t id = find(ps, pid);
	if (id != UINT32_MAX && ps->verdict[id] != 2)
		return ps->verdict[id];
	int in = descends(ps, pid);
	if (id != UINT32_MAX) {
		ps->verdict[id] = (uint8_t)in;
		return in;
	}
	if (ps->cnt >= PIDSET_CACHE) {
		xpu_htab_free(&ps->idx);
		xpu_htab_init(&ps->idx);
		ps->cnt = 0;
	}
	if (xpu_grow((void **)&ps->keys, &ps->kcap, (size_t)ps->cnt + 1, sizeof(*ps->keys)) < 0 ||
	    xpu_grow((void **)&ps->verdict, &ps->vcap, (size_t)ps->cnt + 1, sizeof(*ps->verdict)) < 0)
		return in;
	ps->keys[ps->cnt] = pid;
	ps->verdict[ps->cnt] = (uint8_t)in;
	if (xpu_htab_put(&ps->idx, xpu_hash_u64(pid), (uint32_t)ps->cnt) == 0)
		ps->cnt++;
	return in;
}

void xpu_pidset_forget(struct xpu_pidset *ps, uint32_t pid)
{
	uint32_t id = ps->n && ps->follow ? find(ps, pid) : UINT32_MAX;
	if (id != UINT32_MAX)
		ps->verdict[id] = 2;
}
