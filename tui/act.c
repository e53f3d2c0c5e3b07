/* SPDX-License-Identifier: GPL-2.0-only */
#include "act.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <curses.h>

#include "readfile.h"
#include "snapshot.h"
#include "tui.h"
#include "views.h"

#define KEY_ESC 27

const struct xpu_act_signal xpu_act_signals[] = {
	{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" }, { SIGABRT, "SIGABRT" },
	{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" }, { SIGUSR2, "SIGUSR2" },
	{ SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" }, { SIGCONT, "SIGCONT" },
	{ SIGSTOP, "SIGSTOP" }, { SIGTSTP, "SIGTSTP" },
};
const unsigned xpu_act_nsignals = sizeof(xpu_act_signals) / sizeof(xpu_act_signals[0]);

/* "<before><pid> (<name>)<after>" on the status line. */
static void say(const char *before, const struct xpu_act *a, const char *after)
{
	char msg[320];
	snprintf(msg, sizeof(msg), "%s%u (%s)%s", before, a->pid, a->comm, after);
	xpu_tui_status(msg);
}

/* The selected row of the CPU view, where it is a process running here:
 * its key and name into a.  0, or -1 with the reason on the status line. */
static int target(struct xpu_act *a, const struct xpu_snapshot *s, const struct xpu_viewstate *vs)
{
	const struct xpu_view_desc *d = xpu_views[vs->view];
	const struct xpu_table *t = xpu_view_table(s, vs->view);
	int lost;

	if (!d->processes || !t) {
		xpu_tui_status("kill and renice act on a process: select one in the CPU view (c)");
		return -1;
	}
	if (s->replay) {
		xpu_tui_status("a replay: its processes are not running here, nothing to signal");
		return -1;
	}
	int row = t->nrows ? xpu_table_keep_row(t, 0, vs->sel_row[vs->view], 0, &lost) : -1;
	if (row < 0) {
		xpu_tui_status("no process selected");
		return -1;
	}
	const struct xpu_cell *c = xpu_table_row(t, (uint32_t)row);
	a->pid = (uint32_t)t->keys[row];
	/* The name, not a tree's prefix nor the command line (p): /proc's comm
	 * is what it is checked against. */
	const char *name = c[d->comm_col].na || !c[d->comm_col].s ? "?" : c[d->comm_col].s;
	while (!strncmp(name, "|  ", 3) || !strncmp(name, "   ", 3) || !strncmp(name, "|- ", 3) ||
	       !strncmp(name, "`- ", 3))
		name += 3;	/* the tree's (t) */
	snprintf(a->comm, sizeof(a->comm), "%s", name);
	return 0;
}

int xpu_act_kill(struct xpu_act *a, const struct xpu_snapshot *s, const struct xpu_viewstate *vs)
{
	if (target(a, s, vs) < 0)
		return XPU_REACT_REDRAW;
	a->kind = XPU_ACT_KILL;
	a->ask = XPU_ASK_SIGNAL;
	for (unsigned i = 0; i < xpu_act_nsignals; i++)
		if (xpu_act_signals[i].sig == SIGTERM)
			a->sig_row = (int)i;
	return XPU_REACT_REDRAW;
}

int xpu_act_renice(struct xpu_act *a, const struct xpu_snapshot *s, const struct xpu_viewstate *vs,
		   int dnice)
{
	if (target(a, s, vs) < 0)
		return XPU_REACT_REDRAW;
	errno = 0;
	int cur = getpriority(PRIO_PROCESS, a->pid);
	if (cur == -1 && errno) {
		char why[128];
		snprintf(why, sizeof(why), ": %s", strerror(errno));
		say("cannot read the nice value of ", a, why);
		return XPU_REACT_REDRAW;
	}
	int to = cur + dnice < -20 ? -20 : cur + dnice > 19 ? 19 : cur + dnice;
	if (to == cur) {
		say("", a, cur < 0 ? " is at nice -20 already" : " is at nice 19 already");
		return XPU_REACT_REDRAW;
	}
	a->kind = XPU_ACT_NICE;
	a->from = cur;
	a->nice = to;
	a->ask = XPU_ASK_CONFIRM;
	return XPU_REACT_REDRAW;
}

int xpu_act_gpu_exact(struct xpu_act *a)
{
	a->kind = XPU_ACT_GPU_EXACT;
	a->ask = XPU_ASK_CONFIRM;
	return XPU_REACT_REDRAW;
}

void xpu_act_question(const struct xpu_act *a, char *buf, size_t size)
{
	if (a->kind == XPU_ACT_GPU_EXACT)
		snprintf(buf, size, "Trace every GPU kernel? It slows CUDA programs 30-100%% while it lasts. "
			 "y: trace, any other key: no");
	else if (a->kind == XPU_ACT_KILL)
		snprintf(buf, size, "Send %s (%d) to %u (%s)? y: send, any other key: no",
			 xpu_act_signals[a->sig_row].name, xpu_act_signals[a->sig_row].sig, a->pid, a->comm);
	else
		snprintf(buf, size, "Renice %u (%s) from %d to %d? y: renice, any other key: no", a->pid,
			 a->comm, a->from, a->nice);
}

/* A /proc file of the process into buf, NULs and a trailing newline as a
 * line shows them; -1 where it cannot be read. */
static int read_proc(uint32_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/%s", pid, file);
	long n = xpu_read_small(path, buf, size);
	if (n < 0)
		return -1;
	while (n && (buf[n - 1] == '\n' || !buf[n - 1]))
		n--;
	for (long i = 0; i < n; i++)
		if (!buf[i] || buf[i] == '\n' || buf[i] == '\t')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

/* Whether the pid still names the process the row showed: a pid can be
 * taken by another process between the choice and the answer.  The row
 * shows the kernel's name (at most 15 bytes, as /proc's comm) or, after p,
 * the command line. */
static int same_process(const struct xpu_act *a)
{
	char text[520];
	if (read_proc(a->pid, "comm", text, sizeof(text)) == 0 && !strncmp(text, a->comm, 15))
		return 1;
	return read_proc(a->pid, "cmdline", text, sizeof(text)) == 0 && text[0] &&
	       !strncmp(text, a->comm, sizeof(a->comm) - 1);
}

static void act(struct xpu_act *a)
{
	char what[64], why[160];
	if (!same_process(a)) {
		say("nothing done: the process is gone, or its pid names another: ", a, "");
		return;
	}
	if (a->kind == XPU_ACT_KILL) {
		const struct xpu_act_signal *sg = &xpu_act_signals[a->sig_row];
		snprintf(what, sizeof(what), "%s sent to ", sg->name);
		if (kill((pid_t)a->pid, sg->sig) < 0) {
			snprintf(why, sizeof(why), ": %s", strerror(errno));
			snprintf(what, sizeof(what), "cannot send %s to ", sg->name);
			say(what, a, why);
		} else {
			say(what, a, "");
		}
		return;
	}
	if (setpriority(PRIO_PROCESS, a->pid, a->nice) < 0) {
		snprintf(why, sizeof(why), ": %s", errno == EACCES || errno == EPERM ?
			 "only root may lower a nice value" : strerror(errno));
		say("cannot renice ", a, why);
		return;
	}
	snprintf(what, sizeof(what), "nice %d -> %d: ", a->from, a->nice);
	say(what, a, "");
}

int xpu_act_key(struct xpu_act *a, int key)
{
	if (a->ask == XPU_ASK_CONFIRM) {
		a->ask = XPU_ASK_NONE;
		if (a->kind == XPU_ACT_GPU_EXACT && (key == 'y' || key == 'Y'))
			return XPU_REACT_GPU_EXACT | XPU_REACT_REDRAW;
		if (key == 'y' || key == 'Y')
			act(a);
		else
			xpu_tui_status("nothing done");
		return XPU_REACT_REBUILD;
	}
	switch (key) {
	case KEY_UP: case 'k':
		a->sig_row = a->sig_row > 0 ? a->sig_row - 1 : 0;
		break;
	case KEY_DOWN: case 'j':
		a->sig_row = a->sig_row + 1 < (int)xpu_act_nsignals ? a->sig_row + 1 : a->sig_row;
		break;
	case KEY_HOME: a->sig_row = 0; break;
	case KEY_END: a->sig_row = (int)xpu_act_nsignals - 1; break;
	case '\n': case '\r': case KEY_ENTER:
		a->ask = XPU_ASK_CONFIRM;
		break;
	case KEY_ESC: case 'q': case KEY_F(10):
		a->ask = XPU_ASK_NONE;
		break;
	}
	return XPU_REACT_REDRAW;
}
