/* SPDX-License-Identifier: GPL-2.0-only */
/* The session dictionary: interned strings, frames and stacks.
 *
 * Events refer to names by id, so they stay fixed-size and cheap to compare.
 * Ids start at 1 (0 means "none").  Strings and frames are never removed:
 * there are only as many as the code that runs has symbols.  Stacks (call
 * paths) are as many as the ways that code can call itself, so a long session
 * sweeps them: once the live stacks reach twice what the last sweep kept, the
 * session marks every stack id something still holds (models, sources, the
 * replay reader) and the dictionary frees the rest for reuse.  A stack id is
 * therefore valid for as long as its holder holds it and marks it.  The
 * recorder gives stacks file ids of its own, so a freed and reused id never
 * confuses a recording (docs/recording-format.md).
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
	struct xpu_span *stacks;	/* a freed id: off == XPU_DICT_FREE */
	uint32_t nstacks, stack_cap;	/* nstacks: the highest id handed out */
	struct xpu_htab stack_idx;
	uint32_t *stack_free;		/* freed ids, highest first: the lowest is reused first */
	uint32_t nfree, free_cap;
	uint64_t *marks;		/* between sweep_begin and sweep_end */
	uint64_t stacks_swept;		/* stacks freed so far */
	uint32_t sweeps;

	/* pending frames (xpu_dict_frame_pending) */
	uint8_t *fstate;		/* per frame: XPU_FRAME_PLAIN, _PENDING, _EXPANDED */
	uint32_t fstate_cap;
	struct xpu_dict_pend *pend;	/* one per pending or expanded frame */
	uint32_t npend, pend_cap;
	struct xpu_htab pend_idx;	/* frame id -> pend index */
	uint32_t *exp_log;		/* frames in the order they were expanded */
	uint32_t nexp, exp_cap;
	uint64_t stacks_rewritten;	/* stacks given a pending frame's expansion */
	uint32_t pending_now;		/* pending frames not expanded yet */
};

enum { XPU_FRAME_PLAIN = 0, XPU_FRAME_PENDING = 1, XPU_FRAME_EXPANDED = 2 };

/* A pending frame's stacks (while it waits) and expansion (once it has one). */
struct xpu_dict_pend {
	uint32_t frame;
	uint32_t *stacks;		/* stack ids that held it when interned */
	uint32_t nstacks, cap;
	uint32_t *exp;			/* its frames, once expanded */
	uint32_t nexp;
};

#define XPU_DICT_FREE UINT32_MAX

#define XPU_DICT_MAX_DEPTH 512	/* frames in one stack, all parts together */

void xpu_dict_init(struct xpu_dict *d);
void xpu_dict_free(struct xpu_dict *d);

/* Interning: each returns the id (>= 1), or 0 when out of memory or invalid. */
uint32_t xpu_dict_str(struct xpu_dict *d, const char *s, size_t len);
static inline uint32_t xpu_dict_cstr(struct xpu_dict *d, const char *s);
uint32_t xpu_dict_frame(struct xpu_dict *d, uint32_t kind, uint32_t name, uint32_t module);
/* The id of a string already interned, or 0: adds nothing. */
uint32_t xpu_dict_str_find(const struct xpu_dict *d, const char *s, size_t len);
uint32_t xpu_dict_stack(struct xpu_dict *d, const uint32_t *frames, uint32_t n);

/* Pending frames.  A frame whose final form is not known yet (an address
 * whose library's symbols are still being read, a launch site whose stack is
 * still being unwound) is interned as a pending frame: a new id every time,
 * never shared with another frame of the same content, shown as what it was
 * given (a label such as "libtorch_cpu.so+0x1a2b").  Every stack interned
 * with it is remembered.  Once the real frames are known,
 * xpu_dict_frame_expand() gives it its expansion (one frame or several, none
 * pending): every stack that holds it is rewritten in place, keeping its id
 * (so whatever holds the stack shows the new frames at its next refresh),
 * and any stack interned later with it gets the expansion instead.  Two
 * stacks may end up with the same frames; the later one stays valid but is
 * not found by content.  The recording replays the same expansions
 * (docs/recording-format.md). */
