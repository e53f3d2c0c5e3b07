/* SPDX-License-Identifier: GPL-2.0-only */
#include "npu_sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "model_npu.h"
#include "readfile.h"
#include "session.h"

#define EVERY_NS 1000000000ULL	/* frequent reads of busy time disturb submission */
#define MAX_FDS 65536		/* open files looked at per scan */

enum { F_BUSY, F_MEM, F_CUR, F_MAX, F_POWER, NFILES };
static const char *const file_names[NFILES] = {
	"npu_busy_time_us", "npu_memory_utilization", "npu_current_frequency_mhz",
	"npu_max_frequency_mhz", "hwmon power1_input",
};

struct xpu_npu_sysfs {
	char root[256];
	char path[XPU_NPU_DEV_MAX][NFILES][320];	/* "" = absent */
	int ndev;
	uint64_t at;
	int uevent_fd;
	int uevent_err;
	uint64_t clients_seen, fdinfo_files;
};

static void find_devices(struct xpu_npu_sysfs *f)
{
	char pat[320];
	glob_t g;
	snprintf(pat, sizeof(pat), "%s/sys/class/accel/accel*/device", f->root);
	if (glob(pat, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc && f->ndev < XPU_NPU_DEV_MAX; i++) {
		int any = 0;
		for (int k = 0; k < F_POWER; k++) {
			snprintf(f->path[f->ndev][k], sizeof(f->path[0][0]), "%s/%s", g.gl_pathv[i], file_names[k]);
			if (access(f->path[f->ndev][k], R_OK) == 0)
				any = 1;
			else
				f->path[f->ndev][k][0] = '\0';
		}
		glob_t h;
		snprintf(pat, sizeof(pat), "%s/hwmon/hwmon*/power1_input", g.gl_pathv[i]);
		if (glob(pat, 0, NULL, &h) == 0) {
			snprintf(f->path[f->ndev][F_POWER], sizeof(f->path[0][0]), "%s", h.gl_pathv[0]);
			globfree(&h);
		}
		if (any)	/* an intel_vpu device: another accel driver has none of these */
			f->ndev++;
		else
			memset(f->path[f->ndev], 0, sizeof(f->path[0]));
	}
	globfree(&g);
}

static int open_uevents(struct xpu_npu_sysfs *f)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		f->uevent_err = errno;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct xpu_npu_sysfs *xpu_npu_sysfs_open(const char *root)
{
	struct xpu_npu_sysfs *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	snprintf(f->root, sizeof(f->root), "%s", root && strcmp(root, "/") ? root : "");
	find_devices(f);
	f->uevent_fd = open_uevents(f);
	return f;
}

int xpu_npu_sysfs_devices(const struct xpu_npu_sysfs *f)
{
	return f ? f->ndev : 0;
}

void xpu_npu_sysfs_free(struct xpu_npu_sysfs *f)
{
	if (!f)
		return;
	if (f->uevent_fd >= 0)
		close(f->uevent_fd);
	free(f);
}

void xpu_npu_sysfs_tell(const struct xpu_npu_sysfs *f, struct xpu_npu_model *m)
{
	char have[200] = "", lack[200] = "";
	for (int k = 1; k < NFILES; k++) {
		int any = 0;
		for (int d = 0; d < f->ndev; d++)
			any |= f->path[d][k][0] != '\0';
		char *list = any ? have : lack;
		size_t used = strlen(list);
		snprintf(list + used, sizeof(have) - used, "%s%s", used ? ", " : "", file_names[k]);
	}
	if (f->ndev && f->path[0][F_BUSY][0])
		xpu_npu_model_source(m, "busy", XPU_SRC_ACTIVE, "%s, read every second", f->path[0][F_BUSY]);
	else
		xpu_npu_model_source(m, "busy", XPU_SRC_OFF,
				     "no %s/sys/class/accel/accel*/device/npu_busy_time_us: busy %% is N/A", f->root);
	if (f->ndev)
		xpu_npu_model_source(m, "sysfs", XPU_SRC_ACTIVE, "%d device%s: %s%s%s%s", f->ndev,
				     f->ndev == 1 ? "" : "s", have[0] ? have : "none", lack[0] ? "; N/A: " : "",
				     lack, lack[0] ? " (not in this kernel or platform)" : "");
	else
		xpu_npu_model_source(m, "sysfs", XPU_SRC_OFF, "no intel_vpu device under %s/sys/class/accel: "
				     "memory, frequency and power are N/A", f->root);
	xpu_npu_model_source(m, "fdinfo", f->ndev ? XPU_SRC_ACTIVE : XPU_SRC_OFF,
			     "%s/proc/*/fdinfo of open /dev/accel files (drm-driver: intel_vpu, 6.19+): "
			     "per-process NPU memory; engine time only where the driver gives drm-engine-*",
			     f->root);
	if (f->uevent_fd >= 0)
		xpu_npu_model_source(m, "uevents", XPU_SRC_ACTIVE, "kernel uevents: IVPU_PM_EVENT recoveries");
	else
		xpu_npu_model_source(m, "uevents", XPU_SRC_FAILED, "cannot listen to kernel uevents: %s",
				     strerror(f->uevent_err));
}

/* A sysfs number, or -1 when absent or not a number. */
static long long number(const char *path)
{
	char *text = NULL, *end;
	size_t len;
	long long v = -1;
	if (!path[0] || xpu_read_path(path, 64, &text, &len) < 0)
		return -1;
	v = strtoll(text, &end, 10);
	if (end == text || v < 0)
		v = -1;
	free(text);
	return v;
}

static void read_device(struct xpu_npu_sysfs *f, struct xpu_session *s, int d, uint64_t now)
{
	long long v[NFILES];
	for (int k = 0; k < NFILES; k++)
		v[k] = number(f->path[d][k]);
	if (v[F_BUSY] >= 0) {
		struct xpu_event ev = { .type = XPU_EV_NPU_BUSY, .source = XPU_SRC_NPU, .time = now };
		ev.npu.aux = (uint32_t)d;
		ev.npu.arg = (uint64_t)v[F_BUSY];
		ev.npu.count = 1;
		xpu_session_emit(s, &ev);
	}
	struct xpu_event ev = { .type = XPU_EV_NPU_DEV, .source = XPU_SRC_NPU, .time = now };
	struct xpu_ev_npu_dev *n = &ev.ndev;
	n->index = (uint32_t)d;
	if (v[F_MEM] >= 0)
		n->flags |= XPU_NPU_DEV_MEM, n->mem_bytes = (uint64_t)v[F_MEM];
	if (v[F_CUR] >= 0 && v[F_CUR] <= UINT32_MAX)
		n->flags |= XPU_NPU_DEV_CUR_MHZ, n->cur_mhz = (uint32_t)v[F_CUR];
	if (v[F_MAX] >= 0 && v[F_MAX] <= UINT32_MAX)
		n->flags |= XPU_NPU_DEV_MAX_MHZ, n->max_mhz = (uint32_t)v[F_MAX];
	if (v[F_POWER] >= 0 && v[F_POWER] / 1000 <= UINT32_MAX)	/* hwmon: microwatts */
		n->flags |= XPU_NPU_DEV_POWER, n->power_mw = (uint32_t)(v[F_POWER] / 1000);
	xpu_session_emit(s, &ev);
}

/* "1234 KiB" (DRM fdinfo memory: bytes, KiB or MiB). */
static uint64_t bytes(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		return n << 10;
	if (!strncmp(end, "MiB", 3))
		return n << 20;
	if (!strncmp(end, "GiB", 3))
		return n << 30;
	return n;
}

int xpu_npu_fdinfo_parse(const char *text, struct xpu_ev_npu_client *c)
{
	int ours = 0;
	memset(c, 0, sizeof(*c));
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		char line[256];
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		char *colon = strchr(line, ':');
		if (colon) {
			char *v = colon + 1;
			*colon = '\0';
			while (*v == ' ' || *v == '\t')
				v++;
			if (!strcmp(line, "drm-driver"))
				ours = !strcmp(v, "intel_vpu");
			else if (!strcmp(line, "drm-client-id"))
				c->client_id = (uint32_t)strtoul(v, NULL, 10);
			else if (!strcmp(line, "drm-total-memory") || !strncmp(line, "drm-total-", 10))
				c->flags |= XPU_NPU_CLIENT_TOTAL, c->total_bytes += bytes(v);
			else if (!strcmp(line, "drm-resident-memory") || !strncmp(line, "drm-resident-", 13))
				c->flags |= XPU_NPU_CLIENT_RESIDENT, c->resident_bytes += bytes(v);
			else if (!strncmp(line, "drm-engine-", 11) && strncmp(line, "drm-engine-capacity-", 20))
				c->flags |= XPU_NPU_CLIENT_ENGINE, c->engine_ns += strtoull(v, NULL, 10);
		}
		p = nl ? nl + 1 : NULL;
	}
	return ours;
}

