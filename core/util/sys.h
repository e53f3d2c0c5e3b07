/* SPDX-License-Identifier: GPL-2.0-only */
/* Facts about the machine and the checks xputop makes before it starts. */
#ifndef XPU_SYS_H
#define XPU_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* A path's last component ("libcuda.so.1" of /usr/lib/libcuda.so.1). */
static inline const char *xpu_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

uint64_t xpu_now_mono(void);	/* CLOCK_MONOTONIC ns (bpf_ktime_get_ns's clock) */
uint64_t xpu_now_wall(void);	/* CLOCK_REALTIME ns */
/* An environment variable's whole decimal number, at most max; dflt when it
 * is unset, empty, not a number or over max. */
uint64_t xpu_env_u64(const char *name, uint64_t dflt, uint64_t max);

/* Online CPU numbers from /sys/devices/system/cpu/online.  Returns the count
 * (cpus is malloc'ed) or -errno. */
int xpu_sys_online_cpus(int **cpus);

/* 0, or -1 with a message saying what is missing and what to do. */
int xpu_sys_check_root(void);
int xpu_sys_check_btf(void);
/* Makes sure tracefs is mounted (mounting it if needed); 0 or -1 with a message. */
int xpu_sys_tracefs(void);
/* Routes libbpf's messages to the error channel (warnings as debug, unless verbose). */
void xpu_sys_libbpf_logging(int verbose);
/* Explains a failed BPF load/attach: returns a sentence for the error. */
const char *xpu_sys_bpf_hint(int err);

/* At exit: the kernel detaches each uprobe with two RCU grace periods under
 * one lock, ~70 ms each, one after another, and a process's exit waits for
 * its descriptors to be closed; with a dozen CUDA launch probes that is a
 * second.  This forks a helper that keeps only the BPF and perf-event
 * descriptors and drops them once xputop has gone, so xputop's own closes
 * are cheap and its exit prompt.  Nothing else is held: pipes and terminals
 * see their end when xputop ends.  Call it when nothing is left to write. */
void xpu_sys_detach_in_background(void);

/* A helper thread's first call: every signal blocked (the main loop reads
 * them from its signalfd) and the thread named (ps -L, top -H). */
void xpu_sys_thread_begin(const char *name);

/* NVIDIA display or 3D controllers on the PCI bus (cached after the first
 * look), so that a view can say there is none rather than wait for one. */
int xpu_sys_nvidia_gpus(void);

/* The user who ran sudo (SUDO_UID/SUDO_GID) when we are root, else -1. */
int xpu_sys_invoking_user(uid_t *uid, gid_t *gid);
/* Opens dir (O_DIRECTORY), creating it with mode 0755 when missing: it must
 * be a directory of xputop's own user that no one else can write into, or
 * anyone could put files where xputop trusts them.  Returns the descriptor, or
 * -1 with errno (EPERM: someone else's, or writable by others). */
int xpu_sys_own_dir(const char *dir);
/* User name for a uid (cached lookups; the number as text if unknown). */
const char *xpu_sys_user_name(uint32_t uid);
/* Writes all n bytes at p to fd, again after EINTR and short writes.
 * Returns 0, or -errno with errno set (EIO when the file takes nothing). */
int xpu_sys_write_all(int fd, const void *p, size_t n);

#endif
