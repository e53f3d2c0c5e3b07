/* SPDX-License-Identifier: GPL-2.0-only */
/* Host pids as the people who own them see them.
 *
 * NVIDIA's driver reports the pids of the host's pid namespace; a process in
 * a container knows itself by another pid.  /proc/PID/status says both
 * (NSpid: the host's first, its own namespace's last), with the process's
 * name and user.  Thread-safe: the NVML poller calls it off the ingest path.
 */
#ifndef XPU_PIDNS_H
#define XPU_PIDNS_H

#include <stddef.h>
#include <stdint.h>

#define XPU_PIDNS_COMM 16	/* a kernel comm and its NUL */

struct xpu_pidns_info {
	char comm[XPU_PIDNS_COMM];	/* "" = unknown */
	uint32_t nspid;			/* pid inside its own (innermost) pid namespace */
	uint32_t uid;			/* real uid */
	uint32_t depth;			/* pid namespaces below the host's it is in */
};

/* Parses the text of a /proc/PID/status (len bytes, not terminated).
 * Returns 0 when it named the process's pids (NSpid, or Pid on kernels
 * before 4.1), -1 otherwise; what it found is in *out either way. */
int xpu_pidns_parse(const char *text, size_t len, struct xpu_pidns_info *out);

/* Whether this process sees the host's pids: it runs in the initial pid
 * namespace, or shares it (NSpid has one pid).  Else a pid from the driver
 * names some other process here, or none. */
int xpu_pidns_is_host(void);

/* Looks up a host pid under /proc.  Returns 0, or -1 when the process is
 * gone or not visible from here. */
int xpu_pidns_lookup(uint32_t pid, struct xpu_pidns_info *out);

#endif