static void read_fdinfo(struct xpu_npu_sysfs *f, struct xpu_session *s, uint32_t pid, const char *fd,
			uint64_t now, uint32_t *seen, int *nseen)
{
	char path[640], *text = NULL;
	size_t len;
	struct xpu_event ev = { .type = XPU_EV_NPU_CLIENT, .source = XPU_SRC_NPU, .pid = pid, .time = now };
	snprintf(path, sizeof(path), "%s/proc/%u/fdinfo/%s", f->root, pid, fd);
	if (xpu_read_path(path, 8192, &text, &len) < 0)
		return;
	int ours = xpu_npu_fdinfo_parse(text, &ev.nclient);
	free(text);
	if (!ours)
		return;
	for (int i = 0; i < *nseen; i++)	/* a dup'ed descriptor: the same client */
		if (seen[i] == ev.nclient.client_id)
			return;
	if (*nseen < 64)
		seen[(*nseen)++] = ev.nclient.client_id;
	snprintf(path, sizeof(path), "%s/proc/%u/comm", f->root, pid);
	if (xpu_read_path(path, 64, &text, &len) == 0) {
		while (len && (text[len - 1] == '\n' || text[len - 1] == '\0'))
			len--;
		ev.nclient.comm = len ? xpu_dict_str(&s->dict, text, len) : 0;
		free(text);
	}
	f->clients_seen++;
	xpu_session_emit(s, &ev);
}

