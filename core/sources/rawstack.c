/* SPDX-License-Identifier: GPL-2.0-only */
#include "rawstack.h"

#include "dict.h"
#include "symbolize.h"

#define MAX_IPS XPU_RAWSTACK_MAX_IPS

static void reverse(uint32_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t t = v[i];
		v[i] = v[n - 1 - i];
		v[n - 1 - i] = t;
	}
}

uint32_t xpu_rawstack_frames(struct xpu_symbolizer *sym, uint32_t pid, const uint64_t *uips,
			     uint32_t un, const uint64_t *kips, uint32_t kn, uint32_t *frames)
{
	uint32_t n = 0;

	if (un > MAX_IPS)
		un = MAX_IPS;
	if (kn > MAX_IPS)
		kn = MAX_IPS;
	if (un) {
		n += xpu_sym_user(sym, pid, uips, un, frames);
		reverse(frames, n);
	}
	if (kn) {
		uint32_t k = xpu_sym_kernel(sym, kips, kn, frames + n);
		reverse(frames + n, k);
		n += k;
	}
	return n;
}

uint32_t xpu_rawstack_intern(struct xpu_symbolizer *sym, struct xpu_dict *d, uint32_t pid,
			     const uint64_t *uips, uint32_t un, const uint64_t *kips, uint32_t kn,
			     const uint32_t *tail, uint32_t ntail)
{
	uint32_t frames[XPU_DICT_MAX_DEPTH];
	uint32_t n = xpu_rawstack_frames(sym, pid, uips, un, kips, kn, frames);

	if (ntail > XPU_DICT_MAX_DEPTH - n)
		ntail = XPU_DICT_MAX_DEPTH - n;
	for (uint32_t i = 0; i < ntail; i++)
		frames[n++] = tail[i];
	return xpu_dict_stack(d, frames, n);
}
