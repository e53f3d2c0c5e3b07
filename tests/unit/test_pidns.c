/* SPDX-License-Identifier: GPL-2.0-only */
/* Host pids as their owners see them: parsing /proc/PID/status and looking
 * up real processes, one of them in a pid namespace of its own (root). */
#include "check.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidns.h"

static int parse(const char *text, struct xpu_pidns_info *out)
{
	return xpu_pidns_parse(text, strlen(text), out);
}

TEST(nspid_is_the_innermost_namespaces_pid)
{
	struct xpu_pidns_info i;
	CHECK_INT(parse("Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nPid:\t4242\nNSpid:\t4242\t17\t1\n", &i), ==, 0);
	CHECK_STR(i.comm, "python3");
	CHECK_INT(i.uid, ==, 1000);
	CHECK_INT(i.nspid, ==, 1);
	CHECK_INT(i.depth, ==, 2);
}

TEST(a_kernel_without_nspid_gives_the_pid)
{
	struct xpu_pidns_info i;
	CHECK_INT(parse("Name:\tsh\nPid:\t77\nPPid:\t1\n", &i), ==, 0);
	CHECK_INT(i.nspid, ==, 77);
	CHECK_INT(i.depth, ==, 0);
}

TEST(lines_that_start_like_a_key_are_not_taken_for_it)
{
	struct xpu_pidns_info i;
	CHECK_INT(parse("PPid:\t1\nNSpgid:\t9\t9\nNSsid:\t9\n", &i), ==, -1);
	CHECK_INT(i.nspid, ==, 0);
}

TEST(the_name_is_cut_to_a_comm)
{
	struct xpu_pidns_info i;
	parse("Name:\tabcdefghijklmnopqrstuvwxyz\nNSpid:\t5\n", &i);
	CHECK_STR(i.comm, "abcdefghijklmno");
}

TEST(a_text_cut_short_keeps_what_it_holds)
{
	struct xpu_pidns_info i;
	const char *t = "Name:\tsleep\nNSpid:\t12\t3";
	CHECK_INT(xpu_pidns_parse(t, strlen(t), &i), ==, 0);
	CHECK_INT(i.nspid, ==, 3);
	CHECK_INT(xpu_pidns_parse(t, 9, &i), ==, -1);
	CHECK_STR(i.comm, "sle");
}

TEST(a_pid_past_32_bits_ends_the_list)
{
	struct xpu_pidns_info i;
	CHECK_INT(parse("NSpid:\t12\t99999999999\n", &i), ==, 0);
	CHECK_INT(i.nspid, ==, 12);
}

TEST(this_process_is_found_in_the_hosts_namespace)
{
	struct xpu_pidns_info i;
	CHECK(xpu_pidns_is_host());
	REQUIRE(xpu_pidns_lookup((uint32_t)getpid(), &i) == 0);
	CHECK_INT(i.nspid, ==, getpid());
	CHECK_INT(i.depth, ==, 0);
	CHECK_INT(i.uid, ==, getuid());
}

TEST(a_gone_process_is_not_found)
{
	struct xpu_pidns_info i;
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	CHECK_INT(xpu_pidns_lookup((uint32_t)c, &i), ==, -1);
}

/* A child that makes a pid namespace and starts its first process there;
 * sends that process's host pid down fd. */
static void make_namespace(int fd)
{
	if (unshare(CLONE_NEWPID) < 0)
		_exit(1);
	pid_t g = fork();
	if (g == 0) {
		pause();
		_exit(0);
	}
	if (write(fd, &g, sizeof(g)) != sizeof(g))
		_exit(1);
	waitpid(g, NULL, 0);
	_exit(0);
}

TEST(a_process_in_its_own_pid_namespace_is_pid_1_there)
{
	int fds[2];
	pid_t g = 0;
	struct xpu_pidns_info i;
	REQUIRE(getuid() == 0);	/* unshare(CLONE_NEWPID) needs root */
	REQUIRE(pipe(fds) == 0);
	pid_t c = fork();
	if (c == 0)
		make_namespace(fds[1]);
	close(fds[1]);
	CHECK_INT(read(fds[0], &g, sizeof(g)), ==, sizeof(g));
	close(fds[0]);
	if (g > 0) {
		CHECK_INT(xpu_pidns_lookup((uint32_t)g, &i), ==, 0);
		CHECK_INT(i.nspid, ==, 1);
		CHECK_INT(i.depth, ==, 1);
		kill(g, SIGKILL);
	}
	waitpid(c, NULL, 0);
}
