/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_stitch.h"

#include <stdio.h>
#include <string.h>

#include "dict.h"

static const char *const names[XPU_STITCH_KINDS] = { "same thread", "backward of", "launched for",
						       "forward site" };
static const char *const markers[XPU_STITCH_KINDS] = { NULL, "[backward of]", "[launched for]", "[backward]" };

const char *xpu_gpu_stitch_name(int kind)
{
	return kind > 0 && kind < XPU_STITCH_KINDS ? names[kind] : names[0];
}

const char *xpu_gpu_stitch_marker(int kind)
{
	return kind > 0 && kind < XPU_STITCH_KINDS ? markers[kind] : NULL;
}

int xpu_gpu_stack_stitch(const struct xpu_dict *d, uint32_t stack)
{
	uint32_t want[XPU_STITCH_KINDS] = { 0 }, n, any = 0;
	for (int k = 1; k < XPU_STITCH_KINDS; k++)
		any |= want[k] = xpu_dict_str_find(d, markers[k], strlen(markers[k]));
	const uint32_t *frames = any ? xpu_dict_stack_get(d, stack, &n) : NULL;
	for (uint32_t i = 0; frames && i < n; i++) {
		const struct xpu_frame *f = xpu_dict_frame_get(d, frames[i]);
		for (int k = 1; f && f->kind == XPU_FRAME_INFO && k < XPU_STITCH_KINDS; k++)
			if (want[k] && f->name == want[k])
				return k;
	}
	return XPU_STITCH_SAME;
}

static int parse_one(char *tok, struct xpu_gpu_waiter *w, char *err, size_t errlen)
{
	char *file = strchr(tok, ':'), *sym = file ? strchr(file + 1, ':') : NULL;
	if (!sym || file == tok || sym == file + 1 || !sym[1]) {
		snprintf(err, errlen, "'%s' is not KIND:FILE:SYMBOL", tok);
		return -1;
	}
	*file++ = '\0';
	*sym++ = '\0';
	if (strcmp(tok, "backward") == 0)
		w->kind = XPU_STITCH_BACKWARD;
	else if (strcmp(tok, "for") == 0)
		w->kind = XPU_STITCH_FOR;
	else {
		snprintf(err, errlen, "'%s': the kind is backward or for", tok);
		return -1;
	}
	size_t n = strlen(sym);
	w->prefix = sym[n - 1] == '*';
	if (w->prefix)
		sym[--n] = '\0';
	if (!n || strlen(file) >= sizeof(w->file) || n >= sizeof(w->sym) || strpbrk(sym, "*:")) {
		snprintf(err, errlen, "'%s:%s': a file name and a symbol (with at most a '*' at its end)", file, sym);
		return -1;
	}
	snprintf(w->file, sizeof(w->file), "%s", file);
	snprintf(w->sym, sizeof(w->sym), "%s", sym);
	return 0;
}

int xpu_gpu_waiters_parse(const char *spec, struct xpu_gpu_waiter *w, int max, char *err, size_t errlen)
{
	char buf[4096];
	int n = 0;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "the list is longer than %zu bytes", sizeof(buf) - 1);
		return -1;
	}
	if (strcmp(spec, "none") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			snprintf(err, errlen, "at most %d waiters", max);
			return -1;
		}
		if (parse_one(tok, &w[n], err, errlen) < 0)
			return -1;
		n++;
	}
	return n;
}

static int parse_node_fn(char *val, struct xpu_gpu_node_fn *f, char *err, size_t errlen)
{
	char *sym = strchr(val, ':'), *arg = strrchr(val, ':');
	unsigned idx;
	char end;
	if (!sym || arg == sym || sym == val || arg == sym + 1) {
		snprintf(err, errlen, "'%s' is not FILE:SYMBOL:ARG", val);
		return -1;
	}
	*sym++ = '\0';
	*arg++ = '\0';
	int deref = *arg == '*';
	if (sscanf(arg + deref, "arg%u%c", &idx, &end) != 1 || idx > 5) {
		snprintf(err, errlen, "'%s': ARG is argN or *argN, N from 0 to 5", arg);
		return -1;
	}
	if (strlen(val) >= sizeof(f->file) || strlen(sym) >= sizeof(f->sym)) {
		snprintf(err, errlen, "'%s:%s': the name is too long", val, sym);
		return -1;
	}
	snprintf(f->file, sizeof(f->file), "%s", val);
	snprintf(f->sym, sizeof(f->sym), "%s", sym);
	f->arg = (int)idx;
	f->deref = deref;
	return 0;
}

int xpu_gpu_nodes_parse(const char *spec, struct xpu_gpu_nodes *n, char *err, size_t errlen)
{
	char buf[1024];
	int have = 0;
	memset(n, 0, sizeof(*n));
	if (strcmp(spec, "off") == 0)
		return 0;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "the list is longer than %zu bytes", sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int run = strncmp(tok, "run=", 4) == 0;
		if (!run && strncmp(tok, "create=", 7) != 0) {
			snprintf(err, errlen, "'%s': expected create=FILE:SYMBOL:ARG or run=FILE:SYMBOL:ARG", tok);
			return -1;
		}
		if (parse_node_fn(tok + (run ? 4 : 7), run ? &n->run : &n->create, err, errlen) < 0)
			return -1;
		have |= run ? 2 : 1;
	}
	if (have != 3) {
		snprintf(err, errlen, "both create= and run= are needed");
		return -1;
	}
	n->on = 1;
	return 0;
}
