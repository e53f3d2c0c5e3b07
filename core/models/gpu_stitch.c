/* SPDX-License-Identifier: GPL-2.0-only */
#include "gpu_stitch.h"

#include <stdio.h>
#include <string.h>

#include "dict.h"

static const char *const names[XPU_STITCH_KINDS] = { "same thread", "backward of", "launched for" };
static const char *const markers[XPU_STITCH_KINDS] = { NULL, "[backward of]", "[launched for]" };

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
