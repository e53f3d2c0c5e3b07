/* SPDX-License-Identifier: GPL-2.0-only */
#include "inject_diag.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "creds.h"
#include "gpu_wire.h"
#include "loadable.h"
#include "symbolize.h"
#include "sys.h"

#define TRACKED 64
/* The library looks for an xputop once a second: later than this, it is not coming. */
#define GRACE_NS 2000000000ULL
#define MAX_ENVIRON (4u << 20)

enum state { FREE, WAITING, QUIET, FOUND };

struct tracked {
	uint32_t pid;
	enum state state;
	int pidfd;		/* -1 until looked at; tells when it ends */
	uint64_t first;		/* its first launch seen without the library */
	uint64_t seq;		/* order of findings */
	char text[400];
};

struct xpu_inject_diag {
	struct tracked t[TRACKED];
	uint32_t last_pid;	/* launches come in runs from one process */
	uint64_t seq;
	char sock[108];
};

struct xpu_inject_diag *xpu_inject_diag_new(const char *sock)
{
	struct xpu_inject_diag *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	for (int i = 0; i < TRACKED; i++)
		d->t[i].pidfd = -1;
	snprintf(d->sock, sizeof(d->sock), "%s", sock);
	return d;
}

static void forget(struct xpu_inject_diag *d, struct tracked *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	if (d->last_pid == e->pid)
		d->last_pid = 0;
	memset(e, 0, sizeof(*e));
	e->pidfd = -1;
}

void xpu_inject_diag_free(struct xpu_inject_diag *d)
{
	if (!d)
		return;
	for (int i = 0; i < TRACKED; i++)
		forget(d, &d->t[i]);
	free(d);
}

static struct tracked *find(struct xpu_inject_diag *d, uint32_t pid)
{
	for (int i = 0; i < TRACKED; i++)
		if (d->t[i].state != FREE && d->t[i].pid == pid)
			return &d->t[i];
	return NULL;
}

/* A free entry, else the one that matters least: findings go last, and the
 * oldest first. */
static struct tracked *room(struct xpu_inject_diag *d)
{
	struct tracked *best = NULL;
	for (int i = 0; i < TRACKED; i++) {
		struct tracked *e = &d->t[i];
		if (e->state == FREE)
			return e;
		int found = e->state == FOUND, best_found = best && best->state == FOUND;
		if (!best || found < best_found || (found == best_found && e->first < best->first))
			best = e;
	}
	forget(d, best);
	return best;
}

void xpu_inject_diag_launch(struct xpu_inject_diag *d, uint32_t pid, uint64_t now)
{
	if (pid == d->last_pid || find(d, pid))
		return;
	struct tracked *e = room(d);
	e->pid = pid;
	e->state = WAITING;
	e->first = now;
	d->last_pid = pid;
}

void xpu_inject_diag_connected(struct xpu_inject_diag *d, uint32_t pid)
{
	struct tracked *e = find(d, pid);
	if (e)
		forget(d, e);
}

static int gone(const struct tracked *e)
{
	struct pollfd p = { e->pidfd, POLLIN, 0 };
	if (e->pidfd >= 0)
		return poll(&p, 1, 0) == 1;
	return kill((pid_t)e->pid, 0) < 0 && errno == ESRCH;
}

/* The values of CUDA_INJECTION64_PATH and XPUTOP_SOCKET in pid's starting
 * environment (NULL when unset or unreasonably long; malloc'ed). */
static void read_env(uint32_t pid, char **lib, char **sock)
{
	static const char lib_key[] = "CUDA_INJECTION64_PATH=", sock_key[] = "XPUTOP_SOCKET=";
	char path[64], *entry = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	FILE *f = fopen(path, "re");
	while (f && total < MAX_ENVIRON && (n = getdelim(&entry, &cap, '\0', f)) > 0) {
		total += (size_t)n;
		size_t len = strnlen(entry, (size_t)n);
		if (len >= PATH_MAX)
			continue;
		if (!*lib && strncmp(entry, lib_key, sizeof(lib_key) - 1) == 0 && entry[sizeof(lib_key) - 1])
			*lib = strdup(entry + sizeof(lib_key) - 1);
		else if (!*sock && strncmp(entry, sock_key, sizeof(sock_key) - 1) == 0)
			*sock = strdup(entry + sizeof(sock_key) - 1);
	}
	free(entry);
	if (f)
		fclose(f);
}

