/* SPDX-License-Identifier: GPL-2.0-only */
/* What intel-npu-smi shows, read the way the driver asks: each NPU's sysfs
 * files (busy time, memory in use, current and maximum frequency, hwmon
 * power where the platform has it) at most once a second, the DRM fdinfo of
 * every open NPU file (drm-driver: intel_vpu), and the driver's recovery
 * uevents (IVPU_PM_EVENT).  Everything is read under a root ("/", or
 * --npu-sysfs DIR for tests); what is absent is said, never fatal. */
#ifndef XPU_NPU_SYSFS_H
#define XPU_NPU_SYSFS_H

#include <stddef.h>
#include <stdint.h>

struct xpu_ev_npu_client;
struct xpu_npu_model;
struct xpu_npu_sysfs;
struct xpu_session;

/* root: NULL for the machine's own.  Returns NULL only when out of memory. */
struct xpu_npu_sysfs *xpu_npu_sysfs_open(const char *root);
int xpu_npu_sysfs_devices(const struct xpu_npu_sysfs *f);
/* Lines of the NPU sources list: "busy", "sysfs", "fdinfo", "uevents". */
void xpu_npu_sysfs_tell(const struct xpu_npu_sysfs *f, struct xpu_npu_model *m);
/* Once a second at most: NPU_BUSY, NPU_DEV and NPU_CLIENT events. */
void xpu_npu_sysfs_read(struct xpu_npu_sysfs *f, struct xpu_session *s, uint64_t now);
/* Recovery uevents received since the last call, as NPU_PM RECOVERY events
 * (unless emit is 0: a probe already reports recoveries). */
void xpu_npu_sysfs_uevents(struct xpu_npu_sysfs *f, struct xpu_session *s, uint64_t now, int emit);
void xpu_npu_sysfs_free(struct xpu_npu_sysfs *f);

/* Parses one fdinfo text: 1 (an intel_vpu file, *c filled but comm), 0 (another driver's). */
int xpu_npu_fdinfo_parse(const char *text, struct xpu_ev_npu_client *c);
/* Whether a uevent's text (NUL-separated KEY=VALUE) is an NPU recovery. */
int xpu_npu_uevent_recovery(const char *buf, size_t len);

#endif