/* Open files of every process whose descriptor names an accel node. */
static void read_clients(struct xpu_npu_sysfs *f, struct xpu_session *s, uint64_t now)
{
	char path[320];
	long budget = MAX_FDS;
	snprintf(path, sizeof(path), "%s/proc", f->root);
	DIR *proc = opendir(path);
	if (!proc)
		return;
	struct dirent *p;
	while ((p = readdir(proc)) && budget > 0) {
		char *end;
		unsigned long pid = strtoul(p->d_name, &end, 10);
		if (*end || !pid || pid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/proc/%lu/fd", f->root, pid);
		DIR *fds = opendir(path);
		if (!fds)
			continue;
		uint32_t seen[64];
		int nseen = 0;
		struct dirent *d;
		while ((d = readdir(fds)) && budget-- > 0) {
			char link[640], target[256];
			if (d->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", path, d->d_name);
			ssize_t n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (strncmp(target, "/dev/accel/", 11) == 0)
				read_fdinfo(f, s, (uint32_t)pid, d->d_name, now, seen, &nseen);
		}
		closedir(fds);
	}
	closedir(proc);
}

void xpu_npu_sysfs_read(struct xpu_npu_sysfs *f, struct xpu_session *s, uint64_t now)
{
	if (!f->ndev || (f->at && now - f->at < EVERY_NS))
		return;
	f->at = now;
	for (int d = 0; d < f->ndev; d++)
		read_device(f, s, d, now);
	read_clients(f, s, now);
}

int xpu_npu_uevent_recovery(const char *buf, size_t len)
{
	for (size_t at = 0; at < len;) {
		const char *kv = buf + at;
		size_t n = strnlen(kv, len - at);
		if (n == 26 && memcmp(kv, "IVPU_PM_EVENT=IVPU_RECOVER", 26) == 0)
			return 1;
		at += n + 1;
	}
	return 0;
}

void xpu_npu_sysfs_uevents(struct xpu_npu_sysfs *f, struct xpu_session *s, uint64_t now, int emit)
{
	char buf[8192];
	ssize_t n;
	if (f->uevent_fd < 0)
		return;
	while ((n = recv(f->uevent_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (!emit || !xpu_npu_uevent_recovery(buf, (size_t)n))
			continue;
		struct xpu_event ev = { .type = XPU_EV_NPU_PM, .source = XPU_SRC_NPU, .time = now };
		ev.npu.code = XPU_NPU_PM_RECOVERY;
		ev.npu.aux = xpu_dict_cstr(&s->dict, "uevent IVPU_PM_EVENT=IVPU_RECOVER");
		ev.npu.count = 1;
		xpu_session_emit(s, &ev);
	}
}