/* Whether pid has a file named like lib mapped executable: CUDA loaded it. */
static int loaded(uint32_t pid, const char *lib)
{
	struct xpu_maps m;
	int found = 0;
	if (xpu_maps_read(pid, &m, NULL) < 0)
		return 0;
	for (size_t i = 0; i < m.n && !found; i++)
		found = m.v[i].perms[2] == 'x' && strcmp(xpu_base_name(m.v[i].path), xpu_base_name(lib)) == 0;
	xpu_maps_free(&m);
	return found;
}

static void comm_of(uint32_t pid, char *comm, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	FILE *f = fopen(path, "re");
	if (!f || !fgets(comm, (int)size, f))
		snprintf(comm, size, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* lib as pid sees it: through /proc/PID/cwd when relative, /proc/PID/root
 * when pid has another root (a container), else as it is (its user may not
 * enter /proc/PID/root of a process that is not dumpable).  Returns the
 * length of the /proc prefix. */
static int lib_path(uint32_t pid, const char *lib, char *path, size_t size)
{
	struct stat mine, its;
	int skip = snprintf(path, size, "/proc/%u/root", pid);
	if (lib[0] != '/')
		skip = snprintf(path, size, "/proc/%u/cwd/", pid);
	else if (stat(path, &its) == 0 && stat("/", &mine) == 0 && its.st_dev == mine.st_dev &&
		 its.st_ino == mine.st_ino)
		skip = 0;
	snprintf(path + skip, size - (size_t)skip, "%s", lib);
	return skip;
}

/* e's finding: "pid N (comm) " and the rest. */
__attribute__((format(printf, 3, 4))) static void say(struct tracked *e, const char *comm, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(e->text, sizeof(e->text), "pid %u (%s) ", e->pid, comm);
	va_start(ap, fmt);
	vsnprintf(e->text + n, sizeof(e->text) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* What stops lib, as pid's user sees it. */
static void find_out(struct xpu_inject_diag *d, struct tracked *e, const char *lib, const char *sock)
{
	char path[PATH_MAX + 64], why[400], comm[32];
	const char *wants = sock && *sock ? sock : XPU_WIRE_SOCKET;
	struct xpu_creds who;
	int skip = lib_path(e->pid, lib, path, sizeof(path));
	comm_of(e->pid, comm, sizeof(comm));
	if (!strstr(xpu_base_name(lib), "libxputop_inject")) {	/* as the launch probes tell it */
		say(e, comm, "runs without xputop's library: its CUDA_INJECTION64_PATH is another tool's, %s", lib);
		return;
	}
	if (xpu_creds_of_pid(e->pid, &who) < 0)
		return;
	if (xpu_loadable(path, (size_t)skip, &who, why, sizeof(why)) < 0)
		say(e, comm, "runs without xputop's library: uid %u cannot load its CUDA_INJECTION64_PATH (%s)",
		    (unsigned)who.uid, why);
	else if (!loaded(e->pid, lib))
		say(e, comm, "runs without xputop's library: CUDA did not load its CUDA_INJECTION64_PATH, %s, "
		    "though uid %u can read it: is it xputop's libxputop_inject.so?", lib, (unsigned)who.uid);
	else if (strcmp(wants, d->sock) != 0)
		say(e, comm, "has xputop's library, which looks for xputop at %s (XPUTOP_SOCKET), not at %s",
		    wants, d->sock);
	else
		say(e, comm, "has xputop's library, but it never connected: the program's stderr says why");
	xpu_creds_free(&who);
}

static void look_at(struct xpu_inject_diag *d, struct tracked *e)
{
	char *lib = NULL, *sock = NULL;
	e->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)e->pid, 0);
	read_env(e->pid, &lib, &sock);
	if (lib)
		find_out(d, e, lib, sock);
	for (char *c = e->text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	e->state = e->text[0] ? FOUND : QUIET;
	e->seq = ++d->seq;
	free(lib);
	free(sock);
}

void xpu_inject_diag_tick(struct xpu_inject_diag *d, uint64_t now)
{
	struct tracked *due = NULL;
	for (int i = 0; i < TRACKED; i++) {
		struct tracked *e = &d->t[i];
		if (e->state != FREE && gone(e))
			forget(d, e);
		else if (e->state == WAITING && now - e->first >= GRACE_NS && (!due || e->first < due->first))
			due = e;
	}
	if (due)
		look_at(d, due);
}

const char *xpu_inject_diag_text(const struct xpu_inject_diag *d, int *more)
{
	const struct tracked *newest = NULL;
	*more = 0;
	for (int i = 0; i < TRACKED; i++) {
		const struct tracked *e = &d->t[i];
		if (e->state != FOUND)
			continue;
		if (newest)
			(*more)++;
		if (!newest || e->seq > newest->seq)
			newest = e;
	}
	return newest ? newest->text : "";
}
