#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "install.h"
#include "outfile.h"
#include "sys.h"

const char *xpu_inject_lib_path(void)
{
	static char path[4200];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libxputop_inject.so", exe);
			if (access(path, R_OK) == 0)
				return path;
		}
	}
	return xpu_install_find(XPU_INSTALL_LIB, "libxputop_inject.so", path, sizeof(path)) == 0 ? path : NULL;
}

/* In the child: become the invoking user, with their groups and home. */
static int drop_privileges(void)
{
	uid_t uid;
	gid_t gid;
	if (xpu_sys_invoking_user(&uid, &gid) < 0)
		return 0;	/* root started xputop directly: the command runs as root */
	struct passwd *pw = getpwuid(uid);
	if (pw) {
		if (initgroups(pw->pw_name, gid) < 0)
			return -1;
		setenv("HOME", pw->pw_dir, 1);
		setenv("USER", pw->pw_name, 1);
		setenv("LOGNAME", pw->pw_name, 1);
	} else if (setgroups(0, NULL) < 0) {
		return -1;
	}
	if (setgid(gid) < 0 || setuid(uid) < 0 || setuid(0) == 0)
		return -1;	/* the last check: root must be gone for good */
	return 0;
}

static void child_main(char **argv, const char *lib, int gate, int report, int out)
{
	sigset_t none;
	char go;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (read(gate, &go, 1) < 0) {	/* EOF when xputop is ready (or gone) */
		int e = errno;
		(void)!write(report, &e, sizeof(e));
		_exit(127);
	}
	if (lib)
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	if (out >= 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(out, STDOUT_FILENO);
		dup2(out, STDERR_FILENO);
	} else {
		dup2(STDERR_FILENO, STDOUT_FILENO);
	}
	if (drop_privileges() < 0) {
		int e = errno ? errno : EPERM;
		(void)!write(report, &e, sizeof(e));
		_exit(127);
	}
	execvp(argv[0], argv);
	int e = errno;
	(void)!write(report, &e, sizeof(e));
	_exit(127);
}

static int open_log(struct xpu_child *c, const char *dir)
{
	struct xpu_outfile o;
	char stem[96];
	if (xpu_outfile_open(&o, dir) < 0)
		return -1;
	int fd = dup(fileno(o.f));
	xpu_outfile_stem(stem, sizeof(stem), "cmd");
	/* Named now (not at the end like an export): the command writes into it. */
	if (fd < 0 || xpu_outfile_commit(&o, stem, "log", c->log, sizeof(c->log)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int xpu_child_spawn(struct xpu_child *c, char **argv, const char *inject_lib, const char *log_dir)
{
	int gate[2], report[2], out = -1;
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->gate = -1;
	c->report = -1;
	if (log_dir && (out = open_log(c, log_dir)) < 0)
		return -1;
	if (pipe2(gate, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
		xpu_err("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	c->pid = fork();
	if (c->pid < 0) {
		xpu_err("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (c->pid == 0) {
		close(gate[1]);
		close(report[0]);
		child_main(argv, inject_lib, gate[0], report[1], out);
	}
	close(gate[0]);
	close(report[1]);
	if (out >= 0)
		close(out);
	c->gate = gate[1];
	c->report = report[0];
	return 0;
}

int xpu_child_release(struct xpu_child *c, const char *name)
{
	int err = 0;
	close(c->gate);
	c->gate = -1;
	ssize_t n = read(c->report, &err, sizeof(err));	/* 0: exec succeeded (CLOEXEC) */
	close(c->report);
	c->report = -1;
	if (n == (ssize_t)sizeof(err)) {
		xpu_err("cannot run %s: %s", name, strerror(err));
		waitpid(c->pid, &c->status, 0);
		c->exited = 1;
		return -1;
	}
	return 0;
}

int xpu_child_reap(struct xpu_child *c)
{
	if (c->pid <= 0 || c->exited)
		return 0;
	if (waitpid(c->pid, &c->status, WNOHANG) != c->pid)
		return 0;
	c->exited = 1;
	return 1;
}
