/* SPDX-License-Identifier: GPL-2.0-only */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "err.h"

uint64_t xpu_now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t xpu_now_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t xpu_env_u64(const char *name, uint64_t dflt, uint64_t max)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v || *v < '0' || *v > '9')
		return dflt;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	return *end || errno || n > max ? dflt : (uint64_t)n;
}

/* Parses "0-3,5,7-8". */
int xpu_sys_online_cpus(int **cpus)
{
	char buf[4096];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	int cap = 64, count = 0;
	int *v = malloc(cap * sizeof(int));
	if (!v)
		return -ENOMEM;
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > 65535)
				goto bad;
		}
		for (long c = a; c <= b; c++) {
			if (count == cap) {
				int *w = realloc(v, (cap *= 2) * sizeof(int));
				if (!w)
					goto bad;
				v = w;
			}
			v[count++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
	}
	*cpus = v;
	return count;
bad:
	free(v);
	return -EINVAL;
}

int xpu_sys_check_root(void)
{
	if (geteuid() == 0)
		return 0;
	xpu_err("xputop needs root to load its BPF programs and sample every process: run it with sudo "
		"(or replay a recording with -r FILE, which needs no privileges)");
	return -1;
}

int xpu_sys_check_btf(void)
{
	static const char *path = "/sys/kernel/btf/vmlinux";
	unsigned char magic[2] = { 0, 0 };
	const char *why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		why = errno == ENOENT ? "is missing" : "cannot be read";
	else if (read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) || magic[0] != 0x9f || magic[1] != 0xeb)
		why = "is not BTF";
	if (fd >= 0)
		close(fd);
	if (!why)
		return 0;
	xpu_warn("this kernel exposes no usable BTF (%s %s), so no BPF program can load: CPU sampling, GPU "
		 "launch stacks and NPU probes are off; GPU kernel times from the injection library and "
		 "replays still work.  A kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution "
		 "kernels since 5.4) has it.", path, why);
	return -1;
}

int xpu_sys_tracefs(void)
{
	static const char *dir = "/sys/kernel/tracing";
	char path[64];
	snprintf(path, sizeof(path), "%s/events", dir);
	if (access(path, F_OK) == 0)
		return 0;
	if (mount("nodev", dir, "tracefs", 0, NULL) == 0 && access(path, F_OK) == 0) {
		xpu_info("mounted tracefs on %s", dir);
		return 0;
	}
	xpu_err("tracefs is not mounted and could not be mounted (%s): run 'mount -t tracefs nodev %s' "
		"as root", strerror(errno), dir);
	return -1;
}

static int verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	if (level == LIBBPF_DEBUG && verbose_libbpf < 2)
		return 0;
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	while (n > 0 && n < (int)sizeof(msg) && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* Most of libbpf's own messages say who they are from already. */
	const char *m = strncmp(msg, "libbpf: ", 8) == 0 ? msg + 8 : msg;
	xpu_log(verbose_libbpf ? XPU_LOG_INFO : XPU_LOG_DEBUG, "libbpf: %s", m);
	return 0;
}

void xpu_sys_libbpf_logging(int verbose)
{
	verbose_libbpf = verbose;
	libbpf_set_print(libbpf_print);
}

const char *xpu_sys_bpf_hint(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		return "permission denied: run xputop as root (it needs CAP_BPF and CAP_PERFMON); "
		       "if it is root already, kernel lockdown or a security module is refusing BPF";
	case ENOENT:
		return "a kernel hook it needs does not exist on this kernel";
	case EINVAL:
	case E2BIG:
		return "the kernel rejected the program (run with -v to see the verifier's log)";
	case ENOSPC:
	case ENOMEM:
		return "out of memory for BPF maps";
	default:
		return strerror(err);
	}
}

int xpu_sys_invoking_user(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	char *end;
	if (geteuid() != 0 || !u || !g)
		return -1;
	unsigned long a = strtoul(u, &end, 10);
	if (*u == '\0' || *end)
		return -1;
	unsigned long b = strtoul(g, &end, 10);
	if (*g == '\0' || *end)
		return -1;
	*uid = (uid_t)a;
	*gid = (gid_t)b;
	return 0;
}

int xpu_sys_own_dir(const char *dir)
{
	int made = mkdir(dir, 0755) == 0;
	if (!made && errno != EEXIST)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	if (made && fchmod(fd, 0755) < 0) {	/* whatever the umask: others must enter it */
		close(fd);
		return -1;
	}
	return fd;
}

const char *xpu_sys_user_name(uint32_t uid)
{
	static struct { uint32_t uid; char name[33]; } cache[64];
	static unsigned n, next;
	for (unsigned i = 0; i < n; i++)
		if (cache[i].uid == uid)
			return cache[i].name;
	unsigned slot = n < 64 ? n++ : next++ % 64;
	struct passwd pw, *res = NULL;
	char buf[1024];
	cache[slot].uid = uid;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(cache[slot].name, sizeof(cache[slot].name), "%s", res->pw_name);
	else
		snprintf(cache[slot].name, sizeof(cache[slot].name), "%u", uid);
	return cache[slot].name;
}

/* Whether fd is a perf event or a BPF object: what the helper keeps. */
static int bpf_or_perf_fd(int dirfd, const char *name)
{
	char target[64];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return strncmp(target, "anon_inode:[perf_event]", 23) == 0 || strncmp(target, "anon_inode:bpf", 14) == 0;
}

/* In the forked helper: async-signal-safe system calls only (xputop has
 * threads, one may have held a lock in malloc). */
static void close_all_but_bpf(int keep)
{
	char buf[4096];
	int dirfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;
	if (dirfd < 0)
		_exit(0);	/* cannot tell them apart: xputop's exit does the waiting */
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(buf + at);
			at += d->reclen;
			int fd = 0;
			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				fd = fd * 10 + (*c - '0');
			if (d->name[0] < '0' || d->name[0] > '9' || fd == dirfd || fd == keep)
				continue;
			if (!bpf_or_perf_fd(dirfd, d->name))
				close(fd);
		}
	}
	close(dirfd);
}

void xpu_sys_detach_in_background(void)
{
	int gone[2];
	char c;
	if (pipe2(gone, O_CLOEXEC))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(gone[1]);
		close_all_but_bpf(gone[0]);
		while (read(gone[0], &c, 1) < 0 && errno == EINTR)
			;	/* EOF: xputop has exited, these are the last references */
		_exit(0);
	}
	close(gone[0]);
	if (pid < 0)
		close(gone[1]);
	/* gone[1] closes when xputop exits. */
}

void xpu_sys_thread_begin(const char *name)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, name);
}

static unsigned long read_hex(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strtoul(buf, NULL, 16);
}

int xpu_sys_nvidia_gpus(void)
{
	static int n = -1;
	glob_t g;
	char path[4200];
	if (n >= 0)
		return n;
	n = 0;
	if (glob("/sys/bus/pci/devices/*", 0, NULL, &g) != 0)
		return n;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(path, sizeof(path), "%s/vendor", g.gl_pathv[i]);
		if (read_hex(path) != 0x10de)
			continue;
		snprintf(path, sizeof(path), "%s/class", g.gl_pathv[i]);
		n += (read_hex(path) >> 16) == 0x03;	/* display controller: VGA, 3D */
	}
	globfree(&g);
	return n;
}

int xpu_sys_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			errno = EIO;
		if (k <= 0)
			return -errno;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}
