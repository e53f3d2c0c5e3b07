/* The session dictionary: interned strings, frames and stacks.
 *
 * Events refer to names by id, so they stay fixed-size and cheap to compare.
 * Ids are dense and start at 1 (0 means "none"); entries are never removed,
 * so an id stays valid for the whole session.  The recorder writes each new
 * entry before the first event that uses it, and the replay reader re-creates
 * the same ids in the same order.
 */
#ifndef XPU_DICT_H
#define XPU_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "htab.h"

enum xpu_frame_kind {
	XPU_FRAME_USER = 0,	/* symbolized native user-space code */
	XPU_FRAME_KERNEL = 1,	/* kernel code: folded suffix _[k] */
	XPU_FRAME_JIT = 2,	/* from /tmp/perf-PID.map: suffix _[j] */
	XPU_FRAME_UNKNOWN = 3,	/* address with no symbol: "[unknown]" + module */
	XPU_FRAME_LAUNCH = 4,	/* a GPU launch API call */
	XPU_FRAME_GPU = 5,	/* a GPU kernel (leaf of CPU->GPU stacks) */
	XPU_FRAME_INFO = 6,	/* a label such as "[no stack]" */
	XPU_FRAME_KIND_MAX
};

struct xpu_frame {
	uint32_t name;		/* string id */
	uint32_t module;	/* string id of the file's base name, 0 = none */
	uint32_t kind;		/* enum xpu_frame_kind */
};

struct xpu_span {
	uint32_t off, len;	/* into an arena */
};

struct xpu_dict {
	/* strings: bytes in one arena, NUL-terminated */
	char *arena;
	size_t arena_len, arena_cap;
	struct xpu_span *strs;
	uint32_t nstr, str_cap;
	struct xpu_htab str_idx;

	struct xpu_frame *frames;
	uint32_t nframes, frame_cap;
	struct xpu_htab frame_idx;

	/* stacks: frame ids in one arena */
	uint32_t *stack_arena;
	size_t stack_arena_len, stack_arena_cap;
	struct xpu_span *stacks;
	uint32_t nstacks, stack_cap;
	struct xpu_htab stack_idx;
};

#define XPU_DICT_MAX_DEPTH 512	/* frames in one stack, all parts together */

void xpu_dict_init(struct xpu_dict *d);
void xpu_dict_free(struct xpu_dict *d);

/* Interning: each returns the id (>= 1), or 0 when out of memory or invalid. */
uint32_t xpu_dict_str(struct xpu_dict *d, const char *s, size_t len);
static inline uint32_t xpu_dict_cstr(struct xpu_dict *d, const char *s);
uint32_t xpu_dict_frame(struct xpu_dict *d, uint32_t kind, uint32_t name, uint32_t module);
uint32_t xpu_dict_stack(struct xpu_dict *d, const uint32_t *frames, uint32_t n);

/* Lookups: id 0 or an unknown id gives "" / NULL / an empty stack. */
const char *xpu_dict_str_get(const struct xpu_dict *d, uint32_t id);
uint32_t xpu_dict_str_len(const struct xpu_dict *d, uint32_t id);
const struct xpu_frame *xpu_dict_frame_get(const struct xpu_dict *d, uint32_t id);
const uint32_t *xpu_dict_stack_get(const struct xpu_dict *d, uint32_t id, uint32_t *n);

/* Number of entries so far; the next new id is count + 1. */
static inline uint32_t xpu_dict_nstr(const struct xpu_dict *d) { return d->nstr; }
static inline uint32_t xpu_dict_nframes(const struct xpu_dict *d) { return d->nframes; }
static inline uint32_t xpu_dict_nstacks(const struct xpu_dict *d) { return d->nstacks; }

/* The text shown for a frame (without folded suffixes): the symbol, or
 * "[unknown] (module)" for an unknown address.  Returns the length written
 * (truncated to fit, always NUL-terminated). */
size_t xpu_frame_text(const struct xpu_dict *d, uint32_t frame, char *buf, size_t size);

#include <string.h>
static inline uint32_t xpu_dict_cstr(struct xpu_dict *d, const char *s)
{
	return xpu_dict_str(d, s, strlen(s));
}

#endif
