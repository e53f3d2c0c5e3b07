/* SPDX-License-Identifier: GPL-2.0-only */
/* Whom a process runs as, as far as files are concerned: its uid, gid and
 * supplementary groups.  Looked up in the parent (user names and group lists
 * come from NSS, which a forked child of a threaded program must not call)
 * and taken on in a forked child with system calls alone. */
#ifndef XPU_CREDS_H
#define XPU_CREDS_H

#include <stdint.h>
#include <sys/types.h>

struct xpu_creds {
	int keep;		/* 1: the caller's own: root started xputop without sudo */
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups (malloc'ed) */
	int ngroups;
	char user[64];		/* "" when the uid has no passwd entry */
	char home[4096];
};

/* Who runs `xputop -- CMD`'s command: the user who ran sudo (SUDO_UID,
 * SUDO_GID, with that user's groups), else xputop's own identity (keep).
 * Returns 0, or -1 with errno. */
int xpu_creds_invoker(struct xpu_creds *c);
/* What a running process opens files as: its filesystem uid and gid and its
 * groups, from /proc/PID/status.  Returns 0, or -1 with errno. */
int xpu_creds_of_pid(uint32_t pid, struct xpu_creds *c);
void xpu_creds_free(struct xpu_creds *c);
/* In a forked child: become c for good (groups, gid, uid; and root cannot
 * be taken back).  Async-signal-safe.  Returns 0, or -1 with errno. */
int xpu_creds_become(const struct xpu_creds *c);

#endif