uint32_t xpu_dict_frame_pending(struct xpu_dict *d, uint32_t kind, uint32_t name, uint32_t module);
/* Returns 0, -EINVAL (not a pending frame, or an id in frames is not a
 * frame or is itself pending) or -ENOMEM. */
int xpu_dict_frame_expand(struct xpu_dict *d, uint32_t frame, const uint32_t *frames, uint32_t n);
static inline int xpu_dict_frame_state(const struct xpu_dict *d, uint32_t id)
{
	return id >= 1 && id <= d->fstate_cap ? d->fstate[id - 1] : XPU_FRAME_PLAIN;
}
/* frames with every expanded frame replaced by its expansion, as a stack
 * interned now would hold them, into out (XPU_DICT_MAX_DEPTH room); returns
 * how many.  Frames still pending stay as they are. */
uint32_t xpu_dict_resolve(const struct xpu_dict *d, const uint32_t *frames, uint32_t n, uint32_t *out);
/* The expansion of an expanded frame, or NULL. */
const uint32_t *xpu_dict_frame_expansion(const struct xpu_dict *d, uint32_t id, uint32_t *n);

/* Lookups: id 0 or an unknown id gives "" / NULL / an empty stack. */
const char *xpu_dict_str_get(const struct xpu_dict *d, uint32_t id);
uint32_t xpu_dict_str_len(const struct xpu_dict *d, uint32_t id);
const struct xpu_frame *xpu_dict_frame_get(const struct xpu_dict *d, uint32_t id);
const uint32_t *xpu_dict_stack_get(const struct xpu_dict *d, uint32_t id, uint32_t *n);

/* Number of entries so far; the next new id is count + 1. */
static inline uint32_t xpu_dict_nstr(const struct xpu_dict *d) { return d->nstr; }
static inline uint32_t xpu_dict_nframes(const struct xpu_dict *d) { return d->nframes; }
static inline uint32_t xpu_dict_nstacks(const struct xpu_dict *d) { return d->nstacks; }
/* Stacks in the dictionary now (nstacks less the freed ids). */
static inline uint32_t xpu_dict_live_stacks(const struct xpu_dict *d) { return d->nstacks - d->nfree; }
/* Whether id names a stack now (1..nstacks and not freed). */
static inline int xpu_dict_stack_valid(const struct xpu_dict *d, uint32_t id)
{
	return id >= 1 && id <= d->nstacks && d->stacks[id - 1].off != XPU_DICT_FREE;
}

/* Sweeping stacks: begin, have every holder mark the ids it holds, then end,
 * which frees every unmarked stack (calling freed() with each id first) and
 * packs the survivors.  Between the two, stack_marked() tells a cache which
 * of its entries survive.  begin returns 0 or -ENOMEM (then nothing is swept);
 * end returns the number of stacks freed. */
int xpu_dict_sweep_begin(struct xpu_dict *d);
static inline void xpu_dict_mark_stack(struct xpu_dict *d, uint32_t id)
{
	if (d->marks && id >= 1 && id <= d->nstacks)
		d->marks[(id - 1) / 64] |= 1ULL << ((id - 1) % 64);
}
static inline int xpu_dict_stack_marked(const struct xpu_dict *d, uint32_t id)
{
	return id >= 1 && id <= d->nstacks && d->marks &&
	       (d->marks[(id - 1) / 64] >> ((id - 1) % 64) & 1);
}
uint32_t xpu_dict_sweep_end(struct xpu_dict *d, void (*freed)(void *arg, uint32_t id), void *arg);

/* The text shown for a frame (without folded suffixes): the symbol,
 * "[unknown] (module)" for an unknown address, or a pending frame's label.  Returns the length written
 * (truncated to fit, always NUL-terminated). */
size_t xpu_frame_text(const struct xpu_dict *d, uint32_t frame, char *buf, size_t size);

#include <string.h>
static inline uint32_t xpu_dict_cstr(struct xpu_dict *d, const char *s)
{
	return xpu_dict_str(d, s, strlen(s));
}

#endif
