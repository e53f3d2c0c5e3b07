/* SPDX-License-Identifier: GPL-2.0-only */
/* `xputop -- CMD ARGS`: the command xputop starts and watches.
 *
 * The command runs with CUDA_INJECTION64_PATH pointing at the injection
 * library (or at a copy its user can load: inject_lib.h), as the user who ran
 * sudo (never as root unless root started xputop directly), and waits at a
 * gate until xputop's sources are ready, so its first launches are seen.  Under the TUI its output goes to a log file
 * (the screen is xputop's); in batch mode to xputop's stderr, keeping stdout
 * for snapshots. */
#ifndef XPU_CHILD_H
#define XPU_CHILD_H

#include <sys/types.h>

struct xpu_child {
	pid_t pid;
	int gate;		/* write end: closing it lets the command run */
	int report;		/* read end: an errno if the command could not start */
	int exited;
	int status;		/* wait status once exited */
	int exec_errno;		/* why the command could not start; 0 if it did */
	char log[4200];		/* the output file, "" when not redirected */
	char lib[4200];		/* the library's copy it was given, if one was */
};

/* Forks the command, held at the gate.  log_dir != NULL sends its output to a
 * new file there.  Returns 0 or -1 (reported). */
int xpu_child_spawn(struct xpu_child *c, char **argv, const char *inject_lib, const char *log_dir);
/* Lets it run; reports an exec failure.  Returns 0 or -1. */
int xpu_child_release(struct xpu_child *c, const char *name);
/* Collects its exit status if it has ended (after SIGCHLD).  Returns 1 when
 * it ended now. */
int xpu_child_reap(struct xpu_child *c);

#endif
