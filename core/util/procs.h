/* SPDX-License-Identifier: GPL-2.0-only */
/* Processes by id or by name, from /proc: what -p names is checked before
 * the run starts, so that a mistyped id or a thread's id is said at once
 * rather than shown as an empty table. */
#ifndef XPU_PROCS_H
#define XPU_PROCS_H

#include <stdint.h>

/* The thread group (process) of task id, or -1 when there is no such task. */
long xpu_procs_tgid(uint32_t id);
/* The parent of process pid as root's /proc (normally "/proc") says, or -1. */
long xpu_procs_ppid_at(const char *root, uint32_t pid);
/* 1 when process pid's main thread has begun to exit (killed, or ending),
 * 0 when not, -1 when there is no such process (gone). */
int xpu_procs_exiting(uint32_t pid);
/* Whether process pid's name (comm, or the file name of its executable) is name. */
int xpu_procs_named(uint32_t pid, const char *name);
/* Processes whose name (comm, or the file name of their executable) is name;
 * up to max ids into out.  Returns how many there are (may exceed max). */
int xpu_procs_by_name(const char *name, uint32_t *out, int max);

#endif
