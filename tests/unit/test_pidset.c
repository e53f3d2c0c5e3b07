/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes -p watches where the session filters (core/util/pidset.c):
 * named ones, their descendants when following a command, parents read
 * from a /proc tree written here; an exited pid is looked up again. */
#include "check.h"

#include "pidset.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* Writes root/PID/stat as the kernel does: "pid (comm) state ppid ...". */
static void proc(unsigned pid, const char *comm, unsigned ppid)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	FILE *f = fopen(path, "w");
	fprintf(f, "%u (%s) S %u %u 0 0 -1\n", pid, comm, ppid, ppid);
	fclose(f);
}

static void gone(unsigned pid)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	unlink(path);
}

static void remove_tree(void)
{
	char cmd[96];
	if (!root[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

static void tree(void)
{
	if (!root[0])
		atexit(remove_tree);
	remove_tree();
	snprintf(root, sizeof(root), "/tmp/xpu-pidset-XXXXXX");
	REQUIRE(mkdtemp(root) != NULL);
	proc(1, "init", 0);
	proc(100, "torchrun", 1);
	proc(200, "python3 ) S 7", 100);	/* a name that plays the format */
	proc(300, "worker", 200);
	proc(400, "other", 1);
}

/* A set of pids over a fresh tree. */
static void open_set(struct xpu_pidset *ps, const uint32_t *pids, uint32_t n, int follow)
{
	tree();
	REQUIRE(xpu_pidset_init(ps, pids, n, follow) == 0);
	ps->proc_root = root;
}

TEST(no_pids_watches_every_process)
{
	struct xpu_pidset ps;
	REQUIRE(xpu_pidset_init(&ps, NULL, 0, 0) == 0);
	CHECK(xpu_pidset_has(&ps, 12345));
	xpu_pidset_free(&ps);
}

TEST(without_a_command_only_the_named_processes)
{
	uint32_t pids[] = { 100, 400 };
	struct xpu_pidset ps;
	open_set(&ps, pids, 2, 0);
	CHECK(xpu_pidset_has(&ps, 100));
	CHECK(xpu_pidset_has(&ps, 400));
	CHECK(!xpu_pidset_has(&ps, 200));
	CHECK(!xpu_pidset_has(&ps, 300));
	xpu_pidset_free(&ps);
}

TEST(a_command_watches_what_it_starts_however_deep)
{
	uint32_t pids[] = { 100 };
	struct xpu_pidset ps;
	open_set(&ps, pids, 1, 1);
	CHECK(xpu_pidset_has(&ps, 300));
	CHECK(xpu_pidset_has(&ps, 200));
	CHECK(!xpu_pidset_has(&ps, 400));
	CHECK(!xpu_pidset_has(&ps, 1));
	CHECK(!xpu_pidset_has(&ps, 999));	/* no such process */
	xpu_pidset_free(&ps);
}

TEST(an_answer_is_kept_until_the_process_exits_then_asked_again)
{
	uint32_t pids[] = { 100 };
	struct xpu_pidset ps;
	open_set(&ps, pids, 1, 1);
	CHECK(xpu_pidset_has(&ps, 300));
	gone(300);
	CHECK(xpu_pidset_has(&ps, 300));	/* kept: its last events come after it is gone */
	proc(300, "reused", 400);	/* the id taken by another process */
	xpu_pidset_forget(&ps, 300);
	CHECK(!xpu_pidset_has(&ps, 300));
	xpu_pidset_free(&ps);
}

TEST(a_fork_storm_is_answered_within_bounded_memory)
{
	uint32_t pids[] = { 100 };
	struct xpu_pidset ps;
	open_set(&ps, pids, 1, 1);
	for (uint32_t pid = 1000; pid < 30000; pid++)
		CHECK(!xpu_pidset_has(&ps, pid));
	CHECK_INT(ps.cnt, <=, 8192);
	CHECK(xpu_pidset_has(&ps, 300));
	xpu_pidset_free(&ps);
}
