/* SPDX-License-Identifier: GPL-2.0-only */
/* What the keys do to a process (htop's k, F9, F7, F8, [ and ]): a signal
 * chosen from a menu, or a nice value one step up or down, for the selected
 * row of the CPU view; each asked before it is done (y), and done only if
 * the pid still names the process the row showed. */
#ifndef XPU_TUI_ACT_H
#define XPU_TUI_ACT_H

#include <stddef.h>
#include <stdint.h>

struct xpu_snapshot;
struct xpu_viewstate;

enum xpu_act_ask { XPU_ASK_NONE = 0, XPU_ASK_SIGNAL, XPU_ASK_CONFIRM };
enum xpu_act_kind { XPU_ACT_KILL = 0, XPU_ACT_NICE, XPU_ACT_GPU_EXACT };

struct xpu_act {
	enum xpu_act_ask ask;
	enum xpu_act_kind kind;
	uint32_t pid;		/* the row's key: a pid, or a tid in the thread table */
	char comm[64];		/* its name as the row showed it */
	int sig_row;		/* the signal menu's cursor */
	int nice, from;		/* renice: to, and from */
};

/* The signals the menu offers, in number order; SIGTERM is where the
 * cursor starts. */
struct xpu_act_signal {
	int sig;
	const char *name;
};
extern const struct xpu_act_signal xpu_act_signals[];
extern const unsigned xpu_act_nsignals;

/* k or F9: opens the signal menu for the selected row.  dnice (F7, F8, [,
 * ]): asks to renice it by dnice.  Each returns XPU_REACT_* flags, with a
 * status line message where there is nothing to act on. */
int xpu_act_kill(struct xpu_act *a, const struct xpu_snapshot *s, const struct xpu_viewstate *vs);
int xpu_act_renice(struct xpu_act *a, const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
		   int dnice);
/* e in the GPU view, from sampled tracing: asks before every kernel is
 * traced (it slows CUDA programs 30-100% while it lasts). */
int xpu_act_gpu_exact(struct xpu_act *a);
/* A key while the menu or the question is open: y to a question about
 * exact tracing gives XPU_REACT_GPU_EXACT. */
int xpu_act_key(struct xpu_act *a, int key);
/* The question, for the status line. */
void xpu_act_question(const struct xpu_act *a, char *buf, size_t size);

#endif
