/* SPDX-License-Identifier: GPL-2.0-only */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "creds.h"
#include "err.h"
#include "inject_lib.h"
#include "outfile.h"

/* In the child: the environment of the user it becomes. */
static void become_env(const struct xpu_creds *who)
{
	if (who->keep || !who->user[0])
		return;
	setenv("HOME", who->home, 1);
	setenv("USER", who->user, 1);
	setenv("LOGNAME", who->user, 1);
}

static void child_main(char **argv, const char *lib, const struct xpu_creds *who, int gate, int report,
		       int out)
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
	become_env(who);
	if (xpu_creds_become(who) < 0) {
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

/* Forks the command as who, with the library who can load. */
static int fork_as(struct xpu_child *c, char **argv, const char *inject_lib, const struct xpu_creds *who,
		   int out)
{
	int gate[2], report[2];
	const char *lib = inject_lib ? xpu_inject_lib_for(inject_lib, who, argv[0], c->lib, sizeof(c->lib))
				     : NULL;
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
		child_main(argv, lib, who, gate[0], report[1], out);
	}
	close(gate[0]);
	close(report[1]);
	c->gate = gate[1];
	c->report = report[0];
	return 0;
}

int xpu_child_spawn(struct xpu_child *c, char **argv, const char *inject_lib, const char *log_dir)
{
	struct xpu_creds who;
	int out = -1;
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->gate = -1;
	c->report = -1;
	if (xpu_creds_invoker(&who) < 0) {
		xpu_err("cannot look up the user to run %s as: %s", argv[0], strerror(errno));
		xpu_creds_free(&who);
		return -1;
	}
	int rc = log_dir && (out = open_log(c, log_dir)) < 0 ? -1 : fork_as(c, argv, inject_lib, &who, out);
	if (out >= 0)
		close(out);
	xpu_creds_free(&who);
	return rc;
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
		c->exec_errno = err ? err : ENOEXEC;
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
