/* SPDX-License-Identifier: GPL-2.0-only */
/* Sends what intel_vpu sends when it recovers the NPU: a kernel uevent
 * (netlink, NETLINK_KOBJECT_UEVENT, group 1) with IVPU_PM_EVENT=IVPU_RECOVER.
 * Needs root.  Prints "onset MONO_NS" just before sending.
 *
 *   npu_uevent [KEY=VALUE]      (default IVPU_PM_EVENT=IVPU_RECOVER)
 */
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *devpath = "/devices/pci0000:00/0000:00:0b.0/accel/accel0";
	const char *event = argc > 1 ? argv[1] : "IVPU_PM_EVENT=IVPU_RECOVER";
	char msg[1024];
	int len = snprintf(msg, sizeof(msg), "change@%s", devpath) + 1;
	const char *env[] = { "ACTION=change", "SUBSYSTEM=accel", "DEVNAME=accel/accel0", event };
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		len += snprintf(msg + len, sizeof(msg) - (size_t)len, "%s", env[i]) + 1;
	if (len >= (int)sizeof(msg))
		return 1;
	int fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	struct timespec ts;
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("onset %llu\n", (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
	fflush(stdout);
	if (sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("sendto");
		return 1;
	}
	close(fd);
	return 0;
}
