/* SPDX-License-Identifier: GPL-2.0-only */
/* Real ioctl calls carrying DRM_IOCTL_IVPU_* command numbers, on a node the
 * test names (xputop --npu-dev NODE), for the NPU ioctl path and its benchmark.
 *
 *   npu_ioctl NODE calls        GET_PARAM x100, SUBMIT x50, BO_WAIT x20,
 *                               DRM_VERSION x10, then exits
 *   npu_ioctl NODE rate N SECS  N ioctls a second (GET_PARAM, SUBMIT, BO_WAIT
 *                               in turn) for SECS seconds; prints the count
 *
 * On a node of a driver that has no ioctls (e.g. a copy of /dev/full) every
 * call fails with ENOTTY, which is what the test expects to see decoded.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* include/uapi/drm/ivpu_accel.h: 'd', DRM_COMMAND_BASE 0x40 */
struct drm_ivpu_param { uint32_t param, index; uint64_t value; };
struct drm_ivpu_submit { uint64_t buffers_ptr; uint32_t buffer_count, engine, flags, commands_offset; };
struct drm_ivpu_bo_wait { uint32_t handle, flags; int64_t timeout_ns; uint32_t job_status, pad; };
struct drm_version { int major, minor, patch; size_t name_len; char *name; size_t date_len; char *date;
		     size_t desc_len; char *desc; };

#define IVPU_GET_PARAM _IOWR('d', 0x40, struct drm_ivpu_param)
#define IVPU_SUBMIT _IOW('d', 0x45, struct drm_ivpu_submit)
#define IVPU_BO_WAIT _IOWR('d', 0x46, struct drm_ivpu_bo_wait)
#define DRM_VERSION _IOWR('d', 0x00, struct drm_version)

static int fd;

static void call(unsigned long cmd, int n)
{
	struct drm_ivpu_param p = { .param = 9 };	/* ENGINE_HEARTBEAT */
	for (int i = 0; i < n; i++)
		(void)ioctl(fd, cmd, &p);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Paced in 1 ms slices so the load is even, not bursts once a second. */
static uint64_t rate(long per_s, double secs)
{
	static const unsigned long cmds[] = { IVPU_GET_PARAM, IVPU_SUBMIT, IVPU_BO_WAIT };
	struct drm_ivpu_param p = { 0 };
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9), done = 0;
	while (now_ns() < end) {
		uint64_t due = (uint64_t)((double)(now_ns() - start) * (double)per_s / 1e9);
		while (done < due)
			(void)ioctl(fd, cmds[done++ % 3], &p);
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: npu_ioctl NODE calls | NODE rate N SECONDS\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (strcmp(argv[2], "calls") == 0) {
		call(IVPU_GET_PARAM, 100);
		call(IVPU_SUBMIT, 50);
		call(IVPU_BO_WAIT, 20);
		call(DRM_VERSION, 10);
		printf("pid %d\n", (int)getpid());
	} else if (strcmp(argv[2], "rate") == 0 && argc == 5) {
		uint64_t n = rate(atol(argv[3]), atof(argv[4]));
		printf("pid %d ioctls %llu\n", (int)getpid(), (unsigned long long)n);
	} else {
		fprintf(stderr, "usage: npu_ioctl NODE calls | NODE rate N SECONDS\n");
		return 2;
	}
	return 0;
}
