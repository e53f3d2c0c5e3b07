/* SPDX-License-Identifier: GPL-2.0-only */
#include "flame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "grow.h"
#include "htab.h"

/* Children are found through a (parent, frame, label) index while building;
 * child lists are linked afterwards, heaviest first, without the light ones. */
struct build {
	struct xpu_flame *f;
	struct xpu_dict *d;
	const struct xpu_flame_opts *o;
	struct xpu_htab idx;
	int oom;
};

struct child_key { uint32_t parent, frame, label; };

static int child_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_flame *f = ctx;
	const struct child_key *key = k;
	const struct xpu_flame_node *n = &f->nodes[i];
	return i != 0 && n->parent == key->parent && n->frame == key->frame && n->label == key->label;
}

void xpu_flame_init(struct xpu_flame *f)
{
	memset(f, 0, sizeof(*f));
}

void xpu_flame_free(struct xpu_flame *f)
{
	free(f->nodes);
	xpu_flame_init(f);
}

static uint32_t new_node(struct build *b, uint32_t parent, uint32_t frame, uint32_t label)
{
	struct xpu_flame *f = b->f;
	if (xpu_grow((void **)&f->nodes, &f->cap, f->n + 1, sizeof(*f->nodes)))
		return UINT32_MAX;
	uint32_t i = f->n++;
	f->nodes[i] = (struct xpu_flame_node){
		.frame = frame, .label = label, .parent = parent,
		.depth = i ? f->nodes[parent].depth + 1 : 0,
	};
	return i;
}

static uint32_t child(struct build *b, uint32_t parent, uint32_t frame, uint32_t label)
{
	struct child_key k = { parent, frame, label };
	uint64_t h = xpu_hash_u32s(&k.parent, 3, 0xf1a3e);
	uint32_t i = xpu_htab_find(&b->idx, h, child_eq, b->f, &k);
	if (i != UINT32_MAX)
		return i;
	i = new_node(b, parent, frame, label);
	if (i == UINT32_MAX || xpu_htab_put(&b->idx, h, i) < 0)
		return UINT32_MAX;
	return i;
}

static int add_stack(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct build *b = arg;
	uint32_t n, node = 0;
	const uint32_t *frames = xpu_dict_stack_get(b->d, e->stack, &n);

	b->f->nodes[0].value += weight;
	if (b->o->per_process) {
		node = child(b, node, 0, e->comm);
		if (node == UINT32_MAX)
			goto oom;
		b->f->nodes[node].value += weight;
	}
	for (uint32_t i = 0; i < n; i++) {
		node = child(b, node, frames[i], 0);
		if (node == UINT32_MAX)
			goto oom;
		b->f->nodes[node].value += weight;
	}
	return 0;
oom:
	b->oom = 1;
	return -ENOMEM;
}

static int by_value_desc(const void *a, const void *b, void *ctx)
{
	const struct xpu_flame_node *n = ctx;
	uint64_t va = n[*(const uint32_t *)a].value, vb = n[*(const uint32_t *)b].value;
	if (va != vb)
		return va > vb ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Links every node that clears the threshold under its parent, heaviest first.
 * Nodes are created after their parents, so a parent's index is always lower. */
static int link_children(struct xpu_flame *f, uint64_t min_value)
{
	uint32_t *order = malloc((size_t)f->n * sizeof(uint32_t));
	uint32_t *tail = calloc(f->n, sizeof(uint32_t));
	uint8_t *kept = calloc(f->n, 1);
	uint32_t m = 0;
	if (!order || !tail || !kept) {
		free(order);
		free(tail);
		free(kept);
		return -ENOMEM;
	}
	kept[0] = 1;
	for (uint32_t i = 1; i < f->n; i++) {
		if (f->nodes[i].value >= min_value && kept[f->nodes[i].parent]) {
			kept[i] = 1;
			order[m++] = i;
		}
	}
	qsort_r(order, m, sizeof(uint32_t), by_value_desc, f->nodes);
	f->max_depth = 0;
	for (uint32_t j = 0; j < m; j++) {
		struct xpu_flame_node *c = &f->nodes[order[j]];
		struct xpu_flame_node *p = &f->nodes[c->parent];
		if (tail[c->parent])
			f->nodes[tail[c->parent]].next = order[j];
		else
			p->first_child = order[j];
		tail[c->parent] = order[j];
		if (c->depth > f->max_depth)
			f->max_depth = c->depth;
	}
	free(order);
	free(tail);
	free(kept);
	return 0;
}

int xpu_flame_build(struct xpu_flame *f, const struct xpu_stacks *s, struct xpu_dict *d,
		    const struct xpu_flame_opts *o)
{
	struct build b = { .f = f, .d = d, .o = o };

	f->n = 0;
	f->max_depth = 0;
	f->total = 0;
	xpu_htab_init(&b.idx);
	if (new_node(&b, 0, 0, o->root_label) == UINT32_MAX)
		return -ENOMEM;
	xpu_stacks_each(s, o->window, o->pid, o->tid, add_stack, &b);
	xpu_htab_free(&b.idx);
	f->total = f->nodes[0].value;
	if (b.oom)
		return -ENOMEM;
	uint64_t min_value = (uint64_t)(o->min_frac * (double)f->total);
	return link_children(f, min_value ? min_value : 1);
}
